"""The one decoder of OTLP records: a `ResourceSpans` / `ResourceLogs` block, decoded by
`otlp_json` (msgspec structs) or `otlp` (upb messages), to raw records. Both give
objects with protobuf's snake_case field names, so one walker and one span and log
builder read both; a `Dialect` says only how a field is spelled in its encoding: ids (hex
or base64 text, or bytes), int64 times (decimal text, or an int), enums (a number or a
name), strings, attribute values, and the field names its errors give.

A span without a valid trace id and span id is skipped with an error naming it; a
malformed parent id is reported and the span kept as a root. A time past `MAX_UNIX_NANO`
(int64, what every store and clock downstream holds) makes the span unusable; a start
time of 0 or before 2000, or an end before the start, keeps the span, with a row saying
so (`_check_times`); an enum value the protos do not name is reported and read as 0
(`known_enum`). A piece of a JSON request of the wrong JSON type is a `Misshapen` where
its struct would be (`otlp_json._granular`): it costs that piece, with a row naming it.

(Just past the ~400-line guide: the walker, the span and log builders and the two
`Dialect`s they are read through are one decoder; apart, each would only make sense
beside the others.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, NamedTuple, TypeAlias

from msgspec import UNSET
from opentelemetry.proto.trace.v1 import trace_pb2

from turnscore.ingest.anyvalue import MAX_ATTRIBUTE_VALUE_CHARS, AnyValueError, OnTruncate
from turnscore.ingest.attributes import EVENT_NAME
from turnscore.ingest.record_turns import anchor, anchor_span
from turnscore.ingest.records import AttrValue, InputError, RawEvent, RawLink, RawLog, RawSpan

Record: TypeAlias = RawSpan | RawLog | InputError
Report = Callable[[str], None]
"""Records one problem with the record being read."""

TRACE_ID_BYTES, SPAN_ID_BYTES = 16, 8
MAX_UNIX_NANO = 2**63 - 1
"""Latest time a span may carry (2262-04-11): timestamps are int64 nanoseconds downstream."""
EARLIEST_UNIX_NANO = 946_684_800 * 10**9
"""2000-01-01: a span starting before it has an unset or garbled clock (reported, kept)."""


class BadInput(ValueError):
    """A field that makes the span or log record unusable; becomes an InputError."""


class Enum(NamedTuple):
    """An OTLP enum field: its values by name, the values, the names' prefix, the field."""

    names: Mapping[str, int]
    values: frozenset[int]
    prefix: str
    what: str


def _enum(proto: Any, prefix: str, what: str) -> Enum:
    names = dict(proto.items())
    return Enum(names, frozenset(names.values()), prefix, what)


SPAN_KIND = _enum(trace_pb2.Span.SpanKind, "SPAN_KIND_", "kind")
STATUS_CODE = _enum(trace_pb2.Status.StatusCode, "STATUS_CODE_", "status.code")


class Dialect(NamedTuple):
    """How one encoding spells fields. `id`, `time` and `attrs` take the field's name in
    snake_case and raise `BadInput` naming it as the encoding spells it (`spell`)."""

    id: Callable[[Any, int, str], str | None]
    """Lowercase hex of an id of so many bytes; None when unset or zero."""
    time: Callable[[Any, str], int]
    """Unix nanoseconds; 0 when unset."""
    enum: Callable[[Any, Enum, Report], int]
    text: Callable[[Any, str, Report], str]
    """A string field; "" when unset."""
    attrs: Callable[[Any, str, Report], dict[str, AttrValue]]
    """Attributes of an owner ('span ...') as a dict."""
    value: Callable[[Any, OnTruncate], AttrValue]
    """One AnyValue (a log record's body); raises `AnyValueError`."""
    spell: Callable[[str], str]


class Where(NamedTuple):
    """Where a record sits: the file, the request's position and the path inside it.
    (A tuple: one is made per span, and a tuple is made in C.)"""

    source: str
    position: str
    path: str = ""

    def at(self, path: str) -> Where:
        return Where(self.source, self.position, f"{self.path}.{path}" if self.path else path)

    def error(
        self, message: str, span_id: str | None = None, trace_id: str | None = None
    ) -> InputError:
        where = f"{self.position}, span {span_id}" if span_id else self.position
        if self.path and not span_id:
            where = f"{where}, {self.path}"
        return InputError(self.source, where, message, span_id=span_id, trace_id=trace_id)


