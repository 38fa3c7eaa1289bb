"""A large judge-free run scores its batches on worker processes (warehouse.score_workers)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.warehouse.turn_factory import answer_length, load_turns, make_turn, query, registered
from turnscore.warehouse import score_workers
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.score_run import resolve_scorers, score_turns

CODE_SCORERS = ["answer_correctness", "call_validity", "groundedness", "tool_call_accuracy",
                "tool_grounding"]
ROWS = "SELECT turn_id, scorer, status, value, explanation, details::VARCHAR FROM scores"


@pytest.fixture
def two_warehouses(tmp_path: Path) -> tuple[Path, Path]:
    here, there = tmp_path / "here", tmp_path / "workers"
    con = open_warehouse(here)
    load_turns(con, [make_turn(i) for i in range(35)])
    con.close()
    shutil.copytree(here, there)
    return here, there


def test_batches_scored_on_workers_are_written_whole_and_once(
        two_warehouses: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    here, there = two_warehouses
    local = score_turns(here, scorers=CODE_SCORERS, batch_size=10, publish_snapshot=False)
    monkeypatch.setattr(score_workers, "POOL_MIN_TURNS", 1)
    monkeypatch.setenv(score_workers.WORKERS_ENV, "2")
    seen: list[tuple[int, int]] = []
    pooled = score_turns(there, scorers=CODE_SCORERS, batch_size=10, publish_snapshot=False,
                         progress=lambda d, t: seen.append((d, t)))
    assert (local.workers, pooled.workers) == (1, 2)
    assert pooled.pending_before == pooled.written == 35 * len(CODE_SCORERS)
    assert [c.written for c in pooled.scorers] == [c.written for c in local.scorers]
    # Progress counts committed batches, in order: 4 batches of up to 10 turns.
    assert len(seen) == 4 and seen[-1] == (pooled.written, pooled.written)
    assert set(pooled.scorer_seconds) == set(CODE_SCORERS)
    # The rows that crossed the process boundary are the rows scored here.
    assert sorted(query(there, ROWS)) == sorted(query(here, ROWS))
    assert score_turns(there, scorers=CODE_SCORERS, publish_snapshot=False).nothing_to_do


def test_only_turnscores_own_scorers_go_to_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(score_workers.WORKERS_ENV, "3")
    own = resolve_scorers(CODE_SCORERS)
    assert score_workers.workers_for(score_workers.POOL_MIN_TURNS, own) == 3
    assert score_workers.workers_for(score_workers.POOL_MIN_TURNS - 1, own) == 1
    with registered("t_length", answer_length) as name:
        mixed = resolve_scorers([*CODE_SCORERS, name])
        assert score_workers.workers_for(10 * score_workers.POOL_MIN_TURNS, mixed) == 1
