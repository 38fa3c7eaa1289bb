"""Decode OTLP `AnyValue`s (JSON in either dialect, or protobuf) into plain Python values.

Mapping: stringValue -> str, boolValue -> bool, intValue -> int (JSON sends int64 as a
decimal string; some encoders send a number), doubleValue -> float (protobuf's JSON
mapping spells non-finite values "NaN", "Infinity", "-Infinity"), bytesValue -> bytes
(base64 in JSON), arrayValue -> list, kvlistValue -> dict, an empty value -> None.
Keys may be lowerCamelCase (OTLP spec) or snake_case (protobuf `preserving_proto_field_name`).

Strings and bytes longer than `MAX_ATTRIBUTE_VALUE_CHARS` are cut to that length and the
caller is told through `on_truncate`, so one runaway attribute cannot exhaust memory
downstream while the rest of the span survives.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from turnscore.ingest.records import AttrValue

MAX_ATTRIBUTE_VALUE_CHARS = 1 << 20
"""Longest string (characters) or bytes value (bytes) kept from one attribute value."""

MAX_ANY_VALUE_DEPTH = 64
"""Deepest nesting of arrays and key-value lists in one value. Protobuf stops at some 50
(its parser's limit); deeper JSON would only break the JSON writers downstream."""

_DOUBLE_WORDS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}

OnTruncate = Callable[[int], None]
"""Called with the original length when a value is cut to `MAX_ATTRIBUTE_VALUE_CHARS`."""


_Capped = TypeVar("_Capped", str, bytes)


class AnyValueError(ValueError):
    """An AnyValue whose content does not match its declared kind."""


def _cap(data: _Capped, on_truncate: OnTruncate | None) -> _Capped:
    """A string (characters) or bytes value cut to `MAX_ATTRIBUTE_VALUE_CHARS`."""
    if len(data) <= MAX_ATTRIBUTE_VALUE_CHARS:
        return data
    if on_truncate is not None:
        on_truncate(len(data))
    return data[:MAX_ATTRIBUTE_VALUE_CHARS]


def _json_int(raw: object) -> int:
    if isinstance(raw, bool):
        raise AnyValueError(f"intValue is a boolean: {raw!r}")
    value: int | None = None
    if isinstance(raw, str):  # the spec's form: int64 as a decimal string
        try:
            value = int(raw)
        except ValueError:
            value = None
    elif isinstance(raw, int):
        value = raw
    elif isinstance(raw, float) and raw.is_integer():
        value = int(raw)
    if value is None:
        raise AnyValueError(f"intValue is not an integer: {str(raw)[:80]!r}")
    # int64 as in protobuf: every JSON writer downstream refuses wider integers.
    if not -(2**63) <= value < 2**63:
        raise AnyValueError(f"intValue {str(raw)[:40]} is beyond int64")
    return value


def _json_double(raw: object) -> float:
    if isinstance(raw, bool):
        raise AnyValueError(f"doubleValue is a boolean: {raw!r}")
    if isinstance(raw, int | float):
        try:
            return float(raw)
        except OverflowError:  # an integer of some 310 digits or more
            raise AnyValueError(f"doubleValue is out of range: {str(raw)[:40]}...") from None
    if isinstance(raw, str):
        if raw in _DOUBLE_WORDS:
            return _DOUBLE_WORDS[raw]
        try:
            return float(raw)
        except ValueError:
            pass
    raise AnyValueError(f"doubleValue is not a number: {str(raw)[:80]!r}")