class Misshapen:
    """A piece of a JSON request of the wrong JSON type, where its struct would be."""

    __slots__ = ("error", "path")

    def __init__(self, path: str, error: str) -> None:
        self.path = path
        """Where it sits in its container: 'spans[3]', or 'attributes' for a whole list."""
        self.error = error
        """What msgspec said of it ('Expected `object`, got `str`')."""

    def __str__(self) -> str:
        return f"{self.path} is malformed ({self.error})"


class _Absent:
    """A scope or status a JSON request does not give: every field unset."""

    __slots__ = ()
    name = version = code = message = None


_ABSENT = _Absent()
_NO_PARENT = (None, "", b"", UNSET)


class Tree(NamedTuple):
    """One of a request's two trees: its resource blocks, scope blocks and records (fields
    named in snake_case, as paths name them in lowerCamelCase), and their builder."""

    blocks: str
    scopes: str
    items: str
    build: Callable[..., None]

    @property
    def blocks_path(self) -> str:
        return camel(self.blocks)


_SNAKE_WORD = re.compile(r"_([a-z])")


def camel(what: str) -> str:
    """A field's name ('event time_unix_nano') as JSON spells it ('event timeUnixNano')."""
    return _SNAKE_WORD.sub(lambda m: m[1].upper(), what)


def block_records(d: Dialect, tree: Tree, block: Any, where: Where, records: list[Record]) -> None:
    """The records of one resource block at `where` (its path 'resourceSpans[3]'),
    appended to `records`; each record is followed by its errors."""
    resource = _resource(d, block.resource, where, records)
    for j, scope_block in enumerate(getattr(block, tree.scopes) or ()):
        if type(scope_block) is Misshapen:
            skipped(scope_block, where, records)
            continue
        scope_where = where.at(f"{camel(tree.scopes)}[{j}]")
        scope = scope_block.scope
        if scope is None or scope is UNSET or type(scope) is Misshapen:
            if type(scope) is Misshapen:  # its records are kept, without the scope's name
                records.append(scope_where.error(f"{scope}; read as no scope"))
            scope = _ABSENT
        names = (scope.name, scope.version)  # read once: a span reports a bad one
        start = len(records)
        for k, item in enumerate(getattr(scope_block, tree.items) or ()):
            if type(item) is Misshapen:
                skipped(item, scope_where, records)
            else:
                tree.build(d, item, scope_where, k, resource, names, records)
        if tree is LOGS:
            _count_alike(records, start)


def _count_alike(records: list[Record], start: int) -> None:
    """Numbers the log records alike from `start` on (`RawLog.occurrence`). Most records
    differ in their span, name or time; only those that share all three are compared."""
    seen: dict[tuple[str | None, str | None, str, int], list[RawLog]] = {}
    for i in range(start, len(records)):
        log = records[i]
        if type(log) is not RawLog:
            continue
        same = seen.setdefault((log.trace_id, log.span_id, log.event_name, log.time_unix_nano), [])
        alike = sum(o.body == log.body and o.attributes == log.attributes for o in same)
        same.append(log)
        if alike:
            records[i] = replace(log, occurrence=alike)


def skipped(piece: Misshapen, container: Where, records: list[Record]) -> None:
    records.append(container.at(piece.path).error(f"{piece}; skipped"))


def _resource(
    d: Dialect, resource: Any, where: Where, records: list[Record]
) -> Mapping[str, AttrValue]:
    if resource is None or resource is UNSET:
        return {}
    if type(resource) is Misshapen:  # its spans are kept, as when its attributes are
        records.append(
            where.error(
                f"the resource of {where.path} is malformed ({resource.error}); its "
                "attributes dropped"
            )
        )
        return {}
    errors: list[InputError] = []
    attributes = d.attrs(
        resource.attributes, f"the resource of {where.path}", collect(errors, where)
    )
    records.extend(errors)
    return attributes


def collect(errors: list[InputError], where: Where) -> Report:
    """A report function that appends an InputError at `where` to `errors`."""

    def report(message: str) -> None:
        errors.append(where.error(message))

    return report


def _as_text(raw: Any) -> str:
    """A span's name without the report: it is read before its ids settle who to blame."""
    if raw is None or raw is UNSET:
        return ""
    return raw if isinstance(raw, str) else str(raw)


