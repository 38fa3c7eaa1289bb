"""A content record that names no span, joined to the span that reported its response
(`turnscore.ingest.detached`): OpenLIT's streamed model call emits its operation-details
record after the call's span ended, outside any span context, with `gen_ai.response.id`
and the request's tool definitions, which its span lacks. Real OTel SDK exports; the record
and its span arrive together, or in either order in separate runs."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.fixtures.conventions.build import Recorder
from turnscore.ingest.pipeline import IngestBatch, ingest_paths
from turnscore.ingest.store import TurnStore
from turnscore.ingest.turn import Turn

REQUEST = "What's the weather in Paris?"
ANSWER = "It is 18 degrees C and sunny in Paris."
TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
DETAILS = "gen_ai.client.inference.operation.details"


def _messages(request: str, answer: str) -> dict[str, str]:
    return {
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": request}]}]),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": answer}],
              "finish_reason": "stop"}]),
    }


def _call(r: Recorder, response_id: str, request: str = REQUEST, answer: str = ANSWER,
          *, record: bool = True) -> None:
    """OpenLIT's streamed chat span (its messages, no tool definitions) and, once it has
    ended and no span is current, its operation-details record."""
    common = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
              "gen_ai.response.id": response_id}
    with r.span("chat gpt-4o-mini", {"telemetry.sdk.name": "openlit", **common,
                                     "gen_ai.usage.input_tokens": 40,
                                     "gen_ai.usage.output_tokens": 9,
                                     **_messages(request, answer)}):
        pass
    if record:
        r.log(DETAILS, None, {**common, **_messages(request, answer),
                              "gen_ai.tool.definitions": json.dumps([TOOL])})


def _files(tmp_path: Path, *calls: tuple[str, bool]) -> list[Path]:
    """The traces file, and the logs file if any call emitted its record."""
    r = Recorder("openlit-app")
    for response_id, record in calls:
        _call(r, response_id, record=record)
    folder = tmp_path / "export"
    folder.mkdir()
    return r.write(folder, "run")


def _turns(out: Path) -> list[Turn]:
    return sorted(TurnStore(out, "read").read_all(), key=lambda t: t.started_at)


def _tools(turn: Turn) -> list[tuple[str, str | None]]:
    return [(t.name, t.description) for t in turn.tools]


def _stored_logs(out: Path) -> list[tuple[str | None, str | None]]:
    rows = []
    for path in sorted((out / "spans").glob("date=*/part-*.parquet")):
        table = pq.read_table(path, columns=["record_type", "trace_id", "span_id"])
        rows += [(r["trace_id"], r["span_id"]) for r in table.to_pylist()
                 if r["record_type"] == "log"]
    return rows


def _messages_of(batch: IngestBatch) -> list[str]:
    return [e.message for e in batch.errors]


def test_a_record_and_its_span_together(tmp_path: Path) -> None:
    traces, logs = _files(tmp_path, ("chatcmpl-1", True))
    batch = ingest_paths([traces, logs], tmp_path / "out")
    (turn,) = _turns(tmp_path / "out")
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)
    assert _tools(turn) == [("get_weather", "Current weather for a city.")]
    assert turn.tools_source == "declared"
    assert _messages_of(batch) == []
    ((trace_id, span_id),) = _stored_logs(tmp_path / "out")  # stored under its span's ids
    assert trace_id == turn.trace_id and span_id


def test_a_record_after_its_span_rebuilds_the_turn(tmp_path: Path) -> None:
    """The span stored by an earlier run; the record found its span by the stored key; a
    copy of the same records (another file) adds nothing."""
    traces, logs = _files(tmp_path, ("chatcmpl-1", True))
    out = tmp_path / "out"
    ingest_paths([traces], out)
    assert _tools(_turns(out)[0]) == []
    batch = ingest_paths([logs], out)
    (turn,) = _turns(out)
    assert _tools(turn) == [("get_weather", "Current weather for a city.")]
    assert turn.trace_id in batch.rebuilt_traces and _messages_of(batch) == []
    again = tmp_path / "again.logs.pb.gz"
    with logs.open("rb") as src, gzip.open(again, "wb") as dst:
        shutil.copyfileobj(src, dst)
    batch = ingest_paths([again], out)
    assert (batch.new_logs, len(_stored_logs(out)), len(_turns(out))) == (0, 1, 1)


def test_a_record_before_its_span_waits_for_it(tmp_path: Path) -> None:
    """Stored as read (and reported) while no span has its response; joined when the span
    arrives in a later run."""
    traces, logs = _files(tmp_path, ("chatcmpl-1", True))
    out = tmp_path / "out"
    first = ingest_paths([logs], out)
    assert any("chatcmpl-1" in m for m in _messages_of(first))
    assert _stored_logs(out) == [(None, None)]
    ingest_paths([traces], out)
    (turn,) = _turns(out)
    assert _tools(turn) == [("get_weather", "Current weather for a city.")]
    assert len([k for k in _stored_logs(out) if k[0] == turn.trace_id]) == 1


def test_only_the_call_with_its_response_takes_it(tmp_path: Path) -> None:
    """Two streamed calls, one record: the other call's turn gets no tools."""
    traces, logs = _files(tmp_path, ("chatcmpl-1", True), ("chatcmpl-2", False))
    ingest_paths([traces, logs], tmp_path / "out")
    first, second = _turns(tmp_path / "out")
    assert (_tools(first), _tools(second)) == ([("get_weather", "Current weather for a city.")],
                                               [])


