"""Two Microsoft Agent Framework `Agent`s on its OpenAI chat completions client, orchestrated
by `HandoffBuilder` (agent-framework-orchestrations: a workflow whose executors run the
agents): the triage agent, the start agent, is offered a `handoff_to_weather_specialist`
tool; once the model calls it the workflow runs the specialist (`get_weather`) on the
conversation so far. When the specialist answers without a handoff the workflow asks the
user for more (a `request_info` event) and the run ends: that is the turn. The next user
message is the response to that request, routed through the start agent
(`enable_return_to_previous(False)`: else the specialist, which asked, would get it), in a
second run of the same workflow. A stack named `...-as-tool` gives the triage agent the
specialist as a tool instead (`Agent.as_tool`: a call runs the specialist on the `task` the
triage agent wrote, its text the result, and the triage agent answers from it), no
workflow; one session carries the triage agent's conversation. Traced by the framework
itself, sensitive data on, as `agent_framework_agent`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL
from tests.ingest.instrumented.stacks.agent_framework_agent import ENV
from tests.ingest.instrumented.stacks.common import main, providers, team


async def converse(base_url: str, stack: str, scenario: str) -> None:
    from agent_framework import Agent
    from agent_framework.observability import enable_instrumentation
    from agent_framework.orchestrations import HandoffAgentUserRequest, HandoffBuilder
    from agent_framework_openai import OpenAIChatCompletionClient

    enable_instrumentation(enable_sensitive_data=True)
    client = OpenAIChatCompletionClient(model=MODEL, api_key="test-key", base_url=base_url)
    # The workflow requires it of its agents: their local history is kept per model call, so
    # a handoff call the workflow short-circuits still gets its result.
    persist = {"require_per_service_call_history_persistence": True}
    agents = team(stack, scenario)
    triage = Agent(client=client, instructions=agents.triage_prompt, name=agents.triage, **persist)
    specialist = Agent(
        client=client, instructions=agents.specialist_prompt, name=agents.specialist,
        description=agents.specialist_role, **persist, tools=agents.specialist_tools,
    )  # fmt: skip
    if stack.endswith("-as-tool"):
        delegate = specialist.as_tool(description=agents.specialist_role)
        alone = Agent(client=client, instructions=agents.triage_prompt, name=agents.triage,
                      tools=[delegate])  # fmt: skip
        session = alone.create_session(session_id=agents.session)
        for request in agents.requests:
            await alone.run(request, session=session)
        return
    workflow = (
        HandoffBuilder(participants=[triage, specialist])
        .with_start_agent(triage)
        .add_handoff(triage, [specialist])
        .enable_return_to_previous(False)
        .build()
    )
    pending: list[str] = []
    for request in agents.requests:
        if not pending:
            result = await workflow.run(request)
        else:
            answer = HandoffAgentUserRequest.create_response(request)
            result = await workflow.run(responses={pending[0]: answer})
        pending = [e.request_id for e in result.get_request_info_events()]


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        asyncio.run(converse(base_url, stack, scenario))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
