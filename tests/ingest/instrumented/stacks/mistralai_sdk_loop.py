"""The `mistralai` SDK (3.x) tracing itself, no instrumentation library: its tracing hook
(`mistralai/client/_hooks/tracing.py`, spans made by `mistralai/extra/observability/otel.py`,
tracer `mistralai_sdk_tracer`) on the application's global tracer provider
(`MISTRAL_SDK_TELEMETRY=global`; unset, the SDK traces nothing, and "dedicated" exports to
Mistral's own endpoint). A raw client's agent loop (`driver.tool_loop`, the model call
`mistralai_loop.mistral_complete`, at `server_url` + `/v1/chat/completions`); `-stream` calls
`chat.stream`. Each call's span has GenAI JSON messages and tool definitions."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.driver import tool_loop
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.mistralai_loop import mistral_complete


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        from mistralai.client import Mistral

        client = Mistral(api_key="test-key", server_url=base_url.removesuffix("/v1"))
        tool_loop(mistral_complete(client, stack.endswith("-stream")), scenario,
                  named_results=True)


ENV = {"MISTRAL_SDK_TELEMETRY": "global"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
