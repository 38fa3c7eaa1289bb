"""What every stack driver shares: the OTel SDK set up as an application would set it up
(global tracer and logger providers, so spans a library makes on its own are exported too),
exporting to OTLP protobuf files, and the command line; and for the multi-agent scenarios,
the two agents every handoff or team driver sets up (`Team`).

    <stack venv>/bin/python -m tests.ingest.instrumented.stacks.<driver> STACK SCENARIO BASE_URL OUT

Each driver runs in its stack's own virtual environment, which has the stack and the OTel
SDK but not turnscore: this package imports only the standard library, the OTel SDK and the
scenario module (and its tools as Python functions).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import set_logger_provider
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.ingest.instrumented import scenarios
from tests.ingest.instrumented.export import FileLogExporter, FileSpanExporter
from tests.ingest.instrumented.stacks.tools import FUNCTIONS

AGENT_NAME = "research_assistant"


@contextmanager
def providers(
    stack: str, out: Path, scenario: str
) -> Iterator[tuple[TracerProvider, LoggerProvider]]:
    resource = Resource.create({"service.name": f"stack-{stack}"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(out, scenario)))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(
        BatchLogRecordProcessor(FileLogExporter(out, scenario))
    )
    trace.set_tracer_provider(tracer_provider)
    set_logger_provider(logger_provider)
    try:
        yield tracer_provider, logger_provider
    finally:
        tracer_provider.shutdown()
        logger_provider.shutdown()


@contextmanager
def openlit_or(
    stack: str, out: Path, scenario: str, instrument: Callable[[TracerProvider], object]
) -> Iterator[None]:
    """`providers()`, with OpenLIT for a stack named `openlit-...` (`openlit.init`, content
    captured, metrics off: it instruments every library it finds installed, exporting through
    the global providers), else `instrument` on the tracer provider."""
    with providers(stack, out, scenario) as (tracer_provider, _):
        if stack.startswith("openlit"):
            import openlit

            openlit.init(application_name=stack, capture_message_content=True,
                         disable_metrics=True)  # fmt: skip
        else:
            instrument(tracer_provider)
        yield


@dataclass(frozen=True)
class Team:
    """A multi-agent scenario as its drivers set it up (`MULTI_AGENT` in `scenarios.py`): the
    triage agent, no tools of its own, hands each request to the weather specialist, whose
    tools are Python functions (for frameworks that derive a tool from its signature); the
    scenario's requests, one a turn, in one session."""

    requests: tuple[str, ...]
    session: str
    triage: str = scenarios.TRIAGE_AGENT
    triage_prompt: str = scenarios.TRIAGE_PROMPT
    specialist: str = scenarios.SPECIALIST_AGENT
    specialist_prompt: str = scenarios.SPECIALIST_PROMPT
    specialist_role: str = "Answers weather questions."
    """What a framework that describes its agents to each other is told of the specialist."""

    @property
    def specialist_tools(self) -> list[Callable[..., Any]]:
        return [fn for fn in FUNCTIONS if fn.__name__ in scenarios.SPECIALIST_TOOLS]


def team(stack: str, scenario: str) -> Team:
    turns = scenarios.ALL_SCENARIOS[scenario].turns
    return Team(tuple(t.request for t in turns), f"sess-{stack}-{scenario}")


def openai_or_langgraph(base_url: str, stack: str, scenario: str) -> None:
    """The scenario as an SDK that instruments both sees it: LangGraph's prebuilt agent for a
    `-langgraph` stack, else a raw OpenAI client's tool loop (streamed for `-stream`)."""
    if "-langgraph" in stack:
        from tests.ingest.instrumented.stacks.langgraph_agent import converse as agent

        agent(base_url, stack, scenario)
        return
    import openai

    from tests.ingest.instrumented.driver import converse

    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    converse(client, scenario, stack.endswith("-stream"))


def main(argv: list[str], env: dict[str, str], run: Callable[[str, str, str, Path], None]) -> int:
    """Set the stack's environment before anything reads it, then run the scenario."""
    stack, scenario, base_url, out = argv
    os.environ.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)
    os.environ.update(env)
    run(stack, scenario, base_url, Path(out))
    return 0
