"""Convention decoders on forms the corpus lacks, recorded with the real OTel SDK.

`tests/fixtures/conventions/build.py` records each case with a TracerProvider (and a
LoggerProvider where the form uses log records) and writes OTLP protobuf; `expected.json`
gives, per case and per span in start order, the decoded fields that matter. Each case is
checked twice: from the committed `.pb` files, and rebuilt fresh from the SDK, so the
fixtures cannot drift from what the builder (and so the SDK) produces.

Below the data-driven cases: unit tests of the shared helpers (unflattening, canonical
JSON, the tool-definition shapes, content blocks) with hypothesis where they normalise.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnscore.ingest.conventions.messages import (
    block_result_text,
    parse_content,
    parse_message,
    parse_tool_defs,
)
from turnscore.ingest.conventions.values import (
    canonical_arguments,
    canonical_json,
    unflatten,
)
from turnscore.ingest.decode import decode_spans
from turnscore.ingest.model import Message, Part, PartType, Span, ToolDef
from turnscore.ingest.otlp import read_file
from turnscore.ingest.records import InputError, RawLog, RawSpan

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "conventions"
EXPECTED: dict[str, dict[str, Any]] = json.loads((FIXTURES / "expected.json").read_text())
"""case -> {"spans": [pinned fields per span, in start order],
"errors": [{"span": name, "contains": [substrings of the InputError message]}]}."""


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conventions_build", FIXTURES / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _read(paths: list[Path]) -> tuple[list[RawSpan], list[RawLog]]:
    spans: list[RawSpan] = []
    logs: list[RawLog] = []
    for path in paths:
        for record in read_file(path):
            assert not isinstance(record, InputError), record
            (spans if isinstance(record, RawSpan) else logs).append(record)  # type: ignore[arg-type]
    return spans, logs


def _parts(message: Message) -> list[list[Any]]:
    return [[p.type.value, p.text, p.call_id, p.name, p.arguments, p.is_error]
            for p in message.parts]


def _messages(messages: tuple[Message, ...] | None) -> list[dict[str, Any]] | None:
    if messages is None:
        return None
    return [{"role": m.role, "finish_reason": m.finish_reason, "parts": _parts(m)}
            for m in messages]


def summarize(span: Span) -> dict[str, Any]:
    """The decoded fields a case pins, as plain JSON values."""
    tools = span.tool_definitions
    execution = span.tool_execution
    return {
        "name": span.name,
        "span_id": span.span_id,
        "kind": span.kind.value,
        "convention": span.convention,
        "status": span.status,
        "error": span.error,
        "model": span.model,
        "conversation_id": span.conversation_id,
        "agent_name": span.agent_name,
        "input_tokens": span.input_tokens,
        "output_tokens": span.output_tokens,
        "system_instructions": span.system_instructions,
        "input": _messages(span.input_messages),
        "output": _messages(span.output_messages),
        "tools": None if tools is None
        else [[t.name, t.description, t.parameters] for t in tools],
        "tool_execution": None if execution is None else {
            "name": execution.name, "call_id": execution.call_id,
            "arguments": execution.arguments, "result": execution.result,
            "error": execution.error,
        },
    }


def decode_case(paths: list[Path]) -> tuple[list[dict[str, Any]], list[InputError]]:
    spans, logs = _read(paths)
    decoded, errors = decode_spans(spans, logs)
    decoded.sort(key=lambda s: (s.start_unix_nano, s.span_id))
    return [summarize(s) for s in decoded], errors


@pytest.mark.parametrize("source", ["committed", "fresh"])
@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_case_decodes_as_expected(case: str, source: str, tmp_path: Path) -> None:
    if source == "committed":
        paths = sorted(FIXTURES.glob(f"{case}.*.pb"))
    else:
        paths = _builder().build(case, tmp_path)
    summaries, errors = decode_case(paths)
    expected = EXPECTED[case]
    assert [s["name"] for s in summaries] == [e["name"] for e in expected["spans"]]
    for got, want in zip(summaries, expected["spans"], strict=True):
        assert {k: got[k] for k in want} == want
    by_id = {s["span_id"]: s["name"] for s in summaries}
    assert sorted(by_id.get(e.span_id, "?") for e in errors) == sorted(
        e["span"] for e in expected["errors"]
    )
    for want in expected["errors"]:
        error = next(e for e in errors if by_id.get(e.span_id) == want["span"])
        assert error.span_id is not None and error.span_id in error.message
        for fragment in want["contains"]:
            assert fragment in error.message


# --- shared helpers -------------------------------------------------------------------

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER_DEF = ToolDef("get_weather", "Get the weather.", canonical_json(WEATHER))

TOOL_DEF_SHAPES = {
    "otel flat": {"type": "function", "name": "get_weather", "description": "Get the weather.",
                  "parameters": WEATHER},
    "flat without type": {"name": "get_weather", "description": "Get the weather.",
                          "parameters": WEATHER},
    "openai nested": {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather.", "parameters": WEATHER}},
    "openai nested, schema as string": {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather.",
        "parameters": json.dumps(WEATHER)}},
    "bedrock toolSpec": {"toolSpec": {"name": "get_weather", "description": "Get the weather.",
                                      "inputSchema": {"json": WEATHER}}},
    "bedrock inputSchema": {"name": "get_weather", "description": "Get the weather.",
                            "inputSchema": {"json": WEATHER}},
    "openinference json_schema string": json.dumps({"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather.", "parameters": WEATHER}}),
    "pydantic function_tools": {"name": "get_weather", "description": "Get the weather.",
                                "parameters_json_schema": WEATHER, "strict": True},
    "anthropic input_schema": {"name": "get_weather", "description": "Get the weather.",
                               "input_schema": WEATHER},
    "gemini function_declarations": {"function_declarations": [
        {"name": "get_weather", "description": "Get the weather.", "parameters": WEATHER}]},
}


@pytest.mark.parametrize("shape", sorted(TOOL_DEF_SHAPES))
def test_every_tool_definition_shape_normalizes_alike(shape: str) -> None:
    problems: list[str] = []
    assert parse_tool_defs([TOOL_DEF_SHAPES[shape]], "defs", problems) == (WEATHER_DEF,)
    assert problems == []


def test_tool_definition_without_name_is_reported_and_others_kept() -> None:
    problems: list[str] = []
    defs = parse_tool_defs([{"description": "nameless"}, TOOL_DEF_SHAPES["otel flat"]], "d",
                           problems)
    assert defs == (WEATHER_DEF,)
    assert problems == ["d[0]: tool definition without a name"]


def test_tool_definition_without_schema_is_not_captured_not_empty() -> None:
    assert parse_tool_defs([{"name": "t"}], "d", []) == (ToolDef("t"),)
    empty = parse_tool_defs([{"name": "t", "parameters": {}}], "d", [])
    assert empty == (ToolDef("t", None, "{}"),)


def test_unflatten_indices_only_when_more_keys_follow() -> None:
    attrs = {
        "p.1.role": "user", "p.0.role": "system", "p.0.content": "s",
        "p.1.tool_calls.0.id": "c1", "p.1.tool_calls.0.name": "f",
        "p.2.meta.0": "trailing digit is a key",
        "other": "x",
    }
    assert unflatten(attrs, "p") == [
        {"role": "system", "content": "s"},
        {"role": "user", "tool_calls": [{"id": "c1", "name": "f"}]},
        {"meta": {"0": "trailing digit is a key"}},
    ]
    assert unflatten(attrs, "absent") is None
    assert unflatten({"p.10.a": 1, "p.9.a": 2}, "p") == [{"a": 2}, {"a": 1}]


_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8))
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.text(min_size=1, max_size=6), _json, max_size=4))
def test_arguments_canonical_whether_object_or_json_string(arguments: dict[str, Any]) -> None:
    as_object = canonical_arguments(arguments)
    assert canonical_arguments(json.dumps(arguments, indent=2)) == as_object
    assert json.loads(as_object) == arguments


@given(_json)
def test_structured_results_become_compact_json_in_key_order_and_strings_stay(value: Any) -> None:
    text = block_result_text(value)
    if isinstance(value, str):
        assert text == value
    elif not (isinstance(value, list) and value and all(
            isinstance(b, dict) and set(b) in ({"text"}, {"json"}) for b in value)):
        assert text == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_result_keys_keep_the_order_the_tool_returned() -> None:
    assert block_result_text({"z": 1, "a": {"y": 2, "b": 3}}) == '{"z":1,"a":{"y":2,"b":3}}'


def test_argument_edge_cases() -> None:
    assert canonical_arguments("") == "{}"
    assert canonical_arguments(None) == "{}"
    assert canonical_arguments("17 * 23 + 4") == '"17 * 23 + 4"'
    assert canonical_arguments('{"b": 1, "a": [2]}') == '{"a":[2],"b":1}'


CONTENT_FORMS: list[tuple[str, Any, str, list[Part]]] = [
    ("bedrock toolUse", [{"toolUse": {"toolUseId": "c1", "name": "f", "input": {"x": 1}}}],
     "assistant", [Part(PartType.TOOL_CALL, call_id="c1", name="f", arguments='{"x":1}')]),
    ("bedrock toolResult error", [{"toolResult": {"toolUseId": "c1", "status": "error",
                                                  "content": [{"text": "Error: boom"}]}}],
     "user", [Part(PartType.TOOL_RESULT, text="Error: boom", call_id="c1", is_error=True)]),
    ("bedrock json result", [{"toolResult": {"toolUseId": "c1", "content": [{"json": {"b": 1}}]}}],
     "user", [Part(PartType.TOOL_RESULT, text='{"b":1}', call_id="c1")]),
    ("anthropic tool_use", [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
     "assistant", [Part(PartType.TOOL_CALL, call_id="t1", name="f", arguments="{}")]),
    ("anthropic tool_result", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok",
                                "is_error": True}],
     "user", [Part(PartType.TOOL_RESULT, text="ok", call_id="t1", is_error=True)]),
    ("gemini", [{"text": "hi"}, {"function_call": {"name": "f", "args": {"a": "b"}}}],
     "assistant", [Part(PartType.TEXT, text="hi"),
                   Part(PartType.TOOL_CALL, name="f", arguments='{"a":"b"}')]),
    ("openai text blocks", [{"type": "text", "text": "a"}, {"type": "image_url",
                                                            "image_url": {"url": "u"}}],
     "user", [Part(PartType.TEXT, text="a"),
              Part(PartType.OTHER, text='{"image_url":{"url":"u"},"type":"image_url"}')]),
    ("otel tool_call_response keyed result", [{"type": "tool_call_response", "id": "c",
                                               "result": {"k": [1]}}],
     "user", [Part(PartType.TOOL_RESULT, text='{"k":[1]}', call_id="c")]),
    ("strands JSON-string blocks", '[{"text": "395"}]', "assistant",
     [Part(PartType.TEXT, text="395")]),
    ("prose that parses as JSON stays prose", "42", "assistant", [Part(PartType.TEXT, text="42")]),
    ("tool role string", '{"a": 1}', "tool", [Part(PartType.TOOL_RESULT, text='{"a": 1}')]),
]


@pytest.mark.parametrize(("label", "content", "role", "parts"), CONTENT_FORMS,
                         ids=[c[0] for c in CONTENT_FORMS])
def test_content_forms(label: str, content: Any, role: str, parts: list[Part]) -> None:
    assert list(parse_content(content, role)) == parts


MESSAGE_FORMS: list[tuple[str, Any, Message]] = [
    ("openai tool message", {"role": "tool", "tool_call_id": "c", "content": "395"},
     Message("tool", (Part(PartType.TOOL_RESULT, text="395", call_id="c"),))),
    ("openai assistant tool_calls", {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}]},
     Message("assistant", (Part(PartType.TOOL_CALL, call_id="c", name="f", arguments='{"x":1}'),))),
    ("pydantic tool result as user", {"role": "user", "parts": [
        {"type": "tool_call_response", "id": "c", "name": "f", "result": "r"}]},
     Message("user", (Part(PartType.TOOL_RESULT, text="r", call_id="c", name="f"),))),
    ("langchain serialized ai", {"type": "ai", "data": {"content": "", "tool_calls": [
        {"name": "f", "args": {"x": 1}, "id": "c", "type": "tool_call"}]}},
     Message("assistant", (Part(PartType.TOOL_CALL, call_id="c", name="f", arguments='{"x":1}'),))),
    ("cohere v1 chatbot role", {"role": "CHATBOT", "content": "Sunny."},
     Message("assistant", (Part(PartType.TEXT, text="Sunny."),))),
    ("langchain lc human", {"lc": 1, "type": "constructor",
                            "id": ["langchain", "schema", "messages", "HumanMessage"],
                            "kwargs": {"content": "hi", "type": "human"}},
     Message("user", (Part(PartType.TEXT, text="hi"),))),
    ("responses function_call item", {"type": "function_call", "call_id": "c", "name": "f",
                                      "arguments": "{}"},
     Message("assistant", (Part(PartType.TOOL_CALL, call_id="c", name="f", arguments="{}"),))),
    ("responses function_call item with its own id", {
        "type": "function_call", "id": "fc_1", "call_id": "c", "name": "f", "arguments": "{}"},
     Message("assistant", (Part(PartType.TOOL_CALL, call_id="c", name="f", arguments="{}"),))),
    ("botocore call in content and tool_calls", {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "c", "name": "f", "input": {}}}], "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
     Message("assistant", (Part(PartType.TOOL_CALL, call_id="c", name="f", arguments="{}"),))),
    ("gemini model role", {"role": "model", "parts": [{"text": "done"}]},
     Message("assistant", (Part(PartType.TEXT, text="done"),))),
    # OTel JS OpenAI instrumentation, content capture off: a call's id and name, no arguments
    ("semconv tool_call part without arguments", {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "fc_1", "name": "f", "call_id": "c"}]},
     Message("assistant", (Part(PartType.TOOL_CALL, call_id="c", name="f", arguments=None),))),
    ("semconv tool_call part with empty arguments", {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c", "name": "f", "arguments": {}}]},
     Message("assistant", (Part(PartType.TOOL_CALL, call_id="c", name="f", arguments="{}"),))),
]


@pytest.mark.parametrize(("label", "obj", "message"), MESSAGE_FORMS,
                         ids=[m[0] for m in MESSAGE_FORMS])
def test_message_forms(label: str, obj: Any, message: Message) -> None:
    problems: list[str] = []
    assert parse_message(obj, "m", problems) == message
    assert problems == []


def test_tool_results_sent_as_user_are_not_genuine_user_messages() -> None:
    message = parse_message(MESSAGE_FORMS[2][1], "m", [])
    assert message is not None and not message.is_genuine_user


def _flatten(prefix: str, value: Any) -> dict[str, Any]:
    """What OpenInference and OpenLLMetry do to nested values."""
    if isinstance(value, list | dict):
        items = enumerate(value) if isinstance(value, list) else value.items()
        return {k: v for key, item in items for k, v in _flatten(f"{prefix}.{key}", item).items()}
    return {prefix: value}


_segment = st.text("abcdefgh_", min_size=1, max_size=4)
_tree = st.recursive(
    st.one_of(st.text(max_size=5), st.integers(), st.booleans()),
    lambda inner: st.lists(st.dictionaries(_segment, inner, min_size=1, max_size=3),
                           min_size=1, max_size=3)
    | st.dictionaries(_segment, inner, min_size=1, max_size=3),
    max_leaves=12,
)


@given(st.lists(st.dictionaries(_segment, _tree, min_size=1, max_size=3), min_size=1, max_size=4))
def test_unflatten_inverts_flattening(messages: list[dict[str, Any]]) -> None:
    assert unflatten(_flatten("llm.input_messages", messages), "llm.input_messages") == messages


def test_a_role_nobody_knows_is_the_models_where_only_the_model_speaks() -> None:
    """OpenLLMetry's LangChain spans name a streamed reply `unknown`: in a model call's
    output it is the model's, and so, in its input, is a message asking for a tool; an
    unknown role saying only text is left as it is (who said it cannot be told)."""
    call = {"type": "tool_call", "id": "c1", "name": "calculator", "arguments": {"x": 1}}
    inputs = json.dumps([
        {"role": "user", "parts": [{"type": "text", "content": "17 * 23?"}]},
        {"role": "unknown", "parts": [call]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "391"}]},
        {"role": "unknown", "parts": [{"type": "text", "content": "aside"}]},
    ])
    outputs = json.dumps([{"role": "unknown", "parts": [{"type": "text", "content": "391."}],
                           "finish_reason": "stop"}])
    span = RawSpan(trace_id="t" * 32, span_id="s" * 16, parent_span_id=None, name="chat",
                   kind=3, start_unix_nano=1, end_unix_nano=2, status_code=0,
                   status_message="", attributes={
                       "gen_ai.operation.name": "chat", "gen_ai.input.messages": inputs,
                       "gen_ai.output.messages": outputs})
    [decoded], _ = decode_spans([span])
    assert [m.role for m in decoded.input_messages or ()] == [
        "user", "assistant", "tool", "unknown"]
    assert [m.role for m in decoded.output_messages or ()] == ["assistant"]


@pytest.mark.parametrize(("text", "role"), [
    # ADK 1.x: `For context:` then one part per event of the other agent.
    ("For context:[triage_agent] called tool `transfer_to_agent` with parameters: {}",
     "assistant"),
    ("For context:\n[triage_agent] said: Handing you over.", "assistant"),
    # ADK 2.x: the fenced transcript.
    ("For context: below is a transcript of what another agent did, quoted between ...",
     "assistant"),
    # A person may well open with the same words: still the user's request.
    ("For context: I use Python 3.11. How do I read a file?", "user"),
])
def test_adk_relays_other_agents_events_as_user_text(text: str, role: str) -> None:
    from turnscore.ingest.conventions.messages import parse_messages

    [message] = parse_messages([{"role": "user", "content": text}], "m", [])
    assert message.role == role


def test_speaker_rules_hold_for_flattened_messages_too() -> None:
    """The role rules belong to a message, whatever shape carried it: OpenInference's
    flattened `llm.input_messages` relaying ADK's other agents as user text included."""
    span = RawSpan(trace_id="t" * 32, span_id="s" * 16, parent_span_id=None, name="call_llm",
                   kind=1, start_unix_nano=1, end_unix_nano=2, status_code=0,
                   status_message="", attributes={
                       "openinference.span.kind": "LLM",
                       "llm.input_messages.0.message.role": "user",
                       "llm.input_messages.0.message.content": "Weather in Paris?",
                       "llm.input_messages.1.message.role": "user",
                       "llm.input_messages.1.message.content":
                           "For context:\n[triage_agent] said: Handing you over."})
    [decoded], _ = decode_spans([span])
    assert [m.role for m in decoded.input_messages or ()] == ["user", "assistant"]
