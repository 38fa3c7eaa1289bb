"""A raw-client agent loop on the real `openai` SDK (chat completions with tools) under two or
three instrumentations of that SDK at once, as an application gets when more than one
instrumentation package is installed and each instruments the client (OpenInference's
`OpenAIInstrumentor`, OpenLLMetry's, and the OTel contrib `openai-v2`); one configuration
streams. Each wraps the same method, so every model call is recorded once per
instrumentation, their spans nested in one trace.

The `openai-responses-*` configurations run the same loop on the Responses API
(`client.responses.create`: `instructions`, the conversation as `input` items, the tools in
the Responses form, the model's output items and a `function_call_output` per call appended
as the next request's input), under one instrumentation each, plain and streamed (the
`response.completed` event's response is what the app keeps); `-call-ids` sends the history
back as an app keeping it in its own form does, each function call by its `call_id` alone
(`_rebuilt`). The OTel contrib `openai-v2`
instruments Responses only from 2.4b0, which imports `opentelemetry.util.genai.instruments`,
a module no release of util-genai (1.3b0) has: it is not among them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.driver import converse
from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers

INSTRUMENTATIONS = {
    "openai-openinference-openllmetry": ("openinference", "openllmetry"),
    "openai-three-instrumentations": ("openinference", "openllmetry", "otel-v2"),
    "openai-three-instrumentations-stream": ("openinference", "openllmetry", "otel-v2"),
    "openai-responses-openinference": ("openinference",),
    "openai-responses-openinference-stream": ("openinference",),
    "openai-responses-openllmetry": ("openllmetry",),
    "openai-responses-openllmetry-stream": ("openllmetry",),
    "openai-responses-openllmetry-call-ids": ("openllmetry",),
    # older releases, pinned in their own environments
    "openai-openllmetry-0.33": ("openllmetry",),
    "openai-openllmetry-0.33-stream": ("openllmetry",),
    "openai-openinference-0.1.12": ("openinference",),
    "openai-openinference-0.1.12-stream": ("openinference",),
}
STREAMED = {"openai-three-instrumentations-stream", "openai-responses-openinference-stream",
            "openai-responses-openllmetry-stream", "openai-openllmetry-0.33-stream",
            "openai-openinference-0.1.12-stream"}  # fmt: skip
RESPONSES_TOOLS = [{"type": "function", **t["function"]} for t in TOOLS]
REBUILT = {"openai-responses-openllmetry-call-ids"}
"""Configurations whose history is the app's own, rebuilt as input items (`_rebuilt`)."""


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


def _respond(client: Any, items: list[dict[str, Any]], stream: bool) -> Any:
    """One Responses call; the response (a stream's, from its response.completed event)."""
    request = {"model": MODEL, "instructions": SYSTEM_PROMPT, "input": items,
               "tools": RESPONSES_TOOLS}  # fmt: skip
    if not stream:
        return client.responses.create(**request)
    done = [e.response for e in client.responses.create(**request, stream=True)
            if e.type == "response.completed"]  # fmt: skip
    return done[-1]


def _rebuilt(item: Any) -> dict[str, Any]:
    """An output item as an app that keeps the conversation in its own form sends it back:
    a function call by its `call_id` alone, without the output item's `fc_` id (langchain-
    openai `chat_models/base.py`, `_construct_responses_api_input`: the `id` only where it
    kept the map of them), an answer as an assistant message's text."""
    if item.type == "function_call":
        return {"type": "function_call", "call_id": item.call_id, "name": item.name,
                "arguments": item.arguments}  # fmt: skip
    if item.type == "message":
        text = "".join(c.text for c in item.content if c.type == "output_text")
        return {"role": "assistant", "content": text}
    dumped: dict[str, Any] = item.model_dump(exclude_none=True)
    return dumped


def converse_responses(client: Any, scenario: str, stream: bool, rebuild: bool = False) -> None:
    """`rebuild`: the history as the app's own items (`_rebuilt`), not the output items."""
    items: list[dict[str, Any]] = []
    for turn in SCENARIOS[scenario].turns:
        items.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            response = _respond(client, items, stream)
            items += [_rebuilt(o) if rebuild else o.model_dump(exclude_none=True)
                      for o in response.output]  # fmt: skip
            calls = [o for o in response.output if o.type == "function_call"]
            if not calls:
                break
            for call in calls:
                output, _ = run_tool(call.name, call.arguments)
                items.append({"type": "function_call_output", "call_id": call.call_id,
                              "output": output})  # fmt: skip


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        _instrument(stack, tracer_provider, logger_provider)
        import openai

        client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
        if stack.startswith("openai-responses"):
            converse_responses(client, scenario, stack in STREAMED, stack in REBUILT)
        else:
            converse(client, scenario, stack in STREAMED)


ENV = {
    "TRACELOOP_TRACE_CONTENT": "true",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
