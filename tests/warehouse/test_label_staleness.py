"""Labels loaded, changed or removed after a score run make exactly the label-reading
scores of the turns they join stale: the next run rescores those and nothing else, and
the `score_coverage` view counts them as stale."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from tests.warehouse.turn_factory import changed, load_turns, make_turn, query, write_jsonl
from turnscore.ingest.turn import Turn
from turnscore.queries import load_views
from turnscore.scorers.base import REGISTRY, Case
from turnscore.warehouse import score_queue
from turnscore.warehouse.db import migrations, open_warehouse
from turnscore.warehouse.labels import (
    LABEL_FIELDS,
    load_labels,
    refresh_request_norms,
)
from turnscore.warehouse.publish import refresh_views
from turnscore.warehouse.score_run import ScoreReport, reads_labels, resolve_scorers, score_turns

ATTR = "turnscore.case_id"
LABEL_SCORERS = {"answer_correctness", "tool_call_accuracy", "tool_grounding"}


@pytest.fixture
def wh(tmp_path: Path) -> Path:
    wh = tmp_path / "wh"
    con = open_warehouse(wh)
    load_turns(con, [
        make_turn(0, case_id="by-id", final_answer="It is 18 degrees"),
        make_turn(1, request="What's the weather in PARIS?", final_answer="18 in Paris"),
        make_turn(2, request="Tell me a joke", final_answer="no"),
        make_turn(3, final_answer="unlabelled"),
    ])
    con.close()
    return wh


def _load(wh: Path, tmp_path: Path, rows: list[dict[str, object]], name: str = "c.jsonl"
          ) -> None:
    report = load_labels(wh, [write_jsonl(tmp_path / name, rows)], case_id_attribute=ATTR)
    assert report.outcome == "ok", report.errors


def _pending(report: ScoreReport) -> dict[str, int]:
    return {c.scorer: c.pending_before for c in report.scorers if c.pending_before}


def _stale(wh: Path) -> dict[str, int]:
    con = open_warehouse(wh)
    try:
        refresh_views(con, load_views())
        return dict(con.execute("SELECT scorer, stale FROM score_coverage WHERE stale > 0")
                    .fetchall())
    finally:
        con.close()


def _scores(wh: Path, scorer: str) -> dict[str, tuple[object, ...]]:
    """Per turn: status, value and the label_hash the score recorded (None: none)."""
    rows = query(wh, "SELECT turn_id, status, value, content_hash FROM scores "
                     f"WHERE scorer = '{scorer}' ORDER BY turn_id")
    return {str(r[0]): (r[1], r[2], _label_hash(str(r[3]))) for r in rows}


def _label_hash(recorded: str) -> str | None:
    _, sep, label_hash = recorded.partition(":")
    return label_hash if sep else None


CASES: list[dict[str, object]] = [
    {"id": "by-id", "input": "anything", "canary": "18", "ideal_response": "18 degrees",
     "match_mode": "contains", "expected_tools": ["get_weather"]},
    {"id": "paris", "input": "what's the weather in Paris", "canary": "20"},
]


def test_labels_loaded_after_a_run_rescore_exactly_the_label_scorers_of_their_turns(
        wh: Path, tmp_path: Path) -> None:
    first = score_turns(wh)
    assert set(_pending(first)) == set(REGISTRY)
    assert _scores(wh, "tool_grounding")["turn-00000"] == ("inconclusive", None, "")
    assert score_turns(wh).nothing_to_do

    _load(wh, tmp_path, CASES)
    # Turn 0 joins by case id, turn 1 by its normalised request; 2 and 3 join nothing.
    assert _stale(wh) == dict.fromkeys(LABEL_SCORERS, 2)
    again = score_turns(wh)
    assert _pending(again) == dict.fromkeys(LABEL_SCORERS, 2)
    grounding = _scores(wh, "tool_grounding")
    assert grounding["turn-00000"][:2] == ("scored", 1.0)
    assert grounding["turn-00001"][:2] == ("scored", 0.0)  # canary 20 is not in the answer
    assert grounding["turn-00002"] == ("inconclusive", None, "")
    assert _scores(wh, "answer_correctness")["turn-00000"][:2] == ("scored", 1.0)
    assert _scores(wh, "tool_call_accuracy")["turn-00000"][:2] == ("scored", 1.0)
    # Scorers that read no labels record none, and were not rerun.
    assert {r[2] for r in _scores(wh, "groundedness").values()} == {None}
    assert _stale(wh) == {}
    assert score_turns(wh).nothing_to_do

    # Loading the same cases again changes nothing.
    _load(wh, tmp_path, CASES, "again.jsonl")
    assert score_turns(wh).nothing_to_do


def test_a_changed_case_rescores_only_its_turns(wh: Path, tmp_path: Path) -> None:
    _load(wh, tmp_path, CASES)
    score_turns(wh)
    before = _scores(wh, "answer_correctness")

    _load(wh, tmp_path, [{**CASES[0], "ideal_response": "Guten Tag", "match_mode": "exact"}],
          "changed.jsonl")
    assert _stale(wh) == dict.fromkeys(LABEL_SCORERS, 1)
    report = score_turns(wh)
    assert _pending(report) == dict.fromkeys(LABEL_SCORERS, 1)
    after = _scores(wh, "answer_correctness")
    assert after["turn-00000"][:2] == ("scored", 0.0)
    assert after["turn-00000"][2] != before["turn-00000"][2]
    assert {k: v for k, v in after.items() if k != "turn-00000"} == {
        k: v for k, v in before.items() if k != "turn-00000"}
    # The replaced scores moved to history, with the case they had read.
    moved = query(wh, "SELECT scorer, content_hash FROM scores_history "
                      "WHERE replaced_at = (SELECT max(replaced_at) FROM scores_history)")
    assert {r[0] for r in moved} == LABEL_SCORERS
    assert {_label_hash(str(r[1])) for r in moved} == {before["turn-00000"][2]}


def test_a_removed_case_or_one_that_now_wins_the_text_join_makes_scores_stale(
        wh: Path, tmp_path: Path) -> None:
    _load(wh, tmp_path, CASES)
    score_turns(wh)
    con = open_warehouse(wh)
    con.execute("DELETE FROM labels WHERE case_id = 'by-id'")
    score_queue.forget_scope(con)  # a hand edit: the queue did not see it
    con.close()
    assert _stale(wh) == dict.fromkeys(LABEL_SCORERS, 1)
    assert _pending(score_turns(wh)) == dict.fromkeys(LABEL_SCORERS, 1)
    assert _scores(wh, "tool_grounding")["turn-00000"] == ("inconclusive", None, "")

    # Same text, a smaller id: the turn now joins this case (scoring takes the smallest).
    _load(wh, tmp_path, [{"id": "a-paris", "input": "WHAT'S the weather in Paris?!",
                          "canary": "Paris"}], "smaller.jsonl")
    assert _pending(score_turns(wh)) == dict.fromkeys(LABEL_SCORERS, 1)
    assert _scores(wh, "tool_grounding")["turn-00001"][:2] == ("scored", 1.0)


def test_a_turn_whose_request_changes_joins_by_its_new_text(wh: Path, tmp_path: Path) -> None:
    _load(wh, tmp_path, CASES)
    score_turns(wh)
    turn = make_turn(3, request="Tell me about Paris weather", final_answer="unlabelled")
    con = open_warehouse(wh)
    load_turns(con, [turn])
    con.close()
    _load(wh, tmp_path, [{"id": "p2", "input": "tell me about paris weather",
                          "canary": "unlabelled"}], "p2.jsonl")
    score_turns(wh)
    assert _scores(wh, "tool_grounding")["turn-00003"][:2] == ("scored", 1.0)
    assert score_turns(wh).nothing_to_do


def test_request_norms_follow_turn_content_and_drop_turns_gone(wh: Path) -> None:
    con = open_warehouse(wh)
    try:
        assert refresh_request_norms(con) == 4
        assert refresh_request_norms(con) == 0
        t2 = make_turn(2, request="Tell me a joke", final_answer="no")
        load_turns(con, [changed(t2, "a joke")])
        con.execute("DELETE FROM turns WHERE turn_id = 'turn-00003'")
        assert refresh_request_norms(con) == 1
        assert con.execute("SELECT list(turn_id ORDER BY turn_id) FROM request_norms"
                           ).fetchall()[0][0] == ["turn-00000", "turn-00001", "turn-00002"]
    finally:
        con.close()


def test_the_label_scorers_are_the_ones_reading_label_fields() -> None:
    """`reads` decides which scores record a case; `label_hash` covers every label field
    a scorer reads (else a change to it would go unnoticed)."""
    case_fields = {f.name for f in fields(Case)} - {f.name for f in fields(Turn)}
    for s in resolve_scorers(None):
        assert set(s.reads) & case_fields <= set(LABEL_FIELDS), s.name
    assert {s.name for s in resolve_scorers(None) if reads_labels(s)} == LABEL_SCORERS
    assert ":" not in make_turn(0).content_hash  # hex: `scored_hash` separates by ':'


def test_the_label_hash_covers_the_label_fields_and_the_case_id() -> None:
    """The `label_hashes` macro (migration 0010) spells the fingerprint in SQL."""
    view = next(m for m in migrations() if m.name == "0010_turn_cases.sql").sql
    packed = re.search(r"struct_pack\((.*?)\)\)\)", view, re.S)
    assert packed is not None
    names = [part.split(":=")[0].strip() for part in packed.group(1).split(",")]
    assert names == ["case_id", *LABEL_FIELDS]


def test_label_scores_written_before_label_hashes_are_rescored_once(wh: Path) -> None:
    """Rows of label-reading scorers recording the turn's content_hash alone (written
    before the case was folded in) are pending once; the others are not."""
    score_turns(wh)
    con = open_warehouse(wh)
    con.execute("UPDATE scores SET content_hash = split_part(content_hash, ':', 1)")
    score_queue.forget_scope(con)  # a hand edit: the queue did not see it
    con.close()
    assert _pending(score_turns(wh)) == dict.fromkeys(LABEL_SCORERS, 4)
    assert score_turns(wh).nothing_to_do


def test_scorers_reading_no_label_field_ignore_the_case() -> None:
    """What makes it safe to record no case with their scores: their verdicts do not
    depend on it (every turn of every scorer table test, with and without a case)."""
    from tests.scorers.factory import make_turn as turn_of

    tables = Path(__file__).parents[1] / "scorers" / "cases"
    turns = [turn_of(json.loads(line)["turn"], turn_id=f"t{i}")
             for i, line in enumerate(line for path in sorted(tables.glob("*.jsonl"))
                                      for line in path.read_text().splitlines() if line.strip())]
    case = Case("c1", "a request", canary=("18",), ideal_response="18 degrees",
                match_mode="contains", expected_tools=("get_weather",),
                expected_tools_mode="exact", should_decline=True, tags=("t",))
    for s in resolve_scorers(None):
        if not reads_labels(s):
            with_case = s.score_turns(turns, [case] * len(turns))
            assert with_case == s.score_turns(turns, [None] * len(turns)), (
                s.name)


EDITS = {"canary": "['19']", "ideal_response": "'19 degrees'", "match_mode": "'exact'",
         "expected_tools": "['search']", "expected_tools_mode": "'any'",
         "should_decline": "true", "case_id": "'by-id-2'"}


@pytest.mark.parametrize("column", [*LABEL_FIELDS, "case_id"])
def test_every_fingerprinted_field_edited_even_by_sql_makes_the_view_and_the_runner_agree(
        wh: Path, tmp_path: Path, column: str) -> None:
    """The view spells the fingerprint out again: both must see a change to each field."""
    assert set(EDITS) == {*LABEL_FIELDS, "case_id"}
    _load(wh, tmp_path, [{**CASES[0], "should_decline": False}, CASES[1]])
    score_turns(wh)
    con = open_warehouse(wh)
    con.execute(f"UPDATE labels SET {column} = {EDITS[column]} WHERE case_id = 'by-id'")
    score_queue.forget_scope(con)  # a hand edit: the queue did not see it
    con.close()
    assert _stale(wh) == dict.fromkeys(LABEL_SCORERS, 1)
    assert _pending(score_turns(wh)) == dict.fromkeys(LABEL_SCORERS, 1)
    assert _stale(wh) == {}


def test_input_and_tags_are_not_read_by_scorers(wh: Path, tmp_path: Path) -> None:
    _load(wh, tmp_path, CASES)
    score_turns(wh)
    con = open_warehouse(wh)
    con.execute("UPDATE labels SET input = 'other', tags = ['x'] WHERE case_id = 'by-id'")
    score_queue.forget_scope(con)  # a hand edit: the queue did not see it
    con.close()
    assert _stale(wh) == {}
    assert score_turns(wh).nothing_to_do
