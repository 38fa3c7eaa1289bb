"""A classic LangChain `AgentExecutor` running a tool-calling agent
(`create_tool_calling_agent`, langchain-classic) on `ChatOpenAI`, under OpenLLMetry's LangChain
instrumentation. The app carries the conversation as the prompt's `chat_history` (each
turn's request and the executor's output), as the classic chat agent does; a failing tool
raises `ToolException`, which tells the model its error (`handle_tool_error`)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def _reporting(fn: Callable[..., Any]) -> Callable[..., Any]:
    from langchain_core.tools import ToolException

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc

    return call


def converse(base_url: str, scenario: str) -> None:
    from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="test-key", max_retries=0)
    tools = [tool(_reporting(fn)) for fn in FUNCTIONS]
    for t in tools:
        t.handle_tool_error = True
    prompt = ChatPromptTemplate.from_messages([
        ("system", SYSTEM_PROMPT),
        MessagesPlaceholder("chat_history", optional=True),
        ("human", "{input}"),
        MessagesPlaceholder("agent_scratchpad"),
    ])  # fmt: skip
    executor = AgentExecutor(
        agent=create_tool_calling_agent(llm, tools, prompt), tools=tools, name=AGENT_NAME,
        max_iterations=4,
    )  # fmt: skip
    history: list[Any] = []
    for turn in SCENARIOS[scenario].turns:
        result = executor.invoke({"input": turn.request, "chat_history": history})
        history += [HumanMessage(turn.request), AIMessage(result["output"])]


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        LangchainInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {"TRACELOOP_TRACE_CONTENT": "true"}, run))
