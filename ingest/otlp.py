"""Read OTLP trace and log files into raw records (`turnscore.ingest.records`).

`read_file` accepts, detected from content (`turnscore.ingest.formats`):
- OTLP/JSON `ExportTraceServiceRequest` / `ExportLogsServiceRequest` in the spec dialect
  (hex ids, integer enums, int64 as decimal strings, lowerCamelCase) and in protobuf's
  default JSON mapping (base64 ids, enum names, snake_case keys allowed);
- one request, requests back to back, one per line (Collector file exporter), or an array;
- protobuf binary, traces or logs;
- any of these gzip- or zstd-compressed.

Bad input never raises: it becomes an `InputError` naming the file, where (line, request,
byte, span id) and what was wrong, and reading goes on with what can still be trusted.
A span without valid trace/span ids is skipped; an over-long attribute value is cut to
`MAX_ATTRIBUTE_VALUE_CHARS` and reported. Invalid UTF-8 in JSON files is replaced with
U+FFFD and reported once per file.

Records are yielded as each request is decoded; one file's bytes are held at a time.

This module runs past ~400 lines because the JSON and protobuf decoders mirror each
other section by section and are easiest to check side by side; the natural split is
`otlp_json.py` / `otlp_pb.py` behind this entry module.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeAlias

from google.protobuf.message import DecodeError
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from turnscore.ingest import fast_json, formats
from turnscore.ingest.anyvalue import (
    MAX_ATTRIBUTE_VALUE_CHARS,
    AnyValueError,
    decode_json_any_value,
    decode_pb_any_value,
)
from turnscore.ingest.attributes import EVENT_NAME
from turnscore.ingest.records import AttrValue, InputError, RawEvent, RawLog, RawSpan

__all__ = ["MAX_ATTRIBUTE_VALUE_CHARS", "Record", "iter_input_files", "read_bytes", "read_file"]

logger = logging.getLogger(__name__)

Record: TypeAlias = RawSpan | RawLog | InputError


def iter_input_files(paths: Sequence[Path]) -> Iterator[Path]:
    """Files named in `paths`, folders expanded recursively; sorted, hidden entries skipped.

    A path given explicitly is yielded even if hidden; a missing path raises
    `FileNotFoundError` (a typo on the command line should stop the run, not yield nothing).
    """
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found = sorted(_walk(path))
        elif path.exists():
            found = [path]
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
        for file in found:
            if file not in seen:
                seen.add(file)
                yield file


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.startswith("."):
                yield Path(root) / name


def read_file(path: Path) -> Iterator[Record]:
    """Every span, log record and input error in one OTLP file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        yield InputError(str(path), "file", f"cannot read file: {exc.strerror or exc}")
        return
    yield from read_bytes(data, str(path))


def read_bytes(data: bytes, source: str) -> Iterator[Record]:
    """Like `read_file`, for content already in memory; `source` names it in records."""
    payload, problems = formats.decompress(data)
    for problem in problems:
        yield InputError(source, problem.position, problem.message)
    kind = formats.sniff_protobuf(payload, name_hint=os.path.basename(source))
    if kind is not None:
        yield from _read_protobuf(payload, kind, source)
    elif formats.looks_like_json(payload):
        yield from _read_json(payload, source)
    else:
        yield InputError(
            source,
            "file",
            "not an OTLP traces/logs file: found "
            f"{formats.describe_non_otlp(payload)}; expected OTLP JSON or protobuf",
        )


def _read_json(payload: bytes, source: str) -> Iterator[Record]:
    text, problem = formats.decode_text(payload)
    if problem is not None:
        yield InputError(source, problem.position, problem.message)
    documents = 0
    for item in fast_json.iter_json_documents(text, payload):
        if isinstance(item, formats.Problem):
            yield InputError(source, item.position, item.message)
            continue
        documents += 1
        yield from json_request_records(item.value, source, item.position)
    logger.debug("%s: %d JSON request(s)", source, documents)


def _read_protobuf(payload: bytes, kind: formats.ProtoKind, source: str) -> Iterator[Record]:
    for index, item in enumerate(formats.iter_protobuf_resources(payload)):
        if isinstance(item, formats.Problem):
            yield InputError(source, item.position, item.message)
            continue
        start, end = item
        yield from pb_resource_records(payload[start:end], kind, source, start, index)


