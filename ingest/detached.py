"""Content records that name no span, or the wrong one, joined to the span that reported
their response.

OpenLIT's streamed model calls (its OpenAI and LiteLLM instrumentations, and the frameworks
over them) emit their `gen_ai.client.inference.operation.details` record once the stream is
read, after the call's span has ended and outside its context: the record has no trace or
span id. It carries `gen_ai.response.id`, as the call's span does, and it may hold what the
span lacks (the request's tool definitions are only there). A record like that belongs to
the span that reported the same response, so `attach` gives it that span's ids, and from
then on it is an ordinary content record: stored with those ids (a re-read of its file finds
it stored, by the same key) and joined to its span by `decode_spans`.

A record can also name the wrong span: OpenLIT writes it in the context current when it
is written, and over a framework whose own span of the model call encloses OpenLIT's
(Strands' `chat` over OpenLIT's OpenAI span) that is the framework's span, which reported
no response, while OpenLIT's span in the same trace reported the record's. Joined to the
framework's span, the record read as a second inference of it (`decode.per_inference`);
`attach` moves it to the span that reported its response.

Both engines call `attach` where a record and its span first meet: local ingest on a group's
fresh records and the stored spans of the responses they name (`pipeline`), the Ray engine
in the partition the record's response key routed it to (`ray_engine`). A record whose span
is in neither stays as read and is reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.records import RawLog, RawSpan

__all__ = ["attach", "detached_response", "response_of", "responses"]


def response_of(log: RawLog) -> str | None:
    """The response id a GenAI record names, if any."""
    if not log.event_name.startswith("gen_ai."):
        return None
    value = log.attributes.get(A.GEN_AI_RESPONSE_ID)
    return value if isinstance(value, str) and value else None


def detached_response(log: RawLog) -> str | None:
    """The response id a GenAI record names when it names no span; else None."""
    return None if log.trace_id and log.span_id else response_of(log)


def responses(spans: Iterable[RawSpan]) -> dict[str, list[RawSpan]]:
    """Spans by the response id they report (`gen_ai.response.id`)."""
    out: dict[str, list[RawSpan]] = {}
    for span in spans:
        value = span.attributes.get(A.GEN_AI_RESPONSE_ID)
        if isinstance(value, str) and value:
            out.setdefault(value, []).append(span)
    return out


def attach(
    logs: Sequence[RawLog],
    by_response: Mapping[str, Sequence[RawSpan]],
    named: Mapping[tuple[str, str], RawSpan] | None = None,
) -> list[RawLog]:
    """`logs` with each record given the ids of the span that reported its response
    (`responses`), where it names no span, or names one of `named` (spans by trace and
    span id) that reported another response or none while a span of its own trace
    reported its response; the others as they are.

    Of several spans with one response id (two instrumentations of one call, merged later
    as one call anyway), the one of the record's own service, then the first to start.
    """
    out = []
    for log in logs:
        rid = response_of(log)
        spans = by_response.get(rid, ()) if rid else ()
        if spans and log.trace_id and log.span_id:
            span = (named or {}).get((log.trace_id, log.span_id))
            if span is None or span.attributes.get(A.GEN_AI_RESPONSE_ID) == rid:
                spans = ()
            else:
                spans = [s for s in spans if s.trace_id == log.trace_id]
        if spans:
            service = log.resource.get(A.SERVICE_NAME)
            span = min(spans, key=lambda s: (s.resource.get(A.SERVICE_NAME) != service,
                                             s.start_unix_nano, s.span_id))
            log = replace(log, trace_id=span.trace_id, span_id=span.span_id)
        out.append(log)
    return out
