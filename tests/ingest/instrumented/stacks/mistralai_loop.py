"""A raw-client agent loop on the real `mistralai` SDK (chat completions with tools at
`server_url` + `/v1/chat/completions`: the same request and response bodies as OpenAI's
for what the scenarios use) under OpenLLMetry's Mistral AI instrumentation, prompts traced;
`-stream` calls `chat.stream` and assembles each answer from its chunks.

The history is the SDK's own message models, as its docs' tool examples build it: the
instrumentation reads each prompt message's `.content` and `.role` as attributes
(opentelemetry-instrumentation-mistralai `__init__.py` `_set_input_attributes`), so a
history of plain dicts leaves its spans without prompts. The newest instrumentation (0.62)
imports `mistralai.models`, which mistralai 2.0 moved under `mistralai.client`: the newest
SDK it runs with is 1.x."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers


def _streamed(events: Any) -> Any:
    """A chat stream read to its end, as the assistant message its chunks spell."""
    from mistralai.models import AssistantMessage, FunctionCall, ToolCall

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
    return AssistantMessage(
        content="".join(text),
        tool_calls=[ToolCall(id=c["id"], function=FunctionCall(name=c["name"],
                                                               arguments=c["arguments"]))
                    for _, c in sorted(calls.items())] or None,
    )  # fmt: skip


def converse(client: Any, scenario: str, stream: bool) -> None:
    from mistralai.models import SystemMessage, ToolMessage, UserMessage

    messages: list[Any] = [SystemMessage(content=SYSTEM_PROMPT)]
    for turn in SCENARIOS[scenario].turns:
        messages.append(UserMessage(content=turn.request))
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            if stream:
                message = _streamed(client.chat.stream(model=MODEL, messages=messages,
                                                       tools=TOOLS))  # fmt: skip
            else:
                reply = client.chat.complete(model=MODEL, messages=messages, tools=TOOLS)
                message = reply.choices[0].message
            messages.append(message)
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                arguments = call.function.arguments  # a JSON string, or an object
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments)
                content, _ = run_tool(call.function.name, arguments)
                messages.append(ToolMessage(content=content, tool_call_id=call.id,
                                            name=call.function.name))  # fmt: skip


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from opentelemetry.instrumentation.mistralai import MistralAiInstrumentor

        MistralAiInstrumentor().instrument(tracer_provider=tracer_provider)
        from mistralai import Mistral

        client = Mistral(api_key="test-key", server_url=base_url.removesuffix("/v1"))
        converse(client, scenario, stack.endswith("-stream"))


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
