"""A raw-client agent loop on `litellm.completion` (OpenAI chat format with tools), traced by
LiteLLM's own OpenTelemetry callback (`litellm.callbacks = ["otel"]`), at its defaults:
content on the spans, no events. The callback reuses the global SDK tracer provider when
one is set (`OpenTelemetry._get_or_create_provider`), so `providers()` runs first.
`litellm-openinference` is the same loop traced by OpenInference's LiteLLM instrumentation
instead (it wraps `litellm.completion`), in a session (`using_session`). Each also streams
every call (`-stream`: `stream=True` with the usage asked for, the reply rebuilt from its
chunks by `litellm.stream_chunk_builder`, as LiteLLM's docs rebuild one)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers


def _reply(completion: Any, messages: list[dict[str, Any]], base_url: str, stream: bool) -> Any:
    request = {"model": f"openai/{MODEL}", "api_base": base_url, "api_key": "test-key",
               "messages": messages, "tools": TOOLS, "num_retries": 0}  # fmt: skip
    if not stream:
        return completion(**request)
    import litellm

    chunks = list(completion(**request, stream=True, stream_options={"include_usage": True}))
    return litellm.stream_chunk_builder(chunks, messages=messages)


def converse(completion: Any, scenario: str, base_url: str, stream: bool = False) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            reply = _reply(completion, messages, base_url, stream)
            message = reply.choices[0].message
            calls = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in message.tool_calls or ()
            ]  # fmt: skip
            said: dict[str, Any] = {"role": "assistant", "content": message.content}
            messages.append(said | ({"tool_calls": calls} if calls else {}))
            if not calls:
                break
            for call in calls:
                text, _ = run_tool(call["function"]["name"], call["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        import litellm

        stream = stack.endswith("-stream")
        if stack.startswith("litellm-openinference"):
            from openinference.instrumentation import using_session
            from openinference.instrumentation.litellm import LiteLLMInstrumentor

            LiteLLMInstrumentor().instrument(tracer_provider=tracer_provider)
            with using_session(f"sess-{stack}-{scenario}"):
                converse(litellm.completion, scenario, base_url, stream)
        else:
            litellm.callbacks = ["otel"]
            converse(litellm.completion, scenario, base_url, stream)
        # Success callbacks run on LiteLLM's logging thread pool: a service lives on while
        # they end their spans, a script must wait for them before the providers shut down.
        litellm.utils.executor.shutdown(wait=True)


# The cost map is bundled; without this LiteLLM fetches it from GitHub at import.
ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
