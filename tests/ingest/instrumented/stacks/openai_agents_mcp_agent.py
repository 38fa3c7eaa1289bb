"""An OpenAI Agents SDK `Agent` on `OpenAIChatCompletionsModel` whose tools come from an MCP
server over stdio (`MCPServerStdio`, listing the tools on each run), under OpenInference's
Agents SDK bridge and its MCP instrumentation. The server is this module run with
`--serve`: the `mcp` SDK's `MCPServer` (FastMCP's successor in mcp 2) exposing the
harness's tool functions, in a process of its own that exports its spans to the same folder
(as a tool service exporting to the same collector would): the `mcp` SDK's own spans (the
client's `MCP send tools/call <tool>`, the server's `tools/call <tool>` joined to it by the
trace context the request's `_meta` carries, or for `-unlinked` each a trace of its own)
beside the bridge's TOOL span of the same call. One `Runner.run` per turn, as the
single-agent drivers.

`openai-agents-mcp-openllmetry` runs it under OpenLLMetry's instead (as `Traceloop.init`
installs them): its Agents SDK instrumentation (a tracing processor, replacing the SDK's
export) and its MCP one (`opentelemetry-instrumentation-mcp`: a `<tool>.tool` span per
`tools/call` the client sends, `traceloop.entity.input` / `output`, the trace context put
in the request's `_meta`), the server's process instrumented by the MCP one too."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS

ROOT = Path(__file__).resolve().parents[4]
SERVER_NAME = "research_tools"
UNLINKED = {"openai-agents-mcp-unlinked": {"OTEL_PROPAGATORS": "none"}}
"""The server extracts no trace context (as a tool service with other propagators): its
spans are a trace of their own per request."""


def _instrument_mcp(stack: str, tracer_provider: Any) -> None:
    """The stack's MCP instrumentation, before the `mcp` modules it hooks on import load."""
    if "openllmetry" in stack:
        from opentelemetry.instrumentation.mcp import McpInstrumentor

        McpInstrumentor().instrument(tracer_provider=tracer_provider)
        return
    from openinference.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=tracer_provider)


def _instrument_agents(stack: str, tracer_provider: Any) -> None:
    if "openllmetry" in stack:
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor(replace_existing_processors=True).instrument(
            tracer_provider=tracer_provider
        )
        return
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor as OI

    OI().instrument(tracer_provider=tracer_provider)


def serve(stack: str, scenario: str, out: Path) -> None:
    """The MCP server's process: its own providers and files (`<scenario>-mcp-server-*`)."""
    with providers(f"{stack}-mcp-server", out, f"{scenario}-mcp-server") as (tracer_provider, _):
        _instrument_mcp(stack, tracer_provider)
        try:
            from mcp.server.mcpserver import MCPServer
        except ImportError:  # mcp 1.x: its FastMCP
            from mcp.server.fastmcp import FastMCP as MCPServer

        server: Any = MCPServer(SERVER_NAME)
        for fn in FUNCTIONS:
            server.tool()(fn)
        server.run("stdio")


async def converse(stack: str, base_url: str, scenario: str, out: Path) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner
    from agents.mcp import MCPServerStdio
    from openai import AsyncOpenAI

    command = {
        "command": sys.executable,
        "args": ["-m", __spec__.name if __spec__ else __name__, "--serve", stack, scenario,
                 str(out)],
        "cwd": str(ROOT), "env": os.environ | UNLINKED.get(stack, {}),
    }  # fmt: skip
    client = AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    async with MCPServerStdio(params=command, name=SERVER_NAME) as server:  # type: ignore[arg-type]
        agent = Agent(
            name=AGENT_NAME, instructions=SYSTEM_PROMPT,
            model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
            mcp_servers=[server],
        )  # fmt: skip
        history: list[Any] = []
        for turn in SCENARIOS[scenario].turns:
            result = await Runner.run(agent, [*history, {"role": "user", "content": turn.request}])
            history = result.to_input_list()


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        _instrument_agents(stack, tracer_provider)
        _instrument_mcp(stack, tracer_provider)
        asyncio.run(converse(stack, base_url, scenario, out))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
        sys.exit(0)
    sys.exit(main(sys.argv[1:], {}, run))
