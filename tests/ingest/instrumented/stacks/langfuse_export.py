"""What Langfuse's Python SDK exports: its client set up as an application without a
Langfuse server sets it up, its span processor on the global tracer provider it makes, and
that processor's exporter the harness's file exporter (`span_exporter`), so the recording
holds the spans Langfuse would send, after its own filtering, with the attributes it sends.

- `langfuse-openai-agents`: Langfuse's OpenAI Agents SDK guide (OpenInference's
  `OpenAIAgentsInstrumentor` on the global provider, the Langfuse client made with
  `get_client()`'s settings) over `openai_agents_agent.converse`, its agent on
  `OpenAIChatCompletionsModel`; `-responses` on the SDK's default `OpenAIResponsesModel`.
- `langfuse-observe`: a hand-written chat completions tool loop on the bare `openai`
  client (no client instrumentation), traced only by Langfuse's `@observe`: each turn an
  `agent` observation (the request in, the answer out) in the conversation's session, each
  model call a `generation` (the messages and tools as its arguments, the returned
  message as its output, model and usage set with `update_current_generation`), each tool function a
  `tool` observation.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.export import FileSpanExporter
from tests.ingest.instrumented.scenarios import (
    MODEL,
    SCENARIOS,
    SYSTEM_PROMPT,
    TOOL_FUNCTIONS,
    TOOLS,
)
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main


def _observed_loop(stack: str, scenario: str, base_url: str) -> None:
    import openai
    from langfuse import get_client, observe, propagate_attributes

    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    langfuse = get_client()
    functions = {name: observe(as_type="tool")(fn) for name, fn in TOOL_FUNCTIONS.items()}

    @observe(as_type="generation", name="chat")
    def complete(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        response = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
        usage = response.usage
        langfuse.update_current_generation(
            model=response.model,
            usage_details=None if usage is None
            else {"input": usage.prompt_tokens, "output": usage.completion_tokens},
        )  # fmt: skip
        return response.choices[0].message.model_dump(exclude_none=True)

    def run(name: str, arguments: str) -> str:
        try:
            result = functions[name](**json.loads(arguments))
        except Exception as exc:  # the model is told what the tool raised
            return f"{type(exc).__name__}: {exc}"
        return result if isinstance(result, str) else json.dumps(result)

    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]

    @observe(as_type="agent", name=AGENT_NAME)
    def handle(request: str) -> str | None:
        messages.append({"role": "user", "content": request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            message = complete(list(messages), TOOLS)
            messages.append(message)
            if not message.get("tool_calls"):
                return message.get("content")
            for call in message["tool_calls"]:
                content = run(call["function"]["name"], call["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        return None

    with propagate_attributes(session_id=f"sess-{stack}-{scenario}"):
        for turn in SCENARIOS[scenario].turns:
            handle(turn.request)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    from langfuse import Langfuse

    os.environ["OTEL_SERVICE_NAME"] = f"stack-{stack}"  # the resource of the provider it makes
    if stack.startswith("langfuse-openai-agents"):
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor().instrument()
    # No tracer provider given: the client makes one and sets it as the global provider.
    langfuse = Langfuse(
        public_key="pk-lf-local", secret_key="sk-lf-local", base_url="http://127.0.0.1:9",
        span_exporter=FileSpanExporter(out, scenario),
    )  # fmt: skip
    try:
        if stack.startswith("langfuse-openai-agents"):
            from tests.ingest.instrumented.stacks.openai_agents_agent import converse

            asyncio.run(converse(base_url, scenario, "-responses" in stack))
        else:
            _observed_loop(stack, scenario, base_url)
    finally:
        langfuse.shutdown()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
