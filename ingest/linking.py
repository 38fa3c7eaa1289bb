"""Linking the calls a model asked for to their executions and to the results it saw.

Helpers for `turnscore.ingest.assemble`. For one conversation:

1. **Requested calls**: the tool-call parts of each main-line model call's output, in order;
   `step` is the index of that model call in the turn. A call whose result is in that same
   output ran on the provider's side (a hosted tool: web search, code interpreter, an MCP
   call; `conventions.messages.hosted_parts`): that result is what the model saw, and the
   call is finished, never pending (`open_calls`). A call its output gives no id takes the
   id a later step of the turn replays it with (same name and canonical arguments, each id
   once: `_replayed_id`), so its result joins it by id.
   **Calls seen only in a later request**: a model call whose output was not captured
   (LlamaIndex's OTel integration drops a streamed call's end event, which arrives after
   its span closed) may still have asked for tools: a later model call of the same turn
   replays that output in its input, an assistant message with tool calls, then their
   results. Such a message, after the input's newest genuine user message (what came
   before it belongs to earlier turns), none of whose calls any captured output of the
   conversation holds (by call id, or by name and canonical arguments where there is no
   id), is the output of the latest earlier step of the turn without one
   (`replayed_calls`); where it replays more such messages than there are steps without
   output, the earlier ones are the first such step's too when nothing else can have
   said them: every step before that later one is missing its output, or only one is (a
   framework that writes each call of one response as its own message:
   `_replayed_steps`). Only steps whose output is missing take calls this way: a
   captured output is what the model said, unless the next step's input says otherwise:
   where its last assistant message shares a call with the step's output and the tool
   results after it answer calls that output lacks (by id, else by count), that message's
   calls are the step's (`_replayed_request`: a streamed output recorded as its last
   chunk, or its parallel calls merged into one).
2. **Results the model saw**: tool-result parts in later model calls' inputs, by call id:
   the first result with that id that appeared after the call was asked (in this turn or,
   for a call the turn left pending, a later one); parts without a usable id
   pair in order with the previous step's calls still lacking one (by name where given),
   taking only the results after the input's last assistant message; one id-less result
   for several such calls is split by lines (`_split_lines`). A result so paired that
   names an id no call has gives its call that id: the id the model was told.
3. **Executions** (tool spans; a tool span inside another tool span belongs to that tool,
   not to the turn): by call id across the conversation, preferring the tool span's own
   turn (ids may be synthesized per turn, like ADK's `{name}_{idx}`); then, within the
   turn, by tool name plus canonical arguments in request order (parallel calls may run in
   any order; decoders have unwrapped framework wrappers such as `{"kwargs": {...}}`,
   `conventions.messages.unwrap_tool_input`); then by name alone when the span carries no
   arguments; then, for executions without a call id, by name in order; then an execution
   carrying nothing but its own name, alone in its step, joins the one call of that step
   left without one (`_link_bare`: a handoff reported under another name). An execution's
   id that is no call's the model asked for nor any result's it saw is the
   instrumentation's own, and does not bar joining by name and arguments (`_own_id`). An execution
   joins one call at most, so a call is never counted twice; what no rule joins is kept
   (4.) and the turn's `issues` say `unreconciled_calls`.
4. Executions no requested call claims are kept as calls too (for example when no model
   spans exist): their step is the last model call that started before them.

A call's `result` is what the model saw when the telemetry carries it, else the tool span's
text, else, for a failed execution the run went on after, its error text (`_failure_text`);
its `error` is the tool span's error, else the result's text when the model was told the
call failed.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import orjson
from msgspec.structs import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.links import call_ids
from turnscore.ingest.model import Message, Part, PartType, Span, ToolExecution
from turnscore.ingest.turn import Call

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Requested:
    part: Part
    step: int
    execution: Span | None = None
    seen: Part | None = None


def requested_calls(steps: Sequence[Span]) -> list[Requested]:
    out: list[Requested] = []
    taken: set[str] = set()
    for i, step in enumerate(steps):
        answered = _answered(step.output_messages)
        asked: Sequence[Part] = [p for m in step.output_messages or () for p in m.tool_calls]
        if asked and i + 1 < len(steps) and not answered:
            asked = _replayed_request(asked, steps[i + 1]) or asked
        for p in asked:
            if not p.call_id and (replayed := _replayed_id(p, steps[i + 1 :], taken)):
                p = replace(p, call_id=replayed)
            out.append(Requested(part=p, step=i,
                                 seen=answered.get(p.call_id) if p.call_id else None))
    return out


def _replayed_request(asked: Sequence[Part], after: Span) -> tuple[Part, ...] | None:
    """The calls the next step's input says a step asked for, where its captured output
    holds others: the input's last assistant message, when it shares a call with the output
    (by id, or an id the output merged; else by name and arguments) and the tool results
    after it answer calls the output lacks (by id, else by count). Streamed outputs are
    where instrumentations get this wrong while the client replays them right:
    opentelemetry-instrumentation-google-generativeai keeps a stream's last chunk only,
    @arizeai/openinference-instrumentation-openai 4.x and openinference-instrumentation-
    beeai merge parallel calls into one."""
    results = _trailing_results(after.input_messages)
    ids = {p.call_id for p in results if p.call_id}
    mine = {i for p in asked for i in call_ids(p.call_id)}
    if ids <= mine and len(results) <= len(asked):  # ids, else the count, agree
        return None
    request = next((m for m in reversed(after.input_messages or ()) if m.role == "assistant"),
                   None)
    calls = request.tool_calls if request is not None else ()
    said = {(p.name, canonical(p.arguments)) for p in asked}
    shared = any(p.call_id in mine or (p.name, canonical(p.arguments)) in said for p in calls)
    if not shared and not _merged(asked, calls):
        return None  # another agent's, or another step's, request
    theirs = {p.call_id for p in calls}
    if ids:
        return calls if ids <= theirs else None
    return calls if len(calls) == len(results) else None


def _merged(asked: Sequence[Part], calls: Sequence[Part]) -> bool:
    """Whether a captured output's one call is the replayed calls joined: no id, the last
    one's name, their arguments one after another. `@langfuse/openai` 5.x records a stream
    so (`getToolCallOutput`: the last name seen, every argument delta concatenated;
    `tests/fixtures/stacks/langfuse-js-openai-stream`)."""
    if len(asked) != 1 or asked[0].call_id or len(calls) < 2:
        return False
    joined = asked[0]
    return joined.name == calls[-1].name and _json_values(joined.arguments) == [
        canonical(p.arguments) for p in calls
    ]


def _json_values(arguments: str | None) -> list[str | None] | None:
    """The JSON values written one after another in arguments that are no JSON (kept as a
    JSON string: `values.canonical_arguments`), each canonical; None when they are not such
    a sequence."""
    try:
        text = orjson.loads(arguments) if arguments is not None else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(text, str):
        return None
    decoder = json.JSONDecoder()
    values: list[str | None] = []
    at = 0
    try:
        while (at := _skip_space(text, at)) < len(text):
            value, at = decoder.raw_decode(text, at)
            values.append(canonical(json.dumps(value)))
    except json.JSONDecodeError:
        return None
    return values


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _replayed_id(call: Part, later: Sequence[Span], taken: set[str]) -> str | None:
    """The id a later step's input gives a call its captured output gave none (Langfuse 3's
    streamed generations drop it; the client sent it back with the assistant message): the
    first replayed call of the same name and canonical arguments, each id taken once."""
    arguments = canonical(call.arguments)
    for step in later:
        for m in _this_turn(step.input_messages):
            for p in m.tool_calls:
                if (p.call_id and p.call_id not in taken and p.name == call.name
                        and canonical(p.arguments) == arguments):
                    taken.add(p.call_id)
                    return p.call_id
    return None


CallKey = tuple[str, str | None, str | None]
"""A call as a captured output names it: by id, else by name and canonical arguments."""


def call_key(part: Part) -> CallKey:
    if part.call_id:
        return ("id", part.call_id, None)
    return ("content", part.name, canonical(part.arguments))


def captured_calls(model_calls: Iterable[Span]) -> set[CallKey]:
    """The calls the captured outputs of these model calls request."""
    return {call_key(p) for s in model_calls for m in s.output_messages or () for p in m.tool_calls}


def replayed_calls(steps: Sequence[Span], captured: set[CallKey]) -> list[Requested]:
    """Calls of steps whose output was not captured, read where a later step of the turn
    replays that output (rule 1, second paragraph); `captured` are the conversation's
    captured calls (`captured_calls`), so no call is read twice."""
    missing = [i for i, s in enumerate(steps) if not _has_output(s)]
    if not missing:
        return []
    known = set(captured)
    out: list[Requested] = []
    for k in range(1, len(steps)):
        open_steps = [i for i in missing if i < k and not any(r.step == i for r in out)]
        if not open_steps:
            continue
        replayed = [m for m in _this_turn(steps[k].input_messages) if m.tool_calls]
        fresh = [m for m in replayed if not any(call_key(p) in known for p in m.tool_calls)]
        for i, step in _replayed_steps(len(fresh), open_steps, k):
            m = fresh[i]
            answered = _answered((m,))
            for p in m.tool_calls:
                known.add(call_key(p))
                out.append(Requested(part=p, step=step,
                                     seen=answered.get(p.call_id) if p.call_id else None))
    return sorted(out, key=lambda r: r.step)


def _replayed_steps(count: int, open_steps: list[int], k: int) -> list[tuple[int, int]]:
    """Which open step each of `count` replayed assistant messages (in input order) was
    the output of, in input order. The latest is the latest open step's: paired from the
    end. Messages beyond the open steps are dropped (a captured output may be replayed
    under other ids), unless nothing else can have said them: every step before `k` is
    open, or only one step is (the others told their calls, so none of these is theirs).
    Then they are the first open step's too: one response's calls written each as its own
    assistant message with its result after it. Pipecat's context (`LLMAssistantAggregator`,
    pipecat-ai 1.14: a function call in progress is its own assistant message); ADK for
    TypeScript in SSE mode (`@google/adk` 2.0 `StreamingResponseAggregator`,
    `utils/streaming_utils`: each streamed chunk's function calls are a response, so an
    event, of their own; its `call_llm` span records the last one, usage alone)."""
    pairs = list(zip(range(count - 1, -1, -1), reversed(open_steps), strict=False))
    surplus = count - len(open_steps)
    if surplus > 0 and (len(open_steps) == 1 or len(open_steps) == k):
        pairs += [(i, open_steps[0]) for i in range(surplus)]
    return sorted(pairs)


def _has_output(step: Span) -> bool:
    """Whether the step's output says anything: an empty text part alone says nothing.
    Traceloop's span processor (`@traceloop/node-server-sdk` 0.27) turns an AI SDK stream
    step's `ai.response.text` (`""` beside tool calls) into `gen_ai.output.messages` first
    (`transformResponseText`), so `transformResponseToolCalls`' `setIfAbsent` drops the
    calls (`tests/fixtures/stacks/vercel-ai-traceloop-stream`): they are then the ones the
    next step replays."""
    return any(
        p.type is not PartType.TEXT or p.text
        for m in step.output_messages or () for p in m.parts
    )  # fmt: skip


def _this_turn(messages: Sequence[Message] | None) -> Sequence[Message]:
    """The assistant messages after the newest genuine user message: the turn's own work
    replayed (nothing when the input holds no user message to tell turns apart)."""
    if not messages:
        return ()
    last_user = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].is_genuine_user), None
    )
    if last_user is None:
        return ()
    return [m for m in messages[last_user + 1 :] if m.role == "assistant"]


def _answered(output: Sequence[Message] | None) -> dict[str, Part]:
    """Results a model output holds itself, by call id: the provider ran those calls."""
    return {
        p.call_id: p for m in output or () for p in m.parts
        if p.type is PartType.TOOL_RESULT and p.call_id
    }  # fmt: skip


def open_calls(output: Sequence[Message] | None) -> list[Part]:
    """The calls a model output requests and leaves to the client: all but those it
    answers itself (hosted tools the provider ran)."""
    answered = _answered(output)
    return [
        p for m in output or () for p in m.tool_calls
        if not (p.call_id and p.call_id in answered)
    ]  # fmt: skip


def execution_of(span: Span) -> ToolExecution:
    return span.tool_execution or ToolExecution(name=span.name)


def canonical(arguments: str | None) -> str | None:
    """Arguments as sorted compact JSON; text that is not JSON stays as it is."""
    if arguments is None:
        return None
    try:
        return orjson.dumps(orjson.loads(arguments), option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONDecodeError:
        return arguments.strip()


# --- results the model saw ---------------------------------------------------------


Order = tuple[int, str, str]
"""A model call's place in its conversation: (start, trace id, span id)."""


