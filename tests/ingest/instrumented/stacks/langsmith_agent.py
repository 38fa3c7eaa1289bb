"""LangGraph's prebuilt ReAct agent (`langgraph_agent.converse`) traced by LangSmith's own
OTel export: `LANGSMITH_TRACING` with `LANGSMITH_OTEL_ENABLED` and `LANGSMITH_OTEL_ONLY` (the
`otel` tracing mode of the installed `langsmith`, which makes no LangSmith API calls). Its
client finds the application's global tracer provider and writes one span per LangChain
run onto it; its endpoint and key point at 127.0.0.1 all the same, so nothing could leave
the machine. `-stream` streams the chat model's tokens."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.langgraph_agent import converse


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        from langchain_core.tracers.langchain import wait_for_all_tracers

        converse(base_url, stack, scenario)
        wait_for_all_tracers()  # runs reach the exporter from LangSmith's background thread


ENV = {
    "LANGSMITH_TRACING": "true",
    "LANGSMITH_OTEL_ENABLED": "true",
    "LANGSMITH_OTEL_ONLY": "true",
    "LANGSMITH_ENDPOINT": "http://127.0.0.1:9",
    "LANGSMITH_API_KEY": "lsv2-local",
    "LANGSMITH_PROJECT": "turnscore-stacks",
}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
