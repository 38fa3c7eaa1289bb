"""A Semantic Kernel `ChatCompletionAgent` on its OpenAI connector, the tools as one plugin,
traced by Semantic Kernel itself with sensitive diagnostics on
(`SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE`): `invoke_agent`,
`chat`, `execute_tool` spans, and the messages of each model call as Python log records
(`event.name` attribute, JSON body), bridged to OTLP logs by the OTel logging handler as
Semantic Kernel's telemetry guide sets it up. The agent's thread carries the chat history
across turns. `semantic-kernel-stream` streams each turn (`agent.invoke_stream`, read to its
end: every model call of it streams). `semantic-kernel-openinference-openai` (and its
`-stream`) adds OpenInference's OpenAI instrumentation on the connector's client, a client
instrumentation beside Semantic Kernel's own spans."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(base_url: str, scenario: str, stream: bool = False) -> None:
    from openai import AsyncOpenAI
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.functions import KernelPlugin, kernel_function

    client = AsyncOpenAI(api_key="test-key", base_url=base_url, max_retries=0)
    service = OpenAIChatCompletion(ai_model_id=MODEL, async_client=client)
    plugin = KernelPlugin(name="tools", functions=[kernel_function(fn) for fn in FUNCTIONS])
    agent = ChatCompletionAgent(service=service, name=AGENT_NAME, instructions=SYSTEM_PROMPT,
                                plugins=[plugin])  # fmt: skip
    thread = None
    for turn in SCENARIOS[scenario].turns:
        if stream:
            async for chunk in agent.invoke_stream(messages=turn.request, thread=thread):
                thread = chunk.thread
        else:
            response = await agent.get_response(messages=turn.request, thread=thread)
            thread = response.thread


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        from opentelemetry.sdk._logs import LoggingHandler

        if "-openinference-openai" in stack:
            from openinference.instrumentation.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)

        handler = LoggingHandler(logger_provider=logger_provider)
        handler.addFilter(logging.Filter("semantic_kernel"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        try:
            asyncio.run(converse(base_url, scenario, stack.endswith("-stream")))
        finally:
            root.removeHandler(handler)


ENV = {"SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
