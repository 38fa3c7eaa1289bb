"""A Gemini function response reports a failure by its `error` key (google-genai
`types.FunctionResponse.response`: 'Use "output" key to specify function output and "error"
key to specify error details'), in each form instrumentations pass it on: the Gemini part
itself, the OTel `tool_call_response` with the object, or with its JSON text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from turnscore.ingest.conventions.messages import parse_messages
from turnscore.ingest.model import PartType


def _results(response: Any) -> list[tuple[bool, Any]]:
    gemini = {"role": "user", "parts": [
        {"function_response": {"id": "c1", "name": "get_weather", "response": response}}]}
    otel = {"role": "user", "parts": [
        {"type": "tool_call_response", "id": "c1", "response": response}]}
    otel_text = {"role": "user", "parts": [
        {"type": "tool_call_response", "id": "c1", "response": json.dumps(response)}]}
    seen = []
    for message in (gemini, otel, otel_text):
        [parsed] = parse_messages([message], "m", [])
        [part] = parsed.parts
        assert part.type is PartType.TOOL_RESULT and part.call_id == "c1"
        seen.append((part.is_error, json.loads(part.text or "null")))
    return seen


@pytest.mark.parametrize(
    ("response", "failed"),
    [
        ({"error": "ValueError: Unknown city: Atlantis"}, True),
        ({"error": {"code": 404, "message": "no such city"}}, True),
        ({"output": {"temp": 18}}, False),
        ({"output": "partial", "error": "timed out"}, False),  # an output is the output
        ({"error": None, "temp": 18}, False),  # a tool's own field, empty
        ({"temp": 18}, False),
    ],
)
def test_error_key_is_a_failure(response: dict[str, Any], failed: bool) -> None:
    assert _results(response) == [(failed, response)] * 3
