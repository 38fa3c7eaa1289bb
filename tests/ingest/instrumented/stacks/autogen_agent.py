"""An AutoGen AgentChat `AssistantAgent` on autogen-ext's `OpenAIChatCompletionClient`.

AutoGen traces itself through the global tracer provider (`create_agent`, `invoke_agent`,
`execute_tool` spans: names, ids and the call id, no content); the model calls and their
content come from the official OTel OpenAI instrumentation (`opentelemetry-instrumentation-
openai-v2`) on the latest GenAI conventions, content in span attributes. The agent reflects
on its tool results (another model call for the answer, as the scenarios script) and the
same agent object carries the conversation across turns. `autogen-agentchat-stream` (and
`autogen-openinference-stream`) streams:
the agent with `model_client_stream=True` (each model call through the client's
`create_stream`), each turn through `agent.run_stream`, read to its end.

`autogen-openinference` traces the same agent with OpenInference's AutoGen AgentChat
instrumentation instead of the OTel OpenAI one (AutoGen's own spans stay, as they do for
anyone with a global tracer provider).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(base_url: str, scenario: str, stream: bool = False) -> None:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    client = OpenAIChatCompletionClient(
        model=MODEL, base_url=base_url, api_key="test-key", max_retries=0
    )
    agent = AssistantAgent(
        AGENT_NAME, model_client=client, tools=list(FUNCTIONS), system_message=SYSTEM_PROMPT,
        reflect_on_tool_use=True, model_client_stream=stream,
    )  # fmt: skip
    for turn in SCENARIOS[scenario].turns:
        if stream:
            async for _ in agent.run_stream(task=turn.request):  # message by message
                pass
        else:
            await agent.run(task=turn.request)
    await client.close()


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        if stack.startswith("autogen-openinference"):
            from openinference.instrumentation.autogen_agentchat import (
                AutogenAgentChatInstrumentor,
            )

            AutogenAgentChatInstrumentor().instrument(tracer_provider=tracer_provider)
        else:
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(
                tracer_provider=tracer_provider, logger_provider=logger_provider
            )
        asyncio.run(converse(base_url, scenario, stack.endswith("-stream")))


ENVS: dict[str, dict[str, str]] = {
    "autogen-agentchat": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
    },
    "autogen-openinference": {},
}
ENVS["autogen-agentchat-stream"] = ENVS["autogen-agentchat"]
ENVS["autogen-openinference-stream"] = ENVS["autogen-openinference"]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENVS[sys.argv[1]], run))