def order_of(span: Span) -> Order:
    return (span.start_unix_nano, span.trace_id, span.span_id)


def results_by_id(model_calls: Iterable[Span]) -> dict[str, list[tuple[Order, Part]]]:
    """Per call id, each distinct tool-result part these model calls' inputs hold, with
    the place of the first call whose input held it, in that order. Ids restart in some
    stacks (`call_1` every run): a replayed history holds an earlier turn's result under
    the id a later call reuses, and only where a result first appears tells them apart."""
    out: dict[str, list[tuple[Order, Part]]] = {}
    known: set[Part] = set()  # the same result replayed as a copy (no shared message) too
    seen: set[int] = set()  # decoding shares a message replayed in later inputs: read it once
    for call in model_calls:
        for m in call.input_messages or ():
            if id(m) in seen:
                continue
            seen.add(id(m))
            for p in m.parts:
                if p.type is PartType.TOOL_RESULT and p.call_id and p not in known:
                    known.add(p)
                    out.setdefault(p.call_id, []).append((order_of(call), p))
    return out


def attach_results(
    requested: Sequence[Requested],
    steps: Sequence[Span],
    conversation_results: dict[str, list[tuple[Order, Part]]],
) -> None:
    for r in requested:
        if r.part.call_id and r.seen is None:
            # A result that appeared before the call was asked answered an earlier call.
            after = order_of(steps[r.step])
            r.seen = next(
                (p for at, p in conversation_results.get(r.part.call_id, ()) if at > after), None
            )
    known = {r.part.call_id for r in requested if r.part.call_id}
    for k in range(1, len(steps)):
        loose = [p for p in _trailing_results(steps[k].input_messages) if p.call_id not in known]
        waiting = [r for r in requested if r.step == k - 1 and r.seen is None]
        if len(loose) == 1 and not loose[0].name and len(waiting) > 1:
            loose = _split_lines(loose[0], len(waiting))
        for p in loose:
            match = next((r for r in waiting if p.name and r.part.name == p.name), None)
            match = match or next((r for r in waiting if not p.name), None)
            if match is not None:
                match.seen = p
                waiting.remove(match)
                if p.call_id:
                    # The id the model was told the result under is the call's id on the
                    # wire; the output named the call otherwise (OpenLLMetry's Responses
                    # spans give a function_call's item id, fc_..., the result its call_id:
                    # opentelemetry-instrumentation-openai 0.62.4 `v1/responses_wrappers.py`).
                    match.part = replace(match.part, call_id=p.call_id)


