"""A raw-client agent loop on the real `groq` SDK (its OpenAI-compatible chat completions
with tools, at `<base_url>/openai/v1/chat/completions`) under OpenLLMetry's Groq
instrumentation, prompts traced; `-stream` streams every call and assembles the answer from
its chunks. The SDK has no `stream_options` (Groq sends a stream's usage in its own
`x_groq` field), so a streamed call's usage never reaches the client from this server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers


def _complete(client: Any, messages: list[dict[str, Any]], stream: bool) -> dict[str, Any]:
    """One model call; the assistant message as the next request will carry it."""
    if not stream:
        reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
        message: dict[str, Any] = reply.choices[0].message.model_dump(exclude_none=True)
        return {k: message[k] for k in ("role", "content", "tool_calls") if k in message}
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in client.chat.completions.create(
        model=MODEL, messages=messages, tools=TOOLS, stream=True
    ):
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for delta in choice.delta.tool_calls or ():
                call = calls.setdefault(
                    delta.index, {"type": "function", "function": {"name": "", "arguments": ""}}
                )
                call["id"] = delta.id or call.get("id")
                call["function"]["name"] += (delta.function and delta.function.name) or ""
                call["function"]["arguments"] += (delta.function and delta.function.arguments) or ""
    out: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        out["tool_calls"] = [calls[k] for k in sorted(calls)]
    return out


def converse(client: Any, scenario: str, stream: bool) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            message = _complete(client, messages, stream)
            messages.append(message)
            if not message.get("tool_calls"):
                break
            for call in message["tool_calls"]:
                fn = call["function"]
                content, _ = run_tool(fn["name"], fn["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from opentelemetry.instrumentation.groq import GroqInstrumentor

        GroqInstrumentor().instrument(tracer_provider=tracer_provider)
        import groq

        client = groq.Groq(base_url=base_url, api_key="test-key", max_retries=0)
        converse(client, scenario, stack.endswith("-stream"))


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
