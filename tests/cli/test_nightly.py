"""`turnscore nightly` (and `turnscore demo`) through typer's CliRunner, and two nightly
processes at once on one warehouse."""

from __future__ import annotations

import fcntl
import itertools
import shlex
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import typer
from typer.testing import CliRunner

from tests.scorers.judge.scripted import ScriptedJudge
from tests.warehouse.test_nightly import (
    RATES_BY_AGENT,
    expected_rates,
    with_judge,
    write_project,
)
from turnscore.cli.demo import demo_cli
from turnscore.cli.main import app as main_app
from turnscore.cli.nightly import nightly_cli
from turnscore.warehouse.db import LOCK_FILE, open_readonly
from turnscore.warehouse.publish import PUBLISHED_DB

app = typer.Typer()
app.command("nightly")(nightly_cli)
app.command("demo")(demo_cli)
runner = CliRunner()
WIDE = {"COLUMNS": "250"}

# A separate interpreter running the same command, as a scheduler would.
_PROCESS = """
import sys, typer
from turnscore.cli.nightly import nightly_cli
app = typer.Typer()
app.command("nightly")(nightly_cli)
app.command("noop")(lambda: None)
app(sys.argv[1:])
"""


@pytest.fixture(autouse=True)
def _no_env_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TURNSCORE_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("TURNSCORE_JUDGE_MODEL", raising=False)


def _nightly(config: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["nightly", "--config", str(config), *args], env=WIDE)
    return result.exit_code, result.stdout, result.stderr


def test_ok_exits_0_with_one_summary_table(tmp_path: Path) -> None:
    code, out, err = _nightly(write_project(tmp_path))
    assert code == 0, out + err
    for row in ("files", "spans", "turns", "labels", "scores (rules judge)", "views",
                "published", "report", "seconds", "errors"):
        assert row in out
    assert "48 new, 0 rebuilt, 0 unchanged" in out
    assert "inconclusive" in out and "tool_call_accuracy" in out and "tool_usage" in out
    assert str(tmp_path / "wh" / "report.html") in out.replace("\n", "")


