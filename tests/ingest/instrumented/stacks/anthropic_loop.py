"""A raw-client agent loop on the real `anthropic` SDK (Messages API with tools), under
OpenInference, OpenLLMetry or OpenLIT (`openlit.init`, content capture on, exporting through
the global provider `providers()` set, as `openlit_loop`), each also with every call
streamed (`-stream`: `messages.stream()`, read to its final message). The SDK's own
tracing stays as it ships (on, metadata only), so its `anthropic.messages.create` spans are
in the export beside the instrumentation's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers

MODEL = "claude-sonnet-4-5"
ANTHROPIC_TOOLS = [
    {
        "name": t["function"]["name"],
        "description": t["function"]["description"],
        "input_schema": t["function"]["parameters"],
    }
    for t in TOOLS
]


def _instrument(stack: str, tracer_provider: Any) -> None:
    if stack.startswith("anthropic-openinference"):
        from openinference.instrumentation.anthropic import AnthropicInstrumentor

        AnthropicInstrumentor().instrument(tracer_provider=tracer_provider)
    elif stack.startswith("anthropic-openllmetry"):
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor as Traceloop

        Traceloop().instrument(tracer_provider=tracer_provider)
    elif stack.startswith("openlit-anthropic"):
        import openlit

        openlit.init(application_name=stack, capture_message_content=True, disable_metrics=True)
    else:
        raise ValueError(f"no setup for {stack}")


def _reply(client: Any, messages: list[dict[str, Any]], stream: bool) -> Any:
    request = {"model": MODEL, "max_tokens": 1024, "system": SYSTEM_PROMPT,
               "messages": messages, "tools": ANTHROPIC_TOOLS}
    if not stream:
        return client.messages.create(**request)
    with client.messages.stream(**request) as streamed:  # read to its final message
        return streamed.get_final_message()


def converse(client: Any, scenario: str, stream: bool = False) -> None:
    messages: list[dict[str, Any]] = []
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            reply = _reply(client, messages, stream)
            content = [block.model_dump(exclude_none=True) for block in reply.content]
            messages.append({"role": "assistant", "content": content})
            uses = [b for b in content if b["type"] == "tool_use"]
            if not uses:
                break
            results = []
            for use in uses:
                text, failed = run_tool(use["name"], json.dumps(use["input"]))
                result = {"type": "tool_result", "tool_use_id": use["id"], "content": text}
                results.append(result | ({"is_error": True} if failed else {}))
            messages.append({"role": "user", "content": results})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        _instrument(stack, tracer_provider)
        import anthropic

        client = anthropic.Anthropic(base_url=base_url, api_key="test-key", max_retries=0)
        stream = stack.endswith("-stream")
        if stack.startswith("anthropic-openinference"):
            from openinference.instrumentation import using_session

            with using_session(f"sess-{stack}-{scenario}"):
                converse(client, scenario, stream)
        else:
            converse(client, scenario, stream)


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
