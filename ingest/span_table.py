"""Spans as an Arrow table: the columnar form of `RawSpan` (DESIGN §1, the fast ingest path).

`OTLP_JSON_SCHEMA` is an OTLP/JSON traces request as pyarrow's JSON reader must see it:
every field of the OTLP protos, lowerCamelCase, so a file with anything else (another
spelling, a value of another type, deeper nesting than `AnyValue` here allows) fails to
parse and goes to the plain reader, which reports what is wrong. Nothing is ignored
silently.

`SPAN_TABLE` is one row per span, flattened out of requests, holding exactly what a
`RawSpan` holds; attribute values keep the OTLP/JSON `AnyValue` shape (`ANY_VALUE`), one
member set. An `AnyValue` nests at most one level here (an array or key-value list of
scalars), which is what instrumentation writes; deeper values take the plain path.
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["ANY_VALUE", "KEY_VALUES", "OTLP_JSON_SCHEMA", "SPAN_TABLE"]

_SCALAR_MEMBERS = [
    ("stringValue", pa.string()),
    ("boolValue", pa.bool_()),
    ("intValue", pa.string()),
    ("doubleValue", pa.float64()),
    ("bytesValue", pa.string()),
]
"""intValue as OTLP/JSON sends int64 (a decimal string); bytesValue as base64 text."""

_SCALAR = pa.struct(_SCALAR_MEMBERS)
ANY_VALUE = pa.struct(
    [
        *_SCALAR_MEMBERS,
        ("arrayValue", pa.struct([("values", pa.list_(_SCALAR))])),
        (
            "kvlistValue",
            pa.struct(
                [("values", pa.list_(pa.struct([("key", pa.string()), ("value", _SCALAR)])))]
            ),
        ),
    ]
)
KEY_VALUES = pa.list_(pa.struct([("key", pa.string()), ("value", ANY_VALUE)]))

_EVENT = pa.struct(
    [
        ("timeUnixNano", pa.string()),
        ("name", pa.string()),
        ("attributes", KEY_VALUES),
        ("droppedAttributesCount", pa.int64()),
    ]
)
_LINK = pa.struct(
    [
        ("traceId", pa.string()),
        ("spanId", pa.string()),
        ("traceState", pa.string()),
        ("attributes", KEY_VALUES),
        ("droppedAttributesCount", pa.int64()),
        ("flags", pa.int64()),
    ]
)
_SPAN = pa.struct(
    [
        ("traceId", pa.string()),
        ("spanId", pa.string()),
        ("traceState", pa.string()),
        ("parentSpanId", pa.string()),
        ("flags", pa.int64()),
        ("name", pa.string()),
        ("kind", pa.int64()),
        ("startTimeUnixNano", pa.string()),
        ("endTimeUnixNano", pa.string()),
        ("attributes", KEY_VALUES),
        ("droppedAttributesCount", pa.int64()),
        ("events", pa.list_(_EVENT)),
        ("droppedEventsCount", pa.int64()),
        ("links", pa.list_(_LINK)),
        ("droppedLinksCount", pa.int64()),
        ("status", pa.struct([("message", pa.string()), ("code", pa.int64())])),
    ]
)
_SCOPE_SPANS = pa.struct(
    [
        (
            "scope",
            pa.struct(
                [
                    ("name", pa.string()),
                    ("version", pa.string()),
                    ("attributes", KEY_VALUES),
                    ("droppedAttributesCount", pa.int64()),
                ]
            ),
        ),
        ("spans", pa.list_(_SPAN)),
        ("schemaUrl", pa.string()),
    ]
)
_RESOURCE_SPANS = pa.struct(
    [
        (
            "resource",
            pa.struct([("attributes", KEY_VALUES), ("droppedAttributesCount", pa.int64())]),
        ),
        ("scopeSpans", pa.list_(_SCOPE_SPANS)),
        ("schemaUrl", pa.string()),
    ]
)
OTLP_JSON_SCHEMA = pa.schema([("resourceSpans", pa.list_(_RESOURCE_SPANS))])

_EVENTS = pa.list_(
    pa.struct(
        [
            pa.field("name", pa.string(), nullable=False),
            pa.field("time_unix_nano", pa.int64(), nullable=False),
            pa.field("attributes", KEY_VALUES),
        ]
    )
)
SPAN_TABLE = pa.schema(
    [
        pa.field("trace_id", pa.string(), nullable=False),
        pa.field("span_id", pa.string(), nullable=False),
        pa.field("parent_span_id", pa.string()),
        pa.field("name", pa.string(), nullable=False),
        pa.field("kind", pa.int32(), nullable=False),
        pa.field("start_unix_nano", pa.int64(), nullable=False),
        pa.field("end_unix_nano", pa.int64(), nullable=False),
        pa.field("status_code", pa.int32(), nullable=False),
        pa.field("status_message", pa.string(), nullable=False),
        pa.field("attributes", KEY_VALUES),
        pa.field("events", _EVENTS),
        pa.field("resource", KEY_VALUES),
        pa.field("scope_name", pa.string(), nullable=False),
        pa.field("scope_version", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("position", pa.string(), nullable=False),
    ]
)
"""One row per span: the fields of `RawSpan`, same names and meaning. Ids are lowercase
hex; `parent_span_id` is null for a root; events and resource as in `RawSpan`."""
