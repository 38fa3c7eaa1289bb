"""A raw-client agent loop on a model provider's own SDK whose chat completions speak
OpenAI's body (tools, `tool_calls`, `role: tool` results), under that SDK's OpenInference
instrumentation: `groq-openinference` on the `groq` SDK (it posts to
`<base>/openai/v1/chat/completions`; OpenInference wraps `Completions.create`, no stream),
`mistralai-openinference` on `mistralai` (`<base>/v1/chat/completions`; OpenInference
wraps `Chat.complete` and `Chat.stream`: `-stream` calls `chat.stream` and puts each answer
back together from its chunks). The base URL comes without the `/v1` an OpenAI client
takes: each SDK adds its own path."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers

Complete = Callable[[list[dict[str, Any]]], dict[str, Any]]


def _groq(base_url: str, tracer_provider: Any) -> Complete:
    from openinference.instrumentation.groq import GroqInstrumentor

    GroqInstrumentor().instrument(tracer_provider=tracer_provider)
    import groq

    client = groq.Groq(base_url=base_url, api_key="test-key", max_retries=0)

    def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
        reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
        said = reply.choices[0].message.model_dump(exclude_none=True)
        return {k: said[k] for k in ("role", "content", "tool_calls") if k in said}

    return complete


def _call(call: Any) -> dict[str, Any]:
    function = {"name": call.function.name, "arguments": call.function.arguments}
    return {"id": call.id, "type": "function", "function": function}


def _mistral_streamed(events: Any) -> dict[str, Any]:
    """A chat stream read to its end, as the assistant message its chunks spell."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for event in events:
        for choice in event.data.choices:
            if isinstance(choice.delta.content, str):
                text.append(choice.delta.content)
            for delta in choice.delta.tool_calls or ():
                call = calls.setdefault(delta.index or 0, {
                    "id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                call["id"] = delta.id if delta.id and delta.id != "null" else call["id"]
                call["function"]["name"] += delta.function.name or ""
                arguments = delta.function.arguments
                call["function"]["arguments"] += arguments if isinstance(arguments, str) else ""
    return {"role": "assistant", "content": "".join(text)} | (
        {"tool_calls": [c for _, c in sorted(calls.items())]} if calls else {})  # fmt: skip


def _mistral(base_url: str, tracer_provider: Any, stream: bool) -> Complete:
    from mistralai.client import Mistral
    from openinference.instrumentation.mistralai import MistralAIInstrumentor

    MistralAIInstrumentor().instrument(tracer_provider=tracer_provider)
    client = Mistral(api_key="test-key", server_url=base_url)

    def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if stream:
            return _mistral_streamed(client.chat.stream(model=MODEL, messages=messages,
                                                        tools=TOOLS))  # fmt: skip
        said = client.chat.complete(model=MODEL, messages=messages, tools=TOOLS).choices[0].message
        calls = [_call(c) for c in said.tool_calls or ()]
        return {"role": "assistant", "content": said.content} | (
            {"tool_calls": calls} if calls else {}
        )

    return complete


def converse(complete: Complete, scenario: str) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            message = complete(messages)
            messages.append(message)
            if not message.get("tool_calls"):
                break
            for call in message["tool_calls"]:
                fn = call["function"]
                text, _ = run_tool(fn["name"], fn["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "name": fn["name"],
                                 "content": text})  # fmt: skip


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    base = base_url.removesuffix("/v1")
    with providers(stack, out, scenario) as (tracer_provider, _):
        if stack.startswith("groq"):
            converse(_groq(base, tracer_provider), scenario)
        else:
            converse(_mistral(base, tracer_provider, stack.endswith("-stream")), scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
