"""Pydantic Logfire's LLM-provider instrumentations (`logfire.instrument_openai()`,
`instrument_anthropic()`), recorded with the real OTel SDK in the shapes Logfire writes
(pydantic/logfire `logfire/_internal/integrations/llm_providers/openai.py`,
`anthropic.py`, `llm_provider.py`, read at 4.41): the span is named by its message
template, every dict attribute is JSON text declared in `logfire.json_schema`, the request
body is `request_data`, the answer `response_data`; a stream's answer is a log (a span)
written when the stream ends; the Responses API lists its items in `events`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.test_stack_forms import turns_of
from turnscore.ingest.turn import Call, Turn

REQUEST = "What is 17 * 23 + 4?"
ANSWER = "17 * 23 + 4 = 395."
SYSTEM = "You are terse."
ARGS = {"expression": "17 * 23 + 4"}
SCHEMA = {"type": "object", "properties": {"expression": {"type": "string"}},
          "required": ["expression"]}
CALC = {"type": "function", "function": {"name": "calculator",
                                         "description": "Evaluate arithmetic.",
                                         "parameters": SCHEMA}}
CHAT = "Chat Completion with {request_data[model]!r}"
STREAM = "streaming response from {request_data[model]!r} took {duration:.2f}s"


def _j(value: Any) -> str:
    return json.dumps(value)


def _logfire(template: str, values: dict[str, Any], span_type: str = "span") -> dict[str, Any]:
    """Attributes as Logfire writes them: dicts and lists as JSON text, declared in the
    JSON schema; the template as span name and `logfire.msg_template`."""
    attrs: dict[str, Any] = {"logfire.msg_template": template, "logfire.msg": template,
                             "logfire.span_type": span_type, "logfire.tags": ("LLM",)}
    schema: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict | list):
            attrs[key] = _j(value)
            schema[key] = {"type": "object" if isinstance(value, dict) else "array"}
        else:
            attrs[key] = value
            schema[key] = {}
    attrs["logfire.json_schema"] = _j({"type": "object", "properties": schema})
    return attrs


def _message(content: str | None, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An OpenAI `ChatCompletionMessage` dumped as Logfire dumps it."""
    return {"content": content, "refusal": None, "role": "assistant", "annotations": None,
            "audio": None, "function_call": None, "tool_calls": calls}


def _tool_call(call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": "calculator", "arguments": _j(arguments)}}


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"completion_tokens": completion, "prompt_tokens": prompt,
            "total_tokens": prompt + completion, "completion_tokens_details": None,
            "prompt_tokens_details": None}


HISTORY = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": REQUEST}]
AFTER_CALL = [*HISTORY,
              {"role": "assistant", "content": None,
               "tool_calls": [_tool_call("call_1", ARGS)]},
              {"role": "tool", "tool_call_id": "call_1", "content": "395"}]


def _openai(request: dict[str, Any], response: dict[str, Any] | None, version: str,
            response_id: str | None = None, stream_log: bool = False) -> dict[str, Any]:
    """A Logfire OpenAI chat span (or stream log) of `version`: '3' (request and response
    data, model, usage attributes) or '4' (4.19+: also operation, provider, tool
    definitions, response id)."""
    values: dict[str, Any] = {"request_data": request, "gen_ai.request.model": request["model"],
                              "gen_ai.system": "openai", "async": False}
    if version == "4":
        values.update({"gen_ai.provider.name": "openai", "gen_ai.operation.name": "chat"})
        if "tools" in request:
            values["gen_ai.tool.definitions"] = _j(request["tools"])  # json.dumps'd string
    if stream_log:
        values["duration"] = 1.0
    if response is not None:
        values["response_data"] = response
        usage = response.get("usage") or {}
        values["gen_ai.usage.input_tokens"] = usage.get("prompt_tokens")
        values["gen_ai.usage.output_tokens"] = usage.get("completion_tokens")
        values["gen_ai.response.model"] = "gpt-4o-2024-08-06"
        if version == "4" and response_id:
            values["gen_ai.response.id"] = response_id
    return _logfire(STREAM if stream_log else CHAT, values, "log" if stream_log else "span")


def _request(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"messages": messages, "model": "gpt-4o", "tools": [CALC], **extra}


def _no_content_leak(turn: Turn) -> None:
    attributes = json.loads(turn.attributes)
    assert not {"request_data", "response_data", "events"} & set(attributes)
    assert REQUEST not in turn.attributes and ANSWER not in turn.attributes


