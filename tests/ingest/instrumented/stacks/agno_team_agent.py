"""An Agno `Team` on its `OpenAIChat` model (chat completions), under OpenInference's Agno
instrumentation: the team leader (the triage agent) delegates to its one member, the weather
specialist (an `Agent` with `get_weather`), through the team's `delegate_task_to_members(task)`
tool (`delegate_to_all_members=True`: the member runs on the task the leader wrote, its
answer the tool's result), then answers from it (`agno-openinference-team`).
`agno-openinference-team-coordinate` and `-route` run the team in `TeamMode.coordinate` (the
leader delegates through `delegate_task_to_member(member_id, task)`, then answers from the
member's answer) and `TeamMode.route` (the same tool, the member's answer the run's, no
model call after it); the member's id is its name, set as an app does so that the id the
leader is shown is the name (Agno otherwise makes it url-safe, `weather-specialist`). The
team keeps its sessions in an in-memory database and adds the session's history to each
run, as `agno_agent`. `agno-openllmetry-team-coordinate` is the coordinate team under
OpenLLMetry's Agno and OpenAI instrumentations instead, content traced."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL
from tests.ingest.instrumented.stacks.common import main, providers, team


def converse(base_url: str, stack: str, scenario: str) -> None:
    from agno.agent import Agent
    from agno.db.in_memory import InMemoryDb
    from agno.models.openai import OpenAIChat
    from agno.team import Team
    from agno.team.mode import TeamMode

    def model() -> OpenAIChat:
        return OpenAIChat(id=MODEL, base_url=base_url, api_key="test-key", max_retries=0)

    mode = stack.rsplit("-", 1)[1]
    moded = mode in ("coordinate", "route")
    agents = team(stack, scenario)
    specialist = Agent(
        name=agents.specialist, role=agents.specialist_role, instructions=agents.specialist_prompt,
        tools=agents.specialist_tools, model=model(), telemetry=False,
        **({"id": agents.specialist} if moded else {}),
    )  # fmt: skip
    leader = Team(
        name=agents.triage, members=[specialist], model=model(), instructions=agents.triage_prompt,
        db=InMemoryDb(), add_history_to_context=True, telemetry=False,
        **({"mode": TeamMode(mode)} if moded else {"delegate_to_all_members": True}),
    )  # fmt: skip
    for request in agents.requests:
        leader.run(request, session_id=agents.session)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        if "openllmetry" in stack:
            from opentelemetry.instrumentation.agno import AgnoInstrumentor as LLMetryAgno
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor

            LLMetryAgno().instrument(tracer_provider=tracer_provider)
            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
            converse(base_url, stack, scenario)
            return
        from openinference.instrumentation.agno import AgnoInstrumentor

        AgnoInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, stack, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {"AGNO_TELEMETRY": "false", "TRACELOOP_TRACE_CONTENT": "true",
                                 "TRACELOOP_METRICS_ENABLED": "false"}, run))
