"""The forms the streamed stacks brought (anthropic-*-stream, langgraph-openllmetry-stream,
llamaindex-openllmetry), by their rules rather than their recordings: the scripted server's
Anthropic stream spells its answer, and OpenLLMetry's LlamaIndex `call_tool` step is the
tool's execution, its `ToolCallResult` unwrapped wherever it comes from."""

from __future__ import annotations

import json
from typing import Any

from tests.ingest.instrumented.stacks.wire import anthropic_events
from tests.ingest.test_decode import raw_span
from turnscore.ingest.conventions.messages import unwrap_tool_output
from turnscore.ingest.decode import CONTENT_KEYS, decode_span
from turnscore.ingest.model import SpanKind, ToolExecution

MESSAGE: dict[str, Any] = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
    "content": [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "calculator",
         "input": {"expression": "17 * 23 + 4"}},
    ],
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 40, "output_tokens": 12},
}  # fmt: skip


def test_anthropic_stream_spells_its_message() -> None:
    """Folding the events as a client does gives the message back, usage included."""
    events = list(anthropic_events(MESSAGE))
    assert [n for n, _ in events][:1] + [n for n, _ in events][-2:] == [
        "message_start", "message_delta", "message_stop"]  # fmt: skip
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for name, data in events:
        assert data["type"] == name
        if name == "message_start":
            message = dict(data["message"])
        elif name == "content_block_start":
            message["content"].append(dict(data["content_block"]))
        elif name == "content_block_delta":
            block, delta = message["content"][data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
        elif name == "content_block_stop" and data["index"] in partial:
            message["content"][data["index"]]["input"] = json.loads(partial[data["index"]])
        elif name == "message_delta":
            message.update(data["delta"])
            message["usage"] = message["usage"] | data["usage"]
    assert message == MESSAGE


TOOL_OUTPUT = {"blocks": [{"block_type": "text", "text": "Unknown city: Atlantis"}],
               "tool_name": "get_weather", "raw_input": {"city": "Atlantis"},
               "raw_output": "Unknown city: Atlantis", "is_error": True}  # fmt: skip
CALL_RESULT = {"tool_name": "get_weather", "tool_kwargs": {"city": "Atlantis"},
               "tool_id": "call_7", "tool_output": TOOL_OUTPUT, "return_direct": False}  # fmt: skip


def test_tool_call_result_is_its_output_with_the_call_id() -> None:
    assert unwrap_tool_output(json.dumps(CALL_RESULT)) == ("Unknown city: Atlantis", "call_7", True)
    assert unwrap_tool_output(json.dumps(TOOL_OUTPUT)) == ("Unknown city: Atlantis", None, True)
    # Not a ToolOutput under tool_output: the object is the result as it is.
    other = {"tool_id": "x", "tool_output": "plain"}
    assert unwrap_tool_output(json.dumps(other))[1] is None


def _task(attributes: dict[str, Any]) -> Any:
    base = {"traceloop.span.kind": "task", "traceloop.entity.name": "BaseWorkflowAgent.task"}
    span, error = decode_span(raw_span(name="BaseWorkflowAgent.task",
                                       attributes=base | attributes))  # fmt: skip
    assert error is None
    return span


def test_openllmetry_llamaindex_call_tool_step_is_the_execution() -> None:
    """dispatcher_wrapper.py's `call_tool` task span: tool.name, tool.arguments and the
    ToolCallResult as entity output."""
    span = _task({"tool.name": "get_weather", "tool.arguments": '{"city": "Atlantis"}',
                  "traceloop.entity.output": json.dumps(CALL_RESULT)})  # fmt: skip
    assert span.kind is SpanKind.TOOL
    assert span.tool_execution == ToolExecution(
        "get_weather", "call_7", '{"city":"Atlantis"}', "Unknown city: Atlantis",
        "Unknown city: Atlantis",
    )
    assert "tool.arguments" in CONTENT_KEYS  # content, never a turn attribute


def test_openllmetry_task_without_a_tool_stays_a_task() -> None:
    span = _task({"traceloop.entity.output": json.dumps({"result": 1})})
    assert span.kind is SpanKind.CHAIN
    assert span.tool_execution is None