def _calculator_turn(turn: Turn, llm_calls: int = 2) -> None:
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert turn.system_instructions == SYSTEM
    [tool] = turn.tools
    assert (tool.name, tool.description) == ("calculator", "Evaluate arithmetic.")
    assert json.loads(tool.parameters or "null") == SCHEMA
    [call] = turn.calls
    assert (call.call_id, call.name, call.result, call.status) == (
        "call_1", "calculator", "395", "ok")
    assert json.loads(call.arguments or "null") == ARGS
    assert turn.llm_calls == llm_calls
    _no_content_leak(turn)


@contextmanager
def _detached() -> Iterator[None]:
    """What follows starts a trace of its own (a raw client call made outside any span)."""
    from opentelemetry import context, trace

    token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
    try:
        yield
    finally:
        context.detach(token)


# --- OpenAI chat completions ---------------------------------------------------------


@pytest.mark.parametrize("version", ["3", "4"])
def test_tool_loop_under_a_user_span(tmp_path: Path, version: str) -> None:
    """A hand-written agent loop inside a `logfire.span`: two chat completions and the
    user's own span around the tool (Logfire instruments no tool execution for a raw
    client, so the result is the one the second request sends back)."""

    def record(r: Any) -> None:
        with r.span("agent loop", _logfire("agent loop", {})):
            with r.span(CHAT, _openai(_request(HISTORY), {
                "message": _message(None, [_tool_call("call_1", ARGS)]),
                "usage": _usage(20, 9)}, version, "chatcmpl-1")):
                pass
            with r.span("running {tool}", _logfire("running {tool}", {"tool": "calculator"})):
                pass
            with r.span(CHAT, _openai(_request(AFTER_CALL), {
                "message": _message(ANSWER), "usage": _usage(40, 8)}, version, "chatcmpl-2")):
                pass

    [turn] = turns_of(record, tmp_path)
    _calculator_turn(turn)
    assert (turn.input_tokens, turn.output_tokens) == (60, 17)
    assert turn.model == "gpt-4o-2024-08-06"
    assert "logfire" in turn.convention.split(",")


def test_raw_calls_each_in_a_trace_of_their_own_are_one_turn(tmp_path: Path) -> None:
    """Without an enclosing span each call is a parentless trace: the second continues the
    first's history, so both are steps of one turn."""

    def record(r: Any) -> None:
        for messages, response in (
            (HISTORY, {"message": _message(None, [_tool_call("call_1", ARGS)]),
                       "usage": _usage(20, 9)}),
            (AFTER_CALL, {"message": _message(ANSWER), "usage": _usage(40, 8)}),
        ):
            with _detached(), r.span(CHAT, _openai(_request(messages), response, "4")):
                pass

    [turn] = turns_of(record, tmp_path)
    _calculator_turn(turn)


def test_the_probe_shape_gives_its_turn(tmp_path: Path) -> None:
    """The shape first reported (no operation name, the formatted message as span name):
    a turn with its request, tool and answer."""
    req = {"messages": [{"role": "user", "content": "What is 2+2?"}], "model": "gpt-4o",
           "tools": [{"type": "function", "function": {"name": "calc", "description": "d",
                                                       "parameters": {"type": "object"}}}]}
    resp = {"message": {"role": "assistant", "content": "4", "tool_calls": None},
            "usage": {"prompt_tokens": 5}}

    def record(r: Any) -> None:
        with r.span("Chat Completion with 'gpt-4o'", {
            "gen_ai.system": "openai", "request_data": _j(req), "response_data": _j(resp),
            "gen_ai.request.model": "gpt-4o",
            "logfire.json_schema": _j({"type": "object", "properties": {
                "request_data": {"type": "object"}, "response_data": {"type": "object"}}}),
            "logfire.msg_template": CHAT, "logfire.span_type": "span",
        }):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == ("What is 2+2?", "4", 1)
    assert [t.name for t in turn.tools] == ["calc"]
    assert (turn.input_tokens, turn.model) == (5, "gpt-4o")


def test_streamed_calls_are_reported_once_by_their_log(tmp_path: Path) -> None:
    """A streamed call: the request span closes when the stream opens (request only), and
    the log written when it ends carries request, combined answer and usage, under the
    request's parent. One model call each, tool call and answer from the logs."""

    def record(r: Any) -> None:
        with r.span("agent loop", _logfire("agent loop", {})):
            for messages, response in (
                (HISTORY, {"message": {**_message(None, [{
                    **_tool_call("call_1", ARGS), "index": 0}]), "parsed": None},
                    "usage": _usage(20, 9)}),
                (AFTER_CALL, {"message": {**_message(ANSWER), "parsed": None},
                              "usage": _usage(40, 8)}),
            ):
                request = _request(messages, stream=True,
                                   stream_options={"include_usage": True})
                with r.span(CHAT, _openai(request, None, "4")):
                    pass
                with r.span(STREAM, _openai(request, response, "4", stream_log=True)):
                    pass

    [turn] = turns_of(record, tmp_path)
    _calculator_turn(turn)
    assert (turn.input_tokens, turn.output_tokens) == (60, 17)


