"""What is a model call, a tool or structure: one logical model call, many spans (DESIGN §3).

Conventions decide a span's kind from what it says about itself (`decode`); this module
decides, over all the spans of a batch, which of them report the same model call and which
only claim to be one. It runs once, after deduplication and before grouping, and hands the
rest of assembly spans in which each logical model call is one `SpanKind.LLM` span.

What each operation or span kind contributes to a turn:

| GenAI operation | OpenInference kind | contributes to the turn |
| --- | --- | --- |
| `chat` `text_completion` `generate_content` | `LLM` | a model call: a step, or a |
| | | sub-agent's call when below a tool |
| `invoke_agent` | `AGENT` | the run: status, its output when no model call has |
| | | one, tools, agent name |
| `invoke_workflow` | `CHAIN` | structure: its tools and names count as members |
| `create_agent` | - | structure: it declares an agent, it is not a run |
| `execute_tool` | `TOOL` | a tool execution, linked to the requested call |
| `embeddings` | `EMBEDDING` | nothing: not a step of the conversation |
| `retrieval` | `RETRIEVER` `RERANKER` | nothing of its own: what it found reaches the |
| | | turn through a model input or a tool result |
| - | `GUARDRAIL` `EVALUATOR` `PROMPT` | nothing: checks and templating |
| (other) | (other) | structure |

Rules, in order:

1. **Not a model call.** A span claiming to be one (kind LLM) that carries no input
   messages, no output messages and no token usage is structure (LlamaIndex's
   `_prepare_chat_with_tools`): it is demoted to `CHAIN`. A span with usage only stays a
   model call (its content was not captured; the turn says so in `issues`).
2. **Nested reports of one call.** A model-call span whose parent is a model-call span of
   which it is the only model-call child, and whose response id (when both carry one) is
   the parent's, reports the same call, whatever the two conventions: the child (the
   innermost span, nearest the wire) keeps its identity and its fields, and takes from its
   ancestors every field it lacks (None, or messages made only of placeholders), and
   their messages where they have them: a framework's span says what the agent meant where
   a client's shows the wire (smolagents sends a tool's result as a user message,
   `Observation: ...`, which its own span records as the tool's). So the Anthropic SDK's
   usage-only `anthropic.messages.create` under OpenInference's LLM span; ADK's
   `generate_content`, with `<elided>` message events, under `call_llm`. One thing of the
   enclosing report's messages yields to the wire form: a tool result the leaf's input
   gives for a call id the enclosing report also answers is the text the model was sent
   (DESIGN §3: a call's result is what the model saw), so the leaf's text replaces the
   report's (`_wire_results`). Pydantic AI records a failed tool's `ToolFailed` text on
   its `chat` span while its OpenAI model sends it wrapped, `{"error": ...}`
   (pydantic-ai `models/openai.py`, `_map_user_prompt` / `ToolReturnPart`), which the
   client instrumentation under it (OpenInference's `ChatCompletion`, OpenLLMetry's
   `openai.chat`) records. A leaf's result with no id, or one the report does not answer
   (smolagents' `Observation:` user messages) changes nothing. The parent
   stays an LLM span with a model call below it, so it is never a step itself. A parent
   with several model-call children (a framework span over a retry or a multi-call step)
   lends them nothing: which child its content belongs to is unknown.
3. **One response id, several spans.** Model calls (after rule 2) sharing `gen_ai.response.id`
   report one call, in one trace or in several (OpenLLMetry's `anthropic.chat` with
   content and the SDK's own span without, each in a trace of its own). The richest one
   (one in a run before one alone in a trace of its own, `links.lone_traces`; then input
   and output captured, most fields, earliest) keeps its identity and
   takes the others' missing fields; the others are demoted to `CHAIN` without content or
   usage, so they give no turn and their tokens are not counted twice. Only spans of one
   batch are merged: a copy arriving in a later batch without content stays a usage-only
   model call (flagged `no_content`). Sibling model calls (one parent) of different
   conventions whose inputs and outputs normalize alike are one call too, whether or not
   both carry its response id: a framework's span closed before the client's under it
   started (LlamaIndex's streamed `astream_chat` under OpenInference beside OpenLLMetry's
   `openai.chat`), so neither is the other's parent. So are such calls of one trace
   that ran at once, under other parents: two instrumentations of one framework, each
   under its own span of the graph node (OpenInference's and OpenLLMetry's LangChain
   callback handlers together; a streamed call names no response id). And a framework's
   record of a call that captured what was sent and not what came back (no output)
   reports the one model
   call of another convention in its trace that started within it and was sent the same
   input (normalized): AgentOps' record of an Agents SDK generation, beside its OpenAI
   instrumentation's span of the call, which is not under it (`conventions.agentops`).
   The record keeps its identity, its place in the run (the other span's parent is
   wherever the context was, the session's span), and takes the other's missing fields;
   the other is demoted as above. Last, **a report apart**: a model call alone in a trace
   of its own that names no conversation (`links.lone_traces`: a client instrumentation's
   span started outside the framework's context, as OpenInference's OpenAI span under its
   LangChain tracer) reports the call of another trace of the same service that it
   started within (in the call's first ten minutes: `links.apart_windows`) and that says
   the same (input and output alike once normalized; where the report lost its output,
   was sent the same: OpenInference's Anthropic span of a stream ends before the stream
   is read), when that call recorded its output and carries no response id (a call with
   one is merged by it, above: the report carries it too). The call keeps its identity
   (its place in the run) and takes the report's missing fields, and its usage (the
   wire's, as the client read it); the report is demoted, and its trace gives no turn.
   A report with an output that fits no call so is then taken by what it was sent, as a
   report that lost its output is, by the calls left: a client's record of a stream can
   say something else than what was streamed (OpenInference's OpenAI JS instrumentation,
   4.2.7, joins a stream's parallel tool calls into one, ids and names concatenated).
   Each report, the likeliest first (with an output, with usage, not failed: a retry's
   failed attempt is not the call), goes to the free call that fits and ends first (of
   nested calls, the innermost; where runs of one prompt overlap, each its own). The
   store finds either side from the other (`links.apart_keys`). And **two reports
   apart**: where a framework's handler and the client's instrumentation both start
   every span as a root, both reports of a call are alone in traces of their own
   (OpenLLMetry's LangChain.js handler, traceloop/openllmetry-js
   `packages/instrumentation-langchain` `callback_handler.ts`, starts its spans with no
   parent context, and its chat span's messages keep text parts only: a call asking for
   tools says nothing, and the history it replays has no tool calls and no call ids; its
   OpenAI instrumentation's span of the call, started within it, is a root too). A lone
   report that names no response id, around a lone report of the same service that names
   one (which started within it, in another trace) and was sent the same as far as both
   tell it (texts and tool results' texts by role: `links.gist_key`), is that report's
   when its output says nothing, is missing or says the same, and where both count usage
   they count the same: the inner one (nearest the wire) keeps its identity and takes the
   outer one's missing fields; the outer one is demoted. The closest fits (by start and
   end) pair first, each report once: where runs of one prompt overlap, each its own.
   Neither has a place in a run to keep; the store finds either from the other
   (`links.apart_keys`). Two runs' reports of one instrumentation name a response both
   or neither, so they never pair. And **a silent report apart**: a client SDK's own span
   of a call that captured nothing it was sent or said, only the provider's response id
   and the usage (`links.silent_report`: the Anthropic TypeScript SDK's
   `anthropic.messages.create`, whose span of a streamed call starts outside the
   instrumentation's context), alone in a trace of its own, is the report of the call of
   the same service that started within it, names no response and counts the same usage
   (OpenInference's and OpenLLMetry's spans of the stream): the call takes the report's
   missing fields and the report is demoted, its trace giving no turn. The closest fits
   (by end, then start) pair first; the store finds either side from the other
   (`links.apart_keys`).
4. **Final-answer tools.** A call of a tool in `FINAL_ANSWER_TOOLS` requested by the last
   model call of a turn is how the agent answers: its argument is the final answer and
   it is not listed among the turn's calls (its definition stays among the tools).
5. **One execution, two spans.** Two instrumentations of one framework each report its
   tool runs (OpenInference's and OpenLLMetry's LangChain instrumentations both on
   LangChain's callback manager: a TOOL span and an `execute_tool` span of each run, in
   one trace). Two tool spans of one trace, of different conventions, naming the same
   tool, one started within the other, whose call ids are the same where both give one
   and, where one gives none, whose canonical arguments are the same, report one
   execution: the one with a call id (then the one whose arguments are an object, then
   the richer) keeps its identity and takes the other's missing fields; the other is
   structure. The closest fits (by start and end) pair first, each span once: parallel
   runs of one tool stay apart.
6. **Synthetic spans.** ADK's `execute_tool (merged)` with `gen_ai.tool.name="(merged tools)"`
   (`conventions.values.SYNTHETIC_TOOL_NAMES`) wraps the parallel tool spans that did run:
   it is structure (`CHAIN`), never a call nor a tool definition. So is a span the
   convention of highest precedence decoded as structure (`CHAIN`) though a later one read
   a tool execution from it: DSPy's span of ReAct's `finish` pseudo-tool, which
   OpenInference reports as a TOOL span (`conventions.dspy`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence

import orjson
from msgspec.structs import replace

from turnscore.ingest.conventions.values import SYNTHETIC_TOOL_NAMES, result_text
from turnscore.ingest.links import (
    APART_WINDOW_NS,
    apart_windows,
    counted,
    gist_key,
    history_key,
    input_key,
    lone_traces,
    normalize,
    says_nothing,
    silent_report,
)
from turnscore.ingest.model import Message, Part, PartType, Span, SpanKind

__all__ = ["FINAL_ANSWER_TOOLS", "carries_call", "final_answer_of", "logical_spans"]


FINAL_ANSWER_TOOLS: frozenset[str] = frozenset({"final_answer"})
"""Tools through which an agent gives its answer (smolagents): a call of one in the last
model call's output is the turn's final answer, not a tool call of the turn."""


def final_answer_of(arguments: str | None) -> str | None:
    """The answer a final-answer call gives: its only argument (`{"answer": ...}`) as
    text, or the arguments themselves when they are not an object of one value."""
    if arguments is None:
        return None
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return arguments
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    return value if isinstance(value, str) else result_text(value)


_FILLED = (
    "input_messages",
    "output_messages",
    "system_instructions",
    "tool_definitions",
    "input_tokens",
    "output_tokens",
    "model",
    "agent_name",
    "conversation_id",
    "response_id",
)
"""Fields one report of a model call lends another that lacks them."""

SpanKey = tuple[str, str]


def carries_call(span: Span) -> bool:
    """Whether a span claiming to be a model call carries anything of one (rule 1)."""
    return not (
        span.input_messages is None
        and span.output_messages is None
        and span.input_tokens is None
        and span.output_tokens is None
    )


def logical_spans(spans: Sequence[Span]) -> list[Span]:
    """The spans, in the same order, with each logical model call one LLM span and each
    tool run one tool span (rules 1-3, 5, 6)."""
    out = [_structure(s) if _not_a_call(s) else s for s in spans]
    # Rule 2 walks up through model-call spans only: they are all it needs to find.
    index = {(s.trace_id, s.span_id): i for i, s in enumerate(out) if s.kind is SpanKind.LLM}
    llm_children: dict[SpanKey, list[int]] = defaultdict(list)
    for i in index.values():
        s = out[i]
        if s.parent_span_id is not None:
            llm_children[(s.trace_id, s.parent_span_id)].append(i)
    leaves = [i for key, i in index.items() if key not in llm_children]
    by_response: dict[str, list[int]] = defaultdict(list)
    absorbed: dict[int, list[int]] = {}
    for i in leaves:
        merged, absorbed[i] = _with_ancestors(out[i], out, index, llm_children)
        out[i] = merged
        if merged.response_id:
            by_response[merged.response_id].append(i)

    def drop(i: int) -> None:
        """A leaf merged into another report, and the enclosing reports rule 2 merged into
        it: else those, a model call with none below it any more, would be steps."""
        for at in (i, *absorbed[i]):
            out[at] = _hollow(out[at])

    lone = lone_traces(spans)

    def rank(i: int) -> tuple[bool, tuple[int, int, int, str, str]]:
        """A report in a run before one alone in a trace of its own, which has no place in
        the run to keep; then the richest."""
        return out[i].trace_id not in lone, _richness(out[i])

    for group in [*by_response.values(), *_echoes(out, leaves)]:
        group = [i for i in group if out[i].kind is SpanKind.LLM]  # not merged by another key
        if len(group) < 2:
            continue
        keep = max(group, key=rank)
        merged = out[keep]
        for i in sorted(group, key=rank, reverse=True):
            if i != keep:
                merged = _fill(merged, out[i])
                drop(i)
        out[keep] = merged
    for record, call in _records(out, leaves):
        out[record] = _fill(out[record], out[call])
        drop(call)
    for call, report in _apart(out, leaves, lone):
        out[call] = _fill(out[call], out[report], over=_COUNTED)
        drop(report)
    for inner, outer in _enclosed_apart(out, leaves, lone):
        out[inner] = _fill(out[inner], out[outer])
        drop(outer)
    for call, report in _silent_apart(out, leaves, lone):
        out[call] = _fill(out[call], out[report])
        drop(report)
    for keep, other in _twin_executions(out):
        out[keep] = _with_execution_of(out[keep], out[other])
        out[other] = _structure(out[other])
    return out


def _twin_executions(spans: list[Span]) -> list[tuple[int, int]]:
    """Rule 5: (the tool span kept, the other report of its execution)."""
    by_tool: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, s in enumerate(spans):
        if s.kind is SpanKind.TOOL and s.tool_execution is not None:
            by_tool[(s.trace_id, s.tool_execution.name)].append(i)
    fits = [
        (_misfit(spans[a], spans[b]), spans[a].span_id, spans[b].span_id, a, b)
        for group in by_tool.values() if len(group) > 1
        for a in group for b in group
        if spans[a].convention < spans[b].convention and _same_execution(spans[a], spans[b])
    ]
    ranked = (sorted(pair, key=lambda i: _execution_rank(spans[i]), reverse=True)
              for pair in _closest_first(fits))
    return [(keep, other) for keep, other in ranked]


def _closest_first(
    fits: Iterable[tuple[tuple[int, int], str, str, int, int]],
) -> list[tuple[int, int]]:
    """The (a, b) of `fits` (misfit, two span ids to break ties, a, b), the closest fits
    first, each index in one pair at most: where runs of one prompt or one tool overlap,
    each its own."""
    pairs: list[tuple[int, int]] = []
    taken: set[int] = set()
    for *_, a, b in sorted(fits):
        if a not in taken and b not in taken:
            taken.update((a, b))
            pairs.append((a, b))
    return pairs


def _same_execution(one: Span, two: Span) -> bool:
    """Whether two tool spans (same trace, same tool) report one run (rule 5)."""
    first, then = sorted((one, two), key=lambda s: (s.start_unix_nano, -s.end_unix_nano))
    if not first.start_unix_nano <= then.start_unix_nano <= first.end_unix_nano:
        return False
    a, b = one.tool_execution, two.tool_execution
    assert a is not None and b is not None
    if a.call_id and b.call_id:
        return a.call_id == b.call_id
    return a.arguments is not None and a.arguments == b.arguments


def _execution_rank(span: Span) -> tuple[bool, bool, int, str]:
    execution = span.tool_execution
    assert execution is not None
    fields = (execution.call_id, execution.arguments, execution.result, execution.error)
    return (execution.call_id is not None, (execution.arguments or "").startswith("{"),
            sum(f is not None for f in fields), span.span_id)


def _with_execution_of(span: Span, other: Span) -> Span:
    """`span` with the fields its execution lacks taken from `other`'s."""
    mine, theirs = span.tool_execution, other.tool_execution
    assert mine is not None and theirs is not None
    missing = {name: getattr(theirs, name) for name in ("call_id", "arguments", "result", "error")
               if getattr(mine, name) is None and getattr(theirs, name) is not None}
    return replace(span, tool_execution=replace(mine, **missing)) if missing else span


