"""LangWatch's Python SDK (`langwatch`), OTel-based: `langwatch.setup()` attaches its OTLP
exporter (to `<endpoint>/api/otel/v1/traces`) to a tracer provider of its own; a function
under `@langwatch.trace()` is a trace, its root span given the function's call and return
value as typed values (`langwatch.input` / `langwatch.output`, JSON `{type, value}`) and
the trace's metadata (`metadata`, JSON: `thread_id` groups a conversation); a function
under `@langwatch.span(type=...)` a span of its own kind (`langwatch.span.type`); and
`autotrack_openai_calls(client)` makes each chat completion of the client an `llm` span
(the request's messages and the response's as `chat_messages`, the request's parameters,
tools among them, as `langwatch.params`, usage as `langwatch.metrics`).

The agent: each user message a `@langwatch.trace` run of the raw OpenAI tool loop
(`driver._complete`, streamed for `-stream`), its tools `@langwatch.span(type="tool")`
functions, the conversation's history kept across runs and its id the trace's
`thread_id`. LangWatch exports only through its own exporter, so `endpoint_url` is a
loopback OTLP/HTTP receiver (`otlp_receiver`) that writes the harness's files.

    langwatch-openai, langwatch-openai-stream
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented import scenarios
from tests.ingest.instrumented.driver import _complete
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main
from tests.ingest.instrumented.stacks.otlp_receiver import receiver


def _converse(stack: str, scenario: str, base_url: str) -> None:
    import langwatch
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    stream = stack.endswith("-stream")
    tools = {name: langwatch.span(type="tool", name=name)(fn)
             for name, fn in scenarios.TOOL_FUNCTIONS.items()}  # fmt: skip
    history: list[dict[str, Any]] = [{"role": "system", "content": scenarios.SYSTEM_PROMPT}]

    def run_tool(name: str, arguments: str) -> str:
        """What the model is told: the tool's result as JSON text, or what it raised."""
        try:
            result = tools[name](**json.loads(arguments))
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        return result if isinstance(result, str) else json.dumps(result)

    @langwatch.trace(name=AGENT_NAME, type="agent")
    def research_assistant(question: str) -> str:
        trace = langwatch.get_current_trace()
        trace.update(metadata={"thread_id": f"sess-{stack}-{scenario}"})
        trace.autotrack_openai_calls(client)
        history.append({"role": "user", "content": question})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            message = _complete(client, history, stream)
            history.append(message)
            if not message.get("tool_calls"):
                return str(message.get("content") or "")
            for call in message["tool_calls"]:
                fn = call["function"]
                history.append({"role": "tool", "tool_call_id": call["id"],
                                "content": run_tool(fn["name"], fn["arguments"])})  # fmt: skip
        raise RuntimeError("the turn did not end")

    for turn in scenarios.SCENARIOS[scenario].turns:
        research_assistant(turn.request)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with receiver(out, scenario) as url:
        # Anything not addressed to 127.0.0.1 goes to the receiver as its proxy, which
        # refuses it: nothing leaves the machine.
        os.environ.update({"HTTPS_PROXY": url, "HTTP_PROXY": url,
                           "NO_PROXY": "127.0.0.1,localhost"})  # fmt: skip
        import langwatch
        from opentelemetry import trace

        langwatch.setup(api_key="test-key", endpoint_url=url,
                        base_attributes={"service.name": f"stack-{stack}"})  # fmt: skip
        try:
            _converse(stack, scenario, base_url)
        finally:
            provider = trace.get_tracer_provider()
            provider.shutdown()  # type: ignore[attr-defined]


ENV = {"LANGWATCH_API_KEY": "test-key"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
