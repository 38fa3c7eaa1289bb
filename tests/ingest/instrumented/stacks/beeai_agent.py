"""A BeeAI Framework `RequirementAgent` (its ReAct-style tool-calling agent: the model answers
through the `final_answer` tool, `{response}`) on `OpenAIChatModel` (LiteLLM underneath)
pointed at the scripted server's chat completions, under OpenInference's BeeAI
instrumentation; one agent and its memory carry the conversation across turns."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(base_url: str, scenario: str) -> None:
    from beeai_framework.adapters.openai import OpenAIChatModel
    from beeai_framework.agents.requirement import RequirementAgent
    from beeai_framework.memory import UnconstrainedMemory
    from beeai_framework.tools import tool

    # With a base URL BeeAI assumes a server without `tool_choice: required` and emulates
    # tool calling through a JSON response format; this one takes native tools (as OpenAI's
    # API does) and calls two tools at once in parallel_tools.
    llm = OpenAIChatModel(
        MODEL, api_key="test-key", base_url=base_url, allow_parallel_tool_calls=True,
        tool_choice_support={"required", "none", "single", "auto"},
    )  # fmt: skip
    agent = RequirementAgent(
        llm=llm, tools=[tool(fn) for fn in FUNCTIONS], memory=UnconstrainedMemory(),
        name=AGENT_NAME, instructions=SYSTEM_PROMPT,
    )  # fmt: skip
    for turn in SCENARIOS[scenario].turns:
        await agent.run(turn.request)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation.beeai import BeeAIInstrumentor

        BeeAIInstrumentor().instrument(tracer_provider=tracer_provider)
        asyncio.run(converse(base_url, scenario))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
