"""An Agno `Agent` on its `OpenAIChat` model (chat completions), under OpenInference's Agno
instrumentation. The agent keeps its sessions in an in-memory database and adds the
session's history to each run, so the turns of a scenario are one conversation
(`session_id`), as an app serving it runs them. `agno-openinference-stream` runs each turn
streamed (`agent.run(..., stream=True)` read to its end: every model call streams).
`openlit-agno` (and `-stream`): under OpenLIT instead (`openlit.init`: its Agno and OpenAI
instrumentations at once)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, openlit_or, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def converse(base_url: str, stack: str, scenario: str) -> None:
    from agno.agent import Agent
    from agno.db.in_memory import InMemoryDb
    from agno.models.openai import OpenAIChat

    agent = Agent(
        name=AGENT_NAME, instructions=SYSTEM_PROMPT, tools=list(FUNCTIONS),
        model=OpenAIChat(id=MODEL, base_url=base_url, api_key="test-key", max_retries=0),
        db=InMemoryDb(), add_history_to_context=True, telemetry=False,
    )  # fmt: skip
    session = f"sess-{stack}-{scenario}"
    for turn in SCENARIOS[scenario].turns:
        if stack.endswith("-stream"):
            for _ in agent.run(turn.request, session_id=session, stream=True):  # event by event
                pass
        else:
            agent.run(turn.request, session_id=session)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    if stack.startswith("openlit"):
        with openlit_or(stack, out, scenario, lambda _: None):
            converse(base_url, stack, scenario)
        return
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation.agno import AgnoInstrumentor

        AgnoInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, stack, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {"AGNO_TELEMETRY": "false"}, run))
