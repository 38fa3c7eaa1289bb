"""JVM stacks, surveyed from their source and recorded with the real OTel SDK (the convention
fixtures' `Recorder`) in the shapes that source emits, decoded and assembled.

None of them is a recorded stack (`test_stacks.py`): the JVM libraries come from Maven
Central, which this machine does not reach. What the Java OTel SDK does differently from
Python's here, the recorder does too: a log record emitted without a timestamp has only its
observed time, and the GenAI events name themselves in the `event.name` attribute.

Already right, pinned: the OTel Java instrumentation of the OpenAI Java SDK
(open-telemetry/opentelemetry-java-instrumentation `instrumentation/openai/openai-java-1.1/
library/.../ChatCompletionEventsHelper.java`, `StreamedMessageBuffer.java`): the per-message
events as log records, `gen_ai.choice`'s message without a role.

Fixed (a convention of its own, `conventions/spring_ai.py`): Spring AI's tool calls, which
only its `tool_call` spans record (`spring.ai.tool.call.*`), were lost.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.trace import SpanKind

from tests.ingest.test_stack_forms import turns_of

REQUEST = "What's the weather in Paris?"
ANSWER = "It is 18 degrees C in Paris."
SYSTEM = "Be terse."
ARGUMENTS = '{"city":"Paris"}'
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _j(value: Any) -> str:
    return json.dumps(value)


# --- OTel Java instrumentation of the OpenAI Java SDK ----------------------------------


def _java_event(r: Any, name: str, body: dict[str, Any]) -> None:
    """As `ChatCompletionEventsHelper.newEvent` emits it: the name in the `event.name`
    attribute, no timestamp set (the Java SDK records the observed time only)."""
    r.logger.emit(body=body, attributes={"event.name": name, "gen_ai.system": "openai"},
                  context=otel_context.get_current())


def test_openai_java_events_are_the_tool_loop(tmp_path: Path) -> None:
    """Two chat calls of a tool loop: the request's messages as `gen_ai.*.message` log
    records (a tool message's call id under `id`), the answer as `gen_ai.choice`, whose
    message has no `role` (Java puts only `content` and `tool_calls` in it)."""
    call = {"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": ARGUMENTS}}
    common = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
              "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini"}

    def record(r: Any) -> None:
        with r.span("chat gpt-4o-mini", {**common, "gen_ai.usage.input_tokens": 50,
                                         "gen_ai.usage.output_tokens": 10,
                                         "gen_ai.response.finish_reasons": ["tool_calls"]},
                    kind=SpanKind.CLIENT):
            _java_event(r, "gen_ai.system.message", {"content": SYSTEM})
            _java_event(r, "gen_ai.user.message", {"content": REQUEST})
            _java_event(r, "gen_ai.choice", {"finish_reason": "tool_calls", "index": 0,
                                             "message": {"tool_calls": [call]}})
        with r.span("chat gpt-4o-mini", {**common, "gen_ai.usage.input_tokens": 80,
                                         "gen_ai.usage.output_tokens": 12},
                    kind=SpanKind.CLIENT):
            _java_event(r, "gen_ai.system.message", {"content": SYSTEM})
            _java_event(r, "gen_ai.user.message", {"content": REQUEST})
            _java_event(r, "gen_ai.assistant.message", {"tool_calls": [call]})
            _java_event(r, "gen_ai.tool.message", {"content": "18C, cloudy", "id": "call_1"})
            _java_event(r, "gen_ai.choice", {"finish_reason": "stop", "index": 0,
                                             "message": {"content": ANSWER}})

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert turn.system_instructions == SYSTEM
    assert [(c.name, c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", "call_1", ARGUMENTS, "18C, cloudy", "ok")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 22)
    assert turn.issues == ()


# --- Spring AI ---------------------------------------------------------------------------

_CLIENT = {"gen_ai.operation.name": "framework", "gen_ai.system": "spring_ai",
           "spring.ai.kind": "chat_client", "spring.ai.chat.client.stream": "false",
           "spring.ai.chat.client.tool.names": "get_weather",
           "spring.ai.chat.client.conversation.id": "conv-1"}
_CHAT = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
         "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini"}


def _spring_tool(content: bool, result: str = '"18C, cloudy"') -> dict[str, Any]:
    """`DefaultToolCallingObservationConvention`'s keys, and with content included
    (`ToolCallingContentObservationFilter`) the arguments and the result's text."""
    tool = {"gen_ai.operation.name": "framework", "gen_ai.system": "spring_ai",
            "spring.ai.kind": "tool_call", "spring.ai.tool.definition.name": "get_weather",
            "spring.ai.tool.definition.description": "Weather for a city.",
            "spring.ai.tool.definition.schema": _j(SCHEMA)}
    if content:
        tool |= {"spring.ai.tool.call.arguments": ARGUMENTS,
                 "spring.ai.tool.call.result": result}
    return tool


def test_spring_ai_tool_call_spans_are_the_calls(tmp_path: Path) -> None:
    """Spring AI 2.x with content on: the chat spans' `gen_ai.input.messages` are text only
    (the assistant's tool calls and the tool's result as empty content), the first call's
    output left out (not text); the `tool_call` span between them is the call. Its result
    is the text the model was sent: a String return JSON-encoded, quotes and all."""
    first = {**_CHAT, "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 10,
             "gen_ai.input.messages": _j([{"role": "system", "content": SYSTEM},
                                          {"role": "user", "content": REQUEST}])}
    second = {**_CHAT, "gen_ai.usage.input_tokens": 80, "gen_ai.usage.output_tokens": 12,
              "gen_ai.input.messages": _j([{"role": "system", "content": SYSTEM},
                                           {"role": "user", "content": REQUEST},
                                           {"role": "assistant", "content": ""},
                                           {"role": "tool", "content": ""}]),
              "gen_ai.output.messages": _j([{"role": "assistant", "finish_reason": "stop",
                                             "parts": [{"type": "text", "content": ANSWER}]}])}

    def record(r: Any) -> None:
        with r.span("spring_ai chat_client", _CLIENT):
            with r.span("chat gpt-4o-mini", first, kind=SpanKind.CLIENT):
                pass
            with r.span("tool_call get_weather", _spring_tool(content=True)):
                pass
            with r.span("chat gpt-4o-mini", second, kind=SpanKind.CLIENT):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.system_instructions, turn.conversation_id) == (SYSTEM, "conv-1")
    [tool] = turn.tools
    assert (tool.name, tool.description) == ("get_weather", "Weather for a city.")
    assert json.loads(tool.parameters or "") == SCHEMA
    assert [(c.name, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", ARGUMENTS, '"18C, cloudy"', "ok")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 22)
    assert turn.issues == ()
    assert "spring.ai.tool.call.result" not in json.loads(turn.attributes)


def test_spring_ai_parallel_calls_without_content(tmp_path: Path) -> None:
    """Content off for tools (the default): each `tool_call` span still names its tool; two
    in one step are two calls, in the order they ran."""
    def record(r: Any) -> None:
        with r.span("spring_ai chat_client", _CLIENT):
            with r.span("chat gpt-4o-mini", {**_CHAT, "gen_ai.input.messages": _j(
                    [{"role": "user", "content": REQUEST}])}, kind=SpanKind.CLIENT):
                pass
            for _ in range(2):
                with r.span("tool_call get_weather", _spring_tool(content=False)):
                    pass
            with r.span("chat gpt-4o-mini", {**_CHAT, "gen_ai.output.messages": _j(
                    [{"role": "assistant", "finish_reason": "stop",
                      "parts": [{"type": "text", "content": ANSWER}]}])}, kind=SpanKind.CLIENT):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)
    assert [(c.name, c.arguments, c.result) for c in turn.calls] == [
        ("get_weather", None, None), ("get_weather", None, None)]
