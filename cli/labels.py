"""`turnscore labels PATH...`: labelled cases into the warehouse (DESIGN §8).

Thin: parses options and prints the summary; the work is
`turnscore.warehouse.labels.load_labels`. Exit codes: 0 all rows loaded, 3 loaded but
some rows were bad, 1 nothing loaded, 2 no label files given, 4 another run holds the
warehouse.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from turnscore.cli.options import (
    DEFAULT_WAREHOUSE,
    EXIT_FOR_OUTCOME,
    EXIT_USAGE,
    Config,
    Json,
    Quiet,
    Warehouse,
    exit_on_error,
    print_json,
    warehouse_of,
)
from turnscore.warehouse.config import load_config

if TYPE_CHECKING:
    from turnscore.warehouse.labels import LabelsReport

MAX_ERROR_LINES = 20


def labels_cli(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Label files: .jsonl, .json, .csv or .parquet "
                            "(default: `labels` in turnscore.toml)."),
    ] = None,
    warehouse: Warehouse = DEFAULT_WAREHOUSE,
    config: Config = None,
    json_output: Json = False,
    quiet: Quiet = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for another run holding the warehouse.")
    ] = False,
) -> None:
    """Load labelled cases (canary, ideal_response, expected_tools, ...) for the judge-free
    scorers. Cases with an existing id are replaced; bad rows are reported with their line."""
    # Imported here: the library's imports (every scorer, polars, the judge client) are
    # a second that `turnscore --help` and the other commands need not pay.
    from turnscore.warehouse.labels import load_labels

    err = Console(stderr=True)
    with exit_on_error(err):
        cfg = load_config(config)
        files = list(paths or cfg.labels)
        if not files:
            err.print("[red]error:[/red] no label files: pass PATH... or set `labels` in "
                      "turnscore.toml")
            raise typer.Exit(EXIT_USAGE)
        report = load_labels(warehouse_of(warehouse, cfg), files,
                             case_id_attribute=cfg.case_id_attribute, wait=wait)
    if json_output:
        print_json(report.to_json())
    elif quiet:
        _print_problems(report, err)  # -q drops the table, never the errors
    else:
        _print_summary(report, Console())
    raise typer.Exit(EXIT_FOR_OUTCOME[report.outcome])


def _print_summary(report: LabelsReport, console: Console) -> None:
    table = Table(title=f"labels {report.run_id}: {report.outcome}", show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    for what, count in (("files", report.files), ("cases read", report.cases_read),
                        ("cases new", report.cases_new), ("cases replaced", report.cases_updated),
                        ("bad rows", len(report.errors)),
                        ("warnings", len(report.warnings)),
                        ("cases matching no turn", report.unmatched_cases),
                        ("turns matching two or more cases", report.ambiguous_turns)):
        table.add_row(what, f"{count:,}")
    console.print(table)
    _print_problems(report, console)
    for turn in report.ambiguous[:5]:
        console.print(f"turn {turn.turn_id} matches cases {', '.join(turn.case_ids)}; "
                      f"scoring uses {turn.case_ids[0]}", highlight=False)
    if report.ambiguous_turns:
        console.print("Give such cases distinct inputs, or ids carried by the spans.")


def _print_problems(report: LabelsReport, console: Console) -> None:
    if report.error:
        console.print(f"[red]failed:[/red] {escape(report.error)}")
    for error in report.errors[:MAX_ERROR_LINES]:
        console.print(f"[yellow]{escape(str(error))}[/yellow]", highlight=False, soft_wrap=True)
    if len(report.errors) > MAX_ERROR_LINES:
        console.print(f"... and {len(report.errors) - MAX_ERROR_LINES} more (--json lists all)")
    for warning in report.warnings[:MAX_ERROR_LINES]:
        console.print(f"[yellow]warning:[/yellow] {escape(str(warning))}", highlight=False,
                      soft_wrap=True)
    if len(report.warnings) > MAX_ERROR_LINES:
        console.print(f"... and {len(report.warnings) - MAX_ERROR_LINES} more warnings "
                      "(--json lists all)")
