"""A Strands `Agent` on its OpenAI model provider (chat completions), traced by Strands
itself in its default form (content as `gen_ai.*` span events), its spans translated into
OpenInference by `openinference-instrumentation-strands-agents`'
`StrandsAgentsToOpenInferenceProcessor`: the exported spans keep Strands' `gen_ai.*`
attributes beside the processor's `llm.*`, `tool.*` and `input.value`/`output.value`, and
lose their `gen_ai.*` events (the processor strips them once read). `-latest` opts in to
the latest GenAI conventions (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`:
the content in operation-details events, which the processor reads and strips too). The same
agent object carries the conversation across turns.

The processor rewrites the span in its `on_end`, so it runs before the exporting processor
(`translated_loop._first`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.strands_agent import converse
from tests.ingest.instrumented.stacks.translated_loop import _first


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation.strands_agents import (
            StrandsAgentsToOpenInferenceProcessor,
        )

        _first(tracer_provider, StrandsAgentsToOpenInferenceProcessor())
        converse(base_url, stack, scenario)


if __name__ == "__main__":
    latest = sys.argv[1].endswith("-latest")
    sys.exit(main(sys.argv[1:],
                  {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"} if latest else {},
                  run))
