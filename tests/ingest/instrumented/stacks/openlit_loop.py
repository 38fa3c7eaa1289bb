"""The raw-client agent loop of `instrumented.driver` on the real `openai` SDK (chat
completions with tools), instrumented by OpenLIT (`openlit.init`, content capture on).
OpenLIT reuses the global SDK tracer and logger providers when they are set
(`openlit/otel/tracing.py`, `events.py`), so `providers()` runs first; metrics are off (no
meter provider here)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.driver import converse
from tests.ingest.instrumented.stacks.common import main, providers


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        import openlit

        openlit.init(application_name=stack, capture_message_content=True, disable_metrics=True)
        import openai

        converse(openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0), scenario,
                 stream=False)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
