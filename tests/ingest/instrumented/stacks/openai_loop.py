"""A raw-client agent loop on the real `openai` SDK (chat completions with tools) under two or
three instrumentations of that SDK at once, as an application gets when more than one
instrumentation package is installed and each instruments the client (OpenInference's
`OpenAIInstrumentor`, OpenLLMetry's, and the OTel contrib `openai-v2`); one configuration
streams. Each wraps the same method, so every model call is recorded once per
instrumentation, their spans nested in one trace."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.driver import converse
from tests.ingest.instrumented.stacks.common import main, providers

INSTRUMENTATIONS = {
    "openai-openinference-openllmetry": ("openinference", "openllmetry"),
    "openai-three-instrumentations": ("openinference", "openllmetry", "otel-v2"),
    "openai-three-instrumentations-stream": ("openinference", "openllmetry", "otel-v2"),
}
STREAMED = {"openai-three-instrumentations-stream"}


def _instrument(stack: str, tracer_provider: Any, logger_provider: Any) -> None:
    for name in INSTRUMENTATIONS[stack]:
        if name == "openinference":
            from openinference.instrumentation.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        elif name == "openllmetry":
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor as Traceloop

            Traceloop().instrument(tracer_provider=tracer_provider)
        else:
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as Contrib

            Contrib().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        _instrument(stack, tracer_provider, logger_provider)
        import openai

        client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
        converse(client, scenario, stack in STREAMED)


ENV = {
    "TRACELOOP_TRACE_CONTENT": "true",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
