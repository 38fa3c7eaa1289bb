"""Every command maps failures to exit codes through one helper."""

from __future__ import annotations

import json
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
