"""Without Ray installed, `--engine ray` says how to install it and exits 2 (bad usage)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.ray.parity import FIXTURES
from turnscore.cli.main import app


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry makes `import ray` raise ImportError, as on a machine without it.
    for name in [m for m in sys.modules if m == "ray" or m.startswith("ray.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ray", None)


@pytest.mark.parametrize("command", [
    ["ingest", str(FIXTURES / "corpus" / "openinference-openai")],
    ["score"],
])
def test_engine_ray_without_ray_says_how_to_install_it(
        no_ray: None, tmp_path: Path, command: list[str]) -> None:
    if command[0] == "score":  # score needs a warehouse to exist first
        done = CliRunner().invoke(app, ["ingest", str(FIXTURES / "corpus" / "pydantic-ai"),
                                        "--warehouse", str(tmp_path), "--quiet"])
        assert done.exit_code in (0, 3), done.output
    result = CliRunner().invoke(app, [*command, "--engine", "ray", "--warehouse",
                                      str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "pip install 'turnscore[ray]'" in result.output
    assert "Traceback" not in result.output
