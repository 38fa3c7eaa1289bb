"""A raw-client agent loop on the `ollama` Python client (Ollama's native `/api/chat`: tool
calls with arguments as objects and no ids, a tool result a `tool` message naming its tool),
`-stream` reading each answer from the NDJSON chunks `chat(stream=True)` yields. Under
OpenLLMetry's Ollama instrumentation (`ollama-openllmetry*`, prompts traced; it wraps
`Client._request`) or OpenLIT (`openlit-ollama*`, content captured; it wraps `Client.chat`).
The client takes the server's root as its host. The loop is `driver.tool_loop` (each result
naming its tool), its model call `ollama_complete`, which reads each answer as OpenAI's chat
shape and sends the history back in Ollama's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.driver import Complete, tool_loop
from tests.ingest.instrumented.scenarios import MODEL, TOOLS
from tests.ingest.instrumented.stacks.common import main, openlit_or


def _said(text: str, calls: list[Any]) -> dict[str, Any]:
    """An answer in OpenAI's chat shape: each call's arguments a JSON string, its id none
    (Ollama's calls have none)."""
    said = [{"id": None, "type": "function", "function": {
        "name": c.function.name, "arguments": json.dumps(c.function.arguments)}}
        for c in calls]  # fmt: skip
    return {"role": "assistant", "content": text} | ({"tool_calls": said} if said else {})


def _streamed(chunks: Any) -> dict[str, Any]:
    """A chat stream read to its end, as the assistant message its chunks spell."""
    text: list[str] = []
    calls: list[Any] = []
    for chunk in chunks:
        text.append(chunk.message.content or "")
        calls += chunk.message.tool_calls or ()
    return _said("".join(text), calls)


def _as_sent(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history as `/api/chat` takes it: a call's arguments an object and no id, a tool
    result naming its tool instead of its call."""
    sent: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "tool":
            m = {"role": "tool", "content": m["content"], "tool_name": m["name"]}
        elif m.get("tool_calls"):
            calls = [{"function": {"name": c["function"]["name"],
                                   "arguments": json.loads(c["function"]["arguments"])}}
                     for c in m["tool_calls"]]  # fmt: skip
            m = m | {"tool_calls": calls}
        sent.append(m)
    return sent


def ollama_complete(client: Any, stream: bool) -> Complete:
    """One `chat` of an `ollama.Client`, streamed (NDJSON chunks read to the end) or not."""

    def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
        sent = _as_sent(messages)
        if stream:
            return _streamed(client.chat(model=MODEL, messages=sent, tools=TOOLS, stream=True))
        said = client.chat(model=MODEL, messages=sent, tools=TOOLS).message
        return _said(said.content or "", list(said.tool_calls or ()))

    return complete


def _openllmetry(tracer_provider: Any) -> None:
    from opentelemetry.instrumentation.ollama import OllamaInstrumentor

    OllamaInstrumentor().instrument(tracer_provider=tracer_provider)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with openlit_or(stack, out, scenario, _openllmetry):
        import ollama

        complete = ollama_complete(ollama.Client(host=base_url), stack.endswith("-stream"))
        tool_loop(complete, scenario, named_results=True)


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
