"""`turnscore.ingest.anyvalue`: OTLP AnyValue -> Python, JSON (both dialects) and protobuf."""

from __future__ import annotations

import base64
import math
from typing import Any

import pytest
from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.common.v1 import common_pb2

from turnscore.ingest.anyvalue import (
    MAX_ATTRIBUTE_VALUE_CHARS,
    AnyValueError,
    decode_json_any_value,
    decode_json_key_values,
    decode_pb_any_value,
)
from turnscore.ingest.otlp_shared import decode_attrs

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SCALARS = (
    st.none()
    | st.booleans()
    | INT64
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.binary(max_size=20)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def to_pb(value: Any) -> common_pb2.AnyValue:
    out = common_pb2.AnyValue()
    if value is None:
        pass
    elif isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int):
        out.int_value = value
    elif isinstance(value, float):
        out.double_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, bytes):
        out.bytes_value = value
    elif isinstance(value, list):
        out.array_value.values.extend(to_pb(v) for v in value)
        if not value:
            out.array_value.SetInParent()
    else:
        out.kvlist_value.values.extend(
            common_pb2.KeyValue(key=k, value=to_pb(v)) for k, v in value.items()
        )
        if not value:
            out.kvlist_value.SetInParent()
    return out


@given(VALUES)
def test_json_round_trip(otlp_json: Any, value: Any) -> None:
    assert decode_json_any_value(otlp_json.any_value(value)) == value


@given(VALUES)
def test_protobuf_round_trip(value: Any) -> None:
    assert decode_pb_any_value(to_pb(value)) == value


@given(VALUES)
def test_protobuf_default_json_mapping_round_trip(value: Any) -> None:
    """What `MessageToDict` writes (both key styles) decodes to the original value."""
    message = to_pb(value)
    for snake in (False, True):
        as_json = json_format.MessageToDict(message, preserving_proto_field_name=snake)
        assert decode_json_any_value(as_json) == value


@given(INT64)
def test_int_value_as_string_or_number(number: int) -> None:
    assert decode_json_any_value({"intValue": str(number)}) == number
    assert decode_json_any_value({"intValue": number}) == number


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"stringValue": ""}, ""),
        ({"boolValue": False}, False),
        ({"intValue": "-9223372036854775808"}, -(2**63)),
        ({"doubleValue": 1}, 1.0),
        ({"doubleValue": "2.5"}, 2.5),
        ({"doubleValue": "Infinity"}, math.inf),
        ({"doubleValue": "-Infinity"}, -math.inf),
        ({"bytesValue": base64.b64encode(b"\x00\xff").decode()}, b"\x00\xff"),
        ({"bytesValue": base64.urlsafe_b64encode(b"\xfb\xff").decode()}, b"\xfb\xff"),
        ({"arrayValue": {}}, []),
        ({"arrayValue": {"values": [{}, {"intValue": "1"}]}}, [None, 1]),
        ({"kvlistValue": {}}, {}),
        ({"kvlist_value": {"values": [{"key": "a", "value": {"string_value": "b"}}]}}, {"a": "b"}),
        ({}, None),
        (None, None),
    ],
)
def test_every_kind(raw: Any, expected: Any) -> None:
    got = decode_json_any_value(raw)
    assert got == expected and type(got) is type(expected)


def test_nan_double() -> None:
    assert math.isnan(decode_json_any_value({"doubleValue": "NaN"}))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"intValue": "12.5"}, "intValue is not an integer"),
        ({"intValue": True}, "intValue is a boolean"),
        ({"doubleValue": "fast"}, "doubleValue is not a number"),
        ({"doubleValue": 10**400}, "doubleValue is out of range"),
        ({"boolValue": "true"}, "boolValue is not a boolean"),
        ({"stringValue": 3}, "stringValue is not a string"),
        ({"bytesValue": "@@@"}, "bytesValue is not valid base64"),
        ({"arrayValue": {"values": {}}}, "arrayValue.values is not a list"),
        ({"kvlistValue": {"values": [{"key": 5, "value": {}}]}}, "KeyValue without a string key"),
        ("text", "AnyValue is not an object"),
    ],
)
def test_malformed_values_raise(raw: Any, message: str) -> None:
    with pytest.raises(AnyValueError, match=message):
        decode_json_any_value(raw)


def test_long_values_are_capped_and_reported_with_their_key() -> None:
    long_text = "é" * (MAX_ATTRIBUTE_VALUE_CHARS + 1)
    long_bytes = b"\x01" * (MAX_ATTRIBUTE_VALUE_CHARS + 2)
    attributes = {"t": long_text, "deep": {"x": [long_bytes]}, "short": "ok"}
    reports: list[str] = []
    json_items = [
        {"key": "t", "value": {"stringValue": long_text}},
        {"key": "deep", "value": {"kvlistValue": {"values": [{"key": "x", "value": {
            "arrayValue": {"values": [{"bytesValue": base64.b64encode(long_bytes).decode()}]}
        }}]}}},
        {"key": "short", "value": {"stringValue": "ok"}},
    ]  # fmt: skip
    json_pairs = [(item["key"], item["value"]) for item in json_items]
    from_json = decode_attrs(json_pairs, decode_json_any_value, "span 's'", reports.append)
    pb_pairs = [(k, to_pb(v)) for k, v in attributes.items()]
    from_pb = decode_attrs(pb_pairs, decode_pb_any_value, "span 's'", reports.append)
    capped = {
        "t": long_text[:MAX_ATTRIBUTE_VALUE_CHARS],
        "deep": {"x": [long_bytes[:MAX_ATTRIBUTE_VALUE_CHARS]]},
        "short": "ok",
    }
    assert from_json == from_pb == capped
    expected = [
        f"attribute {key!r} of span 's' is {MAX_ATTRIBUTE_VALUE_CHARS + extra} characters long; "
        f"kept the first {MAX_ATTRIBUTE_VALUE_CHARS}"
        for key, extra in (("t", 1), ("deep", 2))
    ]
    assert reports == expected * 2


def test_duplicate_keys_last_wins() -> None:
    items = [
        {"key": "a", "value": {"intValue": "1"}},
        {"key": "a", "value": {"intValue": "2"}},
    ]
    assert decode_json_key_values(items) == {"a": 2}