def span_record(
    d: Dialect,
    span: Any,
    where: Where,
    index: int,
    resource: Mapping[str, AttrValue],
    scope: tuple[Any, Any],
    records: list[Record],
) -> None:
    """Span `index` of the scope block at `where`: its record, then its errors. `scope` is
    its scope's (name, version)."""
    raw_name = span.name
    name = raw_name if type(raw_name) is str else _as_text(raw_name)
    try:
        trace_id = d.id(span.trace_id, TRACE_ID_BYTES, "trace_id")
        span_id = d.id(span.span_id, SPAN_ID_BYTES, "span_id")
        if trace_id is None or span_id is None:
            missing = "trace_id" if trace_id is None else "span_id"
            raise BadInput(f"{d.spell(missing)} is missing or zero")
    except BadInput as exc:
        records.append(where.at(f"spans[{index}]").error(f"span {name!r} skipped: {exc}"))
        return
    errors: list[InputError] = []

    def report(message: str) -> None:
        errors.append(where.error(message, span_id=span_id, trace_id=trace_id))

    owner = f"span {name!r}"
    parent_span_id = None
    if span.parent_span_id not in _NO_PARENT:
        try:
            parent_span_id = d.id(span.parent_span_id, SPAN_ID_BYTES, "parent_span_id")
        except BadInput as exc:
            report(f"{owner}: {exc}; treated as a root span")
    if type(raw_name) is not str:
        d.text(raw_name, "span name", report)
    attributes = d.attrs(span.attributes, owner, report)
    status = span.status
    try:
        if type(status) is Misshapen:
            raise BadInput(str(status))
        events = tuple(_event(d, e, owner, report) for e in span.events) if span.events else ()
        links = tuple(_links(d, span.links, owner, report)) if span.links else ()
        start = d.time(span.start_time_unix_nano, "start_time_unix_nano")
        end = d.time(span.end_time_unix_nano, "end_time_unix_nano")
    except BadInput as exc:
        records.append(where.error(f"{owner} skipped: {exc}", span_id=span_id, trace_id=trace_id))
        return
    if status is None or status is UNSET:
        status = _ABSENT
    kind = d.enum(span.kind, SPAN_KIND, report)
    status_code = d.enum(status.code, STATUS_CODE, report)
    message, (scope_name, scope_version) = status.message, scope
    if type(message) is not str:  # the usual string is taken as it is, here and below
        message = d.text(message, "status.message", report)
    if type(scope_name) is not str:
        scope_name = d.text(scope_name, "scope.name", report)
    if type(scope_version) is not str:
        scope_version = d.text(scope_version, "scope.version", report)
    records.append(anchor_span(
        RawSpan(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=parent_span_id,
            name=name,
            kind=kind,
            start_unix_nano=start,
            end_unix_nano=end,
            status_code=status_code,
            status_message=message,
            attributes=attributes,
            events=events,
            links=links,
            resource=resource,
            scope_name=scope_name,
            scope_version=scope_version,
            source=where.source,
            position=where.position,
        )
    ))
    _check_times(owner, start, end, report)
    records.extend(errors)


def _event(d: Dialect, event: Any, owner: str, report: Report) -> RawEvent:
    if type(event) is Misshapen:
        raise BadInput(str(event))
    name = d.text(event.name, f"event name of {owner}", report)
    return RawEvent(
        name=name,
        time_unix_nano=d.time(event.time_unix_nano, "event time_unix_nano"),
        attributes=d.attrs(event.attributes, f"event {name!r} of {owner}", report),
    )


def _links(d: Dialect, links: Any, owner: str, report: Report) -> Iterator[RawLink]:
    """A span's links; one that names no span is dropped with a row, the span kept."""
    for i, link in enumerate(links):
        what = f"link {i} of {owner}"
        try:
            if type(link) is Misshapen:
                raise BadInput(str(link))
            trace_id = d.id(link.trace_id, TRACE_ID_BYTES, "trace_id")
            span_id = d.id(link.span_id, SPAN_ID_BYTES, "span_id")
            if trace_id is None or span_id is None:
                raise BadInput(f"{d.spell('trace_id' if trace_id is None else 'span_id')} is "
                               "missing or zero")
        except BadInput as exc:
            report(f"{what} dropped: {exc}")
            continue
        yield RawLink(trace_id, span_id, d.attrs(link.attributes, what, report))


