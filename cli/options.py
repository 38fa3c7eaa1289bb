"""Options shared by every command (DESIGN §8), declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from turnscore.warehouse.config import Config as Settings
from turnscore.warehouse.config import load_config

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

# Exit codes a scheduler can act on.
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 3
"""Completed, but with errors (bad input rows, errored scores): look at the summary."""
EXIT_BUSY = 4
"""Another run holds the warehouse lock."""


def warehouse_of(option: Path | None, config: Path | Settings | None = None) -> Path:
    """The warehouse a command works on: `--warehouse` (or TURNSCORE_WAREHOUSE), else the
    config's `warehouse` (`config` is a loaded config, or the `--config` file to read),
    else ./turnscore-data. Raises `ConfigError` for a bad config file."""
    if option is not None:
        return option
    settings = config if isinstance(config, Settings) else load_config(config)
    return settings.warehouse
