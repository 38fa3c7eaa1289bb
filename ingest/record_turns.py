"""Record-only turns: turns from log records that name no span, keyed by their own ids.

Coding agents' CLIs export their telemetry as OTLP log records, one an event, and by default
no spans: Claude Code without `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA` (its records then carry
no trace id or span id, only `session.id` and `prompt.id`: code.claude.com/docs/en/monitoring-
usage, "Events"). Nothing ties such a record to a span, so it would join none and make no
turn. The records name their turn themselves, though: every event of one prompt carries the
prompt's id, and every prompt of one session the session's.

So at the edge, where a log record is read (`otlp_shared.log_record`), `anchor` gives a
record of a convention that keys its events so (`RecordTurns`), when it names no trace and
no span, ids derived from its own: a trace and a span per prompt (as the CLIs' traced
exports have it), from the session and the prompt. From then on it is an ordinary content
record of that trace: stored with those ids, read back with its prompt's other records
(`SpanStore.read` by trace), so a prompt's records that arrive in later files rebuild its
turn, by the same ids, the same; the session is the conversation id of the spans they tell,
stored with the records (`SpanStore`), so a later prompt ingested apart finds the session.
`decode.decode_spans` then finds records whose span is nowhere, and where those are anchored
records (`anchored`: their ids are the ones `anchor` derives) asks their convention for the
spans the records tell (`RecordTurns.spans`: Claude Code's prompt as its `interaction` span,
each `api_request` as its `llm_request` span, as the CLI exports them with its traces on),
which decode like any other and join the records as their content events. A record that
names a span it did not get from `anchor` is never taken for one: its span may be in the
next file.

A CLI may export spans of its own that name the prompt as its records do, but in no trace of
the prompt's (Gemini CLI's `llm_call` spans: each model call the root of a trace of its own,
its prompt `gen_ai.prompt.name`, its session `gen_ai.conversation.id`, and on it alone the
request's system instructions and tool declarations). `anchor_span` moves such a root span
(`RecordTurns.prompt_spans`) into the prompt's trace, under the prompt's span, at the edge
as `anchor` does the records, so it is stored and read back with them; `record_spans` hands
the prompt's such spans to its convention with its records, and a span the convention tells
in its place (the same span id) replaces it (`decode.decode_spans`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from turnscore.ingest.records import AttrValue, RawLog, RawSpan

__all__ = ["PromptSpans", "RecordTurns", "anchor", "anchor_span", "anchored", "is_twin",
           "record_spans", "span_id_of", "told_span"]  # fmt: skip

SpansOf = Callable[[str, str, Sequence[RawLog], Sequence[RawSpan]], list[RawSpan]]
"""(trace id, prompt span id, the prompt's records in time order, the convention's own spans
`anchor_span` moved under the prompt, in start order) -> the prompt's spans, the first of
them the prompt's own (span id as given), the rest under it; a span with the id of one of
the convention's own spans stands in for it."""


@dataclass(frozen=True, slots=True)
class PromptSpans:
    """A convention's own root spans that name their prompt and session as its records do."""

    names: frozenset[str]
    """Span names."""
    session: tuple[str, ...]
    """Attribute keys naming the session, the first present wins."""
    prompt: tuple[str, ...]
    """Attribute keys naming the prompt within the session."""


@dataclass(frozen=True, slots=True)
class RecordTurns:
    """How one convention's span-less records key their turns."""

    name: str
    events: frozenset[str]
    """The event names of a prompt's records."""
    session: tuple[str, ...]
    """Attribute keys naming the session, the first present wins."""
    prompt: tuple[str, ...]
    """Attribute keys naming the prompt within the session."""
    spans: SpansOf
    rekey: bool = False
    """Key the records so even where they name a span: a CLI whose spans hold no turn
    (Gemini CLI's, a trace per model call, with no content) and whose records name them
    only now and then."""
    prompt_spans: PromptSpans | None = None
    twin: Callable[[RawLog], bool] | None = None
    """Whether an OTel GenAI record is the CLI's copy of one of its own records, read in
    its place: not content (`decode.is_content_log`)."""


def _conventions() -> tuple[RecordTurns, ...]:
    # Imported here: the conventions import the readers' record types, not the reverse.
    from turnscore.ingest.conventions.claude_code import RECORD_TURNS as CLAUDE_CODE
    from turnscore.ingest.conventions.gemini_cli import RECORD_TURNS as GEMINI_CLI

    return (CLAUDE_CODE, GEMINI_CLI)


_BY_EVENT: dict[str, RecordTurns] | None = None


