"""Decode raw OTLP spans (plus the log records and span events carrying their content) to `Span`s.

Per span: join the GenAI log records whose trace id and span id match it, detect which
conventions its attributes and events speak (never from span kind, provider name, finish
reason wording or non-standard operation names alone), run each detected decoder, and
merge their answers field by field, the more specific convention first
(`conventions.CONVENTIONS`): framework and stack forms (Pydantic AI, Logfire, MLflow, ADK,
Strands, Vercel AI SDK, Langfuse, Haystack, LangSmith) > OTel GenAI > OpenInference >
OpenLLMetry. Model, tokens, conversation and agent fall back to the generic keys of every
convention. Decoding one span is a pure function (`decode_span`). A model-call span carrying
several inference records (`gen_ai.client.inference.operation.details`, one per inference)
reports that many model calls, each its own `Span` (`per_inference`: an instrumentation that
wrote every call of a run onto one span).

A span whose content is malformed still yields a `Span` with what could be read, plus an
`InputError` naming the span and each problem. Log records with GenAI content that match
no span are reported too: their content would otherwise vanish silently.

(Over ~400 lines: a span's decode and its split into inferences (`per_inference`) share the
convention loop and the readers of usage and model; the split would import them back.)
"""

from __future__ import annotations

import gc
import hashlib
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import orjson
from msgspec.structs import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions import CONVENTIONS as CONVENTIONS
from turnscore.ingest.conventions.base import ContentEvent, Convention, Decoded, SpanView
from turnscore.ingest.conventions.values import as_int, as_str, first_str, jsonable, try_json
from turnscore.ingest.detached import detached_response
from turnscore.ingest.model import (
    Message,
    PartType,
    Span,
    SpanAttributes,
    SpanKind,
    ToolDef,
    ToolExecution,
)
from turnscore.ingest.record_turns import anchored, is_twin, record_spans
from turnscore.ingest.records import Attributes, AttrValue, InputError, RawLog, RawSpan

logger = logging.getLogger(__name__)

CONTENT_KEYS: tuple[str, ...] = tuple(
    dict.fromkeys(k for c in CONVENTIONS for k in c.content_keys)
)
"""Every convention's content keys (`Convention.content_keys`), once each."""

def _bits(found: Callable[[Convention], Iterable[str]]) -> dict[str, int]:
    """Each marker (key, prefix or event name) to the conventions it marks, one bit each."""
    bits: dict[str, int] = defaultdict(int)
    for i, convention in enumerate(CONVENTIONS):
        for marker in found(convention):
            bits[marker] |= 1 << i
    return dict(bits)


_BY_KEY = _bits(lambda c: c.markers)
_BY_PREFIX = _bits(lambda c: c.prefixes)
_BY_EVENT = _bits(lambda c: c.events)
_KEYS = frozenset(_BY_KEY)
_PREFIXES = tuple(_BY_PREFIX)


def detected(view: SpanView) -> list[Convention]:
    """The conventions `view` speaks, in merge precedence: its keys and event names are
    looked at once for all of them (`Convention.markers`, `prefixes`, `events`)."""
    found = 0
    for key in _KEYS.intersection(view.attributes):
        found |= _BY_KEY[key]
    for key in view.attributes:
        if key.startswith(_PREFIXES):  # flattened keys: rare, and then few prefixes
            for prefix, bit in _BY_PREFIX.items():
                if key.startswith(prefix):
                    found |= bit
    for event in view.events:
        found |= _BY_EVENT.get(event.name, 0)
    return [
        c for i, c in enumerate(CONVENTIONS)
        if found >> i & 1 and (c.accepts is None or c.accepts(view))
    ]  # fmt: skip


_STATUS = {0: "unset", 1: "ok", 2: "error"}
_MODEL_KEYS = (A.GEN_AI_RESPONSE_MODEL, A.GEN_AI_REQUEST_MODEL, A.OI_MODEL_NAME)
_INPUT_TOKEN_KEYS = (A.GEN_AI_USAGE_INPUT_TOKENS, A.GEN_AI_USAGE_PROMPT_TOKENS, A.OI_TOKEN_PROMPT)
_OUTPUT_TOKEN_KEYS = (
    A.GEN_AI_USAGE_OUTPUT_TOKENS, A.GEN_AI_USAGE_COMPLETION_TOKENS, A.OI_TOKEN_COMPLETION,
)