def test_a_raw_stream_and_its_log_in_two_traces_are_one_call(tmp_path: Path) -> None:
    """Outside any span the request span and the log are each a trace of their own: one
    turn, one call, the answer being the streamed text (older chat streams, and every
    Anthropic and completions stream, give `combined_chunk_content`)."""
    request = {"messages": HISTORY, "model": "gpt-4o", "stream": True}

    def record(r: Any) -> None:
        with _detached(), r.span(CHAT, _openai(request, None, "3")):
            pass
        with _detached(), r.span(STREAM, _openai(request, {
                "combined_chunk_content": ANSWER, "chunk_count": 3}, "3", stream_log=True)):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 1)
    _no_content_leak(turn)


def test_an_embedding_is_no_step(tmp_path: Path) -> None:
    """`Embedding Creation with ...` carries `request_data` with `input` but no messages:
    no model call of the turn."""

    def record(r: Any) -> None:
        with r.span("agent loop", _logfire("agent loop", {})):
            with r.span("Embedding Creation with {request_data[model]!r}", _logfire(
                "Embedding Creation with {request_data[model]!r}",
                {"request_data": {"input": REQUEST, "model": "text-embedding-3-small"},
                 "response_data": {"usage": {"prompt_tokens": 6, "total_tokens": 6}},
                 "gen_ai.operation.name": "embeddings"})):
                pass
            with r.span(CHAT, _openai({"messages": HISTORY, "model": "gpt-4o"},
                                      {"message": _message(ANSWER), "usage": _usage(9, 4)},
                                      "4")):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 1)
    assert (turn.input_tokens, turn.output_tokens) == (9, 4)


# --- OpenAI Responses API ----------------------------------------------------------------


