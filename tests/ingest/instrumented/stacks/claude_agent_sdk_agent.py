"""The Claude Agent SDK (`claude-agent-sdk`): its `ClaudeSDKClient` drives the Claude Code CLI
the wheel bundles, which calls the Anthropic Messages API (streamed) at `ANTHROPIC_BASE_URL`.
The scenario's tools are `@tool`s of one in-process SDK MCP server (`create_sdk_mcp_server`),
so the model is offered them as `mcp__tools__<name>` (the scripted server calls them by that
name: `wire.scenario_tool`); the CLI's built-in tools are off (`tools=[]`), its own system
prompt is the preset the SDK sends with ours after it. Each turn is one `query` and its
`receive_response()` on one client, so the turns are one CLI session.

`claude-agent-sdk-openinference`: OpenInference's instrumentation of the SDK
(`ClaudeAgentSDKInstrumentor`: an AGENT span a response, TOOL spans from the messages).
`claude-code-otel`: the CLI's own OpenTelemetry export (`CLAUDE_CODE_ENABLE_TELEMETRY`,
OTLP/HTTP protobuf to a loopback `otlp_receiver`): its events as log records (the prompt,
each API request, the assistant's response, each tool's decision and result, content
included as `OTEL_LOG_*` allow it) and, with `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA`, its
spans (an interaction a prompt, an llm_request a model call, a tool's). `-raw`: with
`OTEL_LOG_RAW_API_BODIES` too (each request's and response's JSON body as an event).
`claude-code-otel-logs` (and `-logs-raw`): the CLI's default export, traces off (no
`CLAUDE_CODE_ENHANCED_TELEMETRY_BETA`, no traces exporter): only the log records, which
then name no trace or span, only the session (`session.id`) and the prompt (`prompt.id`).
Nothing but the scripted server and the receiver is reached: the CLI's non-essential
traffic, auto-updater and error reports are off, and its home is a temporary folder.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.otlp_receiver import receiver

MODEL = "claude-sonnet-4-5"
SERVER = "tools"

QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
}
OTEL = {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
    "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
    "OTEL_TRACES_EXPORTER": "otlp",
    "OTEL_LOGS_EXPORTER": "otlp",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    "OTEL_LOG_USER_PROMPTS": "1",
    "OTEL_LOG_ASSISTANT_RESPONSES": "1",
    "OTEL_LOG_TOOL_DETAILS": "1",
    "OTEL_LOG_TOOL_CONTENT": "1",
}


def _tools() -> Any:
    from claude_agent_sdk import create_sdk_mcp_server, tool

    def make(name: str, description: str, schema: dict[str, Any]) -> Any:
        @tool(name, description, schema)
        async def call(args: dict[str, Any]) -> dict[str, Any]:
            text, failed = run_tool(name, json.dumps(args))
            return {"content": [{"type": "text", "text": text}], "is_error": failed}

        return call

    made = [make(t["function"]["name"], t["function"]["description"],
                 t["function"]["parameters"]) for t in TOOLS]  # fmt: skip
    return create_sdk_mcp_server(SERVER, tools=made)


async def converse(base_url: str, scenario: str, home: str, telemetry: dict[str, str]) -> None:
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

    env = {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "test-key", "HOME": home,
           **QUIET, **telemetry}  # fmt: skip
    options = ClaudeAgentOptions(
        system_prompt=SYSTEM_PROMPT, tools=[], mcp_servers={SERVER: _tools()},
        allowed_tools=[f"mcp__{SERVER}__{t['function']['name']}" for t in TOOLS],
        model=MODEL, env=env, cwd=home, max_turns=8, setting_sources=[],
    )  # fmt: skip
    async with ClaudeSDKClient(options=options) as client:
        for turn in SCENARIOS[scenario].turns:
            await client.query(turn.request)
            async for _ in client.receive_response():
                pass


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    if stack.startswith("claude-code-otel"):
        with receiver(out, scenario) as url, tempfile.TemporaryDirectory() as home:
            telemetry = {**OTEL, "OTEL_EXPORTER_OTLP_ENDPOINT": url}
            if "-logs" in stack:  # the default: no spans at all
                del telemetry["CLAUDE_CODE_ENHANCED_TELEMETRY_BETA"]
                telemetry["OTEL_TRACES_EXPORTER"] = "none"
            if stack.endswith("-raw"):
                telemetry["OTEL_LOG_RAW_API_BODIES"] = "1"
            asyncio.run(converse(base_url, scenario, home, telemetry))
        return
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation.claude_agent_sdk import ClaudeAgentSDKInstrumentor

        ClaudeAgentSDKInstrumentor().instrument(tracer_provider=tracer_provider)
        with tempfile.TemporaryDirectory() as home:
            asyncio.run(converse(base_url, scenario, home, {}))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], dict(QUIET), run))