def trace_order(spans: Iterable[RawSpan]) -> list[RawSpan]:
    """Spans by trace, then start: the order `decode_spans` callers pass them in."""
    return sorted(spans, key=lambda s: (s.trace_id, s.start_unix_nano, s.span_id))


def is_content_log(log: RawLog) -> bool:
    """A log record that carries GenAI content (OTel GenAI events), or an event a convention
    reads as its content that names its span (Claude Code's records carry the interaction's
    id when its traces are on), or a record of a turn told by records alone
    (`record_turns.anchored`: Claude Code's with its traces off). Not a twin of a record
    of a CLI's own, which ingest reads in its place (`record_turns.is_twin`)."""
    named = log.event_name in _BY_EVENT and bool(log.span_id)
    if log.event_name.startswith("gen_ai."):
        return not is_twin(log)
    return named or anchored(log)


def decode_spans(
    spans: Sequence[RawSpan],
    logs: Sequence[RawLog] = (),
    *,
    case_id_attribute: str | None = None,
) -> tuple[list[Span], list[InputError]]:
    """Decode every span, joining content logs by (trace id, span id); never drops a span."""
    by_span: dict[tuple[str, str], list[RawLog]] = defaultdict(list)
    errors: list[InputError] = []
    for log in logs:
        if not is_content_log(log):
            continue
        if not log.trace_id or not log.span_id:
            rid = detached_response(log)
            errors.append(_log_error(log, "GenAI log record carries no trace id and span id" + (
                f", and no span reported its response {rid!r} yet: it joins the span that "
                "does when it arrives" if rid else "")))
            continue
        by_span[(log.trace_id, log.span_id)].append(log)
    known = {(raw.trace_id, raw.span_id) for raw in spans}
    # A turn its records alone tell: decoded as the spans they tell, which stand in for the
    # spans of the CLI's own with their ids (`record_turns.anchor_span`).
    told_by: list[tuple[list[RawSpan], list[RawLog]]] = []
    children: dict[tuple[str, str], list[RawSpan]] | None = None  # built once, if needed
    for (trace_id, span_id), orphans in by_span.items():
        if (trace_id, span_id) in known:
            continue
        if children is None:
            children = defaultdict(list)
            for raw in spans:
                if raw.parent_span_id:
                    children[(raw.trace_id, raw.parent_span_id)].append(raw)
        told = record_spans(trace_id, span_id, orphans, children.get((trace_id, span_id), ()))
        if told:
            told_by.append((told, orphans))
        else:
            for log in orphans:
                errors.append(_log_error(
                    log, f"GenAI log record {log.event_name!r} matches no span "
                    f"(trace {trace_id}, span {span_id}); ingest its traces with it"))
    replaced = {(s.trace_id, s.span_id) for told, _ in told_by for s in told}
    decoded: list[Span] = []
    with collector_paused():
        for raw in spans:
            key = (raw.trace_id, raw.span_id)
            if key in replaced:
                continue
            joined = by_span.get(key, ())
            calls, error = decode_calls(raw, joined, case_id_attribute=case_id_attribute)
            decoded.extend(calls)
            if error is not None:
                errors.append(error)
    for told, orphans in told_by:
        decoded.extend(_told(told, orphans, errors, case_id_attribute))
    return decoded, errors


def _told(
    spans: Sequence[RawSpan], logs: Sequence[RawLog], errors: list[InputError],
    case_id_attribute: str | None,
) -> list[Span]:
    """The spans a prompt's records tell (`record_turns.record_spans`) decoded, the records
    the content of the first (the prompt's own span)."""
    out: list[Span] = []
    for i, raw in enumerate(spans):
        calls, error = decode_calls(raw, logs if i == 0 else (),
                                    case_id_attribute=case_id_attribute)
        out.extend(calls)
        if error is not None:
            errors.append(error)
    return out


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, as it was after.

    Decoding allocates a few dozen containers per span (parsed JSON, parts, messages,
    records) and keeps the records: the collector's passes over them were a quarter of
    decode time, and found nothing, since nothing decoding builds refers back to itself.
    Assembly (`assemble_turns`) is the same: its passes over the batch's live records
    were 0.3 of its time, and a pass after it finds no cyclic garbage; so are the join
    keys (`links.join_keys`, `span_links`), which grow the history prefix tree.
    Reference counting still frees everything; cycles made meanwhile (an exception's
    traceback) wait for the next pass after the block.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _log_error(log: RawLog, message: str) -> InputError:
    return InputError(log.source, log.position, message, span_id=log.span_id,
                      trace_id=log.trace_id)


