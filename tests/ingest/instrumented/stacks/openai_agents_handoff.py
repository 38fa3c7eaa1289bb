"""Two OpenAI Agents SDK agents on `OpenAIChatCompletionsModel`: a triage agent with no
tools of its own and a weather specialist with `get_weather`, under OpenInference's bridge
or the official OTel one (`opentelemetry-instrumentation-openai-agents-v2`), or the OTel
project's GenAI one and its OpenAI client instrumentation (`genai-...`, as
`genai_openai_agents_agent`), by the stack's name. The triage agent reaches the specialist
by a handoff (`handoffs=[...]`: the SDK offers it a `transfer_to_weather_specialist` tool
and, once called, runs the specialist on the same conversation in the same run), or, for a
stack named `...-as-tool`, by calling it as a tool (`Agent.as_tool`: a nested run on the
task the triage agent wrote, whose final text is the tool's result and which the triage
agent then answers from). A stack
named `...-nested` sets `RunConfig(nest_handoff_history=True)` (the SDK's opt-in beta: the
specialist gets the history before the handoff compacted into assistant summary text). A
stack named `...-responses-...` puts both agents on the SDK's default
`OpenAIResponsesModel` (the Responses API). One `Runner.run` per turn, as the single-agent
drivers."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

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
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(base_url: str, stack: str, scenario: str) -> None:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        RunConfig,
        Runner,
        function_tool,
    )
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    kind = OpenAIResponsesModel if "-responses-" in stack else OpenAIChatCompletionsModel
    model = kind(model=MODEL, openai_client=client)
    specialist = Agent(
        name=SPECIALIST_AGENT, instructions=SPECIALIST_PROMPT, model=model,
        tools=[function_tool(fn) for fn in FUNCTIONS if fn.__name__ in SPECIALIST_TOOLS],
    )  # fmt: skip
    if stack.endswith("-as-tool"):
        delegate = specialist.as_tool(
            tool_name=SPECIALIST_AGENT, tool_description="Answers weather questions."
        )
        triage = Agent(name=TRIAGE_AGENT, instructions=TRIAGE_PROMPT, model=model,
                       tools=[delegate])  # fmt: skip
    else:
        triage = Agent(name=TRIAGE_AGENT, instructions=TRIAGE_PROMPT, model=model,
                       handoffs=[specialist])  # fmt: skip
    config = RunConfig(nest_handoff_history=stack.endswith("-nested"))
    history: list[Any] = []
    for turn in ALL_SCENARIOS[scenario].turns:
        said = [*history, {"role": "user", "content": turn.request}]
        result = await Runner.run(triage, said, run_config=config)
        history = result.to_input_list()


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    if stack.startswith("genai-"):
        from tests.ingest.instrumented.stacks.genai_openai_agents_agent import instrumented

        with instrumented(stack, out, scenario):
            asyncio.run(converse(base_url, stack, scenario))
        return
    with providers(stack, out, scenario) as (tracer_provider, _):
        if "-otel" in stack:
            from agents import set_trace_processors
            from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

            set_trace_processors([])
        else:
            from openinference.instrumentation.openai_agents import (  # type: ignore[no-redef]
                OpenAIAgentsInstrumentor,
            )
        instrumentor = OpenAIAgentsInstrumentor()
        instrumentor.instrument(tracer_provider=tracer_provider)
        try:
            asyncio.run(converse(base_url, stack, scenario))
        finally:
            instrumentor.uninstrument()


ENV = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
