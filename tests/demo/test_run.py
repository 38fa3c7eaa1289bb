"""`run_demo` end to end: generated traces, the real nightly job, numbers read from the views."""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path

import pytest

from turnscore.demo.policies import POLICIES
from turnscore.demo.questions import QUESTIONS, SPECIAL_REQUESTS
from turnscore.demo.run import DemoReport, PolicyMetrics, run_demo
from turnscore.errors import ConfigError
from turnscore.warehouse.db import open_readonly
from turnscore.warehouse.runs import Outcome

TODAY = date(2026, 3, 14)
QUESTIONS_BY_ID = {q.id: q.input for q in QUESTIONS}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoReport:
    with pytest.MonkeyPatch.context() as env:
        # The rules judge, whatever judge the machine running the tests has configured.
        env.delenv("TURNSCORE_JUDGE_BASE_URL", raising=False)
        return run_demo(tmp_path_factory.mktemp("demo"), seed=7, days=7, today=TODAY)


@pytest.fixture(scope="module")
def by_policy(demo: DemoReport) -> dict[str, PolicyMetrics]:
    return {p.policy: p for p in demo.policies}


def test_the_nightly_run_worked_and_left_config_warehouse_and_report(demo: DemoReport) -> None:
    assert demo.nightly.outcome is Outcome.OK, demo.nightly.problems
    assert demo.nightly.judge == "rules"
    config = tomllib.loads(demo.config.read_text())
    assert config["warehouse"] == "warehouse"
    assert all((demo.workdir / s).is_file() for s in config["sources"])
    assert (demo.workdir / config["labels"][0]).is_file()
    assert demo.report.is_file() and demo.report.read_text().startswith("<!DOCTYPE html>")
    assert demo.nightly.published is not None
    con = open_readonly(Path(demo.nightly.published))
    try:
        assert con.execute("SELECT kind, outcome FROM runs WHERE kind = 'nightly'").fetchall() \
            == [("nightly", "ok")]
    finally:
        con.close()
    assert (demo.first_day, demo.last_day) == (date(2026, 3, 8), TODAY)


def test_the_classic_table_is_exact(demo: DemoReport) -> None:
    got = [(c.policy, c.turns, round(c.tool_call_accuracy or -1, 2),
            round(c.hallucination_rate or 0, 2)) for c in demo.classic]
    assert got == [("good", 5, 1.00, 0.00), ("wrong_tool", 5, 0.20, 0.00),
                   ("hallucinating", 5, 1.00, 0.20)]


def test_every_policy_is_reported(by_policy: dict[str, PolicyMetrics]) -> None:
    assert sorted(by_policy) == sorted(POLICIES)
    for p in by_policy.values():
        assert p.turns > 0 and p.quadrant is not None and p.suggests
        for value in (p.tool_call_accuracy, p.hallucination_rate, p.canary_pass_rate,
                      p.answer_correctness):
            assert value is not None and 0 <= value <= 1
        assert p.mean_tool_usage is not None and p.mean_tractability is not None


def test_good_is_fine_on_every_metric(by_policy: dict[str, PolicyMetrics]) -> None:
    good = by_policy["good"]
    assert (good.tool_call_accuracy, good.hallucination_rate, good.canary_pass_rate,
            good.answer_correctness) == (1.0, 0.0, 1.0, 1.0)
    assert good.quadrant == "high usage, high tractability"


def test_wrong_tool_shows_in_tool_call_accuracy_only(by_policy: dict[str, PolicyMetrics]
                                                      ) -> None:
    wrong = by_policy["wrong_tool"]
    assert wrong.tool_call_accuracy is not None and wrong.tool_call_accuracy < 0.5
    assert wrong.hallucination_rate == 0.0


def test_hallucinating_shows_in_hallucination_rate_only(by_policy: dict[str, PolicyMetrics]
                                                        ) -> None:
    liar = by_policy["hallucinating"]
    assert liar.hallucination_rate is not None and liar.hallucination_rate > 0
    assert liar.tool_call_accuracy == 1.0
    assert liar.canary_pass_rate == 1.0


def test_lazy_shows_in_canaries_and_tool_calls(by_policy: dict[str, PolicyMetrics]) -> None:
    lazy = by_policy["lazy"]
    assert lazy.canary_pass_rate is not None and lazy.canary_pass_rate < 0.5
    assert lazy.tool_call_accuracy is not None and lazy.tool_call_accuracy < 0.5


