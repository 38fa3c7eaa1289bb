"""OTLP/JSON export requests (traces or logs) to raw records, in the spec dialect (hex
ids, integer enums, int64 as decimal strings, lowerCamelCase) and in protobuf's default
JSON mapping (base64 ids, enum names, snake_case keys). The entry point for files is
`turnscore.ingest.otlp`.

A request is decoded once, by msgspec, into the typed structs below (`parse_request`):
C-speed, no dict per object, and only the shape is checked there. The structs' fields
are protobuf's names (`rename="camel"` spells them as JSON does), so the one decoder of
records (`otlp_shared`) reads them as it reads upb messages, with the `JSON` dialect.
Every field a format lets exporters get wrong (ids, times, enums, names, attribute
values) is typed `Any` and checked by the dialect, so a wrong value costs that span or
that attribute, with a row naming it, not the request. A container of the wrong JSON type
(a span that is a string, a `spans` or `attributes` that is an object) fails the
request's decode; only then is the request converted again piece by piece with the same
structs (`_granular`), and the piece that fails is left as a `Misshapen` where its struct
would be: a bad span, scope or resource block is skipped, a bad attribute entry dropped,
a bad event or status skips its span, each with a row naming it (by span id where one
reads), and the rest is kept. Absent fields are `UNSET` (not None), so a request written
again as JSON holds the keys it was read from, for `formats`' repeated-key check.

A document in snake_case (protobuf's `preserving_proto_field_name`) has its field names
respelled first (`_camel_case`), a lowerCamelCase one winning where both are given, as
in protobuf's JSON parser.

(Just past the ~400-line guide: the structs, the piece-by-piece fallback that reuses them
and the JSON `Dialect` describe one encoding, and each is read against the others.)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import suppress
from typing import Any

import msgspec
from msgspec import UNSET, Struct

from turnscore.ingest import formats
from turnscore.ingest.anyvalue import (
    MAX_ATTRIBUTE_VALUE_CHARS,
    AnyValueError,
    OnTruncate,
    decode_json_any_value,
    decode_json_bytes,
)
from turnscore.ingest.otlp_shared import (
    LOGS,
    MAX_UNIX_NANO,
    TRACES,
    BadInput,
    Dialect,
    Enum,
    Misshapen,
    Record,
    Report,
    Where,
    block_records,
    camel,
    decode_attrs,
    known_enum,
    skipped,
    too_late,
)
from turnscore.ingest.records import AttrValue, InputError

__all__ = ["JSON", "Read", "json_request_records", "parse_request"]


class _Fields(Struct, gc=False, rename="camel"):
    """Fields named as protobuf names them, spelled in lowerCamelCase in JSON."""


class _KeyValue(_Fields):
    key: Any = UNSET
    value: Any = UNSET


_Attrs = list[_KeyValue] | None


class _Status(_Fields):
    code: Any = UNSET
    message: Any = UNSET


class _Event(_Fields):
    name: Any = UNSET
    time_unix_nano: Any = UNSET
    attributes: _Attrs = UNSET  # type: ignore[assignment]
    dropped_attributes_count: Any = UNSET


class _Link(_Fields):
    trace_id: Any = UNSET
    span_id: Any = UNSET
    trace_state: Any = UNSET
    attributes: _Attrs = UNSET  # type: ignore[assignment]
    dropped_attributes_count: Any = UNSET
    flags: Any = UNSET


class _Span(_Fields):
    trace_id: Any = UNSET
    span_id: Any = UNSET
    parent_span_id: Any = UNSET
    trace_state: Any = UNSET
    flags: Any = UNSET
    name: Any = UNSET
    kind: Any = UNSET
    start_time_unix_nano: Any = UNSET
    end_time_unix_nano: Any = UNSET
    attributes: _Attrs = UNSET  # type: ignore[assignment]
    dropped_attributes_count: Any = UNSET
    events: list[_Event] | None = UNSET  # type: ignore[assignment]
    dropped_events_count: Any = UNSET
    links: list[_Link] | None = UNSET  # type: ignore[assignment]
    dropped_links_count: Any = UNSET
    status: _Status | None = UNSET  # type: ignore[assignment]


class _Log(_Fields):
    time_unix_nano: Any = UNSET
    observed_time_unix_nano: Any = UNSET
    severity_number: Any = UNSET
    severity_text: Any = UNSET
    body: Any = UNSET
    attributes: _Attrs = UNSET  # type: ignore[assignment]
    dropped_attributes_count: Any = UNSET
    flags: Any = UNSET
    trace_id: Any = UNSET
    span_id: Any = UNSET
    event_name: Any = UNSET


class _Scope(_Fields):
    name: Any = UNSET
    version: Any = UNSET
    attributes: Any = UNSET
    dropped_attributes_count: Any = UNSET


class _Resource(_Fields):
    attributes: _Attrs = UNSET  # type: ignore[assignment]
    dropped_attributes_count: Any = UNSET
    entity_refs: Any = UNSET


class _ScopeSpans(_Fields):
    scope: _Scope | None = UNSET  # type: ignore[assignment]
    spans: list[_Span] | None = UNSET  # type: ignore[assignment]
    schema_url: Any = UNSET
    instrumentation_library: _Scope | None = UNSET  # type: ignore[assignment]


class _ScopeLogs(_Fields):
    scope: _Scope | None = UNSET  # type: ignore[assignment]
    log_records: list[_Log] | None = UNSET  # type: ignore[assignment]
    schema_url: Any = UNSET
    instrumentation_library: _Scope | None = UNSET  # type: ignore[assignment]


class _ResourceSpans(_Fields):
    resource: _Resource | None = UNSET  # type: ignore[assignment]
    scope_spans: list[_ScopeSpans] | None = UNSET  # type: ignore[assignment]
    schema_url: Any = UNSET
    instrumentation_library_spans: list[_ScopeSpans] | None = UNSET  # type: ignore[assignment]


class _ResourceLogs(_Fields):
    resource: _Resource | None = UNSET  # type: ignore[assignment]
    scope_logs: list[_ScopeLogs] | None = UNSET  # type: ignore[assignment]
    schema_url: Any = UNSET
    instrumentation_library_logs: list[_ScopeLogs] | None = UNSET  # type: ignore[assignment]


class _Request(_Fields):
    """A request; also the spellings of one that trace stores answer with (`_unwrapped`)."""

    resource_spans: list[_ResourceSpans] | None = UNSET  # type: ignore[assignment]
    resource_logs: list[_ResourceLogs] | None = UNSET  # type: ignore[assignment]
    batches: list[_ResourceSpans] | None = UNSET  # type: ignore[assignment]
    trace: _Request | None = UNSET  # type: ignore[assignment]
    result: _Request | None = UNSET  # type: ignore[assignment]


_DECODER = msgspec.json.Decoder(_Request)
_STRUCTS = (_KeyValue, _Status, _Event, _Link, _Span, _Log, _Scope, _Resource, _ScopeSpans,
            _ScopeLogs, _ResourceSpans, _ResourceLogs, _Request)  # fmt: skip
_CAMEL = {
    field.name: field.encode_name
    for struct in _STRUCTS
    for field in msgspec.structs.fields(struct)
    if field.name != field.encode_name
}
"""snake_case -> lowerCamelCase of every field name above that has two spellings."""
_SHAPE_ERRORS = (msgspec.ValidationError, TypeError)
_NONE = (None, UNSET)


# --- one request: records, and the object keys they were read from ----------------------


class Read(list[Record]):
    """The records of one request `parse_request` decoded."""


def parse_request(source: str, data: bytes | memoryview, position: str) -> tuple[object, int]:
    """One OTLP/JSON request's bytes (from `source`, at `position`) as its records and the
    colons of the request written again: a `formats.Parse` for `formats.iter_json_documents`.
    A document of another shape comes back as plain JSON values, for `json_request_records`
    to say what it is. Raises msgspec's errors for what only the standard parser reads (NaN, lone
    surrogates, numbers beyond a double, malformed JSON)."""
    try:
        request = _DECODER.decode(data)
    except msgspec.ValidationError:
        return formats.parse_plain(data)
    found = _unwrapped(request)
    if found.resource_spans in _NONE and found.resource_logs in _NONE:
        return formats.parse_plain(data)  # no request (or an empty one): say what it is
    return _request_records(found, Where(source, position)), formats.written_colons(request)


def json_request_records(doc: object, source: str, position: str) -> Iterator[Record]:
    """Records of one OTLP/JSON export request (traces or logs): what `parse_request`
    read, or plain JSON values (what the standard parser reads, `formats._Framer.standard`)."""
    if isinstance(doc, Read):
        yield from doc
        return
    if not isinstance(doc, Mapping):
        yield InputError(
            source, position, f"not an OTLP traces/logs request: a JSON {type(doc).__name__}"
        )
        return
    _camel_case(doc)
    request = _unwrapped(_granular(doc, _Request, "request"))
    if request.resource_spans in _NONE and request.resource_logs in _NONE:
        if doc:  # `{}` is a valid empty request
            keys = ", ".join(sorted(map(str, doc))[:6])
            yield InputError(
                source,
                position,
                "not an OTLP traces/logs request: a JSON object with keys "
                f"{keys}; expected resourceSpans or resourceLogs{_looks_like(doc)}",
            )
        return
    yield from _request_records(request, Where(source, position))


_CONSOLE_SPAN = frozenset({"context", "kind", "start_time"})
_CONSOLE_LOG = frozenset({"body", "dropped_attributes", "observed_timestamp"})
_LONE_SPAN = frozenset({"traceId", "spanId"})


def _looks_like(doc: Mapping[str, object]) -> str:
    """What a JSON object that is no request most likely is, where users meet it: the OTel
    SDKs' console exporters print a span or log record per object in a shape of their own
    (`ReadableSpan.to_json`, `ReadableLogRecord.to_json`), and a span copied out of a request
    lacks its resource and scope. Neither carries what OTLP does, so it is named, not guessed
    at. Keys as `_camel_case` left them: it renames the OTLP names among them."""
    keys = doc.keys()
    if keys >= _CONSOLE_SPAN or keys >= _CONSOLE_LOG:
        return (" (this looks like an OpenTelemetry SDK console exporter's output, which is not "
                "OTLP: export with an OTLP file exporter or a Collector's file exporter)")
    if keys >= _LONE_SPAN:
        return " (this looks like a single span; a request wraps spans in resourceSpans)"
    return ""


def _unwrapped(request: _Request) -> _Request:
    """The request in `request` as OTLP names its parts, from the names trace stores answer
    a trace query with: Grafana Tempo's `{"batches": [...]}` (`GET /api/traces/<id>`) and
    `{"trace": {...}}` (`/api/v2/traces/<id>`), Jaeger's `{"result": {...}}` (api_v3, one
    per streamed chunk), and OTLP's names before 0.15 (2022), `instrumentationLibrarySpans`
    and `instrumentationLibrary`, which older Collectors and Tempo releases still write.
    Parts are renamed in place, not copied, so the request written again
    (`formats.written_colons`) has as many keys as it was read with."""
    while all(part in _NONE for part in (request.resource_spans, request.resource_logs,
                                         request.batches)):  # fmt: skip
        inner = request.trace if request.trace not in _NONE else request.result
        if inner in _NONE or type(inner) is Misshapen:
            break
        request = inner
    if request.resource_spans in _NONE:
        request.resource_spans, request.batches = request.batches, UNSET  # type: ignore[assignment]
    for tree, old in ((TRACES, "instrumentation_library_spans"),
                      (LOGS, "instrumentation_library_logs")):  # fmt: skip
        for block in getattr(request, tree.blocks) or ():
            if type(block) is Misshapen:
                continue
            if getattr(block, tree.scopes) in _NONE and getattr(block, old) not in _NONE:
                setattr(block, tree.scopes, getattr(block, old))
                setattr(block, old, UNSET)
            for scope_block in getattr(block, tree.scopes) or ():
                if type(scope_block) is not Misshapen and scope_block.scope in _NONE:
                    scope_block.scope, scope_block.instrumentation_library = (
                        scope_block.instrumentation_library, UNSET)  # fmt: skip
    return request


def _request_records(request: _Request, where: Where) -> Read:
    read = Read()
    for tree in (TRACES, LOGS):
        for i, block in enumerate(getattr(request, tree.blocks) or ()):
            if type(block) is Misshapen:  # only after `_granular`
                skipped(block, where, read)
            else:
                block_records(JSON, tree, block, where.at(f"{tree.blocks_path}[{i}]"), read)
    return read


# --- a request msgspec refused, or plain JSON values --------------------------------


def _children(cls: type[Struct]) -> tuple[tuple[str, str, type[Struct], bool], ...]:
    """The fields of `cls` that hold structs: (name, JSON name, struct type, whether a
    list of them)."""
    out = []
    for field in msgspec.inspect.type_info(cls).fields:  # type: ignore[attr-defined]
        union = isinstance(field.type, msgspec.inspect.UnionType)
        for kind in field.type.types if union else (field.type,):  # type: ignore[attr-defined]
            if isinstance(kind, msgspec.inspect.ListType):
                kind, many = kind.item_type, True
            else:
                many = False
            if isinstance(kind, msgspec.inspect.StructType):
                out.append((field.name, field.encode_name, kind.cls, many))
    return tuple(out)


_CHILDREN: dict[type, tuple[tuple[str, str, type[Struct], bool], ...]] = {
    struct: _children(struct) for struct in _STRUCTS
}


def _granular(value: Any, cls: type, path: str) -> Any:
    """`value` (plain JSON values) as a `cls`; where that fails, the same piece by piece:
    the struct without its struct-holding fields, then each of those alone, so only the
    piece of the wrong JSON type becomes a `Misshapen` (for an attribute entry, the key of
    a `_KeyValue`, so that `_json_attrs` reports and drops it). Only for a request the
    whole decode refused: good pieces convert whole, once."""
    try:
        return msgspec.convert(value, cls)
    except _SHAPE_ERRORS as exc:
        error = str(exc)
    children = _CHILDREN.get(cls, ())
    if type(value) is not dict or not children:
        return Misshapen(path, error)
    names = {encoded for _, encoded, _, _ in children}
    struct: Struct = msgspec.convert({k: v for k, v in value.items() if k not in names}, cls)
    for name, encoded, child, many in children:
        raw = value.get(encoded)
        if raw is None:
            continue
        if not many:
            piece = _granular(raw, child, encoded)
        elif type(raw) is list:
            piece = [_granular(item, child, f"{encoded}[{i}]") for i, item in enumerate(raw)]
        else:
            piece = [_granular(raw, list, encoded)]  # msgspec's words for "not a list"
        if many and child is _KeyValue:
            piece = [_KeyValue(key=p) if type(p) is Misshapen else p for p in piece]
        setattr(struct, name, piece)
    return struct


def _camel_case(value: Any) -> None:
    """Respell, in place, the snake_case OTLP field names in `value` (plain JSON values).
    Attribute keys are values (`KeyValue.key`), not names: they stay as they are."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            for key in [k for k in item if k in _CAMEL]:
                item.setdefault(_CAMEL[key], item.pop(key))
            stack.extend(v for v in item.values() if type(v) in (dict, list))
        elif type(item) is list:
            stack.extend(v for v in item if type(v) in (dict, list))


