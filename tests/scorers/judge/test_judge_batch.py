"""Batch scoring through the Batch API, across score runs on a real warehouse, against the
scripted Files + Batches server: submitted then collected, still in progress, partly
failed, expired, refused, a crash around creating the batch, reruns, cost at batch price."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.scorers.judge.scripted import KEY_ENV, Reply, chat, verdict_for
from tests.scorers.judge.scripted_batch import ScriptedBatches
from tests.scorers.judge.test_judge_views import TURNS
from turnscore.errors import ConfigError
from turnscore.ingest.turn import turns_to_arrow
from turnscore.scorers.judge.batch import route
from turnscore.scorers.judge.config import Budget, JudgeConfig, load_judge_settings
from turnscore.scorers.judged import SPECS
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.judging import llm_judge_for
from turnscore.warehouse.score_run import ScoreReport, score_turns

SCORERS = ["tool_usage", "tractability"]
PAIRS = len(TURNS) * len(SCORERS)


@pytest.fixture
def batches() -> Iterator[ScriptedBatches]:
    with ScriptedBatches() as server:
        yield server


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(*next(iter(KEY_ENV.items())))
    con = open_warehouse(tmp_path)
    con.register("_turns", turns_to_arrow(TURNS))
    con.execute("INSERT INTO turns SELECT * FROM _turns")
    con.close()
    return tmp_path


def _table(server: ScriptedBatches, **extra: Any) -> dict[str, Any]:
    return {"base_url": server.url, "model": "scripted-judge", "api_key_env": "TEST_JUDGE_KEY",
            "price_input_per_mtok": 1.0, "price_output_per_mtok": 4.0, "batch": True,
            "max_consecutive_failures": 2} | extra


def _score(folder: Path, table: dict[str, Any], budget: Budget | None = None) -> ScoreReport:
    judge = llm_judge_for(table, "llm", budget or Budget())
    assert judge is not None
    try:
        return score_turns(folder, scorers=SCORERS, judge_factory=judge, publish_snapshot=False)
    finally:
        judge.close()


def _rows(folder: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _scored(folder: Path) -> dict[tuple[str, str], str]:
    return {(t, s): st for t, s, st in _rows(folder, "SELECT turn_id, scorer, status FROM scores")}


def _chat_posts(server: ScriptedBatches) -> int:
    return len(server.requests)


def test_submitted_then_collected_across_two_runs(batches: ScriptedBatches,
                                                  folder: Path) -> None:
    first = _score(folder, _table(batches))
    assert _chat_posts(batches) == 0 and _scored(folder) == {}
    assert first.pending_before == PAIRS and first.written == 0 and first.stopped_reason is None
    assert len(batches.batches) == 2  # one per scorer
    for batch_id in batches.batches:
        lines = batches.lines(batch_id)
        assert len(lines) == len(TURNS)
        for line in lines:
            scorer, turn_id, content_hash = line["custom_id"].split("/")
            assert scorer in SCORERS and content_hash == f"h-{turn_id}"
            assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
            assert line["body"]["model"] == "scripted-judge"
            assert "Judge this turn." in line["body"]["messages"][1]["content"]
    uploads = [c for c in batches.calls if c.path == "/v1/files"]
    assert len(uploads) == 2 and all(c.headers["Authorization"] == "Bearer sk-test"
                                     for c in batches.calls)
    creates = [c.body for c in batches.calls if c.path == "/v1/batches" and c.body]
    assert {c["endpoint"] for c in creates} == {"/v1/chat/completions"}
    assert all(c["completion_window"] == "24h" and c["metadata"]["turnscore_batch"]
               for c in creates)
    recorded = _rows(folder, "SELECT state, batch_id, requests FROM judge_batches ORDER BY 2")
    assert recorded == [("open", b, len(TURNS)) for b in sorted(batches.batches)]
    assert sum("submitted batch" in n for n in first.judge_notes) == 2
    in_runs = _rows(folder, f"SELECT judge_batches FROM runs WHERE run_id = '{first.run_id}'")
    assert sorted(in_runs[0][0]) == sorted(batches.batches)

    for batch_id in list(batches.batches):
        batches.finish(batch_id)
    second = _score(folder, _table(batches))
    assert second.written == PAIRS and second.errors == 0
    assert set(_scored(folder).values()) == {"scored"} and len(_scored(folder)) == PAIRS
    assert len(batches.batches) == 2 and _chat_posts(batches) == 0
    # Cost at the batch price (half of 1.0 / 4.0 per Mtok) of the scripted 1000 + 100 tokens.
    costs = _rows(folder, "SELECT DISTINCT judge, prompt_sha IS NOT NULL, input_tokens, "
                          "output_tokens, round(cost_usd, 9), attempts, latency_ms FROM scores")
    assert costs == [("scripted-judge", True, 1000, 100, 0.0007, 1, 3_600_000.0)]
    assert _rows(folder, "SELECT count(*) FROM judge_cache") == [(PAIRS,)]
    assert _rows(folder, "SELECT DISTINCT state FROM judge_batches") == [("collected",)]

    calls = len(batches.calls)
    third = _score(folder, _table(batches))
    assert third.nothing_to_do and len(batches.calls) == calls and len(batches.batches) == 2
    assert _rows(folder, "SELECT count(*) FROM scores") == [(PAIRS,)]
    assert _rows(folder, "SELECT count(*) FROM scores_history") == [(0,)]


def test_a_batch_still_in_progress_scores_nothing_and_sends_nothing_again(
        batches: ScriptedBatches, folder: Path) -> None:
    _score(folder, _table(batches))
    for batch_id in batches.batches:
        batches.run(batch_id)
    uploads = sum(c.path == "/v1/files" for c in batches.calls)
    again = _score(folder, _table(batches))
    assert again.written == 0 and again.pending_before == PAIRS
    assert any("stay pending until its results are in" in n for n in again.judge_notes)
    assert sum(c.path == "/v1/files" for c in batches.calls) == uploads
    assert len(batches.batches) == 2 and _scored(folder) == {}
    polls = [c.path for c in batches.calls if c.path.startswith("/v1/batches/")]
    assert sorted(polls) == sorted(f"/v1/batches/{b}" for b in batches.batches)


def test_a_partly_failed_batch_scores_the_good_items_and_retries_the_rest(
        batches: ScriptedBatches, folder: Path) -> None:
    table = _table(batches, tractability={"batch": False})  # tool_usage alone is batched
    _score(folder, table)
    (batch_id,) = batches.batches
    lines = batches.lines(batch_id)
    failed = lines[0]["custom_id"]
    # The second line's reply holds no verdict: parsed by the engine, it is an error row.
    batches.script(Reply(body=chat("I cannot judge this.")))
    batches.finish(batch_id, fail={failed})
    report = _score(folder, table)
    scores = {(t, s): (st, err) for t, s, st, err in _rows(
        folder, "SELECT turn_id, scorer, status, error FROM scores WHERE scorer = 'tool_usage'")}
    bad = {failed.split("/")[1], lines[1]["custom_id"].split("/")[1]}
    assert {t for (t, _), (st, _) in scores.items() if st == "error"} == bad
    assert {st for (t, _), (st, _) in scores.items() if t not in bad} == {"scored"}
    assert "server_error" in str(scores[(failed.split("/")[1], "tool_usage")][1])
    assert "unusable judge reply" in str(scores[(lines[1]["custom_id"].split("/")[1],
                                                 "tool_usage")][1])
    assert report.errors == 2 and report.stopped_reason is None  # known results never stop

    _score(folder, table)  # the two errors go in a new batch, the rest are left alone
    assert len(batches.batches) == 2
    newest = max(batches.batches, key=lambda b: batches.batches[b]["created_at"])
    assert {line["custom_id"].split("/")[1] for line in batches.lines(newest)} == bad
    batches.finish(newest)
    _score(folder, table)
    assert {st for (_, s), st in _scored(folder).items() if s == "tool_usage"} == {"scored"}


@pytest.mark.parametrize(("status", "code"), [("expired", "batch_expired"),
                                            ("cancelled", "batch_cancelled")])
def test_an_expired_or_cancelled_batch_scores_what_finished_and_sends_the_rest_again(
        batches: ScriptedBatches, folder: Path, status: str, code: str) -> None:
    table = _table(batches, tractability={"batch": False})
    _score(folder, table)
    (batch_id,) = batches.batches
    batches.finish(batch_id, status=status, done=1, error_code=code)
    _score(folder, table)
    got = _rows(folder, "SELECT status, error FROM scores WHERE scorer = 'tool_usage' "
                        "ORDER BY status DESC")
    assert [s for s, _ in got] == ["scored"] + ["error"] * (len(TURNS) - 1)
    assert all(code in e for _, e in got[1:])
    _score(folder, table)
    assert len(batches.batches) == 2
    newest = max(batches.batches, key=lambda b: batches.batches[b]["created_at"])
    assert len(batches.lines(newest)) == len(TURNS) - 1


def test_a_batch_that_failed_validation_gives_error_rows(batches: ScriptedBatches,
                                                         folder: Path) -> None:
    table = _table(batches, tractability={"batch": False})
    _score(folder, table)
    (batch_id,) = batches.batches
    batches.fail_validation(batch_id, "model not batchable")
    _score(folder, table)
    errors = _rows(folder, "SELECT DISTINCT status, error FROM scores WHERE scorer = 'tool_usage'")
    assert len(errors) == 1 and errors[0][0] == "error"
    assert "failed (invalid_request: model not batchable)" in errors[0][1]


def test_a_crash_around_creating_the_batch_is_reconciled_not_sent_twice(
        batches: ScriptedBatches, folder: Path) -> None:
    table = _table(batches, tractability={"batch": False})
    batches.drop_create_reply = True  # created on the server, the reply never arrives
    first = _score(folder, table)
    assert len(batches.batches) == 1 and first.written == len(TURNS)  # tractability only
    assert _rows(folder, "SELECT state, batch_id FROM judge_batches") == [("submitting", None)]
    (batch_id,) = batches.batches
    _score(folder, table)
    assert len(batches.batches) == 1  # found by its key in the metadata, adopted
    assert _rows(folder, "SELECT state, batch_id FROM judge_batches") == [("open", batch_id)]
    batches.finish(batch_id)
    _score(folder, table)
    assert len(batches.batches) == 1
    assert {st for (_, s), st in _scored(folder).items() if s == "tool_usage"} == {"scored"}


def test_a_batch_never_created_is_abandoned_and_its_turns_sent_again(
        batches: ScriptedBatches, folder: Path) -> None:
    table = _table(batches, tractability={"batch": False})
    batches.refuse_create = 503  # may or may not exist: the run cannot tell
    _score(folder, table)
    assert not batches.batches
    assert _rows(folder, "SELECT state FROM judge_batches") == [("submitting",)]
    _score(folder, table)  # not among the listed batches: abandoned, then sent again
    assert len(batches.batches) == 1
    assert sorted(_rows(folder, "SELECT state FROM judge_batches")) == [("abandoned",),
                                                                      ("open",)]
    assert len(batches.lines(next(iter(batches.batches)))) == len(TURNS)


def test_a_refused_upload_gives_error_rows_retried_next_run(batches: ScriptedBatches,
                                                            folder: Path) -> None:
    table = _table(batches, tractability={"batch": False})
    batches.refuse_upload = 400
    report = _score(folder, table)
    assert report.errors == len(TURNS) and not batches.batches
    reasons = _rows(folder, "SELECT DISTINCT error FROM scores WHERE status = 'error'")
    assert len(reasons) == 1 and "batch submission refused" in reasons[0][0]
    _score(folder, table)
    assert len(batches.batches) == 1 and len(batches.lines(next(iter(batches.batches)))) == 4


def test_a_configured_batch_price_is_used(batches: ScriptedBatches, folder: Path) -> None:
    table = _table(batches, batch_price_input_per_mtok=0.3, batch_price_output_per_mtok=1.0)
    _score(folder, table)
    for batch_id in list(batches.batches):
        batches.finish(batch_id)
    _score(folder, table)
    assert _rows(folder, "SELECT DISTINCT round(cost_usd, 9) FROM scores") == [(0.0004,)]


def test_the_call_budget_counts_batched_turns(batches: ScriptedBatches, folder: Path) -> None:
    report = _score(folder, _table(batches, tractability={"batch": False}), Budget(max_calls=3))
    assert report.stopped_reason is not None and "--max-calls 3" in report.stopped_reason
    assert sum(len(batches.lines(b)) for b in batches.batches) == 3


def test_azure_deployment_urls_compose_with_the_batch_paths(batches: ScriptedBatches,
                                                            folder: Path) -> None:
    root = batches.url.removesuffix("/v1")
    table = _table(batches, base_url=f"{root}/openai/deployments/judge-batch",
                   tractability={"batch": False})
    _score(folder, table)
    paths = {c.path.split("?")[0] for c in batches.calls}
    assert paths == {"/openai/files", "/openai/batches"}
    (batch_id,) = batches.batches
    assert {line["url"] for line in batches.lines(batch_id)} == {"/chat/completions"}
    assert batches.batches[batch_id]["endpoint"] == "/chat/completions"
    batches.finish(batch_id)
    _score(folder, table)
    assert f"/openai/batches/{batch_id}" in {c.path for c in batches.calls}
    assert {st for (_, s), st in _scored(folder).items() if s == "tool_usage"} == {"scored"}


@pytest.mark.parametrize(("base_url", "root", "endpoint"), [
    ("https://api.openai.com/v1", "https://api.openai.com/v1", "/v1/chat/completions"),
    ("https://r.openai.azure.com/openai/v1/", "https://r.openai.azure.com/openai/v1",
     "/chat/completions"),
    ("https://r.openai.azure.com/openai/deployments/gpt-4o-batch",
     "https://r.openai.azure.com/openai", "/chat/completions"),
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1", "/v1/chat/completions"),
])
def test_route(base_url: str, root: str, endpoint: str) -> None:
    assert (route(base_url).root, route(base_url).endpoint) == (root, endpoint)


def test_batch_config_keys_are_validated() -> None:
    settings = load_judge_settings({"batch": True, "batch_price_input_per_mtok": 0.2,
                                    "tractability": {"batch": False}}, env={})
    assert settings.default == JudgeConfig(batch=True, batch_price_input_per_mtok=0.2)
    assert not settings.for_scorer("tractability").batch
    with pytest.raises(ConfigError, match="batch = 'yes' is not valid"):
        load_judge_settings({"batch": "yes"}, env={})
    with pytest.raises(ConfigError, match="cannot be combined with tools"):
        load_judge_settings({"tractability": {"batch": True, "tools": ["fetch_url"]}}, env={},
                            known_scorers=tuple(SPECS))


def test_result_lines_are_matched_by_custom_id_not_order(batches: ScriptedBatches,
                                                         folder: Path) -> None:
    # Each turn's verdict differs (by its request); the output file comes back reversed.
    values = {"next 3 days": 3, "Paris today": 5, "500 orders": 7, "Add up": 9}

    def reply(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        score = next(v for k, v in values.items() if k in user)
        return Reply(body=chat(json.dumps(verdict_for(body, score))))
    batches.default = reply
    table = _table(batches, tractability={"batch": False})
    _score(folder, table)
    (batch_id,) = batches.batches
    batches.finish(batch_id)
    out = batches.batches[batch_id]["output_file_id"]
    batches.files[out] = b"\n".join(reversed(batches.files[out].splitlines())) + b"\n"
    _score(folder, table)
    got = dict(_rows(folder, "SELECT turn_id, value FROM scores WHERE scorer = 'tool_usage'"))
    want = {t.turn_id: next(v for k, v in values.items() if k in t.request) for t in TURNS}
    assert got == want


def test_collected_cost_counts_towards_the_cost_budget(batches: ScriptedBatches,
                                                       folder: Path) -> None:
    _score(folder, _table(batches))  # both scorers batched
    tool_usage = next(b for b in batches.batches
                      if batches.lines(b)[0]["custom_id"].startswith("tool_usage/"))
    batches.finish(tool_usage)
    # tractability is synchronous now; the collected batch already spent $0.0028.
    report = _score(folder, _table(batches, tractability={"batch": False}),
                    Budget(max_cost_usd=0.001))
    assert report.stopped_reason is not None and "--max-cost" in report.stopped_reason
    assert _chat_posts(batches) == 0
    assert {s for (_, s) in _scored(folder)} == {"tool_usage"}
