"""A CrewAI crew, one kickoff per user turn, under OpenInference's CrewAI instrumentation
(crew, task and tool spans) and its OpenAI instrumentation (CrewAI's native OpenAI provider
calls the openai SDK). The turns of a scenario share one OpenInference session, as an app
serving one conversation sets it.

`crewai-openinference`: one agent with the scenario's tools, one task (the request).
`crewai-openinference-sequential`: a sequential crew of two tasks serving each request, the
agent with the tools doing it, then an editor (no tools) writing the answer from its output
(the task's context): one user request, two tasks, one turn. The editor's task names the
request too, as such a task does (and so the scripted server knows the turn).
`crewai-openinference-stream`, `openlit-crewai-stream`: the one-agent crew streamed
(`Crew(stream=True)`, which turns its agents' LLMs to streaming; each kickoff's chunks read
to the end, then its `.result`).

`openlit-crewai`: the one-agent crew under OpenLIT instead, whose one `openlit.init`
instruments CrewAI and the OpenAI client under it at once, exporting through the global
provider `providers()` set (as `openlit_loop`); OpenLIT has no session to set."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def converse(base_url: str, stack: str, scenario: str) -> None:
    from crewai import LLM, Agent, Crew, Process, Task
    from crewai.tools import tool

    llm = LLM(model=f"openai/{MODEL}", base_url=base_url, api_key="test-key", max_retries=0)
    agent = Agent(
        role=AGENT_NAME, goal="Answer the user's request.", backstory=SYSTEM_PROMPT,
        tools=[tool(fn) for fn in FUNCTIONS], llm=llm, max_iter=4, verbose=False,
        allow_delegation=False,
    )  # fmt: skip
    task = Task(description="{request}", expected_output="The answer to the request.",
                agent=agent)  # fmt: skip
    agents, tasks = [agent], [task]
    if stack.endswith("-sequential"):
        editor = Agent(role="editor", goal="Give the user the answer.",
                       backstory="You write the final answer.", llm=llm, verbose=False,
                       allow_delegation=False)  # fmt: skip
        agents.append(editor)
        tasks.append(Task(description="Write the answer to this request: {request}",
                          expected_output="The final answer.", agent=editor,
                          context=[task]))  # fmt: skip
    stream = stack.endswith("-stream")
    crew = Crew(agents=agents, tasks=tasks, process=Process.sequential, verbose=False,
                **({"stream": True} if stream else {}))  # fmt: skip
    for turn in SCENARIOS[scenario].turns:
        out = crew.kickoff(inputs={"request": turn.request})
        if stream:
            for _ in out:  # chunk by chunk
                pass
            assert out.result is not None  # the kickoff's CrewOutput, once the chunks ran out


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        if stack.startswith("openlit-"):
            import openlit

            openlit.init(application_name=stack, capture_message_content=True,
                         disable_metrics=True)
            converse(base_url, stack, scenario)
            return
        from openinference.instrumentation import using_session
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor

        CrewAIInstrumentor().instrument(tracer_provider=tracer_provider)
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        with using_session(f"sess-{stack}-{scenario}"):
            converse(base_url, stack, scenario)


# CrewAI's own telemetry and trace upload are off (nothing leaves the machine), and its
# storage (task outputs, kickoff records) goes outside the repository.
_ENV = {"CREWAI_DISABLE_TELEMETRY": "true", "CREWAI_TRACING_ENABLED": "false",
        "CREWAI_STORAGE_DIR": "/tmp/crewai-stack"}  # fmt: skip

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], _ENV, run))
