"""`turnscore ingest`: exit codes a scheduler can act on, the summary, --json."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from turnscore.cli.ingest import ingest_cli
from turnscore.cli.options import EXIT_BUSY, EXIT_FAILED, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"


@pytest.fixture
def app() -> typer.Typer:
    """The command as `turnscore` mounts it (a group, so `ingest` is a sub-command)."""
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command("ingest")(ingest_cli)
    return app


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)  # no stray turnscore.toml or ./turnscore-data
    monkeypatch.delenv("TURNSCORE_WAREHOUSE", raising=False)
    return CliRunner()


def _good(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    for name in ("single_tool.json", "multi_turn.json"):
        shutil.copy(CORPUS / "pydantic-ai" / name, folder / name)
    return folder


def test_clean_input_exits_0_with_a_summary(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    result = runner.invoke(
        app, ["ingest", str(_good(tmp_path)), "--warehouse", str(tmp_path / "wh")]
    )
    assert result.exit_code == EXIT_OK, result.output
    assert "turns new" in result.output and "files read" in result.output
    assert (tmp_path / "wh" / "warehouse.duckdb").exists()


def test_json_summary_and_skipping_on_the_second_run(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    args = ["ingest", str(_good(tmp_path)), "--warehouse", str(tmp_path / "wh"), "--json"]
    first = json.loads(runner.invoke(app, args).stdout)
    assert first["outcome"] == "ok" and first["turns_new"] == 3 and first["files_read"] == 2
    second = runner.invoke(app, args)
    assert second.exit_code == EXIT_OK
    data = json.loads(second.stdout)
    assert (data["files_read"], data["files_skipped"], data["turns_new"]) == (0, 2, 0)


def test_bad_input_exits_3_and_names_the_file(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    folder = _good(tmp_path)
    (folder / "broken.json").write_text('{"resourceSpans": [{"scopeSpans": [ nope')
    result = runner.invoke(app, ["ingest", str(folder), "--warehouse", str(tmp_path / "wh")])
    assert result.exit_code == EXIT_PARTIAL, result.output
    assert "broken.json" in result.output
    data = json.loads(
        runner.invoke(
            app, ["ingest", str(folder), "--warehouse", str(tmp_path / "wh2"), "--json"]
        ).stdout
    )
    assert data["outcome"] == "partial" and data["turns_new"] == 3
    assert [Path(e["source"]).name for e in data["errors"]] == ["broken.json"]


def test_a_missing_path_exits_1(app: typer.Typer, runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["ingest", str(tmp_path / "nope"), "--warehouse", str(tmp_path / "wh"), "-q"]
    )
    assert result.exit_code == EXIT_FAILED
    assert "nope" in result.stderr


def test_no_paths_and_no_config_exits_2(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    result = runner.invoke(app, ["ingest", "--warehouse", str(tmp_path / "wh")])
    assert result.exit_code == EXIT_USAGE
    assert "sources" in result.stderr


def test_configured_sources_are_ingested(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    _good(tmp_path)
    (tmp_path / "turnscore.toml").write_text('sources = ["in"]\n')
    result = runner.invoke(app, ["ingest", "--warehouse", str(tmp_path / "wh"), "--json"])
    assert result.exit_code == EXIT_OK, result.output
    assert json.loads(result.stdout)["files_read"] == 2


HOLD_LOCK = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from turnscore.warehouse.db import writer_lock\n"
    "with writer_lock(Path(sys.argv[1])):\n"
    "    print('locked', flush=True)\n"
    "    time.sleep(60)\n"
)


def test_a_busy_warehouse_exits_4(app: typer.Typer, runner: CliRunner, tmp_path: Path) -> None:
    # Held by another process: the lock is re-entrant within one.
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path / "wh")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        result = runner.invoke(
            app, ["ingest", str(_good(tmp_path)), "--warehouse", str(tmp_path / "wh")]
        )
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == EXIT_BUSY
    assert "busy" in result.stderr


def test_quiet_prints_nothing_on_success(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    result = runner.invoke(
        app, ["ingest", str(_good(tmp_path)), "--warehouse", str(tmp_path / "wh"), "-q"]
    )
    assert result.exit_code == EXIT_OK
    assert result.output == ""


def test_help_documents_the_command(app: typer.Typer, runner: CliRunner) -> None:
    result = runner.invoke(app, ["ingest", "--help"])
    assert result.exit_code == 0
    for option in ("--warehouse", "--json", "--quiet", "--config", "--wait"):
        assert option in result.output
