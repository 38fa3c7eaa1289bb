"""A raw-client agent loop on the `cohere` SDK's v2 client (`ClientV2.chat` at
`<base_url>/v2/chat`: tools as chat-completions functions, an answer's `tool_plan` and
`tool_calls` with JSON-string arguments, each result a `tool` message naming its call),
`-stream` calling `chat_stream` and putting each answer back together from its events.
Under OpenLLMetry's Cohere instrumentation (`cohere-openllmetry*`, prompts traced) or
OpenLIT (`openlit-cohere*`, content captured). The loop is `driver.tool_loop`, its model
call `cohere_complete`: the history is OpenAI's chat shape plus the answer's `tool_plan`,
which the v2 API takes as it is."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.driver import Complete, tool_loop
from tests.ingest.instrumented.scenarios import MODEL, TOOLS
from tests.ingest.instrumented.stacks.common import main, openlit_or


def _streamed(events: Any) -> dict[str, Any]:
    """A chat stream read to its end, as the assistant message its events spell."""
    text: list[str] = []
    plan: list[str] = []
    calls: list[dict[str, Any]] = []
    for event in events:
        said = getattr(getattr(event, "delta", None), "message", None)
        if event.type == "content-delta":
            text.append(said.content.text or "")
        elif event.type == "tool-plan-delta":
            plan.append(said.tool_plan or "")
        elif event.type == "tool-call-start":
            call = said.tool_calls
            calls.append({"id": call.id, "type": "function",
                          "function": {"name": call.function.name, "arguments": ""}})
        elif event.type == "tool-call-delta":
            calls[-1]["function"]["arguments"] += said.tool_calls.function.arguments or ""
    message: dict[str, Any] = {"role": "assistant"}
    if text:
        message["content"] = "".join(text)
    if calls:
        message |= {"tool_plan": "".join(plan), "tool_calls": calls}
    return message


def _said(reply: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    said = reply.message
    if said.content:
        message["content"] = "".join(p.text for p in said.content if p.type == "text")
    if said.tool_calls:
        message["tool_plan"] = said.tool_plan
        message["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in said.tool_calls
        ]  # fmt: skip
    return message


def cohere_complete(client: Any, stream: bool) -> Complete:
    """One `chat` (or `chat_stream`, read to its end) of a `cohere.ClientV2`."""

    def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if stream:
            return _streamed(client.chat_stream(model=MODEL, messages=messages, tools=TOOLS))
        return _said(client.chat(model=MODEL, messages=messages, tools=TOOLS))

    return complete


def _openllmetry(tracer_provider: Any) -> None:
    from opentelemetry.instrumentation.cohere import CohereInstrumentor

    CohereInstrumentor().instrument(tracer_provider=tracer_provider)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with openlit_or(stack, out, scenario, _openllmetry):
        import cohere

        client = cohere.ClientV2(api_key="test-key", base_url=base_url)
        tool_loop(cohere_complete(client, stack.endswith("-stream")), scenario)


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
