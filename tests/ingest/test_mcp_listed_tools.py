"""OpenLLMetry's MCP instrumentation (opentelemetry-instrumentation-mcp 0.62.4,
`_handle_mcp_method`): the client's `tools/list` request is a `tools/list.mcp` span with no
span kind, the request and the server's `ListToolsResult` as entity input and output. Its
tools are the turn's tools, descriptions and schemas included."""

from __future__ import annotations

import json

from turnscore.ingest.decode import decode_span
from turnscore.ingest.records import RawSpan

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _span(method: str, output: object) -> RawSpan:
    return RawSpan("ab" * 16, "cd" * 8, "ef" * 8, f"{method}.mcp", 1, 1, 2, 1, "", {
        "traceloop.entity.input": json.dumps({"method": method, "params": None}),
        "traceloop.entity.output": json.dumps(output),
    })  # fmt: skip


def test_an_mcp_tools_list_span_defines_the_tools() -> None:
    listed = {"meta": None, "nextCursor": None, "tools": [
        {"name": "get_weather", "title": None, "description": "Get the weather for a city.",
         "inputSchema": SCHEMA, "outputSchema": None, "annotations": None}]}  # fmt: skip
    span, error = decode_span(_span("tools/list", listed))
    assert error is None
    [tool] = span.tool_definitions or ()
    assert (tool.name, tool.description) == ("get_weather", "Get the weather for a city.")
    assert json.loads(tool.parameters or "null") == SCHEMA


def test_another_mcp_request_defines_nothing() -> None:
    span, _ = decode_span(_span("initialize", {"protocolVersion": "2025-11-25", "tools": []}))
    assert span.tool_definitions is None
