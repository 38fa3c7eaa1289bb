"""The one OTLP reader: JSON framing (msgspec where it reads a document, the standard parser
where it does not) and the one decoder of records, for both JSON dialects and protobuf."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from turnscore.ingest.formats import JsonDocument, iter_json_documents
from turnscore.ingest.otlp import read_bytes
from turnscore.ingest.records import InputError, RawEvent, RawSpan

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
    "repeated key beside a blank before a colon": (
        '{"x" :1,"x":2}', [("line 1", REPEATED.format("x"))]
    ),
    "repeated key beside a key ending in a backslash": (
        '{"a\\\\":1,"b":2,"b":3}', [("line 1", REPEATED.format("b"))]
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(FRAMINGS))
def test_framings(case: str) -> None:
    text, expected = FRAMINGS[case]
    got = [
        (d.position, d.value if isinstance(d, JsonDocument) else d.message)
        for d in iter_json_documents(text)
    ]
    assert got == expected


def test_nan_is_read_by_the_standard_parser_in_its_place() -> None:
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


# --- a piece of the wrong JSON type costs that piece ----------------------------------

TRACE = "0af7651916cd43dd8448eb211c80319c"


def _id(n: int) -> str:
    return f"b7ad6b71692033{n:02x}"


def _kv(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def _wrong_shape_span(n: int) -> dict[str, Any]:
    start = 1_700_000_000_000_000_000 + n
    return {
        "traceId": TRACE, "spanId": _id(n), "name": f"span {n}", "kind": 3,
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 10**9),
        "attributes": [_kv("gen_ai.operation.name", {"stringValue": "chat"}),
                       _kv("n", {"intValue": str(n)})],
        "events": [{"name": "ev", "timeUnixNano": str(start),
                    "attributes": [_kv("e", {"boolValue": True})]}],
        "links": [{"traceId": TRACE, "spanId": _id(9)}],
        "status": {"code": 2, "message": "boom"},
    }  # fmt: skip


def _wrong_shape_request() -> dict[str, Any]:
    """Three spans in one scope block, one resource block."""
    return {"resourceSpans": [{
        "resource": {"attributes": [_kv("service.name", {"stringValue": "svc"})]},
        "scopeSpans": [{"scope": {"name": "sc", "version": "1"},
                        "spans": [_wrong_shape_span(n) for n in (1, 2, 3)]}],
    }]}  # fmt: skip


SCOPE = ("resourceSpans", 0, "scopeSpans", 0)
SPAN_2 = (*SCOPE, "spans", 1)
AT_2 = f"span {_id(2)}"
"""Where an error naming span 2 by its id sits, after the request's position."""
NO_SCOPE = {"scope_name": "", "scope_version": ""}
EVENT_2 = (RawEvent(name="ev", time_unix_nano=1_700_000_000_000_000_002, attributes={}),)
"""Span 2's event without its attribute."""

WRONG_SHAPES: dict[str, tuple[tuple[Any, ...], Any, list[int], dict[int, dict[str, Any]],
                              list[tuple[str, str]]]] = {
    # case: (path of the piece, its wrong value, spans kept, fields changed per span,
    #        error rows as (where after the request's position, message))
    "span not an object": (
        SPAN_2, "span 2", [1, 3], {},
        [("resourceSpans[0].scopeSpans[0].spans[1]",
          "spans[1] is malformed (Expected `object`, got `str`); skipped")],
    ),
    "spans not a list": (
        (*SCOPE, "spans"), {"0": 1}, [], {},
        [("resourceSpans[0].scopeSpans[0].spans",
          "spans is malformed (Expected `array`, got `object`); skipped")],
    ),
    "attributes not a list": (
        (*SPAN_2, "attributes"), {"n": 2}, [1, 2, 3], {2: {"attributes": {}}},
        [(AT_2, "attributes of span 'span 2' is malformed (Expected `array`, got `object`); "
                "dropped")],
    ),
    "attribute entry not an object": (
        (*SPAN_2, "attributes", 0), "chat", [1, 2, 3], {2: {"attributes": {"n": 2}}},
        [(AT_2, "attributes[0] of span 'span 2' is malformed (Expected `object`, got `str`); "
                "dropped")],
    ),
    "status not an object": (
        (*SPAN_2, "status"), "ERROR", [1, 3], {},
        [(AT_2, "span 'span 2' skipped: status is malformed (Expected `object`, got `str`)")],
    ),
    "event not an object": (
        (*SPAN_2, "events", 0), "ev", [1, 3], {},
        [(AT_2, "span 'span 2' skipped: events[0] is malformed (Expected `object`, got `str`)")],
    ),
    "events not a list": (
        (*SPAN_2, "events"), {"name": "ev"}, [1, 3], {},
        [(AT_2, "span 'span 2' skipped: events is malformed (Expected `array`, got `object`)")],
    ),
    "event attribute entry not an object": (
        (*SPAN_2, "events", 0, "attributes", 0), 7, [1, 2, 3], {2: {"events": EVENT_2}},
        [(AT_2, "attributes[0] of event 'ev' of span 'span 2' is malformed (Expected `object`, "
                "got `int`); dropped")],
    ),
    "link not an object": (
        (*SPAN_2, "links", 0), "link", [1, 2, 3], {2: {"links": ()}},
        [(AT_2, "link 0 of span 'span 2' dropped: links[0] is malformed (Expected `object`, "
                "got `str`)")],
    ),
    "links not a list": (
        (*SPAN_2, "links"), {"a": 1}, [1, 2, 3], {2: {"links": ()}},
        [(AT_2, "link 0 of span 'span 2' dropped: links is malformed (Expected `array`, got "
                "`object`)")],
    ),
    "scope not an object": (
        (*SCOPE, "scope"), 3, [1, 2, 3], {1: NO_SCOPE, 2: NO_SCOPE, 3: NO_SCOPE},
        [("resourceSpans[0].scopeSpans[0]",
          "scope is malformed (Expected `object`, got `int`); read as no scope")],
    ),
    "resource not an object": (
        ("resourceSpans", 0, "resource"), ["svc"], [1, 2, 3],
        {1: {"resource": {}}, 2: {"resource": {}}, 3: {"resource": {}}},
        [("resourceSpans[0]", "the resource of resourceSpans[0] is malformed (Expected "
                              "`object`, got `array`); its attributes dropped")],
    ),
}  # fmt: skip


