"""Mirascope v2's agent loop with tools over OpenAI (`llm.call` on `openai/gpt-4o-mini`, which
Mirascope sends to the Responses API by default), under Mirascope's own OTel GenAI
instrumentation: `ops.configure(tracer_provider=...)` then `ops.instrument_llm()`, which
wraps `llm.Model`'s calls, streams and resumes in GenAI spans (`mirascope.ops`,
`_internal/instrumentation/llm/`). The loop is the one Mirascope's docs show: call, then
while the response asks for tools, `execute_tools()` and `resume(outputs)`; the next user
message of a scenario resumes the last response, so the history carries over. A tool's
failure reaches the model as its `ToolOutput` error text (Mirascope catches it).
`mirascope-otel-stream` uses `.stream(...)` and consumes each stream before going on."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def _finished(response: Any, streamed: bool) -> Any:
    if streamed:
        response.finish()
    return response


def converse(base_url: str, stack: str, scenario: str) -> None:
    from mirascope import llm

    llm.register_provider("openai", api_key="test-key", base_url=base_url)
    tools = [llm.tool(fn) for fn in FUNCTIONS]
    streamed = stack.endswith("-stream")

    @llm.call(f"openai/{MODEL}", tools=tools)
    def assistant(request: str) -> list[Any]:
        return [llm.messages.system(SYSTEM_PROMPT), llm.messages.user(request)]

    response: Any = None
    for turn in SCENARIOS[scenario].turns:
        if response is None:
            start = assistant.stream if streamed else assistant
            response = _finished(start(turn.request), streamed)
        else:
            response = _finished(response.resume(turn.request), streamed)
        while response.tool_calls:
            response = _finished(response.resume(response.execute_tools()), streamed)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    from mirascope import ops

    with providers(stack, out, scenario) as (tracer_provider, _):
        ops.configure(tracer_provider=tracer_provider)
        ops.instrument_llm()
        converse(base_url, stack, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