def _split_lines(result: Part, calls: int) -> list[Part]:
    """One id-less result answering several parallel calls (results rendered as text, one
    message for all, smolagents' `Observation:`): one line per call, in request order, when
    it has as many lines as there are calls; else it stays one result, for the first call
    (the others keep their tool spans' output)."""
    lines = (result.text or "").split("\n")
    if len(lines) != calls:
        return [result]
    return [replace(result, text=text) for text in lines]


def _trailing_results(messages: Sequence[Message] | None) -> list[Part]:
    if not messages:
        return []
    # From the end: the input replays the whole conversation before the last results.
    last_assistant = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), -1
    )
    return [
        p for m in messages[last_assistant + 1 :] for p in m.parts if p.type is PartType.TOOL_RESULT
    ]


# --- executions --------------------------------------------------------------------


def link_executions(
    turns: Sequence[list[Requested]], tools: Sequence[list[Span]], steps: Sequence[Sequence[Span]]
) -> list[list[Span]]:
    """Set `execution` on requested calls; returns each turn's tool spans nobody claimed.

    `tools[i]` are the tool spans assigned to turn `i` (same trace, or by time), `steps[i]`
    its model calls.
    """
    unclaimed = [list(ts) for ts in tools]
    for i, spans in enumerate(tools):
        for span in spans:
            cid = execution_of(span).call_id
            if not cid:
                continue
            candidates = [r for r in turns[i] if r.part.call_id == cid and r.execution is None]
            if not candidates:
                candidates = [
                    r for t in turns for r in t if r.part.call_id == cid and r.execution is None
                ]
            if candidates:
                candidates[0].execution = span
                unclaimed[i].remove(span)
    known = _model_ids(turns)
    for i, requested in enumerate(turns):
        _link_by_content(requested, unclaimed[i], known, with_arguments=True)
        _link_by_content(requested, unclaimed[i], known, with_arguments=False)
        _link_by_order(requested, unclaimed[i])
        _link_bare(requested, unclaimed[i], steps[i])
    return unclaimed


