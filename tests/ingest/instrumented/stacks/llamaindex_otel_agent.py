"""A LlamaIndex `FunctionAgent` on the OpenAI LLM under LlamaIndex's own OTel integration
(`llama-index-observability-otel`): `LlamaIndexOpenTelemetry(span_exporter=...)`, set up as
its README does (it builds and installs its own tracer provider around the exporter it is
given, then `start_registering()` turns the instrumentation dispatcher's spans and events
into OTel spans and span events). `llamaindex-otel` runs the agent with `streaming=False`;
`llamaindex-otel-stream` with LlamaIndex's default (streaming, the model's tokens as they
come). One `Context` carries the conversation across a scenario's turns."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.export import FileSpanExporter
from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(base_url: str, scenario: str, streaming: bool) -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.core.workflow import Context
    from llama_index.llms.openai import OpenAI

    llm = OpenAI(model=MODEL, api_base=base_url, api_key="test-key", max_retries=0)
    agent = FunctionAgent(
        name=AGENT_NAME, description="Answers with the tools.", system_prompt=SYSTEM_PROMPT,
        tools=[FunctionTool.from_defaults(fn) for fn in FUNCTIONS], llm=llm,
        streaming=streaming,
    )  # fmt: skip
    ctx = Context(agent)
    for turn in SCENARIOS[scenario].turns:
        await agent.run(turn.request, ctx=ctx)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    from llama_index.observability.otel import LlamaIndexOpenTelemetry

    telemetry = LlamaIndexOpenTelemetry(
        service_name_or_resource=f"stack-{stack}",
        span_exporter=FileSpanExporter(out, scenario), span_processor="batch",
    )  # fmt: skip
    telemetry.start_registering()
    try:
        asyncio.run(converse(base_url, scenario, streaming=stack.endswith("-stream")))
    finally:
        provider = telemetry._tracer_provider_instance  # the provider it built; flush it
        if provider is not None:
            provider.shutdown()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
