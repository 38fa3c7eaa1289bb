"""The stores' key index: lookups by key, kept true to the part files on disk."""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import astuple
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow.parquet as pq
import pytest

from turnscore.ingest import store
from turnscore.ingest.key_index import KeyIndex, KeyRow
from turnscore.ingest.links import Lookups, SpanLinks
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.records import RawSpan
from turnscore.ingest.store import INDEX_DIR, SpanStore, TurnStore, sync_indexes

NOV_30 = 1_795_996_800_000_000_000


class Reader:
    """Key rows per file from a dict, counting which files were read."""

    def __init__(self, rows: dict[str, list[KeyRow]]) -> None:
        self.rows = rows
        self.read: list[str] = []

    def __call__(self, path: Path) -> list[KeyRow]:
        self.read.append(path.name)
        return self.rows[path.name]


def _file(folder: Path, name: str, content: bytes = b"x") -> Path:
    path = folder / "date=2026-11-30" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def test_lookups_answer_by_kind_and_key(tmp_path: Path) -> None:
    a, b = _file(tmp_path, "a.parquet"), _file(tmp_path, "b.parquet")
    index = KeyIndex(tmp_path / "ix.sqlite3", tmp_path)
    index.put(a, [("trace", "T1", "T1"), ("conversation", "c1", "T1")])
    index.put(b, [("trace", "T2", "T2"), ("conversation", "c1", "T2"), ("trace", "T1", "T1")])
    assert index.files_with("trace", {"T1"}) == {a, b}
    assert index.files_with("trace", {"T2", "nope"}) == {b}
    assert index.files_with("conversation", {"T1"}) == set()  # kinds do not mix
    assert index.traces_with("conversation", {"c1"}) == {"T1", "T2"}
    assert index.traces_with("trace", set()) == set()
    index.put(b, [("trace", "T3", "T3")])  # a rewritten file replaces its keys
    assert index.files_with("trace", {"T1", "T2", "T3"}) == {a, b}
    assert index.files_with("trace", {"T2"}) == set()
    index.remove(a)
    assert index.files_with("trace", {"T1"}) == set()


def test_sync_reads_only_files_it_does_not_know_as_they_are(tmp_path: Path) -> None:
    a, b = _file(tmp_path, "a.parquet"), _file(tmp_path, "b.parquet")
    reader = Reader({"a.parquet": [("trace", "T1", "T1")], "b.parquet": [("trace", "T2", "T2")]})
    KeyIndex(tmp_path / "ix.sqlite3", tmp_path).sync([a, b], reader)
    assert sorted(reader.read) == ["a.parquet", "b.parquet"]

    reader.read.clear()
    reader.rows["b.parquet"] = [("trace", "T3", "T3")]
    b.write_bytes(b"rewritten")  # behind the index's back, e.g. a crash before its commit
    c = _file(tmp_path, "c.parquet")
    reader.rows["c.parquet"] = [("trace", "T4", "T4")]
    a.unlink()
    index = KeyIndex(tmp_path / "ix.sqlite3", tmp_path)
    index.sync([b, c], reader)
    assert sorted(reader.read) == ["b.parquet", "c.parquet"]
    assert index.files_with("trace", {"T1", "T2"}) == set()
    assert index.files_with("trace", {"T3", "T4"}) == {b, c}


def test_a_damaged_index_is_rebuilt(tmp_path: Path) -> None:
    a = _file(tmp_path, "a.parquet")
    (tmp_path / "ix.sqlite3").write_bytes(b"not a database, " * 100)
    index = KeyIndex(tmp_path / "ix.sqlite3", tmp_path)
    index.sync([a], Reader({"a.parquet": [("trace", "T1", "T1")]}))
    assert index.files_with("trace", {"T1"}) == {a}


def _span(trace_id: str, span_id: str) -> RawSpan:
    return RawSpan(trace_id, span_id, None, "chat", 3, NOV_30, NOV_30 + 1, 0, "", {"k": "v"})


