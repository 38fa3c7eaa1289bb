"""OTLP/JSON export requests (traces or logs) to raw records, in the spec dialect (hex
ids, integer enums, int64 as decimal strings, lowerCamelCase) and in protobuf's default
JSON mapping (base64 ids, enum names, snake_case keys). The entry point for files is
`turnscore.ingest.otlp`.

A request is decoded once, by msgspec, into the typed structs below (`parse_request`):
C-speed, no dict per object, and only the shape is checked there. Every field a format
lets exporters get wrong (ids, times, enums, names, attribute values) is typed `Any` and
checked here in Python, so a wrong value costs that span or that attribute, with a row
naming it, not the request. A container of the wrong JSON type (a span that is a string,
a `spans` or `attributes` that is an object) fails the request's decode; only then is the
request converted again piece by piece with the same structs (`_granular`), and the piece
that fails is left as a `_Misshapen` where its struct would be: a bad span, scope or
resource block is skipped, a bad attribute entry dropped, a bad event or status skips its
span, each with a row naming it (by span id where one reads), and the rest is kept.
Absent fields are `UNSET` (not None), so the keys a request holds can be counted for
`formats`' repeated-key check.

The structs name fields in lowerCamelCase; a document in snake_case (protobuf's
`preserving_proto_field_name`) has its field names respelled first (`_camel_case`), a
lowerCamelCase one winning where both are given, as in protobuf's JSON parser.

Past the ~400-line guide because the schema (the structs), the record builders and the
key count must change together: a field added to a struct is a field counted and read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import suppress
from typing import Any

import msgspec
from msgspec import UNSET, Struct
from msgspec.structs import astuple

from turnscore.ingest import formats
from turnscore.ingest.anyvalue import (
    AnyValueError,
    decode_json_any_value,
    decode_json_bytes,
)
from turnscore.ingest.otlp_shared import (
    KIND_VALUES,
    SPAN_KINDS,
    STATUS_CODES,
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
    text,
    unix_nano,
)
from turnscore.ingest.records import AttrValue, InputError, RawEvent, RawLog, RawSpan

__all__ = ["Read", "json_request_records", "parse_request"]


class _KeyValue(Struct, gc=False):
    key: Any = UNSET
    value: Any = UNSET


_Attrs = list[_KeyValue] | None


class _Status(Struct, gc=False):
    code: Any = UNSET
    message: Any = UNSET


class _Event(Struct, gc=False):
    name: Any = UNSET
    timeUnixNano: Any = UNSET
    attributes: _Attrs = UNSET  # type: ignore[assignment]
    droppedAttributesCount: Any = UNSET


class _Span(Struct, gc=False):
    traceId: Any = UNSET
    spanId: Any = UNSET
    parentSpanId: Any = UNSET
    traceState: Any = UNSET
    flags: Any = UNSET
    name: Any = UNSET
    kind: Any = UNSET
    startTimeUnixNano: Any = UNSET
    endTimeUnixNano: Any = UNSET
    attributes: _Attrs = UNSET  # type: ignore[assignment]
    droppedAttributesCount: Any = UNSET
    events: list[_Event] | None = UNSET  # type: ignore[assignment]
    droppedEventsCount: Any = UNSET
    links: Any = UNSET
    droppedLinksCount: Any = UNSET
    status: _Status | None = UNSET  # type: ignore[assignment]


class _Log(Struct, gc=False):
    timeUnixNano: Any = UNSET
    observedTimeUnixNano: Any = UNSET
    severityNumber: Any = UNSET
    severityText: Any = UNSET
    body: Any = UNSET
    attributes: _Attrs = UNSET  # type: ignore[assignment]
    droppedAttributesCount: Any = UNSET
    flags: Any = UNSET
    traceId: Any = UNSET
    spanId: Any = UNSET
    eventName: Any = UNSET


class _Scope(Struct, gc=False):
    name: Any = UNSET
    version: Any = UNSET
    attributes: Any = UNSET
    droppedAttributesCount: Any = UNSET


class _Resource(Struct, gc=False):
    attributes: _Attrs = UNSET  # type: ignore[assignment]
    droppedAttributesCount: Any = UNSET
    entityRefs: Any = UNSET


class _ScopeSpans(Struct, gc=False):
    scope: _Scope | None = UNSET  # type: ignore[assignment]
    spans: list[_Span] | None = UNSET  # type: ignore[assignment]
    schemaUrl: Any = UNSET


class _ScopeLogs(Struct, gc=False):
    scope: _Scope | None = UNSET  # type: ignore[assignment]
    logRecords: list[_Log] | None = UNSET  # type: ignore[assignment]
    schemaUrl: Any = UNSET


class _ResourceSpans(Struct, gc=False):
    resource: _Resource | None = UNSET  # type: ignore[assignment]
    scopeSpans: list[_ScopeSpans] | None = UNSET  # type: ignore[assignment]
    schemaUrl: Any = UNSET


class _ResourceLogs(Struct, gc=False):
    resource: _Resource | None = UNSET  # type: ignore[assignment]
    scopeLogs: list[_ScopeLogs] | None = UNSET  # type: ignore[assignment]
    schemaUrl: Any = UNSET


class _Request(Struct, gc=False):
    resourceSpans: list[_ResourceSpans] | None = UNSET  # type: ignore[assignment]
    resourceLogs: list[_ResourceLogs] | None = UNSET  # type: ignore[assignment]


class _Misshapen:
    """A piece of a request of the wrong JSON type, where its struct would be (`_granular`)."""

    __slots__ = ("error", "path")

    def __init__(self, path: str, error: str) -> None:
        self.path = path
        """Where it sits in its container: 'spans[3]', or 'attributes' for a whole list."""
        self.error = error
        """What msgspec said of it ('Expected `object`, got `str`')."""

    def __str__(self) -> str:
        return f"{self.path} is malformed ({self.error})"


_DECODER = msgspec.json.Decoder(_Request)
_STRUCTS = (_KeyValue, _Status, _Event, _Span, _Log, _Scope, _Resource, _ScopeSpans,
            _ScopeLogs, _ResourceSpans, _ResourceLogs, _Request)  # fmt: skip
_CAMEL = {
    "".join(f"_{c.lower()}" if c.isupper() else c for c in field.name): field.name
    for struct in _STRUCTS
    for field in msgspec.structs.fields(struct)
    if not field.name.islower()
}
"""snake_case -> lowerCamelCase of every field name above that has two spellings."""
_SHAPE_ERRORS = (msgspec.ValidationError, TypeError)


def _get(value: Any) -> Any:
    """A field's value; absent is None, like null."""
    return None if value is UNSET else value


