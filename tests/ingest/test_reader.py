"""The one OTLP reader: JSON framing (fast where msgspec reads the file, careful where it
does not) and the decoder of a request, for both JSON dialects and protobuf."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from turnscore.ingest.formats import JsonDocument, iter_json_documents
from turnscore.ingest.otlp import read_bytes
from turnscore.ingest.records import InputError, RawSpan

REPEATED = "a JSON object repeats the key {!r}; JSON keeps only the last value, so the request is ambiguous: skipped"  # noqa: E501

FRAMINGS: dict[str, tuple[str, list[tuple[str, Any]]]] = {
    "json lines": ('{"a":1}\n{"b":2}\n', [("line 1", {"a": 1}), ("line 2", {"b": 2})]),
    "blank lines and CRLF": (
        '\n\n  {"a":1}\r\n\n{"b":[1,2]}', [("line 3", {"a": 1}), ("line 5", {"b": [1, 2]})]
    ),
    "pretty-printed": ('{\n "a": 1\n}\n', [("request 1 (line 1)", {"a": 1})]),
    "pretty-printed after a blank line": (
        '  \n{\n "a": 1\n}\n{"b":2}\n', [("request 1 (line 2)", {"a": 1}), ("line 5", {"b": 2})]
    ),
    "two on a line": (
        '{"a":1}{"b":2}\n{"c":3}',
        [("line 1", {"a": 1}), ("line 1", {"b": 2}), ("line 2", {"c": 3})],
    ),
    "truncated line": (
        '{"a":1}\n{"b":\n{"c":3}\n',
        [("line 1", {"a": 1}),
         ("line 2", "malformed or truncated JSON: Expecting ',' delimiter at line 4 column 1; "
                    "skipped to line 3"),
         ("line 3", {"c": 3})],
    ),
    "integer beyond 64 bits": (
        '{"a":123456789012345678901234567890}', [("line 1", {"a": 123456789012345678901234567890})]
    ),
    "negative beyond 64 bits": (
        '{"a":1}\n{"a":-9223372036854775809}',
        [("line 1", {"a": 1}), ("line 2", {"a": -9223372036854775809})],
    ),
    "largest 64-bit integers": (
        '{"a":18446744073709551615,"b":-9223372036854775808}',
        [("line 1", {"a": 18446744073709551615, "b": -9223372036854775808})],
    ),
    "a number beyond a double": (
        '{"a":1e400,"b":5e-324}', [("line 1", {"a": math.inf, "b": 5e-324})]
    ),
    "array on line 2": ('{"a":1}\n[1,2]\n', [("line 1", {"a": 1}), ("line 2", [1, 2])]),
    "lone surrogate": (
        '{"a":"\\ud800"}\n{"b":1}',
        [("line 1", "1 lone UTF-16 surrogate escape(s) replaced with U+FFFD"),
         ("line 1", {"a": "\ufffd"}), ("line 2", {"b": 1})],
    ),
    "repeated key": ('{"a":1,"a":2}', [("line 1", REPEATED.format("a"))]),
    "repeated key inside, line 2": (
        '{"a":1}\n{"b":{"c":1,"c":2}}', [("line 1", {"a": 1}), ("line 2", REPEATED.format("c"))]
    ),
    "escaped key-like text in a string": ('{"a":"{\\"b\\":1}"}', [("line 1", {"a": '{"b":1}'})]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(FRAMINGS))
def test_framings(case: str) -> None:
    text, expected = FRAMINGS[case]
    got = [
        (d.position, d.value if isinstance(d, JsonDocument) else d.message)
        for d in iter_json_documents(text)
    ]
    assert got == expected


def test_nan_is_read_by_the_careful_framing() -> None:
    got = list(iter_json_documents('{"a":1}\n{"b":NaN}\n{"c":3}'))
    assert [d.position for d in got] == ["line 1", "line 2", "line 3"]
    assert isinstance(got[1], JsonDocument) and math.isnan(got[1].value["b"])  # type: ignore[index]


# --- one decoder, every encoding: the same spans give the same records ---------------------

HEX = "0123456789abcdef"
IDS = st.text(HEX, min_size=16, max_size=16).filter(lambda s: s.strip("0"))
TRACE_IDS = st.text(HEX, min_size=32, max_size=32).filter(lambda s: s.strip("0"))
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SCALARS = (
    st.booleans() | INT64 | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20) | st.binary(max_size=8)
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
ATTRIBUTES = st.dictionaries(st.text(max_size=12), VALUES, max_size=6)
TIMES = st.integers(min_value=946_684_800 * 10**9, max_value=2**62)


@st.composite
def spans(draw: st.DrawFn) -> dict[str, Any]:
    start = draw(TIMES)
    events = draw(st.lists(st.tuples(st.text(max_size=8), ATTRIBUTES), max_size=2))
    span: dict[str, Any] = {
        "traceId": draw(TRACE_IDS),
        "spanId": draw(IDS),
        "name": draw(st.text(max_size=12)),
        "kind": draw(st.integers(0, 5)),
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + draw(st.integers(0, 10**12))),
        "attributes": draw(ATTRIBUTES),
        "status": {"code": draw(st.integers(0, 2)), "message": draw(st.text(max_size=8))},
        "events": [
            {"name": name, "timeUnixNano": str(start), "attributes": attrs}
            for name, attrs in events
        ],
    }
    if draw(st.booleans()):
        span["parentSpanId"] = draw(IDS)
    return span


def _content(span: RawSpan) -> tuple[Any, ...]:
    return (
        span.trace_id, span.span_id, span.parent_span_id, span.name, span.kind,
        span.start_unix_nano, span.end_unix_nano, span.status_code, span.status_message,
        dict(span.attributes), span.events, dict(span.resource), span.scope_name,
        span.scope_version,
    )  # fmt: skip


def _read(data: bytes, source: str) -> list[tuple[Any, ...]]:
    records = list(read_bytes(data, source))
    assert [r for r in records if isinstance(r, InputError)] == []
    return [_content(r) for r in records if isinstance(r, RawSpan)]


@settings(max_examples=40, deadline=None)
@given(st.lists(spans(), min_size=1, max_size=4))
def test_json_dialects_and_protobuf_give_the_same_records(otlp_json: Any, drawn: list[Any]) -> None:
    for span in drawn:
        span["attributes"] = otlp_json.key_values(span["attributes"])
        for event in span["events"]:
            event["attributes"] = otlp_json.key_values(event["attributes"])
    request = otlp_json.traces_request(drawn)
    binary = otlp_json.to_protobuf(request)
    message = trace_service_pb2.ExportTraceServiceRequest.FromString(binary)
    spec = _read(json.dumps(request).encode(), "spec.json")
    assert len(spec) == len(drawn)
    assert _read(binary, "request.pb") == spec
    for snake in (False, True):  # protobuf's JSON mapping: base64 ids, enum names
        mapped = json_format.MessageToJson(message, preserving_proto_field_name=snake)
        assert _read(mapped.encode(), "mapped.json") == spec
        compact = json.dumps(json.loads(mapped), separators=(",", ":"))  # one line: fast path
        assert _read(compact.encode(), "mapped.jsonl") == spec
