"""A raw-client agent loop on a model provider's own SDK whose chat completions speak
OpenAI's body (tools, `tool_calls`, `role: tool` results), under that SDK's OpenInference
instrumentation: `groq-openinference` on the `groq` SDK (it posts to
`<base>/openai/v1/chat/completions`; OpenInference wraps `Completions.create`, no stream),
`mistralai-openinference` on `mistralai` (`<base>/v1/chat/completions`; OpenInference
wraps `Chat.complete` and `Chat.stream`: `-stream` calls `chat.stream` and puts each answer
back together from its chunks). The base URL comes without the `/v1` an OpenAI client
takes: each SDK adds its own path. The loop is `driver.tool_loop`, each tool result naming
its tool; the model call the OpenAI-compatible one (`driver.complete_with`) or the
Mistral one (`mistralai_loop.mistral_complete`), on plain dict messages."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.driver import Complete, complete_with, tool_loop
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.mistralai_loop import mistral_complete


def _groq(base_url: str, tracer_provider: Any) -> Complete:
    from openinference.instrumentation.groq import GroqInstrumentor

    GroqInstrumentor().instrument(tracer_provider=tracer_provider)
    import groq

    return complete_with(groq.Groq(base_url=base_url, api_key="test-key", max_retries=0))


def _mistral(base_url: str, tracer_provider: Any, stream: bool) -> Complete:
    from mistralai.client import Mistral
    from openinference.instrumentation.mistralai import MistralAIInstrumentor

    MistralAIInstrumentor().instrument(tracer_provider=tracer_provider)
    return mistral_complete(Mistral(api_key="test-key", server_url=base_url), stream)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    base = base_url.removesuffix("/v1")
    with providers(stack, out, scenario) as (tracer_provider, _):
        complete = _groq(base, tracer_provider) if stack.startswith("groq") \
            else _mistral(base, tracer_provider, stack.endswith("-stream"))
        tool_loop(complete, scenario, named_results=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
