"""A raw-client agent loop on `litellm.completion` (OpenAI chat format with tools), traced by
LiteLLM's own OpenTelemetry callback (`litellm.callbacks = ["otel"]`), at its defaults:
content on the spans, no events. The callback reuses the global SDK tracer provider when
one is set (`OpenTelemetry._get_or_create_provider`), so `providers()` runs first.
`litellm-openinference` is the same loop traced by OpenInference's LiteLLM instrumentation
instead (it wraps `litellm.completion`), in a session (`using_session`). Each also streams
every call (`-stream`: `stream=True` with the usage asked for, the reply rebuilt from its
chunks by `litellm.stream_chunk_builder`, as LiteLLM's docs rebuild one). The loop is
`driver.tool_loop`, its model call `litellm_complete` (which `openlit_provider_loop` runs
under OpenLIT too)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.driver import Complete, tool_loop
from tests.ingest.instrumented.scenarios import MODEL, TOOLS
from tests.ingest.instrumented.stacks.common import main, providers


def litellm_complete(base_url: str, stream: bool = False) -> Complete:
    """One `litellm.completion` on the server's chat completions (`openai/` routes it there),
    streamed or not; the assistant message as the next request carries it."""
    import litellm

    def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
        request = {"model": f"openai/{MODEL}", "api_base": base_url, "api_key": "test-key",
                   "messages": messages, "tools": TOOLS, "num_retries": 0}  # fmt: skip
        if stream:
            chunks = list(litellm.completion(**request, stream=True,
                                             stream_options={"include_usage": True}))
            reply = litellm.stream_chunk_builder(chunks, messages=messages)
        else:
            reply = litellm.completion(**request)
        message = reply.choices[0].message
        calls = [
            {"id": c.id, "type": "function",
             "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls or ()
        ]  # fmt: skip
        said: dict[str, Any] = {"role": "assistant", "content": message.content}
        return said | ({"tool_calls": calls} if calls else {})

    return complete


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        import litellm

        stream = stack.endswith("-stream")
        if stack.startswith("litellm-openinference"):
            from openinference.instrumentation import using_session
            from openinference.instrumentation.litellm import LiteLLMInstrumentor

            LiteLLMInstrumentor().instrument(tracer_provider=tracer_provider)
            with using_session(f"sess-{stack}-{scenario}"):
                tool_loop(litellm_complete(base_url, stream), scenario)
        else:
            litellm.callbacks = ["otel"]
            tool_loop(litellm_complete(base_url, stream), scenario)
        # Success callbacks run on LiteLLM's logging thread pool: a service lives on while
        # they end their spans, a script must wait for them before the providers shut down.
        litellm.utils.executor.shutdown(wait=True)


# The cost map is bundled; without this LiteLLM fetches it from GitHub at import.
ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
