"""The Parquet stores: lossless raw records, date partitions, atomic files, one row per turn."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnscore.ingest.links import Lookups, SpanLinks
from turnscore.ingest.otlp import read_file
from turnscore.ingest.records import AttrValue, RawEvent, RawLink, RawLog, RawSpan
from turnscore.ingest.schema import SPAN_FIELDS, arrow_schema
from turnscore.ingest.store import (
    INDEX_DIR,
    SPAN_KEY_COLUMNS,
    SpanStore,
    TurnStore,
    decode_attributes,
    encode_attributes,
    read_key_columns,
    record_key,
    remove_stale_temp_files,
    write_parquet_atomic,
)
from turnscore.ingest.turn import Call, Tool, Turn

TRACE = "0af7651916cd43dd8448eb211c80319c"
OTHER = "5b8efff798038103d269b633813fc60c"
NOV_30 = 1_795_996_800_000_000_000  # 2026-11-30T00:00:00Z in ns


def typed(value: Any) -> Any:
    """A value with its type spelled out, so 1, 1.0 and True (equal in Python) differ."""
    if isinstance(value, dict):
        return ("dict", [(k, typed(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return ("list", [typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.binary(max_size=20)
)
values: st.SearchStrategy[AttrValue] = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
attributes = st.dictionaries(st.text(max_size=12), values, max_size=6)


@settings(max_examples=300)
@given(attributes)
def test_attribute_encoding_round_trips_with_types(attrs: dict[str, AttrValue]) -> None:
    assert typed(decode_attributes(encode_attributes(attrs))) == typed(attrs)


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (b"abc", "bytes"),
        ("abc", "str"),
        (1, "int"),
        (1.0, "float"),
        (True, "bool"),
        (None, "NoneType"),
    ],
)
def test_ambiguous_values_keep_their_type(value: AttrValue, kind: str) -> None:
    back = decode_attributes(encode_attributes({"k": value}))["k"]
    assert type(back).__name__ == kind
    assert back == value


def _span(span_id: str, start: int = NOV_30 + 5, **kw: Any) -> RawSpan:
    fields: dict[str, Any] = {
        "trace_id": TRACE,
        "span_id": span_id,
        "parent_span_id": None,
        "name": "chat",
        "kind": 3,
        "start_unix_nano": start,
        "end_unix_nano": start + 1000,
        "status_code": 2,
        "status_message": "boom",
        "attributes": {
            "gen_ai.usage.input_tokens": 12,
            "ratio": 0.5,
            "blob": b"\x00\xff",
            "nested": {"a": [1, "x", None, 2.5]},
            "flag": True,
        },
        "events": (RawEvent("exception", start + 10, {"exception.type": "ValueError"}),),
        "resource": {"service.name": "svc"},
        "scope_name": "scope",
        "scope_version": "1.0",
        "source": "a.json",
        "position": "line 1",
    }
    fields.update(kw)
    return RawSpan(**fields)


def _log(span_id: str = "b7ad6b7169203331", **kw: Any) -> RawLog:
    fields: dict[str, Any] = {
        "trace_id": TRACE,
        "span_id": span_id,
        "event_name": "gen_ai.client.inference.operation.details",
        "time_unix_nano": NOV_30 + 7,
        "body": {"gen_ai.input.messages": [{"role": "user", "parts": [{"content": "hi"}]}]},
        "attributes": {"event.name": "gen_ai.client.inference.operation.details"},
        "resource": {"service.name": "svc"},
        "source": "a.logs.json",
        "position": "request 1",
    }
    fields.update(kw)
    return RawLog(**fields)


def _typed_record(rec: RawSpan | RawLog) -> Any:
    if isinstance(rec, RawSpan):
        return (
            rec.trace_id,
            rec.span_id,
            rec.parent_span_id,
            rec.name,
            rec.kind,
            rec.start_unix_nano,
            rec.end_unix_nano,
            rec.status_code,
            rec.status_message,
            typed(rec.attributes),
            [(e.name, e.time_unix_nano, typed(e.attributes)) for e in rec.events],
            [(k.trace_id, k.span_id, typed(k.attributes)) for k in rec.links],
            typed(rec.resource),
            rec.scope_name,
            rec.scope_version,
            rec.source,
            rec.position,
        )
    return (
        rec.trace_id,
        rec.span_id,
        rec.event_name,
        rec.time_unix_nano,
        typed(rec.body),
        typed(rec.attributes),
        typed(rec.resource),
        rec.source,
        rec.position,
        rec.occurrence,
    )


def test_spans_and_logs_round_trip_through_the_store(tmp_path: Path) -> None:
    records = [
        _span("b7ad6b7169203331"),
        _span("00f067aa0ba902b7", parent_span_id="b7ad6b7169203331"),
        _span("1111111111111111", links=(RawLink(OTHER, "2222222222222222", {"n": 1.0}),
                                         RawLink(OTHER, "3333333333333333"))),
        _log(),
    ]
    store = SpanStore(tmp_path, "run1")
    store.write(records)
    back = store.read({TRACE})
    assert sorted(map(_typed_record, back.spans)) == sorted(map(_typed_record, records[:3]))
    assert [_typed_record(lg) for lg in back.logs] == [_typed_record(records[3])]
    assert back.keys() == {record_key(r) for r in records}
    assert store.read({"ffffffffffffffffffffffffffffffff"}).spans == []


def test_corpus_records_round_trip_exactly(tmp_path: Path, corpus_dir: Path) -> None:
    files = [
        corpus_dir / "otel-openai-v2_latest-eventonly" / "parallel_tools.json",
        corpus_dir / "otel-openai-v2_latest-eventonly" / "parallel_tools.logs.json",
        corpus_dir / "strands_default" / "multi_turn.json",
    ]
    records = [r for f in files for r in read_file(f) if isinstance(r, RawSpan | RawLog)]
    store = SpanStore(tmp_path, "run1")
    store.write(records)
    back = store.read({r.trace_id for r in records if r.trace_id})
    assert sorted(map(repr, map(_typed_record, [*back.spans, *back.logs]))) == sorted(
        map(repr, map(_typed_record, records))
    )


def test_files_are_partitioned_by_utc_date_and_named_by_ingest(tmp_path: Path) -> None:
    day_ns = 86_400 * 10**9
    store = SpanStore(tmp_path, "abc123")
    written = store.write(
        [
            _span("1111111111111111", start=NOV_30 - 1),
            _span("2222222222222222", start=NOV_30 + day_ns - 1),
        ]
    )
    rel = sorted(str(p.relative_to(tmp_path)) for p in written)
    assert rel == [
        "spans/date=2026-11-29/part-abc123-00001.parquet",
        "spans/date=2026-11-30/part-abc123-00002.parquet",
    ]
    table = pq.read_table(written[0])
    assert table.schema.equals(arrow_schema(SPAN_FIELDS), check_metadata=False)
    assert table.schema.field("attributes").metadata[b"description"]


@pytest.mark.parametrize("reopen", [False, True], ids=["same-run", "next-run"])
def test_links_are_stored_and_find_traces(tmp_path: Path, reopen: bool) -> None:
    store = SpanStore(tmp_path, "r")
    other, third, fourth = "1" * 32, "2" * 32, "3" * 32
    store.write(
        [
            _span("b7ad6b7169203331"),
            _span("00f067aa0ba902b7", trace_id=other),
            _span("00f067aa0ba902b8", trace_id=third),
            _span("00f067aa0ba902b9", trace_id=fourth),
        ],
        {
            (TRACE, "b7ad6b7169203331"): SpanLinks(conversation_id="sess-1"),
            (other, "00f067aa0ba902b7"): SpanLinks(history_key="h1"),
            (third, "00f067aa0ba902b8"): SpanLinks(prefix_keys=("p1", "p2")),
            (fourth, "00f067aa0ba902b9"): SpanLinks(response_id="chatcmpl-1"),
        },
    )
    if reopen:  # the index is rebuilt from the files
        store.close()
        (tmp_path / INDEX_DIR / "spans.sqlite3").unlink()
        store = SpanStore(tmp_path, "r2")
    assert store.linked_traces(Lookups(conversations={"sess-1"})) == {TRACE}
    assert store.linked_traces(Lookups(prefixes={"h1"})) == {other}
    assert store.linked_traces(Lookups(histories={"p2"})) == {third}
    assert store.linked_traces(Lookups(responses={"chatcmpl-1"})) == {fourth}
    assert store.linked_traces(Lookups({"sess-1"}, {"h1"}, {"p1"})) == {TRACE, other, third}
    assert store.linked_traces(Lookups({"nope"}, {"p1"}, {"h1"}, {"sess-1"})) == set()
    assert [s.span_id for s in store.read_conversations({"sess-1"}).spans] == ["b7ad6b7169203331"]


def test_span_files_written_before_the_response_key_still_read_and_link(
    tmp_path: Path,
) -> None:
    """A part file without the `response_id` column (written before it existed) reads
    back whole, keeps its other keys, and carries no response keys; files written since
    carry them, in the same store."""
    store = SpanStore(tmp_path, "old")
    [old_file] = store.write(
        [_span("b7ad6b7169203331"), _log()],
        {(TRACE, "b7ad6b7169203331"): SpanLinks(conversation_id="sess-1", history_key="h1",
                                                  response_id="chatcmpl-1")},
    )
    store.close()
    write_parquet_atomic(pq.read_table(old_file).drop_columns(["response_id"]), old_file)
    (tmp_path / INDEX_DIR / "spans.sqlite3").unlink()
    store = SpanStore(tmp_path, "new")
    other = "1" * 32
    store.write([_span("00f067aa0ba902b7", trace_id=other)],
                {(other, "00f067aa0ba902b7"): SpanLinks(response_id="chatcmpl-1")})
    assert "response_id" not in pq.read_table(old_file).column_names
    back = store.read({TRACE})
    assert [_typed_record(s) for s in back.spans] == [_typed_record(_span("b7ad6b7169203331"))]
    assert [_typed_record(lg) for lg in back.logs] == [_typed_record(_log())]
    assert store.linked_traces(Lookups(conversations={"sess-1"}, prefixes={"h1"})) == {TRACE}
    assert store.linked_traces(Lookups(responses={"chatcmpl-1"})) == {other}
    keys = read_key_columns(old_file)
    assert keys.column_names == list(SPAN_KEY_COLUMNS)
    assert keys["response_id"].null_count == keys.num_rows == 2


def test_span_files_written_before_span_links_read_without_them(tmp_path: Path) -> None:
    """A part file without the `links` column reads back with no links; a trace is found by
    its id for a trace that continues it (`Lookups.continues`), in old files and new."""
    store = SpanStore(tmp_path, "old")
    [old_file] = store.write([_span("b7ad6b7169203331")])
    store.close()
    write_parquet_atomic(pq.read_table(old_file).drop_columns(["links"]), old_file)
    (tmp_path / INDEX_DIR / "spans.sqlite3").unlink()
    store = SpanStore(tmp_path, "new")
    store.write([_span("00f067aa0ba902b7", trace_id=OTHER,
                       links=(RawLink(TRACE, "b7ad6b7169203331"),))])
    assert [_typed_record(s) for s in store.read({TRACE}).spans] == [
        _typed_record(_span("b7ad6b7169203331"))]
    assert store.read({OTHER}).spans[0].links == (RawLink(TRACE, "b7ad6b7169203331"),)
    assert store.linked_traces(Lookups(continues={TRACE})) == {TRACE}
    assert store.linked_traces(Lookups(continues={OTHER})) == {OTHER}
    assert store.linked_traces(Lookups(conversations={TRACE})) == set()


def test_a_failed_write_leaves_no_file_under_the_final_name(tmp_path: Path) -> None:
    target = tmp_path / "turns" / "date=2026-11-30" / "part-x-00001.parquet"

    class Broken:
        """Not a table: pyarrow fails part-way, like a crash mid-write."""

    with pytest.raises((TypeError, AttributeError)):
        write_parquet_atomic(Broken(), target)  # type: ignore[arg-type]
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_stale_temp_files_are_invisible_and_cleaned(tmp_path: Path) -> None:
    store = SpanStore(tmp_path, "r")
    [path] = store.write([_span("b7ad6b7169203331")])
    stale = path.with_name(".tmp-part-dead-00001.parquet.999")
    stale.write_bytes(path.read_bytes()[:100])  # a half-written file from a killed run
    turns_tmp = tmp_path / "turns" / "date=2026-11-30" / ".tmp-part-dead-00001.parquet.999"
    turns_tmp.parent.mkdir(parents=True)
    turns_tmp.write_bytes(b"PAR1")
    assert len(store.read({TRACE}).spans) == 1  # the stale file is not read
    assert remove_stale_temp_files(tmp_path) == 2
    assert not stale.exists() and not turns_tmp.exists()
    assert path.exists()


def _turn(turn_id: str, trace_id: str, answer: str | None, ingest_id: str = "run1") -> Turn:
    start = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    return Turn(
        turn_id=turn_id,
        trace_id=trace_id,
        conversation_id=trace_id,
        turn_index=0,
        started_at=start,
        ended_at=start,
        duration_ms=0.0,
        status="ok" if answer else "incomplete",
        request="What is 2+2?",
        tools=(Tool("calculator", "adds", '{"type":"object"}'),),
        tools_source="declared",
        calls=(
            Call(
                "calculator", "c1", '{"expression":"2+2"}', "4", started_at=start, duration_ms=1.5
            ),
        ),
        final_answer=answer,
        ingest_id=ingest_id,
        source="a.json",
    ).with_hash()


def _rows(store: TurnStore) -> list[tuple[str, str, str, str | None]]:
    return sorted((t.turn_id, t.trace_id, t.ingest_id, t.final_answer) for t in store.read_all())


def test_turn_store_keeps_one_row_per_turn(tmp_path: Path) -> None:
    first = TurnStore(tmp_path, "run1")
    first.replace([_turn("t1", "A", None), _turn("t2", "B", "yes")], {"A", "B"})
    second = TurnStore(tmp_path, "run2")
    result = second.replace([_turn("t1", "A", "4", "run2")], {"A"})
    assert _rows(second) == [("t1", "A", "run2", "4"), ("t2", "B", "run1", "yes")]
    assert result.removed_ids == ()
    # A rebuild of trace B that no longer yields t2 removes it.
    third = TurnStore(tmp_path, "run3")
    result = third.replace([_turn("t3", "B", "no", "run3")], {"B"})
    assert result.removed_ids == ("t2",)
    assert _rows(third) == [("t1", "A", "run2", "4"), ("t3", "B", "run3", "no")]
    assert not any(p.name.startswith(".") for p in (tmp_path / "turns").rglob("*"))


def test_an_unchanged_turn_keeps_its_lineage(tmp_path: Path) -> None:
    TurnStore(tmp_path, "run1").replace([_turn("t1", "A", "4")], {"A"})
    store = TurnStore(tmp_path, "run2")
    store.replace([_turn("t1", "A", "4", "run2")], {"A"})
    [turn] = store.read_all()
    assert turn == _turn("t1", "A", "4", "run1")
    assert len(store.files()) == 1


def test_temp_names_never_collide_with_final_names(tmp_path: Path) -> None:
    path = tmp_path / "spans" / "date=2026-11-30" / "part-r-00001.parquet"
    write_parquet_atomic(arrow_schema(SPAN_FIELDS).empty_table(), path)
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    assert pq.read_table(path).num_rows == 0


def test_records_alike_in_one_request_are_as_many_and_stay_so(tmp_path: Path) -> None:
    """The OTel JS OpenAI instrumentation with content off stamps in milliseconds: the user
    messages a call replays, without their text, are records alike. Each is a record, in
    the reader, the store and a rebuild; a retried request's copies are copies."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

    from tests.ingest.instrumented.stacks.record import FIXTURES
    from turnscore.ingest.pipeline import ingest_paths
    from turnscore.ingest.store import TurnStore

    folder = FIXTURES / "openai-js-otel-nocontent" / "multi_turn"
    traces, logs = (sorted(folder.glob(f"*.{kind}.pb")) for kind in ("traces", "logs"))
    records = [r for f in logs for r in read_file(f) if isinstance(r, RawLog)]
    alike = [r for r in records if r.occurrence]
    assert alike and all(r.event_name == "gen_ai.user.message" for r in alike)
    # The request twice in one JSON Lines file, as a file exporter writes a retried batch.
    request = logs_service_pb2.ExportLogsServiceRequest.FromString(logs[0].read_bytes())
    line = json_format.MessageToJson(request, indent=None)
    retried = tmp_path / "retried.logs.jsonl"
    retried.write_text(f"{line}\n{line}\n")
    batch = ingest_paths([*traces, retried], tmp_path / "out")
    assert batch.errors == ()
    turns = sorted(TurnStore(tmp_path / "out", "read").read_all(), key=lambda t: t.turn_index)
    assert [(t.turn_index, t.llm_calls, [c.name for c in t.calls]) for t in turns] == [
        (0, 2, ["search_docs"]), (1, 2, ["calculator"])]
    store = SpanStore(tmp_path / "out", "read")
    back = store.read({r.trace_id for r in records if r.trace_id}).logs
    def content(log: RawLog) -> str:  # where it was read from aside: the retried file
        return repr((*_typed_record(log)[:7], log.occurrence))

    assert sorted(map(content, back)) == sorted(map(content, records))
