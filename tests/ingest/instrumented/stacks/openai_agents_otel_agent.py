"""An OpenAI Agents SDK `Agent` on `OpenAIChatCompletionsModel`, its traces bridged to OTel
by the official instrumentation (`opentelemetry-instrumentation-openai-agents-v2`), content
captured. The SDK's own processor (its export to OpenAI's backend) is removed first, so
only the OTel bridge sees the run. A session carries the conversation across turns and the
run's group id names it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(base_url: str, stack: str, scenario: str) -> None:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        RunConfig,
        Runner,
        SQLiteSession,
        function_tool,
    )
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="test-key", base_url=base_url, max_retries=0)
    agent = Agent(
        name=AGENT_NAME, instructions=SYSTEM_PROMPT,
        model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
        tools=[function_tool(fn) for fn in FUNCTIONS],
    )  # fmt: skip
    conversation = f"sess-{stack}-{scenario}"
    session = SQLiteSession(conversation)
    config = RunConfig(group_id=conversation)
    for turn in SCENARIOS[scenario].turns:
        await Runner.run(agent, turn.request, session=session, run_config=config)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from agents import set_trace_processors
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        set_trace_processors([])
        instrumentor = OpenAIAgentsInstrumentor()
        instrumentor.instrument(tracer_provider=tracer_provider)
        try:
            asyncio.run(converse(base_url, stack, scenario))
        finally:
            instrumentor.uninstrument()


ENV = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
