"""LangGraph's prebuilt ReAct agent on langchain-ollama's `ChatOllama` (the `ollama` client,
Ollama's native `/api/chat`), a checkpointer thread carrying the conversation across turns,
under OpenInference's LangChain instrumentation. ChatOllama streams every request (its
`_chat_params` default `stream: True`) and gives each tool call a uuid of its own (Ollama's
calls have none), which the next request replays as the call's `id` and the tool message's
`tool_call_id`; `-stream` drives the agent with `stream_mode="messages"`, token by token."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def converse(base_url: str, stack: str, scenario: str) -> None:
    from langchain_core.tools import tool
    from langchain_ollama import ChatOllama
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import ToolNode, create_react_agent

    llm = ChatOllama(model=MODEL, base_url=base_url)
    # As langgraph_agent: every tool error is told to the model.
    tools = ToolNode([tool(fn) for fn in FUNCTIONS], handle_tool_errors=True)
    agent = create_react_agent(
        llm, tools, prompt=SYSTEM_PROMPT, name=AGENT_NAME, checkpointer=InMemorySaver(),
    )  # fmt: skip
    config = {"configurable": {"thread_id": f"sess-{stack}-{scenario}"}}
    for turn in SCENARIOS[scenario].turns:
        said = {"messages": [{"role": "user", "content": turn.request}]}
        if stack.endswith("-stream"):
            for _ in agent.stream(said, config, stream_mode="messages"):
                pass
        else:
            agent.invoke(said, config)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, stack, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
