"""A smolagents manager `ToolCallingAgent` (the triage agent, no tools of its own) with the
weather specialist as its managed agent, both on `OpenAIServerModel`, under OpenInference:
the manager is offered the specialist as a tool (`weather_specialist(task,
additional_args)`); calling it runs the specialist (`MultiStepAgent.__call__`) on the task
the manager wrote, wrapped in smolagents' managed-agent prompt, and its final answer,
wrapped in a report, is the call's result; the manager then answers through its
`final_answer` tool. Each agent answers through `final_answer`; the second turn continues
the manager's memory (the specialist starts afresh on each task, as smolagents resets a
managed agent). One OpenInference session over the scenario, as `smolagents_agent`."""

from __future__ import annotations

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


def converse(base_url: str, scenario: str) -> None:
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    model = OpenAIServerModel(model_id=MODEL, api_base=base_url, api_key="test-key")
    specialist = ToolCallingAgent(
        tools=[tool(fn) for fn in FUNCTIONS if fn.__name__ in SPECIALIST_TOOLS], model=model,
        name=SPECIALIST_AGENT, description="Answers weather questions.",
        instructions=SPECIALIST_PROMPT, max_steps=4, verbosity_level=0,
    )  # fmt: skip
    triage = ToolCallingAgent(
        tools=[], managed_agents=[specialist], model=model, name=TRIAGE_AGENT,
        description="Routes requests to a specialist.", instructions=TRIAGE_PROMPT, max_steps=4,
        verbosity_level=0,
    )  # fmt: skip
    for k, turn in enumerate(ALL_SCENARIOS[scenario].turns):
        triage.run(turn.request, reset=k == 0)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation import using_session
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor

        SmolagentsInstrumentor().instrument(tracer_provider=tracer_provider)
        with using_session(f"sess-{stack}-{scenario}"):
            converse(base_url, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
