"""Options shared by every command (DESIGN §8), declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Warehouse = Annotated[
    Path,
    typer.Option("--warehouse", envvar="TURNSCORE_WAREHOUSE", help="Warehouse folder.",
                 show_default=True),
]
DEFAULT_WAREHOUSE = Path("turnscore-data")
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
