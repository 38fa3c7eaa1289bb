"""Incremental publishing against its oracle: after each step of a sequence of loads,
reloads, rescoring, rebuilt-away turns and label changes, the snapshot's tables and every
view's table and Parquet export equal what the live warehouse computes from scratch, and
the publishes after the first started from the previous one."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests.warehouse.turn_factory import T0, load_turns, make_turn, write_jsonl
from turnscore.ingest.turn import Turn
from turnscore.scorers.base import Score, Usage
from turnscore.warehouse.db import open_warehouse, quote_ident
from turnscore.warehouse.labels import load_labels
from turnscore.warehouse.publish import PUBLISHED_DB, PUBLISHED_DIR, Published, publish_snapshot
from turnscore.warehouse.publish_export import MANIFEST
from turnscore.warehouse.scores import ScoreRow, write_scores

Step = tuple[str, int, int]
"""(what, first turn, last turn + 1)."""

SEQUENCES: dict[str, list[Step]] = {
    "new turns each night": [("load", 0, 24), ("score", 0, 24), ("load", 24, 32),
                             ("score", 24, 32), ("load", 32, 33), ("score", 32, 33)],
    "reloaded turns and rescored pairs replace the old rows": [
        ("load", 0, 20), ("score", 0, 20), ("change", 2, 6), ("rescore", 2, 6),
        ("rescore", 10, 12)],
    "turns move to other days and are rebuilt away": [
        ("load", 0, 20), ("score", 0, 20), ("move", 3, 6), ("delete", 8, 11),
        ("score", 0, 20), ("load", 8, 9)],
    "label changes restale scores": [
        ("load", 0, 16), ("labels", 0, 4), ("score", 0, 16), ("labels", 2, 8),
        ("rescore", 0, 3)],
}

JUDGED = ("tool_usage", "tractability")
CODED = ("tool_grounding", "answer_correctness", "call_validity")


def _turn(i: int, run: int, *, answer: str = "done", shift: timedelta = timedelta()
          ) -> Turn:
    """Turns seven hours apart, so a sequence spans several UTC days, stamped with the
    run that loads them (as ingest stamps a turn it writes)."""
    base = make_turn(i, final_answer=answer, case_id=f"case-{i}" if i % 2 else None)
    started = T0 + timedelta(hours=7 * i) + shift
    return replace(base, started_at=started, ended_at=started + timedelta(seconds=2),
                   ingest_id=f"ingest-{run}").with_hash()


def _score(scorer: str, i: int, run: int) -> Score:
    # No two turns tie (arg_min in tractability_by_kind would pick either).
    value = (i * 7 + run) % 10 + i / 100
    if scorer in JUDGED:
        details = ({"calls": [{"tool": "get_weather", "choice_ok": i % 3 > 0,
                               "arguments_ok": True, "problem": "wrong city"}],
                    "call_needed": "true"} if scorer == "tool_usage"
                   else {"request_kind": "lookup", "strain_signs": ["hedging"]})
        return Score.scored(value, explanation=f"run {run}", details=details, judge="rules-v1",
                            usage=Usage(10, 5, 0.01 * run, 30.0 + i, attempts=1))
    if i % 5 == 0:
        return Score.inconclusive("no canary")
    return Score.scored(min(value, 1.0))


def _apply(wh: Path, what: str, ids: range, run: int, tmp: Path) -> None:
    if what == "labels":
        cases = [{"id": f"case-{i}", "input": f"question {i}", "canary": f"c{run}"} for i in ids]
        load_labels(wh, [write_jsonl(tmp / f"labels-{run}.jsonl", cases)],
                    case_id_attribute="turnscore.case_id")
        return
    con = open_warehouse(wh)
    try:
        if what == "load":
            load_turns(con, [_turn(i, run) for i in ids])
        elif what == "change":
            load_turns(con, [_turn(i, run, answer=f"changed {run}") for i in ids])
        elif what == "move":
            load_turns(con, [_turn(i, run, shift=timedelta(days=3)) for i in ids])
        elif what == "delete":
            # What an ingest does to turns a rebuilt trace lost (ingest_run.DELETE_GONE_*).
            gone = [f"turn-{i:05d}" for i in ids]
            con.execute("INSERT INTO scores_history SELECT *, now() FROM scores "
                        "WHERE list_contains(?, turn_id)", [gone])
            con.execute("DELETE FROM scores WHERE list_contains(?, turn_id)", [gone])
            con.execute("DELETE FROM turns WHERE list_contains(?, turn_id)", [gone])
        else:
            hashes = dict(con.execute("SELECT turn_id, content_hash FROM turns").fetchall())
            # "score" writes the pairs without a score, as a score run; "rescore" all.
            have = set(con.execute("SELECT turn_id, scorer FROM scores").fetchall())
            rows = [ScoreRow(t, s, "1", hashes[t], _score(s, i, run))
                    for i in ids if (t := f"turn-{i:05d}") in hashes for s in (*JUDGED, *CODED)
                    if what == "rescore" or (t, s) not in have]
            write_scores(con, rows, f"run-{run}", replacing=what == "rescore")
    finally:
        con.close()


@pytest.mark.parametrize("steps", SEQUENCES.values(), ids=SEQUENCES.keys())
def test_every_incremental_snapshot_equals_a_full_recomputation(
        tmp_path: Path, steps: Sequence[Step]) -> None:
    wh = tmp_path / "wh"
    publishes: list[Published] = []
    for run, (what, first, last) in enumerate(steps):
        _apply(wh, what, range(first, last), run, tmp_path)
        before = _inodes(wh)
        publishes.append(publish_snapshot(wh))
        _assert_snapshot_is_the_live_warehouse(wh)
        kept = set(before.items()) & set(_inodes(wh).items())
        if publishes[-1].incremental:
            assert all(not rel.endswith("_manifest.json") for rel, _ in kept)
        if what == "load" and run > 1 and first > 0:
            # Old days of the per-turn views were linked, not written again.
            assert any(rel.startswith("turns_scored.parquet/") for rel, _ in kept), kept
    assert not publishes[0].incremental
    assert all(p.incremental for p in publishes[1:]), [p.seconds for p in publishes]
    assert "turns_scored" in publishes[-1].updated


def test_changed_view_definitions_publish_in_full(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _apply(wh, "load", range(6), 0, tmp_path)
    assert not publish_snapshot(wh).incremental
    _apply(wh, "score", range(6), 1, tmp_path)
    assert publish_snapshot(wh).incremental
    con = open_warehouse(wh)
    con.execute("CREATE VIEW n_turns AS SELECT count(*) AS n FROM turns")
    con.close()
    again = publish_snapshot(wh)
    assert not again.incremental and "n_turns" in again.views
    _assert_snapshot_is_the_live_warehouse(wh)


def test_a_snapshot_that_does_not_go_with_the_exports_publishes_in_full(tmp_path: Path
                                                                         ) -> None:
    wh = tmp_path / "wh"
    _apply(wh, "load", range(6), 0, tmp_path)
    publish_snapshot(wh)
    (wh / PUBLISHED_DB).touch()  # as a kill between the link swap and the rename leaves it
    _apply(wh, "score", range(6), 1, tmp_path)
    assert not publish_snapshot(wh).incremental
    _assert_snapshot_is_the_live_warehouse(wh)


def _inodes(wh: Path) -> dict[str, int]:
    folder = (wh / PUBLISHED_DIR).resolve()
    if not folder.is_dir():
        return {}
    return {str(p.relative_to(folder)): p.stat().st_ino for p in folder.rglob("*")
            if p.is_file()}


def _assert_snapshot_is_the_live_warehouse(wh: Path) -> None:
    con = duckdb.connect(str(wh / "warehouse.duckdb"), read_only=True)
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute("ATTACH ? AS snap (READ_ONLY)", [str(wh / PUBLISHED_DB)])
        views = {n for (n,) in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal "
            "AND database_name = current_database()").fetchall()}
        tables = {n for (n,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'snap'").fetchall()}
        live_tables = {n for (n,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
        ).fetchall()}
        assert tables == views | live_tables
        for name in sorted(tables):
            ident = quote_ident(name)
            expected = _rows(con, f"SELECT * FROM {ident}")
            assert _rows(con, f"SELECT * FROM snap.{ident}") == expected, name
            if name in views:
                exported = wh / PUBLISHED_DIR / f"{name}.parquet"
                assert _rows(con, "SELECT * FROM read_parquet(?)", [str(exported)]) == expected, \
                    name
        assert (wh / PUBLISHED_DIR / MANIFEST).is_file()
        assert not os.path.exists(wh / (PUBLISHED_DB + ".tmp"))
    finally:
        con.close()


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[object] | None = None
          ) -> list[str]:
    """The rows as a sorted list of reprs, numbers as floats to 9 significant digits (a
    mean over the same rows may differ in its last bits with the order they were summed
    in; Parquet holds a HUGEINT sum as a decimal)."""
    def norm(v: object) -> object:
        if isinstance(v, Decimal | int) and not isinstance(v, bool):
            v = float(v)  # a HUGEINT sum is a decimal in Parquet
        if isinstance(v, float):
            return v if math.isnan(v) else float(f"{v:.9g}")
        if isinstance(v, list | tuple):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v
    return sorted(repr(norm(list(r))) for r in con.execute(sql, params or []).fetchall())
