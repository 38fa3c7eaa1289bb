"""The dispatcher against the real corpus: decoded spans carry what ground_truth.json says.

For every instrumentation folder and scenario, the ground truth (derived from what the
model really received and returned on the wire) must be recoverable from the decoded
spans alone: the user request as a genuine user text message in some LLM span's input,
the system prompt, each tool call (id, name, canonical arguments) in some LLM output, the
result the model saw in a later LLM input, the tool definitions, the final answer, the
number of model calls and the token totals.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from turnscore.ingest.conventions.values import canonical_json
from turnscore.ingest.decode import decode_span, decode_spans
from turnscore.ingest.model import PartType, Span, SpanKind, ToolDef, ToolExecution
from turnscore.ingest.otlp import read_file
from turnscore.ingest.records import InputError, RawEvent, RawLog, RawSpan

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"

# What the telemetry says differs from the wire, as corpus/README.md documents.
RESULT_DIFFERS = {("pydantic-ai", "tool_error")}
# Frameworks whose telemetry declares no full tool set (Strands: only called tools).
PARTIAL_TOOL_DEFS = {"strands_default"}
# The event-only capture mode carries no tool definitions at all: "not captured", not empty.
NO_TOOL_DEFS = {"otel-openai-v2_latest-eventonly"}


def _cases() -> Iterator[tuple[str, str]]:
    for truth in sorted(CORPUS.glob("*/ground_truth.json")):
        for scenario in sorted(json.loads(truth.read_text())):
            yield truth.parent.name, scenario


CASES = list(_cases())


def _decode(framework: str, scenario: str) -> tuple[list[Span], list[InputError]]:
    spans: list[RawSpan] = []
    logs: list[RawLog] = []
    errors: list[InputError] = []
    for name in (f"{scenario}.json", f"{scenario}.logs.json"):
        path = CORPUS / framework / name
        if not path.exists():
            continue
        for record in read_file(path):
            if isinstance(record, RawSpan):
                spans.append(record)
            elif isinstance(record, RawLog):
                logs.append(record)
            else:
                errors.append(record)
    decoded, decode_errors = decode_spans(spans, logs)
    assert len(decoded) == len(spans)
    return decoded, errors + decode_errors


def _llm(spans: list[Span]) -> list[Span]:
    return [s for s in spans if s.kind is SpanKind.LLM]


@pytest.fixture(scope="module", params=CASES, ids=[f"{f}/{s}" for f, s in CASES])
def case(request: pytest.FixtureRequest) -> tuple[str, str, list[Span], list[dict]]:
    framework, scenario = request.param
    spans, errors = _decode(framework, scenario)
    assert errors == []
    truth = json.loads((CORPUS / framework / "ground_truth.json").read_text())[scenario]
    return framework, scenario, spans, truth


def test_user_requests_and_system_prompt(case) -> None:
    _, _, spans, turns = case
    llm = _llm(spans)
    for turn in turns:
        genuine = {m.text for s in llm for m in s.input_messages or () if m.is_genuine_user}
        assert turn["user_request"] in genuine
        if turn["system_prompt"]:
            assert turn["system_prompt"] in {s.system_instructions for s in llm}


def test_tool_calls_requested_by_the_model(case) -> None:
    _, _, spans, turns = case
    requested = {
        (p.call_id, p.name, p.arguments)
        for s in _llm(spans) for m in s.output_messages or () for p in m.tool_calls
    }
    expected = {
        (c["id"], c["name"], canonical_json(c["arguments"]))
        for turn in turns for c in turn["tool_calls"]
    }
    assert expected <= requested
    assert {r for r in requested if r[0] is not None} == expected


def test_results_the_model_saw(case) -> None:
    framework, scenario, spans, turns = case
    seen = {
        p.call_id: p.text
        for s in _llm(spans) for m in s.input_messages or ()
        for p in m.parts if p.type is PartType.TOOL_RESULT
    }
    for turn in turns:
        for call in turn["tool_calls"]:
            if call["id"] not in seen:
                # Only runs that stopped before a second model call lack it.
                assert turn["final_answer"] is None
            elif (framework, scenario) not in RESULT_DIFFERS:
                assert _same_result(seen[call["id"]], call["result_seen_by_model"])


def _same_result(decoded: str | None, wire: str) -> bool:
    """Verbatim, or the same JSON in compact form where the telemetry carried it structured."""
    if decoded == wire:
        return True
    try:
        compact = json.dumps(json.loads(wire), separators=(",", ":"), ensure_ascii=False)
    except json.JSONDecodeError:
        return False
    return decoded == compact


def test_tool_definitions(case) -> None:
    framework, _, spans, turns = case
    if framework in NO_TOOL_DEFS:
        assert all(s.tool_definitions is None for s in spans)
        return
    declared = {
        (t.name, t.description, t.parameters)
        for s in spans for t in s.tool_definitions or () if t.parameters is not None
    }
    for turn in turns:
        for tool in turn["tools_available"]:
            wanted = (tool["name"], tool["description"], canonical_json(tool["parameters"]))
            called = any(c["name"] == tool["name"] for c in turn["tool_calls"])
            if framework not in PARTIAL_TOOL_DEFS or called:
                assert wanted in declared


def test_final_answers(case) -> None:
    _, _, spans, turns = case
    answers = {
        m.text for s in _llm(spans) for m in s.output_messages or ()
        if m.role == "assistant" and not m.tool_calls
    }
    for turn in turns:
        if turn["final_answer"] is not None:
            assert turn["final_answer"] in answers


def test_model_calls_and_tokens(case) -> None:
    _, _, spans, turns = case
    llm = _llm(spans)
    assert len(llm) == sum(t["llm_calls"] for t in turns)
    assert sum(s.input_tokens or 0 for s in llm) == sum(t["usage"]["input_tokens"] for t in turns)
    assert sum(s.output_tokens or 0 for s in llm) == sum(
        t["usage"]["output_tokens"] for t in turns
    )


def test_every_span_keeps_identity_and_raw_attributes(case) -> None:
    framework, _, spans, _ = case
    for span in spans:
        assert span.service_name == f"corpus-{framework}"
        raw = json.loads(span.attributes.json())
        assert raw["resource.service.name"] == f"corpus-{framework}"
        assert span.convention != "none" or not any(k.startswith(("gen_ai.", "llm.")) for k in raw)


def test_tool_executions_match_the_calls(case) -> None:
    _, _, spans, turns = case
    executions = [s.tool_execution for s in spans if s.kind is SpanKind.TOOL]
    if not executions:
        return  # raw-client instrumentations have no tool spans (CONVENTIONS pitfall 3)
    assert all(e is not None for e in executions)
    for turn in turns:
        for call in turn["tool_calls"]:
            args = call["arguments"]
            # LangChain logs a one-argument tool's input as the bare value.
            accepted = {canonical_json(args)} | (
                {canonical_json(next(iter(args.values())))} if len(args) == 1 else set()
            )
            matches = [
                e for e in executions
                if e is not None and e.name == call["name"] and e.arguments in accepted
                and e.call_id in (call["id"], None)
            ]
            assert matches, call


# --- the dispatcher on hand-built raw records ------------------------------------------

TRACE = "0af7651916cd43dd8448eb211c80319c"


def raw_span(span_id: str = "b7ad6b7169203331", attributes: dict | None = None,
             **changes: object) -> RawSpan:
    fields: dict = dict(
        trace_id=TRACE, span_id=span_id, parent_span_id=None, name="chat m", kind=3,
        start_unix_nano=1, end_unix_nano=2, status_code=0, status_message="",
        attributes=attributes or {}, resource={"service.name": "svc"},
        source="f.json", position="line 1",
    )
    fields.update(changes)
    return RawSpan(**fields)  # type: ignore[arg-type]


def raw_log(event_name: str, body: object, span_id: str | None = "b7ad6b7169203331",
            trace_id: str | None = TRACE, time: int = 5) -> RawLog:
    return RawLog(trace_id=trace_id, span_id=span_id, event_name=event_name,
                  time_unix_nano=time, body=body, attributes={}, source="f.logs.json",
                  position="line 9")  # type: ignore[arg-type]


def test_logs_join_by_trace_and_span_id_only() -> None:
    other_trace = "1" * 32
    logs = [
        raw_log("gen_ai.user.message", {"content": "mine"}, time=1),
        raw_log("gen_ai.user.message", {"content": "not mine"}, trace_id=other_trace, time=2),
        raw_log("gen_ai.choice", {"message": {"content": "answer"}}, time=3),
        raw_log("app.log", "unrelated", time=4),
    ]
    spans, errors = decode_spans([raw_span(attributes={"gen_ai.operation.name": "chat"})], logs)
    (span,) = spans
    assert [m.text for m in span.input_messages or ()] == ["mine"]
    assert [m.text for m in span.output_messages or ()] == ["answer"]
    assert len(errors) == 1
    assert errors[0].trace_id == other_trace and "matches no span" in errors[0].message
    assert errors[0].source == "f.logs.json" and errors[0].position == "line 9"


def test_log_without_ids_is_reported() -> None:
    _, errors = decode_spans([], [raw_log("gen_ai.user.message", {"content": "x"},
                                          span_id=None, trace_id=None)])
    assert len(errors) == 1 and "no trace id" in errors[0].message


def test_detection_never_from_span_kind_provider_or_finish_reason() -> None:
    span, error = decode_span(raw_span(attributes={
        "gen_ai.system": "openai", "gen_ai.provider.name": "openai",
        "gen_ai.response.finish_reasons": ["tool_calls"],
    }, kind=3))
    assert error is None
    assert span.convention == "none" and span.kind is SpanKind.OTHER
    nonstandard, _ = decode_span(raw_span(attributes={
        "gen_ai.operation.name": "execute_event_loop_cycle",
        "gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", "content": "q"}]}]',
    }))
    assert nonstandard.kind is SpanKind.OTHER
    assert nonstandard.input_messages is not None  # content kept, just not a model call


def test_not_captured_differs_from_empty() -> None:
    captured, _ = decode_span(raw_span(attributes={
        "gen_ai.operation.name": "chat", "gen_ai.input.messages": "[]"}))
    missing, _ = decode_span(raw_span(attributes={"gen_ai.operation.name": "chat"}))
    assert captured.input_messages == () and captured.output_messages is None
    assert missing.input_messages is None and missing.tool_definitions is None


def test_errors_from_status_exception_event_and_error_type() -> None:
    with_message, _ = decode_span(raw_span(status_code=2, status_message="boom"))
    from_event, _ = decode_span(raw_span(status_code=2, events=(RawEvent(
        "exception", 3, {"exception.type": "ValueError", "exception.message": "bad"}),)))
    from_type, _ = decode_span(raw_span(attributes={"error.type": "timeout"}))
    ok, _ = decode_span(raw_span(status_code=1))
    assert (with_message.status, with_message.error) == ("error", "boom")
    assert (from_event.status, from_event.error) == ("error", "ValueError: bad")
    assert (from_type.status, from_type.error) == ("error", "timeout")
    assert (ok.status, ok.error) == ("ok", None)


def test_tool_span_error_reaches_the_execution() -> None:
    span, _ = decode_span(raw_span(status_code=2, status_message="Unknown city", attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.arguments": {"city": "Atlantis"}}))
    assert span.kind is SpanKind.TOOL and span.tool_execution is not None
    assert span.tool_execution.arguments == '{"city":"Atlantis"}'
    assert span.tool_execution.error == "Unknown city" and span.tool_execution.result is None


def test_attributes_are_lossless_with_resource_prefix() -> None:
    attributes = {"a": "x", "n": 3, "f": 1.5, "b": True, "raw": b"\x00\x01", "l": [1, "2"],
                  "kv": {"k": [None]}}
    span, _ = decode_span(raw_span(attributes=attributes))
    assert json.loads(span.attributes.json()) == {
        "a": "x", "n": 3, "f": 1.5, "b": True, "raw": "AAE=", "l": [1, "2"],
        "kv": {"k": [None]}, "resource.service.name": "svc",
    }
    assert span.service_name == "svc" and span.source == "f.json"


def test_a_malformed_span_is_kept_and_reported_with_its_id() -> None:
    span, error = decode_span(raw_span(attributes={
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
        "gen_ai.tool.definitions": "{not json", "gen_ai.usage.input_tokens": "12"}))
    assert span.model == "m" and span.input_tokens == 12 and span.tool_definitions is None
    assert error is not None and error.span_id == span.span_id
    assert error.position == "line 1" and "gen_ai.tool.definitions: not valid JSON" in error.message


def test_decoding_is_pure() -> None:
    raw = raw_span(attributes={"llm.input_messages.0.message.role": "user",
                               "llm.input_messages.0.message.content": "q",
                               "openinference.span.kind": "LLM"})
    assert decode_span(raw) == decode_span(raw)
    assert decode_spans([raw, raw])[0][0] == decode_spans([raw])[0][0]


def test_case_id_from_a_configured_attribute() -> None:
    spans, _ = decode_spans([raw_span(attributes={"app.case": "c-7"})],
                            case_id_attribute="app.case")
    assert spans[0].case_id == "c-7"


def test_pydantic_agent_span_splits_history_from_answer() -> None:
    all_messages = [
        {"role": "user", "parts": [{"type": "text", "content": "q"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c", "name": "f",
                                         "arguments": "{}"}]},
        {"role": "user", "parts": [{"type": "tool_call_response", "id": "c", "result": 4}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "four"}]},
    ]
    span, _ = decode_span(raw_span(attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a",
        "pydantic_ai.all_messages": json.dumps(all_messages),
        "gen_ai.aggregated_usage.input_tokens": 10, "gen_ai.aggregated_usage.output_tokens": 2,
    }))
    assert span.kind is SpanKind.AGENT and span.agent_name == "a"
    assert [m.role for m in span.input_messages or ()] == ["user", "assistant", "user"]
    assert [m.text for m in span.output_messages or ()] == ["four"]
    assert (span.input_tokens, span.output_tokens) == (10, 2)
    assert span.input_messages is not None
    assert span.input_messages[2].parts[0].text == "4"


# What the tool span records differs from what the model was told (corpus/README.md).
EXECUTION_RESULT_DIFFERS = {
    ("pydantic-ai", "tool_error"),
    ("openinference-langgraph", "tool_error"),
}


def test_tool_execution_results_match_what_the_model_saw(case) -> None:
    framework, scenario, spans, turns = case
    results = {
        s.tool_execution.call_id: s.tool_execution.result
        for s in spans if s.tool_execution is not None and s.tool_execution.call_id
    }
    if (framework, scenario) in EXECUTION_RESULT_DIFFERS:
        return
    for turn in turns:
        for call in turn["tool_calls"]:
            got = results.get(call["id"])
            if got is not None:
                # The app may serialize the same data differently from the model's input.
                wire = call["result_seen_by_model"]
                assert _same_result(got, wire) or _json_equal(got, wire), call


def _json_equal(a: str, b: str) -> bool:
    try:
        return bool(json.loads(a) == json.loads(b))
    except json.JSONDecodeError:
        return False


def test_explicit_ok_status_wins_over_error_type() -> None:
    span, _ = decode_span(raw_span(status_code=1, attributes={"error.type": "_OTHER"}))
    assert (span.status, span.error) == ("ok", None)


def test_execute_tool_span_describes_its_tool_without_inventing_a_schema() -> None:
    span, _ = decode_span(raw_span(attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.description": "Get the weather.", "gen_ai.tool.call.id": "c1"}))
    assert span.tool_definitions == (ToolDef("get_weather", "Get the weather.", None),)
    assert span.tool_execution == ToolExecution("get_weather", "c1", None, None, None)


def test_a_log_record_exported_twice_counts_once() -> None:
    log = raw_log("gen_ai.user.message", {"content": "q"}, time=1)
    spans, _ = decode_spans([raw_span(attributes={"gen_ai.operation.name": "chat"})], [log, log])
    assert [m.text for m in spans[0].input_messages or ()] == ["q"]


def _decoded_from(paths: list[Path]) -> list[Span]:
    spans = [r for p in paths for r in read_file(p) if isinstance(r, RawSpan)]
    logs = [r for p in paths for r in read_file(p) if isinstance(r, RawLog)]
    decoded, errors = decode_spans(spans, logs)
    assert errors == []
    return sorted((replace(s, source="") for s in decoded), key=lambda s: s.span_id)


@pytest.mark.parametrize("binary", sorted(CORPUS.glob("*/parallel_tools.p*")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_wire_encoding_decodes_alike(binary: Path) -> None:
    logs = sorted(binary.parent.glob("parallel_tools.logs.json"))
    assert _decoded_from([binary, *logs]) == _decoded_from(
        [binary.parent / "parallel_tools.json", *logs]
    )


_attr_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False),
    st.text(max_size=6), st.sampled_from(['{"a": 1}', "[1, 2]", "[{}]", "{", "", "42"]),
)
_attr_value = st.recursive(
    _attr_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["role", "parts", "content", "type", "id", "name", "arguments",
                         "tool_calls", "function", "text", "toolUse", "toolResult", "json",
                         "message", "messages", "choices", "contents", "config", "tools",
                         "function_declarations", "function_call", "function_response",
                         "parameters", "inputSchema", "lc", "kwargs", "data", "response",
                         "result", "status", "finish_reason", "function_tools", "properties",
                         "usage_metadata", "model", "input", "output"]),
        inner, max_size=4),
    max_leaves=12,
)
_content_keys = st.sampled_from([
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
    "gen_ai.tool.definitions", "gen_ai.prompt", "gen_ai.completion", "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result", "llm.input_messages.0.message.content",
    "llm.input_messages.0.message.tool_calls.0.tool_call.function.arguments",
    "llm.tools.0.tool.json_schema", "gen_ai.prompt.0.content", "llm.request.functions.0.name",
    "pydantic_ai.all_messages", "model_request_parameters", "mlflow.spanInputs",
    "mlflow.spanOutputs", "gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response",
    "output.value", "input.value", "traceloop.entity.output", "gen_ai.tool.json_schema",
    "llm.output_messages.0.message.contents.0.message_content.text", "tool.parameters",
    "gen_ai.completion.0.tool_calls.0.arguments", "metadata", "mlflow.chat.tools",
    "mlflow.chat.tokenUsage", "gcp.vertex.agent.tool_response", "tool_response",
    "logfire.json_schema", "gen_ai.agent.tools", "traceloop.entity.input", "final_result",
    "mlflow.spanType", "traceloop.span.kind", "gen_ai.tool.name",
])


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_content_keys, _attr_value | _attr_value.map(json.dumps), max_size=5),
    st.sampled_from(["chat", "execute_tool", "invoke_agent", None]),
    st.sampled_from(["LLM", "TOOL", None]),
    st.lists(st.tuples(st.sampled_from(["gen_ai.choice", "gen_ai.user.message",
                                        "gen_ai.client.inference.operation.details"]),
                       st.dictionaries(st.sampled_from(["content", "message", "tool_calls",
                                                        "gen_ai.input.messages"]),
                                       _attr_value | _attr_value.map(json.dumps),
                                       max_size=2)), max_size=3),
)
# Found by this test: a list tool name reached a set lookup (ADK's synthetic-span check).
@example({"gcp.vertex.agent.tool_response": None, "gen_ai.tool.name": []}, None, None, [])
def test_no_attribute_value_crashes_a_decoder(
    attributes: dict, operation: str | None, oi_kind: str | None, events: list
) -> None:
    """The dispatcher turns a decoder exception into an InputError; decoders must not need
    that net: any shape under any known key is read or reported, never a crash."""
    if operation:
        attributes["gen_ai.operation.name"] = operation
    if oi_kind:
        attributes["openinference.span.kind"] = oi_kind
    raw = raw_span(attributes=attributes,
                   events=tuple(RawEvent(n, i, a) for i, (n, a) in enumerate(events)))
    span, error = decode_span(raw)
    assert span.span_id == raw.span_id
    assert error is None or "decoder failed" not in error.message, error.message


def test_older_mlflow_chat_messages_split_into_history_and_answer() -> None:
    chat = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    span, error = decode_span(raw_span(attributes={
        "mlflow.spanType": json.dumps("CHAT_MODEL"), "mlflow.chat.messages": json.dumps(chat)}))
    assert error is None and span.kind is SpanKind.LLM and span.convention == "mlflow"
    assert [m.text for m in span.input_messages or ()] == ["q"]
    assert [m.text for m in span.output_messages or ()] == ["a"]


def test_two_conventions_fill_each_others_tool_parts() -> None:
    """One span, two conventions each capturing part of a tool's execution and definitions
    (ADK's `gen_ai.*` without content, OpenInference's `output.value` and `llm.tools`):
    the first keeps precedence, its missing parts come from the second, by tool name."""
    from turnscore.ingest.conventions.base import Decoded
    from turnscore.ingest.model import ToolDef, ToolExecution

    first = Decoded(tool_execution=ToolExecution("calc", call_id="c1"),
                    tool_definitions=(ToolDef("calc", "Adds."), ToolDef("other")))
    second = Decoded(tool_execution=ToolExecution("calc", call_id="x", result="395"),
                     tool_definitions=(ToolDef("calc", "Sums.", '{"type":"object"}'),))
    filled = first.fill(second)
    assert filled.tool_execution == ToolExecution("calc", call_id="c1", result="395")
    assert filled.tool_definitions == (ToolDef("calc", "Adds.", '{"type":"object"}'),
                                       ToolDef("other"))
    other_tool = Decoded(tool_execution=ToolExecution("search", result="r"))
    assert first.fill(other_tool).tool_execution == first.tool_execution


def test_a_frameworks_control_flow_exception_fails_nothing() -> None:
    """LangGraph's supervisor hands off by raising `ParentCommand`, which OpenLLMetry
    records as an ERROR with an exception event on three spans: the run went on, so no
    span failed and every turn ends `ok`, without the exception's text (which quotes the
    conversation) as an error."""
    from turnscore.ingest.assemble import assemble_turns
    from turnscore.ingest.decode import trace_order

    folder = Path(__file__).parent.parent / "fixtures" / "stacks" / "langgraph-supervisor"
    records = [r for f in sorted(folder.glob("handoff/*.pb")) for r in read_file(f)]
    spans = [r for r in records if isinstance(r, RawSpan)]
    raised = [s for s in spans if any(
        e.attributes.get("exception.type") == "langgraph.errors.ParentCommand" for e in s.events)]
    assert len(raised) >= 3 and all(s.status_code == 2 for s in raised)
    decoded, errors = decode_spans(trace_order(spans), [])
    assert errors == []
    ids = {s.span_id for s in raised}
    assert all((s.status, s.error) == ("unset", None) for s in decoded if s.span_id in ids)
    turns = assemble_turns(decoded).turns
    assert len(turns) == 2 and {t.status for t in turns} == {"ok"}
