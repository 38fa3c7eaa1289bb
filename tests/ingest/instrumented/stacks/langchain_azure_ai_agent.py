"""LangChain v1's agent (`langchain.agents.create_agent`, as `langchain_v1_agent` builds it)
on `ChatOpenAI`, traced by langchain-azure-ai's `AzureAIOpenTelemetryTracer`: a LangChain
callback handler that emits OTel GenAI spans through the global tracer provider (here the
plain file exporter: `auto_configure_azure_monitor=False`, no Azure service), content
recorded (`enable_content_recording=True`, its default). The handler goes in each run's
`callbacks`, as its docs show; `langchain-azure-ai-stream` drives the agent with
`agent.stream(..., stream_mode="messages")`, so the chat model streams its tokens."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.langchain_v1_agent import _errors_to_the_model
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def converse(base_url: str, stack: str, scenario: str) -> None:
    from langchain.agents import create_agent
    from langchain_azure_ai.callbacks.tracers import AzureAIOpenTelemetryTracer
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    tracer = AzureAIOpenTelemetryTracer(
        enable_content_recording=True, auto_configure_azure_monitor=False,
    )  # fmt: skip
    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="test-key", max_retries=0)
    agent = create_agent(
        llm, tools=list(FUNCTIONS), system_prompt=SYSTEM_PROMPT, name=AGENT_NAME,
        middleware=[_errors_to_the_model()], checkpointer=InMemorySaver(),
    )  # fmt: skip
    config: Any = {"configurable": {"thread_id": f"sess-{stack}-{scenario}"},
                   "callbacks": [tracer]}  # fmt: skip
    for turn in SCENARIOS[scenario].turns:
        said: Any = {"messages": [{"role": "user", "content": turn.request}]}
        if stack.endswith("-stream"):
            for _ in agent.stream(said, config, stream_mode="messages"):  # token by token
                pass
        else:
            agent.invoke(said, config)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        converse(base_url, stack, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
