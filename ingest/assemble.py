"""Turn assembly: decoded spans in, `Turn` records out (DESIGN §3).

`assemble_turns` is a pure function over a complete set of spans: the caller passes every
span of the traces and conversations concerned (stored ones plus late arrivals), and the
same spans always give the same turns and turn ids, whatever their order.

How spans become turns is specified in `turnscore.ingest.grouping` (conversations and turn
boundaries) and `turnscore.ingest.linking` (calls, executions, results). Per turn:

- the **steps** are its main-line model calls; `llm_calls` also counts sub-agent model calls
  (below a tool span), whose tokens are summed with the steps' (leaf model calls only:
  agent spans repeat the totals). Tokens are null when no model call reported them.
- the **tools available** are the union of the definitions on the turn's model calls, its
  agent spans and the other spans of the turn (some frameworks declare only the tools
  that ran, on the tool span); `declared` when any exist, else `inferred` from the calls'
  names (no schema), else `none`.
- the **final answer** is the last model call's text when it requests no tool; when that
  call's output was not captured, the agent span's output, under the same rule.
- **status**: `ok` with a final answer and no failed agent span; else `error` when a span
  of the turn failed (its error text is kept); else `incomplete` (a parent never arrived,
  a tool call is pending, or the answer was not captured: `error` says which).
- a trace with no model call but an agent span (an agent bridge without model spans) gives
  one turn per outermost agent span, from the agent span's own messages.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import orjson

from turnscore.ingest import attributes as A
from turnscore.ingest.calls import logical_spans
from turnscore.ingest.grouping import (
    Conversation,
    Forest,
    Segment,
    dedupe,
    group_conversations,
    key_of,
    newest_user,
    segment_turns,
)
from turnscore.ingest.linking import (
    Requested,
    attach_results,
    build_calls,
    link_executions,
    requested_calls,
    results_by_id,
    utc,
)
from turnscore.ingest.model import Message, Span, SpanKind
from turnscore.ingest.records import InputError
from turnscore.ingest.turn import Call, Tool, Turn, turn_id_for

log = logging.getLogger(__name__)

__all__ = ["AssemblyResult", "Run", "assemble_runs", "assemble_turns"]

# Content that the turn already holds in typed fields: left out of `Turn.attributes`.
_CONTENT_KEYS: tuple[str, ...] = (
    A.GEN_AI_INPUT_MESSAGES,
    A.GEN_AI_OUTPUT_MESSAGES,
    A.GEN_AI_SYSTEM_INSTRUCTIONS,
    A.GEN_AI_TOOL_DEFINITIONS,
    A.GEN_AI_PROMPT,
    A.GEN_AI_COMPLETION,
    A.GEN_AI_TOOL_CALL_ARGUMENTS,
    A.GEN_AI_TOOL_CALL_RESULT,
    A.OI_INPUT_VALUE,
    A.OI_OUTPUT_VALUE,
    A.OI_INPUT_MESSAGES,
    A.OI_OUTPUT_MESSAGES,
    A.OI_TOOLS,
    A.TL_ENTITY_INPUT,
    A.TL_ENTITY_OUTPUT,
    A.TL_REQUEST_FUNCTIONS,
    A.PYDANTIC_AI_ALL_MESSAGES,
    A.PYDANTIC_AI_FINAL_RESULT,
    A.PYDANTIC_AI_MODEL_REQUEST_PARAMETERS,
    A.MLFLOW_SPAN_INPUTS,
    A.MLFLOW_SPAN_OUTPUTS,
    A.MLFLOW_CHAT_TOOLS,
    A.ADK_LLM_REQUEST,
    A.ADK_LLM_RESPONSE,
    A.ADK_TOOL_CALL_ARGS,
    A.ADK_TOOL_RESPONSE,
)


@dataclass(frozen=True, slots=True)
class AssemblyResult:
    turns: list[Turn]
    errors: list[InputError]
    trace_conversations: dict[str, str] = field(default_factory=dict)
    """Trace id -> conversation id it was grouped into: which stored spans to re-pass."""


@dataclass(slots=True)
class _Draft:
    """A turn before its record is built."""

    steps: list[Span]
    request: Message | None
    anchor: Span
    agent: Span | None = None
    """Set only for turns built from an agent span without model calls."""
    tools: list[Span] = field(default_factory=list)
    side: list[Span] = field(default_factory=list)
    requested: list[Requested] = field(default_factory=list)

    @property
    def start(self) -> int:
        return self.anchor.start_unix_nano


def assemble_turns(spans: Sequence[Span], *, ingest_id: str = "") -> AssemblyResult:
    """Every turn the spans hold, per conversation in order; errors name conflicting spans."""
    unique, errors = dedupe(spans)
    unique = logical_spans(unique)
    forest = Forest(unique)
    leaf_calls = [s for s in unique if forest.is_leaf_model_call(s)]
    main = [c for c in leaf_calls if not forest.under_tool(c)]
    side = [c for c in leaf_calls if forest.under_tool(c)]
    tool_spans = [s for s in unique if _is_tool(s) and not forest.under_tool(s)]
    conversations = group_conversations(forest, main)
    trace_conv = {t: c.conversation_id for c in conversations for t in c.traces}

    by_trace: dict[str, _TraceSpans] = defaultdict(_TraceSpans)
    for s in tool_spans:
        by_trace[s.trace_id].tools.append(s)
    for s in side:
        by_trace[s.trace_id].side.append(s)
    for s in unique:
        outermost = not any(a.kind is SpanKind.AGENT for a in forest.ancestors(s))
        if s.kind is SpanKind.AGENT and outermost and not forest.under_tool(s):
            by_trace[s.trace_id].agents.append(s)

    turns: list[Turn] = []
    for conv in conversations:
        drafts = _drafts(conv, segment_turns(forest, conv.calls), by_trace)
        if not drafts:
            continue
        for trace in conv.traces:
            for s in by_trace[trace].tools:
                _assign(s, drafts).tools.append(s)
            for s in by_trace[trace].side:
                _assign(s, drafts).side.append(s)
        conv_results = results_by_id(conv.calls)
        for d in drafts:
            d.requested = requested_calls(d.steps)
            attach_results(d.requested, d.steps, conv_results)
        unclaimed = link_executions([d.requested for d in drafts], [d.tools for d in drafts])
        roots = [forest.root(d.anchor) for d in drafts]
        shared = Counter(key_of(r) for r in roots)
        for index, (d, loose, root) in enumerate(zip(drafts, unclaimed, roots, strict=True)):
            exclusive = shared[key_of(root)] == 1  # the root span holds this turn only
            turns.append(_turn(forest, conv, d, loose, index, root, exclusive, ingest_id))
    return AssemblyResult(turns=turns, errors=errors, trace_conversations=trace_conv)


@dataclass(frozen=True, slots=True)
class Run:
    """An agent run known to be one turn (`turnscore.ingest.direct` decides which are)."""

    root: Span
    steps: tuple[Span, ...]
    """Its model calls, in start order."""
    request: Message
    tools: tuple[Span, ...]
    """Its tool spans, in start order."""
    others: tuple[Span, ...] = ()
    """Its other spans."""


def assemble_runs(conversation_id: str, runs: Sequence[Run], *, ingest_id: str = "") -> list[Turn]:
    """The turns of one conversation made of runs that are one turn each, in order, none
    overlapping the next: what `assemble_turns` gives for their spans, without the grouping
    (conversations, turn boundaries, which tool span belongs to which turn) it would redo."""
    forest = Forest([s for r in runs for s in (r.root, *r.steps, *r.tools, *r.others)])
    calls = [c for r in runs for c in r.steps]
    conv = Conversation(conversation_id, [r.root.trace_id for r in runs], calls)
    drafts = [
        _Draft(steps=list(r.steps), request=r.request, anchor=r.steps[0], tools=list(r.tools))
        for r in runs
    ]
    results = results_by_id(calls)
    for d in drafts:
        d.requested = requested_calls(d.steps)
        attach_results(d.requested, d.steps, results)
    unclaimed = link_executions([d.requested for d in drafts], [d.tools for d in drafts])
    return [
        _turn(forest, conv, d, loose, index, r.root, True, ingest_id)
        for index, (d, loose, r) in enumerate(zip(drafts, unclaimed, runs, strict=True))
    ]


def _is_tool(span: Span) -> bool:
    return span.kind is SpanKind.TOOL or span.tool_execution is not None


@dataclass(slots=True)
class _TraceSpans:
    tools: list[Span] = field(default_factory=list)
    """Tool spans not inside another tool span."""
    side: list[Span] = field(default_factory=list)
    """Sub-agent model calls (inside a tool span)."""
    agents: list[Span] = field(default_factory=list)
    """Outermost agent spans."""


def _drafts(
    conv: Conversation, segments: list[Segment], by_trace: dict[str, _TraceSpans]
) -> list[_Draft]:
    drafts = [_Draft(steps=seg.calls, request=seg.request, anchor=seg.calls[0]) for seg in segments]
    with_calls = {c.trace_id for c in conv.calls}
    for trace in conv.traces:
        if trace in with_calls:
            continue
        for s in by_trace[trace].agents:
            newest = newest_user(s.input_messages)
            drafts.append(
                _Draft(steps=[], request=newest[1] if newest else None, anchor=s, agent=s)
            )
    return sorted(drafts, key=lambda d: (d.start, d.anchor.trace_id, d.anchor.span_id))


def _assign(span: Span, drafts: list[_Draft]) -> _Draft:
    """The turn a tool span or sub-agent call belongs to: same trace first, then by time."""
    same = [d for d in drafts if any(s.trace_id == span.trace_id for s in [d.anchor, *d.steps])]
    pool = same or drafts
    before = [d for d in pool if d.start <= span.start_unix_nano]
    return before[-1] if before else pool[0]


def _turn(
    forest: Forest,
    conv: Conversation,
    d: _Draft,
    unclaimed: list[Span],
    index: int,
    root: Span,
    exclusive: bool,
    ingest_id: str,
) -> Turn:
    members = _members(forest, d, root, exclusive)
    agents = [s for s in members if s.kind is SpanKind.AGENT]
    calls = tuple(c for _, _, c in build_calls(d.requested, unclaimed, d.steps))
    final, pending = _final_answer(d, agents if exclusive else [])
    own_agents = agents if exclusive else []  # a shared root may have failed in another turn
    status, error = _status(forest, d, root if exclusive else None, own_agents, final, pending)
    tools, source = _tools(d.steps, agents, members, calls)
    model_calls = d.steps + d.side
    request = d.request.text if d.request is not None else ""
    # The first model call anchors the id, not the root: a root that arrives late (or a
    # conversation id it carries) must not change the id of a turn already stored.
    anchor = d.anchor
    timed = members if exclusive else [*d.steps, *d.side, *d.tools, *([d.agent] if d.agent else [])]
    start = min(s.start_unix_nano for s in timed)
    end = max(s.end_unix_nano for s in timed)
    turn = Turn(
        turn_id=turn_id_for(anchor.trace_id, anchor.span_id, request),
        trace_id=d.anchor.trace_id,
        conversation_id=conv.conversation_id,
        turn_index=index,
        started_at=utc(start),
        ended_at=utc(end),
        duration_ms=(end - start) / 1e6,
        status=status,
        request=request,
        tools=tools,
        tools_source=source,
        calls=calls,
        final_answer=final,
        llm_calls=len(model_calls),
        input_tokens=_sum(s.input_tokens for s in model_calls),
        output_tokens=_sum(s.output_tokens for s in model_calls),
        agent_name=_first(s.agent_name for s in [*agents, *d.steps, *members]),
        service_name=_first(s.service_name for s in [root, *members]),
        model=_first(s.model for s in [*reversed(d.steps), *agents]),
        error=error,
        system_instructions=_system_instructions(d.steps, agents),
        case_id=_first(s.case_id for s in [root, *members]),
        convention=_conventions(members),
        attributes=_root_attributes(root),
        ingest_id=ingest_id,
        source=",".join(sorted({s.source for s in members if s.source})),
    )
    return turn.with_hash()


def _members(forest: Forest, d: _Draft, root: Span, exclusive: bool) -> list[Span]:
    """Every span of the turn, outermost first where they nest."""
    if exclusive:
        found = [root, *forest.descendants(root), *d.steps, *d.side, *d.tools]
    else:
        found = [*d.steps, *d.side, *d.tools]
        for s in d.steps:
            found.extend(forest.ancestors(s))
    seen: set[tuple[str, str]] = set()
    out: list[Span] = []
    for s in sorted(found, key=lambda s: (len(forest.ancestors(s)), s.start_unix_nano, s.span_id)):
        if key_of(s) not in seen:
            seen.add(key_of(s))
            out.append(s)
    return out


def _final_answer(d: _Draft, agents: list[Span]) -> tuple[str | None, bool]:
    """(final answer, whether a tool call is still pending)."""
    last = d.steps[-1].output_messages if d.steps else None
    if last is None:
        last = next((a.output_messages for a in agents if a.output_messages is not None), None)
    if last is None:
        return None, False
    if any(m.tool_calls for m in last):
        return None, True
    text = "".join(m.text for m in last if m.role == "assistant")
    return (text if text.strip() else None), False


def _status(
    forest: Forest,
    d: _Draft,
    root: Span | None,
    agents: list[Span],
    final: str | None,
    pending: bool,
) -> tuple[str, str | None]:
    run = [s for s in [root, *agents] if s is not None and s.status == "error"]
    if final is not None and not run:
        return "ok", None
    failing = run + [s for s in [*d.steps, *d.tools] if s.status == "error"]
    if failing:
        texts = [s.error for s in failing if s.error]
        first = failing[0]
        return "error", texts[0] if texts else f"span {first.span_id} ({first.name}) failed"
    missing = next((p for p in (forest.missing_parent(s) for s in [d.anchor, *d.steps]) if p), None)
    if missing is not None:
        return "incomplete", f"parent span {missing} never arrived"
    if pending:
        return "incomplete", "the last model call requested tools and no later model call arrived"
    return "incomplete", "no final answer was captured"


def _tools(
    steps: list[Span], agents: list[Span], members: list[Span], calls: tuple[Call, ...]
) -> tuple[tuple[Tool, ...], str]:
    merged: dict[str, Tool] = {}
    for s in [*steps, *agents, *members]:
        for t in s.tool_definitions or ():
            have = merged.get(t.name)
            merged[t.name] = Tool(
                name=t.name,
                description=have.description if have and have.description else t.description,
                parameters=have.parameters if have and have.parameters else t.parameters,
            )
    if merged:
        return tuple(merged.values()), "declared"
    names = list(dict.fromkeys(c.name for c in calls if c.name))
    if names:
        return tuple(Tool(name=n) for n in names), "inferred"
    return (), "none"


def _system_instructions(steps: list[Span], agents: list[Span]) -> str | None:
    for s in steps:
        if s.system_instructions:
            return s.system_instructions
        system = "\n".join(m.text for m in s.input_messages or () if m.role == "system" and m.text)
        if system:
            return system
    return _first(a.system_instructions for a in agents)


def _conventions(members: list[Span]) -> str:
    """Sorted unique decoder names; a span decoded by several reads like 'a+b'."""
    names = {n for s in members for n in s.convention.replace("+", ",").split(",") if n}
    return ",".join(sorted(names))


def _root_attributes(root: Span) -> str:
    try:
        raw = orjson.loads(root.attributes_json)
    except orjson.JSONDecodeError:
        return root.attributes_json
    if not isinstance(raw, dict):
        return root.attributes_json
    kept = {k: v for k, v in raw.items() if not _is_content(k)}
    return orjson.dumps(kept, option=orjson.OPT_SORT_KEYS).decode()


_CONTENT_SET = frozenset(_CONTENT_KEYS)
_CONTENT_PREFIXES = tuple(c + "." for c in _CONTENT_KEYS)


def _is_content(key: str) -> bool:
    return key in _CONTENT_SET or key.startswith(_CONTENT_PREFIXES)


def _sum(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _first(values: Iterable[str | None]) -> str | None:
    return next((v for v in values if v), None)
