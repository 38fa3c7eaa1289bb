"""LangGraph's supervisor (`langgraph-supervisor`'s `create_supervisor`) over a weather
specialist, a prebuilt ReAct agent with `get_weather`, both on `ChatOpenAI`: the supervisor
hands off by its `transfer_to_weather_specialist` tool, the specialist runs on the same
messages, control comes back (the library appends a `transfer_back_to_supervisor` call and
result of its own, no model asked for them) and the supervisor answers. A checkpointer
thread carries the conversation across turns; OpenLLMetry's LangChain instrumentation
traces it."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL
from tests.ingest.instrumented.stacks.common import main, providers, team


def converse(base_url: str, stack: str, scenario: str) -> None:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import ToolNode, create_react_agent
    from langgraph_supervisor import create_supervisor

    agents = team(stack, scenario)
    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="test-key", max_retries=0)
    tools = ToolNode([tool(fn) for fn in agents.specialist_tools], handle_tool_errors=True)
    specialist = create_react_agent(llm, tools, prompt=agents.specialist_prompt,
                                    name=agents.specialist)  # fmt: skip
    supervisor = create_supervisor(
        [specialist], model=llm, prompt=agents.triage_prompt, supervisor_name=agents.triage,
    ).compile(checkpointer=InMemorySaver())  # fmt: skip
    config = {"configurable": {"thread_id": agents.session}}
    for request in agents.requests:
        supervisor.invoke({"messages": [{"role": "user", "content": request}]}, config)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        LangchainInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, stack, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {"TRACELOOP_TRACE_CONTENT": "true"}, run))