# --- shared -----------------------------------------------------------------------------

_SPAN_KINDS: Mapping[str, int] = dict(trace_pb2.Span.SpanKind.items())
_STATUS_CODES: Mapping[str, int] = dict(trace_pb2.Status.StatusCode.items())
_TRACE_ID_BYTES, _SPAN_ID_BYTES = 16, 8


class _BadInput(ValueError):
    """A field that makes the span or log record unusable; becomes an InputError."""


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a record sits: the file, the request's position and the path inside it."""

    source: str
    position: str
    path: str = ""

    def at(self, path: str) -> _Where:
        return _Where(self.source, self.position, f"{self.path}.{path}" if self.path else path)

    def error(
        self, message: str, span_id: str | None = None, trace_id: str | None = None
    ) -> InputError:
        where = f"{self.position}, span {span_id}" if span_id else f"{self.position}, {self.path}"
        return InputError(self.source, where, message, span_id=span_id, trace_id=trace_id)


def _collect(errors: list[InputError], where: _Where) -> Callable[[str], None]:
    """A report function that appends an InputError at `where` to `errors`."""

    def report(message: str) -> None:
        errors.append(where.error(message))

    return report


def _decode_attrs(
    pairs: Iterator[tuple[str, Any]],
    decode: Callable[[Any, Callable[[int], None]], AttrValue],
    owner: str,
    report: Callable[[str], None],
) -> dict[str, AttrValue]:
    """Attributes as a dict; a bad value is dropped and an over-long one cut, each reported."""
    out: dict[str, AttrValue] = {}
    for key, raw in pairs:

        def truncated(length: int, key: str = key) -> None:
            report(
                f"attribute {key!r} of {owner} is {length} characters long; "
                f"kept the first {MAX_ATTRIBUTE_VALUE_CHARS}"
            )

        try:
            out[key] = decode(raw, truncated)
        except AnyValueError as exc:
            report(f"attribute {key!r} of {owner} dropped: {exc}")
    return out


def _event_name(explicit: str, attributes: Mapping[str, AttrValue]) -> str:
    if explicit:
        return explicit
    named = attributes.get(EVENT_NAME)
    return named if isinstance(named, str) else ""


# --- JSON -------------------------------------------------------------------------------


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
        raise _BadInput(f"{camel} is not a list")
    return value


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _BadInput(f"{what} is not a JSON object")
    return value


def _json_id(raw: Any, size: int, what: str) -> str | None:
    """Lowercase hex of an id given as hex (spec) or base64 (protobuf JSON); None if unset."""
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise _BadInput(f"{what} is not a string: {str(raw)[:40]!r}")
    try:
        value = (
            bytes.fromhex(raw)
            if len(raw) == 2 * size
            else base64.b64decode(raw.replace("-", "+").replace("_", "/"), validate=True)
        )
    except (ValueError, binascii.Error):
        value = b""
    if len(value) != size:
        raise _BadInput(f"{what} {raw[:64]!r} is not {size} bytes of hex or base64")
    return value.hex() if any(value) else None


def _json_uint(raw: Any, what: str) -> int:
    if raw is None or raw == "":
        return 0
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw)
    # Some hand-rolled exporters write nanoseconds as JSON numbers in float form.
    if isinstance(raw, float) and raw.is_integer() and raw >= 0:
        return int(raw)
    raise _BadInput(f"{what} is not an unsigned integer: {str(raw)[:40]!r}")


