"""`turnscore nightly`: ingest the configured sources, label, score, refresh views,
publish, report (DESIGN §8).

Thin: the work is `turnscore.warehouse.nightly.run_nightly`. Exit codes: 0 every stage
worked, 3 completed with errors (bad input, errored scores, a judge stop), 1 a stage
failed, 2 bad options or config, 4 another nightly holds the warehouse.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table

from turnscore.cli.engine import DataRoot, Engine, EngineOption, RayAddress, data_root_of
from turnscore.cli.ingest import turn_issues
from turnscore.cli.options import (
    EXIT_FOR_OUTCOME,
    Config,
    Json,
    Quiet,
    exit_on_error,
    print_json,
)
from turnscore.warehouse.config import Config as NightlyConfig
from turnscore.warehouse.config import JudgeMode, load_config

if TYPE_CHECKING:
    from turnscore.warehouse.ingest_run import IngestReport
    from turnscore.warehouse.nightly import NightlyReport
    from turnscore.warehouse.ray_run import OnRay


def nightly_cli(
    config: Config = None,
    warehouse: Annotated[Path | None, typer.Option(
        "--warehouse", help="Warehouse folder (default: TURNSCORE_WAREHOUSE, else the "
                            "config's `warehouse`, else ./turnscore-data).")] = None,
    json_output: Json = False,
    quiet: Quiet = False,
    wait: Annotated[bool, typer.Option(
        "--wait/--no-wait", help="Wait for another nightly holding the warehouse, or exit "
                                 "at once with code 4.")] = True,
    max_cost: Annotated[float | None, typer.Option(
        "--max-cost", min=0.0, help="Stop LLM judging at this spend in USD; the rest stays "
                                    "pending.")] = None,
    judge: Annotated[JudgeMode, typer.Option(
        "--judge", help="auto: the LLM judge when \\[judge] has a base_url, else the rules "
                        "judge.")] = JudgeMode.AUTO,
    engine: EngineOption = Engine.LOCAL,
    ray_address: RayAddress = None,
    data_root: DataRoot = None,
) -> None:
    """Run the whole nightly job from turnscore.toml: ingest, labels, score, views,
    publish, HTML report; one summary at the end.

    Exit codes: 0 every stage worked; 3 completed with errors (bad input, errored scores,
    a judge stop); 1 a stage failed; 2 bad options or config; 4 another run holds the
    warehouse (with --no-wait)."""
    # Imported here: the library's imports (every scorer, polars, the judge client) are
    # a second that `turnscore --help` and the other commands need not pay.
    from turnscore.warehouse.nightly import run_nightly
    from turnscore.warehouse.ray_run import OnRay

    err = Console(stderr=True)
    with exit_on_error(err, json_output=json_output):
        cfg = load_config(config)
        if warehouse is not None:
            cfg = replace(cfg, warehouse=warehouse)
        ray = (OnRay(data_root_of(data_root, cfg.warehouse), ray_address)
               if engine is Engine.RAY else None)
        if quiet or json_output or not err.is_terminal:
            report = run_nightly(cfg, judge=judge, max_cost=max_cost, wait=wait, ray=ray)
        else:
            report = _with_progress(cfg, judge, max_cost, wait, err, ray)
    if json_output:
        print_json(report.to_json())
    elif quiet:
        print_problems(report, err)
    else:
        print_summary(report, Console())
        print_problems(report, err)
    raise typer.Exit(EXIT_FOR_OUTCOME[report.outcome])


def _with_progress(cfg: NightlyConfig, judge: JudgeMode, max_cost: float | None, wait: bool,
                   console: Console, ray: OnRay | None) -> NightlyReport:
    from turnscore.warehouse.nightly import run_nightly

    columns = (TextColumn("{task.description:<7}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                for previous in tasks.values():
                    bar.update(previous, completed=bar.tasks[previous].total or 1,
                               total=bar.tasks[previous].total or 1)
                tasks[stage] = bar.add_task(stage, total=None)
            bar.update(tasks[stage], completed=done, total=total)

        return run_nightly(cfg, progress=update, judge=judge, max_cost=max_cost, wait=wait,
                           ray=ray)


def _scores(report: NightlyReport) -> Table | str:
    if report.score is None:
        return "-"
    rows = [c for c in report.score.scorers if c.written or c.pending_before]
    if not rows:
        return f"nothing pending ({report.score.turns_in_scope} turns)"
    table = Table(box=None, padding=(0, 1, 0, 0), show_edge=False)
    for name in ("scorer", "scored", "inconclusive", "not run", "error"):
        table.add_column(name, justify="left" if name == "scorer" else "right")
    for c in rows:
        table.add_row(escape(c.scorer), str(c.scored), str(c.inconclusive), str(c.not_run),
                      f"[red]{c.error}[/red]" if c.error else "0")
    return table


def print_summary(report: NightlyReport, console: Console) -> None:
    colour = {"ok": "green", "partial": "yellow", "failed": "red"}[report.outcome.value]
    table = Table(title=f"nightly {report.run_id}: [{colour}]{report.outcome.value}[/{colour}]",
                  show_header=False)
    table.add_column("stage", style="bold")
    # Folded, not cut: a cron log must show the whole published and report paths.
    table.add_column("result", overflow="fold")
    ingest, labels = report.ingest, report.labels
    table.add_row("files", f"{ingest.files_read} read, {ingest.files_skipped} already ingested"
                  if ingest else "no sources configured")
    table.add_row("spans", f"{ingest.spans} ({ingest.new_spans} new)" if ingest else "-")
    table.add_row("turns", f"{ingest.turns_new} new, {ingest.turns_rebuilt} rebuilt, "
                  f"{ingest.turns_unchanged} unchanged" if ingest else "-")
    table.add_row("turn issues", _issues(ingest))
    table.add_row("labels", f"{labels.cases_read} read ({labels.cases_new} new, "
                  f"{labels.cases_updated} updated), {labels.unmatched_cases} unmatched"
                  if labels else "no labels configured")
    table.add_row(f"scores ({report.judge} judge)", _scores(report))
    table.add_row("views", f"{len(report.views)} refreshed")
    table.add_row("published", escape(report.published or "-"))
    table.add_row("report", escape(str(report.report.out)) if report.report else "-")
    table.add_row("seconds", f"{report.seconds:.1f}")
    table.add_row("errors", escape("\n".join(report.problems)) or "none")
    console.print(table)


def _issues(ingest: IngestReport | None) -> str:
    if ingest is None:
        return "-"
    if not ingest.turn_issues:
        return "none"
    return ", ".join(f"{issue} {n:,}" for issue, n in ingest.turn_issues.items())


def print_problems(report: NightlyReport, console: Console) -> None:
    """The notes, what went wrong and where the run stopped: all that `--quiet` keeps (on
    stderr), one line each."""
    for note in report.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
    if report.ingest and (issues := turn_issues(report.ingest)):
        console.print(f"[yellow]note:[/yellow] {escape(issues)}", soft_wrap=True)
    for note in report.score.judge_notes if report.score else ():
        console.print(f"[yellow]judge:[/yellow] {escape(note)}", soft_wrap=True)
    if report.outcome.value != "ok":
        for problem in report.problems:
            console.print(f"[red]{report.outcome.value}:[/red] {escape(problem)}",
                          soft_wrap=True)
    if report.failed_stage:
        console.print(f"[red]failed at {report.failed_stage}[/red]; later stages did not run",
                      soft_wrap=True)