# --- the JSON dialect: how each field may be spelled -------------------------------------


def _json_id(raw: Any, size: int, what: str) -> str | None:
    """Lowercase hex of an id given as hex (spec) or base64 (protobuf JSON); None if unset."""
    if type(raw) is str and len(raw) == 2 * size:
        try:
            value = bytes.fromhex(raw)
        except ValueError:
            value = b""
    elif raw is None or raw == "" or raw is UNSET:
        return None
    elif not isinstance(raw, str):
        raise BadInput(f"{camel(what)} is not a string: {str(raw)[:40]!r}")
    else:
        try:
            value = decode_json_bytes(raw)  # either alphabet, as a bytesValue
        except AnyValueError:
            value = b""
    if len(value) != size:
        raise BadInput(f"{camel(what)} {raw[:64]!r} is not {size} bytes of hex or base64")
    return value.hex() if value.count(0) != size else None


def _json_uint(raw: Any, what: str) -> int:
    if type(raw) is str and raw.isdigit() and raw.isascii():  # the spec dialect's form
        return int(raw)
    if raw is None or raw == "" or raw is UNSET:
        return 0
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    # ASCII only: `str.isdigit` also takes '²', which `int` refuses.
    if isinstance(raw, str) and raw.strip().isascii() and raw.strip().isdigit():
        return int(raw)
    # Some hand-rolled exporters write nanoseconds as JSON numbers in float form.
    if isinstance(raw, float) and raw.is_integer() and raw >= 0:
        return int(raw)
    raise BadInput(f"{camel(what)} is not an unsigned integer: {str(raw)[:40]!r}")


