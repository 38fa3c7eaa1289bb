"""Langtrace's SDK (`langtrace-python-sdk`): `langtrace.init` instruments every library it
finds installed with its own instrumentations (its own span names, `langtrace.*` and
flattened `gen_ai.*` attributes) on a tracer provider of its own, exporting through the
`custom_remote_exporter` it is given: here the harness's file exporter, so nothing goes to
Langtrace's cloud. The raw OpenAI loop (`langtrace-openai`, `-stream`: `driver.converse`,
run by `langtrace_loop`) or LangGraph's prebuilt ReAct agent on `ChatOpenAI`
(`langtrace-langgraph`: `langgraph_agent.converse`), where Langtrace instruments LangGraph,
LangChain core and the OpenAI client under them at once. LangGraph streamed is not here:
langchain-openai streams without usage, and Langtrace then counts the completion's tokens
with tiktoken's `cl100k_base`, which it downloads at run time (no network here).

Langtrace's init asks GitHub for its newest release, and its error reporting goes to
Sentry: the first is skipped here and the second is off (`LANGTRACE_ERROR_REPORTING`), so
the run sends nothing off this machine."""

from __future__ import annotations

import sys
from pathlib import Path

from opentelemetry import trace

from tests.ingest.instrumented.export import FileSpanExporter
from tests.ingest.instrumented.stacks.common import main, openai_or_langgraph


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    import langtrace_python_sdk.langtrace as lt

    lt.check_if_sdk_is_outdated = lambda: None  # a request to GitHub's API
    lt.init(api_key="test-key", custom_remote_exporter=FileSpanExporter(out, scenario),
            service_name=f"stack-{stack}")  # fmt: skip
    provider = trace.get_tracer_provider()
    try:
        openai_or_langgraph(base_url, stack, scenario)
    finally:
        provider.shutdown()  # type: ignore[attr-defined]


ENV = {"LANGTRACE_ERROR_REPORTING": "False"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
