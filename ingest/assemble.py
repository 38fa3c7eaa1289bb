"""Turn assembly: decoded spans in, `Turn` records out (DESIGN §3).

`assemble_turns` is a pure function over a complete set of spans: the caller passes every
span of the traces and conversations concerned (stored ones plus late arrivals), and the
same spans always give the same turns and turn ids, whatever their order.

How spans become turns is specified in `turnscore.ingest.grouping` (conversations and turn
boundaries) and `turnscore.ingest.linking` (calls, executions, results). Before either, a
tool's result a framework relayed to the next agent as a user message (AutoGen AgentChat's
handoff) is made a tool result again, no genuine user message (`_relayed_results`). Per turn:

- the **request** is the newest genuine user message of its first model call, or the
  request its prompt was built from (an orchestration's task, an agent span's user text
  wrapped in a template: `turnscore.ingest.grouping` rule 5).
- the **steps** are its main-line model calls, less failed attempts (a call before the
  turn's last that failed with no output, or whose input the next call was sent again: a
  retried request, whose partial output, a tool call of a cut stream say, never reached
  the conversation and is not one of the turn's calls); `llm_calls` also counts those
  attempts and sub-agent model calls (below a tool span), whose tokens are summed with
  the steps' (leaf model calls only: agent spans repeat the totals). When no model call
  reported usage, the run's own agent span's totals are the turn's (null if it has none).
- the **tools available** are the union of the definitions on the turn's model calls, its
  agent spans and the other spans of the turn (some frameworks declare only the tools
  that ran, on the tool span), less those of spans below a tool span (a sub-agent's);
  `declared` when any exist, else `inferred` from the calls' names (no schema), else
  `none`.
- the **agent** is the one the outermost span of the turn naming an agent names: an
  orchestration's own span (Strands' `invoke_swarm` / `invoke_graph`, `gen_ai.agent.name`
  `swarm` / `graph`) over the node agents it runs, else the run's agent span; a name model
  calls carry below an agent span naming another is an instrumentation's stamp, no agent.
- the **final answer** is the last model call's text when it requests no tool (a hosted
  call the provider ran, answered in that same output, is no request: `linking` 1.), or
  the argument of the final-answer tool it calls (`turnscore.ingest.calls` rule 4); when
  that call's output was not captured, the agent span's output, under the same rule. A
  run that arrived whole and ended on tools that all ran, whose agent span's output is
  one of their results, returned that result directly (`_returned_directly`). When a
  sub-agent run (below a tool span, or delegated) is the last thing a run that arrived
  whole did, its last model call's text is the answer (`_sub_agent_answer`). A turn whose
  spans captured no answer and left no call pending takes the one the conversation's next
  turn replays after this turn's request (`_replayed_answer`).
- **status**: `ok` with a final answer and no failed agent span; else `error` when a span
  of the turn failed (its error text is kept), or when the run's agent span arrived and
  the run ended on a model call none of whose requested tools ran (a step limit: every
  span is there and the run gave no answer); else `incomplete` (a parent never arrived,
  a tool call is pending with no agent span to say the run ended, tools ran and no later
  model call arrived, or the answer was not captured: `error` says which).
- a trace with no model call but an agent span (an agent bridge without model spans) gives
  one turn per outermost agent span, from the agent span's own messages.

Slightly past the ~400-line guide: each rule above reads the same drafts, and the helpers
it needs (grouping, calls, linking) already live apart.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import orjson
from msgspec.structs import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.calls import FINAL_ANSWER_TOOLS, final_answer_of, logical_spans
from turnscore.ingest.conventions.values import try_json
from turnscore.ingest.decode import CONTENT_KEYS, collector_paused
from turnscore.ingest.grouping import (
    Conversation,
    Forest,
    Segment,
    SpanKey,
    adopt_orphans,
    dedupe,
    delegated_runs,
    group_conversations,
    key_of,
    linked,
    newest_user,
    runs,
    segment_turns,
)
from turnscore.ingest.linking import (
    Requested,
    attach_results,
    build_calls,
    canonical,
    captured_calls,
    execution_of,
    link_executions,
    open_calls,
    replayed_calls,
    requested_calls,
    results_by_id,
    utc,
)
from turnscore.ingest.model import Message, Part, PartType, Span, SpanKind, bytes_as_base64
from turnscore.ingest.records import InputError
from turnscore.ingest.turn import Call, Tool, Turn, turn_id_for

log = logging.getLogger(__name__)

__all__ = ["AssemblyResult", "assemble_turns"]

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
    with collector_paused():
        return _assemble(spans, ingest_id)


def _assemble(spans: Sequence[Span], ingest_id: str) -> AssemblyResult:
    unique, errors = dedupe(spans)
    unique, orphans = adopt_orphans(unique)
    unique = _relayed_results(logical_spans(unique))
    forest = Forest(unique, orphans)
    main: list[Span] = []
    by_trace: dict[str, _TraceSpans] = defaultdict(_TraceSpans)
    delegated = delegated_runs(forest, [
        s for s in unique if forest.is_leaf_model_call(s) and key_of(s) not in forest.under_tool
    ])
    failed_below = _failed_below(forest)
    for s in unique:
        k = key_of(s)
        if k in forest.under_tool or k in delegated:  # a sub-agent's: counts for usage only
            if forest.is_leaf_model_call(s):
                by_trace[s.trace_id].side.append(s)
            continue
        if forest.is_leaf_model_call(s):
            main.append(s)
        if _is_tool(s) and k not in forest.frames:
            by_trace[s.trace_id].tools.append(_run_arguments(forest, failed_below.get(k, s)))
        if s.kind is SpanKind.AGENT and key_of(s) not in forest.under_agent:
            by_trace[s.trace_id].agents.append(s)
    conversations = group_conversations(forest, main)
    trace_conv = {t: c.conversation_id for c in conversations for t in c.traces}

    turns: list[Turn] = []
    for conv in conversations:
        drafts = _drafts(conv, segment_turns(forest, conv.calls), by_trace)
        if not drafts:
            continue
        in_trace = _in_trace(drafts)
        for trace in conv.traces:
            for s in by_trace[trace].tools:
                _assign(s, drafts, in_trace).tools.append(s)
            for s in by_trace[trace].side:
                _assign(s, drafts, in_trace).side.append(s)
        conv_results = results_by_id(conv.calls)
        captured = captured_calls(conv.calls)
        for d in drafts:
            d.requested = requested_calls(d.steps) + replayed_calls(d.steps, captured)
            attach_results(d.requested, d.steps, conv_results)
            _run_results(d, by_trace)
        unclaimed = link_executions(
            [d.requested for d in drafts], [d.tools for d in drafts], [d.steps for d in drafts]
        )
        roots = [forest.root(d.anchor) for d in drafts]
        shared = Counter(key_of(r) for r in roots)
        for index, (d, loose, root) in enumerate(zip(drafts, unclaimed, roots, strict=True)):
            exclusive = shared[key_of(root)] == 1  # the root span holds this turn only
            later = drafts[index + 1].steps[:1] if index + 1 < len(drafts) else []
            replay = later[0].input_messages if later else None
            turns.append(_turn(forest, conv, d, loose, index, root, exclusive, ingest_id,
                               replay, delegated))
    return AssemblyResult(turns=turns, errors=errors, trace_conversations=trace_conv)


def _run_results(d: _Draft, by_trace: dict[str, _TraceSpans]) -> None:
    """A call whose result no model input holds (the run ended on it, as a handoff the
    orchestration ran before another run's agent took over, no model call after it in this
    run) takes the result its run's agent span lists by call id: Microsoft Agent
    Framework's `invoke_agent` span records the run's new messages as its
    `gen_ai.output.messages`, tool results included (agent_framework `observability.py`
    `AgentTelemetryLayer`, `_capture_message_span_attributes_latest_experimental(...,
    output=True)`). Only the outermost agent spans of the call's own trace: ids restart per
    run in some stacks."""
    for r in d.requested:
        if r.seen is not None or not r.part.call_id:
            continue
        said = [p for a in by_trace[d.steps[r.step].trace_id].agents
                for m in a.output_messages or () for p in m.parts]  # fmt: skip
        # A result whose text was not captured is none the model was seen to get.
        r.seen = next((p for p in said if p.type is PartType.TOOL_RESULT
                       and p.call_id == r.part.call_id and p.text is not None), None)


def _relayed_results(spans: list[Span]) -> list[Span]:
    """Model calls with each tool result a framework relayed as a user message made that
    result again: a genuine user message is a request, not a tool result (DESIGN §3).

    AutoGen AgentChat hands the agent a handoff transfers to the handoff tool's result as a
    user message (autogen-agentchat 0.7 `agents/_assistant_agent.py`: the `HandoffMessage`
    whose content is the transfer tool's result, `_add_messages_to_context` adding it as a
    `UserMessage` after the handoff's context): read as a request, it would split the turn
    at the handoff. A user message is a relayed result when the run has not answered since
    the user message before it (no assistant text without a tool call between them) and its
    text is the result of a tool the same run executed: a tool span of the call's trace
    (agent frameworks give one trace per run), or of a trace span links join it to
    (`grouping.runs`: AutoGen's runtime), that ended before the call started, or a tool
    result in the call's input after that user message. Where the tool's result was
    captured nowhere (AutoGen's `Swarm` under openai-v2: its tool spans record no result),
    the input's newest user message so placed is the result of the run's last tool, by call
    id, that ended before the call started and whose result the input does not hold (an
    older one is an earlier turn's, whose run may be another). A user who repeats a tool's
    output as a new request, or speaks again, does so after an answer, or in another run:
    a request still.
    """
    results: dict[str, list[tuple[int, str]]] | None = None
    untold: dict[str, list[tuple[int, str]]] = defaultdict(list)
    run_of: dict[str, str] = {}
    out = spans
    for i, call in enumerate(spans):
        if call.kind is not SpanKind.LLM or not _may_relay(call.input_messages):
            continue
        if results is None:
            results = defaultdict(list)
            run_of = runs(spans, linked(spans))
            for s in spans:
                run = run_of.get(s.trace_id, s.trace_id)
                if (ran_tool := s.tool_execution) is None:
                    continue
                if ran_tool.result:
                    results[run].append((s.end_unix_nano, _said(ran_tool.result)))
                elif ran_tool.call_id and ran_tool.error is None:
                    untold[run].append((s.end_unix_nano, ran_tool.call_id))
        run = run_of.get(call.trace_id, call.trace_id)
        ran = {text for end, text in results.get(run, ()) if end <= call.start_unix_nano}
        messages = list(call.input_messages or ())
        unheard, newest = _unheard(untold.get(run, ()), call, messages)
        since: int | None = None  # the user message the run has not answered yet
        for j, m in enumerate(messages):
            if m.role == "user" and m.is_genuine_user:
                text = m.text.strip()  # none where content was not captured: no result's
                if since is not None and text and text in ran | _results_after(messages, since):
                    messages[j] = replace(m, parts=(Part(PartType.TOOL_RESULT, m.text),))
                elif since is not None and text and unheard and j == newest:
                    messages[j] = replace(m, parts=(Part(PartType.TOOL_RESULT, m.text,
                                                         unheard[1]),))
                else:
                    since = j
            elif _answers(m):
                since = None
        if messages != list(call.input_messages or ()):
            out = list(out) if out is spans else out
            out[i] = replace(call, input_messages=tuple(messages))
    return out


def _unheard(
    untold: Sequence[tuple[int, str]], call: Span, messages: Sequence[Message]
) -> tuple[tuple[int, str] | None, int]:
    """Of the run's tools whose result was captured nowhere (end, call id), the last that
    ended before `call` started and whose result its input does not hold; and the index of
    the input's newest genuine user message, the one such a result may be relayed as."""
    if not untold:
        return None, -1
    answered = {p.call_id for m in messages for p in m.parts
                if p.type is PartType.TOOL_RESULT and p.call_id}  # fmt: skip
    unheard = max(((end, cid) for end, cid in untold
                   if end <= call.start_unix_nano and cid not in answered), default=None)
    newest = max((j for j, m in enumerate(messages) if m.role == "user" and m.is_genuine_user),
                 default=-1)  # fmt: skip
    return unheard, newest


def _said(result: str) -> str:
    """A tool's result as text relayed to a model: a JSON string recorded as JSON (a tool
    span's `gen_ai.tool.call.result` of a tool that returned a string) is that string."""
    text = result.strip()
    if text.startswith('"'):
        ok, value = try_json(text)
        if ok and isinstance(value, str):
            return value.strip()
    return text


def _answers(message: Message) -> bool:
    return message.role == "assistant" and bool(message.text.strip()) and not message.tool_calls


def _may_relay(messages: tuple[Message, ...] | None) -> bool:
    """Whether an input holds a user message after another with no answer between them
    (most hold none, and are left before any tool result is looked up)."""
    waiting = False
    for m in messages or ():
        if m.role == "user" and m.is_genuine_user:
            if waiting:
                return True
            waiting = True
        elif _answers(m):
            waiting = False
    return False


def _results_after(messages: list[Message], start: int) -> set[str]:
    return {(p.text or "").strip() for m in messages[start + 1 :] for p in m.parts
            if p.type is PartType.TOOL_RESULT}  # fmt: skip


def _is_tool(span: Span) -> bool:
    return span.kind is SpanKind.TOOL or span.tool_execution is not None


def _failed_below(forest: Forest) -> dict[SpanKey, Span]:
    """Tool spans whose call failed one level down, as failed (taking its result where they
    have none): a failed tool span whose nearest tool ancestor names the same tool, or the
    same call id, is that call's execution elsewhere (Claude Code's `tool.execution` under
    its tool span, which names no tool; the `mcp`
    SDK's server span `tools/call <tool>`, joined to the client's call by the trace context
    its request carries, sets `error.type` `tool_error` and status ERROR for a result with
    `isError`, mcp `server/_otel.py`, while the client's tool span records only the text)."""
    out: dict[SpanKey, Span] = {}
    for s in forest.spans:
        if s.status != "error" or s.tool_execution is None or key_of(s) not in forest.under_tool:
            continue
        above = next((a for a in forest.ancestors(s) if _is_tool(a)), None)
        if above is None or above.status == "error" or above.tool_execution is None:
            continue
        done, run = above.tool_execution, s.tool_execution
        if done.name == run.name or (done.call_id is not None and done.call_id == run.call_id):
            result = done.result if done.result is not None else run.result
            out[key_of(above)] = replace(above, status="error", error=above.error or s.error,
                                         tool_execution=replace(done, result=result))
    return out


def _run_arguments(forest: Forest, span: Span) -> Span:
    """A tool span that records a call id and no arguments, with the arguments its run's
    agent span (the nearest above it) lists for that call id among the run's messages
    (its output): Claude Code logs a call's input only in the interaction's `tool_result`
    record and raw response body, never on the call's tool span (conventions/
    claude_code.py). The execution is the call's wherever it is reported; what the run
    says it asked for is the same call."""
    done = span.tool_execution
    if done is None or done.arguments is not None or not done.call_id:
        return span
    run = next((a for a in forest.ancestors(span) if a.kind is SpanKind.AGENT), None)
    said = next((
        p.arguments for m in (run.output_messages or () if run is not None else ())
        for p in m.tool_calls if p.call_id == done.call_id and p.arguments is not None
    ), None)  # fmt: skip
    if said is None:
        return span
    return replace(span, tool_execution=replace(done, arguments=said))


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
    drafts = []
    for seg in segments:
        before = seg.calls[:-1]
        gone = [_failed_attempt(c, after) for c, after in zip(before, seg.calls[1:], strict=True)]
        attempts = [c for c, g in zip(before, gone, strict=True) if g]
        steps = [c for c, g in zip(before, gone, strict=True) if not g] + seg.calls[-1:]
        drafts.append(_Draft(steps=steps, request=seg.request, anchor=seg.calls[0], side=attempts))
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


def _failed_attempt(call: Span, after: Span) -> bool:
    """A model call that failed and either answered nothing or was sent again (the next
    call of the turn got the same input: what it output never reached the conversation, as
    a stream cut after a tool call): an attempt (a client's retry after a rate limit, a
    timeout or a broken stream), not a step, unless the turn ends on it."""
    if call.status != "error":
        return False
    if not any(m.parts for m in call.output_messages or ()):
        return True
    return call.input_messages is not None and after.input_messages == call.input_messages


def _in_trace(drafts: list[_Draft]) -> dict[str, list[_Draft]]:
    """Trace -> the drafts (in order) whose anchor or a step is in it."""
    out: dict[str, list[_Draft]] = defaultdict(list)
    for d in drafts:
        for trace in dict.fromkeys(s.trace_id for s in [d.anchor, *d.steps]):
            out[trace].append(d)
    return out


def _assign(span: Span, drafts: list[_Draft], in_trace: dict[str, list[_Draft]]) -> _Draft:
    """The turn a tool span or sub-agent call belongs to: same trace first, then the last
    to start before it (drafts are in start order), else the first."""
    pool = in_trace.get(span.trace_id) or drafts
    return next((d for d in reversed(pool) if d.start <= span.start_unix_nano), pool[0])


def _turn(
    forest: Forest,
    conv: Conversation,
    d: _Draft,
    unclaimed: list[Span],
    index: int,
    root: Span,
    exclusive: bool,
    ingest_id: str,
    replay: tuple[Message, ...] | None = None,
    delegated: set[SpanKey] | frozenset[SpanKey] = frozenset(),
) -> Turn:
    """`replay`: the input of the conversation's next turn's first model call; `delegated`:
    the spans at or below a delegated run (`grouping.delegated_runs`)."""
    members = _members(forest, d, root, exclusive)
    agents = [s for s in members if s.kind is SpanKind.AGENT]
    ended = exclusive and forest.missing_parent(d.anchor) is None  # the whole run arrived
    answering = len(d.steps) - 1 if _answers_by_tool(d) else None
    calls = tuple(
        c for _, _, c in build_calls(d.requested, unclaimed, d.steps,
                                     answered=_agent_answered(d.agent))
        if not (c.step == answering and c.name in FINAL_ANSWER_TOOLS)
    )
    # A shared root may have failed in another turn; an agent-only turn's agent span is its
    # own run all the same (AgentOps' CrewAI tasks, each kickoff under one session span).
    own_agents = agents if exclusive else [a for a in agents if a is d.agent]
    final, pending = _final_answer(d, own_agents, ended, calls)
    request = _request(d, own_agents)
    if final is None and not pending and d.request is not None:
        final = _replayed_answer(replay, d.request)
    last = len(d.steps) - 1
    ran = any(c.step == last and c.status != "no_result" for c in calls)
    status, error = _status(
        forest, d, root if exclusive else None, own_agents, final, pending and not ran, pending,
        members,
    )
    # A sub-agent's tools (its spans below the delegating tool span, or in a delegated run:
    # smolagents' managed agent) are not the turn's: its calls are that tool's execution,
    # not the turn's (grouping rule 2).
    theirs = forest.under_tool | delegated
    own = [s for s in members if key_of(s) not in theirs]
    tools, source = _tools(d.steps, [a for a in agents if key_of(a) not in theirs], own, calls)
    model_calls = d.steps + d.side
    # Leaf model calls' usage, else the run's own agent span's totals (Claude Agent SDK's
    # chat spans report only partial usage; its `invoke_agent` has the run's).
    counted = model_calls if any(
        s.input_tokens is not None or s.output_tokens is not None for s in model_calls
    ) else own_agents[:1]
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
        input_tokens=_sum(s.input_tokens for s in counted),
        output_tokens=_sum(s.output_tokens for s in counted),
        # The outermost span naming an agent runs the turn: an orchestration's own span
        # (Strands' `invoke_swarm`, named `swarm`) rather than the first node it ran.
        agent_name=_agent_name(forest, [*members, *d.steps]),
        service_name=_first(s.service_name for s in [root, *members]),
        model=_first(s.model for s in [*reversed(d.steps), *agents]),
        error=error,
        system_instructions=_system_instructions(d.steps, agents),
        case_id=_first(s.case_id for s in [root, *members]),
        convention=_conventions(members),
        attributes=_root_attributes(
            root, [request, final, *(c.result for c in calls), *(c.arguments for c in calls)]
        ),
        ingest_id=ingest_id,
        source=",".join(sorted({s.source for s in members if s.source})),
        issues=_issues(d, request, final, pending, calls, unclaimed),
    )
    return turn.with_hash()


ISSUE_REQUEST = "request_not_captured"
ISSUE_ANSWER = "answer_not_captured"
ISSUE_EMPTY_CALL = "model_call_without_content"
ISSUE_UNRECONCILED = "unreconciled_calls"
ISSUE_CALL = "call_content_not_captured"
ISSUES = (ISSUE_REQUEST, ISSUE_ANSWER, ISSUE_EMPTY_CALL, ISSUE_UNRECONCILED, ISSUE_CALL)
"""What a turn's `issues` may hold, in this order (the `turns.issues` description says
what each means)."""


def _issues(
    d: _Draft,
    request: str,
    final: str | None,
    pending: bool,
    calls: tuple[Call, ...],
    unclaimed: list[Span],
) -> tuple[str, ...]:
    """What assembly could not trust: a request (the turn's, wherever `_request` found it:
    a model call's input or the run's agent span) or an answer not captured (a placeholder
    counts as not captured: decoding drops it), a model call reporting usage but no
    messages in any span of it (`turnscore.ingest.calls` rule 1), a requested call left
    without execution beside an unclaimed execution of the same tool (they may be one call
    counted twice), and a call whose arguments or result were not captured
    (`_content_missing`). A turn still waiting for a tool result is not missing its answer."""
    found: set[str] = set()
    if not request.strip():
        found.add(ISSUE_REQUEST)
    if final is None and not pending and d.steps and _answer_missing(d.steps[-1]):
        found.add(ISSUE_ANSWER)
    if any(s.input_messages is None and s.output_messages is None for s in [*d.steps, *d.side]):
        found.add(ISSUE_EMPTY_CALL)
    loose = {execution_of(s).name for s in unclaimed}
    if any(c.status == "no_result" and c.name in loose for c in calls):
        found.add(ISSUE_UNRECONCILED)
    if any(_content_missing(c) for c in calls):
        found.add(ISSUE_CALL)
    return tuple(i for i in ISSUES if i in found)


def _content_missing(call: Call) -> bool:
    """A call that ran (or was answered) with its arguments, or its outcome, not captured:
    a tool span without content (the Google GenAI SDK instrumentation in `EVENT_ONLY` mode
    writes `gen_ai.tool.call.arguments` / `result` only when content goes on spans:
    opentelemetry-python-contrib `opentelemetry-instrumentation-google-genai`,
    `tool_call_wrapper.py`). A call still waiting for its result is not missing it."""
    if call.status == "no_result":
        return False
    return call.arguments is None or (call.result is None and call.error is None)


def _answer_missing(last: Span) -> bool:
    out = last.output_messages
    return out is None or not any(m.parts for m in out)


def _request(d: _Draft, agents: list[Span]) -> str:
    """The newest genuine user message of the turn's first model call; when the run's
    agent span records the user's own text and the model was sent it inside a template
    (smolagents' `New task:\n<task>`), that text; when no model call records its input
    (Mastra 1.x's inference spans), the agent span's."""
    request = d.request.text if d.request is not None else ""
    for agent in agents:
        newest = newest_user(agent.input_messages)
        task = newest[1].text.strip() if newest else ""
        if task and task != request.strip() and (task in request or not request):
            return task
    return request


def _members(forest: Forest, d: _Draft, root: Span, exclusive: bool) -> list[Span]:
    """Every span of the turn, outermost first where they nest."""
    if exclusive:
        found = [root, *forest.below(root), *d.steps, *d.side, *d.tools]
    else:
        found = [*d.steps, *d.side, *d.tools]
        for s in d.steps:
            found.extend(forest.ancestors(s))
        if d.agent is not None:  # an agent-only turn: its run is its own, below a shared root
            found.append(d.agent)
    # The forest holds one object per span, so a span met twice is the same object; the
    # sort is stable, but spans of one trace never tie (span ids are unique in a trace).
    unique = {id(s): s for s in found}.values()
    return sorted(unique, key=lambda s: (len(forest.ancestors(s)), s.start_unix_nano, s.span_id))


def _final_answer(
    d: _Draft, agents: list[Span], ended: bool, calls: tuple[Call, ...]
) -> tuple[str | None, bool]:
    """(final answer, whether a tool call is still pending). A call the provider ran
    (answered in the output that requested it) is not pending (`linking.open_calls`)."""
    if ended and (handed := _sub_agent_answer(d, agents)) is not None:
        return handed, False
    last = d.steps[-1].output_messages if d.steps else None
    if last is None:
        last = next((a.output_messages for a in agents if a.output_messages is not None), None)
    if last is None:
        return None, False
    if _answers_by_tool(d):
        answer = next(
            final_answer_of(p.arguments) for m in last for p in m.tool_calls
            if p.name in FINAL_ANSWER_TOOLS
        )
        return (answer if answer and answer.strip() else None), False
    if open_calls(last):
        returned = _returned_directly(d, agents, calls) if ended else None
        return (returned, False) if returned is not None else (None, True)
    text = _assistant_text(last)
    return (text if text.strip() else None), False


def _agent_name(forest: Forest, spans: list[Span]) -> str | None:
    """The first of `spans` (outermost first) naming an agent, less names that are a stamp,
    not an agent: a name a model call carries below an agent span naming another (the
    official Agents SDK bridge sets its instrumentor's default, `OpenAI Agent`, on every
    span, the run's own agent only on `invoke_agent`), and LangGraph's default graph name
    (OpenLLMetry's `invoke_agent LangGraph` over a supervisor's named agents)."""
    stamped = {A.LANGGRAPH_DEFAULT_NAME}  # an unnamed graph's, which names no agent
    for s in spans:
        if s.kind is SpanKind.LLM and s.agent_name:
            owner = next((a for a in forest.ancestors(s) if a.kind is SpanKind.AGENT), None)
            if owner is not None and owner.agent_name and owner.agent_name != s.agent_name:
                stamped.add(s.agent_name)
    return _first(s.agent_name for s in spans if s.agent_name not in stamped)


def _replayed_answer(replay: Sequence[Message] | None, request: Message) -> str | None:
    """A turn's answer its own spans did not capture (OpenLLMetry's Agents SDK processor
    records no output for a chat completions call), as the next turn's input replays it:
    the last assistant text, with no tool call, between this turn's request and the next
    turn's, when the replay holds exactly this request as its previous user message."""
    if not replay:
        return None
    users = [i for i, m in enumerate(replay) if m.is_genuine_user]
    if len(users) < 2 or replay[users[-2]].text != request.text:
        return None
    said = [m.text for m in replay[users[-2] + 1 : users[-1]]
            if m.role == "assistant" and not m.tool_calls and m.text.strip()]  # fmt: skip
    return said[-1] if said else None


def _returned_directly(d: _Draft, agents: list[Span], calls: tuple[Call, ...]) -> str | None:
    """The answer of a run that ended on a tool whose result went to the user (OpenAI
    Agents `tool_use_behavior="stop_on_first_tool"` / `StopAtTools`, LangChain
    `return_direct=True`): the run arrived whole, its outermost agent span ended OK with
    an output, every call of the last model call ran, and that output is one of their
    results (the same text, or the same JSON). No model produced that output: a model
    call that arrives late would have, and its text is not a tool's result, so a run whose
    output is anything else stays waiting for it (`incomplete`)."""
    if not d.steps or not agents or agents[0].status == "error":
        return None
    said = _assistant_text(agents[0].output_messages)
    if not said.strip():
        return None
    last = [c for c in calls if c.step == len(d.steps) - 1]
    if not last or any(c.status == "no_result" for c in last):
        return None
    said_json = canonical(said)
    return said if any(
        c.result is not None and canonical(c.result) == said_json for c in last
    ) else None


def _sub_agent_answer(d: _Draft, agents: list[Span]) -> str | None:
    """The answer of a sub-agent run that was the last thing the turn did: the latest
    sub-agent model call (below a tool span or a delegated run) started after the turn's
    last step, and gave text with no pending tool call. It is the last model output of the
    run (DESIGN §3), so what the user got back, as when an agent tool returns directly
    (OpenAI Agents `tool_use_behavior="stop_on_first_tool"`, LangChain `return_direct`) or
    a delegation is the run's last step; unless the run's outermost agent span recorded
    the outer call's text as its output (a check run after the answer, not the answer)."""
    if not d.steps or not agents:
        return None
    last = d.steps[-1]
    later = [s for s in d.side if s.start_unix_nano > last.start_unix_nano]
    if not later:
        return None
    out = max(later, key=lambda s: (s.end_unix_nano, s.start_unix_nano)).output_messages or ()
    if open_calls(out):
        return None
    text = _assistant_text(out)
    if not text.strip():
        return None
    said = _assistant_text(agents[0].output_messages).strip()
    outer = _assistant_text(last.output_messages).strip()
    if said and said == outer and said != text.strip():
        return None
    return text


def _agent_answered(agent: Span | None) -> bool:
    """A turn read from its agent span alone (no model call span) whose run ended with an
    answer: it went on after its calls."""
    return agent is not None and agent.status != "error" and bool(
        _assistant_text(agent.output_messages).strip()
    )


def _assistant_text(messages: Sequence[Message] | None) -> str:
    """What the assistant messages among `messages` say, joined."""
    return "".join(m.text for m in messages or () if m.role == "assistant")


def _answers_by_tool(d: _Draft) -> bool:
    """The turn's last model call answers through a final-answer tool (calls rule 4)."""
    last = d.steps[-1].output_messages if d.steps else None
    return any(p.name in FINAL_ANSWER_TOOLS for m in last or () for p in m.tool_calls)


def _status(
    forest: Forest,
    d: _Draft,
    root: Span | None,
    agents: list[Span],
    final: str | None,
    stalled: bool,
    pending: bool,
    members: list[Span],
) -> tuple[str, str | None]:
    """`stalled`: the last model call requested tools none of which ran or answered."""
    run = [s for s in [root, *agents] if s is not None and s.status == "error"]
    if final is not None and not run:
        return "ok", None
    failing = run + [s for s in [*d.steps, *d.tools] if s.status == "error"]
    # With no answer, any failed span of the turn says why: a guardrail's tripwire fails a
    # span of structure (OpenInference's `turn` CHAIN under the OpenAI Agents SDK) while
    # the run's own span ends OK.
    failing = failing or [s for s in members if s.status == "error"]
    if failing:
        texts = [s.error for s in failing if s.error]
        first = failing[0]
        return "error", texts[0] if texts else f"span {first.span_id} ({first.name}) failed"
    missing = next((p for p in (forest.missing_parent(s) for s in [d.anchor, *d.steps]) if p), None)
    if missing is not None:
        return "incomplete", f"parent span {missing} never arrived"
    if pending and agents:  # the run's span ended and arrived
        # Its tools never ran: nothing is missing, the run stopped there (a step limit) and
        # failed to answer. Tools that ran with no later call: that call may arrive late.
        return ("error" if stalled else "incomplete",
                "the run ended on a model call that requested tools (a step limit?)")
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
            if have is not None and have.description and have.parameters:
                continue  # nothing left to take from a later definition
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
    given = {s.convention for s in members}  # a turn's spans share one or two
    names = {n for c in given for n in c.replace("+", ",").split(",") if n}
    return ",".join(sorted(names))


def _root_attributes(root: Span, texts: Iterable[str | None]) -> str:
    """The root span's attributes without message content (issue 17): no key a convention
    declares as content (`decode.CONTENT_KEYS`, keys and their flattened `key.` children),
    and, as a last line for keys no convention declares, no attribute whose value holds
    the turn's request, answer or a tool result (`texts`; only texts of at least
    `_LEAK_MIN` characters count, so a result like "18" does not hide `gen_ai.usage.*`)."""
    needles = {t.strip() for t in texts if t and len(t.strip()) >= _LEAK_MIN}
    kept = {
        k: v for k, v in root.attributes.merged().items()
        if not _is_content(k) and not _holds(v, needles)
    }
    # As `SpanAttributes.json` writes them (bytes as base64, NaN as null), keys sorted.
    return orjson.dumps(kept, default=bytes_as_base64, option=orjson.OPT_SORT_KEYS).decode()


_CONTENT_SET = frozenset(CONTENT_KEYS)
_CONTENT_PREFIXES = tuple(c + "." for c in CONTENT_KEYS)
_LEAK_MIN = 8


@lru_cache(maxsize=4096)  # every turn's root asks again of the same few keys
def _is_content(key: str) -> bool:
    return key in _CONTENT_SET or key.startswith(_CONTENT_PREFIXES)


def _holds(value: object, needles: set[str]) -> bool:
    if isinstance(value, bytes):  # read as the attributes' JSON text holds it
        value = bytes_as_base64(value)
    if isinstance(value, str):
        for n in needles:  # noqa: SIM110 (a loop costs a third of any()'s, per value)
            if n in value:
                return True
        return False
    if not needles or isinstance(value, bool | int | float) or value is None:
        return False
    text = orjson.dumps(value, default=bytes_as_base64).decode()
    # JSON escapes quotes and newlines: compare with the needles spelled the same way.
    return any(orjson.dumps(n).decode()[1:-1] in text or n in text for n in needles)


def _sum(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _first(values: Iterable[str | None]) -> str | None:
    return next((v for v in values if v), None)