def content_events(raw: RawSpan, logs: Sequence[RawLog] = ()) -> tuple[ContentEvent, ...]:
    """Span events and joined log records, in time order (span events first on ties),
    exact duplicates dropped."""
    if not raw.events and not logs:
        return ()
    events = [(ContentEvent(e.name, e.time_unix_nano, e.attributes), 0) for e in raw.events]
    for log in logs:
        fields: dict[str, AttrValue] = dict(log.attributes)
        if isinstance(log.body, dict):
            fields.update(log.body)
        elif log.body is not None:
            fields.setdefault("content", log.body)
        events.append((ContentEvent(log.event_name, log.time_unix_nano, fields), log.occurrence))
    # The same record exported twice (retried batches) must not repeat a message; records
    # alike in one request (`RawLog.occurrence`) are each a message.
    seen: set[tuple[tuple[str, int, bytes], int]] = set()
    unique = []
    for event, occurrence in events:
        key = (_event_key(event), occurrence)
        if key not in seen:
            seen.add(key)
            unique.append(event)
    return _output_items_joined(sorted(unique, key=lambda e: e.time_unix_nano))


def _output_item(event: ContentEvent) -> list[AttrValue] | None:
    """The output messages of an operation-details record that says nothing else of its
    response (no input, response id, finish reasons or usage), as a list; else None."""
    if event.name != A.EV_OPERATION_DETAILS or A.GEN_AI_INPUT_MESSAGES in event.fields:
        return None
    if any(k in event.fields for k in _ITEM_RESPONSE_KEYS):
        return None
    value = event.fields.get(A.GEN_AI_OUTPUT_MESSAGES)
    if isinstance(value, str):
        value = try_json(value)[1]
    return value if isinstance(value, list) else None


def _output_items_joined(events: list[ContentEvent]) -> tuple[ContentEvent, ...]:
    """Consecutive output-only operation-details records as the one record of their
    inference's output. The OTel JS OpenAI instrumentation reads a streamed Responses call
    item by item and emits a record per `response.output_item.done` event, each holding that
    one item as its output messages, after the record of the call's input
    (`@opentelemetry/instrumentation-openai` 0.22.0 `src/instrumentation.ts`,
    `_onResponsesStreamIterator`): two tool calls of one response are two records, read
    alone as two inferences (`per_inference`) or the last one overlaying the first
    (`otel_genai.content_attributes`). Joined, the record holds every item, at the time of
    the last."""
    out: list[ContentEvent] = []
    joined: list[AttrValue] | None = None
    for event in events:
        items = _output_item(event)
        if items is not None and joined is not None:
            joined = joined + items
            fields = {**out[-1].fields, A.GEN_AI_OUTPUT_MESSAGES: joined}
            out[-1] = ContentEvent(event.name, event.time_unix_nano, fields)
            continue
        joined = items
        out.append(event)
    return tuple(out)


def _event_key(event: ContentEvent) -> tuple[str, int, bytes]:
    fields = {k: jsonable(v) for k, v in event.fields.items()}
    return event.name, event.time_unix_nano, orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)


def decode_span(
    raw: RawSpan, logs: Sequence[RawLog] = (), *, case_id_attribute: str | None = None
) -> tuple[Span, InputError | None]:
    """One span to `Span`, plus an InputError listing whatever was malformed in it."""
    span, _, problems = _decode(raw, logs, case_id_attribute)
    return span, _problems(raw, problems)


