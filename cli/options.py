"""Options shared by every command (DESIGN §8), declared once."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import orjson
import typer
from rich.console import Console
from rich.markup import escape

from turnscore.errors import ConfigError, TurnscoreError
from turnscore.warehouse.config import Config as Settings
from turnscore.warehouse.config import load_config
from turnscore.warehouse.errors import InvalidOption, QueryRejected, UnknownScorer, WarehouseBusy

Warehouse = Annotated[
    Path | None,
    typer.Option("--warehouse", envvar="TURNSCORE_WAREHOUSE",
                 help="Warehouse folder (default: `warehouse` in turnscore.toml, else "
                      "./turnscore-data)."),
]
DEFAULT_WAREHOUSE: Path | None = None
"""Unset: `warehouse_of` falls back to the config file, as DESIGN §7 orders it."""
Config = Annotated[
    Path | None,
    typer.Option("--config", envvar="TURNSCORE_CONFIG",
                 help="turnscore.toml (default: ./turnscore.toml when present)."),
]
Json = Annotated[bool, typer.Option("--json", help="Print a machine-readable summary.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars or tables.")]
"""Errors and why a run failed still go to stderr: a quiet nightly must not fail silently."""

# Exit codes a scheduler can act on.
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 3
"""Completed, but with errors (bad input rows, errored scores): look at the summary."""
EXIT_BUSY = 4
"""Another run holds the warehouse lock."""
EXIT_FOR_OUTCOME = {"ok": EXIT_OK, "partial": EXIT_PARTIAL, "failed": EXIT_FAILED}
"""A run's outcome (`turnscore.warehouse.runs.Outcome` values) as the command's exit code."""


def warehouse_of(option: Path | None, config: Path | Settings | None = None) -> Path:
    """The warehouse a command works on: `--warehouse` (or TURNSCORE_WAREHOUSE), else the
    config's `warehouse` (`config` is a loaded config, or the `--config` file to read),
    else ./turnscore-data. Raises `ConfigError` for a bad config file."""
    if option is not None:
        return option
    settings = config if isinstance(config, Settings) else load_config(config)
    return settings.warehouse


_USAGE_ERRORS = (ConfigError, InvalidOption, UnknownScorer, QueryRejected)


@contextmanager
def exit_on_error(err: Console, *, json_output: bool = False) -> Iterator[None]:
    """Turn an expected failure into one line on stderr and the exit code a scheduler acts on:
    busy 4, bad usage or configuration 2, anything else turnscore knows about 1. With
    `json_output` (the command's `--json`), stdout also gets a JSON object, as a completed
    run's summary does: `{"outcome": "failed", "error": ..., "exit_code": ...}`, so a
    caller parsing stdout always finds one document. Other exceptions are bugs and keep
    their traceback."""
    try:
        yield
    except WarehouseBusy as exc:
        _fail(err, exc, EXIT_BUSY, json_output)
    except _USAGE_ERRORS as exc:
        _fail(err, exc, EXIT_USAGE, json_output)
    except TurnscoreError as exc:
        _fail(err, exc, EXIT_FAILED, json_output)


def _fail(err: Console, exc: Exception, code: int, json_output: bool) -> NoReturn:
    err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)  # one line, for grep
    if json_output:
        print_json({"outcome": "failed", "error": str(exc), "exit_code": code})
    raise typer.Exit(code) from None


def print_json(document: object) -> None:
    """A `--json` summary: one indented JSON document on stdout."""
    sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2, default=str).decode()
                     + "\n")
