"""The raw OpenAI loop (`driver.converse`, chat completions with tools) under Elastic's EDOT
OpenAI instrumentation (`elastic-opentelemetry-instrumentation-openai`, which installs itself
as `opentelemetry.instrumentation.openai`, the module name OpenLLMetry's uses too: hence its
own environment), content capture on. EDOT records the request and response attributes on a
`chat {model}` span and the content as the v1.30 per-message events, each a log record of its
own (`gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`,
`gen_ai.tool.message`, `gen_ai.choice`, named by `event_name` and by an `event.name`
attribute); `-stream` streams each call (the choice then one event, built from the chunks)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.driver import converse
from tests.ingest.instrumented.stacks.common import main, providers


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        # The global logger provider, not `logger_provider=`: EDOT 1.2.0 passes that one to
        # `get_logger` as its second argument, the scope's version, and the OTLP encoder
        # then fails on every log batch (no content exported at all).
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        import openai

        client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
        converse(client, scenario, stack.endswith("-stream"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
                  run))