def decode_calls(
    raw: RawSpan, logs: Sequence[RawLog] = (), *, case_id_attribute: str | None = None
) -> tuple[list[Span], InputError | None]:
    """`decode_span`, as the model calls the span reports (`per_inference`): the span
    alone, unless its inference records say it stands for several."""
    span, view, problems = _decode(raw, logs, case_id_attribute)
    calls = per_inference(span, view.events, problems)
    return calls, _problems(raw, problems)


def _decode(
    raw: RawSpan, logs: Sequence[RawLog], case_id_attribute: str | None
) -> tuple[Span, SpanView, list[str]]:
    view = SpanView(raw.span_id, raw.name, raw.attributes, content_events(raw, logs))
    problems: list[str] = []
    merged, names = _decode_view(view, problems)
    span = build_span(
        raw, merged or Decoded(), "+".join(names) or "none", case_id_attribute=case_id_attribute
    )
    return span, view, problems


def _problems(raw: RawSpan, problems: list[str]) -> InputError | None:
    """One InputError naming the span and each problem found in it, or None."""
    if not problems:
        return None
    message = f"span {raw.span_id} ({raw.name!r}): " + "; ".join(problems)
    return InputError(raw.source, raw.position or f"span {raw.span_id}", message,
                      span_id=raw.span_id, trace_id=raw.trace_id)


def _decode_view(view: SpanView, problems: list[str]) -> tuple[Decoded | None, list[str]]:
    """What every convention `view` speaks decodes, merged by precedence, and their names."""
    merged: Decoded | None = None
    names: list[str] = []
    for convention in detected(view):
        names.append(convention.name)
        try:
            decoded = convention.decode(view, problems)
        except Exception as exc:  # a decoder bug must not lose the span (STYLE 10)
            logger.exception("decoder %s failed on span %s", convention.name, view.span_id)
            problems.append(f"{convention.name} decoder failed: {type(exc).__name__}: {exc}")
            continue
        merged = decoded if merged is None else merged.fill(decoded)
    return merged, names


# --- one span, several inferences --------------------------------------------------------

_RESPONSE_KEYS = (
    A.GEN_AI_OUTPUT_MESSAGES, A.GEN_AI_RESPONSE_FINISH_REASONS, A.GEN_AI_RESPONSE_ID,
    *_INPUT_TOKEN_KEYS, *_OUTPUT_TOKEN_KEYS,
)  # fmt: skip
_ITEM_RESPONSE_KEYS = frozenset(_RESPONSE_KEYS) - {A.GEN_AI_OUTPUT_MESSAGES}
"""What makes an output record more than one item of its inference's output."""


def inference_records(events: Iterable[ContentEvent]) -> list[ContentEvent]:
    """The operation-details records that each report one inference: those carrying its
    response (output messages, finish reasons, response id or usage). Strands sends one
    inference's input and output as separate records of one attribute each
    (strands-agents/sdk-python `telemetry/tracer.py`): only one of them is a response.
    Records saying the same (their time aside) are one."""
    records = [e for e in events if e.name == A.EV_OPERATION_DETAILS
               and any(k in e.fields for k in _RESPONSE_KEYS)]  # fmt: skip
    if len(records) < 2:  # the usual case: no record to compare (and serialize) at all
        return records
    found: dict[bytes, ContentEvent] = {}
    for e in records:
        # One record sent both as a span event and as a log record is one inference.
        found.setdefault(_event_key(e)[2], e)
    return list(found.values())


