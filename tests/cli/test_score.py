"""`turnscore score` through typer's CliRunner on a real warehouse."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
import typer
from typer.testing import CliRunner

from tests.lockholder import held_by_another_process
from tests.scorers.judge.scripted import ScriptedJudge
from tests.warehouse.turn_factory import answer_length, load_turns, make_turn, registered
from turnscore.cli.score import score_cli
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.query import run_query

app = typer.Typer()
app.command("score")(score_cli)
app.command("noop")(lambda: None)  # two commands, so "score" stays a subcommand
runner = CliRunner()


@pytest.fixture
def wh(tmp_path: Path) -> Path:
    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(i) for i in range(5)])
    con.close()
    return tmp_path


@pytest.fixture(autouse=True)
def length() -> Iterator[str]:
    with registered("t_length", answer_length) as name:
        yield name


def _score(wh: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["score", "--scorer", "t_length", "--warehouse", str(wh), *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_summary_then_nothing_to_do(wh: Path) -> None:
    code, out, _ = _score(wh, "--json")
    assert code == 0
    report = orjson.loads(out)
    assert report["outcome"] == "ok" and report["written"] == 5
    assert report["scorers"][0] == {"scorer": "t_length", "version": "1", "pending_before": 5,
                                    "scored": 5, "inconclusive": 0, "not_run": 0, "error": 0}
    code, out, _ = _score(wh)
    assert code == 0 and "nothing to score" in out


def test_errored_scores_exit_partial_and_show_in_the_table(wh: Path) -> None:
    con = open_warehouse(wh)
    load_turns(con, [make_turn(2, final_answer="boom")])
    con.close()
    code, out, _ = _score(wh)
    assert code == 3
    assert "t_length" in out and "partial" in out and "status = 'error'" in out


def test_busy_unknown_scorer_and_llm_without_config(wh: Path, tmp_path: Path) -> None:
    with held_by_another_process(wh):
        code, _, err = _score(wh)
    assert code == 4 and "busy" in err
    code, _, err = _score(wh, "--scorer", "nope")
    assert code == 2 and "unknown scorer 'nope'" in err
    empty = tmp_path / "turnscore.toml"
    empty.write_text('warehouse = "x"\n')
    code, _, err = _score(wh, "--judge", "llm", "--config", str(empty))
    assert code == 2 and "[judge]" in err


def test_sample_must_be_a_fraction(wh: Path) -> None:
    code, _, err = _score(wh, "--sample", "1.5")
    assert code == 2 and "--sample" in err


def test_sample_zero_is_a_usage_error(wh: Path) -> None:
    code, _, err = _score(wh, "--sample", "0")
    assert code == 2 and "fraction in (0, 1]" in err


def test_max_calls_stops_the_llm_judge_and_leaves_the_rest_pending(wh: Path) -> None:
    with ScriptedJudge() as server:
        config = wh / "turnscore.toml"
        config.write_text(f'[judge]\nbase_url = "{server.url}"\nmodel = "scripted"\n'
                          "timeout_s = 5\nmax_retries = 0\nconcurrency = 1\n")
        args = ("--scorer", "tool_usage", "--config", str(config), "--json")
        result = runner.invoke(app, ["score", "--warehouse", str(wh), *args, "--max-calls", "2"])
        assert result.exit_code == 3, result.stderr
        report = orjson.loads(result.stdout)
        assert len(server.requests) == 2
        assert "max" in report["stopped_reason"] and report["written"] == 2
        # The rest was left pending, and the next run picks it up.
        result = runner.invoke(app, ["score", "--warehouse", str(wh), *args])
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == 5


def test_a_missing_warehouse_is_an_error_not_a_new_one(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    code, out, err = _score(missing)
    assert code == 1 and out == ""
    assert "no warehouse at" in err
    assert not missing.exists()


def test_a_stop_says_once_that_the_rest_stays_pending(wh: Path) -> None:
    with ScriptedJudge() as server:
        config = wh / "turnscore.toml"
        config.write_text(f'[judge]\nbase_url = "{server.url}"\nmodel = "scripted"\n'
                          "timeout_s = 5\nmax_retries = 0\nconcurrency = 1\n")
        result = runner.invoke(app, ["score", "--warehouse", str(wh), "--scorer", "tool_usage",
                                     "--config", str(config), "--max-calls", "2"])
    assert result.exit_code == 3, result.stderr
    text = " ".join(result.stdout.split())
    assert "stopped early" in text and text.count("stays pending") == 1, text


def _agent_turns(wh: Path) -> None:
    """Turns 0-4 of agent `bot`, 5-7 of agent `billing` (the fixture's are agentless)."""
    con = open_warehouse(wh)
    load_turns(con, [replace(make_turn(i), agent_name="bot" if i < 5 else "billing").with_hash()
                     for i in range(8)])
    con.close()


def _scored(wh: Path) -> list[tuple[str, str]]:
    con = open_warehouse(wh)
    try:
        return con.execute("SELECT t.agent_name, s.scorer FROM scores s JOIN turns t USING "
                           "(turn_id) GROUP BY ALL ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_score_applies_the_configs_scorer_selection_as_nightly_does(
        wh: Path, tmp_path: Path) -> None:
    _agent_turns(wh)
    config = tmp_path / "turnscore.toml"
    config.write_text('scorers = ["t_length"]\n[agents.billing]\ndisable = ["t_length"]\n'
                      '[agents.bot]\nenable = ["t_length", "tool_grounding"]\n')
    result = runner.invoke(app, ["score", "--warehouse", str(wh), "--config", str(config)])
    assert result.exit_code == 0, result.stdout + result.stderr
    # Nothing for billing (disabled), both for bot (its enable list), nothing else at all.
    assert _scored(wh) == [("bot", "t_length"), ("bot", "tool_grounding")]


def test_score_refuses_a_misspelt_scorer_in_the_config(wh: Path, tmp_path: Path) -> None:
    config = tmp_path / "turnscore.toml"
    config.write_text('[agents.bot]\ndisable = ["t_lenght"]\n')
    code, _, err = _score(wh, "--config", str(config))
    assert code == 2 and "unknown scorer 't_lenght'" in err
    assert _scored(wh) == []


def test_quiet_still_says_why_the_run_is_not_ok(wh: Path) -> None:
    con = open_warehouse(wh)
    load_turns(con, [make_turn(2, final_answer="boom")])
    con.close()
    result = runner.invoke(app, ["score", "--scorer", "t_length", "--warehouse", str(wh), "-q"])
    assert result.exit_code == 3
    assert result.stdout == ""
    assert "1 errored scores" in result.stderr


@pytest.mark.parametrize("args", [("--scorer", "nope"), ("--sample", "0")])
def test_json_is_printed_on_failure_too(wh: Path, args: tuple[str, ...]) -> None:
    code, out, err = _score(wh, "--json", *args)
    assert code == 2 and err
    document = orjson.loads(out)
    assert document["outcome"] == "failed" and document["exit_code"] == 2
    assert document["error"]


def test_json_is_printed_for_a_missing_warehouse(tmp_path: Path) -> None:
    code, out, _ = _score(tmp_path / "typo", "--json")
    assert code == 1 and "no warehouse at" in orjson.loads(out)["error"]


def test_score_coverage_counts_turns_of_agents_a_scorer_is_off_for_as_disabled(
        wh: Path, tmp_path: Path) -> None:
    _agent_turns(wh)
    config = tmp_path / "turnscore.toml"
    config.write_text('scorers = ["t_length"]\n[agents.billing]\ndisable = ["t_length"]\n')
    result = runner.invoke(app, ["score", "--warehouse", str(wh), "--config", str(config)])
    assert result.exit_code == 0, result.stdout + result.stderr
    coverage = run_query(wh, "SELECT scorer, turns, scored, missing, disabled "
                             "FROM score_coverage").table.to_pylist()
    # 5 bot turns scored; billing's 3 are disabled, not missing.
    assert coverage == [{"scorer": "t_length", "turns": 8, "scored": 5, "missing": 0,
                         "disabled": 3}]
    # Enabled again: they are pending (and scored), so neither missing nor disabled.
    config.write_text('scorers = ["t_length"]\n')
    runner.invoke(app, ["score", "--warehouse", str(wh), "--config", str(config)])
    assert run_query(wh, "SELECT scored, missing, disabled FROM score_coverage"
                     ).table.to_pylist() == [{"scored": 8, "missing": 0, "disabled": 0}]


def test_score_coverage_shows_a_scorer_switched_off_for_every_agent(
        wh: Path, tmp_path: Path) -> None:
    # No agent runs tool_grounding, so it has no score row at all: its row comes from the
    # disabled count alone.
    _agent_turns(wh)
    config = tmp_path / "turnscore.toml"
    config.write_text('scorers = ["t_length", "tool_grounding"]\n'
                      '[agents.bot]\ndisable = ["tool_grounding"]\n'
                      '[agents.billing]\ndisable = ["tool_grounding"]\n')
    result = runner.invoke(app, ["score", "--warehouse", str(wh), "--config", str(config)])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert run_query(wh, "SELECT scorer, turns, scored, inconclusive, not_run, errors, "
                         "missing, disabled, stale, scored_share FROM score_coverage "
                         "ORDER BY scorer").table.to_pylist() == [
        {"scorer": "t_length", "turns": 8, "scored": 8, "inconclusive": 0, "not_run": 0,
         "errors": 0, "missing": 0, "disabled": 0, "stale": 0, "scored_share": 1.0},
        {"scorer": "tool_grounding", "turns": 8, "scored": 0, "inconclusive": 0,
         "not_run": 0, "errors": 0, "missing": 0, "disabled": 8, "stale": 0,
         "scored_share": 0.0}]
