"""OpenInference's Haystack spans: a generator's run as an LLM span whose `input.value` /
`output.value` hold `ChatMessage` and `Tool` dataclass reprs (JSON `default=str`), read by
`turnscore.ingest.conventions.haystack` (the recorded stack: `haystack-openinference`)."""

from __future__ import annotations

import json

from tests.ingest.test_decode import raw_span
from turnscore.ingest.decode import decode_span
from turnscore.ingest.model import PartType, SpanKind

SYSTEM = "ChatMessage(_role=<ChatRole.SYSTEM: 'system'>, _content=[TextContent(text='Be brief.')], _name=None, _meta={})"  # noqa: E501
USER = "ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='Is 2 < 3? Use <calc>.')], _name=None, _meta={})"  # noqa: E501
CALL = "ToolCall(tool_name='calculator', arguments={'expression': '2 - -3'}, id='call_1', extra=None)"  # noqa: E501
ASKED = f"ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[{CALL}], _name=None, _meta={{'model': 'gpt-4o-mini', 'finish_reason': 'tool_calls', 'usage': {{'prompt_tokens': 9, 'completion_tokens': -0}}}})"  # noqa: E501
RESULT = f"ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result='Error: bad <input>', origin={CALL}, error=True)], _name=None, _meta={{}})"  # noqa: E501
FINAL = "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[TextContent(text='It failed.')], _name=None, _meta={'model': 'gpt-4o-mini', 'created': datetime.datetime(2026, 1, 2)})"  # noqa: E501
TOOL = "Tool(name='calculator', description='Evaluate.', parameters={'type': 'object', 'properties': {'expression': {'type': 'string'}}}, function=<function calculator at 0x7f00aa>, outputs_to_string=None)"  # noqa: E501


def _decoded(inputs: dict, outputs: dict):  # type: ignore[no-untyped-def]
    span, error = decode_span(raw_span(name="OpenAIChatGenerator.run", attributes={
        "openinference.span.kind": "LLM", "input.mime_type": "application/json",
        "input.value": json.dumps(inputs), "output.value": json.dumps(outputs),
        "llm.model_name": "gpt-4o-mini-2024-07-18",
    }))  # fmt: skip
    assert error is None
    return span


def test_generator_reprs_are_the_conversation() -> None:
    span = _decoded({"messages": [SYSTEM, USER, ASKED, RESULT], "tools": [TOOL]},
                    {"replies": [FINAL]})  # fmt: skip
    assert span.kind is SpanKind.LLM and "haystack" in span.convention
    roles = [m.role for m in span.input_messages or ()]
    assert roles == ["system", "user", "assistant", "tool"]
    assert span.input_messages[1].parts[0].text == "Is 2 < 3? Use <calc>."
    [call] = span.input_messages[2].parts
    assert (call.type, call.call_id, call.name) == (
        PartType.TOOL_CALL, "call_1", "calculator")
    assert json.loads(call.arguments or "") == {"expression": "2 - -3"}
    [result] = span.input_messages[3].parts
    assert (result.call_id, result.is_error) == ("call_1", True)
    assert result.text == "Error: bad <input>"
    assert [(t.name, t.description) for t in span.tool_definitions or ()] == [
        ("calculator", "Evaluate.")]
    assert span.output_messages[0].parts[0].text == "It failed."
    assert span.system_instructions == "Be brief."


def test_pre_2_9_messages_and_other_spans() -> None:
    """Haystack before 2.9: `content` / `role` fields, a string content."""
    old = "ChatMessage(content='Hello', role=<ChatRole.USER: 'user'>, name=None, meta={})"
    span = _decoded({"messages": [old]}, {"replies": [
        "ChatMessage(content='Hi.', role=<ChatRole.ASSISTANT: 'assistant'>, name=None, meta={})"]})
    assert [(m.role, m.parts[0].text) for m in span.input_messages or ()] == [("user", "Hello")]
    assert span.output_messages[0].parts[0].text == "Hi."
    # Another instrumentation's LLM span with plain JSON messages is not Haystack's.
    other, _ = decode_span(raw_span(attributes={
        "openinference.span.kind": "LLM",
        "input.value": json.dumps({"messages": [{"role": "user", "content": "x"}]})}))
    assert "haystack" not in other.convention
