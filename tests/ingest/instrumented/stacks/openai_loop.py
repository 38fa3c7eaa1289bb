"""A raw-client agent loop on the real `openai` SDK (chat completions with tools) under two or
three instrumentations of that SDK at once, as an application gets when more than one
instrumentation package is installed and each instruments the client (OpenInference's
`OpenAIInstrumentor`, OpenLLMetry's, and the OTel contrib `openai-v2`); one configuration
streams. Each wraps the same method, so every model call is recorded once per
instrumentation, their spans nested in one trace."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers

INSTRUMENTATIONS = {
    "openai-openinference-openllmetry": ("openinference", "openllmetry"),
    "openai-three-instrumentations": ("openinference", "openllmetry", "otel-v2"),
    "openai-three-instrumentations-stream": ("openinference", "openllmetry", "otel-v2"),
}
STREAMED = {"openai-three-instrumentations-stream"}


def _instrument(stack: str, tracer_provider: Any, logger_provider: Any) -> None:
    for name in INSTRUMENTATIONS[stack]:
        if name == "openinference":
            from openinference.instrumentation.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        elif name == "openllmetry":
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor as Traceloop

            Traceloop().instrument(tracer_provider=tracer_provider)
        else:
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as Contrib

            Contrib().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)


def _streamed(client: Any, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message the chunks of a streamed reply spell out, as an app joins them."""
    text, calls = "", {}
    stream = client.chat.completions.create(
        model=MODEL, messages=messages, tools=TOOLS, stream=True,
        stream_options={"include_usage": True},
    )  # fmt: skip
    for chunk in stream:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for part in choice.delta.tool_calls or ():
                call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                call["id"] += part.id or ""
                call["name"] += (part.function and part.function.name) or ""
                call["arguments"] += (part.function and part.function.arguments) or ""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}}
            for _, c in sorted(calls.items())
        ]  # fmt: skip
    return message


def _reply(client: Any, messages: list[dict[str, Any]], stream: bool) -> dict[str, Any]:
    if stream:
        return _streamed(client, messages)
    reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    return reply.choices[0].message.model_dump(exclude_none=True)


def converse(client: Any, scenario: str, stream: bool) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            message = _reply(client, messages, stream)
            messages.append(message)
            if not message.get("tool_calls"):
                break
            for call in message["tool_calls"]:
                text, _ = run_tool(call["function"]["name"], call["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        _instrument(stack, tracer_provider, logger_provider)
        import openai

        client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
        converse(client, scenario, stack in STREAMED)


ENV = {
    "TRACELOOP_TRACE_CONTENT": "true",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
