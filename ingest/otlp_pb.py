"""OTLP protobuf `ResourceSpans` / `ResourceLogs` messages to raw records. The entry
point for files, which finds the messages in a request, is `turnscore.ingest.otlp`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from turnscore.ingest import formats
from turnscore.ingest.anyvalue import MAX_ATTRIBUTE_VALUE_CHARS, decode_pb_any_value
from turnscore.ingest.otlp_shared import (
    KIND_VALUES,
    STATUS_VALUES,
    BadInput,
    Record,
    Report,
    Where,
    check_span_times,
    collect,
    decode_attrs,
    event_name,
    known_enum,
    log_ids,
    span_head,
    unix_nano,
)
from turnscore.ingest.records import AttrValue, InputError, RawEvent, RawLog, RawSpan

__all__ = ["pb_resource_records"]


def pb_resource_records(
    data: bytes, kind: formats.ProtoKind, source: str, offset: int, index: int
) -> Iterator[Record]:
    """Records of one serialized ResourceSpans/ResourceLogs found at byte `offset`."""
    outer = "resourceSpans" if kind is formats.ProtoKind.TRACES else "resourceLogs"
    where = Where(source, f"byte {offset}", f"{outer}[{index}]")
    message_type = (
        trace_pb2.ResourceSpans if kind is formats.ProtoKind.TRACES else logs_pb2.ResourceLogs
    )
    try:
        block = message_type.FromString(data)
    except DecodeError as exc:
        yield where.error(f"corrupt protobuf {outer} message ({exc}); skipped")
        return
    errors: list[InputError] = []
    resource = _pb_attrs(
        block.resource.attributes, f"the resource of {outer}[{index}]", collect(errors, where)
    )
    yield from errors
    if isinstance(block, trace_pb2.ResourceSpans):
        for j, scope_spans in enumerate(block.scope_spans):
            for k, span in enumerate(scope_spans.spans):
                yield from _pb_span(
                    span, where.at(f"scopeSpans[{j}].spans[{k}]"), resource, scope_spans.scope
                )
    else:
        for j, scope_logs in enumerate(block.scope_logs):
            for k, log in enumerate(scope_logs.log_records):
                yield from _pb_log(log, where.at(f"scopeLogs[{j}].logRecords[{k}]"), resource)


def _pb_attrs(items: Any, owner: str, report: Report) -> dict[str, AttrValue]:
    """Attributes as a dict (a later repeated key wins). Scalars are read inline; arrays,
    key-value lists and over-long values go through `decode_attrs`, which cuts and reports."""
    out: dict[str, AttrValue] = {}
    for kv in items:
        value = kv.value
        kind = value.WhichOneof("value")
        if kind == "string_value":
            text = value.string_value
            if len(text) <= MAX_ATTRIBUTE_VALUE_CHARS:
                out[kv.key] = text
                continue
        elif kind == "int_value":
            out[kv.key] = value.int_value
            continue
        elif kind == "bool_value":
            out[kv.key] = value.bool_value
            continue
        elif kind == "double_value":
            out[kv.key] = value.double_value
            continue
        out.update(decode_attrs(iter(((kv.key, value),)), decode_pb_any_value, owner, report))
    return out


def _pb_id(raw: bytes, size: int, what: str) -> str | None:
    if not raw:
        return None
    if len(raw) != size:
        raise BadInput(f"{what} {raw.hex()!r} is {len(raw)} bytes, expected {size}")
    return raw.hex() if any(raw) else None


def _pb_span(
    span: Any, where: Where, resource: Mapping[str, AttrValue], scope: Any
) -> Iterator[Record]:
    head = span_head(
        span.name,
        where,
        _pb_id,
        (span.trace_id, span.span_id, span.parent_span_id),
        ("trace_id", "span_id", "parent_span_id"),
    )
    if isinstance(head, InputError):
        yield head
        return
    owner, report = head.owner, head.report
    try:
        start = unix_nano(span.start_time_unix_nano, "start_time_unix_nano")
        end = unix_nano(span.end_time_unix_nano, "end_time_unix_nano")
        events = tuple(
            RawEvent(
                name=event.name,
                time_unix_nano=unix_nano(event.time_unix_nano, "event time_unix_nano"),
                attributes=_pb_attrs(event.attributes, f"event {event.name!r} of {owner}", report),
            )
            for event in span.events
        )
    except BadInput as exc:
        yield where.error(f"{owner} skipped: {exc}", span_id=head.span_id, trace_id=head.trace_id)
        return
    check_span_times(head, start, end)
    yield RawSpan(
        trace_id=head.trace_id,
        span_id=head.span_id,
        parent_span_id=head.parent_span_id,
        name=head.name,
        kind=known_enum(span.kind, KIND_VALUES, "kind", report),
        start_unix_nano=start,
        end_unix_nano=end,
        status_code=known_enum(span.status.code, STATUS_VALUES, "status.code", report),
        status_message=span.status.message,
        attributes=_pb_attrs(span.attributes, owner, report),
        events=events,
        resource=resource,
        scope_name=scope.name,
        scope_version=scope.version,
        source=where.source,
        position=where.position,
    )
    yield from head.errors or ()


def _pb_log(log: Any, where: Where, resource: Mapping[str, AttrValue]) -> Iterator[Record]:
    errors: list[InputError] = []
    report = collect(errors, where)
    trace_id, span_id = log_ids(
        _pb_id, (log.trace_id, log.span_id), ("trace_id", "span_id"), report
    )
    attributes = _pb_attrs(log.attributes, "log record", report)
    body = (
        decode_pb_any_value(
            log.body, lambda n: report(f"log record body is {n} characters long; truncated")
        )
        if log.HasField("body")
        else None
    )
    try:
        time = unix_nano(log.time_unix_nano or log.observed_time_unix_nano, "time_unix_nano")
    except BadInput as exc:
        yield where.error(f"log record skipped: {exc}")
        return
    yield RawLog(
        trace_id=trace_id,
        span_id=span_id,
        event_name=event_name(log.event_name, attributes),
        time_unix_nano=time,
        body=body,
        attributes=attributes,
        resource=resource,
        source=where.source,
        position=where.position,
    )
    yield from errors
