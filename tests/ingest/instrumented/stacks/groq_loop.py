"""A raw-client agent loop on the real `groq` SDK (its OpenAI-compatible chat completions
with tools, at `<base_url>/openai/v1/chat/completions`) under OpenLLMetry's Groq
instrumentation, prompts traced; `-stream` streams every call and assembles the answer from
its chunks. The SDK has no `stream_options` (Groq sends a stream's usage in its own
`x_groq` field), so a streamed call's usage never reaches the client from this server."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.driver import converse
from tests.ingest.instrumented.stacks.common import main, providers


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from opentelemetry.instrumentation.groq import GroqInstrumentor

        GroqInstrumentor().instrument(tracer_provider=tracer_provider)
        import groq

        client = groq.Groq(base_url=base_url, api_key="test-key", max_retries=0)
        converse(client, scenario, stack.endswith("-stream"), usage=False)


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