def decode_json_bytes(raw: object) -> bytes:
    """A JSON `bytesValue` (base64 text, either alphabet) as bytes, not yet capped."""
    if not isinstance(raw, str):
        raise AnyValueError(f"bytesValue is not base64 text: {str(raw)[:80]!r}")
    try:
        # protobuf's JSON mapping accepts both the standard and the URL-safe alphabet.
        return base64.b64decode(raw.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise AnyValueError(f"bytesValue is not valid base64: {exc}") from None


def _values_list(container: object, kind: str, depth: int) -> Sequence[Any]:
    """The values of an arrayValue or kvlistValue at `depth` (the root is 0)."""
    if container is None:
        return ()
    if type(container) is not dict and not isinstance(container, Mapping):  # an ABC's check is slow
        raise AnyValueError(f"{kind} is not an object")
    values = container.get("values")
    if values is None:
        return ()
    if not isinstance(values, list):
        raise AnyValueError(f"{kind}.values is not a list")
    if values and depth >= MAX_ANY_VALUE_DEPTH:  # its values would be deeper than allowed
        raise AnyValueError(f"AnyValue nested deeper than {MAX_ANY_VALUE_DEPTH} levels")
    return values


def decode_json_any_value(
    value: object, on_truncate: OnTruncate | None = None, depth: int = 0
) -> AttrValue:
    """Decode one OTLP JSON `AnyValue` object. Raises `AnyValueError` on malformed input,
    and past `MAX_ANY_VALUE_DEPTH` levels of arrays and lists."""
    if type(value) is dict:
        if len(value) == 1:  # nearly every value: one scalar kind, most often a string
            raw = value.get("stringValue")  # a lookup: unpacking `items()` costs 4x
            if type(raw) is str and len(raw) <= MAX_ATTRIBUTE_VALUE_CHARS:
                return raw
    elif value is None:
        return None
    elif not isinstance(value, Mapping):
        raise AnyValueError(f"AnyValue is not an object: {str(value)[:80]!r}")
    for key, raw in value.items():
        kind = _KINDS.get(key)
        if kind == "stringValue":  # the commonest kind first
            if not isinstance(raw, str):
                raise AnyValueError(f"stringValue is not a string: {str(raw)[:80]!r}")
            return raw if len(raw) <= MAX_ATTRIBUTE_VALUE_CHARS else _cap(raw, on_truncate)
        if kind == "intValue":
            return _json_int(raw)
        if kind == "boolValue":
            if not isinstance(raw, bool):
                raise AnyValueError(f"boolValue is not a boolean: {str(raw)[:80]!r}")
            return raw
        if kind == "doubleValue":
            return _json_double(raw)
        if kind == "arrayValue":
            items = _values_list(raw, "arrayValue", depth)
            return [decode_json_any_value(item, on_truncate, depth + 1) for item in items]
        if kind == "kvlistValue":
            items = _values_list(raw, "kvlistValue", depth)
            return decode_json_key_values(items, on_truncate, depth + 1)
        if kind == "bytesValue":
            return _cap(decode_json_bytes(raw), on_truncate)
    # No known kind: the empty AnyValue (OTLP says it represents an unset value).
    return None


_KINDS = {
    spelling: kind
    for kind in ("stringValue", "intValue", "boolValue", "doubleValue", "arrayValue",
                 "kvlistValue", "bytesValue")
    for spelling in (kind, "".join(f"_{c.lower()}" if c.isupper() else c for c in kind))
}  # fmt: skip
"""An AnyValue's kinds in either spelling (lowerCamelCase, snake_case) -> lowerCamelCase."""


def decode_json_key_values(
    items: object, on_truncate: OnTruncate | None = None, depth: int = 0
) -> dict[str, AttrValue]:
    """Decode a JSON list of `KeyValue` objects (attributes, or a kvlistValue's values at
    `depth`) into a dict, a later duplicate key winning."""
    return {key: decode_json_any_value(raw, on_truncate, depth) for key, raw in _json_pairs(items)}


def _json_pairs(items: object) -> list[tuple[str, object]]:
    if items is None:
        return []
    if not isinstance(items, list | tuple):
        raise AnyValueError("attributes are not a list")
    pairs: list[tuple[str, object]] = []
    for item in items:
        if not isinstance(item, Mapping):
            raise AnyValueError(f"KeyValue is not an object: {str(item)[:80]!r}")
        key = item.get("key", "")  # proto3 JSON omits default values, "" included
        if not isinstance(key, str):
            raise AnyValueError(f"KeyValue without a string key: {str(item)[:80]!r}")
        pairs.append((key, item.get("value")))
    return pairs


def decode_pb_any_value(value: Any, on_truncate: OnTruncate | None = None) -> AttrValue:
    """Decode a protobuf `opentelemetry.proto.common.v1.AnyValue` message."""
    kind = value.WhichOneof("value")
    if kind == "string_value" or kind == "bytes_value":
        return _cap(getattr(value, kind), on_truncate)
    if kind == "array_value":
        return [decode_pb_any_value(item, on_truncate) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {
            item.key: decode_pb_any_value(item.value, on_truncate)
            for item in value.kvlist_value.values
        }
    return None if kind is None else getattr(value, kind)  # an int, a double or a bool
