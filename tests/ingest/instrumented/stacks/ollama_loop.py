"""A raw-client agent loop on the `ollama` Python client (Ollama's native `/api/chat`: tool
calls with arguments as objects and no ids, a tool result a `tool` message naming its tool),
`-stream` reading each answer from the NDJSON chunks `chat(stream=True)` yields. Under
OpenLLMetry's Ollama instrumentation (`ollama-openllmetry*`, prompts traced; it wraps
`Client._request`) or OpenLIT (`openlit-ollama*`, content captured; it wraps `Client.chat`).
The client takes the server's root as its host."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers


def _streamed(chunks: Any) -> dict[str, Any]:
    """A chat stream read to its end, as the assistant message its chunks spell."""
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for chunk in chunks:
        text.append(chunk.message.content or "")
        calls += [c.model_dump() for c in chunk.message.tool_calls or ()]
    said = {"role": "assistant", "content": "".join(text)}
    return said | ({"tool_calls": calls} if calls else {})


def _said(reply: Any) -> dict[str, Any]:
    message = reply.message
    calls = [c.model_dump() for c in message.tool_calls or ()]
    return {"role": "assistant", "content": message.content or ""} | (
        {"tool_calls": calls} if calls else {}
    )


def converse(client: Any, scenario: str, stream: bool) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            if stream:
                message = _streamed(client.chat(model=MODEL, messages=messages, tools=TOOLS,
                                                stream=True))  # fmt: skip
            else:
                message = _said(client.chat(model=MODEL, messages=messages, tools=TOOLS))
            messages.append(message)
            if not message.get("tool_calls"):
                break
            for call in message["tool_calls"]:
                fn = call["function"]
                content, _ = run_tool(fn["name"], json.dumps(fn["arguments"]))
                messages.append({"role": "tool", "content": content, "tool_name": fn["name"]})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        if stack.startswith("openlit"):
            import openlit

            openlit.init(application_name=stack, capture_message_content=True,
                         disable_metrics=True)  # fmt: skip
        else:
            from opentelemetry.instrumentation.ollama import OllamaInstrumentor

            OllamaInstrumentor().instrument(tracer_provider=tracer_provider)
        import ollama

        converse(ollama.Client(host=base_url), scenario, stack.endswith("-stream"))


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