# --- one request: records, and the object keys they were read from ----------------------


class Read:
    """The records of one request `parse_request` decoded."""

    __slots__ = ("keys", "records")

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.keys = 0
        """Object keys the records were read from (`formats`' repeated-key check)."""


def parse_request(source: str, data: bytes | memoryview, position: str) -> tuple[object, int]:
    """One OTLP/JSON request's bytes (from `source`, at `position`) as its records and the
    object keys it holds: a `formats.Parse` for `formats.iter_json_documents`. A document
    of another shape comes back as plain JSON values, for `json_request_records` to say
    what it is. Raises msgspec's errors for what only the standard parser reads (NaN, lone
    surrogates, numbers beyond a double, malformed JSON)."""
    try:
        request = _DECODER.decode(data)
    except msgspec.ValidationError:
        request = None
    if request is None or (
        _get(request.resourceSpans) is None and _get(request.resourceLogs) is None
    ):
        return formats.parse_plain(data)  # no request (or an empty one): say what it is
    read = Read()
    _request_records(request, Where(source, position), read)
    return read, read.keys


def json_request_records(doc: object, source: str, position: str) -> Iterator[Record]:
    """Records of one OTLP/JSON export request (traces or logs): what `parse_request`
    read, or plain JSON values (what the standard parser reads, `formats._Framer.standard`)."""
    if isinstance(doc, Read):
        yield from doc.records
        return
    if not isinstance(doc, Mapping):
        yield InputError(
            source, position, f"not an OTLP traces/logs request: a JSON {type(doc).__name__}"
        )
        return
    _camel_case(doc)
    if doc.get("resourceSpans") is None and doc.get("resourceLogs") is None:
        if doc:  # `{}` is a valid empty request
            keys = ", ".join(sorted(map(str, doc))[:6])
            yield InputError(
                source,
                position,
                "not an OTLP traces/logs request: a JSON object with keys "
                f"{keys}; expected resourceSpans or resourceLogs",
            )
        return
    read = Read()
    _request_records(_granular(doc, _Request, "request"), Where(source, position), read)
    yield from read.records


