"""Loading labels into a real warehouse: upsert, bad rows, and how cases meet turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lockholder import held_by_another_process
from tests.warehouse.turn_factory import load_turns, make_turn, write_jsonl
from turnscore.scorers.labels import default_case_id
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.errors import WarehouseBusy
from turnscore.warehouse.labels import AmbiguousTurn, load_labels
from turnscore.warehouse.score_run import score_turns

ATTR = "turnscore.case_id"


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    wh = tmp_path / "wh"
    con = open_warehouse(wh)
    load_turns(con, [
        make_turn(1, case_id="by-id"),
        make_turn(2, request="What's the weather in PARIS?"),
        make_turn(3, request="Tell me a joke"),
        make_turn(4, case_id="no-such-label", request="convert 10 usd"),
    ])
    con.close()
    return wh


def test_load_upserts_and_reports_matches(warehouse: Path, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "cases.jsonl", [
        {"id": "by-id", "input": "anything", "canary": "x"},
        {"id": "paris", "input": "what's the weather in Paris", "expected_tools": ["get_weather"]},
        {"input": "Convert 10 USD!", "ideal_response": "9.31 EUR"},
        {"id": "orphan", "input": "never asked"},
        {"id": "joke-1", "input": "tell me a joke"},
        {"id": "joke-2", "input": "Tell me a joke."},
        {"id": "broken"},
    ])
    report = load_labels(warehouse, [path], case_id_attribute=ATTR)
    assert report.outcome == "partial"
    assert (report.cases_read, report.cases_new, report.cases_updated) == (6, 6, 0)
    assert [(e.line, e.message) for e in report.errors] == [(7, "missing required field 'input'")]
    assert (report.unmatched_cases, report.unmatched_case_ids) == (1, ("orphan",))
    assert report.ambiguous_turns == 1
    assert report.ambiguous == (AmbiguousTurn("turn-00003", ("joke-1", "joke-2")),)

    con = open_warehouse(warehouse)
    rows = con.execute("SELECT case_id, input_norm, canary, expected_tools, tags, source, run_id "
                       "FROM labels ORDER BY case_id").fetchall()
    by_id = {r[0]: r for r in rows}
    assert by_id["by-id"][2] == ["x"] and by_id["by-id"][4] == []
    assert by_id["paris"][1] == "whats the weather in paris"
    assert by_id["paris"][3] == ["get_weather"]
    assert default_case_id("convert 10 usd") in by_id
    assert {r[5] for r in rows} == {str(path)} and {r[6] for r in rows} == {report.run_id}
    run = con.execute("SELECT kind, outcome, summary->>'cases_new' FROM runs WHERE run_id = ?",
                      [report.run_id]).fetchone()
    assert run == ("labels", "partial", "6")
    con.close()


def test_reload_replaces_by_id_and_later_files_win(warehouse: Path, tmp_path: Path) -> None:
    joke = {"id": "c1", "input": "Tell me a joke"}
    first = write_jsonl(tmp_path / "a.jsonl", [joke | {"canary": "old"}])
    second = write_jsonl(tmp_path / "b.jsonl", [joke | {"canary": "new"},
                                                {"id": "c2", "input": "other"}])
    assert load_labels(warehouse, [first], case_id_attribute=ATTR).cases_new == 1
    report = load_labels(warehouse, [first, second], case_id_attribute=ATTR)
    assert (report.outcome, report.cases_new, report.cases_updated) == ("ok", 1, 1)
    con = open_warehouse(warehouse)
    assert con.execute("SELECT canary, source FROM labels WHERE case_id = 'c1'").fetchone() == (
        ["new"], str(second))
    assert con.execute("SELECT count(*) FROM labels").fetchone() == (2,)
    con.close()


def test_nothing_readable_is_a_failed_run(warehouse: Path, tmp_path: Path) -> None:
    report = load_labels(warehouse, [write_jsonl(tmp_path / "x.jsonl", ["{oops"])],
                         case_id_attribute=ATTR)
    assert report.outcome == "failed" and report.errors[0].line == 1


def test_busy_warehouse_raises(warehouse: Path, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"input": "x"}])
    with held_by_another_process(warehouse), pytest.raises(WarehouseBusy):
        load_labels(warehouse, [path], case_id_attribute=ATTR)


def test_unknown_modes_are_loaded_and_scored_with_the_default_mode(tmp_path: Path) -> None:
    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(0, request="Capital of France?", final_answer="It is PARIS."),
                     make_turn(1, request="Look it up")])
    con.close()
    path = write_jsonl(tmp_path / "cases.jsonl", [
        {"input": "Capital of France?", "ideal_response": "it is paris",
         "match_mode": "fuzzy"},
        {"input": "Look it up", "expected_tools": ["get_weather", "search"],
         "expected_tools_mode": "mostly"},
    ])
    report = load_labels(tmp_path, [path], case_id_attribute="turnscore.case_id")
    assert (report.outcome, report.cases_new, report.errors) == ("ok", 2, ())
    assert [w.line for w in report.warnings] == [1, 2]
    assert "fuzzy" in str(report.warnings[0]) and "scored as normalized" in str(
        report.warnings[0])
    score_turns(tmp_path, scorers=["answer_correctness", "tool_call_accuracy"])
    con = open_warehouse(tmp_path)
    try:
        rows = con.execute(
            "SELECT turn_id, scorer, status, value, details->>'mode' FROM scores "
            "WHERE status = 'scored' ORDER BY ALL").fetchall()
    finally:
        con.close()
    # normalized: case and the final period do not matter; all: `search` was not called.
    assert rows == [("turn-00000", "answer_correctness", "scored", 1.0, "normalized"),
                    ("turn-00001", "tool_call_accuracy", "scored", 0.0, "all")]
