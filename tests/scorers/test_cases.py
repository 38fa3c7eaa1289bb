"""Table tests: each `cases/<scorer>.jsonl` row is a turn, its case and the expected Score.

Each file is scored as one batch (through `Scorer.score`, on the batch as the runner
builds it: the turns through Arrow into polars), and each row again on its own, so a
scorer whose batch result depends on its neighbours fails here; so does one that scores
a slice of the batch (the runner passes the turns a scorer is pending on) otherwise.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.scorers.factory import make_case, make_turn
from turnscore.ingest.turn import Turn
from turnscore.scorers import REGISTRY, Case, Score
from turnscore.scorers.base import Turns

CASES = Path(__file__).parent / "cases"
FILES = sorted(CASES.glob("*.jsonl"))


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _check(score: Score, expect: dict[str, Any], name: str) -> None:
    assert score.status == expect["status"], (name, score)
    if "value" in expect:
        assert score.value == expect["value"], (name, score)
    if "label" in expect:
        assert score.label == expect["label"], (name, score)
    for key, want in expect.get("details", {}).items():
        assert score.details.get(key) == want, (name, key, score.details)
    if "explanation_contains" in expect:
        assert expect["explanation_contains"] in (score.explanation or ""), (name, score)
    orjson.dumps(score.details)  # details must be JSON


def test_every_code_scorer_has_a_case_file() -> None:
    code = {name for name, s in REGISTRY.items() if s.kind == "code"}
    assert code <= {p.stem for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_case_file(path: Path) -> None:
    scorer = REGISTRY[path.stem]
    rows = _rows(path)
    assert rows, path
    turns = [make_turn(r["turn"], turn_id=f"t{i}") for i, r in enumerate(rows)]
    cases = [make_case(r["case"]) for r in rows]
    batch = scorer.score_turns(turns, cases)
    assert len(batch) == len(rows)
    for row, turn, case, score in zip(rows, turns, cases, batch, strict=True):
        assert score is not None, row["name"]
        _check(score, row["expect"], row["name"])
        assert scorer.score_turns([turn], [case]) == [score], row["name"]
    half = list(range(0, len(rows), 2))
    got = scorer.score(Turns.of(turns).take(half), [cases[i] for i in half])
    assert got.to_dicts() == scorer.score(turns, cases)[half].to_dicts()


@pytest.mark.parametrize("name", sorted(n for n, s in REGISTRY.items() if s.kind == "code"))
def test_code_scorers_score_empty_batches_and_never_fail_for_missing_labels(name: str) -> None:
    scorer = REGISTRY[name]
    assert scorer.score_turns([], []) == []
    turn = make_turn({"final_answer": "It is 18 degrees in Paris.",
                      "calls": [{"name": "weather", "arguments": "{}", "result": "18"}]})
    for score in scorer.score_turns([turn], [None]):
        assert score is not None and score.status != "error", score
    assert isinstance(scorer.version, str) and scorer.version


def test_code_scorers_read_only_turn_fields_and_labels() -> None:
    known = {f.name for f in fields(Turn)} | {f.name for f in fields(Case)}
    for name, s in REGISTRY.items():
        if s.kind == "code":
            assert set(s.reads) <= known, (name, set(s.reads) - known)