def test_a_narrow_log_still_shows_the_whole_paths(tmp_path: Path) -> None:
    """Cron's output is no terminal (80 columns): the paths fold rather than end in '...'."""
    config = write_project(tmp_path)
    result = runner.invoke(app, ["nightly", "--config", str(config)], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    flat = "".join(ch for ch in result.stdout if ch not in " \n│┃|")
    assert str(tmp_path / "wh" / PUBLISHED_DB) in flat
    assert str(tmp_path / "wh" / "report.html") in flat


def test_json_summary_and_the_views_agree_with_ground_truth(tmp_path: Path) -> None:
    code, out, _ = _nightly(write_project(tmp_path), "--json")
    assert code == 0
    report = orjson.loads(out)
    assert report["outcome"] == "ok" and report["ingest"]["turns_new"] == 48
    con = open_readonly(Path(report["published"]))
    try:
        got = {r[0]: r[1] for r in con.execute(RATES_BY_AGENT).fetchall()}
    finally:
        con.close()
    assert got == {agent: pytest.approx(acc) for agent, (acc, _) in expected_rates().items()}


def test_a_malformed_source_file_exits_3_and_names_it(tmp_path: Path) -> None:
    config = write_project(tmp_path)
    (tmp_path / "exports" / "broken.json").write_text("{not json")
    code, out, _ = _nightly(config)
    assert code == 3
    assert "broken.json" in out.replace("\n", "")


def test_a_judge_budget_stop_exits_3(tmp_path: Path) -> None:
    with ScriptedJudge() as server:
        config = with_judge(write_project(tmp_path), server)
        code, out, _ = _nightly(config, "--max-cost", "0.000001")
    assert code == 3
    assert "scores (llm judge)" in out and "stopped early" in out


def test_busy_exits_4_with_a_clear_message(tmp_path: Path) -> None:
    config = write_project(tmp_path)
    (tmp_path / "wh").mkdir()
    with open(tmp_path / "wh" / LOCK_FILE, "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        code, _, err = _nightly(config, "--no-wait")
    assert code == 4
    assert "busy" in err and LOCK_FILE in err.replace("\n", "")


def test_a_bad_config_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "turnscore.toml"
    config.write_text("sources = [\n")
    code, _, err = _nightly(config)
    assert code == 2 and "not valid TOML" in err


def test_a_config_folder_or_an_empty_scorer_list_exits_2_with_one_line(tmp_path: Path) -> None:
    """A scheduler gets a usage error with --json, not a traceback (a folder) or a night
    that scores with every scorer (`scorers = []`)."""
    code, out, err = _nightly(tmp_path, "--json")
    assert code == 2 and "cannot read the config file" in err and "Traceback" not in err
    assert orjson.loads(out)["exit_code"] == 2
    config = tmp_path / "turnscore.toml"
    config.write_text('warehouse = "wh"\nscorers = []\n')
    code, _, err = _nightly(config)
    assert code == 2 and "'scorers' is empty" in err
    assert not (tmp_path / "wh").exists()


def test_help_lists_the_exit_codes() -> None:
    result = runner.invoke(app, ["nightly", "--help"], env=WIDE)
    text = " ".join(result.stdout.split())
    assert result.exit_code == 0
    for code in ("0 every stage worked", "3 completed with errors", "1 a stage failed",
                 "2 bad options or config", "4 another run holds the warehouse"):
        assert code in text, code


def test_a_misspelt_scorer_exits_2_before_ingesting_anything(tmp_path: Path) -> None:
    # As `turnscore score` does: a usage error, found before the first file is read.
    config = write_project(tmp_path)
    config.write_text(config.read_text().replace(
        'labels = ["cases.jsonl"]\n', 'labels = ["cases.jsonl"]\nscorers = ["tool_usag"]\n'))
    code, out, err = _nightly(config, "-q")
    assert code == 2 and out == ""
    assert "unknown scorer 'tool_usag'" in err and "failed at" not in err
    assert not (tmp_path / "wh").exists()  # nothing ingested, not even a warehouse made
    code, out, _ = _nightly(config, "--json")
    assert code == 2 and "tool_usag" in orjson.loads(out)["error"]
    assert not (tmp_path / "wh").exists()


def test_warehouse_option_overrides_the_config(tmp_path: Path) -> None:
    config = write_project(tmp_path)
    code, _, _ = _nightly(config, "--quiet", "--warehouse", str(tmp_path / "elsewhere"))
    assert code == 0
    assert (tmp_path / "elsewhere" / PUBLISHED_DB).is_file()
    assert not (tmp_path / "wh").exists()


def _start(config: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", _PROCESS, "nightly", "--config", str(config),
                             "--quiet", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_two_nightlies_at_once_in_two_processes_do_not_corrupt_anything(
        tmp_path: Path) -> None:
    config = write_project(tmp_path)
    procs = [_start(config, "--wait"), _start(config, "--wait")]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0, 0], [p.stderr.read() for p in procs if p.stderr]

    procs = [_start(config, "--no-wait"), _start(config, "--no-wait")]
    codes = sorted(p.wait(timeout=120) for p in procs)
    assert codes in ([0, 0], [0, 4])

    con = open_readonly(tmp_path / "wh" / "warehouse.duckdb")
    try:
        turns = con.execute("SELECT count(*), count(DISTINCT turn_id) FROM turns").fetchall()
        pairs = con.execute("SELECT count(*), count(DISTINCT (turn_id, scorer)) FROM scores"
                            ).fetchall()
        nightly = con.execute("SELECT started_at, ended_at, outcome FROM runs "
                              "WHERE kind = 'nightly' ORDER BY started_at").fetchall()
        unfinished = con.execute("SELECT count(*) FROM runs WHERE outcome IS DISTINCT FROM 'ok'"
                                 ).fetchall()
        rates = {r[0]: r[1] for r in con.execute(RATES_BY_AGENT).fetchall()}
    finally:
        con.close()
    assert turns == [(48, 48)]
    assert pairs[0][0] == pairs[0][1] > 0
    assert len(nightly) == 2 + codes.count(0) and all(r[2] == "ok" for r in nightly)
    # Serialised: each night starts after the one before it ended.
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(nightly))
    assert unfinished == [(0,)]
    assert rates == {a: pytest.approx(acc) for a, (acc, _) in expected_rates().items()}


def test_demo_prints_both_tables_and_what_to_try_next(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--dir", str(tmp_path / "demo")], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.stdout + result.stderr
    out = result.stdout
    assert "Per policy" in out and "classic example" in out
    for policy in ("good", "wrong_tool", "hallucinating", "lazy", "overreaching"):
        assert policy in out
    wh = str((tmp_path / "demo" / "warehouse").resolve())
    for command in ("turnscore query tool_usage_by_agent --warehouse", "turnscore views\n",
                    "turnscore report --warehouse"):
        assert command in out
    assert wh in out and str(Path(wh) / "report.html") in out
    # The advice works: each suggested command runs against the demo's warehouse.
    suggested = [line.strip() for line in out.splitlines() if line.startswith("  turnscore ")]
    assert len(suggested) == 3
    for command in suggested:
        result = runner.invoke(main_app, shlex.split(command)[1:], env=WIDE)
        assert result.exit_code == 0, (command, result.output)
    assert (tmp_path / "demo" / "report-all-days.html").is_file()


def test_quiet_still_prints_why_the_run_is_partial(tmp_path: Path) -> None:
    config = write_project(tmp_path)
    (tmp_path / "exports" / "broken.json").write_text("{not json")
    code, out, err = _nightly(config, "-q")
    assert code == 3 and out == ""
    assert "partial:" in err and "broken.json" in err


def test_json_is_printed_when_the_run_cannot_start(tmp_path: Path) -> None:
    config = tmp_path / "turnscore.toml"
    config.write_text("sources = [\n")
    code, out, _ = _nightly(config, "--json")
    assert code == 2
    document = orjson.loads(out)
    assert document["outcome"] == "failed" and "not valid TOML" in document["error"]
    config = write_project(tmp_path)
    (tmp_path / "wh").mkdir()
    with open(tmp_path / "wh" / LOCK_FILE, "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        code, out, _ = _nightly(config, "--no-wait", "--json")
    assert code == 4 and orjson.loads(out)["exit_code"] == 4


def test_without_a_config_it_says_it_ran_on_the_defaults(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ./turnscore.toml here
    monkeypatch.delenv("TURNSCORE_CONFIG", raising=False)
    result = runner.invoke(app, ["nightly", "--warehouse", str(tmp_path / "wh")], env=WIDE)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "note:" in result.stderr and "ran on the defaults" in result.stderr
    result = runner.invoke(app, ["nightly", "--warehouse", str(tmp_path / "wh"), "--json"])
    assert "ran on the defaults" in orjson.loads(result.stdout)["notes"][0]


def test_a_warehouse_path_that_is_a_file_exits_2_with_one_line(tmp_path: Path) -> None:
    config = tmp_path / "turnscore.toml"
    config.write_text('warehouse = "wh"\n')
    (tmp_path / "wh").write_text("not a folder")
    code, out, err = _nightly(config, "--json")
    assert code == 2 and "cannot be a folder" in err and "Traceback" not in err
    assert orjson.loads(out)["exit_code"] == 2