def _echoes(spans: list[Span], leaves: list[int]) -> list[list[int]]:
    """Rule 3's other key: model calls of different conventions saying the same (input and
    output alike once normalized, `links.normalize`), siblings (one parent) or at once in
    one trace (`_at_once`)."""
    siblings: dict[SpanKey, list[int]] = defaultdict(list)
    traces: dict[str, list[int]] = defaultdict(list)
    for i in leaves:
        s = spans[i]
        traces[s.trace_id].append(i)
        if s.parent_span_id is not None:
            siblings[(s.trace_id, s.parent_span_id)].append(i)
    echoes: dict[tuple[object, ...], list[int]] = defaultdict(list)
    at_once: dict[tuple[object, ...], list[int]] = defaultdict(list)
    for where, groups in ((echoes, siblings.values()), (at_once, traces.values())):
        for group in groups:
            if len({spans[i].convention for i in group}) < 2:
                continue  # the usual case, left before anything is normalized
            for i in group:
                s = spans[i]
                if not (_missing(s.input_messages) or _missing(s.output_messages)):
                    said = (normalize(s.input_messages or ()),
                            normalize(s.output_messages or ()))
                    parent = s.parent_span_id if where is echoes else None
                    where[(s.trace_id, parent, *said)].append(i)
    found = [g for g in echoes.values() if len({spans[i].convention for i in g}) > 1]
    return found + [g for group in at_once.values() for g in _at_once(spans, group)]


