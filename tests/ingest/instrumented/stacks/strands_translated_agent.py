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

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS
from tests.ingest.instrumented.stacks.translated_loop import _first


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation.strands_agents import (
            StrandsAgentsToOpenInferenceProcessor,
        )
        from strands import Agent, tool
        from strands.models.openai import OpenAIModel

        _first(tracer_provider, StrandsAgentsToOpenInferenceProcessor())
        model = OpenAIModel(
            client_args={"api_key": "test-key", "base_url": base_url, "max_retries": 0},
            model_id=MODEL,
        )
        session = f"sess-{stack}-{scenario}"
        agent = Agent(
            model=model, tools=[tool(fn) for fn in FUNCTIONS], system_prompt=SYSTEM_PROMPT,
            name=AGENT_NAME, callback_handler=None,
            trace_attributes={"session.id": session, "gen_ai.conversation.id": session},
        )  # fmt: skip
        for turn in SCENARIOS[scenario].turns:
            agent(turn.request)


if __name__ == "__main__":
    latest = sys.argv[1].endswith("-latest")
    sys.exit(main(sys.argv[1:],
                  {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"} if latest else {},
                  run))