def log_record(
    d: Dialect,
    log: Any,
    where: Where,
    index: int,
    resource: Mapping[str, AttrValue],
    _: Any,
    records: list[Record],
) -> None:
    """Log record `index` of the scope block at `where` (its scope is not kept): its record,
    then its errors. A malformed id is reported and read as absent: the record is kept,
    unlinked (`_log_id`)."""
    where = where.at(f"logRecords[{index}]")
    errors: list[InputError] = []
    report = collect(errors, where)
    trace_id = _log_id(d, log.trace_id, TRACE_ID_BYTES, "trace_id", report)
    span_id = _log_id(d, log.span_id, SPAN_ID_BYTES, "span_id", report)
    attributes = d.attrs(log.attributes, "log record", report)
    try:
        body = d.value(
            log.body, lambda n: report(f"log record body is {n} characters long; truncated")
        )
    except AnyValueError as exc:
        report(f"log record body dropped: {exc}")
        body = None
    try:
        time = d.time(log.time_unix_nano, "time_unix_nano") or d.time(
            log.observed_time_unix_nano, "observed_time_unix_nano"
        )
    except BadInput as exc:
        records.append(where.error(f"log record skipped: {exc}"))
        return
    event_name = event_name_of(d.text(log.event_name, "eventName", report), attributes)
    records.append(anchor(
        RawLog(
            trace_id=trace_id,
            span_id=span_id,
            event_name=event_name,
            time_unix_nano=time,
            body=body,
            attributes=attributes,
            resource=resource,
            source=where.source,
            position=where.position,
        )
    ))  # fmt: skip
    records.extend(errors)


_CODE_LOCATION = re.compile(r"(?:event\s+)?[\w.\\/-]+\.\w+:\d+(?::\d+)?")
"""A source location, `path/file.ext:line`: what a logging bridge writes for a record whose
logger gave no event name. Rust's `tracing` names every event so (`event {file}:{line}`,
tokio-rs/tracing `tracing/src/macros.rs`, `concat!("event ", file!(), ":", line!())`), and
the `opentelemetry-appender-tracing` bridge exports that name as the record's `eventName`
(opentelemetry-rust `opentelemetry-appender-tracing/src/layer.rs`: `meta.name()`); the
application names the event in its `event.name` field (Codex CLI: `codex-rs/otel`
`log_event!`, `event.name = "codex.user_prompt"`)."""


def event_name_of(given: str, attributes: Mapping[str, AttrValue]) -> str:
    """A log record's event name: its `eventName`, else its `event.name` attribute (the
    name before OTLP had the field). A code location is not an event name: where the
    `eventName` is one (`_CODE_LOCATION`), the attribute names the event, and with no
    attribute the record names none."""
    if given and not _CODE_LOCATION.fullmatch(given):
        return given
    named = attributes.get(EVENT_NAME)
    return named if isinstance(named, str) else ""


def _log_id(d: Dialect, raw: Any, size: int, what: str, report: Report) -> str | None:
    """A log record's id; a malformed one is reported and read as absent."""
    try:
        return d.id(raw, size, what)
    except BadInput as exc:
        report(f"log record {exc}; kept without it")
        return None


TRACES = Tree("resource_spans", "scope_spans", "spans", span_record)
LOGS = Tree("resource_logs", "scope_logs", "log_records", log_record)


def decode_attrs(
    pairs: Any,
    decode: Callable[[Any, OnTruncate], AttrValue],
    owner: str,
    report: Report,
) -> dict[str, AttrValue]:
    """Attributes as a dict from (key, raw value) pairs; a bad value is dropped and an
    over-long one cut, each reported. The slow path of both dialects' `attrs`, which
    read the usual value inline."""
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


def too_late(value: int, what: str) -> BadInput:
    return BadInput(f"{what} {value} is past 2^63 - 1 ns (the year 2262)")


def _check_times(owner: str, start: int, end: int, report: Report) -> None:
    """Report what is wrong with a usable span's times; the span keeps them as they are
    (the stored copy stays faithful) and turns read an end before the start as the start
    (`turnscore.ingest.decode.build_span`)."""
    if start < EARLIEST_UNIX_NANO:
        what = "0 (unset)" if start == 0 else f"{start} ns, before 2000"
        report(
            f"{owner}: start time is {what}; kept, so its turn is dated "
            f"{datetime.fromtimestamp(start / 1e9, UTC):%Y-%m-%d}"
        )
    if end < start:
        report(
            f"{owner}: ends {(start - end) / 1e6:.3f} ms before it starts; kept, with "
            "a duration of 0"
        )


def known_enum(value: Any, enum: Enum, report: Report) -> int:
    """`value` when the protos name it; else reported and read as 0 (unspecified)."""
    if type(value) is int and value in enum.values:
        return value
    report(f"{enum.what} {str(value)[:40]!r} is not a known value; read as 0 (unspecified)")
    return 0