def _at_once(spans: list[Span], group: list[int]) -> list[list[int]]:
    """Of model calls of one trace saying the same, those of different conventions that
    ran at once (each started before the others ended): two instrumentations of one
    framework (OpenInference's and OpenLLMetry's LangChain handlers, each under its own
    node span: neither is the other's parent nor sibling) report the same call."""
    found: list[list[int]] = []
    cluster: list[int] = []
    end = -1
    for i in sorted(group, key=lambda i: (spans[i].start_unix_nano, spans[i].span_id)):
        if cluster and spans[i].start_unix_nano > end:
            found.append(cluster)
            cluster = []
        cluster.append(i)
        end = max(end, spans[i].end_unix_nano) if len(cluster) > 1 else spans[i].end_unix_nano
    found.append(cluster)
    return [c for c in found if len({spans[i].convention for i in c}) > 1]


def _records(spans: list[Span], leaves: list[int]) -> list[tuple[int, int]]:
    """Rule 3's records: (a model call without output, the one model call of another
    convention in its trace that started within it and was sent the same input)."""
    leaves = [i for i in leaves if spans[i].kind is SpanKind.LLM]  # not merged already
    records = [i for i in leaves
               if _missing(spans[i].output_messages) and not _missing(spans[i].input_messages)]
    if not records:
        return []
    by_trace: dict[str, list[int]] = defaultdict(list)
    for i in leaves:
        by_trace[spans[i].trace_id].append(i)
    groups = []
    for r in records:
        record = spans[r]
        sent = normalize(record.input_messages or ())
        within = [i for i in by_trace[record.trace_id]
                  if spans[i].convention != record.convention
                  and record.start_unix_nano <= spans[i].start_unix_nano <= record.end_unix_nano
                  and normalize(spans[i].input_messages or ()) == sent]
        if len(within) == 1:
            groups.append((r, within[0]))
    return groups


