"""Semantic Kernel Python 1.19 and later, recorded with the real OTel SDK in the shapes it
exports (microsoft/semantic-kernel `python/semantic_kernel/utils/telemetry/`), decoded and
assembled into turns.

Its agent span (`invoke_agent`) carries the tool definitions (OpenAI-nested) and its own
input and output as OpenAI-form messages; its `chat` spans carry no content: each model
call's messages are the older per-message events, logged through Python `logging` with
`event.name` as an attribute and the JSON text of the whole body as the message, which the
OTel logging handler exports as a string body (`model_diagnostics/decorators.py`). The
committed real export is `tests/fixtures/stacks/semantic-kernel/`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of

SYSTEM = "You are a weather assistant."
REQUEST = "What's the weather in Paris?"
ANSWER = "It is 18 degrees C and cloudy in Paris."
RESULT = '{"city": "Paris", "temperature": 18}'
CALL = {"id": "call_1", "type": "function",
        "function": {"name": "tools-get_weather", "arguments": '{"city": "Paris"}'}}
TOOLS = [{"type": "function", "function": {
    "name": "tools-get_weather", "description": "Get the weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


def _j(value: Any) -> str:
    return json.dumps(value)


def _sk_log(r: Any, event: str, body: dict[str, Any], index: int | None = None) -> None:
    """One Semantic Kernel message log record: no event name field, a string body."""
    attributes: dict[str, Any] = {"event.name": event, "gen_ai.system": "openai"}
    if index is not None:
        attributes["CHAT_MESSAGE_INDEX"] = index
    r.logger.emit(body=_j(body), attributes=attributes, context=_current())


def _current() -> Any:
    from opentelemetry import context

    return context.get_current()


def _sk_chat(r: Any, history: list[dict[str, Any]], choice: dict[str, Any], tokens: int) -> None:
    with r.span("chat gpt-4o-mini", {
        "gen_ai.operation.name": "chat", "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": tokens,
        "gen_ai.usage.output_tokens": 5,
    }):
        roles = {"system": "gen_ai.system.message", "user": "gen_ai.user.message",
                 "assistant": "gen_ai.assistant.message", "tool": "gen_ai.tool.message"}
        for i, message in enumerate(history):
            _sk_log(r, roles[message["role"]], message, i)
        _sk_log(r, "gen_ai.choice", {"message": choice, "finish_reason": "stop"})


def test_semantic_kernel_agent_turn_from_its_log_records(tmp_path: Path) -> None:
    """The request, instructions, call and answer come from the JSON text bodies; the
    execution span (the plugin-qualified name) is the call the model asked for."""
    system = {"role": "system", "content": SYSTEM, "name": "weather"}
    user = {"role": "user", "content": REQUEST}
    asked = {"role": "assistant", "tool_calls": [CALL]}
    told = {"role": "tool", "content": RESULT, "tool_call_id": "call_1"}

    def record(r: Any) -> None:
        with r.span("invoke_agent weather", {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather",
            "gen_ai.tool.definitions": _j(TOOLS), "gen_ai.input.messages": "[]",
            "gen_ai.output.messages": _j([{"role": "assistant", "content": ANSWER,
                                           "name": "weather"}]),
        }), r.span("AutoFunctionInvocationLoop", {"sk.available_functions": "tools-get_weather"}):
            _sk_chat(r, [system, user], asked, 40)
            with r.span("execute_tool tools-get_weather", {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "tools-get_weather",
                "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": '{"city": "Paris"}',
                "gen_ai.tool.call.result": RESULT,
            }):
                pass
            _sk_chat(r, [system, user, asked, told], {"role": "assistant", "content": ANSWER}, 60)

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.system_instructions, turn.final_answer, turn.status) == (
        REQUEST, SYSTEM, ANSWER, "ok")
    assert [(c.name, c.call_id, json.loads(c.arguments), c.result, c.status)
            for c in turn.calls] == [
        ("tools-get_weather", "call_1", {"city": "Paris"}, RESULT, "ok")]
    assert [(t.name, t.description) for t in turn.tools] == [
        ("tools-get_weather", "Get the weather.")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 100, 10)


def test_a_json_text_is_the_body_only_when_it_names_the_event_s_role(tmp_path: Path) -> None:
    """A user who typed a JSON object said that text: a string body is read as the event's
    body only when it is a message of the event's own role."""
    typed = _j({"role": "assistant", "content": "not me"})

    def record(r: Any) -> None:
        with r.span("chat gpt-4o-mini", {"gen_ai.operation.name": "chat",
                                         "gen_ai.request.model": "gpt-4o-mini"}):
            r.logger.emit(body=typed, attributes={"event.name": "gen_ai.user.message"},
                          context=_current())
            r.log("gen_ai.choice", {"index": 0, "message": {"content": "Fine."}})

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (typed, "Fine.")