def is_twin(log: RawLog) -> bool:
    """Whether a convention's `RecordTurns.twin` claims `log`."""
    return any(c.twin(log) for c in _conventions() if c.twin is not None)


def _of(event_name: str) -> RecordTurns | None:
    global _BY_EVENT
    if _BY_EVENT is None:
        _BY_EVENT = {e: c for c in _conventions() for e in c.events}
    return _BY_EVENT.get(event_name)


def _key(attributes: Mapping[str, AttrValue], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _digest(size: int, *parts: str) -> str:
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=size).hexdigest()


def _ids(log: RawLog) -> tuple[str, str] | None:
    """The (trace id, span id) `log`'s own keys give it, if its convention keys turns so."""
    turns = _of(log.event_name)
    if turns is None:
        return None
    return _prompt_ids(turns.name, _key(log.attributes, turns.session),
                       _key(log.attributes, turns.prompt))


def _prompt_ids(name: str, session: str | None, prompt: str | None) -> tuple[str, str] | None:
    """The (trace id, span id) of `prompt` of `session` in convention `name`."""
    if session is None or prompt is None:
        return None
    # A trace per prompt, as the CLIs' traced exports have it (its session the
    # conversation id of the spans it tells).
    return (_digest(16, "record-turn", name, session, prompt),
            _digest(8, "record-turn", name, session, prompt))  # fmt: skip


_BY_SPAN: dict[str, RecordTurns] | None = None


def _of_span(name: str) -> RecordTurns | None:
    global _BY_SPAN
    if _BY_SPAN is None:
        _BY_SPAN = {n: c for c in _conventions() if c.prompt_spans for n in c.prompt_spans.names}
    return _BY_SPAN.get(name)


def anchor_span(span: RawSpan) -> RawSpan:
    """`span` in its prompt's trace, under the prompt's span, where it is a root span of a
    convention whose own spans name their prompt (`RecordTurns.prompt_spans`); else `span`
    as it is."""
    turns = _of_span(span.name) if span.parent_span_id is None else None
    own = turns.prompt_spans if turns is not None else None
    if turns is None or own is None:
        return span
    ids = _prompt_ids(turns.name, _key(span.attributes, own.session),
                      _key(span.attributes, own.prompt))
    return span if ids is None else replace(span, trace_id=ids[0], parent_span_id=ids[1])


def anchor(log: RawLog) -> RawLog:
    """`log` with the trace and span its session and prompt give it, where it names
    neither and its convention keys its turns so; else `log` as it is."""
    turns = _of(log.event_name)
    if turns is None or ((log.trace_id or log.span_id) and not turns.rekey):
        return log
    ids = _ids(log)
    return log if ids is None else replace(log, trace_id=ids[0], span_id=ids[1])


def anchored(log: RawLog) -> bool:
    """Whether `log`'s ids are the ones `anchor` gives it (never a real span's: those are
    random, these a hash of the record's session and prompt)."""
    ids = _ids(log)
    return ids is not None and (log.trace_id, log.span_id) == ids


def span_id_of(*parts: str) -> str:
    """A span id derived from `parts`: the same on every read of the same records."""
    return _digest(8, "record-turn-span", *parts)


def record_spans(
    trace_id: str, span_id: str, logs: Sequence[RawLog], spans: Sequence[RawSpan] = (),
) -> list[RawSpan]:
    """The spans the anchored records of one prompt tell (`RecordTurns.spans`), given the
    prompt's spans among `spans` (those `anchor_span` moved under it); none when none of
    `logs` is anchored there."""
    own = sorted((lg for lg in logs if anchored(lg)), key=lambda lg: lg.time_unix_nano)
    turns = _of(own[0].event_name) if own else None
    if turns is None:
        return []
    moved = sorted((s for s in spans if s.trace_id == trace_id and s.parent_span_id == span_id
                    and _of_span(s.name) is turns), key=lambda s: s.start_unix_nano)
    return turns.spans(trace_id, span_id, own, moved)


_INTERNAL = 1  # OTLP SpanKind INTERNAL, as the CLIs' own spans are


def told_span(
    trace_id: str, span_id: str, parent: str | None, name: str, start: int, end: int,
    record: RawLog, attributes: dict[str, AttrValue],
) -> RawSpan:
    """A span a prompt's records tell (`RecordTurns.spans`): internal, its status unset, in
    the resource and at the place of the record that tells it."""
    return RawSpan(
        trace_id=trace_id, span_id=span_id, parent_span_id=parent, name=name,
        kind=_INTERNAL, start_unix_nano=start, end_unix_nano=end, status_code=0,
        status_message="", attributes=attributes, resource=record.resource,
        source=record.source, position=record.position,
    )  # fmt: skip
