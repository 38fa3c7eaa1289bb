"""Opening the published snapshot survives a publish that swaps it mid-connect."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from turnscore.warehouse import query
from turnscore.warehouse.publish import PUBLISHED_DB

SWAPPED = "IO Error: No more data remaining in MetadataReader"


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / PUBLISHED_DB
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT 42 AS answer")
    con.close()
    return path


def _failing(times: int, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """`open_readonly` fails `times` times as a connect during a swap does, then opens."""
    calls: list[Path] = []
    real = query.open_readonly

    def flaky(path: Path) -> duckdb.DuckDBPyConnection:
        calls.append(path)
        if len(calls) <= times:
            raise duckdb.IOException(SWAPPED)
        return real(path)

    monkeypatch.setattr(query, "open_readonly", flaky)
    monkeypatch.setattr(query.time, "sleep", lambda _: None)
    return calls


def test_a_connect_that_meets_a_swap_is_tried_again(
        snapshot: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _failing(query.SNAPSHOT_OPEN_ATTEMPTS - 1, monkeypatch)
    con, path, is_snapshot = query.open_for_reading(snapshot.parent, published=True)
    try:
        assert con.execute("SELECT answer FROM t").fetchall() == [(42,)]
    finally:
        con.close()
    assert (path, is_snapshot) == (snapshot, True)
    assert len(calls) == query.SNAPSHOT_OPEN_ATTEMPTS


def test_a_snapshot_that_never_opens_raises_its_error(
        snapshot: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _failing(query.SNAPSHOT_OPEN_ATTEMPTS, monkeypatch)
    with pytest.raises(duckdb.IOException, match="MetadataReader"):
        query.open_for_reading(snapshot.parent, published=True)
    assert len(calls) == query.SNAPSHOT_OPEN_ATTEMPTS
