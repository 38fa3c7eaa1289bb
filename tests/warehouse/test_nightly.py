"""`run_nightly` on the real corpus plus a labelled dataset joined by request text.

The expected per-agent rates are derived from the corpus's `ground_truth.json` (what the
model really called and answered) and the labels below, then compared with what the
warehouse's `grounding_and_correctness` view reports after the nightly run.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.scorers.judge.scripted import Reply, ScriptedJudge, chat, verdict_for
from turnscore.errors import ConfigError
from turnscore.warehouse.config import load_config
from turnscore.warehouse.db import LOCK_FILE, open_readonly
from turnscore.warehouse.errors import UnknownScorer, WarehouseBusy
from turnscore.warehouse.nightly import run_nightly
from turnscore.warehouse.query import open_for_reading
from turnscore.warehouse.runs import Outcome

CORPUS = Path(__file__).parents[1] / "fixtures" / "corpus"
SCENARIOS = ("single_tool", "parallel_tools", "no_tool", "tool_error", "multi_turn")
# Frameworks whose spans carry the agent name; the others are known by service name.
NAMED_AGENT = {"openinference-langgraph", "otel-openai-v2_latest-span-agentspans", "pydantic-ai",
               "strands_default"}  # fmt: skip
TURNSCORE = str(Path(sys.executable).with_name("turnscore"))
NO_CANARY_AGENT = "corpus-openinference-openai"
"""The config disables `tool_grounding` for this agent."""

LABELS: list[dict[str, Any]] = [  # JSON by nature: the labels file's records
    {"id": "calc", "input": "What is 17 * 23 + 4? Use the calculator.", "canary": "395",
     "expected_tools": ["calculator"]},
    {"id": "paris", "input": "what's the weather in PARIS in celsius, and what do the docs "
                             "say about rate limits",
     "canary": ["18", "60 requests"], "expected_tools": ["get_weather", "search_docs"]},
    {"id": "hello", "input": "Say hello in French.", "ideal_response": "bonjour",
     "match_mode": "contains"},
    {"id": "atlantis", "input": "What's the weather in Atlantis?", "canary": "Atlantis",
     "expected_tools": ["get_weather"]},
    {"id": "auth", "input": "Search the docs for 'authentication'.", "canary": "bearer",
     "expected_tools": ["search_docs"]},
    # Deliberately not what the agents do, so the rates are not all 1.0.
    {"id": "pow", "input": "Now compute 2 ** 10.", "canary": "1000",
     "expected_tools": ["search_docs"]},
]

RATES_BY_AGENT = """
SELECT agent,
       sum(call_accuracy_rate * call_accuracy_scored) / nullif(sum(call_accuracy_scored), 0),
       sum(canary_pass_rate * canary_scored) / nullif(sum(canary_scored), 0),
       sum(canary_scored)