def _json_time(raw: Any, what: str) -> int:
    value = _json_uint(raw, what)
    if value > MAX_UNIX_NANO:
        raise too_late(value, camel(what))
    return value


def _json_enum(raw: Any, enum: Enum, report: Report) -> int:
    """An enum given as a number or a name ('SPAN_KIND_CLIENT', also 'CLIENT'); unknown -> 0."""
    if type(raw) is int and raw in enum.values:
        return raw
    if raw is None or raw is UNSET:
        return 0
    number: int | None = None
    if isinstance(raw, str) and not raw.strip().isdigit():
        value = enum.names.get(raw, enum.names.get(enum.prefix + raw.upper()))
        if value is not None:
            return value
    else:
        with suppress(BadInput):
            number = _json_uint(raw, enum.what)
    return known_enum(raw if number is None else number, enum, report)


def _json_text(raw: Any, what: str, report: Report) -> str:
    """A string field; absent is "", any other JSON value is reported and kept as text."""
    if type(raw) is str:
        return raw
    if raw is None or raw is UNSET:
        return ""
    report(f"{what} is not a string: {str(raw)[:40]!r}; read as text")
    return str(raw)


def _json_attrs(items: list[_KeyValue] | None, owner: str, report: Report) -> dict[str, AttrValue]:
    """Attributes as a dict (a later repeated key wins). A value is decoded by
    `decode_json_any_value`; a bad one is dropped and an over-long one cut, each reported
    (`decode_attrs`), as is an entry without a string key.

    The usual value, one string, is read inline (as `otlp._pb_attrs` reads scalars); any
    other is decoded without a reporter first (a closure per attribute costs as much as
    decoding it); only one that is dropped or cut, rare, is decoded again, reported."""
    out: dict[str, AttrValue] = {}
    for item in items or ():
        key, value = item.key, item.value
        if type(value) is dict and len(value) == 1 and type(key) is str:
            text = value.get("stringValue")
            if type(text) is str and len(text) <= MAX_ATTRIBUTE_VALUE_CHARS:
                out[key] = text
                continue
        if value is UNSET:
            value = None
        if key is UNSET:  # proto3 JSON omits default values, so a missing key is ""
            key = ""
        elif type(key) is not str:
            if type(key) is Misshapen:  # `_granular` put it there
                report(f"{key.path} of {owner} is malformed ({key.error}); dropped")
            else:
                report(f"attribute entry without a string key dropped: {str(key)[:80]!r}")
            continue
        try:
            out[key] = decode_json_any_value(value, _cut)
        except (AnyValueError, _Cut):
            out.update(decode_attrs(((key, value),), decode_json_any_value, owner, report))
    return out


class _Cut(Exception):
    """A value too long to keep whole: decoded again by `decode_attrs`, which says so."""


def _cut(length: int) -> None:
    raise _Cut


def _json_value(raw: Any, on_truncate: OnTruncate) -> AttrValue:
    return decode_json_any_value(None if raw is UNSET else raw, on_truncate)


JSON = Dialect(
    id=_json_id,
    time=_json_time,
    enum=_json_enum,
    text=_json_text,
    attrs=_json_attrs,
    value=_json_value,
    spell=camel,
)