def test_responses_api_items_in_events(tmp_path: Path) -> None:
    """`Responses API with ...`: `request_data` is only `{model, stream}`; `events` lists the
    input items as messages, then the output items (role assistant); tools only in
    `gen_ai.tool.definitions` (Responses' flat form)."""
    flat_tool = {"type": "function", "name": "calculator",
                 "description": "Evaluate arithmetic.", "parameters": SCHEMA}
    inputs = [{"event.name": "gen_ai.system.message", "content": SYSTEM, "role": "system"},
              {"event.name": "gen_ai.user.message", "content": REQUEST, "role": "user"}]
    call = {"event.name": "gen_ai.assistant.message", "role": "assistant",
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "calculator", "arguments": _j(ARGS)}}]}
    result = {"event.name": "gen_ai.tool.message", "role": "tool", "id": "call_1",
              "content": "395", "name": "calculator"}
    reasoning = {"event.name": "gen_ai.unknown", "role": "assistant",
                 "content": "reasoning\n\nSee JSON for details", "data": {"type": "reasoning"}}
    answer = {"event.name": "gen_ai.assistant.message", "content": ANSWER, "role": "assistant"}

    def span(events: list[dict[str, Any]], tokens: tuple[int, int]) -> dict[str, Any]:
        return _logfire("Responses API with {gen_ai.request.model!r}", {
            "request_data": {"model": "gpt-4.1", "stream": False}, "events": events,
            "gen_ai.request.model": "gpt-4.1", "gen_ai.system": "openai",
            "gen_ai.operation.name": "chat", "gen_ai.tool.definitions": _j([flat_tool]),
            "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1]})

    def record(r: Any) -> None:
        with r.span("agent loop", _logfire("agent loop", {})):
            with r.span("Responses API with {gen_ai.request.model!r}",
                        span([*inputs, reasoning, call], (30, 12))):
                pass
            with r.span("Responses API with {gen_ai.request.model!r}",
                        span([*inputs, call, result, answer], (50, 9))):
                pass

    [turn] = turns_of(record, tmp_path)
    _calculator_turn(turn)
    assert (turn.input_tokens, turn.output_tokens) == (80, 21)


# --- Anthropic -----------------------------------------------------------------------------


def test_anthropic_messages(tmp_path: Path) -> None:
    """`Message with ...`: Anthropic's request body (top-level `system`, tools with
    `input_schema`, `tool_use` / `tool_result` blocks, the result in a user message that is
    no new request); the answer rewritten as an OpenAI-style message whose tool-call
    arguments are the block's dump `{"input": {...}}`."""
    tools = [{"name": "calculator", "description": "Evaluate arithmetic.",
              "input_schema": SCHEMA}]
    first = [{"role": "user", "content": REQUEST}]
    second = [*first,
              {"role": "assistant", "content": [
                  {"type": "tool_use", "id": "call_1", "name": "calculator", "input": ARGS}]},
              {"role": "user", "content": [
                  {"type": "tool_result", "tool_use_id": "call_1", "content": "395"}]}]

    def span(messages: list[dict[str, Any]], message: dict[str, Any],
             tokens: tuple[int, int]) -> dict[str, Any]:
        return _logfire("Message with {request_data[model]!r}", {
            "request_data": {"max_tokens": 1024, "messages": messages,
                             "model": "claude-sonnet-4-5", "system": SYSTEM, "tools": tools},
            "gen_ai.system": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
            "gen_ai.operation.name": "chat", "gen_ai.tool.definitions": _j(tools),
            "response_data": {"message": message, "usage": {
                "input_tokens": tokens[0], "output_tokens": tokens[1],
                "cache_creation_input_tokens": None, "cache_read_input_tokens": None}}})

    def record(r: Any) -> None:
        with r.span("agent loop", _logfire("agent loop", {})):
            with r.span("Message with {request_data[model]!r}", span(first, {
                "role": "assistant", "content": "Let me calculate.",
                "tool_calls": [{"id": "call_1", "function": {
                    "arguments": _j({"input": ARGS}), "name": "calculator"}}]}, (25, 11))):
                pass
            with r.span("Message with {request_data[model]!r}", span(second, {
                    "role": "assistant", "content": ANSWER}, (45, 7))):
                pass

    [turn] = turns_of(record, tmp_path)
    _calculator_turn(turn)
    assert (turn.input_tokens, turn.output_tokens) == (70, 18)
    assert turn.model == "claude-sonnet-4-5"


# --- Pydantic AI with Logfire's OpenAI instrumentation underneath --------------------------


def _pydantic_chat(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]],
                   response_id: str, tokens: tuple[int, int]) -> dict[str, Any]:
    """Pydantic AI's own chat span (as in tests/fixtures/corpus/pydantic-ai)."""
    return _logfire("chat gpt-4o", {
        "gen_ai.operation.name": "chat", "gen_ai.agent.name": "calc_agent",
        "gen_ai.conversation.id": "pai-1", "gen_ai.provider.name": "openai",
        "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
        "model_request_parameters": {"function_tools": [{
            "name": "calculator", "description": "Evaluate arithmetic.",
            "parameters_json_schema": SCHEMA}]},
        "gen_ai.tool.definitions": [{"type": "function", "name": "calculator",
                                     "description": "Evaluate arithmetic.",
                                     "parameters": SCHEMA}],
        "gen_ai.input.messages": inputs, "gen_ai.output.messages": outputs,
        "gen_ai.system_instructions": [{"type": "text", "content": SYSTEM}],
        "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1],
        "gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.response.id": response_id,
    })


PAI_USER = {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}
PAI_CALL = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1",
                                            "name": "calculator", "arguments": _j(ARGS)}],
            "finish_reason": "tool_call"}
PAI_RESULT = {"role": "user", "parts": [{"type": "tool_call_response", "id": "call_1",
                                         "name": "calculator", "result": "395"}]}
PAI_ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}],
              "finish_reason": "stop"}


@contextmanager
def _pydantic_agent(r: Any) -> Iterator[None]:
    with r.span("invoke_agent calc_agent", _logfire("calc_agent run", {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "calc_agent",
        "agent_name": "calc_agent", "model_name": "gpt-4o", "gen_ai.conversation.id": "pai-1",
        "pydantic_ai.all_messages": [PAI_USER, PAI_CALL, PAI_RESULT, PAI_ANSWER],
        "final_result": ANSWER, "gen_ai.aggregated_usage.input_tokens": 60,
        "gen_ai.aggregated_usage.output_tokens": 17,
    })):
        yield


def _pydantic_tool(r: Any) -> None:
    with r.span("execute_tool calculator", _logfire("running tool: calculator", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calculator",
        "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": ARGS,
        "gen_ai.tool.call.result": "395"})):
        pass


