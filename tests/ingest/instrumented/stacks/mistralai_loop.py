"""A raw-client agent loop on the real `mistralai` SDK (chat completions with tools at
`server_url` + `/v1/chat/completions`: the same request and response bodies as OpenAI's
for what the scenarios use) under OpenLLMetry's Mistral AI instrumentation, prompts traced;
`-stream` calls `chat.stream` and assembles each answer from its chunks.

The loop is `driver.tool_loop`, its model call `mistral_complete` (which
`provider_sdk_loop` runs under OpenInference too). The history goes to the SDK as its own
message models, as its docs' tool examples build it: the instrumentation reads each prompt
message's `.content` and `.role` as attributes (opentelemetry-instrumentation-mistralai
`__init__.py` `_set_input_attributes`), so a history of plain dicts leaves its spans without
prompts. The newest instrumentation (0.62) imports `mistralai.models`, which mistralai 2.0
moved under `mistralai.client`: the newest SDK it runs with is 1.x."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.driver import Complete, tool_loop
from tests.ingest.instrumented.scenarios import MODEL, TOOLS
from tests.ingest.instrumented.stacks.common import main, providers


def _call(call_id: str | None, name: str, arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, str):  # the SDK types them a JSON string or an object
        arguments = json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _streamed(events: Any) -> dict[str, Any]:
    """A chat stream read to its end, as the assistant message its chunks spell."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for event in events:
        for choice in event.data.choices:
            if isinstance(choice.delta.content, str):
                text.append(choice.delta.content)
            for delta in choice.delta.tool_calls or ():
                call = calls.setdefault(delta.index or 0, {"id": None, "name": "", "arguments": ""})
                call["id"] = delta.id if delta.id and delta.id != "null" else call["id"]
                call["name"] += delta.function.name or ""
                arguments = delta.function.arguments
                call["arguments"] += arguments if isinstance(arguments, str) else ""
    said = [_call(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())]
    return {"role": "assistant", "content": "".join(text)} | (
        {"tool_calls": said} if said else {})  # fmt: skip


def mistral_complete(
    client: Any, stream: bool, as_sent: Callable[[list[dict[str, Any]]], list[Any]] = list
) -> Complete:
    """One call of a `mistralai` client's `chat.complete` (or `chat.stream`), the history
    handed over as `as_sent` makes it."""

    def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
        sent = as_sent(messages)
        if stream:
            return _streamed(client.chat.stream(model=MODEL, messages=sent, tools=TOOLS))
        said = client.chat.complete(model=MODEL, messages=sent, tools=TOOLS).choices[0].message
        calls = [_call(c.id, c.function.name, c.function.arguments) for c in said.tool_calls or ()]
        return {"role": "assistant", "content": said.content} | (
            {"tool_calls": calls} if calls else {})  # fmt: skip

    return complete


def _models(messages: list[dict[str, Any]]) -> list[Any]:
    """The history as the SDK's message models (see the module docstring)."""
    from mistralai.models import (
        AssistantMessage,
        FunctionCall,
        SystemMessage,
        ToolCall,
        ToolMessage,
        UserMessage,
    )

    plain = {"system": SystemMessage, "user": UserMessage, "tool": ToolMessage}
    models: list[Any] = []
    for m in messages:
        if m["role"] != "assistant":
            models.append(plain[m["role"]](**{k: v for k, v in m.items() if k != "role"}))
            continue
        calls = [ToolCall(id=c["id"], type=c["type"], function=FunctionCall(**c["function"]))
                 for c in m.get("tool_calls", ())]  # fmt: skip
        said = {"tool_calls": calls} if calls else {}  # an explicit None is sent as null
        models.append(AssistantMessage(content=m["content"], **said))
    return models


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from opentelemetry.instrumentation.mistralai import MistralAiInstrumentor

        MistralAiInstrumentor().instrument(tracer_provider=tracer_provider)
        from mistralai import Mistral

        client = Mistral(api_key="test-key", server_url=base_url.removesuffix("/v1"))
        complete = mistral_complete(client, stack.endswith("-stream"), _models)
        tool_loop(complete, scenario, named_results=True)


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
