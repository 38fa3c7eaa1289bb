"""write_scores: one current row per (turn, scorer), replaced rows in history, atomic."""

from __future__ import annotations

from pathlib import Path

import duckdb
import orjson
import pyarrow as pa
import pytest

from turnscore.scorers.base import Score, Status, Usage
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.scores import COLUMNAR_SCHEMA, ScoreRow, write_scores


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    return open_warehouse(tmp_path)


def _row(turn: str, value: float, *, version: str = "1", scorer: str = "s") -> ScoreRow:
    return ScoreRow(turn, scorer, version, f"hash-{turn}", Score.scored(value, label="ok"))


def test_new_scores_are_written_with_every_field(con: duckdb.DuckDBPyConnection) -> None:
    judged = Score(Status.SCORED, 7.0, "good", "it used the tool well",
                   {"calls": [{"name": "get_weather", "verdict": "right"}]}, judge="m-1",
                   prompt_sha="abc", usage=Usage(120, 30, 0.0012, 850.5, 2))
    written = write_scores(con, [ScoreRow("t1", "tool_usage", "3", "h1", judged),
                                 ScoreRow("t1", "g", "1", "h1", Score.failed("timeout"))], "r1")
    assert written == 2
    row = con.execute(
        "SELECT scorer_version, status, value, label, explanation, details, judge, prompt_sha, "
        "input_tokens, output_tokens, cost_usd, latency_ms, attempts, error, content_hash, "
        "run_id FROM scores WHERE scorer = 'tool_usage'").fetchall()[0]
    assert row[:5] == ("3", "scored", 7.0, "good", "it used the tool well")
    assert orjson.loads(row[5]) == {"calls": [{"name": "get_weather", "verdict": "right"}]}
    assert row[6:] == ("m-1", "abc", 120, 30, 0.0012, 850.5, 2, None, "h1", "r1")
    err = con.execute("SELECT status, value, error FROM scores WHERE scorer = 'g'").fetchall()
    assert err == [("error", None, "timeout")]
    assert con.execute("SELECT count(*) FROM scores_history").fetchall() == [(0,)]


def test_a_replaced_score_moves_to_history(con: duckdb.DuckDBPyConnection) -> None:
    write_scores(con, [_row("t1", 1.0), _row("t2", 2.0)], "r1")
    write_scores(con, [_row("t1", 10.0, version="2")], "r2")
    write_scores(con, [_row("t1", 100.0, version="3")], "r3")
    current = con.execute("SELECT turn_id, value, scorer_version, run_id FROM scores "
                          "ORDER BY turn_id").fetchall()
    assert current == [("t1", 100.0, "3", "r3"), ("t2", 2.0, "1", "r1")]
    history = con.execute("SELECT turn_id, value, scorer_version, run_id, "
                          "replaced_at >= scored_at FROM scores_history "
                          "ORDER BY replaced_at").fetchall()
    assert history == [("t1", 1.0, "1", "r1", True), ("t1", 10.0, "2", "r2", True)]


def test_a_batch_with_a_bad_row_writes_nothing(con: duckdb.DuckDBPyConnection) -> None:
    write_scores(con, [_row("t1", 1.0)], "r1")
    bad = ScoreRow("t2", "s", "1", "h", Score("bogus", 1.0))  # type: ignore[arg-type]
    with pytest.raises(duckdb.ConstraintException):
        write_scores(con, [_row("t1", 5.0, version="2"), bad], "r2")
    assert con.execute("SELECT turn_id, value FROM scores").fetchall() == [("t1", 1.0)]
    assert con.execute("SELECT count(*) FROM scores_history").fetchall() == [(0,)]
    write_scores(con, [_row("t1", 5.0, version="2")], "r3")  # the connection is usable
    assert con.execute("SELECT value FROM scores").fetchall() == [(5.0,)]


def test_two_scores_for_one_pair_in_a_batch_keep_the_last(
        con: duckdb.DuckDBPyConnection) -> None:
    assert write_scores(con, [_row("t1", 1.0), _row("t1", 2.0)], "r1") == 1
    assert con.execute("SELECT value FROM scores").fetchall() == [(2.0,)]
    assert con.execute("SELECT count(*) FROM scores_history").fetchall() == [(0,)]


def test_an_empty_batch_is_a_no_op(con: duckdb.DuckDBPyConnection) -> None:
    assert write_scores(con, [], "r1") == 0
    assert con.execute("SELECT count(*) FROM scores").fetchall() == [(0,)]


def _columns(turns: list[str], scorer: str = "c") -> pa.Table:
    n = len(turns)
    return pa.table({
        "turn_id": turns, "scorer": [scorer] * n, "scorer_version": ["1"] * n,
        "content_hash": [f"hash-{t}" for t in turns], "status": ["scored"] * n,
        "value": [1.0] * n, "label": ["pass"] * n, "explanation": ["why"] * n,
        "details": ['{"missing":[]}'] * n,
    }, schema=pa.schema([f for f in COLUMNAR_SCHEMA if f.name in _CODE_COLUMNS]))


_CODE_COLUMNS = ("turn_id", "scorer", "scorer_version", "content_hash", "status", "value",
                 "label", "explanation", "details")


def test_columnar_scores_are_written_with_the_other_fields_filled(
        con: duckdb.DuckDBPyConnection) -> None:
    written = write_scores(con, [_row("t1", 0.5)], "r1", columns=[_columns(["t1", "t2"])])
    assert written == 3
    rows = con.execute(
        "SELECT turn_id, scorer_version, status, value, label, explanation, details, judge, "
        "prompt_sha, input_tokens, output_tokens, cost_usd, latency_ms, attempts, error, "
        "content_hash, run_id FROM scores WHERE scorer = 'c' ORDER BY turn_id").fetchall()
    assert [r[:6] for r in rows] == [("t1", "1", "scored", 1.0, "pass", "why"),
                                    ("t2", "1", "scored", 1.0, "pass", "why")]
    assert all(orjson.loads(r[6]) == {"missing": []} for r in rows)
    assert [r[7:] for r in rows] == [(None,) * 6 + (0, None, f"hash-{t}", "r1")
                                     for t in ("t1", "t2")]
    assert con.execute("SELECT count(*) FROM scores WHERE scorer = 's'").fetchall() == [(1,)]


def test_a_batch_that_replaces_nothing_is_inserted_and_a_current_row_fails_it(
        con: duckdb.DuckDBPyConnection) -> None:
    assert write_scores(con, [_row("t1", 1.0)], "r1", replacing=False) == 1
    with pytest.raises(duckdb.ConstraintException):  # the promise was broken: nothing written
        write_scores(con, [_row("t2", 2.0), _row("t1", 5.0, version="2")], "r2",
                     replacing=False)
    assert con.execute("SELECT turn_id, value FROM scores").fetchall() == [("t1", 1.0)]
    assert con.execute("SELECT count(*) FROM scores_history").fetchall() == [(0,)]
