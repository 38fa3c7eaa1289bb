"""A streamed Responses call under the OTel JS OpenAI instrumentation
(`@opentelemetry/instrumentation-openai` 0.22.0, `_onResponsesStreamIterator`): one
operation-details record of the input, then one per `response.output_item.done`, each
holding one output item. Two tool calls of one response are one model call with both. With
content capture off, a message's text parts carry no text: not captured, not "null"."""

from __future__ import annotations

from turnscore.ingest import attributes as A
from turnscore.ingest.decode import decode_calls
from turnscore.ingest.records import RawLog, RawSpan

TRACE, SPAN = "ab" * 16, "cd" * 8


def _record(at: int, **fields: object) -> RawLog:
    return RawLog(TRACE, SPAN, A.EV_OPERATION_DETAILS, at, None,
                  {"gen_ai.provider.name": "openai", **fields})  # type: ignore[dict-item]


def _item(call_id: str, name: str) -> list[object]:
    part = {"type": "tool_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": '{"city": "Paris"}'}
    return [{"role": "assistant", "parts": [part], "finish_reason": "tool_call"}]


def test_output_item_records_are_one_inference() -> None:
    span = RawSpan(TRACE, SPAN, None, "chat gpt-4o-mini", 3, 100, 900, 0, "", {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.id": "resp_1",
        "gen_ai.usage.input_tokens": 29, "gen_ai.usage.output_tokens": 96,
    })  # fmt: skip
    user = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris and Rome?"}]}]
    logs = [_record(100, **{A.GEN_AI_INPUT_MESSAGES: user}),
            _record(500, **{A.GEN_AI_OUTPUT_MESSAGES: _item("call_1", "get_weather")}),
            _record(501, **{A.GEN_AI_OUTPUT_MESSAGES: _item("call_2", "get_time")})]  # fmt: skip
    calls, _ = decode_calls(span, logs)
    assert len(calls) == 1
    asked = [(p.call_id, p.name) for m in calls[0].output_messages or () for p in m.tool_calls]
    assert asked == [("call_1", "get_weather"), ("call_2", "get_time")]
    assert (calls[0].input_tokens, calls[0].output_tokens) == (29, 96)


def test_a_text_part_without_its_text_is_not_captured() -> None:
    """With content capture off the instrumentation sends each message's parts as
    `{"type": "text"}` alone (`src/responses.ts`): content not captured, never "null"; a
    user's part is kept without its text (the user spoke there: a turn begins), the
    answer's is dropped."""
    bare = [{"role": "user", "parts": [{"type": "text"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text"}], "finish_reason": "stop"}]
    span = RawSpan(TRACE, SPAN, None, "chat gpt-4o-mini", 3, 100, 900, 0, "", {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini"})  # fmt: skip
    logs = [_record(100, **{A.GEN_AI_INPUT_MESSAGES: bare}),
            _record(500, **{A.GEN_AI_OUTPUT_MESSAGES: answer})]  # fmt: skip
    [call], _ = decode_calls(span, logs)
    said = [(m.role, [p.text for p in m.parts])
            for m in (*(call.input_messages or ()), *(call.output_messages or ()))]
    assert said == [("user", [None]), ("assistant", [])]