def _model_ids(turns: Sequence[list[Requested]]) -> set[str]:
    """The call ids the model gave or was told in the conversation: of the calls it asked
    for and of the results it saw."""
    ids = {r.part.call_id for t in turns for r in t if r.part.call_id}
    return ids | {r.seen.call_id for t in turns for r in t if r.seen and r.seen.call_id}


def _own_id(span: Span, known: set[str]) -> str | None:
    """An execution's call id when it is one the model gave or was told (`_model_ids`);
    else None: an id the instrumentation made up where it found none (OpenLIT's smolagents
    instrumentation gives each tool span a fresh uuid4 when the tool's arguments name no
    id: openlit `instrumentation/smolagents/utils.py`, `_resolve_tool_call_id`) names no
    call the model asked for, so it says nothing against joining one by content. Executions
    joined by id have been joined before this is asked."""
    cid = execution_of(span).call_id
    return cid if cid in known else None


def step_of(span: Span, steps: Sequence[Span]) -> int:
    """The last model call that started before a tool span (the first when none did)."""
    return max(
        (i for i, s in enumerate(steps) if s.start_unix_nano <= span.start_unix_nano), default=0
    )


def _link_bare(requested: list[Requested], spans: list[Span], steps: Sequence[Span]) -> None:
    """Last: an execution that says nothing but a name of its own (no call id, arguments,
    result or error), alone in its step beside the one call of that step no execution
    answered, is that call's. OpenInference's OpenAI Agents processor reports a handoff as
    a bare TOOL span named `handoff to <agent>` while the model asked for
    `transfer_to_<agent>` (openinference-instrumentation-openai-agents, `_processor.py`)."""
    bare: dict[int, list[Span]] = defaultdict(list)
    for s in spans:
        ex = execution_of(s)
        if not (ex.call_id or ex.arguments or ex.result or ex.error):
            bare[step_of(s, steps)].append(s)
    for step, found in bare.items():
        waiting = [r for r in requested if r.step == step and r.execution is None]
        if len(found) == 1 and len(waiting) == 1:
            waiting[0].execution = found[0]
            spans.remove(found[0])


