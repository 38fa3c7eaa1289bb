"""The raw-client agent loop of `instrumented.driver` on the real `openai` SDK (chat
completions with tools, plain or streamed for `-stream`) under another project's OpenAI
instrumentation, its spans translated into OpenInference by OpenInference's span processor
for that project, as Phoenix's guides set it up: the exported spans carry both conventions.

- `openllmetry-openinference-translated`: OpenLLMetry's `opentelemetry-instrumentation-openai`
  under `openinference-instrumentation-openllmetry`'s `OpenInferenceSpanProcessor`.
- `openlit-openinference-translated`: OpenLIT (`openlit.init`) under
  `openinference-instrumentation-openlit`'s `OpenInferenceSpanProcessor`.

A translator rewrites the span's attributes in its `on_end`, so it must run before the
exporting processor sees the span: it is put first among the provider's processors.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.driver import converse
from tests.ingest.instrumented.stacks.common import main, providers


def _first(tracer_provider: Any, processor: Any) -> None:
    """`processor` ahead of the exporter `providers()` added: the SDK calls span processors'
    `on_end` in the order they were added (`SynchronousMultiSpanProcessor`)."""
    tracer_provider.add_span_processor(processor)
    multi = tracer_provider._active_span_processor
    with multi._lock:
        multi._span_processors = (processor, *multi._span_processors[:-1])


def _instrument(stack: str, tracer_provider: Any) -> None:
    if stack.startswith("openllmetry"):
        from openinference.instrumentation.openllmetry import OpenInferenceSpanProcessor
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        _first(tracer_provider, OpenInferenceSpanProcessor())
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    else:
        import openlit
        from openinference.instrumentation.openlit import OpenInferenceSpanProcessor as Openlit

        _first(tracer_provider, Openlit())
        openlit.init(application_name=stack, capture_message_content=True, disable_metrics=True)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        _instrument(stack, tracer_provider)
        import openai

        client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
        converse(client, scenario, stream=stack.endswith("-stream"))


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