@pytest.mark.parametrize("version", ["3", "4"])
def test_pydantic_ai_with_logfire_openai_underneath_is_one_call_per_call(
    tmp_path: Path, version: str
) -> None:
    """`logfire.instrument_pydantic_ai()` with `instrument_openai()`: each Pydantic AI chat
    span has Logfire's `Chat Completion` span below it for the same request (sharing the
    response id from 4.21): one model call each, usage once, the tool call once."""

    def record(r: Any) -> None:
        with _pydantic_agent(r):
            with (
                r.span("chat gpt-4o", _pydantic_chat([PAI_USER], [PAI_CALL], "chatcmpl-1",
                                                     (20, 9))),
                r.span(CHAT, _openai(_request(HISTORY), {
                    "message": _message(None, [_tool_call("call_1", ARGS)]),
                    "usage": _usage(20, 9)}, version, "chatcmpl-1")),
            ):
                pass
            _pydantic_tool(r)
            with (
                r.span("chat gpt-4o", _pydantic_chat([PAI_USER, PAI_CALL, PAI_RESULT],
                                                     [PAI_ANSWER], "chatcmpl-2", (40, 8))),
                r.span(CHAT, _openai(_request(AFTER_CALL), {
                    "message": _message(ANSWER), "usage": _usage(40, 8)}, version,
                    "chatcmpl-2")),
            ):
                pass

    [turn] = turns_of(record, tmp_path)
    _calculator_turn(turn)
    assert (turn.input_tokens, turn.output_tokens) == (60, 17)
    assert (turn.agent_name, turn.conversation_id) == ("calc_agent", "pai-1")
    assert [c.step for c in turn.calls] == [0]


def test_pydantic_ai_streaming_with_logfire_openai_underneath(tmp_path: Path) -> None:
    """Pydantic AI streaming: below its chat span, Logfire's request span (stream) and the
    log it writes when the stream ends. The request span is no call, so the log is the
    chat span's one report: two calls, not four."""

    def record(r: Any) -> None:
        with _pydantic_agent(r):
            for inputs, outputs, messages, response, rid, tokens in (
                ([PAI_USER], [PAI_CALL], HISTORY,
                 {"message": _message(None, [_tool_call("call_1", ARGS)]),
                  "usage": _usage(20, 9)}, "chatcmpl-1", (20, 9)),
                ([PAI_USER, PAI_CALL, PAI_RESULT], [PAI_ANSWER], AFTER_CALL,
                 {"message": _message(ANSWER), "usage": _usage(40, 8)}, "chatcmpl-2", (40, 8)),
            ):
                request = _request(messages, stream=True)
                with r.span("chat gpt-4o", _pydantic_chat(inputs, outputs, rid, tokens)):
                    with r.span(CHAT, _openai(request, None, "4")):
                        pass
                    with r.span(STREAM, _openai(request, response, "4", stream_log=True)):
                        pass
                if rid == "chatcmpl-1":
                    _pydantic_tool(r)

    [turn] = turns_of(record, tmp_path)
    _calculator_turn(turn)
    assert (turn.input_tokens, turn.output_tokens) == (60, 17)
    assert turn.calls == (Call("calculator", "call_1", turn.calls[0].arguments, "395",
                               step=0, started_at=turn.calls[0].started_at,
                               duration_ms=turn.calls[0].duration_ms),)


def test_semconv_latest_only_stream_under_pydantic_ai(tmp_path: Path) -> None:
    """`instrument_openai(version='latest')` (4.23+): `request_data` is only the model, the
    messages are `gen_ai.input.messages` / `output.messages` (otel_genai's). The stream's
    request span (no answer, no usage) is still no call: one call below the chat span."""
    user = {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}
    answer = {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}],
              "finish_reason": "stop"}
    common = {"request_data": {"model": "gpt-4o"}, "gen_ai.request.model": "gpt-4o",
              "gen_ai.system": "openai", "gen_ai.operation.name": "chat",
              "gen_ai.input.messages": [user]}

    def record(r: Any) -> None:
        with _pydantic_agent(r), r.span("chat gpt-4o", _pydantic_chat(
                [user], [answer], "chatcmpl-9", (9, 4))):
            with r.span(CHAT, _logfire(CHAT, common)):
                pass
            with r.span(STREAM, _logfire(STREAM, {
                    **common, "duration": 1.0, "gen_ai.output.messages": [answer],
                    "gen_ai.usage.input_tokens": 9, "gen_ai.usage.output_tokens": 4}, "log")):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 1)
    assert (turn.input_tokens, turn.output_tokens) == (9, 4)
