"""Langfuse's Python SDK (OTel-based since v3) as an application sets it up: a `Langfuse`
client on the application's tracer provider, its own export kept on this machine (a
discarding span exporter, a base URL on 127.0.0.1), so the harness's file exporter sees
every span Langfuse makes, with the attributes Langfuse would send.

- `langfuse-openai` / `-stream`: the `langfuse.openai` drop-in client running the raw OpenAI
  tool loop (`driver.converse`) inside one `@observe()` function, the session propagated;
- `langfuse-langgraph`: Langfuse's LangChain `CallbackHandler` over LangGraph's ReAct agent
  (`langgraph_agent.converse`'s agent), one `@observe()` turn handler per request.
`langfuse-v3-*` are the same at Langfuse's last v3 release, whose client takes no span
exporter: its own OTLP export is refused by the closed port it points at.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from inspect import signature
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


class _Discard(SpanExporter):
    """Langfuse's own exporter, replaced: nothing leaves the machine."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def _openai_loop(stack: str, scenario: str, base_url: str) -> None:
    from langfuse import observe, propagate_attributes
    from langfuse.openai import OpenAI

    from tests.ingest.instrumented.driver import converse

    client = OpenAI(base_url=base_url, api_key="test-key", max_retries=0)

    @observe()
    def conversation() -> None:
        with propagate_attributes(session_id=f"sess-{stack}-{scenario}"):
            converse(client, scenario, stack.endswith("-stream"))

    conversation()


def _langgraph(stack: str, scenario: str, base_url: str) -> None:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langfuse import observe, propagate_attributes
    from langfuse.langchain import CallbackHandler
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import ToolNode, create_react_agent

    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="test-key", max_retries=0)
    tools = ToolNode([tool(fn) for fn in FUNCTIONS], handle_tool_errors=True)
    agent = create_react_agent(
        llm, tools, prompt=SYSTEM_PROMPT, name=AGENT_NAME, checkpointer=InMemorySaver()
    )
    session = f"sess-{stack}-{scenario}"
    config: dict[str, Any] = {"configurable": {"thread_id": session}}

    @observe()
    def handle(request: str) -> None:
        with propagate_attributes(session_id=session):
            said = {"messages": [{"role": "user", "content": request}]}
            agent.invoke(said, {**config, "callbacks": [CallbackHandler()]})

    for turn in SCENARIOS[scenario].turns:
        handle(turn.request)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from langfuse import Langfuse

        # v3 takes no span exporter: its own OTLP export fails against the closed port.
        own = {"span_exporter": _Discard()} if "span_exporter" in signature(Langfuse).parameters \
            else {}
        langfuse = Langfuse(
            public_key="pk-lf-local", secret_key="sk-lf-local", base_url="http://127.0.0.1:9",
            tracer_provider=tracer_provider, **own,
        )  # fmt: skip
        if stack.endswith("-langgraph"):
            _langgraph(stack, scenario, base_url)
        else:
            _openai_loop(stack, scenario, base_url)
        langfuse.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
