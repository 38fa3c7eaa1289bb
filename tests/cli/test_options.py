"""Every command maps failures to exit codes through one helper."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from rich.console import Console

from turnscore.cli.options import EXIT_BUSY, EXIT_FAILED, EXIT_USAGE, exit_on_error
from turnscore.errors import ConfigError, TurnscoreError
from turnscore.warehouse.errors import (
    InvalidOption,
    QueryRejected,
    UnknownScorer,
    WarehouseBusy,
    WarehouseMissing,
)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (WarehouseBusy(Path("wh/.writer.lock"), "pid 1"), EXIT_BUSY),
        (ConfigError("bad key"), EXIT_USAGE),
        (InvalidOption("bad date"), EXIT_USAGE),
        (UnknownScorer("nope", ["a"]), EXIT_USAGE),
        (QueryRejected("not a query"), EXIT_USAGE),
        (WarehouseMissing(Path("wh")), EXIT_FAILED),
        (TurnscoreError("<b>boom</b>"), EXIT_FAILED),
    ],
)
def test_expected_failures_become_one_line_and_an_exit_code(error: Exception, code: int) -> None:
    console = Console(record=True, width=200)
    with pytest.raises(typer.Exit) as raised, exit_on_error(console):
        raise error
    assert raised.value.exit_code == code
    assert console.export_text().strip() == f"error: {error}"


def test_a_bug_keeps_its_traceback() -> None:
    with pytest.raises(KeyError), exit_on_error(Console(record=True)):
        raise KeyError("bug")


@pytest.mark.parametrize(
    ("error", "code"),
    [(WarehouseBusy(Path("wh/.writer.lock")), EXIT_BUSY), (InvalidOption("bad"), EXIT_USAGE),
     (TurnscoreError("boom"), EXIT_FAILED)],
)  # fmt: skip
def test_with_json_stdout_gets_the_failure_as_json(
    error: Exception, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    console = Console(stderr=True, record=True, width=40)
    with pytest.raises(typer.Exit) as raised, exit_on_error(console, json_output=True):
        raise error
    assert raised.value.exit_code == code
    assert json.loads(capsys.readouterr().out) == {
        "outcome": "failed", "error": str(error), "exit_code": code
    }
    assert console.export_text() == f"error: {error}\n"  # one line, however narrow


def test_without_json_stdout_stays_empty(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit), exit_on_error(Console(stderr=True)):
        raise InvalidOption("bad")
    assert capsys.readouterr().out == ""


TURNSCORE = str(Path(sys.executable).with_name("turnscore"))


@pytest.mark.parametrize(("args", "error"), [
    (["score", "--bogus"], "No such option: --bogus"),
    (["score", "--sample", "7"], "Invalid value for '--sample'"),
    (["nightly", "--judge", "maybe"], "Invalid value for '--judge'"),
])
def test_a_usage_error_under_json_is_a_json_failure_too(tmp_path: Path, args: list[str],
                                                        error: str) -> None:
    """Option parsing fails before any command runs: the console script still gives a
    caller parsing stdout its one document."""
    done = subprocess.run([TURNSCORE, *args, "--json"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert done.returncode == EXIT_USAGE
    document = json.loads(done.stdout)
    assert document["outcome"] == "failed" and document["exit_code"] == EXIT_USAGE
    assert error in document["error"] and error in done.stderr
    without = subprocess.run([TURNSCORE, *args], capture_output=True, text=True,
                             cwd=tmp_path, timeout=60)
    assert without.returncode == EXIT_USAGE and without.stdout == ""