def _children(cls: type[Struct]) -> tuple[tuple[str, type[Struct], bool], ...]:
    """The fields of `cls` that hold structs: (name, struct type, whether a list of them)."""
    out = []
    for field in msgspec.inspect.type_info(cls).fields:  # type: ignore[attr-defined]
        union = isinstance(field.type, msgspec.inspect.UnionType)
        kinds = field.type.types if union else (field.type,)  # type: ignore[attr-defined]
        for kind in kinds:
            if isinstance(kind, msgspec.inspect.ListType) and isinstance(
                kind.item_type, msgspec.inspect.StructType
            ):
                out.append((field.name, kind.item_type.cls, True))
            elif isinstance(kind, msgspec.inspect.StructType):
                out.append((field.name, kind.cls, False))
    return tuple(out)


_CHILDREN: dict[type, tuple[tuple[str, type[Struct], bool], ...]] = {
    struct: _children(struct) for struct in _STRUCTS
}


def _granular(value: Any, cls: type, path: str) -> Any:
    """`value` (plain JSON values) as a `cls`; where that fails, the same piece by piece:
    the struct without its struct-holding fields, then each of those alone, so only the
    piece of the wrong JSON type becomes a `_Misshapen` (for an attribute entry, the key of
    a `_KeyValue`, so that `_json_attrs` reports and drops it). Only for a request the
    whole decode refused: good pieces convert whole, once."""
    try:
        return msgspec.convert(value, cls)
    except _SHAPE_ERRORS as exc:
        error = str(exc)
    children = _CHILDREN.get(cls, ())
    if type(value) is not dict or not children:
        return _Misshapen(path, error)
    names = {name for name, _, _ in children}
    struct: Struct = msgspec.convert({k: v for k, v in value.items() if k not in names}, cls)
    for name, child, many in children:
        raw = value.get(name)
        if raw is None:
            continue
        if not many:
            piece = _granular(raw, child, name)
        elif type(raw) is list:
            piece = [_granular(item, child, f"{name}[{i}]") for i, item in enumerate(raw)]
        else:
            piece = [_granular(raw, list, name)]  # msgspec's words for "not a list"
        if many and child is _KeyValue:
            piece = [_KeyValue(key=p) if type(p) is _Misshapen else p for p in piece]
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


def _present(struct: Struct) -> int:
    """How many of the struct's fields the JSON object held (absent ones are UNSET)."""
    fields = astuple(struct)
    return len(fields) - fields.count(UNSET)


def _request_records(request: _Request, where: Where, read: Read) -> None:
    read.keys += _present(request)
    # A `_Misshapen` in a list (only after `_granular`) is skipped with a row saying so.
    for outer, inner, items, read_item in _BLOCKS:
        for i, block in enumerate(getattr(request, outer) or ()):
            if type(block) is _Misshapen:
                _skipped(block, where, read)
                continue
            block_where = where.at(f"{outer}[{i}]")
            resource = _resource(block.resource, f"{outer}[{i}]", block_where, read)
            read.keys += _present(block)
            for j, scope_block in enumerate(getattr(block, inner) or ()):
                if type(scope_block) is _Misshapen:
                    _skipped(scope_block, block_where, read)
                    continue
                scope_where = block_where.at(f"{inner}[{j}]")
                scope = _scope(scope_block.scope, scope_where, read)
                read.keys += _present(scope_block)
                for k, item in enumerate(getattr(scope_block, items) or ()):
                    if type(item) is _Misshapen:
                        _skipped(item, scope_where, read)
                    else:
                        read_item(item, scope_where, k, resource, scope, read)


def _skipped(piece: _Misshapen, container: Where, read: Read) -> None:
    read.records.append(container.at(piece.path).error(f"{piece}; skipped"))


def _resource(
    resource: _Resource | None, block: str, where: Where, read: Read
) -> dict[str, AttrValue]:
    if not isinstance(resource, _Resource):
        if type(resource) is _Misshapen:  # its spans are kept, as when its attributes are
            read.records.append(
                where.error(
                    f"the resource of {block} is malformed ({resource.error}); its "
                    "attributes dropped"
                )
            )
        return {}
    errors: list[InputError] = []
    attributes = _json_attrs(
        resource.attributes, f"the resource of {block}", collect(errors, where), read
    )
    read.keys += _present(resource) + formats.count_keys(resource.entityRefs)
    read.records.extend(errors)
    return attributes


