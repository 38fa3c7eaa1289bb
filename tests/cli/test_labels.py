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


def test_quiet_drops_the_table_but_not_the_bad_rows(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "input": "hi"}\n{"id": "b"}\n')
    result = CliRunner().invoke(app, ["labels", str(cases), "-q"],
                                env={"TURNSCORE_WAREHOUSE": str(tmp_path / "wh"),
                                     "COLUMNS": "40"})
    assert result.exit_code == EXIT_PARTIAL
    assert result.stdout == ""
    # One line, not wrapped at the terminal's width.
    assert result.stderr == f"{cases}:2: missing required field 'input'\n"


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


def test_a_bad_csv_row_is_named_and_the_rest_load(tmp_path: Path) -> None:
    cases = tmp_path / "cases.csv"
    cases.write_text('id,input,match_mode\na,hello,exact\nb,"unterminated\nc,bye,fuzzy\n'
                     'd,x,contains,extra\ne,ciao,\n')
    code, out = _run([str(cases), "--json"], tmp_path)
    assert code == EXIT_PARTIAL
    summary = json.loads(out)
    assert (summary["outcome"], summary["cases_new"]) == ("partial", 3)
    assert summary["errors"] == [
        f"{cases}:3: not valid CSV: unexpected end of data",
        f"{cases}:5: 4 fields, the header has 3 (an unquoted comma?)",
    ]
    # An unknown mode is a warning: the case loads and is scored as `normalized`.
    assert summary["warnings"] == [
        f"{cases}:4: unknown match_mode 'fuzzy' (known: exact, normalized, contains); "
        "scored as normalized"]


def test_warnings_are_shown_with_and_without_quiet(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "input": "hi", "expected_tool": ["x"]}\n'
                     '{"id": "b", "input": "yo", "expected_tools": ["x"], '
                     '"expected_tools_mode": "most"}\n')
    for args in ([], ["-q"]):
        result = CliRunner().invoke(app, ["labels", str(cases), "--warehouse",
                                          str(tmp_path / "wh"), *args],
                                    env={"COLUMNS": "250"})
        assert result.exit_code == 0, result.stdout + result.stderr
        text = result.stdout + result.stderr
        assert "'expected_tool'" in text and "ignored" in text
        assert "unknown expected_tools_mode 'most'" in text and "scored as all" in text