FROM grounding_and_correctness
GROUP BY agent ORDER BY agent
"""


def agent_of(framework: str) -> str:
    return "research_assistant" if framework in NAMED_AGENT else f"corpus-{framework}"


def copy_corpus(dest: Path) -> Path:
    """The five shared scenarios of every framework (traces and, where any, logs)."""
    for fw_dir in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        for scenario in SCENARIOS:
            for name in (f"{scenario}.json", f"{scenario}.logs.json"):
                if (fw_dir / name).is_file():
                    (dest / fw_dir.name).mkdir(parents=True, exist_ok=True)
                    shutil.copy(fw_dir / name, dest / fw_dir.name / name)
    return dest


def write_project(root: Path) -> Path:
    """Sources, labels and a turnscore.toml under `root`; returns the config path."""
    copy_corpus(root / "exports")
    with (root / "cases.jsonl").open("w") as fh:
        for case in LABELS:
            fh.write(json.dumps(case) + "\n")
    config = root / "turnscore.toml"
    config.write_text(
        'warehouse = "wh"\nsources = ["exports"]\nlabels = ["cases.jsonl"]\n'
        f'[agents.{NO_CANARY_AGENT}]\ndisable = ["tool_grounding"]\n'
    )
    return config


def expected_rates() -> dict[str, tuple[float | None, float | None]]:
    """Per agent: (tool-call accuracy, canary pass rate) from ground truth and LABELS."""
    norm = {_norm(c["input"]): c for c in LABELS}
    calls: dict[str, list[float]] = defaultdict(list)
    canaries: dict[str, list[float]] = defaultdict(list)
    for fw_dir in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        truth = json.loads((fw_dir / "ground_truth.json").read_text())
        agent = agent_of(fw_dir.name)
        for scenario in SCENARIOS:
            for turn in truth[scenario]:
                case = norm[_norm(turn["user_request"])]
                called = {c["name"] for c in turn["tool_calls"]}
                if "expected_tools" in case:
                    calls[agent].append(float(set(case["expected_tools"]) <= called))
                if "canary" in case and agent != NO_CANARY_AGENT:
                    wanted = case["canary"] if isinstance(case["canary"], list) else [
                        case["canary"]]
                    answer = (turn["final_answer"] or "").lower()
                    canaries[agent].append(float(all(w.lower() in answer for w in wanted)))
    agents = sorted(set(calls) | {agent_of(p.name) for p in CORPUS.iterdir() if p.is_dir()})
    return {a: (_mean(calls.get(a)), _mean(canaries.get(a))) for a in agents}


def _norm(text: str) -> str:
    return " ".join("".join(ch for ch in text.lower() if ch.isalnum() or ch.isspace()).split())


def _mean(values: list[float] | None) -> float | None:
    return sum(values) / len(values) if values else None


def test_the_nightly_job_ingests_labels_scores_and_the_views_give_the_rates(
        tmp_path: Path) -> None:
    config = load_config(write_project(tmp_path), env={})
    stages: list[str] = []
    report = run_nightly(config, progress=lambda stage, done, total: stages.append(stage))

    assert report.outcome is Outcome.OK, report.problems
    assert [s for i, s in enumerate(stages) if s not in stages[:i]] == \
        ["ingest", "labels", "score", "views", "report"]
    assert report.ingest is not None and report.ingest.turns_new == 6 * 8
    assert report.labels is not None and report.labels.cases_read == len(LABELS)
    assert report.labels.unmatched_cases == 0 and report.labels.ambiguous_turns == 0
    assert report.score is not None and report.score.errors == 0
    assert "grounding_and_correctness" in report.views
    assert report.report is not None and report.report.out == tmp_path / "wh" / "report.html"
    assert report.report.out.is_file()

    con, _, _ = open_for_reading(config.warehouse)
    try:
        got = {row[0]: (row[1], row[2]) for row in con.execute(RATES_BY_AGENT).fetchall()}
        no_canary = con.execute(
            "SELECT count(*) FROM scores JOIN turns USING (turn_id) WHERE scorer = "
            "'tool_grounding' AND service_name = ?", [NO_CANARY_AGENT]).fetchall()
    finally:
        con.close()
    want = expected_rates()
    assert sorted(got) == sorted(want)
    for agent, (accuracy, canary) in want.items():
        assert got[agent][0] == pytest.approx(accuracy), agent
        assert got[agent][1] == (None if canary is None else pytest.approx(canary)), agent
    assert no_canary == [(0,)]
    # Five labelled turns with expected tools per framework; "pow" expects the wrong tool.
    assert got["research_assistant"][0] == pytest.approx(12 / 15)

    assert report.published is not None
    snapshot = open_readonly(Path(report.published))
    try:
        runs = snapshot.execute("SELECT run_id, outcome FROM runs WHERE kind = 'nightly'"
                                ).fetchall()
    finally:
        snapshot.close()
    assert runs == [(report.run_id, "ok")]


def test_a_second_night_with_nothing_new_changes_nothing(tmp_path: Path) -> None:
    config = load_config(write_project(tmp_path), env={})
    first = run_nightly(config)
    second = run_nightly(config)
    assert second.outcome is Outcome.OK
    assert first.ingest is not None and second.ingest is not None
    assert second.ingest.files_skipped == first.ingest.files_read > 0
    assert second.ingest.turns_new == 0
    assert second.score is not None and second.score.nothing_to_do
    con, _, _ = open_for_reading(config.warehouse)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT turn_id) FROM turns").fetchall() \
            == [(48, 48)]
        kinds = con.execute("SELECT kind, outcome, count(*) FROM runs GROUP BY ALL ORDER BY ALL"
                            ).fetchall()
    finally:
        con.close()
    assert ("nightly", "ok", 2) in kinds and ("score", "ok", 2) in kinds


def test_a_malformed_source_file_makes_the_night_partial(tmp_path: Path) -> None:
    config_path = write_project(tmp_path)
    (tmp_path / "exports" / "broken.json").write_text('{"resourceSpans": [{"scopeSpans": 7}]}')
    report = run_nightly(load_config(config_path, env={}))
    assert report.outcome is Outcome.PARTIAL and report.failed_stage is None
    assert any("broken.json" in p for p in report.problems)
    assert report.ingest is not None and report.ingest.turns_new == 48
    assert report.published is not None and report.report is not None


def test_a_failed_stage_stops_the_run_and_is_recorded(tmp_path: Path) -> None:
    config_path = write_project(tmp_path)
    shutil.rmtree(tmp_path / "exports")
    (tmp_path / "exports").mkdir()
    (tmp_path / "exports" / "junk.json").write_text("not json at all")
    report = run_nightly(load_config(config_path, env={}))
    assert report.outcome is Outcome.FAILED and report.failed_stage == "ingest"
    assert report.labels is None and report.score is None
    con, _, _ = open_for_reading(tmp_path / "wh")
    try:
        row = con.execute("SELECT outcome, error FROM runs WHERE kind = 'nightly'").fetchall()
    finally:
        con.close()
    assert row[0][0] == "failed" and "ingest" in str(row[0][1])


def test_an_unknown_scorer_in_the_config_is_refused_before_ingest(tmp_path: Path) -> None:
    config_path = write_project(tmp_path)
    config_path.write_text('scorers = ["no_such_scorer"]\n' + config_path.read_text())
    with pytest.raises(UnknownScorer, match=r"no_such_scorer.*tool_usage"):
        run_nightly(load_config(config_path, env={}))
    assert not (tmp_path / "wh").exists()


@pytest.mark.parametrize("rule", ['disable = ["tractabilty"]', 'enable = ["tractabilty"]'])
def test_an_unknown_scorer_in_an_agent_rule_is_refused_before_ingest(tmp_path: Path,
                                                                     rule: str) -> None:
    config = tmp_path / "turnscore.toml"
    config.write_text(f'warehouse = "wh"\n[agents.bot]\n{rule}\n')
    with pytest.raises(UnknownScorer, match=r"tractabilty.*tractability"):
        run_nightly(load_config(config, env={}))
    assert not (tmp_path / "wh").exists()


def test_a_second_nightly_is_refused_while_one_holds_the_warehouse(tmp_path: Path) -> None:
    config = load_config(write_project(tmp_path), env={})
    config.warehouse.mkdir(parents=True)
    with open(config.warehouse / LOCK_FILE, "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(WarehouseBusy, match="busy"):
            run_nightly(config, wait=False)
    assert not (config.warehouse / "warehouse.duckdb").exists()


@pytest.fixture(autouse=True)
def _no_env_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TURNSCORE_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("TURNSCORE_JUDGE_MODEL", raising=False)


def with_judge(config_path: Path, server: ScriptedJudge, extra: str = "") -> Path:
    config_path.write_text(config_path.read_text() + (
        f'[judge]\nbase_url = "{server.url}"\nmodel = "scripted"\ntimeout_s = 5\n'
        f"max_retries = 0\nprice_input_per_mtok = 1000\nprice_output_per_mtok = 1000\n"
        f"{extra}"))
    return config_path


def test_a_configured_judge_scores_the_judged_scorers_over_http(tmp_path: Path) -> None:
    with ScriptedJudge() as server:
        config = load_config(with_judge(write_project(tmp_path), server), env={})
        report = run_nightly(config)
        assert report.judge == "llm" and report.outcome is Outcome.OK, report.problems
        assert server.requests
    con, _, _ = open_for_reading(config.warehouse)
    try:
        judges = con.execute("SELECT scorer, judge, count(*) FROM scores WHERE scorer IN "
                             "('tool_usage', 'tractability') AND status = 'scored' "
                             "GROUP BY ALL ORDER BY ALL").fetchall()
    finally:
        con.close()
    # Every turn is judged for Tractability; Tool Usage skips (not_run) a turn without tools.
    assert [(scorer, judge) for scorer, judge, _ in judges] == [
        ("tool_usage", "scripted"), ("tractability", "scripted")]
    assert judges[1][2] == 48 and 40 <= judges[0][2] <= 48


def test_a_judge_budget_stop_makes_the_night_partial_leaving_the_rest_pending(
        tmp_path: Path) -> None:
    with ScriptedJudge() as server:
        config = load_config(with_judge(write_project(tmp_path), server, "concurrency = 1\n"),
                             env={})
        report = run_nightly(config, max_cost=0.000001)
    assert report.outcome is Outcome.PARTIAL and report.failed_stage is None
    assert report.score is not None and report.score.stopped_reason
    assert any("stopped early" in p for p in report.problems)
    assert report.published is not None


def test_judge_rules_ignores_a_configured_judge(tmp_path: Path) -> None:
    with ScriptedJudge() as server:
        config = load_config(with_judge(write_project(tmp_path), server), env={})
        report = run_nightly(config, judge="rules")
        assert report.judge == "rules" and not server.requests


def test_a_failed_labels_stage_says_why(tmp_path: Path) -> None:
    config = tmp_path / "turnscore.toml"
    config.write_text('warehouse = "wh"\nlabels = ["missing.jsonl"]\n')
    report = run_nightly(load_config(config, env={}))
    assert report.outcome is Outcome.FAILED and report.failed_stage == "labels"
    assert "missing.jsonl" in report.problems[-1], report.problems


def test_judge_llm_without_a_judge_is_refused_before_ingest(tmp_path: Path) -> None:
    config_path = write_project(tmp_path)
    with pytest.raises(ConfigError, match=r"--judge llm needs \[judge\] base_url"):
        run_nightly(load_config(config_path, env={}), judge="llm")
    assert not (tmp_path / "wh").exists()


def nightly_rows(warehouse: Path) -> list[tuple[Any, ...]]:
    con = open_readonly(warehouse / "warehouse.duckdb")
    try:
        return con.execute("SELECT kind, outcome, error IS NOT NULL, ended_at IS NOT NULL "
                           "FROM runs WHERE kind IN ('nightly', 'score') ORDER BY started_at"
                           ).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_night_killed_while_judging_leaves_its_row(tmp_path: Path,
                                                     sig: signal.Signals) -> None:
    """SIGTERM (a scheduler stopping the job) finishes the night's row and its score run's
    as interrupted; SIGKILL leaves them open, and the next night marks them."""
    with ScriptedJudge() as server:
        server.default = lambda body: Reply(body=chat(json.dumps(verdict_for(body))),
                                            delay_s=30)
        config = with_judge(write_project(tmp_path), server)
        child = subprocess.Popen([TURNSCORE, "nightly", "--config", str(config), "--quiet"],
                                 cwd=tmp_path, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.requests, "the night never reached the judge"
        child.send_signal(sig)
        _, stderr = child.communicate(timeout=60)
    if sig is signal.SIGTERM:
        assert child.returncode != 0, stderr
        assert nightly_rows(tmp_path / "wh")[-2:] == [
            ("nightly", "interrupted", True, True), ("score", "interrupted", True, True)]
    else:
        assert child.returncode == -signal.SIGKILL
        assert nightly_rows(tmp_path / "wh")[-2:] == [
            ("nightly", None, False, False), ("score", None, False, False)]
    report = run_nightly(load_config(config.with_name("turnscore.toml"), env={}),
                         judge="rules")
    assert report.outcome is Outcome.OK, report.problems
    rows = nightly_rows(tmp_path / "wh")
    assert [r[:2] for r in rows] == [
        ("nightly", "interrupted"), ("score", "interrupted"), ("nightly", "ok"),
        ("score", "ok")]
