"""LangGraph's prebuilt ReAct agent on `ChatOpenAI` (as `langgraph_agent`; `-stream` streams
the chat model's tokens) under OpenLLMetry's LangChain instrumentation, its spans translated
into OpenInference by `openinference-instrumentation-openllmetry`'s
`OpenInferenceSpanProcessor`, put ahead of the exporter (`translated_loop._first`). The
processor replaces a workflow, task, agent or tool span's attributes with its own
(`openinference.span.kind`, `input.value`, `output.value`, a tool's `tool.*`) and adds its
`llm.*` beside a chat span's `gen_ai.*`.

The translator's pins hold the LangChain instrumentation at 0.53.3, whose `create_react_agent`
wrapper iterates the tools argument (`patch.py`, `create_agent_wrapper`): the agent's
`ToolNode` (which tells the model every tool error, as `langgraph_agent`'s) is given as one
that iterates its tools.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS
from tests.ingest.instrumented.stacks.translated_loop import _first


def converse(base_url: str, stack: str, scenario: str) -> None:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import ToolNode, create_react_agent

    class Tools(ToolNode):  # type: ignore[misc]
        def __iter__(self) -> Iterator[Any]:
            return iter(self.tools_by_name.values())

    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="test-key", max_retries=0)
    tools = Tools([tool(fn) for fn in FUNCTIONS], handle_tool_errors=True)
    agent = create_react_agent(
        llm, tools, prompt=SYSTEM_PROMPT, name=AGENT_NAME, checkpointer=InMemorySaver(),
    )  # fmt: skip
    config = {"configurable": {"thread_id": f"sess-{stack}-{scenario}"}}
    for turn in SCENARIOS[scenario].turns:
        said = {"messages": [{"role": "user", "content": turn.request}]}
        if stack.endswith("-stream"):
            for _ in agent.stream(said, config, stream_mode="messages"):  # token by token
                pass
        else:
            agent.invoke(said, config)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation.openllmetry import OpenInferenceSpanProcessor
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        _first(tracer_provider, OpenInferenceSpanProcessor())
        LangchainInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, stack, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {"TRACELOOP_TRACE_CONTENT": "true"}, run))