def test_a_moved_folder_keeps_its_index(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    trace = "1" * 32
    store = SpanStore(old, "r")
    store.write([_span(trace, "1" * 16)], {(trace, "1" * 16): SpanLinks(conversation_id="s")})
    store.close()
    shutil.copytree(old, new, copy_function=shutil.copy2)  # keeps mtimes
    shutil.rmtree(old)
    moved = SpanStore(new, "r2")
    assert moved.linked_traces(Lookups(conversations={"s"})) == {trace}
    assert [s.span_id for s in moved.read({trace}).spans] == ["1" * 16]


def test_stores_answer_the_same_without_their_index(tmp_path: Path) -> None:
    traces = [f"{i:032x}" for i in range(1, 6)]
    store = SpanStore(tmp_path, "r")
    store.write(
        [_span(t, f"{i + 1:016x}") for i, t in enumerate(traces)],
        {(traces[0], f"{1:016x}"): SpanLinks(conversation_id="s", history_key="h")},
    )
    store.close()
    with_index = SpanStore(tmp_path, "r2")
    expected = (with_index.read(traces[:3]).spans, with_index.linked_traces(Lookups({"s"}, {"h"})))
    with_index.close()
    shutil.rmtree(tmp_path / INDEX_DIR)
    sync_indexes(tmp_path)  # what the first run after losing it does
    rebuilt = SpanStore(tmp_path, "r3")
    got = (rebuilt.read(traces[:3]).spans, rebuilt.linked_traces(Lookups({"s"}, {"h"})))
    assert got == expected and len(got[0]) == 3 and got[1] == {traces[0]}
    assert TurnStore(tmp_path, "r4").files() == []


def test_index_files_stay_out_of_the_stores(tmp_path: Path) -> None:
    store = SpanStore(tmp_path, "r")
    store.write([_span("1" * 32, "1" * 16)])
    store.close()
    sync_indexes(tmp_path)
    assert sorted(p.name for p in (tmp_path / "spans").iterdir()) == ["date=2026-11-30"]
    assert all(not n.endswith(("-wal", "-shm")) for n in os.listdir(tmp_path / INDEX_DIR))


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "ingest.py"
    spec = importlib.util.spec_from_file_location("bench_ingest", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_night_of_new_sessions_reads_no_stored_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What makes a night cost what its input costs: nothing stored is read back."""
    bench = _bench()
    gen = bench.Generator(seed=3)
    old = bench.generate(tmp_path / "old", 400, 200, gen, ("jsonl",))["jsonl"]
    new = bench.generate(tmp_path / "new", 400, 200, gen, ("jsonl",))["jsonl"]
    wh = tmp_path / "wh"
    ingest_paths(old, wh, ingest_id="old", group_bytes=1)
    stored = {p for p in wh.rglob("part-*.parquet")}
    opened: list[Path] = []
    real_table, real_file = pq.read_table, pq.ParquetFile

    def read_table(source: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(Path(source))
        return real_table(source, *args, **kwargs)

    def parquet_file(source: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(Path(source))
        return real_file(source, *args, **kwargs)

    monkeypatch.setattr(store.pq, "read_table", read_table)
    monkeypatch.setattr(store.pq, "ParquetFile", parquet_file)
    night = ingest_paths(new, wh, ingest_id="new", group_bytes=1)
    monkeypatch.undo()
    assert night.turns > 30 and night.new_spans == 400
    assert not stored & set(opened)
    alone = ingest_paths(new, tmp_path / "alone", ingest_id="new", group_bytes=1)
    assert night.turns == alone.turns and night.rebuilt_traces == alone.rebuilt_traces
    assert _turn_rows(wh, "new") == _turn_rows(tmp_path / "alone", "new")


def _turn_rows(folder: Path, ingest_id: str) -> list[tuple[Any, ...]]:
    turns = TurnStore(folder, "read").read_all()
    return sorted(astuple(t) for t in turns if t.ingest_id == ingest_id)
