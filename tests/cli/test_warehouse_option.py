"""Every command finds the warehouse the same way (DESIGN §7): `--warehouse`, else
TURNSCORE_WAREHOUSE, else `warehouse` in turnscore.toml, else ./turnscore-data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnscore.cli.main import app
from turnscore.cli.options import warehouse_of

runner = CliRunner()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder whose turnscore.toml puts the warehouse in `data/`, and one labelled case."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TURNSCORE_WAREHOUSE", raising=False)
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": "hello"}\n')
    (tmp_path / "turnscore.toml").write_text('warehouse = "data"\nlabels = ["cases.jsonl"]\n')
    return tmp_path


def test_commands_use_the_configs_warehouse(project: Path) -> None:
    result = runner.invoke(app, ["labels"])
    assert result.exit_code == 0, result.output
    assert (project / "data" / "warehouse.duckdb").is_file()
    assert not (project / "turnscore-data").exists()
    result = runner.invoke(app, ["query", "SELECT case_id FROM labels", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"case_id": "a"}]
    result = runner.invoke(app, ["score", "--json"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["report", "--out", "r.html", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["database"].startswith(str(project / "data"))
    assert not (project / "turnscore-data").exists()


def test_the_option_and_the_environment_win_over_the_config(project: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    assert warehouse_of(Path("cli-wh")) == Path("cli-wh")
    assert warehouse_of(None) == project / "data"
    monkeypatch.setenv("TURNSCORE_WAREHOUSE", str(project / "env-wh"))
    assert warehouse_of(None) == project / "env-wh"
    result = runner.invoke(app, ["labels"])
    assert result.exit_code == 0, result.output
    assert (project / "env-wh" / "warehouse.duckdb").is_file()
    assert not (project / "data").exists()
