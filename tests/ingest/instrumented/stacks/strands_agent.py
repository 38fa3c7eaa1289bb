"""A Strands `Agent` on its OpenAI model provider, traced by Strands itself with the latest
GenAI conventions (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`); the same
agent object carries the conversation across turns. `openlit-strands` adds `openlit.init`
(OpenLIT's Strands and OpenAI instrumentations) to Strands' own tracing;
`strands-openinference-openai` adds OpenInference's OpenAI instrumentation on the model's
client, `strands-openllmetry-openai` OpenLLMetry's (Strands' OpenAI provider streams every
request: each client span is of a stream)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, openlit_or
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def converse(base_url: str, stack: str, scenario: str) -> None:
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

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


def _client_instrumentation(stack: str) -> Callable[[TracerProvider], object]:
    """The openai SDK's instrumentation the stack adds to Strands' own tracing, if any."""
    if stack == "strands-openinference-openai":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        return lambda provider: OpenAIInstrumentor().instrument(tracer_provider=provider)
    if stack == "strands-openllmetry-openai":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as LLMetry

        return lambda provider: LLMetry().instrument(tracer_provider=provider)
    return lambda _: None


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with openlit_or(stack, out, scenario, _client_instrumentation(stack)):
        converse(base_url, stack, scenario)


ENV = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
       "TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_METRICS_ENABLED": "false"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
