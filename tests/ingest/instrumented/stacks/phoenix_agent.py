"""Arize Phoenix's OTel wrapper (`phoenix.otel.register`) as its docs set it up: its own
tracer provider, auto-instrumenting every OpenInference instrumentor installed, here
OpenInference's LangChain and OpenAI instrumentations at once under LangGraph's prebuilt
ReAct agent on `ChatOpenAI` (`langgraph_agent.converse`): every model call is recorded by
both, the OpenAI client's LLM span nested in LangChain's. `-stream` drives the agent with
`stream_mode="messages"`. Phoenix's exporter posts to a loopback OTLP/HTTP receiver
(`otlp_receiver`) that writes the harness's files."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit

from tests.ingest.instrumented.stacks.common import main
from tests.ingest.instrumented.stacks.langgraph_agent import converse
from tests.ingest.instrumented.stacks.otlp_receiver import receiver


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with receiver(out, scenario) as url:
        port = urlsplit(url).port
        from phoenix.otel import register

        provider = register(endpoint=f"http://127.0.0.1:{port}/v1/traces",
                            protocol="http/protobuf", project_name=stack, batch=True,
                            auto_instrument=True)  # fmt: skip
        try:
            converse(base_url, stack, scenario)
        finally:
            provider.shutdown()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
