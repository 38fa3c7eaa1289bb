"""An OpenAI Agents SDK `Agent` under the OTel project's GenAI framework instrumentation
(`opentelemetry-instrumentation-genai-openai-agents`, from opentelemetry-python-genai, on
`opentelemetry-util-genai`): a tracing processor that turns the SDK's trace, agent and
function spans into invoke_workflow, invoke_agent and execute_tool spans, and by design no
model span (its docstring: those come from the OpenAI client instrumentation). Content is
captured on spans (`span_only`); the SDK's own export to OpenAI's backend is removed
(`disable_openai_trace_export`). A session carries the conversation across turns and the
run's group id names it (the workflow span's `gen_ai.conversation.id`).

`genai-openai-agents` runs the SDK's chat completions model with the framework
instrumentation alone (what its model calls are, the export never says: which model, API or
streaming ran makes no difference to it, so one stack stands for them); a stack with
`-openai` after the framework's name turns the same project's OpenAI client instrumentation
(`opentelemetry-instrumentation-genai-openai`) on too, whose chat spans are the model calls;
`-responses` runs the SDK's default `OpenAIResponsesModel` (the Responses API), and
`-stream` runs each turn with `Runner.run_streamed`; `-event-only` captures content in the
operation.details log events alone (as `genai_langchain_agent`)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS

FRAMEWORK = "genai-openai-agents"


async def converse(base_url: str, stack: str, scenario: str) -> None:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        RunConfig,
        Runner,
        SQLiteSession,
        function_tool,
    )
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="test-key", base_url=base_url, max_retries=0)
    model = OpenAIResponsesModel if "-responses" in stack else OpenAIChatCompletionsModel
    agent = Agent(
        name=AGENT_NAME, instructions=SYSTEM_PROMPT,
        model=model(model=MODEL, openai_client=client),
        tools=[function_tool(fn) for fn in FUNCTIONS],
    )  # fmt: skip
    conversation = f"sess-{stack}-{scenario}"
    session = SQLiteSession(conversation)
    config = RunConfig(group_id=conversation)
    for turn in SCENARIOS[scenario].turns:
        if stack.endswith("-stream"):  # every model call streamed, the events read to the end
            streamed = Runner.run_streamed(agent, turn.request, session=session,
                                           run_config=config)  # fmt: skip
            async for _ in streamed.stream_events():
                pass
            continue
        await Runner.run(agent, turn.request, session=session, run_config=config)


@contextmanager
def instrumented(stack: str, out: Path, scenario: str) -> Iterator[None]:
    """`providers()` with the stack's instrumentations on (`openai_agents_handoff` too)."""
    from tests.ingest.instrumented.stacks.genai_langchain_agent import content_mode

    content_mode(stack)
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        from opentelemetry.instrumentation.genai.openai_agents import OpenAIAgentsInstrumentor

        instrumentor = OpenAIAgentsInstrumentor()
        instrumentor.instrument(tracer_provider=tracer_provider, logger_provider=logger_provider,
                                disable_openai_trace_export=True)  # fmt: skip
        if "-openai" in stack.removeprefix(FRAMEWORK):
            from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(
                tracer_provider=tracer_provider, logger_provider=logger_provider
            )
        try:
            yield
        finally:
            instrumentor.uninstrument()


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with instrumented(stack, out, scenario):
        asyncio.run(converse(base_url, stack, scenario))


ENV = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
