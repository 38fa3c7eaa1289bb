"""Run one scenario with one instrumentation library, exporting to files.

    python -m tests.ingest.instrumented.driver LIBRARY SCENARIO BASE_URL OUT_DIR

A raw-client agent loop on the real `openai` client: chat.completions with the tools,
run the tools the model asks for, send their results back, until the model answers.
Each run is its own process because the libraries patch the client globally.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.ingest.instrumented.export import FileLogExporter, FileSpanExporter
from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool


@dataclass(frozen=True)
class Library:
    name: str
    distribution: str
    """The PyPI distribution that must be installed for the scenarios to run."""
    env: dict[str, str] = field(default_factory=dict)
    stream: bool = False
    events: bool = False
    """Ask the library for its log-record events instead of content attributes."""
    session: bool = False
    """Whether the driver can give the library a session id."""
    jsonl: bool = False
    """Export JSON Lines instead of protobuf files."""
    content: bool = True
    """Whether the library is asked to capture message content (the OTel GenAI
    instrumentations' default is not to)."""
    also: tuple[str, ...] = ()
    """Distributions instrumenting the same client at once, on the same providers (a team
    running two tracing SDKs): each model call is then recorded by every one of them."""

    @property
    def distributions(self) -> tuple[str, ...]:
        return (self.distribution, *self.also)


LIBRARIES: dict[str, Library] = {
    lib.name: lib
    for lib in (
        # Semantic-convention stability opt-in unset: the v1.30 per-message log events.
        Library("otel-openai-v2-legacy-events", "opentelemetry-instrumentation-openai-v2",
                {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}),
        Library("otel-openai-v2-legacy-events-stream", "opentelemetry-instrumentation-openai-v2",
                {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}, stream=True),
        # Content capture off, the default: the events keep roles, call ids and names.
        Library("otel-openai-v2-no-content", "opentelemetry-instrumentation-openai-v2",
                {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"}, content=False),
        Library("otel-openai-v2-no-content-stream", "opentelemetry-instrumentation-openai-v2",
                {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"}, stream=True,
                content=False),
        Library("openllmetry", "opentelemetry-instrumentation-openai",
                {"TRACELOOP_TRACE_CONTENT": "true"}),
        Library("openllmetry-stream", "opentelemetry-instrumentation-openai",
                {"TRACELOOP_TRACE_CONTENT": "true"}, stream=True),
        Library("openllmetry-events", "opentelemetry-instrumentation-openai",
                {"TRACELOOP_TRACE_CONTENT": "true"}, events=True, jsonl=True),
        Library("openinference-stream", "openinference-instrumentation-openai",
                stream=True, session=True, jsonl=True),
        # Two instrumentations at once: one turn per user message and one model call per
        # call on the wire, however many spans record it.
        Library("openllmetry+openinference", "opentelemetry-instrumentation-openai",
                {"TRACELOOP_TRACE_CONTENT": "true"}, session=True,
                also=("openinference-instrumentation-openai",)),
        Library("otel-openai-v2+openllmetry", "opentelemetry-instrumentation-openai-v2",
                {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
                 "TRACELOOP_TRACE_CONTENT": "true"},
                also=("opentelemetry-instrumentation-openai",)),
    )
}  # fmt: skip


def _instrument(library: Library, tracer_provider: TracerProvider, logger_provider: Any) -> None:
    for distribution in library.distributions:
        if distribution == "opentelemetry-instrumentation-openai-v2":
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as V2

            V2().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
        elif distribution == "opentelemetry-instrumentation-openai":
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor as Traceloop

            Traceloop(use_attributes=not library.events).instrument(
                tracer_provider=tracer_provider, logger_provider=logger_provider
            )
        elif distribution == "openinference-instrumentation-openai":
            from openinference.instrumentation.openai import OpenAIInstrumentor as OpenInference

            OpenInference().instrument(tracer_provider=tracer_provider)
        else:
            raise ValueError(f"no setup for {distribution} ({library.name})")


def _session(library: Library, session_id: str) -> AbstractContextManager[object]:
    if "openinference-instrumentation-openai" in library.distributions:
        from openinference.instrumentation import using_session

        return using_session(session_id)
    return nullcontext()


def _complete(
    client: Any, messages: list[dict[str, Any]], stream: bool, usage: bool = True
) -> dict[str, Any]:
    """One model call; the assistant message as the next request will carry it. `usage`:
    ask a stream for its usage (`stream_options`, which not every OpenAI-like SDK has)."""
    if not stream:
        reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
        message: dict[str, Any] = reply.choices[0].message.model_dump(exclude_none=True)
        return {k: message[k] for k in ("role", "content", "tool_calls") if k in message}
    options = {"stream_options": {"include_usage": True}} if usage else {}
    stream = client.chat.completions.create(
        model=MODEL, messages=messages, tools=TOOLS, stream=True, **options)
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in stream:
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for delta in choice.delta.tool_calls or ():
                call = calls.setdefault(
                    delta.index, {"type": "function", "function": {"name": "", "arguments": ""}}
                )
                call["id"] = delta.id or call.get("id")
                call["function"]["name"] += (delta.function and delta.function.name) or ""
                call["function"]["arguments"] += (delta.function and delta.function.arguments) or ""
    out: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        out["tool_calls"] = [calls[k] for k in sorted(calls)]
    return out


Complete = Callable[[list[dict[str, Any]]], dict[str, Any]]
"""One model call on the history so far: the assistant message, in OpenAI's chat shape, as
the next request will carry it."""


def converse(client: Any, scenario: str, stream: bool = False, usage: bool = True) -> None:
    """The scenario's turns on the `openai` client, each model call streamed or not (the
    stack drivers' raw loops on OpenAI-compatible SDKs too: `stacks/openai_loop.py`,
    `stacks/groq_loop.py`)."""
    tool_loop(complete_with(client, stream, usage), scenario)


def complete_with(client: Any, stream: bool = False, usage: bool = True) -> Complete:
    """`_complete` on an OpenAI-compatible `client` (looked up per call: traceloop_loop
    wraps it in a task)."""
    return lambda messages: _complete(client, messages, stream, usage)


def tool_loop(complete: Complete, scenario: str, named_results: bool = False) -> None:
    """The scenario's turns as OpenAI chat messages, whatever SDK `complete` calls (an
    OpenAI-compatible one's, Mistral's, Azure AI Inference's, LiteLLM's, Cohere's, Ollama's):
    each tool call the model asks for run and its result sent back, until the model answers.
    `named_results`: a tool result names its tool (`name`), as Mistral's and Ollama's tool
    messages do."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            message = complete(messages)
            messages.append(message)
            if not message.get("tool_calls"):
                break
            for call in message["tool_calls"]:
                fn = call["function"]
                content, _ = run_tool(fn["name"], fn["arguments"])
                name = {"name": fn["name"]} if named_results else {}
                messages.append({"role": "tool", "tool_call_id": call["id"], **name,
                                 "content": content})  # fmt: skip


@contextmanager
def _providers(library: Library, out: Path, scenario: str) -> Iterator[None]:
    resource = Resource.create({"service.name": f"instrumented-{library.name}"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(
        BatchSpanProcessor(FileSpanExporter(out, scenario, jsonl=library.jsonl))
    )
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(
        BatchLogRecordProcessor(FileLogExporter(out, scenario, jsonl=library.jsonl))
    )
    _instrument(library, tracer_provider, logger_provider)
    try:
        yield
    finally:
        tracer_provider.shutdown()
        logger_provider.shutdown()


def main(argv: list[str]) -> int:
    name, scenario, base_url, out = argv
    library = LIBRARIES[name]
    os.environ.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)
    os.environ.update(library.env)
    with _providers(library, Path(out), scenario):
        import openai

        client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
        with _session(library, f"sess-{name}-{scenario}"):
            converse(client, scenario, library.stream)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
