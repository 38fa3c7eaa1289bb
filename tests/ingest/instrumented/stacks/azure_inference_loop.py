"""A raw-client agent loop on the Azure AI Inference SDK (`ChatCompletionsClient.complete`
with tools, the endpoint the scripted server's chat completions route), traced by the SDK's
own `AIInferenceInstrumentor` (azure-core's OpenTelemetry plugin, content recording on);
`-stream` streams every call (`stream=True`, read to its end). The loop is `driver.tool_loop`;
`_complete` reads the SDK's answer back as OpenAI's chat shape. The SDK has no session."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.driver import tool_loop
from tests.ingest.instrumented.scenarios import MODEL, TOOLS
from tests.ingest.instrumented.stacks.common import main, providers


def _complete(client: Any, messages: list[dict[str, Any]], stream: bool) -> dict[str, Any]:
    """One model call; the assistant message as the next request will carry it."""
    if not stream:
        message = client.complete(messages=messages, tools=TOOLS, model=MODEL).choices[0].message
        out: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            out["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                "name": c.function.name, "arguments": c.function.arguments}}
                for c in message.tool_calls]  # fmt: skip
        return out
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for update in client.complete(messages=messages, tools=TOOLS, model=MODEL, stream=True):
        for choice in update.choices or ():
            text.append(choice.delta.content or "")
            # The SDK's tool call update has no index: a new id opens the next call.
            for delta in choice.delta.tool_calls or ():
                if delta.id and (not calls or calls[-1]["id"] != delta.id):
                    calls.append({"id": delta.id, "type": "function",
                                  "function": {"name": "", "arguments": ""}})
                calls[-1]["function"]["name"] += delta.function.name or ""
                calls[-1]["function"]["arguments"] += delta.function.arguments or ""
    out = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        out["tool_calls"] = calls
    return out


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        from azure.ai.inference import ChatCompletionsClient
        from azure.ai.inference.tracing import AIInferenceInstrumentor
        from azure.core.credentials import AzureKeyCredential
        from azure.core.settings import settings

        settings.tracing_implementation = "opentelemetry"
        instrumentor = AIInferenceInstrumentor()
        instrumentor.instrument(enable_content_recording=True)
        client = ChatCompletionsClient(endpoint=base_url, credential=AzureKeyCredential("test-key"))
        try:
            stream = stack.endswith("-stream")
            tool_loop(lambda messages: _complete(client, messages, stream), scenario)
        finally:
            instrumentor.uninstrument()


ENV = {"AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED": "true",
       "AZURE_SDK_TRACING_IMPLEMENTATION": "opentelemetry"}  # fmt: skip

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
