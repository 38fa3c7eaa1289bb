"""A Microsoft Agent Framework `Agent` on its OpenAI chat completions client, traced by the
framework itself (`agent_framework.observability`: `invoke_agent`, `chat`, `execute_tool`
spans on the GenAI conventions) with sensitive data on; one session carries the
conversation across turns. `agent-framework-stream` streams each turn (`agent.run(...,
stream=True)`, its updates read to the end, then `get_final_response()`).
`agent-framework-openinference-openai` adds OpenInference's OpenAI
instrumentation on the chat client's openai SDK, `agent-framework-openllmetry-openai`
OpenLLMetry's: the client's span of each call under the framework's `chat` span (each with
`-stream`)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(base_url: str, stack: str, scenario: str) -> None:
    from agent_framework import Agent
    from agent_framework.observability import enable_instrumentation
    from agent_framework_openai import OpenAIChatCompletionClient

    enable_instrumentation(enable_sensitive_data=True)
    client = OpenAIChatCompletionClient(model=MODEL, api_key="test-key", base_url=base_url)
    agent = Agent(client=client, instructions=SYSTEM_PROMPT, name=AGENT_NAME,
                  tools=list(FUNCTIONS))  # fmt: skip
    session = agent.create_session(session_id=f"sess-{stack}-{scenario}")
    for turn in SCENARIOS[scenario].turns:
        if stack.endswith("-stream"):
            streamed = agent.run(turn.request, session=session, stream=True)
            async for _ in streamed:  # update by update
                pass
            await streamed.get_final_response()
        else:
            await agent.run(turn.request, session=session)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        if "-openinference-openai" in stack:
            from openinference.instrumentation.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        if "-openllmetry-openai" in stack:
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor as LLMetry

            LLMetry().instrument(tracer_provider=tracer_provider)
        asyncio.run(converse(base_url, stack, scenario))


ENV = {"ENABLE_INSTRUMENTATION": "true", "ENABLE_SENSITIVE_DATA": "true",
       "TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_METRICS_ENABLED": "false"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
