"""OTLP protobuf `ResourceSpans` / `ResourceLogs` messages to raw records: upb decodes a
block, the one decoder (`otlp_shared`) reads it with this dialect. The entry point for
files, which finds the blocks in a request, is `turnscore.ingest.otlp`.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from turnscore.ingest import formats
from turnscore.ingest.anyvalue import MAX_ATTRIBUTE_VALUE_CHARS, decode_pb_any_value
from turnscore.ingest.otlp_shared import (
    LOGS,
    MAX_UNIX_NANO,
    TRACES,
    BadInput,
    Dialect,
    Record,
    Report,
    Where,
    block_records,
    decode_attrs,
    known_enum,
    too_late,
)
from turnscore.ingest.records import AttrValue

__all__ = ["pb_resource_records"]


def pb_resource_records(
    data: bytes, kind: formats.ProtoKind, source: str, offset: int, index: int
) -> list[Record]:
    """Records of one serialized ResourceSpans/ResourceLogs found at byte `offset`."""
    traces = kind is formats.ProtoKind.TRACES
    tree = TRACES if traces else LOGS
    where = Where(source, f"byte {offset}", f"{tree.blocks_path}[{index}]")
    try:
        block = (trace_pb2.ResourceSpans if traces else logs_pb2.ResourceLogs).FromString(data)
    except DecodeError as exc:
        return [where.error(f"corrupt protobuf {tree.blocks_path} message ({exc}); skipped")]
    records: list[Record] = []
    block_records(PROTOBUF, tree, block, where, records)
    return records


def _pb_attrs(items: Any, owner: str, report: Report) -> dict[str, AttrValue]:
    """Attributes as a dict (a later repeated key wins). Scalars are read inline; arrays,
    key-value lists and over-long values go through `decode_attrs`, which cuts and reports."""
    out: dict[str, AttrValue] = {}
    for kv in items:
        value = kv.value
        kind = value.WhichOneof("value")
        if kind == "string_value":
            text = value.string_value
            if len(text) <= MAX_ATTRIBUTE_VALUE_CHARS:
                out[kv.key] = text
                continue
        elif kind == "int_value" or kind == "bool_value" or kind == "double_value":
            out[kv.key] = getattr(value, kind)
            continue
        out.update(decode_attrs(((kv.key, value),), decode_pb_any_value, owner, report))
    return out


def _pb_id(raw: bytes, size: int, what: str) -> str | None:
    if not raw:
        return None
    if len(raw) != size:
        raise BadInput(f"{what} {raw.hex()!r} is {len(raw)} bytes, expected {size}")
    return raw.hex() if any(raw) else None


def _pb_time(value: int, what: str) -> int:
    if value > MAX_UNIX_NANO:
        raise too_late(value, what)
    return value


def _pb_text(value: str, what: str, report: Report) -> str:
    return value  # always a string


PROTOBUF = Dialect(
    id=_pb_id,
    time=_pb_time,
    enum=known_enum,
    text=_pb_text,
    attrs=_pb_attrs,
    value=decode_pb_any_value,
    spell=str,
)
