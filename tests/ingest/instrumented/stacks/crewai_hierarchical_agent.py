"""A hierarchical CrewAI crew, one kickoff per user turn: the manager (the triage agent,
`manager_agent`, no tools of its own) gets the task and, as `Process.hierarchical` makes it,
CrewAI's coworker tools (`Delegate work to coworker(task, context, coworker)` and `Ask
question to coworker(question, context, coworker)`, the coworker named by its role); it
delegates to the weather specialist (an agent with `get_weather`), who runs the task it wrote
and whose answer is the tool's result; then the manager answers from it.

`crewai-openinference-hierarchical`: under OpenInference's CrewAI and OpenAI
instrumentations, the turns of a scenario in one session (as `crewai_agent`).
`crewai-openllmetry-hierarchical`: under OpenLLMetry's CrewAI and OpenAI instrumentations,
content traced (as `crewai_openllmetry_agent`)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL
from tests.ingest.instrumented.stacks.common import main, providers, team
from tests.ingest.instrumented.stacks.crewai_agent import _ENV


def converse(base_url: str, stack: str, scenario: str) -> None:
    from crewai import LLM, Agent, Crew, Process, Task
    from crewai.tools import tool

    def llm() -> LLM:
        return LLM(model=f"openai/{MODEL}", base_url=base_url, api_key="test-key",
                   max_retries=0)  # fmt: skip

    agents = team(stack, scenario)
    specialist = Agent(
        role=agents.specialist, goal="Answer weather questions.",
        backstory=agents.specialist_prompt, tools=[tool(fn) for fn in agents.specialist_tools],
        llm=llm(), max_iter=4, verbose=False, allow_delegation=False,
    )  # fmt: skip
    manager = Agent(
        role=agents.triage, goal="Get the user's request answered by the right coworker.",
        backstory=agents.triage_prompt, llm=llm(), max_iter=4, verbose=False,
        allow_delegation=True,
    )  # fmt: skip
    task = Task(description="{request}", expected_output="The answer to the request.")
    crew = Crew(agents=[specialist], tasks=[task], process=Process.hierarchical,
                manager_agent=manager, verbose=False)  # fmt: skip
    for request in agents.requests:
        crew.kickoff(inputs={"request": request})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        if "openllmetry" in stack:
            from opentelemetry.instrumentation.crewai import CrewAIInstrumentor as LLMetryCrewAI
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor as LLMetryOpenAI

            LLMetryCrewAI().instrument(tracer_provider=tracer_provider)
            LLMetryOpenAI().instrument(tracer_provider=tracer_provider)
            converse(base_url, stack, scenario)
            return
        from openinference.instrumentation import using_session
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor

        CrewAIInstrumentor().instrument(tracer_provider=tracer_provider)
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        with using_session(team(stack, scenario).session):
            converse(base_url, stack, scenario)


ENV = {**_ENV, "TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_METRICS_ENABLED": "false"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
