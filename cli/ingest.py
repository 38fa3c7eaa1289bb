"""`turnscore ingest PATH...`: OTLP files or folders into the warehouse (DESIGN §8).

Thin: parses options, shows progress and the summary; the work is
`turnscore.warehouse.ingest_run.run_ingest`. Exit codes: 0 all ingested, 3 completed but
some input was bad (see the summary and `ingest_errors`), 1 nothing could be done,
2 nothing to ingest was given, 4 another run holds the warehouse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
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
from turnscore.ingest.pipeline import Progress as IngestProgress
from turnscore.warehouse.config import load_config
from turnscore.warehouse.ingest_run import IngestReport, run_ingest

MAX_ERROR_LINES = 20
"""Error lines shown in the summary; the rest are in the `ingest_errors` table."""



def ingest_cli(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="OTLP files or folders (read recursively): .json .jsonl .pb, .gz/.zst "
            "(default: `sources` in turnscore.toml)."
        ),
    ] = None,
    warehouse: Warehouse = DEFAULT_WAREHOUSE,
    config: Config = None,
    json_output: Json = False,
    quiet: Quiet = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for another run holding the warehouse.")
    ] = False,
) -> None:
    """Read OTLP trace and log files, write spans and turns, load turns into the warehouse.

    Files already ingested (same content) are skipped; late spans rebuild their turns.
    """
    err = Console(stderr=True)
    with exit_on_error(err):
        cfg = load_config(config)
        wh = warehouse_of(warehouse, cfg)
        files = list(paths or cfg.sources)
        if not files:
            err.print(
                "[red]error:[/red] nothing to ingest: pass PATH... or set `sources` in "
                "turnscore.toml"
            )
            raise typer.Exit(EXIT_USAGE)
        if quiet or json_output or not err.is_terminal:
            report = run_ingest(files, wh, wait=wait, case_id_attribute=cfg.case_id_attribute)
        else:
            report = _with_progress(files, wh, wait, cfg.case_id_attribute, err)
    if json_output:
        print_json(report.to_json())
    elif not quiet:
        _print_summary(report, Console())
    elif report.error:
        err.print(f"[red]error:[/red] {escape(report.error)}")
    raise typer.Exit(EXIT_FOR_OUTCOME[report.outcome])


def _with_progress(
    paths: list[Path], warehouse: Path, wait: bool, case_id_attribute: str, console: Console
) -> IngestReport:
    columns = (
        TextColumn("ingest"),
        BarColumn(),
        DownloadColumn(),
        TextColumn("{task.fields[spans]:,} spans"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("ingest", total=None, spans=0)

        def update(p: IngestProgress) -> None:
            bar.update(task, completed=p.bytes_done, total=p.bytes_total, spans=p.spans)

        return run_ingest(
            paths, warehouse, progress=update, wait=wait, case_id_attribute=case_id_attribute
        )


def _print_summary(report: IngestReport, console: Console) -> None:
    table = Table(title=f"ingest {report.run_id[:12]}: {report.outcome}", show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    rows = [
        ("files read", report.files_read),
        ("files skipped (already ingested)", report.files_skipped),
        ("spans read", report.spans),
        ("spans new", report.new_spans),
        ("log records", report.logs),
        ("turns new", report.turns_new),
        ("turns rebuilt", report.turns_rebuilt),
        ("turns unchanged", report.turns_unchanged),
        ("turns removed", report.turns_removed),
        ("turns built directly", report.turns_direct),
        ("input errors", len(report.errors)),
    ]
    for what, count in rows:
        table.add_row(what, f"{count:,}")
    table.add_row("seconds", f"{report.seconds:.2f}")
    console.print(table)
    if report.error:
        console.print(f"[red]failed:[/red] {escape(report.error)}")
    for line in report.errors[:MAX_ERROR_LINES]:
        where = f"{line.source}:{line.position}" if line.position else line.source
        console.print(f"[yellow]{escape(where)}[/yellow] {escape(line.message)}", highlight=False)
    if len(report.errors) > MAX_ERROR_LINES:
        console.print(
            f"... and {len(report.errors) - MAX_ERROR_LINES} more: "
            f"SELECT * FROM ingest_errors WHERE run_id = '{report.run_id}'"
        )