def _apart(spans: list[Span], leaves: list[int], lone: set[str]) -> list[tuple[int, int]]:
    """Rule 3's reports apart: (a model call, its report alone in a trace of its own)."""
    leaves = [i for i in leaves if spans[i].kind is SpanKind.LLM]  # not merged already
    # By service and what the report said (input and output), or, where it lost its
    # output, what it was sent: `links.apart_keys`' keys.
    reports: Reports = defaultdict(list)
    sent: Reports = defaultdict(list)
    for i in leaves:
        s = spans[i]
        if s.trace_id not in lone:
            continue
        said, given = history_key(s), input_key(s)
        key = (said, True) if said is not None else (given, False)
        if key[0] is not None:
            reports[(s.service_name, key[0], key[1])].append((s.start_unix_nano, i))
        if said is not None and given is not None:
            sent[(s.service_name, given, False)].append((s.start_unix_nano, i))
    if not reports:
        return []
    pairs, taken = _paired(spans, _fits(spans, leaves, lone, reports), set())
    # Then what a report with an output that fits no call was sent: a client's record of
    # a stream that joined its parallel tool calls into one (OpenInference's OpenAI JS
    # instrumentation, 4.2.7) says something else than the call it reports.
    paired = {r for _, r in pairs}
    rest: Reports = defaultdict(list)
    for given_key, starts in sent.items():
        rest[given_key] = [(start, r) for start, r in starts if r not in paired]
    more, _ = _paired(spans, _fits(spans, [c for c in leaves if c not in taken], lone, rest),
                      taken)
    return pairs + more


