"""Raw OTLP records: what a file says, decoded at the edge and nothing more.

`turnscore.ingest.otlp` turns OTLP JSON (both dialects) and protobuf into these frozen
records. Attribute values are decoded OTLP `AnyValue`s: `str`, `int`, `float`, `bool`,
`bytes`, `None`, `list` (arrayValue) or `dict` (kvlistValue). They are JSON by nature
and stay that way until a convention decoder (`turnscore.ingest.conventions`) reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

AttrValue: TypeAlias = (
    str | int | float | bool | bytes | list["AttrValue"] | dict[str, "AttrValue"] | None
)
Attributes: TypeAlias = Mapping[str, AttrValue]


@dataclass(frozen=True, slots=True)
class RawEvent:
    """A span event (`Span.events[]`)."""

    name: str
    time_unix_nano: int
    attributes: Attributes = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RawLink:
    """A span link (`Span.links[]`): a span, usually of another trace, this one follows
    from (OTel messaging: a consumer's span links to the producer's)."""

    trace_id: str
    span_id: str
    attributes: Attributes = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RawSpan:
    """One OTLP span with its resource and scope, ids as lowercase hex."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: int
    """OTLP SpanKind as an integer (0 unspecified, 1 internal, 2 server, 3 client, ...)."""
    start_unix_nano: int
    end_unix_nano: int
    status_code: int
    """0 unset, 1 ok, 2 error."""
    status_message: str
    attributes: Attributes
    events: tuple[RawEvent, ...] = ()
    links: tuple[RawLink, ...] = ()
    resource: Attributes = field(default_factory=dict)
    scope_name: str = ""
    scope_version: str = ""
    source: str = ""
    """File the span came from."""
    position: str = ""
    """Where in the file: 'line 3', 'request 2', 'byte 1024'."""


@dataclass(frozen=True, slots=True)
class RawLog:
    """One OTLP log record. GenAI content events arrive this way, linked to a span by ids."""

    trace_id: str | None
    span_id: str | None
    event_name: str
    """`eventName` field, else the `event.name` attribute, else ''."""
    time_unix_nano: int
    body: AttrValue
    attributes: Attributes
    resource: Attributes = field(default_factory=dict)
    source: str = ""
    position: str = ""
    occurrence: int = 0
    """How many records alike (same span, event name, time, body and attributes) came before
    it in its scope block of one request: records alike in one request are as many records
    (an instrumentation stamping in milliseconds, content not captured), while a retried
    request repeats them with the same occurrences, so its copies are found as copies."""


WHOLE_FILE = "file"
"""`InputError.position` of a problem with a whole file (unreadable, empty, not OTLP)."""


@dataclass(frozen=True, slots=True)
class InputError:
    """Something in the input that could not be read. Becomes an `ingest_errors` row."""

    source: str
    position: str
    """Line, request, byte offset or span id: where to look."""
    message: str
    span_id: str | None = None
    trace_id: str | None = None
