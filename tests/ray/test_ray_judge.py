"""LLM-judged scoring through `--engine ray` on the real two-node cluster, against the
scripted OpenAI-compatible judge (tests/scorers/judge/scripted.py) on 127.0.0.1.

The judge's verdict for a turn is a function of the prompt it is sent, so the local
engine and Ray must store the same scores. The endpoint's limits are the cluster's: the
server counts requests in flight (never above `concurrency`, with workers on both nodes
judging); a budget stops every worker (no request beyond the budget and those in
flight); a 429 with Retry-After is retried and a garbage reply is an error row, as locally;
replies are cached in the warehouse, so a rerun sends nothing; a judging worker killed
mid-run gives its endpoint slots back and its batches are judged again.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from tests.ray.cluster import Cluster
from tests.ray.parity import warehouse_rows
from tests.scorers.judge.scripted import Reply, ScriptedJudge, chat, verdict_for
from tests.warehouse.turn_factory import load_turns, make_turn
from turnscore.scorers.judge.config import Budget
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.judging import LlmJudge
from turnscore.warehouse.ray_score import run_ray_score
from turnscore.warehouse.score_run import ScoreReport, score_turns

pytestmark = pytest.mark.ray

TURNSCORE = str(Path(sys.executable).with_name("turnscore"))
JUDGED = ["tool_usage", "tractability"]
TURNS = 40
LATENCY_S = 0.05
CONCURRENCY = 2
RUN_DEADLINE_S = 360


def scripted_verdict(body: dict[str, Any]) -> Reply:
    """A verdict whose score is a function of the turn shown (its request names city i;
    the prompt's markers carry a nonce of each render): the same turn, the same score."""
    city = re.search(r"city (\d+)", body["messages"][1]["content"])
    score = int(city.group(1)) % 11 if city else 5
    return Reply(body=chat(orjson.dumps(verdict_for(body, score)).decode()),
                 delay_s=LATENCY_S)


def judge_table(server: ScriptedJudge, **extra: object) -> dict[str, object]:
    return {"base_url": server.url, "model": "scripted-judge", "concurrency": CONCURRENCY,
            "timeout_s": 10, "backoff_s": 0.01, "backoff_max_s": 0.02,
            "price_input_per_mtok": 1.0, "price_output_per_mtok": 4.0, **extra}


def warehouse(folder: Path) -> Path:
    con = open_warehouse(folder)
    load_turns(con, [make_turn(i) for i in range(TURNS)])
    con.close()
    return folder


def score_local(folder: Path, table: dict[str, object]) -> ScoreReport:
    judge = LlmJudge(table, Budget())
    try:
        return score_turns(folder, scorers=JUDGED, judge_factory=judge,
                           publish_snapshot=False)
    finally:
        judge.close()


def score_ray(folder: Path, table: dict[str, object], cluster: Cluster,
              rescore: bool = False) -> ScoreReport:
    return run_ray_score(folder, str(folder / "data"), scorers=JUDGED, rescore=rescore,
                         ray_address=cluster.address, llm_judge=LlmJudge(table, Budget()),
                         publish_snapshot=False)


def rows(folder: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(next(folder.glob("*.duckdb"))), read_only=True)
    try:
        return sorted(con.execute(sql).fetchall(), key=repr)
    finally:
        con.close()


CACHE = "SELECT cache_key, scorer, model, prompt_version, reply, input_tokens, output_tokens " \
        "FROM judge_cache"


@pytest.fixture(autouse=True)
def _ray_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.delenv("TURNSCORE_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("TURNSCORE_JUDGE_MODEL", raising=False)


def test_judged_scores_on_ray_are_the_local_ones_under_the_shared_limit(
        cluster: Cluster, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with ScriptedJudge() as server:
        server.default = scripted_verdict
        local = warehouse(tmp_path / "local")
        assert score_local(local, judge_table(server)).errors == 0
        sent_locally = len(server.requests)
        assert sent_locally == 2 * TURNS

        server.requests.clear()
        server.max_in_flight = 0
        on_ray = warehouse(tmp_path / "ray")
        with caplog.at_level(logging.INFO, logger="turnscore.warehouse.ray_score"):
            report = score_ray(on_ray, judge_table(server), cluster)
        assert report.stopped_reason is None and report.errors == 0
        assert len(server.requests) == 2 * TURNS
        # Both nodes' workers judged, and together they never passed the endpoint's
        # concurrency (each alone could have had CONCURRENCY requests in flight).
        [line] = [r.getMessage() for r in caplog.records if "worker(s)" in r.getMessage()]
        assert re.search(r"judged by 2 worker\(s\)", line), line
        assert server.max_in_flight == CONCURRENCY

        # Every score column but run id, time and latency; and the same cache rows.
        assert warehouse_rows(on_ray, "")["scores"] == warehouse_rows(local, "")["scores"]
        assert rows(on_ray, CACHE) == rows(local, CACHE)
        assert len(rows(on_ray, CACHE)) == 2 * TURNS

        # A rerun finds every reply cached (the warehouse's table, read by the gate).
        again = score_ray(on_ray, judge_table(server), cluster, rescore=True)
        assert again.written == 2 * TURNS and len(server.requests) == 2 * TURNS
        assert rows(on_ray, "SELECT sum(attempts), sum(cost_usd) FROM scores") == [(0, 0.0)]


def test_a_budget_stops_every_worker_and_the_report_says_so(
        cluster: Cluster, tmp_path: Path) -> None:
    # Each reply costs (1000 * 1.0 + 100 * 4.0) / 1e6 = $0.0014: spent after 3 replies.
    folder = warehouse(tmp_path)
    with ScriptedJudge() as server:
        server.default = scripted_verdict
        config = tmp_path / "turnscore.toml"
        config.write_text("[judge]\n" + "".join(
            f"{k} = {orjson.dumps(v).decode()}\n" for k, v in judge_table(server).items()))
        done = subprocess.run(
            [TURNSCORE, "score", "--engine", "ray", "--ray-address", cluster.address,
             "--warehouse", str(folder), "--config", str(config), "--max-cost", "0.004",
             "--json", *(a for s in JUDGED for a in ("--scorer", s))],
            capture_output=True, text=True, timeout=600,
            env=dict(os.environ, RAY_AUTH_MODE="disabled"))
        sent = len(server.requests)
    assert done.returncode == 3, done.stderr
    report = orjson.loads(done.stdout)
    assert "cost budget reached" in report["stopped_reason"]
    assert report["outcome"] == "partial"
    # Requests after the stop: none but those already in flight when it came.
    assert 3 <= sent <= 3 + CONCURRENCY - 1
    # Every paid reply is a score and a cache row; the rest stays pending.
    assert rows(folder, "SELECT count(*) FROM scores") == [(sent,)]
    assert rows(folder, "SELECT count(*) FROM judge_cache") == [(sent,)]
    assert report["written"] == sent and report["pending_before"] == 2 * TURNS


def test_a_429_is_retried_and_a_garbage_reply_is_an_error_row_as_locally(
        cluster: Cluster, tmp_path: Path) -> None:
    outcomes = []
    for engine in ("local", "ray"):
        folder = warehouse(tmp_path / engine)
        with ScriptedJudge() as server:
            server.default = scripted_verdict
            server.script(Reply(429, "slow down", {"Retry-After": "0.2"}),
                          Reply(body="<html>gateway</html>"))
            table = judge_table(server)
            report = (score_local(folder, table) if engine == "local"
                      else score_ray(folder, table, cluster))
            assert len(server.requests) == 2 * TURNS + 1  # the 429, then its retry
        assert report.errors == 1 and report.stopped_reason is None
        [error] = rows(folder, "SELECT error FROM scores WHERE status = 'error'")
        assert "not a chat completion" in error[0]
        outcomes.append(rows(folder, "SELECT status, attempts, count(*) FROM scores "
                                     "GROUP BY ALL"))
    local, on_ray = outcomes
    assert on_ray == local
    assert ("scored", 2, 1) in local  # the retried request


# Ray restarts the killed pool actor under the same actor id. Before the gate told
# incarnations apart, it hung here after tests/ray/test_ray_engine.py (2026-12-02): the dead
# worker's `take` calls still queued on the gate each won a slot no one gave back, and a
# ping found the restarted actor alive. `test_judge_gate` pins the rule without a cluster.
def test_a_judging_worker_killed_mid_run_gives_back_its_slots(
        cluster: Cluster, tmp_path: Path) -> None:
    folder = warehouse(tmp_path)
    node = cluster.nodes[-1]
    killed: list[str] = []

    def kill_when_judging(server: ScriptedJudge) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(server.requests) < 10:
            time.sleep(0.01)
        for pid, name in cluster.workers_of(node):
            if "JudgedBatches" in name:
                os.kill(pid, signal.SIGKILL)
                killed.append(name)
                return

    with ScriptedJudge() as server:
        server.default = scripted_verdict
        killer = threading.Thread(target=kill_when_judging, args=(server,), daemon=True)
        killer.start()
        done: list[ScoreReport] = []
        runner = threading.Thread(
            target=lambda: done.append(score_ray(folder, judge_table(server), cluster)),
            daemon=True)
        runner.start()
        runner.join(timeout=RUN_DEADLINE_S)
        if runner.is_alive():
            # End the hung run's job, so its actors give the cluster's CPUs back and the
            # tests after this one do not starve (nor find Ray still initialized here).
            import ray
            ray.shutdown()
            runner.join(timeout=30)
        killer.join(timeout=5)
        in_flight = server.max_in_flight
    assert killed, "no judging worker ran on the second node"
    assert done, "the run never finished: the dead worker's slots were not given back"
    [report] = done
    # Its batches were judged again elsewhere (paid replies hit the shared cache), and
    # the slots it held came back: the run finished, never past the endpoint's limit.
    assert report.errors == 0 and report.stopped_reason is None
    assert rows(folder, "SELECT count(*), count(DISTINCT turn_id) FROM scores") == [
        (2 * TURNS, TURNS)]
    assert in_flight <= CONCURRENCY
