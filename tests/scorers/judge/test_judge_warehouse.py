"""The engine through the warehouse's score run and its DuckDB `judge_cache`: a rescore of
unchanged turns sends nothing; a run stopped by its budget leaves the rest pending."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.scorers.judge.scripted import KEY_ENV, ScriptedJudge
from tests.scorers.judge.test_judge_views import TURNS
from turnscore.ingest.turn import turns_to_arrow
from turnscore.scorers.judge.config import Budget, JudgeConfig, JudgeSettings
from turnscore.scorers.judged import SPECS, make_judge_runner
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.score_run import score_turns


def _warehouse(tmp_path: Path) -> Path:
    con = open_warehouse(tmp_path)
    con.register("_turns", turns_to_arrow(TURNS))
    con.execute("INSERT INTO turns SELECT * FROM _turns")
    con.close()
    return tmp_path


def _score(folder: Path, config: JudgeConfig, budget: Budget, rescore: bool = False):
    engines = []

    def factory(cache):  # type: ignore[no-untyped-def]
        engines.append(make_judge_runner(JudgeSettings(config), budget, cache, env=KEY_ENV))
        return engines[-1].run
    try:
        return score_turns(folder, scorers=["tool_usage", "tractability"], rescore=rescore,
                           judge_factory=factory, publish_snapshot=False)
    finally:
        for engine in engines:
            engine.close()


def _rows(folder: Path, sql: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(next(folder.glob("*.duckdb"))), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_rescoring_unchanged_turns_hits_the_duckdb_cache(
        judge_server: ScriptedJudge, fast_config: JudgeConfig, tmp_path: Path) -> None:
    folder = _warehouse(tmp_path)
    first = _score(folder, fast_config, Budget())
    assert first.stopped_reason is None and len(judge_server.requests) == 8
    assert _rows(folder, "SELECT count(*) FROM judge_cache") == [(8,)]
    scored = _rows(folder, "SELECT DISTINCT judge, prompt_sha, attempts FROM scores "
                           "WHERE scorer = 'tool_usage'")
    assert scored == [("scripted-judge", SPECS["tool_usage"].prompt.sha, 1)]
    again = _score(folder, fast_config, Budget(max_calls=0), rescore=True)
    assert again.stopped_reason is None and len(judge_server.requests) == 8
    assert _rows(folder, "SELECT count(*), sum(attempts), sum(cost_usd) FROM scores") == [
        (8, 0, 0.0)]


def test_a_budget_stop_leaves_the_rest_pending(
        judge_server: ScriptedJudge, fast_config: JudgeConfig, tmp_path: Path) -> None:
    folder = _warehouse(tmp_path)
    report = _score(folder, fast_config, Budget(max_calls=3))
    assert report.stopped_reason is not None and "--max-calls 3" in report.stopped_reason
    assert len(judge_server.requests) == 3
    assert _rows(folder, "SELECT count(*) FROM scores") == [(3,)]
    rest = _score(folder, fast_config, Budget())
    assert rest.stopped_reason is None and len(judge_server.requests) == 8
    assert _rows(folder, "SELECT count(*) FROM scores") == [(8,)]
