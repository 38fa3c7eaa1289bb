"""`turnscore report`: write the self-contained HTML report (DESIGN §8).

Thin: the work is `turnscore.warehouse.report.build_report`. Exit codes: 0 written,
2 bad options (a start after the end), 1 no warehouse or it could not be read.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from turnscore.cli.options import (
    DEFAULT_WAREHOUSE,
    Config,
    Json,
    Quiet,
    Warehouse,
    exit_on_error,
    print_json,
    warehouse_of,
)

DEFAULT_OUT = Path("turnscore-report.html")
_DAY = ["%Y-%m-%d"]


def report_cli(
    out: Annotated[Path, typer.Option("--out", "-o", help="The HTML file to write.")
                   ] = DEFAULT_OUT,
    start: Annotated[datetime | None, typer.Option(
        "--start", formats=_DAY, help="First UTC day (YYYY-MM-DD). Alone: from it to the "
                                      "last day with turns.")] = None,
    end: Annotated[datetime | None, typer.Option(
        "--end", formats=_DAY, help="Last UTC day, included. Default: the last day with "
                                    "turns (the last night).")] = None,
    warehouse: Warehouse = DEFAULT_WAREHOUSE,
    config: Config = None,
    json_output: Json = False,
    quiet: Quiet = False,
) -> None:
    """Write one self-contained HTML report (charts inlined, opens offline) for a night
    or a date range."""
    # Imported here: the library's imports (every scorer, polars, the judge client) are
    # a second that `turnscore --help` and the other commands need not pay.
    from turnscore.warehouse.report import build_report

    err = Console(stderr=True)
    with exit_on_error(err):
        summary = build_report(warehouse_of(warehouse, config), start=_day(start),
                               end=_day(end), out=out)
    if json_output:
        print_json(summary.to_json())
    elif not quiet:
        days = summary.start.isoformat() if summary.start == summary.end \
            else f"{summary.start} to {summary.end}"
        empty = f"; no data for: {', '.join(summary.empty_sections)}" \
            if summary.empty_sections else ""
        Console().print(f"report for {escape(days)}: {summary.turns:,} turns "
                        f"({summary.previous_turns:,} the period before){escape(empty)}\n"
                        f"wrote {escape(str(summary.out))} ({summary.bytes / 1e6:.1f} MB)")


def _day(value: datetime | None) -> date | None:
    return value.date() if value is not None else None
