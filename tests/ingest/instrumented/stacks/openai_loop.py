"""A raw-client agent loop on the real `openai` SDK (chat completions with tools),
instrumented by OpenLIT (`openlit.init`, content capture on). OpenLIT reuses the global SDK
tracer and logger providers when they are set (`openlit/otel/tracing.py`, `events.py`), so
`providers()` runs first; metrics are off (no meter provider here)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers


def converse(client: Any, scenario: str) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                text, _ = run_tool(call.function.name, call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        import openlit

        openlit.init(application_name=stack, capture_message_content=True, disable_metrics=True)
        import openai

        converse(openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0), scenario)


ENV: dict[str, str] = {}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
