"""The `Turn` record: one row of the `turns` contract as a typed, frozen value.

Assembly produces `Turn`s; the Parquet writer turns them into Arrow with
`turns_to_arrow`; scorers get them back with `turns_from_arrow`. Field meanings are in
`turnscore.ingest.schema.TURN_FIELDS`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any

import orjson
import pyarrow as pa

from turnscore.ingest.schema import arrow_schema


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str | None = None
    parameters: str | None = None


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    call_id: str | None = None
    arguments: str | None = None
    result: str | None = None
    error: str | None = None
    status: str = "ok"
    """'ok', 'error', or 'no_result' when no execution or result was found."""
    step: int = 0
    started_at: datetime | None = None
    duration_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    turn_id: str
    trace_id: str
    conversation_id: str
    turn_index: int
    started_at: datetime
    ended_at: datetime
    duration_ms: float
    status: str
    request: str
    tools: tuple[Tool, ...] = ()
    tools_source: str = "none"
    calls: tuple[Call, ...] = ()
    final_answer: str | None = None
    llm_calls: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    agent_name: str | None = None
    service_name: str | None = None
    model: str | None = None
    error: str | None = None
    system_instructions: str | None = None
    case_id: str | None = None
    convention: str = ""
    content_hash: str = ""
    attributes: str = "{}"
    ingest_id: str = ""
    source: str = ""

    def with_hash(self) -> Turn:
        return replace(self, content_hash=content_hash(self))


# What a scorer reads. Changing any of these makes the turn's scores stale.
_HASHED = ("request", "system_instructions", "tools", "calls", "final_answer", "status", "case_id")


def content_hash(turn: Turn) -> str:
    payload = {name: _plain(getattr(turn, name)) for name in _HASHED}
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, (Tool, Call)):
        d = _shallow(value)
        d.pop("started_at", None)
        d.pop("duration_ms", None)
        return d
    return value


def _shallow(record: Tool | Call) -> dict[str, Any]:
    # dataclasses.asdict deep-copies every value; these records hold only scalars.
    return {name: getattr(record, name) for name in _FIELD_NAMES[type(record)]}


# `fields()` per record was most of `_shallow`'s time.
_FIELD_NAMES = {cls: tuple(f.name for f in fields(cls)) for cls in (Tool, Call)}


def turn_id_for(trace_id: str, anchor_span_id: str, request: str) -> str:
    """Stable id from the span where the turn starts; the same spans always give the same id."""
    raw = f"{trace_id}\x1f{anchor_span_id}\x1f{request}".encode()
    return hashlib.sha256(raw).hexdigest()[:32]


_SCHEMA = arrow_schema()


def turns_to_arrow(turns: Iterable[Turn]) -> pa.Table:
    cols: dict[str, list[Any]] = {f.name: [] for f in _SCHEMA}
    for t in turns:
        for name in cols:
            v = getattr(t, name)
            if name in ("tools", "calls"):
                v = [_shallow(x) for x in v]
            cols[name].append(v)
    return pa.Table.from_pydict(cols, schema=_SCHEMA)


def turns_from_arrow(table: pa.Table | pa.RecordBatch) -> Iterator[Turn]:
    names = {f.name for f in fields(Turn)}
    for row in table.to_pylist():
        kw = {k: v for k, v in row.items() if k in names}
        kw["tools"] = tuple(Tool(**t) for t in kw.get("tools") or ())
        kw["calls"] = tuple(Call(**c) for c in kw.get("calls") or ())
        yield Turn(**kw)
