"""An OpenAI Agents SDK `Agent` on `OpenAIChatCompletionsModel`, under OpenInference's
bridge (its tracing processor, exclusive: nothing goes to OpenAI's backend). Each turn is
one `Runner.run`; the next turn's input is the previous run's items
(`result.to_input_list()`) and the user's new message, as an app carries a conversation.
`openai-agents-openinference-responses` runs it on the SDK's default model,
`OpenAIResponsesModel` (the Responses API), given the same client; its `-stream` variant
runs each turn with `Runner.run_streamed` (the model streams its response events).

`openlit-openai-agents`: the same agent under OpenLIT instead, whose one `openlit.init`
instruments the Agents SDK (its tracing processor) and the OpenAI client under it at once,
exporting through the global provider `providers()` set (as `openlit_loop`); `-stream` runs
each turn with `Runner.run_streamed`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(
    base_url: str, scenario: str, responses: bool = False, stream: bool = False
) -> None:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        Runner,
        function_tool,
    )
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    model = OpenAIResponsesModel if responses else OpenAIChatCompletionsModel
    agent = Agent(
        name=AGENT_NAME, instructions=SYSTEM_PROMPT,
        model=model(model=MODEL, openai_client=client),
        tools=[function_tool(fn) for fn in FUNCTIONS],
    )  # fmt: skip
    history: list[Any] = []
    for turn in SCENARIOS[scenario].turns:
        said = [*history, {"role": "user", "content": turn.request}]
        if stream:  # every model call streamed, the run's events read to its end
            streamed = Runner.run_streamed(agent, said)
            async for _ in streamed.stream_events():
                pass
            history = streamed.to_input_list()
            continue
        result = await Runner.run(agent, said)
        history = result.to_input_list()


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        if stack.startswith("openlit-"):
            import openlit

            openlit.init(application_name=stack, capture_message_content=True,
                         disable_metrics=True)
        else:
            from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

            OpenAIAgentsInstrumentor().instrument(tracer_provider=tracer_provider)
        asyncio.run(converse(base_url, scenario, "-responses" in stack, stack.endswith("-stream")))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
