"""OTLP/JSON export requests (traces or logs) to raw records, in the spec dialect (hex
ids, integer enums, int64 as decimal strings, lowerCamelCase) and in protobuf's default
JSON mapping (base64 ids, enum names, snake_case keys). The entry point for files is
`turnscore.ingest.otlp`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from turnscore.ingest.anyvalue import (
    MAX_ATTRIBUTE_VALUE_CHARS,
    AnyValueError,
    decode_json_any_value,
)
from turnscore.ingest.otlp_shared import (
    SPAN_ID_BYTES,
    SPAN_KINDS,
    STATUS_CODES,
    TRACE_ID_BYTES,
    BadInput,
    Record,
    Report,
    Where,
    check_span_times,
    collect,
    decode_attrs,
    event_name,
    known_enum,
    span_head,
    text,
    unix_nano,
)
from turnscore.ingest.records import AttrValue, InputError, RawEvent, RawLog, RawSpan

__all__ = ["json_request_records"]


@cache
def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)


def _get(obj: Mapping[str, Any], camel: str) -> Any:
    """A field by its lowerCamelCase name, or its snake_case protobuf name."""
    value = obj.get(camel)
    return obj.get(_snake(camel)) if value is None else value


def _list(obj: Mapping[str, Any], camel: str) -> list[Any]:
    value = _get(obj, camel)
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadInput(f"{camel} is not a list")
    return value


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise BadInput(f"{what} is not a JSON object")
    return value


def _json_id(raw: Any, size: int, what: str) -> str | None:
    """Lowercase hex of an id given as hex (spec) or base64 (protobuf JSON); None if unset."""
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise BadInput(f"{what} is not a string: {str(raw)[:40]!r}")
    try:
        value = (
            bytes.fromhex(raw)
            if len(raw) == 2 * size
            else base64.b64decode(raw.replace("-", "+").replace("_", "/"), validate=True)
        )
    except (ValueError, binascii.Error):
        value = b""
    if len(value) != size:
        raise BadInput(f"{what} {raw[:64]!r} is not {size} bytes of hex or base64")
    return value.hex() if any(value) else None


def _json_uint(raw: Any, what: str) -> int:
    if raw is None or raw == "":
        return 0
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    # ASCII only: `str.isdigit` also takes '²', which `int` refuses.
    if isinstance(raw, str) and raw.strip().isascii() and raw.strip().isdigit():
        return int(raw)
    # Some hand-rolled exporters write nanoseconds as JSON numbers in float form.
    if isinstance(raw, float) and raw.is_integer() and raw >= 0:
        return int(raw)
    raise BadInput(f"{what} is not an unsigned integer: {str(raw)[:40]!r}")


def _json_time(raw: Any, what: str) -> int:
    return unix_nano(_json_uint(raw, what), what)


def _json_enum(
    raw: Any, names: Mapping[str, int], prefix: str, what: str, report: Report
) -> int:
    """An enum given as a number or a name ('SPAN_KIND_CLIENT', also 'CLIENT'); unknown -> 0."""
    if raw is None:
        return 0
    if isinstance(raw, str) and not raw.strip().isdigit():
        value = names.get(raw, names.get(prefix + raw.upper()))
        if value is not None:
            return value
    else:
        try:
            return known_enum(_json_uint(raw, what), names, what, report)
        except BadInput:
            pass
    report(f"{what} {str(raw)[:40]!r} is not a known value; read as 0 (unspecified)")
    return 0


def _json_pairs(items: Any, report: Report) -> Iterator[tuple[str, Any]]:
    if items is None:
        return
    if not isinstance(items, list):
        report("attributes are not a list; dropped")
        return
    for item in items:
        # proto3 JSON omits default values, so a missing key is the empty key.
        key = item.get("key", "") if isinstance(item, Mapping) else None
        if isinstance(key, str):
            yield key, item.get("value")
        else:
            report(f"attribute entry without a string key dropped: {str(item)[:80]!r}")


def _json_attrs(items: Any, owner: str, report: Report) -> dict[str, AttrValue]:
    """`decode_attrs` over `_json_pairs`, with the common entries decoded inline.

    Nearly every attribute is `{"key": str, "value": {<one scalar kind>: x}}`; those skip
    the generic decoder (a closure and a dispatch loop per value, a tenth of reading).
    Anything else goes the generic way, in order, so values and reports are the same.
    """
    if type(items) is not list:
        return decode_attrs(_json_pairs(items, report), decode_json_any_value, owner, report)
    out: dict[str, AttrValue] = {}
    for item in items:
        if type(item) is dict:
            key = item.get("key", "")
            value = item.get("value")
            if type(key) is str and type(value) is dict and len(value) == 1:
                ((kind, raw),) = value.items()
                if kind == "stringValue" and type(raw) is str:
                    if len(raw) <= MAX_ATTRIBUTE_VALUE_CHARS:
                        out[key] = raw
                        continue
                elif (
                    kind == "intValue" and type(raw) is str and len(raw) < 19  # within int64
                    and raw.isascii() and raw.isdigit()
                ):
                    out[key] = int(raw)
                    continue
                elif kind == "boolValue" and type(raw) is bool:
                    out[key] = raw
                    continue
        out.update(
            decode_attrs(_json_pairs([item], report), decode_json_any_value, owner, report)
        )
    return out


def json_request_records(doc: object, source: str, position: str) -> Iterator[Record]:
    """Records of one decoded OTLP/JSON export request (traces or logs)."""
    where = Where(source, position)
    if not isinstance(doc, Mapping):
        yield InputError(
            source, position, f"not an OTLP traces/logs request: a JSON {type(doc).__name__}"
        )
        return
    resource_spans, resource_logs = _get(doc, "resourceSpans"), _get(doc, "resourceLogs")
    if resource_spans is None and resource_logs is None:
        if doc:  # `{}` is a valid empty request
            keys = ", ".join(sorted(map(str, doc))[:6])
            yield InputError(
                source,
                position,
                "not an OTLP traces/logs request: a JSON object with keys "
                f"{keys}; expected resourceSpans or resourceLogs",
            )
        return
    try:
        yield from _json_containers(doc, "resourceSpans", "scopeSpans", "spans", where)
        yield from _json_containers(doc, "resourceLogs", "scopeLogs", "logRecords", where)
    except BadInput as exc:
        yield where.error(f"malformed request: {exc}")


def _json_containers(
    doc: Mapping[str, Any], outer: str, middle: str, leaf: str, where: Where
) -> Iterator[Record]:
    for i, resource_block in enumerate(_list(doc, outer)):
        block_where = where.at(f"{outer}[{i}]")
        errors: list[InputError] = []
        block = _mapping(resource_block, f"{outer}[{i}]")
        resource_obj = _mapping(_get(block, "resource"), "resource")
        resource = _json_attrs(
            _get(resource_obj, "attributes"),
            f"the resource of {outer}[{i}]",
            collect(errors, block_where),
        )
        yield from errors
        for j, scope_block in enumerate(_list(block, middle)):
            scope_where = block_where.at(f"{middle}[{j}]")
            scope_obj = _mapping(scope_block, f"{middle}[{j}]")
            scope = _mapping(_get(scope_obj, "scope"), "scope")
            for k, item in enumerate(_list(scope_obj, leaf)):
                item_where = scope_where.at(f"{leaf}[{k}]")
                if leaf == "spans":
                    yield from _json_span(item, item_where, resource, scope)
                else:
                    yield from _json_log(item, item_where, resource)


def _json_span(
    span: Any, where: Where, resource: Mapping[str, AttrValue], scope: Mapping[str, Any]
) -> Iterator[Record]:
    if not isinstance(span, Mapping):
        yield where.error("span is not a JSON object; skipped")
        return
    late: list[str] = []
    head = span_head(
        text(_get(span, "name"), "span name", late.append),
        where,
        (
            lambda: _json_id(_get(span, "traceId"), TRACE_ID_BYTES, "traceId"),
            lambda: _json_id(_get(span, "spanId"), SPAN_ID_BYTES, "spanId"),
            lambda: _json_id(_get(span, "parentSpanId"), SPAN_ID_BYTES, "parentSpanId"),
        ),
        ("traceId", "spanId"),
    )
    if isinstance(head, InputError):
        yield head
        return
    owner, report = head.owner, head.report
    for message in late:
        report(message)
    try:
        status = _mapping(_get(span, "status"), "status")
        events = tuple(_json_event(e, owner, report) for e in _list(span, "events"))
        start = _json_time(_get(span, "startTimeUnixNano"), "startTimeUnixNano")
        end = _json_time(_get(span, "endTimeUnixNano"), "endTimeUnixNano")
        record = RawSpan(
            trace_id=head.trace_id,
            span_id=head.span_id,
            parent_span_id=head.parent_span_id,
            name=head.name,
            kind=_json_enum(_get(span, "kind"), SPAN_KINDS, "SPAN_KIND_", "kind", report),
            start_unix_nano=start,
            end_unix_nano=end,
            status_code=_json_enum(
                _get(status, "code"), STATUS_CODES, "STATUS_CODE_", "status.code", report
            ),
            status_message=text(_get(status, "message"), "status.message", report),
            attributes=_json_attrs(_get(span, "attributes"), owner, report),
            events=events,
            resource=resource,
            scope_name=text(_get(scope, "name"), "scope.name", report),
            scope_version=text(_get(scope, "version"), "scope.version", report),
            source=where.source,
            position=where.position,
        )
    except BadInput as exc:
        yield where.error(f"{owner} skipped: {exc}", span_id=head.span_id, trace_id=head.trace_id)
        return
    check_span_times(head, start, end)
    yield record
    yield from head.errors


def _json_event(event: Any, owner: str, report: Report) -> RawEvent:
    event = _mapping(event, "event")
    name = text(_get(event, "name"), f"event name of {owner}", report)
    return RawEvent(
        name=name,
        time_unix_nano=_json_time(_get(event, "timeUnixNano"), "event timeUnixNano"),
        attributes=_json_attrs(_get(event, "attributes"), f"event {name!r} of {owner}", report),
    )


def _json_log(log: Any, where: Where, resource: Mapping[str, AttrValue]) -> Iterator[Record]:
    if not isinstance(log, Mapping):
        yield where.error("log record is not a JSON object; skipped")
        return
    errors: list[InputError] = []
    report = collect(errors, where)
    trace_id = _optional_id(log, "traceId", TRACE_ID_BYTES, report)
    span_id = _optional_id(log, "spanId", SPAN_ID_BYTES, report)
    attributes = _json_attrs(_get(log, "attributes"), "log record", report)
    try:
        body = decode_json_any_value(
            _get(log, "body"),
            lambda n: report(f"log record body is {n} characters long; truncated"),
        )
    except AnyValueError as exc:
        report(f"log record body dropped: {exc}")
        body = None
    try:
        time = _json_time(_get(log, "timeUnixNano"), "timeUnixNano") or _json_time(
            _get(log, "observedTimeUnixNano"), "observedTimeUnixNano"
        )
    except BadInput as exc:
        yield where.error(f"log record skipped: {exc}")
        return
    yield RawLog(
        trace_id=trace_id,
        span_id=span_id,
        event_name=event_name(text(_get(log, "eventName"), "eventName", report), attributes),
        time_unix_nano=time,
        body=body,
        attributes=attributes,
        resource=resource,
        source=where.source,
        position=where.position,
    )
    yield from errors


def _optional_id(
    obj: Mapping[str, Any], camel: str, size: int, report: Report
) -> str | None:
    try:
        return _json_id(_get(obj, camel), size, camel)
    except BadInput as exc:
        report(f"log record {exc}; kept without it")
        return None