def _scope(scope: _Scope | None, where: Where, read: Read) -> _Scope:
    if not isinstance(scope, _Scope):
        if type(scope) is _Misshapen:  # its records are kept, without the scope's name
            read.records.append(where.error(f"{scope}; read as no scope"))
        return _NO_SCOPE
    read.keys += _present(scope) + formats.count_keys(scope.attributes)
    return scope


_NO_SCOPE = _Scope()


def _as_text(raw: Any) -> str:
    """`text` without the report: a span's name is read before its ids settle who to blame."""
    if raw is None or raw is UNSET:
        return ""
    return raw if isinstance(raw, str) else str(raw)


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
        raise BadInput(f"{what} is not a string: {str(raw)[:40]!r}")
    else:
        try:
            value = decode_json_bytes(raw)  # either alphabet, as a bytesValue
        except AnyValueError:
            value = b""
    if len(value) != size:
        raise BadInput(f"{what} {raw[:64]!r} is not {size} bytes of hex or base64")
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
    raise BadInput(f"{what} is not an unsigned integer: {str(raw)[:40]!r}")


def _json_time(raw: Any, what: str) -> int:
    return unix_nano(_json_uint(raw, what), what)


def _json_enum(
    raw: Any,
    names: Mapping[str, int],
    values: frozenset[int],
    prefix: str,
    what: str,
    report: Report,
) -> int:
    """An enum given as a number or a name ('SPAN_KIND_CLIENT', also 'CLIENT'); unknown -> 0."""
    if type(raw) is int and raw in values:
        return raw
    if raw is None or raw is UNSET:
        return 0
    number: int | None = None
    if isinstance(raw, str) and not raw.strip().isdigit():
        value = names.get(raw, names.get(prefix + raw.upper()))
        if value is not None:
            return value
    else:
        with suppress(BadInput):
            number = _json_uint(raw, what)
    return known_enum(raw if number is None else number, values, what, report)


def _json_span(
    span: _Span,
    where: Where,
    index: int,
    resource: Mapping[str, AttrValue],
    scope: _Scope,
    read: Read,
) -> None:
    """Span `index` of the scope block at `where`: its record, then its errors."""
    raw_name = span.name
    head = span_head(
        _as_text(raw_name),
        where,
        _json_id,
        (
            _get(span.traceId),
            _get(span.spanId),
            _get(span.parentSpanId),
        ),
        ("traceId", "spanId", "parentSpanId"),
        f"spans[{index}]",
    )
    status = span.status if isinstance(span.status, _Status) else _NO_STATUS
    read.keys += _present(span) + _present(status) + formats.count_keys(span.links)
    if isinstance(head, InputError):
        read.records.append(head)
        return
    owner, report = head.owner, head.report
    if type(raw_name) is not str:
        text(_get(raw_name), "span name", report)
    attributes = _json_attrs(span.attributes, owner, report, read)
    try:
        if type(span.status) is _Misshapen:
            raise BadInput(str(span.status))
        events = tuple(_json_event(e, owner, report, read) for e in span.events or ())
        start = _json_time(_get(span.startTimeUnixNano), "startTimeUnixNano")
        end = _json_time(_get(span.endTimeUnixNano), "endTimeUnixNano")
    except BadInput as exc:
        read.records.append(
            where.error(f"{owner} skipped: {exc}", span_id=head.span_id, trace_id=head.trace_id)
        )
        return
    record = RawSpan(
        trace_id=head.trace_id,
        span_id=head.span_id,
        parent_span_id=head.parent_span_id,
        name=head.name,
        kind=_json_enum(span.kind, SPAN_KINDS, KIND_VALUES, "SPAN_KIND_", "kind", report),
        start_unix_nano=start,
        end_unix_nano=end,
        status_code=_json_enum(
            status.code, STATUS_CODES, STATUS_VALUES, "STATUS_CODE_", "status.code", report
        ),
        status_message=text(_get(status.message), "status.message", report),
        attributes=attributes,
        events=events,
        resource=resource,
        scope_name=text(_get(scope.name), "scope.name", report),
        scope_version=text(_get(scope.version), "scope.version", report),
        source=where.source,
        position=where.position,
    )
    check_span_times(head, start, end)
    read.records.append(record)
    if head.errors:
        read.records.extend(head.errors)


