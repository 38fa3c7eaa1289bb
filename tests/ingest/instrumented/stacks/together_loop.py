"""A raw-client agent loop on the `together` SDK (its OpenAI-compatible chat completions
with tools, at `<base>/v1/chat/completions`) under one Together instrumentation per stack:
OpenInference's (`together-openinference`, on together 2 or later: it wraps
`CompletionsResource.create`, streamed or not) or OpenLLMetry's (`together-openllmetry`,
prompts traced, on together 1: it wraps `ChatCompletions.create`). `-stream` streams every
call and puts each answer back together from its chunks (together 1 keeps a chunk's tool
call deltas as the plain dicts the API sent: `_v1_complete`). Neither SDK has
`stream_options`, so a streamed call's usage never reaches the client from this server. The
base URL comes without the `/v1` for together 2, which adds its own path; together 1 takes
it with it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.driver import Complete, complete_with, tool_loop
from tests.ingest.instrumented.scenarios import MODEL, TOOLS
from tests.ingest.instrumented.stacks.common import main, providers


def _v1_complete(client: Any) -> Complete:
    """A streamed call on together 1, the assistant message its chunks spell."""

    def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
        chunks = client.chat.completions.create(
            model=MODEL, messages=messages, tools=TOOLS, stream=True)  # fmt: skip
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        for chunk in chunks:
            for choice in chunk.choices or ():
                text.append(choice.delta.content or "")
                for delta in getattr(choice.delta, "tool_calls", None) or ():
                    call = calls.setdefault(delta["index"], {
                        "type": "function", "function": {"name": "", "arguments": ""}})  # fmt: skip
                    call["id"] = delta.get("id") or call.get("id")
                    fn = delta.get("function") or {}
                    call["function"]["name"] += fn.get("name") or ""
                    call["function"]["arguments"] += fn.get("arguments") or ""
        out: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
        if calls:
            out["tool_calls"] = [calls[k] for k in sorted(calls)]
        return out

    return complete


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        if stack.startswith("together-openinference"):
            from openinference.instrumentation.together import TogetherInstrumentor

            TogetherInstrumentor().instrument(tracer_provider=tracer_provider)
            base_url = base_url.removesuffix("/v1")
        else:
            from opentelemetry.instrumentation.together import TogetherAiInstrumentor

            TogetherAiInstrumentor().instrument(tracer_provider=tracer_provider)
        import together

        client = together.Together(base_url=base_url, api_key="test-key", max_retries=0)
        stream = stack.endswith("-stream")
        v1 = not stack.startswith("together-openinference")
        tool_loop(_v1_complete(client) if stream and v1
                  else complete_with(client, stream, usage=False), scenario)  # fmt: skip


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
