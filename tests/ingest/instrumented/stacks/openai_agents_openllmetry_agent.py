"""An OpenAI Agents SDK `Agent` on `OpenAIChatCompletionsModel` (the run of
`openai_agents_agent.py`) under OpenLLMetry's Agents SDK instrumentation
(`opentelemetry-instrumentation-openai-agents`: a tracing processor turning the SDK's spans
into OTel spans), content traced. Its processor replaces the SDK's own (the export to
OpenAI's backend): nothing leaves the machine. `openai-agents-openllmetry-openai` adds
OpenLLMetry's OpenAI instrumentation, as `Traceloop.init` installs both: each model call is
then recorded twice, the processor's span (input only, for a chat completions model) over
the client's. `openai-agents-openllmetry-responses` runs the agent on the SDK's default
`OpenAIResponsesModel`, whose generation spans carry the whole `response`; its `-stream`
variant runs each turn with `Runner.run_streamed`, and
`openai-agents-openllmetry-openai-responses` adds the OpenAI instrumentation to it.
`openai-agents-openllmetry-openinference-openai` (its own environment) adds OpenInference's
OpenAI instrumentation instead of OpenLLMetry's (two vendors' spans of each model call)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.openai_agents_agent import converse


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor(replace_existing_processors=True).instrument(
            tracer_provider=tracer_provider
        )
        if "-openllmetry-openai" in stack:
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        if "-openinference-openai" in stack:
            from openinference.instrumentation.openai import OpenAIInstrumentor as OIOpenAI

            OIOpenAI().instrument(tracer_provider=tracer_provider)
        asyncio.run(converse(base_url, scenario, "-responses" in stack, stack.endswith("-stream")))


ENV = {"TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_METRICS_ENABLED": "false"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