def per_inference(span: Span, events: Sequence[ContentEvent], problems: list[str]) -> list[Span]:
    """The model calls a model-call span reports: one per inference record it carries
    (`inference_records`, OTel GenAI: one `gen_ai.client.inference.operation.details` per
    inference), itself alone when it carries one or none.

    A span with several is an instrumentation writing each call of a run onto one span:
    OpenInference's google-adk instrumentation (1.0.5, `_wrapper.py`) on ADK 2.x sets each
    `generate_content` call's attributes on ADK's `invoke_agent` span, while ADK
    (`telemetry/tracing.py`) emits one record per call on the current span. The span's
    attributes are then the last call's (each call overwrote them), except keys the last
    call did not write. Each call lasts from the record before its own (the span's start,
    for the first) to its own record (the span's end, for the last). A call takes from its
    record what it says (messages, usage, response id, model, tools); the last call, what
    its record lacks, from the span, less output tool calls its input already answers
    (`_unanswered`). What no record says of an earlier call, the last call's input replays:
    the earlier calls' outputs are its last assistant messages since its newest user
    request, one per call, each sent after the input before it. The span stays the first
    call, the others are calls beside it (same parent, ids derived from the span's, their
    records' attributes): the keys stored with the span to find its trace later
    (`links.span_links`: the first call's input, its history) are then still a call's.
    """
    if span.kind is not SpanKind.LLM:
        return [span]
    records = inference_records(events)
    if len(records) < 2:
        return [span]
    own = [_record_decoded(span, r, problems) for r in records]
    last = len(records) - 1
    mine = own[last]
    inputs = mine.input_messages or span.input_messages
    replayed = _replayed(inputs, last)
    ends = [min(max(r.time_unix_nano, span.start_unix_nano), span.end_unix_nano)
            for r in records[:-1]]  # fmt: skip
    starts = [span.start_unix_nano, *ends]
    calls = []
    for k in range(last):
        said = own[k]
        sent, answer = replayed[k] if replayed else (None, None)
        calls.append(replace(
            span,
            start_unix_nano=starts[k],
            end_unix_nano=ends[k],
            # A later call followed: this one did not fail the run.
            status="ok" if span.status == "error" else span.status,
            error=None,
            input_messages=said.input_messages or sent,
            output_messages=said.output_messages or answer,
            system_instructions=said.system_instructions or span.system_instructions,
            tool_definitions=_tools(said, span),
            tool_execution=None,
            input_tokens=said.input_tokens,
            output_tokens=said.output_tokens,
            model=said.model or span.model,
            response_id=said.response_id,
        ))  # fmt: skip
    calls.append(replace(
        span,
        start_unix_nano=starts[last],
        input_messages=inputs,
        output_messages=mine.output_messages or _unanswered(span),
        system_instructions=mine.system_instructions or span.system_instructions,
        tool_definitions=_tools(mine, span),
        input_tokens=_or(mine.input_tokens, span.input_tokens),
        output_tokens=_or(mine.output_tokens, span.output_tokens),
        model=mine.model or span.model,
        response_id=mine.response_id or span.response_id,
    ))  # fmt: skip
    return [calls[0]] + [
        replace(c, span_id=_inference_id(span, k),
                attributes=SpanAttributes(records[k].fields, span.attributes.resource))
        for k, c in enumerate(calls) if k
    ]  # fmt: skip


def _record_decoded(span: Span, record: ContentEvent, problems: list[str]) -> Decoded:
    """What one inference record says of its call, read as a span carrying only it."""
    merged, _ = _decode_view(SpanView(span.span_id, span.name, {}, (record,)), problems)
    fields = record.fields
    said = merged or Decoded()
    return replace(
        said,
        input_tokens=_first_int(said.input_tokens, fields, _INPUT_TOKEN_KEYS),
        output_tokens=_first_int(said.output_tokens, fields, _OUTPUT_TOKEN_KEYS),
        model=said.model or first_str(fields, _MODEL_KEYS),
        response_id=said.response_id or as_str(fields.get(A.GEN_AI_RESPONSE_ID)),
    )


def _or(first: int | None, second: int | None) -> int | None:
    return first if first is not None else second


def _tools(said: Decoded, span: Span) -> tuple[ToolDef, ...] | None:
    """The record's tool definitions, their missing parts (ADK's records drop the
    schemas) from the span's; else the span's."""
    if said.tool_definitions is None:
        return span.tool_definitions
    if span.tool_definitions is None:
        return said.tool_definitions
    return said.fill(Decoded(tool_definitions=span.tool_definitions)).tool_definitions


def _unanswered(span: Span) -> tuple[Message, ...] | None:
    """The span's output less the tool calls its own input already holds a result of:
    keys an earlier call wrote and the last did not overwrite (a call answered before
    the model was called cannot be one it requests)."""
    answered = {p.call_id for m in span.input_messages or () for p in m.parts
                if p.type is PartType.TOOL_RESULT and p.call_id}  # fmt: skip
    if not answered or span.output_messages is None:
        return span.output_messages
    kept = []
    for m in span.output_messages:
        parts = tuple(p for p in m.parts
                      if not (p.type is PartType.TOOL_CALL and p.call_id in answered))
        if parts:
            kept.append(m if len(parts) == len(m.parts) else replace(m, parts=parts))
    return tuple(kept)


