"""A LlamaIndex `AgentWorkflow` of two `FunctionAgent`s (their default: streaming) on the
OpenAI LLM, under OpenInference: the triage agent, the root, may hand off to the weather
specialist (the workflow offers it a `handoff(to_agent, reason)` tool; once called, the
specialist runs on the same chat history, the handoff's output telling it to go on), and
the specialist (`get_weather`, `can_handoff_to=[]`) answers. One `Context` carries the
conversation across turns; the workflow keeps the last agent current, so each new user
message is routed to the root agent again, as an application that triages every request
does. One OpenInference session over the scenario, as `llamaindex_agent`."""

from __future__ import annotations

import asyncio
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
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(base_url: str, scenario: str) -> None:
    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.core.workflow import Context
    from llama_index.llms.openai import OpenAI

    llm = OpenAI(model=MODEL, api_base=base_url, api_key="test-key", max_retries=0)
    triage = FunctionAgent(
        name=TRIAGE_AGENT, description="Routes requests to a specialist.",
        system_prompt=TRIAGE_PROMPT, llm=llm, can_handoff_to=[SPECIALIST_AGENT],
    )  # fmt: skip
    specialist = FunctionAgent(
        name=SPECIALIST_AGENT, description="Answers weather questions.",
        system_prompt=SPECIALIST_PROMPT, llm=llm, can_handoff_to=[],
        tools=[FunctionTool.from_defaults(fn) for fn in FUNCTIONS
               if fn.__name__ in SPECIALIST_TOOLS],
    )  # fmt: skip
    workflow = AgentWorkflow(agents=[triage, specialist], root_agent=TRIAGE_AGENT)
    ctx = Context(workflow)
    for turn in ALL_SCENARIOS[scenario].turns:
        await ctx.store.set("current_agent_name", TRIAGE_AGENT)
        await workflow.run(turn.request, ctx=ctx)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation import using_session
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        LlamaIndexInstrumentor().instrument(tracer_provider=tracer_provider)
        with using_session(f"sess-{stack}-{scenario}"):
            asyncio.run(converse(base_url, scenario))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
