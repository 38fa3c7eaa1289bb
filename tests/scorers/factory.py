"""Helpers shared by the scorer tests: building turns and cases from case-file rows."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from turnscore.ingest.turn import Call, Tool, Turn
from turnscore.scorers.base import Case

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def make_turn(spec: dict[str, Any], turn_id: str = "t") -> Turn:
    """A turn from the fields a case file gives; the rest get neutral defaults."""
    fields = dict(spec)
    fields["tools"] = tuple(Tool(**_as_text(t, "parameters")) for t in fields.get("tools", ()))
    fields["calls"] = tuple(Call(**_as_text(c, "arguments")) for c in fields.get("calls", ()))
    fields.setdefault("request", "a request")
    fields.setdefault("status", "ok")
    return Turn(turn_id=turn_id, trace_id="tr", conversation_id="c", turn_index=0,
                started_at=T0, ended_at=T0, duration_ms=0.0, **fields)


def _as_text(spec: dict[str, Any], key: str) -> dict[str, Any]:
    """Case files may give a JSON field as an object; a string is kept as is (maybe invalid)."""
    out = dict(spec)
    if key in out and not isinstance(out[key], str) and out[key] is not None:
        out[key] = json.dumps(out[key])
    return out


def make_case(spec: dict[str, Any] | None) -> Case | None:
    if spec is None:
        return None
    fields = dict(spec)
    for name in ("canary", "expected_tools", "tags"):
        if isinstance(fields.get(name), list):
            fields[name] = tuple(fields[name])
    fields.setdefault("case_id", "case-1")
    fields.setdefault("input", "a request")
    return Case(**fields)
