"""A Responses API input is a list of items, and OpenLLMetry's Responses spans replay each
item as a message (opentelemetry-instrumentation-openai 0.62.4, `v1/responses_wrappers.py`):
an answer's text and each of its `function_call` items arrive as assistant messages of their
own, while the span that made that answer records it as one message. Decoded, the replay is
one assistant message again, so it extends the history the answer left (the committed
`openai-responses-openllmetry` recordings: parallel calls stay one turn)."""

from __future__ import annotations

import json

from tests.ingest.test_decode import raw_span
from turnscore.ingest.decode import decode_span
from turnscore.ingest.model import PartType


def _call(cid: str, name: str) -> dict[str, object]:
    return {"role": "assistant",
            "parts": [{"type": "tool_call", "id": cid, "name": name, "arguments": {}}]}  # fmt: skip


def _result(cid: str) -> dict[str, object]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": cid, "response": "x"}]}


def test_tool_call_items_after_an_answer_are_that_answer() -> None:
    said = {"role": "assistant", "parts": [{"type": "text", "content": "Looking."}]}
    user = {"role": "user", "parts": [{"type": "text", "content": "q"}]}
    replay = [user, said, _call("fc_a", "get_weather"), _call("fc_b", "search_docs"),
              _result("call_a"), _result("call_b")]  # fmt: skip
    span, _ = decode_span(raw_span(attributes={
        "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(replay)}))
    assert span.input_messages is not None
    assert [m.role for m in span.input_messages] == ["user", "assistant", "tool", "tool"]
    answer = span.input_messages[1]
    assert [p.type for p in answer.parts] == [PartType.TEXT, PartType.TOOL_CALL,
                                              PartType.TOOL_CALL]  # fmt: skip
    assert [p.call_id for p in answer.tool_calls] == ["fc_a", "fc_b"]


def test_calls_after_a_tool_result_or_user_stay_their_own() -> None:
    user = {"role": "user", "parts": [{"type": "text", "content": "q"}]}
    replay = [user, _call("fc_a", "get_weather"), _result("call_a"), _call("fc_b", "search_docs")]
    span, _ = decode_span(raw_span(attributes={
        "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(replay)}))
    assert span.input_messages is not None
    assert [m.role for m in span.input_messages] == ["user", "assistant", "tool", "assistant"]
