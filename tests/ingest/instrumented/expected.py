"""The turn the ingester should produce, derived from what the scripted server received and
answered on the wire, never from the exported telemetry."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.ingest.instrumented.scenarios import run_tool
from tests.ingest.instrumented.server import Exchange


@dataclass(frozen=True)
class Expected:
    request: str
    system_prompt: str
    tools: list[tuple[str, str, Any]]
    calls: list[dict[str, Any]]
    final_answer: str | None
    llm_calls: int
    usage: tuple[int, int]


def expected_turn(exchanges: list[Exchange], index: int) -> Expected:
    mine = [e for e in exchanges if e.turn == index]
    first, last = mine[0].request, mine[-1]
    messages = first["messages"]
    results = {
        m["tool_call_id"]: m["content"]
        for e in mine
        for m in e.request["messages"]
        if m["role"] == "tool"
    }
    calls = [
        {
            "id": c["id"],
            "name": c["function"]["name"],
            "arguments": json.loads(c["function"]["arguments"]),
            "result": results.get(c["id"]),
            "is_error": run_tool(c["function"]["name"], c["function"]["arguments"])[1],
        }
        for e in mine
        for c in e.message.get("tool_calls", ())
    ]
    return Expected(
        request=[m for m in messages if m["role"] == "user"][-1]["content"],
        system_prompt=next(m["content"] for m in messages if m["role"] == "system"),
        tools=sorted(
            (t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
            for t in first.get("tools", ())
        ),
        calls=calls,
        final_answer=last.message["content"],
        llm_calls=len(mine),
        usage=(
            sum(e.usage["prompt_tokens"] for e in mine),
            sum(e.usage["completion_tokens"] for e in mine),
        ),
    )


def as_json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text
