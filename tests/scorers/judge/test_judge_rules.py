"""The rules judge over hand-written case files: `cases/<scorer>.jsonl`, one turn per row with
the band, value, checks and details it must get. Scored through the registry, offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.scorers.judge.scripted import make_turn
from turnscore.scorers.base import REGISTRY, Status
from turnscore.scorers.judge.config import RULES_JUDGE
from turnscore.scorers.judge.engine import band

CASES = Path(__file__).parent / "cases"
ROWS = [(path.stem, json.loads(line)) for path in sorted(CASES.glob("*.jsonl"))
        for line in path.read_text().splitlines() if line.strip()]


def _subset(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(expected) == len(actual)
                and all(_subset(e, a) for e, a in zip(expected, actual, strict=True)))
    return bool(expected == actual)


@pytest.mark.parametrize(("scorer", "row"), ROWS, ids=[f"{s}: {r['name']}" for s, r in ROWS])
def test_rules_case(scorer: str, row: dict[str, Any]) -> None:
    expect = row["expect"]
    [score] = REGISTRY[scorer].score([make_turn(row["turn"])], [None])
    assert score.status == Status(expect.get("status", "scored")), score
    if score.status != Status.SCORED:
        return
    assert score.judge == RULES_JUDGE and score.prompt_sha is None
    assert score.value == expect["value"], score.explanation
    assert score.label == expect["band"] == band(score.value)
    assert score.explanation is not None and score.explanation.startswith("rules-v1: ")
    checks = score.details["checks"]
    assert isinstance(checks, list)
    if expect.get("checks") == []:
        assert checks == [] and "none (every check passed)" in score.explanation
    for fragment in expect.get("checks", []):
        assert fragment in score.explanation, score.explanation
        assert any(fragment in c for c in checks)
    assert _subset(expect.get("details", {}), score.details), score.details


def test_every_band_is_covered_for_both_rubrics() -> None:
    for scorer in ("tool_usage", "tractability"):
        bands = {r["expect"]["band"] for s, r in ROWS if s == scorer}
        assert bands == {"9-10", "7-8", "5-6", "3-4", "0-2"}, scorer
    no_calls = [r["expect"]["details"]["call_needed"] for s, r in ROWS
                if s == "tool_usage" and not r["turn"]["calls"]]
    assert True in no_calls and False in no_calls


def test_rules_judge_is_deterministic() -> None:
    for scorer, row in ROWS:
        turn = make_turn(row["turn"])
        assert REGISTRY[scorer].score([turn], [None]) == REGISTRY[scorer].score([turn], [None])
