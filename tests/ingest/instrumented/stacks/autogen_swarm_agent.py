"""An AutoGen AgentChat `Swarm` of two `AssistantAgent`s on autogen-ext's
`OpenAIChatCompletionClient`: a triage agent whose only tool is its handoff to the weather
specialist (`handoffs=[...]`: AgentChat offers it a `transfer_to_weather_specialist` tool
and, once the model calls it, answers with a `HandoffMessage` that makes the specialist the
swarm's speaker, the call and its result handed over as the message's context), and the
specialist with `get_weather`, reflecting on its result (another model call for the
answer). The team ends a run on the specialist's text (`TextMessageTermination`); each
turn starts as a `HandoffMessage` from the user to the triage agent (AgentChat's way to
resume a swarm with a chosen speaker: else the last speaker, the specialist, would get the
next request), so the team carries the conversation across turns.

A stack named `...-as-tool...` (`autogen-as-tool`, `autogen-as-tool-openinference`) gives the
triage agent the specialist as a tool instead (`AgentTool`: a call runs the specialist on
the task the triage agent wrote, `task`, and returns its messages, the last one its
answer), reflecting on the result (the triage agent answers): no team, each turn one
`run` of the triage agent, which carries the conversation.

Traced as `autogen_agent` traces its single agent: AutoGen's own spans (the runtime's and
each agent's `invoke_agent`, each tool's `execute_tool`) plus the OTel OpenAI
instrumentation's model calls (`autogen-swarm`), or OpenInference's AutoGen AgentChat
instrumentation (`autogen-swarm-openinference`), by the stack's name.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL
from tests.ingest.instrumented.stacks.autogen_agent import ENVS
from tests.ingest.instrumented.stacks.common import main, providers, team


async def converse(base_url: str, stack: str, scenario: str) -> None:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.conditions import MaxMessageTermination, TextMessageTermination
    from autogen_agentchat.messages import HandoffMessage
    from autogen_agentchat.teams import Swarm
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    client = OpenAIChatCompletionClient(
        model=MODEL, base_url=base_url, api_key="test-key", max_retries=0
    )
    agents = team(stack, scenario)
    triage = AssistantAgent(
        agents.triage, model_client=client, system_message=agents.triage_prompt,
        handoffs=[agents.specialist],
    )  # fmt: skip
    specialist = AssistantAgent(
        agents.specialist, model_client=client, system_message=agents.specialist_prompt,
        tools=agents.specialist_tools, reflect_on_tool_use=True,
        description=agents.specialist_role,
    )  # fmt: skip
    if "-as-tool" in stack:
        from autogen_agentchat.tools import AgentTool

        delegate = AgentTool(specialist, return_value_as_last_message=True)
        alone = AssistantAgent(
            agents.triage, model_client=client, system_message=agents.triage_prompt,
            tools=[delegate], reflect_on_tool_use=True,
        )  # fmt: skip
        for request in agents.requests:
            await alone.run(task=request)
        await client.close()
        return
    ended = TextMessageTermination(agents.specialist) | MaxMessageTermination(12)
    swarm = Swarm([triage, specialist], termination_condition=ended)
    for request in agents.requests:
        await swarm.run(task=HandoffMessage(source="user", target=agents.triage,
                                            content=request))  # fmt: skip
    await client.close()


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        if stack.endswith("-openinference"):
            from openinference.instrumentation.autogen_agentchat import (
                AutogenAgentChatInstrumentor,
            )

            AutogenAgentChatInstrumentor().instrument(tracer_provider=tracer_provider)
        else:
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(
                tracer_provider=tracer_provider, logger_provider=logger_provider
            )
        asyncio.run(converse(base_url, stack, scenario))


if __name__ == "__main__":
    traced = sys.argv[1].endswith("-openinference")
    sys.exit(main(sys.argv[1:], ENVS["autogen-openinference" if traced else "autogen-agentchat"],
                  run))  # fmt: skip
