"""Which convention a Logfire-shaped span is labelled with: `logfire.json_schema` is written
by Logfire's API on every span with a structured attribute, and by Pydantic AI itself on its
own spans (pydantic/pydantic-ai `pydantic_ai/_instrumentation.py`), which name no message
template. A span Logfire's API made names its template (`logfire.msg_template`), so the
schema alone says nothing of Pydantic AI there (Logfire's `instrument_claude_agent_sdk()`,
pydantic/logfire `logfire/_internal/integrations/claude_agent_sdk.py`)."""

from __future__ import annotations

import json
from typing import Any

from turnscore.ingest.decode import decode_span
from turnscore.ingest.records import RawSpan

RESULT = {"stdout": "README.md\nsrc", "stderr": ""}


def _span(name: str, attributes: dict[str, Any]) -> RawSpan:
    return RawSpan("0" * 31 + "1", "0" * 15 + "2", None, name, 1, 1, 2, 0, "", attributes)


def _tool_span(**logfire: str) -> RawSpan:
    schema = {"type": "object", "properties": {"gen_ai.tool.call.arguments": {"type": "object"},
                                               "gen_ai.tool.call.result": {"type": "object"}}}
    return _span("execute_tool Bash", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Bash",
        "gen_ai.tool.call.id": "toolu_1", "gen_ai.tool.call.arguments": '{"command": "ls"}',
        "gen_ai.tool.call.result": json.dumps(RESULT), "logfire.span_type": "span",
        "logfire.json_schema": json.dumps(schema), **logfire,
    })  # fmt: skip


def test_a_logfire_api_span_marked_by_the_schema_alone_is_no_pydantic_ai_span() -> None:
    span, error = decode_span(_tool_span(**{"logfire.msg_template": "execute_tool Bash",
                                            "logfire.msg": "execute_tool Bash"}))
    assert error is None
    assert span.convention == "otel-genai"
    tool = span.tool_execution
    assert tool is not None and (tool.name, tool.call_id) == ("Bash", "toolu_1")
    assert json.loads(tool.result or "null") == RESULT


def test_pydantic_ai_s_own_tool_span_is_still_pydantic_ai_s() -> None:
    span, error = decode_span(_tool_span(**{"logfire.msg": "running tool: Bash"}))
    assert error is None
    assert span.convention == "pydantic-ai+otel-genai"
    tool = span.tool_execution
    assert tool is not None and json.loads(tool.result or "null") == RESULT


def test_an_older_pydantic_ai_span_made_through_logfire_s_api_is_pydantic_ai_s() -> None:
    """Pydantic AI 0.x made its agent span with `logfire_api.span(...)`: a template, and
    its own keys beside the schema."""
    messages = [{"role": "user", "parts": [{"type": "text", "content": "List the files"}]}]
    span, _ = decode_span(_span("agent run", {
        "logfire.msg_template": "{agent_name} run {prompt=}", "agent_name": "a",
        "pydantic_ai.all_messages": json.dumps(messages),
        "logfire.json_schema": json.dumps({"type": "object", "properties": {
            "pydantic_ai.all_messages": {"type": "array"}}}),
    }))  # fmt: skip
    assert span.convention.split("+")[0] == "pydantic-ai"
