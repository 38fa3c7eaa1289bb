"""What the OTLP/JSON (`otlp_json`) and protobuf (`otlp_pb`) readers share: positions,
error reporting, attribute decoding, and how a span's ids are settled.

Both readers settle a span's ids the same way (`span_head`): without a valid trace id
and span id the span is skipped with an error naming it; a malformed parent id is
reported and the span kept as a root. Only how an id is spelled differs.

Both check times and enums the same way too: a time past `MAX_UNIX_NANO` (int64, what
every store and clock downstream holds) makes the span unusable; a start time of 0 or
before 2000, or an end before the start, keeps the span, with a row saying so
(`check_span_times`); an enum value the protos do not name is reported and read as 0
(`known_enum`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple, TypeAlias

from opentelemetry.proto.trace.v1 import trace_pb2

from turnscore.ingest.anyvalue import MAX_ATTRIBUTE_VALUE_CHARS, AnyValueError
from turnscore.ingest.attributes import EVENT_NAME
from turnscore.ingest.records import AttrValue, InputError, RawLog, RawSpan

Record: TypeAlias = RawSpan | RawLog | InputError
Report = Callable[[str], None]
"""Records one problem with the record being read."""
IdReader = Callable[[Any, int, str], str | None]
"""Reads one id field as (raw value, size in bytes, field name): lowercase hex, None when
unset; raises `BadInput` when malformed."""

SPAN_KINDS: Mapping[str, int] = dict(trace_pb2.Span.SpanKind.items())
STATUS_CODES: Mapping[str, int] = dict(trace_pb2.Status.StatusCode.items())
KIND_VALUES = frozenset(SPAN_KINDS.values())
STATUS_VALUES = frozenset(STATUS_CODES.values())
TRACE_ID_BYTES, SPAN_ID_BYTES = 16, 8
MAX_UNIX_NANO = 2**63 - 1
"""Latest time a span may carry (2262-04-11): timestamps are int64 nanoseconds downstream."""
EARLIEST_UNIX_NANO = 946_684_800 * 10**9
"""2000-01-01: a span starting before it has an unset or garbled clock (reported, kept)."""


class BadInput(ValueError):
    """A field that makes the span or log record unusable; becomes an InputError."""


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


def collect(errors: list[InputError], where: Where) -> Report:
    """A report function that appends an InputError at `where` to `errors`."""

    def report(message: str) -> None:
        errors.append(where.error(message))

    return report


def decode_attrs(
    pairs: Iterator[tuple[str, Any]],
    decode: Callable[[Any, Callable[[int], None]], AttrValue],
    owner: str,
    report: Report,
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


def log_ids(
    read_id: IdReader, ids: tuple[Any, Any], fields: tuple[str, str], report: Report
) -> tuple[str | None, str | None]:
    """A log record's (trace id, span id), as given in `ids`, read with `read_id`; `fields`
    names them as the format spells them. A malformed one is reported and read as absent:
    the record is kept, unlinked."""
    out: list[str | None] = []
    for raw, size, what in zip(ids, (TRACE_ID_BYTES, SPAN_ID_BYTES), fields, strict=True):
        try:
            out.append(read_id(raw, size, what))
        except BadInput as exc:
            report(f"log record {exc}; kept without it")
            out.append(None)
    return out[0], out[1]


def event_name(explicit: str, attributes: Mapping[str, AttrValue]) -> str:
    if explicit:
        return explicit
    named = attributes.get(EVENT_NAME)
    return named if isinstance(named, str) else ""


@dataclass(slots=True)
class SpanHead:
    """A span's settled ids, and the problems found reading it (reported after it)."""

    name: str
    trace_id: str
    span_id: str
    where: Where
    parent_span_id: str | None = None
    errors: list[InputError] | None = None
    """None until something is reported (most spans have nothing to report)."""

    @property
    def owner(self) -> str:
        return f"span {self.name!r}"

    def report(self, message: str) -> None:
        error = self.where.error(message, span_id=self.span_id, trace_id=self.trace_id)
        if self.errors is None:
            self.errors = [error]
        else:
            self.errors.append(error)


def span_head(
    name: str,
    where: Where,
    read_id: IdReader,
    ids: tuple[Any, Any, Any],
    fields: tuple[str, str, str],
    path: str = "",
) -> SpanHead | InputError:
    """Read (trace id, span id, parent id), as given in `ids`, with `read_id`; `fields`
    names them as the format spells them. An InputError when the span must be skipped,
    at `path` under `where` (the span's other errors name it by its id)."""
    trace, span, parent = ids
    try:
        trace_id = read_id(trace, TRACE_ID_BYTES, fields[0])
        span_id = read_id(span, SPAN_ID_BYTES, fields[1])
        if trace_id is None or span_id is None:
            raise BadInput(f"{fields[0] if trace_id is None else fields[1]} is missing or zero")
    except BadInput as exc:
        return (where.at(path) if path else where).error(f"span {name!r} skipped: {exc}")
    head = SpanHead(name, trace_id, span_id, where)
    if parent is None or parent in ("", b""):
        return head
    try:
        head.parent_span_id = read_id(parent, SPAN_ID_BYTES, fields[2])
    except BadInput as exc:
        head.report(f"{head.owner}: {exc}; treated as a root span")
    return head


def unix_nano(value: int, what: str) -> int:
    """`value` when it fits the int64 nanoseconds every store holds; else `BadInput`."""
    if value > MAX_UNIX_NANO:
        raise BadInput(f"{what} {value} is past 2^63 - 1 ns (the year 2262)")
    return value


def check_span_times(head: SpanHead, start: int, end: int) -> None:
    """Report what is wrong with a usable span's times; the span keeps them as they are
    (the stored copy stays faithful) and turns read an end before the start as the start
    (`turnscore.ingest.decode.build_span`)."""
    if start < EARLIEST_UNIX_NANO:
        what = "0 (unset)" if start == 0 else f"{start} ns, before 2000"
        head.report(
            f"{head.owner}: start time is {what}; kept, so its turn is dated "
            f"{datetime.fromtimestamp(start / 1e9, UTC):%Y-%m-%d}"
        )
    if end < start:
        head.report(
            f"{head.owner}: ends {(start - end) / 1e6:.3f} ms before it starts; kept, with "
            "a duration of 0"
        )


def known_enum(value: Any, values: frozenset[int], what: str, report: Report) -> int:
    """`value` when the protos name it (`KIND_VALUES`, `STATUS_VALUES`); else reported and
    read as 0 (unspecified)."""
    if type(value) is int and value in values:
        return value
    report(f"{what} {str(value)[:40]!r} is not a known value; read as 0 (unspecified)")
    return 0


def text(raw: Any, what: str, report: Report) -> str:
    """A string field; absent is "", any other JSON value is reported and kept as text."""
    if raw is None or isinstance(raw, str):
        return raw or ""
    report(f"{what} is not a string: {str(raw)[:40]!r}; read as text")
    return str(raw)
