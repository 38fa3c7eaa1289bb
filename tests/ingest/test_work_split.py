"""How ingest's work is cut (worker processes, batches) never changes its result."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.outputs import turn_rows
from turnscore.ingest.pipeline import IngestBatch, ingest_paths

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"


def _summary(batch: IngestBatch) -> tuple[Any, ...]:
    return (
        batch.files, batch.skipped, batch.spans, batch.logs, batch.new_spans, batch.new_logs,
        batch.turns, batch.rebuilt_traces, batch.removed_turn_ids, sorted(batch.errors, key=repr),
    )


def test_late_spans_rebuild_alike_on_one_and_two_workers(tmp_path: Path) -> None:
    """Two batches: the second file's spans join traces stored by the first."""
    files = sorted(p for p in CORPUS.glob("otel-genai-openai/*.json")
                   if p.name != "ground_truth.json")
    assert len(files) > 2
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        first = ingest_paths(files[::2], out, ingest_id="a", workers=workers)
        second = ingest_paths([*files[1::2], *files[::2]], out, ingest_id="b", workers=workers,
                              known_file_keys={f.file_key for f in first.files})
        assert second.files and first.files
    assert turn_rows(tmp_path / "w2") == turn_rows(tmp_path / "w1")


def test_the_workers_switch_is_read_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = sorted(CORPUS.glob("pydantic-ai/*.json"))[0]
    shutil.copy(src, tmp_path / "in.json")
    monkeypatch.setenv("TURNSCORE_INGEST_WORKERS", "2")
    fast = ingest_paths([tmp_path / "in.json"], tmp_path / "fast", ingest_id="i")
    monkeypatch.setenv("TURNSCORE_INGEST_WORKERS", "not a number")
    plain = ingest_paths([tmp_path / "in.json"], tmp_path / "plain", ingest_id="i")
    assert _summary(fast) == _summary(plain) and fast.turns > 0
