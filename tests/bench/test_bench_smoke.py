"""`bench/score.py --quick` runs end to end on tiny sizes (a smoke run: nothing is timed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from turnscore.queries import load_views

ROOT = Path(__file__).parents[2]
SCORERS = {"tool_grounding", "answer_correctness", "tool_call_accuracy", "groundedness",
           "call_validity"}


@pytest.mark.slow
def test_score_bench_quick_scores_every_turn_and_times_every_view(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "bench/score.py", "--quick", "--turns", "300", "--scores-rows", "4000",
         "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "machine:" in done.stdout and "turns/s" in done.stdout
    results = json.loads((tmp_path / "score-results.json").read_text())

    scoring = results["scoring"]
    assert set(scoring["per_scorer_s"]) == SCORERS and scoring["turns"] == 300
    assert all(s > 0 for s in scoring["per_scorer_s"].values())

    views = {v.name for v in load_views()}
    small, large = results["views_small"], results["views_large"]
    assert set(small["views"]) == views and set(large["views"]) == views
    # Every turn got a row from each of the five scorers and the two synthetic judges.
    assert small["scale"] == "300 scored turns, 2,100 score rows"
    assert small["views"]["score_coverage"]["rows"] == 7
    assert small["views"]["turn_scores"]["rows"] == 300
    assert large["scale"] == "572 turns, 4,004 score rows"
    assert large["views"]["turns_scored"]["rows"] == 572
    assert not (tmp_path / "score-warehouse").exists()  # removed unless --keep
