"""LangChain v1's agent (`langchain.agents.create_agent`, langchain>=1: a LangGraph graph of
a model node and a tool node, where `langgraph.prebuilt.create_react_agent` was) on
`ChatOpenAI`; a checkpointer thread carries the conversation across turns. A tool's failure
reaches the model as an error `ToolMessage` (a `wrap_tool_call` middleware: v1's tool node
re-raises a tool's own exceptions by default). Instrumented by OpenInference's LangChain
instrumentation (`langchain-v1-openinference`) or OpenLLMetry's
(`langchain-v1-openllmetry`), or by both at once (`langchain-v1-openinference-openllmetry`:
an app that followed both vendors' instructions, each handler on LangChain's callback
manager recording every run); each `-stream` drives the agent with `agent.stream(...,
stream_mode="messages")`, so the chat model streams its tokens."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def _errors_to_the_model() -> Any:
    from langchain.agents.middleware import wrap_tool_call
    from langchain_core.messages import ToolMessage

    @wrap_tool_call  # type: ignore[misc]
    def tell_errors(request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(request)
        except Exception as exc:
            return ToolMessage(content=f"Error: {type(exc).__name__}: {exc}",
                               tool_call_id=request.tool_call["id"], status="error")

    return tell_errors


def converse(base_url: str, stack: str, scenario: str) -> None:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="test-key", max_retries=0)
    agent = create_agent(
        llm, tools=list(FUNCTIONS), system_prompt=SYSTEM_PROMPT, name=AGENT_NAME,
        middleware=[_errors_to_the_model()], checkpointer=InMemorySaver(),
    )  # fmt: skip
    config: Any = {"configurable": {"thread_id": f"sess-{stack}-{scenario}"}}
    for turn in SCENARIOS[scenario].turns:
        said: Any = {"messages": [{"role": "user", "content": turn.request}]}
        if stack.endswith("-stream"):
            for _ in agent.stream(said, config, stream_mode="messages"):  # token by token
                pass
        else:
            agent.invoke(said, config)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        if "-openinference" in stack:
            from openinference.instrumentation.langchain import LangChainInstrumentor

            LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
        if "-openllmetry" in stack:
            from opentelemetry.instrumentation.langchain import LangchainInstrumentor

            LangchainInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, stack, scenario)


ENV = {"TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_METRICS_ENABLED": "false"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