Reports = dict[tuple[str | None, str, bool], list[tuple[int, int]]]
"""Reports apart by service, key and whether the key is what they said (or were sent):
each report's start and index."""


def _fits(
    spans: list[Span], leaves: list[int], lone: set[str], reports: Reports
) -> dict[int, list[int]]:
    """Each report's calls: of another trace, no response id, what the report said (or was
    sent) alike, the report started within it."""
    for starts in reports.values():
        starts.sort()
    fits: dict[int, list[int]] = defaultdict(list)
    for c in leaves:
        call = spans[c]
        if call.trace_id in lone or call.response_id or (said := history_key(call)) is None:
            continue
        windows = apart_windows(call)
        for alike in (reports.get((call.service_name, said, True), []),
                      reports.get((call.service_name, input_key(call) or "", False), [])):
            first = bisect_left(alike, (call.start_unix_nano, -1))
            last = bisect_right(alike, (call.end_unix_nano, len(spans)))
            for start, r in alike[first:last]:
                if start // APART_WINDOW_NS in windows:
                    fits[r].append(c)
    return fits


def _paired(
    spans: list[Span], fits: dict[int, list[int]], taken: set[int]
) -> tuple[list[tuple[int, int]], set[int]]:
    """(call, report) pairs, and the calls `taken` with them."""
    # Each report, the likeliest first (it said something, it counted its usage, it did
    # not fail: a retry's failed attempt is not the call), to the free call that ends
    # first: as many merged as can be where runs of one prompt overlap, and of calls
    # nested, the innermost.
    pairs, taken = [], set(taken)
    for r in sorted(fits, key=lambda r: _unlikely(spans[r])):
        free = [c for c in fits[r] if c not in taken]
        if free:
            c = min(free, key=lambda c: (spans[c].end_unix_nano, -spans[c].start_unix_nano,
                                         spans[c].span_id))
            taken.add(c)
            pairs.append((c, r))
    return pairs, taken