def _replayed(
    inputs: tuple[Message, ...] | None, count: int
) -> list[tuple[tuple[Message, ...], tuple[Message, ...]]] | None:
    """(input, output) of each of the `count` calls before the one `inputs` were sent
    to: its last `count` assistant messages since its newest genuine user message, each
    the output of the call sent what precedes it; None when there are not that many."""
    if not inputs:
        return None
    since = max((i for i, m in enumerate(inputs) if m.is_genuine_user), default=-1)
    said = [i for i in range(since + 1, len(inputs)) if inputs[i].role == "assistant"]
    if len(said) < count:
        return None
    return [(inputs[:i], (inputs[i],)) for i in said[len(said) - count:]]


def _inference_id(span: Span, index: int) -> str:
    """A span id for the span's `index`th inference: the same on every decode of it."""
    return hashlib.blake2b(f"{span.span_id}/{index}".encode(), digest_size=8).hexdigest()


def build_span(
    raw: RawSpan,
    merged: Decoded,
    convention: str,
    *,
    case_id_attribute: str | None,
) -> Span:
    """The `Span` of a raw span and what its conventions decoded (`merged`): fields they
    left unset fall back to the generic keys every convention shares."""
    status, error = _status(raw, merged.error)
    tool = merged.tool_execution
    if tool is not None and tool.error is None and error is not None:
        tool = ToolExecution(tool.name, tool.call_id, tool.arguments, tool.result, error)
    return Span(
        trace_id=raw.trace_id,
        span_id=raw.span_id,
        parent_span_id=raw.parent_span_id or None,
        name=raw.name,
        kind=merged.kind or (SpanKind.TOOL if tool is not None else SpanKind.OTHER),
        start_unix_nano=raw.start_unix_nano,
        # An end before the start (reported by the readers) would give a negative
        # duration: the span is taken to end where it starts.
        end_unix_nano=max(raw.end_unix_nano, raw.start_unix_nano),
        status=status,
        error=error,
        convention=convention,
        service_name=as_str(raw.resource.get(A.SERVICE_NAME)),
        agent_name=merged.agent_name or as_str(raw.attributes.get(A.GEN_AI_AGENT_NAME)),
        model=merged.model or first_str(raw.attributes, _MODEL_KEYS),
        conversation_id=merged.conversation_id or conversation_id(raw.attributes),
        case_id=as_str(raw.attributes.get(case_id_attribute)) if case_id_attribute else None,
        input_messages=merged.input_messages,
        output_messages=merged.output_messages,
        system_instructions=merged.system_instructions,
        tool_definitions=merged.tool_definitions,
        tool_execution=tool,
        **_usage(merged, raw.attributes),
        response_id=as_str(raw.attributes.get(A.GEN_AI_RESPONSE_ID)) or merged.response_id,
        continues=_continues(raw),
        attributes=SpanAttributes(raw.attributes, raw.resource),
        source=raw.source,
    )


def _usage(merged: Decoded, attributes: Attributes) -> dict[str, int | None]:
    """The call's token counts; none where every count is zero: a model call reads at least
    one token, so zeros are counts not taken (OpenInference's OpenLLMetry span processor
    writes `llm.token_count.* = 0` for each count the span lacks: `_span_processor.py`)."""
    said = _first_int(merged.input_tokens, attributes, _INPUT_TOKEN_KEYS)
    wrote = _first_int(merged.output_tokens, attributes, _OUTPUT_TOKEN_KEYS)
    if not said and not wrote:
        said = wrote = None
    return {"input_tokens": said, "output_tokens": wrote}


_MESSAGING_KINDS = frozenset({4, 5})  # OTLP SpanKind PRODUCER, CONSUMER
_MESSAGING_KEYS = (A.MESSAGING_OPERATION, A.MESSAGING_OPERATION_TYPE)