_NO_STATUS = _Status()


def _json_event(event: _Event, owner: str, report: Report, read: Read) -> RawEvent:
    if type(event) is _Misshapen:
        raise BadInput(str(event))
    read.keys += _present(event)
    name = text(_get(event.name), f"event name of {owner}", report)
    return RawEvent(
        name=name,
        time_unix_nano=_json_time(_get(event.timeUnixNano), "event timeUnixNano"),
        attributes=_json_attrs(event.attributes, f"event {name!r} of {owner}", report, read),
    )


def _json_attrs(
    items: list[_KeyValue] | None, owner: str, report: Report, read: Read
) -> dict[str, AttrValue]:
    """Attributes as a dict (a later repeated key wins), counting the object keys the
    entries hold. A value is decoded by `decode_json_any_value`; a bad one is dropped and
    an over-long one cut, each reported (`decode_attrs`), as is an entry without a string
    key.

    A value is decoded without a reporter first (a closure per attribute costs as much as
    decoding it); only one that is dropped or cut, rare, is decoded again, reported."""
    out: dict[str, AttrValue] = {}
    if not items:
        return out
    keys = 0
    for item in items:
        key, value = item.key, item.value
        keys += (key is not UNSET) + (value is not UNSET)
        if type(value) is dict:  # counted here: nearly every value is one scalar kind
            keys += len(value)
            for inner in value.values():
                if type(inner) is dict or type(inner) is list:
                    keys += formats.count_keys(inner)
        elif value is UNSET:
            value = None
        elif type(value) is list:
            keys += formats.count_keys(value)
        if key is UNSET:  # proto3 JSON omits default values, so a missing key is ""
            key = ""
        elif type(key) is not str:
            if type(key) is _Misshapen:  # `_granular` put it there
                report(f"{key.path} of {owner} is malformed ({key.error}); dropped")
            else:
                report(f"attribute entry without a string key dropped: {str(key)[:80]!r}")
            continue
        try:
            out[key] = decode_json_any_value(value, _cut)
        except (AnyValueError, _Cut):
            out.update(decode_attrs(iter(((key, value),)), decode_json_any_value, owner, report))
    read.keys += keys
    return out


class _Cut(Exception):
    """A value too long to keep whole: decoded again by `decode_attrs`, which says so."""


def _cut(length: int) -> None:
    raise _Cut


def _json_log(
    log: _Log, where: Where, index: int, resource: Mapping[str, AttrValue], _: _Scope, read: Read
) -> None:
    """Log record `index` of the scope block at `where` (its scope is not kept): its record,
    then its errors."""
    where = where.at(f"logRecords[{index}]")
    read.keys += _present(log) + formats.count_keys(log.body)
    errors: list[InputError] = []
    report = collect(errors, where)
    trace_id, span_id = log_ids(
        _json_id, (_get(log.traceId), _get(log.spanId)), ("traceId", "spanId"), report
    )
    attributes = _json_attrs(log.attributes, "log record", report, read)
    try:
        body = decode_json_any_value(
            _get(log.body),
            lambda n: report(f"log record body is {n} characters long; truncated"),
        )
    except AnyValueError as exc:
        report(f"log record body dropped: {exc}")
        body = None
    try:
        time = _json_time(_get(log.timeUnixNano), "timeUnixNano") or (
            _json_time(
                _get(log.observedTimeUnixNano),
                "observedTimeUnixNano",
            )
        )
    except BadInput as exc:
        read.records.append(where.error(f"log record skipped: {exc}"))
        return
    read.records.append(
        RawLog(
            trace_id=trace_id,
            span_id=span_id,
            event_name=event_name(text(_get(log.eventName), "eventName", report), attributes),
            time_unix_nano=time,
            body=body,
            attributes=attributes,
            resource=resource,
            source=where.source,
            position=where.position,
        )
    )
    read.records.extend(errors)


_BLOCKS = (
    ("resourceSpans", "scopeSpans", "spans", _json_span),
    ("resourceLogs", "scopeLogs", "logRecords", _json_log),
)
"""The request's two trees: (resource blocks, scope blocks, records, their reader)."""
