"""`turnscore labels`: exit codes, --json summary, config defaults, help text."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from turnscore.cli.labels import labels_cli
from turnscore.cli.options import EXIT_OK, EXIT_PARTIAL, EXIT_USAGE

app = typer.Typer()
app.command("labels")(labels_cli)
app.command("unused")(lambda: None)  # two commands, so `labels` is a subcommand as in main


def _run(args: list[str], cwd: Path) -> tuple[int, str]:
    env = {"TURNSCORE_WAREHOUSE": str(cwd / "wh")}
    result = CliRunner().invoke(app, ["labels", *args], env=env)
    return result.exit_code, result.stdout


def test_json_summary_and_partial_exit(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "input": "hi"}\n{"id": "b"}\n')
    code, out = _run([str(cases), "--json"], tmp_path)
    assert code == EXIT_PARTIAL
    summary = json.loads(out)
    assert summary["cases_new"] == 1 and summary["unmatched_cases"] == 1
    assert summary["errors"] == [f"{cases}:2: missing required field 'input'"]


def test_labels_from_config_and_table_summary(tmp_path: Path) -> None:
    (tmp_path / "cases.csv").write_text("id,input\na,hello\n")
    config = tmp_path / "turnscore.toml"
    config.write_text('labels = ["cases.csv"]\n')
    code, out = _run(["--config", str(config)], tmp_path)
    assert code == EXIT_OK, out
    assert "cases new" in out and "ok" in out


def test_no_files_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "turnscore.toml"
    config.write_text("")
    code, _ = _run(["--config", str(config)], tmp_path)
    assert code == EXIT_USAGE


def test_help_names_the_formats() -> None:
    result = CliRunner().invoke(app, ["labels", "--help"])
    assert result.exit_code == 0
    assert ".jsonl" in result.stdout and "--warehouse" in result.stdout
