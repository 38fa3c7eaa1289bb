"""`turnscore score`: score every turn that has no current score (DESIGN §8).

Thin: the work is `turnscore.warehouse.score_run.score_turns`. Exit codes: 0 everything
pending was scored, 3 completed with errored scores or stopped by the cost budget (the
rest stays pending for the next run), 1 failed, 2 bad options, 4 another run holds the
warehouse.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from turnscore.cli.engine import DataRoot, Engine, EngineOption, RayAddress, data_root_of
from turnscore.cli.options import (
    DEFAULT_WAREHOUSE,
    EXIT_OK,
    EXIT_PARTIAL,
    Config,
    Json,
    Quiet,
    Warehouse,
    exit_on_error,
    print_json,
    warehouse_of,
)
from turnscore.warehouse.config import JudgeMode, ScorerSelection, load_config
from turnscore.warehouse.db import DB_FILE
from turnscore.warehouse.errors import WarehouseMissing

if TYPE_CHECKING:
    from turnscore.warehouse.score_run import JudgeFactory, ScoreReport


def score_cli(
    scorer: Annotated[list[str] | None, typer.Option(
        "--scorer", help="Run only this scorer (repeatable). Default: every registered one.")
    ] = None,
    judge: Annotated[JudgeMode, typer.Option(
        "--judge", help="Judged scorers: the LLM judge configured in \\[judge] (llm), the "
                        "offline rules judge (rules), or the LLM judge when one is "
                        "configured (auto).")] = JudgeMode.AUTO,
    sample: Annotated[float | None, typer.Option(
        "--sample", min=0.0, max=1.0,
        help="Score a deterministic FRACTION of the turns (by turn id).")] = None,
    max_cost: Annotated[float | None, typer.Option(
        "--max-cost", min=0.0, help="Stop judging at this spend in USD; the rest stays "
                                    "pending.")] = None,
    max_calls: Annotated[int | None, typer.Option(
        "--max-calls", min=0, help="Stop after sending this many turns to the LLM judge; "
                                   "the rest stays pending.")] = None,
    rescore: Annotated[bool, typer.Option(
        "--rescore", help="Score every turn again, even with a current score.")] = False,
    warehouse: Warehouse = DEFAULT_WAREHOUSE,
    config: Config = None,
    json_output: Json = False,
    quiet: Quiet = False,
    wait: Annotated[bool, typer.Option(
        "--wait", help="Wait for another run holding the warehouse.")] = False,
    engine: EngineOption = Engine.LOCAL,
    ray_address: RayAddress = None,
    data_root: DataRoot = None,
) -> None:
    """Score every turn that has no current score (new turns, changed turns, new scorer
    versions, earlier errors), then publish a snapshot."""
    # Imported here: the library's imports (every scorer, polars, the judge client) are
    # a second that `turnscore --help` and the other commands need not pay.
    from turnscore.scorers.judge.config import Budget
    from turnscore.warehouse.judging import llm_judge_for
    from turnscore.warehouse.ray_score import run_ray_score
    from turnscore.warehouse.score_run import resolve_scorers, score_turns

    err = Console(stderr=True)
    with exit_on_error(err, json_output=json_output):
        cfg = load_config(config)
        wh = warehouse_of(warehouse, cfg)
        if not (wh / DB_FILE).is_file():  # a mistyped path must not score an empty warehouse
            raise WarehouseMissing(wh / DB_FILE)
        # The same choice as `turnscore nightly`: turnscore.toml's `scorers` and
        # `[agents.*]` rules, `--scorer` standing in for `scorers`.
        selection = cfg.scorer_selection([s.name for s in resolve_scorers(None)], scorer)
        factory = llm_judge_for(cfg.judge, judge,
                                Budget(max_cost_usd=max_cost, max_calls=max_calls))
        try:
            if engine is Engine.RAY:
                report = run_ray_score(wh, data_root_of(data_root, wh),
                                       scorers=selection.scorers, rescore=rescore,
                                       sample=sample, ray_address=ray_address, wait=wait,
                                       scorers_for_agent=selection.per_agent,
                                       llm_judge=factory)
            elif quiet or json_output or not err.is_terminal:
                report = score_turns(wh, scorers=selection.scorers, rescore=rescore,
                                     sample=sample, judge_factory=factory, wait=wait,
                                     scorers_for_agent=selection.per_agent)
            else:
                report = _with_progress(wh, selection, rescore, sample, factory, wait, err)
        finally:
            if factory is not None:
                factory.close()
    if json_output:
        print_json(report.to_json())
    elif quiet:
        print_problems(report, err)
    else:
        print_summary(report, Console())
    raise typer.Exit(EXIT_OK if report.outcome.value == "ok" else EXIT_PARTIAL)


def _with_progress(warehouse: Path, selection: ScorerSelection, rescore: bool,
                   sample: float | None, factory: JudgeFactory | None, wait: bool,
                   console: Console) -> ScoreReport:
    from turnscore.warehouse.score_run import score_turns

    columns = (TextColumn("score"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("score", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return score_turns(warehouse, scorers=selection.scorers, rescore=rescore,
                           sample=sample, progress=update, judge_factory=factory, wait=wait,
                           scorers_for_agent=selection.per_agent)


def print_summary(report: ScoreReport, console: Console) -> None:
    if report.nothing_to_do:
        console.print(f"nothing to score: all {report.turns_in_scope:,} turns have current "
                      f"scores from {len(report.scorers)} scorer(s)")
        return
    table = Table(title=f"score {report.run_id}: {report.outcome.value}", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    # Scorer names stay whole; the number columns give way on a narrow terminal.
    table.add_column("scorer", no_wrap=True,
                     min_width=max(len(c.scorer) for c in report.scorers))
    table.add_column("version")
    for name in ("pending", "scored", "inconclusive", "not run", "error", "seconds"):
        table.add_column(name, justify="right")
    for c in report.scorers:
        table.add_row(escape(c.scorer), escape(c.version), f"{c.pending_before:,}",
                      f"{c.scored:,}", f"{c.inconclusive:,}", f"{c.not_run:,}",
                      f"[red]{c.error:,}[/red]" if c.error else "0",
                      f"{report.scorer_seconds.get(c.scorer, 0.0):.1f}")
    table.caption = (f"{report.turns_in_scope:,} turns in {report.seconds:.1f}s (reading "
                     f"turns {report.read_seconds:.1f}s, writing scores "
                     f"{report.write_seconds:.1f}s)"
                     + (f"; published in {report.publish_seconds:.1f}s"
                        if report.published else ""))
    console.print(table)
    print_problems(report, console)


def print_problems(report: ScoreReport, console: Console) -> None:
    """Why the run is not `ok`: all that `--quiet` keeps (on stderr), one line each."""
    if report.stopped_reason:
        pending = "" if "pending" in report.stopped_reason else (
            "; the rest stays pending for the next run")
        console.print(f"[yellow]stopped early:[/yellow] {escape(report.stopped_reason)}{pending}",
                      soft_wrap=True)
    for note in report.judge_notes:
        console.print(f"[yellow]judge:[/yellow] {escape(note)}", soft_wrap=True)
    if report.publish_error:
        console.print(f"[red]not published:[/red] {escape(report.publish_error)}",
                      soft_wrap=True)
    if report.errors:
        console.print(f"{report.errors:,} errored scores (retried next run): SELECT turn_id, "
                      f"scorer, error FROM scores WHERE status = 'error'", soft_wrap=True)
