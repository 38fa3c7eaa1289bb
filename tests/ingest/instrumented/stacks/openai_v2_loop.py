"""The raw OpenAI loop (`driver.converse`, chat completions with tools) under the OTel contrib
instrumentation alone (`opentelemetry-instrumentation-openai-v2` on opentelemetry-util-genai),
with the newest semantic conventions (`OTEL_SEMCONV_STABILITY_OPT_IN=
gen_ai_latest_experimental`) in each of util-genai's content-capture modes: content as span
attributes, as `gen_ai.client.inference.operation.details` log records, or both; one
configuration streams. `openai-v2-legacy-events` is the old default (no opt-in, capture
`true`: the v1.30 per-message log events), which only openai-v2 2.3b0 and earlier still
emit (2.4b0 runs util-genai's latest conventions whatever the opt-in says), in the
`openai-multi` environment."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.driver import converse
from tests.ingest.instrumented.stacks.common import main, providers

MODES = {
    "openai-v2-spans": "SPAN_ONLY",
    "openai-v2-events": "EVENT_ONLY",
    "openai-v2-span-and-event": "SPAN_AND_EVENT",
    "openai-v2-span-and-event-stream": "SPAN_AND_EVENT",
    "openai-v2-legacy-events": "true",
}
STREAMED = {"openai-v2-span-and-event-stream"}


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )
        import openai

        client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
        converse(client, scenario, stack in STREAMED)


if __name__ == "__main__":
    stack = sys.argv[1]
    latest = {} if MODES[stack] == "true" else {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}
    sys.exit(main(sys.argv[1:], {
        **latest, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": MODES[stack],
    }, run))  # fmt: skip