def _enclosed_apart(
    spans: list[Span], leaves: list[int], lone: set[str]
) -> list[tuple[int, int]]:
    """Rule 3's two reports apart: (a lone report, the lone report around it)."""
    by_input: dict[tuple[str | None, str], list[int]] = defaultdict(list)
    for i in leaves:
        s = spans[i]
        if s.kind is SpanKind.LLM and s.trace_id in lone and s.input_messages is not None:
            by_input[(s.service_name, gist_key(s.input_messages))].append(i)
    fits = [
        (_misfit(spans[o], spans[i]), spans[o].span_id, spans[i].span_id, i, o)
        for group in by_input.values() if len(group) > 1
        for o in group for i in group if i != o and _encloses(spans[o], spans[i])
    ]
    return _closest_first(fits)


def _silent_apart(spans: list[Span], leaves: list[int], lone: set[str]) -> list[tuple[int, int]]:
    """Rule 3's silent reports apart: (a call, the `silent_report` around its start). The
    closest fits by end first: both end once the response is read, while the call's report
    may start when the stream is handed to it (OpenLLMetry's Anthropic JS instrumentation,
    ~30 ms after the SDK's span), so runs of one prompt 20 ms apart start nearer another's."""
    reports: dict[tuple[str | None, tuple[int, int]], list[int]] = defaultdict(list)
    calls: dict[tuple[str | None, tuple[int, int]], list[tuple[int, int]]] = defaultdict(list)
    for i in leaves:
        s = spans[i]
        if s.kind is not SpanKind.LLM or (usage := counted(s)) is None:
            continue
        if silent_report(s):
            if s.trace_id in lone:
                reports[(s.service_name, usage)].append(i)
        elif not s.response_id and s.input_messages is not None:
            calls[(s.service_name, usage)].append((s.start_unix_nano, i))
    fits: list[tuple[tuple[int, int], str, str, int, int]] = []
    for key, around in reports.items():
        starts = sorted(calls.get(key, ()))
        for o in around:
            outer, windows = spans[o], apart_windows(spans[o])
            first = bisect_left(starts, (outer.start_unix_nano, -1))
            last = bisect_right(starts, (outer.end_unix_nano, len(spans)))
            fits.extend((_misfit(outer, spans[i])[::-1], outer.span_id, spans[i].span_id, i, o)
                        for start, i in starts[first:last]
                        if spans[i].trace_id != outer.trace_id
                        and start // APART_WINDOW_NS in windows)
    return _closest_first(fits)


def _misfit(outer: Span, inner: Span) -> tuple[int, int]:
    """How far two reports of one run are apart: by start first, then by end. Both wrap the
    run from its start, so their starts are close; where they end depends on what each
    waits for (a handler for its framework's parsing, a client for a stream's end), so of
    runs of one prompt 20 ms apart, another run's report may end as near as the own."""
    return (abs(inner.start_unix_nano - outer.start_unix_nano),
            abs(inner.end_unix_nano - outer.end_unix_nano))


def _encloses(outer: Span, inner: Span) -> bool:
    """Whether `outer` may be a report of `inner`'s call (both sent the same
    `links.gist_key`): in another trace, `inner` started within it (and may end a little
    after it: the handler's span ends when LangChain has the response, the client's once
    its promise settled), `inner` names the provider's response and `outer` none (a
    handler's report around the client's), `outer` says nothing of its own or the same,
    and both count the same usage where both count it."""
    if outer.trace_id == inner.trace_id or outer.response_id or not inner.response_id:
        return False
    if not outer.start_unix_nano <= inner.start_unix_nano <= outer.end_unix_nano:
        return False
    said = outer.output_messages
    if not (_missing(said) or says_nothing(said or ())
            or normalize(said or ()) == normalize(inner.output_messages or ())):
        return False
    return all(
        mine is None or theirs is None or mine == theirs
        for mine, theirs in ((outer.input_tokens, inner.input_tokens),
                             (outer.output_tokens, inner.output_tokens))
    )


def _unlikely(report: Span) -> tuple[bool, bool, bool, int, str]:
    return (_missing(report.output_messages),
            report.input_tokens is None and report.output_tokens is None,
            report.status == "error", report.start_unix_nano, report.span_id)


def _not_a_call(span: Span) -> bool:
    if span.kind is SpanKind.LLM:
        return not carries_call(span)
    execution = span.tool_execution
    return execution is not None and (
        execution.name in SYNTHETIC_TOOL_NAMES or span.kind is SpanKind.CHAIN
    )


def _structure(span: Span) -> Span:
    defined = tuple(t for t in span.tool_definitions or () if t.name not in SYNTHETIC_TOOL_NAMES)
    return replace(span, kind=SpanKind.CHAIN, tool_execution=None,
                   tool_definitions=defined or None)


def _hollow(span: Span) -> Span:
    """A duplicate report of a call merged elsewhere: structure, nothing counted twice."""
    return replace(
        span, kind=SpanKind.CHAIN, input_messages=None, output_messages=None,
        input_tokens=None, output_tokens=None,
    )  # fmt: skip


def _with_ancestors(
    span: Span, spans: list[Span], index: dict[SpanKey, int], llm_children: dict[SpanKey, list[int]]
) -> tuple[Span, list[int]]:
    """The leaf with what its enclosing reports of the call say (rule 2), and those."""
    absorbed: list[int] = []
    merged = span
    cur = span
    while cur.parent_span_id is not None:
        parent_at = index.get((cur.trace_id, cur.parent_span_id))
        if parent_at is None:  # no parent, or not a model call
            break
        parent = spans[parent_at]
        # `get`: indexing would add the key, and `logical_spans` reads absence as a leaf.
        if len(llm_children.get((parent.trace_id, parent.span_id), ())) != 1:
            break
        if merged.response_id and parent.response_id and merged.response_id != parent.response_id:
            break
        merged = _fill(merged, parent, over=_SAID)
        absorbed.append(parent_at)
        cur = parent
    return (_wire_results(merged, span) if absorbed else merged), absorbed


def _wire_results(merged: Span, leaf: Span) -> Span:
    """`merged` with each tool result of its input that the leaf's input also gives, by call
    id, in the leaf's text: what the model was sent (rule 2)."""
    if merged.input_messages is None or leaf.input_messages is None:
        return merged
    sent = {p.call_id: p for m in leaf.input_messages for p in m.parts
            if p.type is PartType.TOOL_RESULT and p.call_id and p.text is not None}
    if not sent:
        return merged
    messages = tuple(_sent_results(m, sent) for m in merged.input_messages)
    return replace(merged, input_messages=messages) if messages != merged.input_messages else merged


def _sent_results(message: Message, sent: dict[str, Part]) -> Message:
    parts = tuple(
        replace(p, text=wire.text, is_error=p.is_error or wire.is_error)
        if p.type is PartType.TOOL_RESULT and p.call_id and (wire := sent.get(p.call_id))
        and wire.text != p.text else p
        for p in message.parts
    )  # fmt: skip
    return replace(message, parts=parts) if parts != message.parts else message


_COUNTED = frozenset({"input_tokens", "output_tokens"})
"""What a client's report apart of a call says over the framework's: the usage, as the
wire gave it (langchain-anthropic's streamed message counts no input tokens)."""

_SAID = frozenset({"input_messages", "output_messages"})
"""What an enclosing report of the call says over the wire form under it (rule 2)."""


def _fill(span: Span, other: Span, over: frozenset[str] = frozenset()) -> Span:
    """`span` with the fields it lacks taken from `other`, and those named in `over`
    taken wherever `other` has them."""
    changes = {
        name: getattr(other, name)
        for name in _FILLED
        if (name in over or _missing(getattr(span, name))) and not _missing(getattr(other, name))
    }
    return replace(span, **changes) if changes else span


def _missing(value: object) -> bool:
    """Not carried: None, or messages none of which has a part left (every part was a
    placeholder: ADK's `<elided>` events on `generate_content`)."""
    if value is None:
        return True
    if isinstance(value, tuple) and value and all(isinstance(m, Message) for m in value):
        return not any(m.parts for m in value)
    return False


def _richness(span: Span) -> tuple[int, int, int, str, str]:
    captured = (not _missing(span.input_messages)) + (not _missing(span.output_messages))
    present = sum(not _missing(getattr(span, name)) for name in _FILLED)
    return (captured, present, -span.start_unix_nano, span.trace_id, span.span_id)
