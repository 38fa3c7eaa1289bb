"""MLflow tracing's OTLP spans, read by `turnscore.ingest.conventions.frameworks` (the recorded
stacks: `mlflow-*`): every value JSON-encoded, a streamed call's chunks as span events, the
tools as sent beside MLflow's lossy `mlflow.chat.tools`, the Agents SDK processor's message
lists, LangChain's run metadata."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.ingest.instrumented.stacks import check
from tests.ingest.instrumented.stacks.expect import FIELDS
from tests.ingest.test_decode import raw_span
from turnscore.ingest.decode import decode_span
from turnscore.ingest.model import PartType, Span, SpanKind
from turnscore.ingest.records import RawEvent

SCHEMA = {"type": "object", "properties": {"unit": {"type": "string", "default": "c"}}}
SENT = [{"type": "function", "function": {"name": "weather", "parameters": SCHEMA}}]
MODELLED = [{"type": "function", "function": {"name": "weather", "parameters": {
    "type": "object", "properties": {"unit": {"type": "string"}}}}}]  # fmt: skip


def _j(value: object) -> str:
    return json.dumps(value)


def _decoded(attributes: dict[str, str], events: tuple[RawEvent, ...] = ()) -> Span:
    span, error = decode_span(raw_span(attributes=attributes, events=events))
    assert error is None
    return span


def _chunk(delta: dict[str, object], finish: str | None = None) -> RawEvent:
    chunk = {"object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return RawEvent("mlflow.chunk.item.0", 1, {"mlflow.chunk.value": _j(chunk)})


def test_a_streamed_call_is_its_chunks() -> None:
    """MLflow's spanOutputs keeps a stream's text only; the chunk events hold the calls."""
    events = (
        _chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "weather",
                                                                     "arguments": ""}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"unit":'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": ' "c"}'}}]}, "tool_calls"),
    )  # fmt: skip
    span = _decoded({
        "mlflow.spanType": _j("CHAT_MODEL"),
        "mlflow.spanInputs": _j({"messages": [{"role": "user", "content": "hi"}], "tools": SENT}),
        "mlflow.spanOutputs": _j({"choices": [{"finish_reason": "stop",
                                               "message": {"role": "assistant", "content": ""}}]}),
    }, events)  # fmt: skip
    [answer] = span.output_messages or ()
    [call] = answer.parts
    assert (call.type, call.call_id, call.name) == (PartType.TOOL_CALL, "c1", "weather")
    assert json.loads(call.arguments or "") == {"unit": "c"}
    assert answer.finish_reason == "tool_calls"


@pytest.mark.parametrize("mlflow_keys", [True, False], ids=["native", "genai-translated"])
def test_langchain_tools_as_sent(mlflow_keys: bool) -> None:
    """`invocation_params.tools` keeps the schema MLflow's ChatTool model drops keywords of,
    also where MLflow translated its span to the GenAI conventions."""
    attributes = {"invocation_params": _j({"model": "m", "tools": SENT}),
                  "metadata": _j({"thread_id": "t-1", "langgraph_step": 1})}  # fmt: skip
    if mlflow_keys:
        attributes |= {"mlflow.spanType": _j("CHAT_MODEL"), "mlflow.chat.tools": _j(MODELLED),
                       "mlflow.spanInputs": _j({"messages": [{"role": "user", "content": "hi"}]})}
    else:
        attributes |= {"gen_ai.operation.name": "chat", "gen_ai.tool.definitions": _j(
            [{"type": "function", "name": "weather", "parameters": MODELLED[0]["function"]}])}
    span = _decoded(attributes)
    [tool] = span.tool_definitions or ()
    assert json.loads(tool.parameters or "") == SCHEMA
    assert span.conversation_id == "t-1"


def test_an_agents_sdk_generation_is_a_model_call() -> None:
    span = _decoded({
        "mlflow.spanType": _j("CHAT_MODEL"), "mlflow.message.format": _j("openai-agent"),
        "mlflow.spanInputs": _j([{"role": "system", "content": "Be brief."},
                                 {"role": "user", "content": "hi"}]),
        "mlflow.spanOutputs": _j([{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "weather", "arguments": "{}"}}]}]),
    })  # fmt: skip
    assert span.kind is SpanKind.LLM
    assert [m.role for m in span.input_messages or ()] == ["system", "user"]
    [answer] = span.output_messages or ()
    assert [(p.type, p.call_id) for p in answer.parts] == [(PartType.TOOL_CALL, "c1")]


def test_agents_sdk_generations_alone_make_the_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorded Agents SDK stack without the OpenAI client's spans (a model the client
    autolog does not see): the SDK's Generation spans carry every call. Only the tools are
    lost: a generation span records none."""
    stack = "mlflow-openai-agents"
    for scenario in check.STACKS[stack].scenarios:
        folder = tmp_path / stack / scenario
        shutil.copytree(check.FIXTURES / stack / scenario, folder)
        for path in folder.glob("*.traces.pb"):
            request = ExportTraceServiceRequest.FromString(path.read_bytes())
            for scoped in (s for r in request.resource_spans for s in r.scope_spans):
                kept = [s for s in scoped.spans if s.name != "AsyncCompletions"]
                del scoped.spans[:]
                scoped.spans.extend(kept)
            path.write_bytes(request.SerializeToString())
    monkeypatch.setattr(check, "FIXTURES", tmp_path)
    for scenario in check.STACKS[stack].scenarios:
        rec = check.load(stack, scenario, tmp_path / f"out-{scenario}")
        assert check.turns_right(rec)
        for index in range(len(rec.expected)):
            for field in FIELDS:
                ours, theirs = check.compare(rec, index, field)
                assert (ours == theirs) is (field != "tools"), (scenario, field)
