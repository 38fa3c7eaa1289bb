"""Two Semantic Kernel `ChatCompletionAgent`s on its OpenAI connector in a
`HandoffOrchestration` on the in-process runtime: the triage agent (the first member) is
offered the orchestration's `Handoff` plugin (`transfer_to_weather_specialist`,
`complete_task`); once the model calls the transfer, the orchestration runs the specialist
(its `weather` plugin's `get_weather`, and `complete_task`) on the conversation. When the
specialist answers with text and no human-response function is set, the orchestration
completes the task itself: that run is the turn. The application keeps the conversation
and hands the next run all of it (the earlier request and answer, then the new request:
the orchestration's task may be a list of messages). Traced as `semantic_kernel_agent`:
Semantic Kernel's own spans, the messages as log records bridged to OTLP logs."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import (
    ALL_SCENARIOS,
    MODEL,
    SPECIALIST_AGENT,
    SPECIALIST_PROMPT,
    SPECIALIST_TOOLS,
    TRIAGE_AGENT,
    TRIAGE_PROMPT,
)
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.semantic_kernel_agent import ENV
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(base_url: str, scenario: str) -> None:
    from openai import AsyncOpenAI
    from semantic_kernel.agents import (
        ChatCompletionAgent,
        HandoffOrchestration,
        OrchestrationHandoffs,
    )
    from semantic_kernel.agents.runtime import InProcessRuntime
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.contents import AuthorRole, ChatMessageContent
    from semantic_kernel.functions import KernelPlugin, kernel_function

    client = AsyncOpenAI(api_key="test-key", base_url=base_url, max_retries=0)
    service = OpenAIChatCompletion(ai_model_id=MODEL, async_client=client)
    plugin = KernelPlugin(name="weather", functions=[
        kernel_function(fn) for fn in FUNCTIONS if fn.__name__ in SPECIALIST_TOOLS
    ])  # fmt: skip
    triage = ChatCompletionAgent(service=service, name=TRIAGE_AGENT, instructions=TRIAGE_PROMPT,
                                 description="Routes requests to a specialist.")  # fmt: skip
    specialist = ChatCompletionAgent(
        service=service, name=SPECIALIST_AGENT, instructions=SPECIALIST_PROMPT,
        description="Answers weather questions.", plugins=[plugin],
    )  # fmt: skip
    handoffs = OrchestrationHandoffs().add(triage, specialist, "Answers weather questions.")
    history: list[ChatMessageContent] = []
    runtime = InProcessRuntime()
    runtime.start()
    try:
        for turn in ALL_SCENARIOS[scenario].turns:
            said: list[ChatMessageContent] = []
            orchestration = HandoffOrchestration(
                members=[triage, specialist], handoffs=handoffs,
                agent_response_callback=lambda m, said=said: said.append(m),
            )  # fmt: skip
            history.append(ChatMessageContent(role=AuthorRole.USER, content=turn.request))
            result = await orchestration.invoke(task=list(history), runtime=runtime)
            await result.get(timeout=60)
            history += [m for m in said if m.role == AuthorRole.ASSISTANT and m.content][-1:]
    finally:
        await runtime.stop_when_idle()


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (_, logger_provider):
        from opentelemetry.sdk._logs import LoggingHandler

        handler = LoggingHandler(logger_provider=logger_provider)
        handler.addFilter(logging.Filter("semantic_kernel"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        try:
            asyncio.run(converse(base_url, scenario))
        finally:
            root.removeHandler(handler)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
