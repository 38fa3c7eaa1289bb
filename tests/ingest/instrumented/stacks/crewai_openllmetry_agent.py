"""A CrewAI crew (the crews of `crewai_agent.py`, one kickoff per user turn) under OpenLLMetry's
CrewAI instrumentation (crew, agent, task and LLM spans) and its OpenAI instrumentation
beside it (CrewAI's native OpenAI provider calls the openai SDK), as `Traceloop.init`
installs both, content traced.

`crewai-openllmetry`: one agent with the scenario's tools, one task (the request).
`crewai-openllmetry-sequential`: the sequential crew of two tasks (the agent with the tools,
then an editor writing the answer).
`crewai-openllmetry-openinference-openai` (its own environment): OpenLLMetry's CrewAI
instrumentation with OpenInference's OpenAI instrumentation beside it, not OpenLLMetry's
(two vendors' conventions in one trace)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.crewai_agent import _ENV, converse


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from opentelemetry.instrumentation.crewai import CrewAIInstrumentor

        CrewAIInstrumentor().instrument(tracer_provider=tracer_provider)
        if "-openinference-openai" in stack:
            from openinference.instrumentation.openai import OpenAIInstrumentor
        else:
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # type: ignore[no-redef]
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, stack, scenario)


ENV = {**_ENV, "TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_METRICS_ENABLED": "false"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