def test_a_record_no_span_reported_is_an_error_and_kept(tmp_path: Path) -> None:
    (traces,) = _files(tmp_path, ("chatcmpl-1", False))
    r = Recorder("openlit-app")
    r.log(DETAILS, None, {"gen_ai.operation.name": "chat", "gen_ai.response.id": "chatcmpl-9",
                          **_messages("other", "reply")})
    (orphan,) = r.write(tmp_path, "orphan")[1:]
    batch = ingest_paths([traces, orphan], tmp_path / "out")
    (turn,) = _turns(tmp_path / "out")
    assert turn.request == REQUEST
    (message,) = _messages_of(batch)
    assert "chatcmpl-9" in message
    assert _stored_logs(tmp_path / "out") == [(None, None)]


def test_the_record_goes_to_its_own_services_span(tmp_path: Path) -> None:
    """Two instrumentations' spans of one call (rule 3 merges them anyway) in two services:
    the record takes the ids of its own service's span."""
    other = TracerProvider(resource=Resource.create({"service.name": "gateway"}))
    r = Recorder("openlit-app")
    other.add_span_processor(SimpleSpanProcessor(r.spans))
    with other.get_tracer("gw").start_as_current_span(
            "proxy", attributes={"gen_ai.response.id": "chatcmpl-1"}):
        pass
    _call(r, "chatcmpl-1")
    folder = tmp_path / "export"
    folder.mkdir()
    ingest_paths(r.write(folder, "run"), tmp_path / "out")
    spans = {s.name: s.context for s in r.spans.get_finished_spans()}
    ((trace_id, span_id),) = _stored_logs(tmp_path / "out")
    assert (trace_id, span_id) == (f"{spans['chat gpt-4o-mini'].trace_id:032x}",
                                   f"{spans['chat gpt-4o-mini'].span_id:016x}")



def test_a_record_written_in_the_frameworks_span_joins_the_call_that_reported_it(
        tmp_path: Path) -> None:
    """OpenLIT under a framework's own span of the call (Strands' `chat`): the record is
    written once OpenLIT's span ended, so it names the framework's span, which reported no
    response; it belongs to OpenLIT's, which reported its response: one call, not two."""
    r = Recorder("strands-app")
    common = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}
    with r.span("chat", {**common, **_messages(REQUEST, ANSWER)}):
        _call(r, "chatcmpl-1", record=False)
        r.log(DETAILS, None, {**common, "gen_ai.response.id": "chatcmpl-1",
                              **_messages(REQUEST, ANSWER),
                              "gen_ai.tool.definitions": json.dumps([TOOL])})
    folder = tmp_path / "export"
    folder.mkdir()
    batch = ingest_paths(r.write(folder, "run"), tmp_path / "out")
    (turn,) = _turns(tmp_path / "out")
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 1)
    assert _tools(turn) == [("get_weather", "Current weather for a city.")]
    assert _messages_of(batch) == []
    spans = {s.name: s.context for s in r.spans.get_finished_spans()}
    ((_, span_id),) = _stored_logs(tmp_path / "out")
    assert span_id == f"{spans['chat gpt-4o-mini'].span_id:016x}"
