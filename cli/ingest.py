"""`turnscore ingest PATH...`: OTLP files or folders into the warehouse (DESIGN §8).

Thin: parses options, shows progress and the summary; the work is
`turnscore.warehouse.ingest_run.run_ingest`. Exit codes: 0 all ingested, 3 completed but
some input was bad (see the summary and `ingest_errors`), 1 failed (no input file gave a
record, or the warehouse load failed), 2 nothing to ingest was given or a path does not
exist, 4 another run holds the warehouse. `--quiet` drops the progress bar and the table,
never the errors: those go to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from turnscore.cli.engine import DataRoot, Engine, EngineOption, RayAddress, data_root_of
from turnscore.cli.options import (
    DEFAULT_WAREHOUSE,
    EXIT_FOR_OUTCOME,
    Config,
    Json,
    Quiet,
    Warehouse,
    exit_on_error,
    print_json,
    warehouse_of,
)
from turnscore.errors import TurnscoreError
from turnscore.ingest.formats import INPUT_SUFFIXES_HELP
from turnscore.warehouse.config import Config as LoadedConfig
from turnscore.warehouse.config import load_config
from turnscore.warehouse.errors import InvalidOption

if TYPE_CHECKING:
    from turnscore.ingest.pipeline import Progress as IngestProgress
    from turnscore.warehouse.ingest_run import IngestReport

MAX_ERROR_LINES = 20
"""Error lines shown in the summary; the rest are in the `ingest_errors` table."""


def ingest_cli(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="OTLP files, or folders read recursively for files named "
            f"{INPUT_SUFFIXES_HELP} (default: `sources` in turnscore.toml); with "
            "--engine ray also s3://, gs:// or file:// URIs."
        ),
    ] = None,
    warehouse: Warehouse = DEFAULT_WAREHOUSE,
    config: Config = None,
    json_output: Json = False,
    quiet: Quiet = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for another run holding the warehouse.")
    ] = False,
    engine: EngineOption = Engine.LOCAL,
    ray_address: RayAddress = None,
    data_root: DataRoot = None,
) -> None:
    """Read OTLP trace and log files, write spans and turns, load turns into the warehouse.

    Files already ingested (same content) are skipped; late spans rebuild their turns. A
    file that gave no record, only errors, is read and reported again on the next run.
    """
    # Imported here: the ingest pipeline and pyarrow are half a second that `turnscore
    # --help` and the other commands need not pay.
    from turnscore.warehouse.ingest_run import run_ingest
    from turnscore.warehouse.ray_run import run_ray_ingest

    err = Console(stderr=True)
    with exit_on_error(err, json_output=json_output):
        cfg = load_config(config)
        wh = warehouse_of(warehouse, cfg)
        named = [str(p) for p in (paths or cfg.sources)]
        files = [Path(p) for p in named]
        if not files:
            raise InvalidOption(
                "nothing to ingest: pass PATH... or set `sources` in turnscore.toml"
            )
        try:
            if engine is Engine.RAY:
                report = run_ray_ingest(named, wh, data_root_of(data_root, wh),
                                        cfg.ingest_settings, ray_address=ray_address,
                                        wait=wait)
            elif quiet or json_output or not err.is_terminal:
                report = run_ingest(files, wh, cfg.ingest_settings, wait=wait)
            else:
                report = _with_progress(files, wh, wait, cfg, err)
        except (TurnscoreError, typer.Exit):
            raise
        except Exception as exc:
            # A bug: its traceback goes to stderr, and a --json caller still gets its object.
            err.print_exception()
            message = f"ingest failed unexpectedly: {type(exc).__name__}: {exc}"
            raise TurnscoreError(message) from exc
    if json_output:
        print_json(report.to_json())
    elif quiet:
        _print_problems(report, err)
    else:
        _print_summary(report, Console())
    raise typer.Exit(EXIT_FOR_OUTCOME[report.outcome])


def _with_progress(
    paths: list[Path], warehouse: Path, wait: bool, cfg: LoadedConfig, console: Console
) -> IngestReport:
    from turnscore.warehouse.ingest_run import run_ingest

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

        return run_ingest(paths, warehouse, cfg.ingest_settings, progress=update, wait=wait)


def _print_summary(report: IngestReport, console: Console) -> None:
    table = Table(title=f"{report.run_id}: {report.outcome}", show_header=False)
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
        ("input errors", len(report.errors)),
    ]
    for what, count in rows:
        table.add_row(what, f"{count:,}")
    table.add_row("seconds", f"{report.seconds:.2f}")
    console.print(table)
    if report.turn_status:
        statuses = ", ".join(f"{n:,} {s}" for s, n in report.turn_status.items())
        console.print(f"turns of this run by status: {statuses}", highlight=False)
        decoders = ", ".join(f"{c or '(none)'} {n:,}" for c, n in report.turn_conventions.items())
        console.print(f"turns of this run by convention: {escape(decoders)}", highlight=False)
    _print_problems(report, console)


def turn_issues(report: IngestReport) -> str | None:
    """One line on the run's turns that assembly could not trust, when there are any."""
    if not report.turn_issues:
        return None
    counts = ", ".join(f"{issue} {n:,}" for issue, n in report.turn_issues.items())
    return (f"turns with issues: {counts} (of {sum(report.turn_status.values()):,} turns; "
            "per agent and convention: turnscore query turn_quality)")


def _print_problems(report: IngestReport, console: Console) -> None:
    """Why the run failed, the first input errors, and the notes: all that `--quiet` keeps."""
    # One line each, never wrapped: stderr of a scheduled run is read with grep.
    for note in report.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False, soft_wrap=True)
    if issues := turn_issues(report):
        console.print(f"[yellow]note:[/yellow] {escape(issues)}", highlight=False, soft_wrap=True)
    if report.error:
        console.print(
            f"[red]failed:[/red] {escape(report.error)}", highlight=False, soft_wrap=True
        )
    for line in report.errors[:MAX_ERROR_LINES]:
        console.print(
            f"[yellow]input error:[/yellow] {escape(str(line))}", highlight=False, soft_wrap=True
        )
    if len(report.errors) > MAX_ERROR_LINES:
        console.print(
            f"... and {len(report.errors) - MAX_ERROR_LINES} more: "
            f"SELECT * FROM ingest_errors WHERE run_id = '{report.run_id}'",
            soft_wrap=True,
        )