def _link_by_order(requested: list[Requested], spans: list[Span]) -> None:
    """What is left, by tool name in order: an execution without a call id, of a call
    that had no other execution (arguments recorded in a form no unwrapping reads). An id
    the instrumentation made up (`_own_id`) still keeps it out: by name alone, nothing
    else would say it is the call's."""
    waiting: dict[str | None, deque[Span]] = defaultdict(deque)
    for s in spans:
        ex = execution_of(s)
        if not ex.call_id:
            waiting[ex.name].append(s)
    taken: set[int] = set()
    for r in requested:
        queue = waiting.get(r.part.name)
        if r.execution is None and queue:
            r.execution = queue.popleft()
            taken.add(id(r.execution))
    if taken:
        spans[:] = [s for s in spans if id(s) not in taken]


def _link_by_content(
    requested: list[Requested], spans: list[Span], known: set[str], *, with_arguments: bool
) -> None:
    for r in requested:
        if r.execution is not None:
            continue
        for span in spans:
            ex = execution_of(span)
            if ex.name != r.part.name:
                continue
            if (own := _own_id(span, known)) and r.part.call_id and own != r.part.call_id:
                continue
            if with_arguments and not _same_arguments(ex.arguments, r.part.arguments):
                continue
            if not with_arguments and ex.arguments is not None and r.part.arguments is not None:
                continue
            r.execution = span
            spans.remove(span)
            break


