"""The `Turn` record: one row of the `turns` contract as a typed, frozen value.

Assembly produces `Turn`s; the Parquet writer turns them into Arrow with
`turns_to_arrow`; scorers get them back with `turns_from_arrow`. Field meanings are in
`turnscore.ingest.schema.TURN_FIELDS`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from datetime import datetime
from operator import attrgetter
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
    issues: tuple[str, ...] = ()
    """What assembly could not trust (`turnscore.ingest.assemble.ISSUES`); not hashed."""

    def with_hash(self) -> Turn:
        # Not `dataclasses.replace`, which walks `fields()` on every call: twice the cost.
        values = list(_FIELD_VALUES(self))
        values[_HASH_AT] = content_hash(self)
        return Turn(*values)


_NAMES = [f.name for f in fields(Turn)]
_FIELD_VALUES = attrgetter(*_NAMES)
_HASH_AT = _NAMES.index("content_hash")


# `content_hash` covers what a scorer reads: request, system instructions, tools, calls
# (without their timing), final answer, status and case id. A change to any of them makes
# the turn's scores stale; a change to the formula would make every stored turn's stale
# (the test pins it). Not `issues`: they say how far assembly trusted the same content,
# and a score of that content stands.
def content_hash(turn: Turn) -> str:
    payload = {
        "request": turn.request,
        "system_instructions": turn.system_instructions,
        "tools": [_tool_row(t) for t in turn.tools],
        "calls": [_hashed_call(c) for c in turn.calls],
        "final_answer": turn.final_answer,
        "status": turn.status,
        "case_id": turn.case_id,
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]


# Literal dicts, not dicts built from `fields()`: these run for every tool and call of
# every turn, at ingest and at load.
def _tool_row(t: Tool) -> dict[str, Any]:
    return {"name": t.name, "description": t.description, "parameters": t.parameters}


def _hashed_call(c: Call) -> dict[str, Any]:
    """A call as the hash sees it: when and how long it ran are not what scorers read."""
    return {
        "name": c.name,
        "call_id": c.call_id,
        "arguments": c.arguments,
        "result": c.result,
        "error": c.error,
        "status": c.status,
        "step": c.step,
    }


def _call_row(c: Call) -> dict[str, Any]:
    return _hashed_call(c) | {"started_at": c.started_at, "duration_ms": c.duration_ms}


def turn_id_for(trace_id: str, anchor_span_id: str, request: str) -> str:
    """Stable id from the span where the turn starts; the same spans always give the same id."""
    raw = f"{trace_id}\x1f{anchor_span_id}\x1f{request}".encode()
    return hashlib.sha256(raw).hexdigest()[:32]


_SCHEMA = arrow_schema()


def turns_to_arrow(turns: Iterable[Turn]) -> pa.Table:
    turns = list(turns)
    cols: dict[str, list[Any]] = {}
    for f in _SCHEMA:
        if f.name == "tools":
            cols[f.name] = [[_tool_row(x) for x in t.tools] for t in turns]
        elif f.name == "calls":
            cols[f.name] = [[_call_row(x) for x in t.calls] for t in turns]
        elif f.name == "issues":
            cols[f.name] = [list(t.issues) for t in turns]
        else:
            cols[f.name] = [getattr(t, f.name) for t in turns]
    return pa.Table.from_pydict(cols, schema=_SCHEMA)


def turns_from_arrow(table: pa.Table | pa.RecordBatch) -> Iterator[Turn]:
    names = {f.name for f in fields(Turn)}
    for row in table.to_pylist():
        kw = {k: v for k, v in row.items() if k in names}
        kw["tools"] = tuple(Tool(**t) for t in kw.get("tools") or ())
        kw["calls"] = tuple(Call(**c) for c in kw.get("calls") or ())
        kw["issues"] = tuple(kw.get("issues") or ())
        yield Turn(**kw)