def _continues(raw: RawSpan) -> str | None:
    """The trace a root span of an in-process agent runtime's message links to, if its
    links name one other trace.

    Agent runtimes that pass messages between agents start a trace per message and join
    it to the sender's only by a span link, as the OTel messaging conventions have a
    consumer's span link to the producer's: AutoGen core's runtimes (autogen-core
    `_telemetry/_tracing.py`, `TraceHelper.trace_block`: `publish` / `process` spans, kind
    PRODUCER or CONSUMER, `messaging.operation`, linked to the `create` span of the sending
    agent's run), and Semantic Kernel's in-process runtime built on it. Such a runtime
    names no `messaging.system`, which the conventions require of a broker's spans: a
    consumer of Kafka, SQS or Celery starts a job of its own, not the next step of the
    producer's turn. Other links say less (OpenLIT links every LangGraph or CrewAI run to
    the span that created the agent, which every run of that agent shares), and a batch
    that links many traces continues none of them."""
    if raw.parent_span_id or not raw.links or A.MESSAGING_SYSTEM in raw.attributes:
        return None
    if raw.kind not in _MESSAGING_KINDS and not any(k in raw.attributes for k in _MESSAGING_KEYS):
        return None
    others = {link.trace_id for link in raw.links if link.trace_id != raw.trace_id}
    return others.pop() if len(others) == 1 else None


def conversation_id(attributes: Mapping[str, AttrValue]) -> str | None:
    """A span's conversation id from the keys every convention shares (a convention's
    decoder may know its own, which comes first)."""
    return as_str(attributes.get(A.GEN_AI_CONVERSATION_ID)) or as_str(
        attributes.get(A.OI_SESSION_ID)
    )


def _status(raw: RawSpan, decoded_error: str | None) -> tuple[str, str | None]:
    """Status and error. An unset status with `error.type`, or a failure the convention
    reports itself (Strands `gen_ai.tool.status`), is an error too; an explicit OK wins
    over `error.type` but not over a decoder-reported failure."""
    status = _STATUS.get(raw.status_code, "unset")
    if status == "unset" and A.ERROR_TYPE in raw.attributes:
        status = "error"
    if status == "error" and decoded_error is None and _control_flow(raw):
        return "unset", None
    if decoded_error is not None:
        status = "error"
    if status != "error":
        return status, None
    return status, _error(raw) or decoded_error


_CONTROL_FLOW = frozenset({
    "langgraph.errors.ParentCommand", "langgraph.errors.GraphInterrupt",
    "langgraph.errors.NodeInterrupt", "langgraph.errors.GraphBubbleUp",
})  # fmt: skip
"""Exceptions a framework raises to move on, not because something failed: LangGraph's
`GraphBubbleUp` family (a handoff's `Command(graph=PARENT)` leaving a subgraph, an
interrupt pausing for a human). Instrumentations record them as any exception (OpenLLMetry
ends the span ERROR); the run carries on, or pauses without an answer (`incomplete`)."""


def _control_flow(raw: RawSpan) -> bool:
    """The span's error is only a framework's control-flow exception (`_CONTROL_FLOW`)."""
    kinds = {as_str(e.attributes.get(A.EXCEPTION_TYPE)) for e in raw.events
             if e.name == A.EXCEPTION_EVENT}  # fmt: skip
    return bool(kinds) and kinds <= _CONTROL_FLOW


def _error(raw: RawSpan) -> str | None:
    """Status message, else the exception event's type and message, else `error.type`."""
    if raw.status_message:
        return raw.status_message
    for event in raw.events:
        if event.name == A.EXCEPTION_EVENT:
            kind = as_str(event.attributes.get(A.EXCEPTION_TYPE)) or ""
            text = as_str(event.attributes.get(A.EXCEPTION_MESSAGE)) or ""
            joined = ": ".join(p for p in (kind, text) if p)
            if joined:
                return joined
    return as_str(raw.attributes.get(A.ERROR_TYPE))


def _first_int(preferred: int | None, attributes: Attributes, keys: Sequence[str]) -> int | None:
    if preferred is not None:
        return preferred
    for key in keys:
        if key in attributes and (number := as_int(attributes[key])) is not None:
            return number
    return None
