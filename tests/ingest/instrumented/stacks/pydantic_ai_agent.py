"""A Pydantic AI `Agent` on its OpenAI chat model, instrumented through Logfire
(`pydantic-ai-logfire`: `logfire.instrument_pydantic_ai()`) or with plain OpenTelemetry
(`pydantic-ai-otel`: the agent's `instrument` set to `InstrumentationSettings(...)` on
the driver's providers, no Logfire installed), both in the data format Pydantic AI defaults
to; the next turn continues the conversation with `message_history`. A failing tool tells the model
through `ToolFailed`, as Pydantic AI asks of a failure the model should see.
`pydantic-ai-openinference` is `pydantic-ai-otel` with OpenInference's span processor
(`OpenInferenceSpanProcessor`), which adds OpenInference's attributes to each span as it
ends, before the batch exporter sends it; `pydantic-ai-openinference-openai` adds
OpenInference's OpenAI instrumentation on the agent's OpenAI client, two OpenInference spans
of each model call at once; `pydantic-ai-otel-openllmetry` adds OpenLLMetry's OpenAI
instrumentation instead (its `openai.chat` span under Pydantic AI's `chat` span, GenAI
conventions over OpenLLMetry's). `openlit-pydantic-ai` is the agent uninstrumented under
`openlit.init` (OpenLIT's Pydantic AI and OpenAI instrumentations). Each also runs
streamed (`-stream`: `agent.run_stream_sync`, its output read whole; every model request of
the run streams)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, openlit_or, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def _failing_to_the_model(fn: Callable[..., Any]) -> Callable[..., Any]:
    try:
        from pydantic_ai.exceptions import ToolFailed
    except ImportError:  # Pydantic AI 0.x: a failure the model sees is a retry prompt
        from pydantic_ai.exceptions import ModelRetry as ToolFailed

    @functools.wraps(fn)
    def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise ToolFailed(f"{type(exc).__name__}: {exc}") from exc

    return tool


def converse(base_url: str, scenario: str, instrument: Any = None, stream: bool = False) -> None:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.providers.openai import OpenAIProvider

    try:
        from pydantic_ai.models.openai import OpenAIChatModel
    except ImportError:  # Pydantic AI 0.x named it OpenAIModel
        from pydantic_ai.models.openai import OpenAIModel as OpenAIChatModel

    client = AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
    agent = Agent(
        model, system_prompt=SYSTEM_PROMPT, name=AGENT_NAME,
        tools=[_failing_to_the_model(fn) for fn in FUNCTIONS],
    )  # fmt: skip
    if instrument is not None:
        # An `Agent(instrument=...)` argument in 1.x; a property of the agent since 2.0.
        agent.instrument = instrument
    history: list[Any] = []
    for turn in SCENARIOS[scenario].turns:
        if stream:
            with agent.run_stream_sync(turn.request, message_history=history) as streamed:
                streamed.get_output()
                history = streamed.all_messages()
        else:
            history = agent.run_sync(turn.request, message_history=history).all_messages()


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    stream = stack.endswith("-stream")
    form = stack.removesuffix("-stream")
    if form == "openlit-pydantic-ai":
        with openlit_or(stack, out, scenario, lambda _: None):
            converse(base_url, scenario, stream=stream)
        return
    if form.startswith("pydantic-ai-otel-0."):
        _old_release(stack, scenario, base_url, out, stream)
        return
    if form in ("pydantic-ai-otel", "pydantic-ai-openinference",
                "pydantic-ai-openinference-openai", "pydantic-ai-otel-openllmetry"):
        from pydantic_ai.models.instrumented import InstrumentationSettings

        with providers(stack, out, scenario) as (tracer_provider, _):
            if form == "pydantic-ai-openinference-openai":
                from openinference.instrumentation.openai import OpenAIInstrumentor

                OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
            if form == "pydantic-ai-otel-openllmetry":
                from opentelemetry.instrumentation.openai import OpenAIInstrumentor as LLMetry

                LLMetry().instrument(tracer_provider=tracer_provider)
            if form.startswith("pydantic-ai-openinference"):
                from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor

                # It rewrites a span's attributes in place when the span ends: the batch
                # processor before it has only queued the span, and exports it later.
                tracer_provider.add_span_processor(OpenInferenceSpanProcessor())
            settings = InstrumentationSettings(tracer_provider=tracer_provider)
            converse(base_url, scenario, settings, stream)
        return
    from tests.ingest.instrumented.stacks.logfire_setup import logfire_configured

    with logfire_configured(stack, out, scenario) as logfire:
        logfire.instrument_pydantic_ai()
        converse(base_url, scenario, stream=stream)


def _old_release(stack: str, scenario: str, base_url: str, out: Path, stream: bool) -> None:
    """Pydantic AI 0.x under plain OpenTelemetry, in the event mode it had then: message
    events in the span's `events` attribute (its default), or (`-logs`) as OTel events,
    log records through an event logger provider on the driver's logger provider."""
    from opentelemetry.sdk._events import EventLoggerProvider
    from pydantic_ai.models.instrumented import InstrumentationSettings

    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        if stack.endswith("-logs"):
            settings = InstrumentationSettings(
                tracer_provider=tracer_provider, event_mode="logs",
                event_logger_provider=EventLoggerProvider(logger_provider),
            )  # fmt: skip
        else:
            settings = InstrumentationSettings(tracer_provider=tracer_provider)
        converse(base_url, scenario, settings, stream)

# OpenLLMetry's instrumentations read these (content is traced by default; said anyway).
ENV = {"TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_METRICS_ENABLED": "false"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
