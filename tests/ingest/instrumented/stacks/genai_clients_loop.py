"""The raw client loops (`driver.converse` on OpenAI Chat Completions, `openai_loop`'s
Responses loop, `anthropic_loop`'s Messages loop, `bedrock_loop`'s Converse loop) under the
OTel project's official GenAI instrumentations from open-telemetry/opentelemetry-python-genai
(`opentelemetry-instrumentation-genai-openai`, `-anthropic`, `-bedrock`, on
opentelemetry-util-genai), one per stack, in util-genai's content-capture modes.

util-genai 1.3b0 reads `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` as a
`ContentCapturingMode` name (`utils.get_content_capturing_mode`: NO_CONTENT, SPAN_ONLY,
EVENT_ONLY, SPAN_AND_EVENT; anything else is NO_CONTENT) and emits the
`gen_ai.client.inference.operation.details` log record when that mode is EVENT_ONLY or
SPAN_AND_EVENT, or when `OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT=true`
(`_inference_invocation._should_emit_event`). It no longer reads
`OTEL_SEMCONV_STABILITY_OPT_IN` (`utils.is_experimental_mode` always answers True: the
latest experimental conventions only); the drivers set it anyway, as an application
configured for the contrib instrumentations does. `-stream` streams every model call;
`-raw-response` makes each chat call through `with_raw_response` (`_RawResponses`);
`-stream-helper` streams each Responses call through `responses.stream()` (`_StreamHelper`);
`genai-anthropic-create-stream` streams through `messages.create(stream=True)`
(`_CreateStream`) where `-stream` uses the `messages.stream()` helper."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.ingest.instrumented.stacks.common import main, providers

MODES = {
    "genai-openai-spans": "SPAN_ONLY",
    "genai-openai-spans-stream": "SPAN_ONLY",
    "genai-openai-spans-emit-event": "SPAN_ONLY",
    "genai-openai-events": "EVENT_ONLY",
    "genai-openai-events-stream": "EVENT_ONLY",
    "genai-openai-span-and-event": "SPAN_AND_EVENT",
    "genai-openai-span-and-event-stream": "SPAN_AND_EVENT",
    "genai-openai-raw-response": "SPAN_ONLY",
    "genai-openai-raw-response-stream": "SPAN_ONLY",
    "genai-openai-responses": "SPAN_ONLY",
    "genai-openai-responses-stream": "SPAN_ONLY",
    "genai-openai-responses-events": "EVENT_ONLY",
    "genai-openai-responses-events-stream": "EVENT_ONLY",
    "genai-openai-responses-span-and-event": "SPAN_AND_EVENT",
    "genai-openai-responses-stream-helper": "SPAN_ONLY",
    "genai-anthropic": "SPAN_ONLY",
    "genai-anthropic-stream": "SPAN_ONLY",
    "genai-anthropic-events": "EVENT_ONLY",
    "genai-anthropic-events-stream": "EVENT_ONLY",
    "genai-anthropic-span-and-event": "SPAN_AND_EVENT",
    "genai-anthropic-create-stream": "SPAN_ONLY",
    "genai-bedrock": "SPAN_ONLY",
    "genai-bedrock-stream": "SPAN_ONLY",
    "genai-bedrock-events": "EVENT_ONLY",
    "genai-bedrock-events-stream": "EVENT_ONLY",
    "genai-bedrock-span-and-event": "SPAN_AND_EVENT",
}
"""Each stack's OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT."""
EMIT_EVENT = {"genai-openai-spans-emit-event"}
"""Stacks that also set OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT=true: with SPAN_ONLY, content on
the span and an operation-details record per call that carries none (the mode allows
content on spans only, `_invocation._get_message_attributes`)."""


class _RawResponses:
    """`client.chat.completions` as an app that reads the HTTP response too calls it, as
    langchain-openai's ChatOpenAI does (`with_raw_response.create(...)`, then `parse()`): the
    instrumentation proxies that path apart (`_raw_response.py`)."""

    def __init__(self, client: Any) -> None:
        self.chat = self
        self.completions = self
        self._client = client

    def create(self, **request: Any) -> Any:
        return self._client.chat.completions.with_raw_response.create(**request).parse()


class _StreamHelper:
    """`client.responses` whose streamed calls go through the SDK's `responses.stream()`
    helper (read to its end) instead of `create(stream=True)`: the instrumentation wraps
    `Responses.stream` apart (`responses_stream`, patch_responses.py)."""

    def __init__(self, client: Any) -> None:
        self.responses = self
        self._client = client

    def create(self, stream: bool = False, **request: Any) -> Any:
        if not stream:
            return self._client.responses.create(**request)
        with self._client.responses.stream(**request) as events:
            return list(events)


def _openai(stack: str, scenario: str, base_url: str, stream: bool) -> None:
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    if "-responses" in stack:
        from tests.ingest.instrumented.stacks.openai_loop import converse_responses

        helper = "-stream-helper" in stack
        return converse_responses(_StreamHelper(client) if helper else client, scenario,
                                  stream or helper)
    from tests.ingest.instrumented.driver import converse

    return converse(_RawResponses(client) if "-raw-response" in stack else client, scenario,
                    stream)


class _CreateStream:
    """`client.messages` whose `stream()` calls `create(stream=True)` and reads its raw events
    to the final message (the SDK's own accumulator, `accumulate_event`), as apps that stream
    without the helper do: the instrumentation wraps `Messages.create` apart from
    `Messages.stream`."""

    def __init__(self, client: Any) -> None:
        self.messages = self
        self._client = client

    @contextmanager
    def stream(self, **request: Any) -> Iterator[Any]:
        from anthropic.lib.streaming._messages import accumulate_event

        message: Any = None
        buffers: dict[int, bytes] = {}
        for event in self._client.messages.create(**request, stream=True):
            message = accumulate_event(event=event, current_snapshot=message, json_bufs=buffers)
        yield SimpleNamespace(get_final_message=lambda: message)


def _anthropic(stack: str, scenario: str, base_url: str, stream: bool) -> None:
    from opentelemetry.instrumentation.genai.anthropic import AnthropicInstrumentor

    AnthropicInstrumentor().instrument()
    import anthropic

    from tests.ingest.instrumented.stacks.anthropic_loop import converse

    client = anthropic.Anthropic(base_url=base_url, api_key="test-key", max_retries=0)
    raw = stack.endswith("-create-stream")
    converse(_CreateStream(client) if raw else client, scenario, stream)


def _bedrock(scenario: str, base_url: str, stream: bool) -> None:
    from opentelemetry.instrumentation.genai.bedrock import BedrockInstrumentor

    BedrockInstrumentor().instrument()
    from tests.ingest.instrumented.stacks.bedrock_loop import client, converse

    converse(client(base_url), scenario, stream)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    stream = stack.endswith("-stream")
    # the instrumentors take the global providers `providers()` sets, as an app's do
    with providers(stack, out, scenario):
        if stack.startswith("genai-openai"):
            _openai(stack, scenario, base_url, stream)
        elif stack.startswith("genai-anthropic"):
            _anthropic(stack, scenario, base_url, stream)
        else:
            _bedrock(scenario, base_url, stream)


if __name__ == "__main__":
    stack = sys.argv[1]
    emit = {"OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT": "true"} if stack in EMIT_EVENT else {}
    sys.exit(main(sys.argv[1:], {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": MODES[stack], **emit,
    }, run))  # fmt: skip