def _same_arguments(recorded: str | None, asked: str | None) -> bool:
    """Canonically equal; or the execution recorded the one string argument bare, as
    OpenInference's LangChain.js instrumentation records any input whose only value is a
    string (Arize-ai/openinference `js/packages/openinference-instrumentation-langchain`
    `utils.ts` `formatIO`)."""
    if canonical(recorded) == canonical(asked):
        return True
    if recorded is None or asked is None:
        return False
    try:
        bare, whole = orjson.loads(recorded), orjson.loads(asked)
    except orjson.JSONDecodeError:
        return False
    return isinstance(bare, str) and isinstance(whole, dict) and list(whole.values()) == [bare]


# --- the Call records ----------------------------------------------------------------


def build_calls(
    requested: Sequence[Requested],
    unclaimed: Sequence[Span],
    steps: Sequence[Span],
    *,
    answered: bool = False,
) -> list[tuple[int, int, Call]]:
    """(step, order, Call) for requested calls and unclaimed executions. `answered`: with
    no model call span, the run's agent span gave its answer (the run went on after its
    calls: `_failure_text`)."""
    last = len(steps) - 1

    def went_on(step: int) -> bool:
        return step < last or (not steps and answered)

    out: list[tuple[int, int, Call]] = []
    for n, r in enumerate(requested):
        out.append((r.step, n, _call(r.part, r.execution, r.seen, r.step, went_on(r.step))))
    for n, span in enumerate(unclaimed):
        step = step_of(span, steps)
        out.append((step, len(requested) + n, _call(None, span, None, step, went_on(step))))
    return sorted(out, key=lambda t: (t[0], t[1]))


def _call(
    part: Part | None, span: Span | None, seen: Part | None, step: int, went_on: bool
) -> Call:
    ex = execution_of(span) if span is not None else None
    span_error = None
    if span is not None and ex is not None:
        span_error = ex.error or (span.error if span.status == "error" else None)
    result = seen.text if seen is not None else (ex.result if ex is not None else None)
    failed = (
        span_error is not None
        or (span is not None and span.status == "error")
        or (seen is not None and seen.is_error)
    )
    if result is None and went_on and span is not None and span_error is not None:
        result = _failure_text(span, span_error)
    error = span_error or (seen.text if seen is not None and seen.is_error else None)
    if failed:
        status = "error"
    elif span is not None or seen is not None:
        status = "ok"
    else:
        status = "no_result"
    name = part.name if part is not None and part.name else (ex.name if ex else "")
    return Call(
        name=name,
        call_id=(part.call_id if part is not None else None) or (ex.call_id if ex else None),
        arguments=(part.arguments if part is not None else None) or (ex.arguments if ex else None),
        result=result,
        error=error,
        status=status,
        step=step,
        started_at=utc(span.start_unix_nano) if span is not None else None,
        duration_ms=(span.end_unix_nano - span.start_unix_nano) / 1e6 if span is not None else None,
    )


def _failure_text(span: Span, error: str) -> str | None:
    """A failed execution's text standing for the result no model input or output told,
    where the run went on after it (a later model call of the turn, or with no model call
    span the run's answer): the tool span's error, which is then how the failed tool
    returned (the framework told the model the failure in its place; Claude Code and the
    Claude Agent SDK's hooks hand the is_error tool_result's text to the span as its
    error: OpenInference's `end_tool_span_with_error`, Claude Code's `tool.execution`).
    A run that stopped at the failure (the exception escaped, no model call after it)
    told the model nothing: no result. Not a bare `error.type` (`tool_error`, `_OTHER`)
    either: a failure's class names no outcome."""
    return None if error == span.attributes.own.get(A.ERROR_TYPE) else error


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def utc(unix_nano: int) -> datetime:
    """Exact to the microsecond (a float of seconds is not)."""
    return _EPOCH + timedelta(0, 0, unix_nano // 1000)  # positional: keywords cost 2x