def _records_of(request: dict[str, Any], framing: str) -> tuple[list[RawSpan], list[InputError]]:
    """The request read from a file of one line or as the element of an array (its
    position then 'request 1 (line 1)')."""
    line = json.dumps(request, separators=(",", ":"))
    records = list(read_bytes(f"[{line}]".encode() if framing == "array" else line.encode(), "f"))
    spans = [r for r in records if isinstance(r, RawSpan)]
    return spans, [r for r in records if isinstance(r, InputError)]


@pytest.mark.parametrize("framing", ["line", "array"])
@pytest.mark.parametrize("case", list(WRONG_SHAPES))
def test_a_piece_of_the_wrong_json_type_costs_only_that_piece(case: str, framing: str) -> None:
    path, wrong, kept, changed, rows = WRONG_SHAPES[case]
    base, errors = _records_of(_wrong_shape_request(), framing)
    assert errors == [] and len(base) == 3
    mutant = _wrong_shape_request()
    target: Any = mutant
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = wrong
    spans, errors = _records_of(mutant, framing)
    assert [s.span_id for s in spans] == [_id(n) for n in kept]
    for n, span in zip(kept, spans, strict=True):
        assert span == replace(base[n - 1], **changed.get(n, {}))
    at = "request 1 (line 1)" if framing == "array" else "line 1"
    assert [(e.source, e.position, e.message) for e in errors] == [
        ("f", f"{at}, {where}", message) for where, message in rows
    ]
    assert all(e.span_id == _id(2) for e in errors if e.position.endswith(AT_2))


@pytest.mark.parametrize("framing", ["line", "array"])
def test_a_log_record_of_the_wrong_json_type_costs_only_that_record(framing: str) -> None:
    def log(body: str) -> dict[str, Any]:
        return {"timeUnixNano": "1700000000000000000", "body": {"stringValue": body},
                "attributes": [_kv("k", {"stringValue": body})]}  # fmt: skip

    records = [log("a"), "b", log("c")]
    records[2]["attributes"].insert(0, ["k"])
    request = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    line = json.dumps(request, separators=(",", ":"))
    got = list(read_bytes(f"[{line}]".encode() if framing == "array" else line.encode(), "f"))
    at = "request 1 (line 1)" if framing == "array" else "line 1"
    where = f"{at}, resourceLogs[0].scopeLogs[0].logRecords"
    assert [(type(r).__name__, r.position, getattr(r, "body", None)) for r in got] == [
        ("RawLog", at, "a"), ("InputError", f"{where}[1]", None), ("RawLog", at, "c"),
        ("InputError", f"{where}[2]", None),
    ]  # fmt: skip
    assert [r.message for r in got if isinstance(r, InputError)] == [
        "logRecords[1] is malformed (Expected `object`, got `str`); skipped",
        "attributes[0] of log record is malformed (Expected `object`, got `array`); dropped",
    ]
    assert [r.attributes for r in got if not isinstance(r, InputError)] == [{"k": "a"}, {"k": "c"}]
