"""The `anthropic` SDK (2.17) tracing itself, no instrumentation library: its client's
`open_telemetry` option (`anthropic/_tracing.py`, `anthropic/lib/_tracing/`) exporting
through the global tracer provider `providers()` sets. Each stack is one way an application
runs it:

- `anthropic-sdk-otel`: `traces.content_mode` "content", a raw client's agent loop
  (`anthropic_loop.converse`), each call an `anthropic.messages.create` CLIENT span of a
  trace of its own; `-stream` streams every call (`messages.stream()`).
- `anthropic-sdk-otel-conversation`: the same with the option's `conversation_id` (one a
  scenario), on every span as `gen_ai.conversation.id`.
- `anthropic-sdk-otel-metadata`: the option left at its default, `metadata_only`: each span
  has the model, usage and response id, no message, no tool.
- `anthropic-sdk-otel-tool-runner`: content mode, the SDK's own agent loop
  (`client.beta.messages.tool_runner`, `anthropic/lib/tools/_beta_runner.py`), one a turn:
  an `anthropic.messages.tool_runner` span (`invoke_agent`) around each call and each tool
  run (`anthropic.custom_tool_use {name}`, `execute_tool`, `lib/_tracing/_tools.py`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import SCENARIOS, SYSTEM_PROMPT, TOOL_FUNCTIONS, TOOLS
from tests.ingest.instrumented.stacks.anthropic_loop import MODEL, converse
from tests.ingest.instrumented.stacks.common import main, providers


def _option(stack: str, scenario: str) -> dict[str, Any] | None:
    """The client's `open_telemetry` option; `None` leaves it at its default (metadata only)."""
    if stack.endswith("-metadata"):
        return None
    option: dict[str, Any] = {"traces": {"content_mode": "content"}}
    if stack.endswith("-conversation"):
        option["conversation_id"] = f"sess-{stack}-{scenario}"
    return option


def _runner_tools() -> list[Any]:
    """The scenario's tools as the runner runs them, under the name, description and schema
    every other stack sends (`TOOLS`). Each returns its result as JSON text (the runner
    sends a list or dict a tool returns as content blocks) and raises what the tool raises
    (the runner sends its `repr`, `is_error`)."""
    from anthropic import beta_tool

    return [beta_tool(_as_text(TOOL_FUNCTIONS[t["function"]["name"]]),
                      name=t["function"]["name"], description=t["function"]["description"],
                      input_schema=t["function"]["parameters"])
            for t in TOOLS]


def _as_text(function: Callable[..., Any]) -> Callable[..., str]:
    def tool(**arguments: Any) -> str:
        result = function(**arguments)
        return result if isinstance(result, str) else json.dumps(result)

    return tool


def run_tool_runner(client: Any, scenario: str) -> None:
    """Each turn one `tool_runner` over the conversation so far, read message by message; the
    history takes each reply and the tool results the runner made of it (run once: the
    runner keeps them for its next request). `thread=False`: the runner sends the whole
    history each request, as the scripted server needs, not a server-side message thread
    (beta `message-threads`, its default) that sends only what is new."""
    tools = _runner_tools()
    messages: list[Any] = []
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        runner = client.beta.messages.tool_runner(
            model=MODEL, max_tokens=1024, system=SYSTEM_PROMPT, messages=list(messages),
            tools=tools, max_iterations=8, thread=False)
        for message in runner:
            messages.append(message.to_param())
            if (results := runner.generate_tool_call_response()) is not None:
                messages.append(results)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        import anthropic

        client = anthropic.Anthropic(base_url=base_url, api_key="test-key", max_retries=0,
                                     open_telemetry=_option(stack, scenario))
        if stack.endswith("-tool-runner"):
            run_tool_runner(client, scenario)
        else:
            converse(client, scenario, stack.endswith("-stream"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
