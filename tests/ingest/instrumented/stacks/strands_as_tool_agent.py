"""Two Strands agents on its OpenAI model provider, traced by Strands itself with the latest
GenAI conventions (as `strands_agent`): a triage agent whose only tool is the weather
specialist (`Agent.as_tool`: the specialist runs on the task the triage agent wrote, its
final text the tool's result), and the specialist with `get_weather`. The triage agent
answers after it (`strands-as-tool`), or, with `delegate=True` (`strands-as-tool-delegate`),
the specialist's answer is the run's and the triage agent makes no further model call. The
triage agent object carries the conversation across turns."""

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


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        from strands import Agent, tool
        from strands.models.openai import OpenAIModel

        model = OpenAIModel(
            client_args={"api_key": "test-key", "base_url": base_url, "max_retries": 0},
            model_id=MODEL,
        )
        session = f"sess-{stack}-{scenario}"
        specialist = Agent(
            model=model, system_prompt=SPECIALIST_PROMPT, name=SPECIALIST_AGENT,
            tools=[tool(fn) for fn in FUNCTIONS if fn.__name__ in SPECIALIST_TOOLS],
            callback_handler=None,
        )  # fmt: skip
        delegate = specialist.as_tool(
            description="Answers weather questions.", delegate=stack.endswith("-delegate")
        )
        triage = Agent(
            model=model, tools=[delegate], system_prompt=TRIAGE_PROMPT, name=TRIAGE_AGENT,
            callback_handler=None,
            trace_attributes={"session.id": session, "gen_ai.conversation.id": session},
        )  # fmt: skip
        for turn in ALL_SCENARIOS[scenario].turns:
            triage(turn.request)


ENV = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
