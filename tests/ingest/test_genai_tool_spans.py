"""OTel GenAI tool spans in the forms instrumentations really write, recorded with the real
OTel SDK (the convention fixtures' `Recorder`), decoded and assembled: the Google GenAI SDK
instrumentation's Python-call attributes (`code.function.parameters.*`,
`code.function.return.*`) are a tool execution's arguments and result, and stay out of the
turn's attributes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.ingest.test_stack_forms import REQUEST, turns_of

_CHAT = {"gen_ai.operation.name": "generate_content", "gen_ai.provider.name": "gcp.gen_ai",
         "gen_ai.conversation.id": "s1"}  # fmt: skip


def _messages(*messages: dict[str, Any]) -> str:
    return json.dumps(list(messages))


def _record(tool_attrs: dict[str, Any], arguments: dict[str, Any]) -> Any:
    """A model call asking for one call (no call id, as Gemini may give none), the tool's
    span, and the answer; the second request does not repeat the result, so only the
    tool span has it."""
    asks = {"role": "assistant", "parts": [
        {"type": "tool_call", "name": "get_weather", "arguments": arguments}]}  # fmt: skip
    user = {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}

    def record(r: Any) -> None:
        with r.span("invoke_agent helper", {"gen_ai.operation.name": "invoke_agent",
                                            "gen_ai.conversation.id": "s1"}):  # fmt: skip
            with r.span("generate_content gemini", {
                **_CHAT, "gen_ai.input.messages": _messages(user),
                "gen_ai.output.messages": _messages(asks),
            }):  # fmt: skip
                pass
            with r.span("execute_tool get_weather", {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.description": "Get the weather.", "code.function.name": "get_weather",
                "code.module": "app.tools", **tool_attrs,
            }):  # fmt: skip
                pass
            answer = {"role": "assistant", "parts": [{"type": "text", "content": "Cloudy."}]}
            with r.span("generate_content gemini", {
                **_CHAT, "gen_ai.input.messages": _messages(user),
                "gen_ai.output.messages": _messages(answer),
            }):  # fmt: skip
                pass

    return record


@pytest.mark.parametrize(
    ("tool_attrs", "result"),
    [
        ({"code.function.parameters.city.type": "str",
          "code.function.parameters.city.value": "Paris",
          "code.function.parameters.days.type": "int",
          "code.function.parameters.days.value": 2,
          "code.function.return.type": "dict",
          "code.function.return.value": json.dumps({"temperature": 18})},
         {"temperature": 18}),
        ({"code.function.parameters.city.type": "str",
          "code.function.parameters.city.value": "Paris",
          "code.function.parameters.days.type": "int",
          "code.function.parameters.days.value": 2,
          "code.function.return.type": "str",
          "code.function.return.value": "18 degrees"},
         "18 degrees"),
    ],
)  # fmt: skip
def test_google_genai_python_call_is_the_execution(
    tool_attrs: dict[str, Any], result: Any, tmp_path: Any
) -> None:
    arguments = {"city": "Paris", "days": 2}
    [turn] = turns_of(_record(tool_attrs, arguments), tmp_path)
    [call] = turn.calls
    assert json.loads(call.arguments or "") == arguments
    got = call.result if isinstance(result, str) else json.loads(call.result or "")
    assert got == result
    assert not [k for k in turn.attributes if k.startswith("code.function.")]


def test_a_structured_argument_is_read_back_by_its_type(tmp_path: Any) -> None:
    arguments = {"city": "Paris", "options": {"unit": "celsius"}}
    attrs = {"code.function.parameters.city.type": "str",
             "code.function.parameters.city.value": "Paris",
             "code.function.parameters.options.type": "dict",
             "code.function.parameters.options.value": json.dumps({"unit": "celsius"}),
             "code.function.return.type": "str", "code.function.return.value": "ok"}  # fmt: skip
    [turn] = turns_of(_record(attrs, arguments), tmp_path)
    [call] = turn.calls
    assert json.loads(call.arguments or "") == arguments
    assert call.result == "ok"
