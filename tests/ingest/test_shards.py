"""Partitions on forked workers give what one process gives, and a failed worker loses nothing.

The input is the benchmark's generated agent traffic (real OTel SDK spans); the share
threshold is lowered so that small inputs are split among processes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.outputs import bench_ingest, span_rows, turn_rows
from turnscore.ingest import shards
from turnscore.ingest.pipeline import IngestBatch, ingest_paths


@pytest.fixture(scope="module")
def traffic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shards")
    bench_ingest().generate(root, 2_400, 800, formats=("jsonl",))
    return root / "jsonl"




def _summary(batch: IngestBatch) -> tuple[Any, ...]:
    return (batch.spans, batch.new_spans, batch.turns, sorted(batch.errors, key=repr))


def _shard_files(out: Path) -> set[str]:
    return {p.name for p in (out / "spans").rglob("part-*s[1-9]-*.parquet")}


@pytest.mark.parametrize("workers", [2, 3])
def test_shards_on_workers_give_what_one_process_gives(
    traffic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.setattr(shards, "MIN_SHARED_SPANS", 1)
    one = ingest_paths([traffic], tmp_path / "one", ingest_id="i", workers=1)
    many = ingest_paths([traffic], tmp_path / "many", ingest_id="i", workers=workers)
    assert many.turns > 100
    assert _summary(many) == _summary(one)
    assert turn_rows(tmp_path / "many") == turn_rows(tmp_path / "one")
    assert span_rows(tmp_path / "many") == span_rows(tmp_path / "one")
    assert _shard_files(tmp_path / "many")  # the children wrote their shards' spans
    assert not _shard_files(tmp_path / "one")


def _dying_child(writer: Any, job: Any, share: Any, shard: int) -> None:
    """Writes its shard's span files, then dies before sending anything back."""
    job(share, shard)
    os._exit(1)


def test_a_failed_worker_costs_only_time(
    traffic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shards, "MIN_SHARED_SPANS", 1)
    one = ingest_paths([traffic], tmp_path / "one", ingest_id="i", workers=1)
    monkeypatch.setattr(shards, "_child", _dying_child)
    many = ingest_paths([traffic], tmp_path / "many", ingest_id="i", workers=2)
    assert _summary(many) == _summary(one)
    assert turn_rows(tmp_path / "many") == turn_rows(tmp_path / "one")
    # The dead child's files were removed before its shard ran again here: no span twice.
    assert span_rows(tmp_path / "many") == span_rows(tmp_path / "one")


def _hanging_child(writer: Any, job: Any, share: Any, shard: int) -> None:
    time.sleep(60)


def _failing_job(writer: Any, job: Any, share: Any, shard: int) -> None:
    with writer:
        writer.send("Traceback (most recent call last): ... RuntimeError: boom")


@pytest.mark.parametrize("child", [_hanging_child, _failing_job], ids=["hangs", "raises"])
def test_a_worker_that_hangs_or_raises_is_replaced_here(
    traffic: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    child: Any,
) -> None:
    monkeypatch.setattr(shards, "MIN_SHARED_SPANS", 1)
    one = ingest_paths([traffic], tmp_path / "one", ingest_id="i", workers=1)
    monkeypatch.setattr(shards, "_child", child)
    monkeypatch.setattr(shards, "CHILD_TIMEOUT", 0.5)
    many = ingest_paths([traffic], tmp_path / "many", ingest_id="i", workers=2)
    assert _summary(many) == _summary(one)
    assert turn_rows(tmp_path / "many") == turn_rows(tmp_path / "one")
    assert span_rows(tmp_path / "many") == span_rows(tmp_path / "one")
    expected = "no answer in 0 s" if child is _hanging_child else "RuntimeError: boom"
    assert expected in caplog.text
