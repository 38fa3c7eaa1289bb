"""The OpenAI Agents SDK under the official OTel bridge (opentelemetry-instrumentation-openai-
agents-v2 0.1.0), recorded with the real OTel SDK in the shapes it exports, decoded and
assembled into turns.

Its chat spans carry `gen_ai.input.messages` / `gen_ai.output.messages` in the current
form, except that an output item with no text (a chat completion that only asks for tools)
is written as `str(item)`: the repr of the message dump, inside a text part
(`span_processor.py`, `_normalize_output_messages_to_role_parts`). Its `execute_tool`
spans have no call id. The committed real export is
`tests/fixtures/stacks/openai-agents-otel/`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of

REQUEST = "What's the weather in Paris?"
ANSWER = "It is 18 degrees C in Paris."
ARGS = '{"city": "Paris"}'
RESULT = "{'city': 'Paris', 'temperature': 18}"
DUMP = ("{'content': None, 'refusal': None, 'role': 'assistant', 'annotations': None, "
        "'audio': None, 'function_call': None, 'tool_calls': [{'id': 'call_1', 'function': "
        f"{{'arguments': '{ARGS}', 'name': 'get_weather'}}, 'type': 'function'}}]}}")


def _j(value: Any) -> str:
    return json.dumps(value)


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _chat(r: Any, inputs: list[dict[str, Any]], output: str) -> None:
    with r.span("chat gpt-4o-mini", {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.input.messages": _j(inputs),
        "gen_ai.output.messages": _j([_text("assistant", output)]),
    }):
        pass


def test_a_dumped_tool_call_output_is_the_call(tmp_path: Path) -> None:
    """The first model call's output is the repr of its message: the call it asked for,
    with its id, which the result the next call was told answers."""
    user = _text("user", REQUEST)
    asked = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": ARGS}]}
    told = {"role": "tool", "parts": [
        {"type": "text", "content": RESULT},
        {"type": "tool_call_response", "id": "call_1", "result": RESULT}]}

    def record(r: Any) -> None:
        with r.span("invoke_agent weather", {"gen_ai.operation.name": "invoke_agent",
                                             "gen_ai.agent.name": "weather"}):
            _chat(r, [user], DUMP)
            with r.span("execute_tool get_weather", {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": ARGS,
                "gen_ai.tool.call.result": '{"city":"Paris","temperature":18}',
            }):
                pass
            _chat(r, [user, asked, told], ANSWER)

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 2)
    assert [(c.name, c.call_id, json.loads(c.arguments), c.result, c.status)
            for c in turn.calls] == [("get_weather", "call_1", {"city": "Paris"}, RESULT, "ok")]


def test_an_answer_that_quotes_a_dict_is_the_answer(tmp_path: Path) -> None:
    """Only an assistant message's dump (its role and its calls) is read back."""
    quoted = "{'role': 'assistant', 'content': 'hi'}"

    def record(r: Any) -> None:
        _chat(r, [_text("user", REQUEST)], quoted)

    (turn,) = turns_of(record, tmp_path)
    assert (turn.final_answer, turn.calls) == (quoted, ())
