"""The raw-client agent loop of `instrumented.driver` on the real `openai` SDK (chat
completions with tools), instrumented by OpenLIT (`openlit.init`, content capture on).
OpenLIT reuses the global SDK tracer and logger providers when they are set
(`openlit/otel/tracing.py`, `events.py`), so `providers()` runs first; metrics are off (no
meter provider here)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.driver import complete_with, converse, tool_loop
from tests.ingest.instrumented.stacks.common import main, providers


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        import openlit

        try:
            openlit.init(application_name=stack, capture_message_content=True,
                         disable_metrics=True)  # fmt: skip
        except TypeError:  # OpenLIT before 1.3x named the content switch `trace_content`
            openlit.init(application_name=stack, trace_content=True, disable_metrics=True)
        import openai

        client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
        if stack != "openlit-openai-1.26":
            converse(client, scenario, stream=False)
            return
        # OpenLIT 1.26 reads every message's `content` key (`openai.py`, `message["content"]`)
        # and records nothing of a call whose history lacks one: the app keeps the SDK's
        # dump of a reply whole, `content` None beside its tool calls, as most apps do.
        complete = complete_with(client)
        tool_loop(lambda messages: {"content": None, **complete(messages)}, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