def test_overreaching_has_the_lowest_tractability(by_policy: dict[str, PolicyMetrics]) -> None:
    over = by_policy["overreaching"]
    others = [p.mean_tractability for name, p in by_policy.items() if name != "overreaching"]
    assert over.mean_tractability is not None
    assert all(t is not None and over.mean_tractability < t for t in others)
    assert over.tool_call_accuracy == 1.0


FINE, FIX_THE_AGENT = "high usage, high tractability", "low usage, high tractability"


def test_tool_usage_exposes_the_wrong_tool_and_the_lazy_agent(
        by_policy: dict[str, PolicyMetrics]) -> None:
    usage = {name: p.mean_tool_usage for name, p in by_policy.items()}
    good = usage["good"]
    assert good is not None and good >= 9
    for name in ("wrong_tool", "lazy"):
        mine = usage[name]
        assert mine is not None and mine < 5 and good - mine >= 4, (name, usage)
        assert by_policy[name].quadrant == FIX_THE_AGENT
        assert by_policy[name].mean_tractability is not None
        assert by_policy[name].mean_tractability >= 9  # their tasks suit them
    for name in ("good", "hallucinating"):  # hallucination is another scorer's finding
        assert by_policy[name].quadrant == FINE
        assert (by_policy[name].mean_tractability or 0) >= 9
    assert (usage["hallucinating"] or 0) >= 9 and (usage["overreaching"] or 0) >= 9


def test_tractability_exposes_the_overreaching_agent_only(
        by_policy: dict[str, PolicyMetrics]) -> None:
    over = by_policy["overreaching"].mean_tractability
    others = [p.mean_tractability for name, p in by_policy.items() if name != "overreaching"]
    assert over is not None and all(t is not None and t - over >= 1 for t in others), others


def test_the_turns_each_agent_got_wrong_score_below_five(demo: DemoReport) -> None:
    con = open_readonly(Path(demo.nightly.published or ""))
    try:
        rows = con.execute(
            "SELECT agent, request, min(tool_usage), max(tool_usage), max(tractability) "
            "FROM turns_scored GROUP BY ALL").fetchall()
    finally:
        con.close()
    # the same request asked on several days: the worst day must pass a "high" check and
    # the best day a "low" one
    low_usage = {(agent, request): u for agent, request, u, _, _ in rows}
    high_usage = {(agent, request): u for agent, request, _, u, _ in rows}
    tract = {(agent, request): t for agent, request, _, _, t in rows}
    # wrong_tool erred wherever a wrong call is scripted; lazy wherever a tool was needed
    for qid in ("founded", "mul-12-7", "mission", "div-100-4", "headcount-2025",
                "revenue-2024", "headquarters", "products", "churn-2025"):
        assert high_usage["wrong_tool", QUESTIONS_BY_ID[qid]] < 5, qid
        assert high_usage["lazy", QUESTIONS_BY_ID[qid]] < 5, qid
        assert low_usage["good", QUESTIONS_BY_ID[qid]] >= 9, qid
    for q in SPECIAL_REQUESTS:
        assert tract["overreaching", q.input] < 5, q.id
    assert low_usage["lazy", QUESTIONS_BY_ID["share-price"]] >= 9  # nothing to call for a forecast


def test_a_second_demo_in_the_same_folder_replaces_the_first(demo: DemoReport) -> None:
    again = run_demo(demo.workdir, seed=7, days=7, today=TODAY)
    assert again.nightly.outcome is Outcome.OK
    assert [(p.policy, p.turns) for p in again.policies] == \
        [(p.policy, p.turns) for p in demo.policies]
    assert again.classic == demo.classic


@pytest.mark.parametrize("existing", ["turnscore.toml", "warehouse", "exports"])
def test_a_folder_that_is_not_the_demos_is_left_alone(tmp_path: Path, existing: str) -> None:
    (tmp_path / existing).mkdir() if existing != "turnscore.toml" else (
        tmp_path / existing).write_text('warehouse = "mine"\n')
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ConfigError, match="not a demo folder"):
        run_demo(tmp_path, today=TODAY)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    if existing == "turnscore.toml":
        assert (tmp_path / existing).read_text() == 'warehouse = "mine"\n'
