"""A Strands `Agent` on its OpenAI model provider, traced by Strands itself with the latest
GenAI conventions (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`); the same
agent object carries the conversation across turns. `openlit-strands` adds `openlit.init`
(OpenLIT's Strands and OpenAI instrumentations) to Strands' own tracing."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, openlit_or
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def converse(base_url: str, stack: str, scenario: str) -> None:
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    model = OpenAIModel(
        client_args={"api_key": "test-key", "base_url": base_url, "max_retries": 0},
        model_id=MODEL,
    )
    session = f"sess-{stack}-{scenario}"
    agent = Agent(
        model=model, tools=[tool(fn) for fn in FUNCTIONS], system_prompt=SYSTEM_PROMPT,
        name=AGENT_NAME, callback_handler=None,
        trace_attributes={"session.id": session, "gen_ai.conversation.id": session},
    )  # fmt: skip
    for turn in SCENARIOS[scenario].turns:
        agent(turn.request)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with openlit_or(stack, out, scenario, lambda _: None):
        converse(base_url, stack, scenario)


ENV = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