def _json_enum(
    raw: Any, names: Mapping[str, int], prefix: str, what: str, report: Callable[[str], None]
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
            return _json_uint(raw, what)
        except _BadInput:
            pass
    report(f"{what} {str(raw)[:40]!r} is not a known value; read as 0 (unspecified)")
    return 0


def _json_pairs(items: Any, report: Callable[[str], None]) -> Iterator[tuple[str, Any]]:
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


def _json_attrs(items: Any, owner: str, report: Callable[[str], None]) -> dict[str, AttrValue]:
    return _decode_attrs(_json_pairs(items, report), decode_json_any_value, owner, report)


def json_request_records(doc: object, source: str, position: str) -> Iterator[Record]:
    """Records of one decoded OTLP/JSON export request (traces or logs)."""
    where = _Where(source, position)
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
    except _BadInput as exc:
        yield where.error(f"malformed request: {exc}")


def _json_containers(
    doc: Mapping[str, Any], outer: str, middle: str, leaf: str, where: _Where
) -> Iterator[Record]:
    for i, resource_block in enumerate(_list(doc, outer)):
        block_where = where.at(f"{outer}[{i}]")
        errors: list[InputError] = []
        block = _mapping(resource_block, f"{outer}[{i}]")
        resource_obj = _mapping(_get(block, "resource"), "resource")
        resource = _json_attrs(
            _get(resource_obj, "attributes"),
            f"the resource of {outer}[{i}]",
            _collect(errors, block_where),
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
    span: Any, where: _Where, resource: Mapping[str, AttrValue], scope: Mapping[str, Any]
) -> Iterator[Record]:
    if not isinstance(span, Mapping):
        yield where.error("span is not a JSON object; skipped")
        return
    name = str(_get(span, "name") or "")
    try:
        trace_id = _json_id(_get(span, "traceId"), _TRACE_ID_BYTES, "traceId")
        span_id = _json_id(_get(span, "spanId"), _SPAN_ID_BYTES, "spanId")
        if trace_id is None or span_id is None:
            raise _BadInput(f"{'traceId' if trace_id is None else 'spanId'} is missing or zero")
    except _BadInput as exc:
        yield where.error(f"span {name!r} skipped: {exc}")
        return
    errors: list[InputError] = []
    owner = f"span {name!r}"

    def report(message: str) -> None:
        errors.append(where.error(message, span_id=span_id, trace_id=trace_id))

    try:
        parent = _json_id(_get(span, "parentSpanId"), _SPAN_ID_BYTES, "parentSpanId")
    except _BadInput as exc:
        report(f"{owner}: {exc}; treated as a root span")
        parent = None
    try:
        status = _mapping(_get(span, "status"), "status")
        events = tuple(_json_event(e, owner, report) for e in _list(span, "events"))
        record = RawSpan(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=parent,
            name=name,
            kind=_json_enum(_get(span, "kind"), _SPAN_KINDS, "SPAN_KIND_", "kind", report),
            start_unix_nano=_json_uint(_get(span, "startTimeUnixNano"), "startTimeUnixNano"),
            end_unix_nano=_json_uint(_get(span, "endTimeUnixNano"), "endTimeUnixNano"),
            status_code=_json_enum(
                _get(status, "code"), _STATUS_CODES, "STATUS_CODE_", "status.code", report
            ),
            status_message=str(_get(status, "message") or ""),
            attributes=_json_attrs(_get(span, "attributes"), owner, report),
            events=events,
            resource=resource,
            scope_name=str(_get(scope, "name") or ""),
            scope_version=str(_get(scope, "version") or ""),
            source=where.source,
            position=where.position,
        )
    except _BadInput as exc:
        yield where.error(f"{owner} skipped: {exc}", span_id=span_id, trace_id=trace_id)
        return
    yield record
    yield from errors


def _json_event(event: Any, owner: str, report: Callable[[str], None]) -> RawEvent:
    event = _mapping(event, "event")
    name = str(_get(event, "name") or "")
    return RawEvent(
        name=name,
        time_unix_nano=_json_uint(_get(event, "timeUnixNano"), "event timeUnixNano"),
        attributes=_json_attrs(_get(event, "attributes"), f"event {name!r} of {owner}", report),
    )


def _json_log(log: Any, where: _Where, resource: Mapping[str, AttrValue]) -> Iterator[Record]:
    if not isinstance(log, Mapping):
        yield where.error("log record is not a JSON object; skipped")
        return
    errors: list[InputError] = []
    report = _collect(errors, where)
    trace_id = _optional_id(log, "traceId", _TRACE_ID_BYTES, report)
    span_id = _optional_id(log, "spanId", _SPAN_ID_BYTES, report)
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
        time = _json_uint(_get(log, "timeUnixNano"), "timeUnixNano") or _json_uint(
            _get(log, "observedTimeUnixNano"), "observedTimeUnixNano"
        )
    except _BadInput as exc:
        yield where.error(f"log record skipped: {exc}")
        return
    yield RawLog(
        trace_id=trace_id,
        span_id=span_id,
        event_name=_event_name(str(_get(log, "eventName") or ""), attributes),
        time_unix_nano=time,
        body=body,
        attributes=attributes,
        resource=resource,
        source=where.source,
        position=where.position,
    )
    yield from errors


def _optional_id(
    obj: Mapping[str, Any], camel: str, size: int, report: Callable[[str], None]
) -> str | None:
    try:
        return _json_id(_get(obj, camel), size, camel)
    except _BadInput as exc:
        report(f"log record {exc}; kept without it")
        return None


# --- protobuf ---------------------------------------------------------------------------


def pb_resource_records(
    data: bytes, kind: formats.ProtoKind, source: str, offset: int, index: int
) -> Iterator[Record]:
    """Records of one serialized ResourceSpans/ResourceLogs found at byte `offset`."""
    outer = "resourceSpans" if kind is formats.ProtoKind.TRACES else "resourceLogs"
    where = _Where(source, f"byte {offset}", f"{outer}[{index}]")
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
        block.resource.attributes, f"the resource of {outer}[{index}]", _collect(errors, where)
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


def _pb_attrs(items: Any, owner: str, report: Callable[[str], None]) -> dict[str, AttrValue]:
    pairs = ((kv.key, kv.value) for kv in items)
    return _decode_attrs(pairs, decode_pb_any_value, owner, report)


def _pb_id(raw: bytes, size: int, what: str) -> str | None:
    if not raw:
        return None
    if len(raw) != size:
        raise _BadInput(f"{what} {raw.hex()!r} is {len(raw)} bytes, expected {size}")
    return raw.hex() if any(raw) else None


def _pb_span(
    span: Any, where: _Where, resource: Mapping[str, AttrValue], scope: Any
) -> Iterator[Record]:
    name = span.name
    try:
        trace_id = _pb_id(span.trace_id, _TRACE_ID_BYTES, "trace_id")
        span_id = _pb_id(span.span_id, _SPAN_ID_BYTES, "span_id")
        if trace_id is None or span_id is None:
            raise _BadInput(f"{'trace_id' if trace_id is None else 'span_id'} is missing or zero")
    except _BadInput as exc:
        yield where.error(f"span {name!r} skipped: {exc}")
        return
    errors: list[InputError] = []
    owner = f"span {name!r}"

    def report(message: str) -> None:
        errors.append(where.error(message, span_id=span_id, trace_id=trace_id))

    try:
        parent = _pb_id(span.parent_span_id, _SPAN_ID_BYTES, "parent_span_id")
    except _BadInput as exc:
        report(f"{owner}: {exc}; treated as a root span")
        parent = None
    events = tuple(
        RawEvent(
            name=event.name,
            time_unix_nano=event.time_unix_nano,
            attributes=_pb_attrs(event.attributes, f"event {event.name!r} of {owner}", report),
        )
        for event in span.events
    )
    yield RawSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=span.kind,
        start_unix_nano=span.start_time_unix_nano,
        end_unix_nano=span.end_time_unix_nano,
        status_code=span.status.code,
        status_message=span.status.message,
        attributes=_pb_attrs(span.attributes, owner, report),
        events=events,
        resource=resource,
        scope_name=scope.name,
        scope_version=scope.version,
        source=where.source,
        position=where.position,
    )
    yield from errors


def _pb_log(log: Any, where: _Where, resource: Mapping[str, AttrValue]) -> Iterator[Record]:
    errors: list[InputError] = []
    report = _collect(errors, where)
    ids: list[str | None] = []
    for raw, size, what in (
        (log.trace_id, _TRACE_ID_BYTES, "trace_id"),
        (log.span_id, _SPAN_ID_BYTES, "span_id"),
    ):
        try:
            ids.append(_pb_id(raw, size, what))
        except _BadInput as exc:
            report(f"log record {exc}; kept without it")
            ids.append(None)
    attributes = _pb_attrs(log.attributes, "log record", report)
    body = (
        decode_pb_any_value(
            log.body, lambda n: report(f"log record body is {n} characters long; truncated")
        )
        if log.HasField("body")
        else None
    )
    yield RawLog(
        trace_id=ids[0],
        span_id=ids[1],
        event_name=_event_name(log.event_name, attributes),
        time_unix_nano=log.time_unix_nano or log.observed_time_unix_nano,
        body=body,
        attributes=attributes,
        resource=resource,
        source=where.source,
        position=where.position,
    )
    yield from errors
