"""`turnscore nightly` as a library call: ingest, labels, score, views, publish, report.

`run_nightly` runs the stages in order for one `Config`:

1. ingest the configured `sources` (skipped when there are none);
2. load the configured `labels` files (skipped when there are none);
3. score every pending (turn, scorer) pair, choosing scorers per agent from the config;
   judged scorers use the LLM judge when `[judge]` (or `TURNSCORE_JUDGE_BASE_URL`) names a
   `base_url`, else the offline rules judge;
4. refresh the views, then write the HTML report (config `report`, default
   `<warehouse>/report.html`) from the live warehouse;
5. record the run in `runs` (kind `nightly`, with every stage's summary) and publish the
   snapshot, once, so the snapshot carries the finished nightly row.

A stage that fails (nothing of it done: unreadable config, every input file bad, a
database error) stops the run before the next stage; its report says which stage and
why, and what was committed before it is still recorded and published. Completed stages
with bad rows (ingest or label errors, errored scores, a judge budget stop) make the run
`partial`.

Locking: the run holds the warehouse's writer lock throughout (it is re-entrant within a
process, so each stage takes it again harmlessly): a second nightly, or an ad-hoc
`turnscore score`, waits (`wait=True`) or raises `WarehouseBusy` at once. The nightly row is
written first and finished last (with the outcome and every stage's summary), so a night
that is killed leaves a row: Ctrl-C or SIGTERM finish it as `interrupted`, SIGKILL leaves
it open for the next run to mark. The stages, which close unfinished runs as they take the
lock, pass over it: it is this process's (`runs.close_interrupted_runs`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import duckdb
import orjson

from turnscore.errors import TurnscoreError
from turnscore.ingest.pipeline import Progress
from turnscore.scorers.judge.config import Budget
from turnscore.warehouse.config import Config, ScorerSelection
from turnscore.warehouse.db import open_warehouse, writer_lock
from turnscore.warehouse.errors import WarehouseBusy
from turnscore.warehouse.ingest_run import IngestReport, run_ingest
from turnscore.warehouse.judging import JudgeMode, LlmJudge, llm_judge_for
from turnscore.warehouse.labels import LabelsReport, load_labels
from turnscore.warehouse.publish import publish, refresh_views
from turnscore.warehouse.ray_run import OnRay, run_ray_ingest
from turnscore.warehouse.ray_score import run_ray_score
from turnscore.warehouse.report.build import ReportSummary, build_report
from turnscore.warehouse.runs import Outcome, RunKind, finish_run, start_run
from turnscore.warehouse.score_run import ScoreReport, resolve_scorers, score_turns

__all__ = ["JudgeMode", "NightlyProgress", "NightlyReport", "run_nightly"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

REPORT_FILE = "report.html"

NightlyProgress = Callable[[str, int, int | None], None]
"""Called with (stage, done, total): once with (stage, 0, None) as each stage starts, then
as it advances (files for ingest, (turn, scorer) pairs for score)."""


UPDATE_RUN = "UPDATE runs SET outcome = ?, summary = ?::JSON, error = ? WHERE run_id = ?"


@dataclass(frozen=True, slots=True)
class NightlyReport:
    run_id: str
    outcome: Outcome
    """`ok` every stage worked; `partial` completed with errors; `failed` a stage failed."""
    started_at: datetime
    seconds: float
    judge: str
    """`rules` or `llm`: which backend the judged scorers used."""
    ingest: IngestReport | None = None
    labels: LabelsReport | None = None
    score: ScoreReport | None = None
    views: tuple[str, ...] = ()
    report: ReportSummary | None = None
    published: str | None = None
    failed_stage: str | None = None
    problems: tuple[str, ...] = field(default=())
    """One line per thing that made the run partial or failed."""
    notes: tuple[str, ...] = field(default=())
    """What is worth saying and is no failure: no config file, so the defaults ran."""

    def to_json(self) -> dict[str, object]:
        return {
            "run_id": self.run_id, "outcome": self.outcome.value,
            "started_at": self.started_at.isoformat(), "seconds": self.seconds,
            "judge": self.judge,
            "ingest": self.ingest.to_json() if self.ingest else None,
            "labels": self.labels.to_json() if self.labels else None,
            "score": self.score.to_json() if self.score else None,
            "views": list(self.views),
            "report": self.report.to_json() if self.report else None,
            "published": self.published, "failed_stage": self.failed_stage,
            "problems": list(self.problems), "notes": list(self.notes),
        }


class _StageFailed(Exception):
    """A stage that could not complete; `report` holds what it and the stages before it
    produced (an ingest that failed still reports its files and errors)."""

    def __init__(self, stage: str, message: str, report: NightlyReport) -> None:
        super().__init__(message)
        self.stage = stage
        self.report = report


Tell = Callable[[str, int, int | None], None]
Stage = Callable[[NightlyReport], NightlyReport]
"""One stage of the night: the report so far in, the report with this stage's part out."""


def run_nightly(config: Config, *, progress: NightlyProgress | None = None,
                judge: JudgeMode = JudgeMode.AUTO, max_cost: float | None = None,
                wait: bool = False, ray: OnRay | None = None) -> NightlyReport:
    """Run every stage for `config`; raises `WarehouseBusy` when another nightly holds
    the warehouse (and `wait` is false), and `UnknownScorer` for a misspelt scorer name or
    `ConfigError` for a judge it cannot use (`--judge llm` with no `[judge]`), before
    anything is ingested: those are usage errors, as in `turnscore score`, not a failed
    stage. Other failures come back as a `failed` report. With `ray`, ingest and scoring
    run as `--engine ray` does (`ray_run`, `ray_score`); the other stages are local."""
    selection = config.scorer_selection([s.name for s in resolve_scorers(None)])
    factory = llm_judge_for(config.judge, judge, Budget(max_cost_usd=max_cost))
    with writer_lock(config.warehouse, wait=wait):
        started, clock = datetime.now(UTC), time.monotonic()
        report = NightlyReport(_start(config, started), Outcome.OK, started, 0.0,
                               judge="rules", notes=_notes(config))
        tell: Tell = progress or _silent
        try:
            for stage in _stages(config, selection, tell, factory, wait, ray):
                report = stage(report)
        except _StageFailed as exc:
            log.error("nightly %s: %s failed: %s", report.run_id, exc.stage, exc)
            report = replace(exc.report, outcome=Outcome.FAILED, failed_stage=exc.stage,
                             problems=(*exc.report.problems, f"{exc.stage}: {exc}"))
        except BaseException as exc:  # Ctrl-C, SIGTERM (the CLI raises it), a bug
            _finish(config, report, clock, exc)
            raise
        return _record_and_publish(config, report, clock)


def _silent(stage: str, done: int, total: int | None) -> None:
    return None


def _stages(config: Config, selection: ScorerSelection, tell: Tell,
            factory: LlmJudge | None, wait: bool, ray: OnRay | None = None) -> list[Stage]:
    """The stages to run, in order: ingest and labels only when configured."""
    stages: list[Stage] = []
    if config.sources:
        stages.append(lambda r: _ingest(config, r, tell, wait, ray))
    if config.labels:
        stages.append(lambda r: _labels(config, r, tell, wait))
    stages.append(lambda r: _scoring(config, selection, r, tell, factory, wait, ray))
    stages.append(lambda r: _views_and_report(config, r, tell, wait))
    return stages


def _ingest(config: Config, report: NightlyReport, tell: Tell, wait: bool,
            ray: OnRay | None = None) -> NightlyReport:
    tell("ingest", 0, None)
    ingest = _guard("ingest", report, lambda: run_ingest(
        list(config.sources), config.warehouse, config.ingest_settings, wait=wait,
        progress=lambda p: _ingest_progress(tell, p)) if ray is None else run_ray_ingest(
        [str(s) for s in config.sources], config.warehouse, ray.data_root,
        config.ingest_settings, ray_address=ray.address, wait=wait))
    report = replace(report, ingest=ingest)
    if ingest.outcome == "failed":
        first_error = (f"{ingest.errors[0].source} {ingest.errors[0].position}: "
                       f"{ingest.errors[0].message}" if ingest.errors else "")
        raise _StageFailed("ingest", ingest.error or f"every input file was unreadable "
                                                     f"({len(ingest.errors)} error(s), "
                                                     f"first: {first_error})", report)
    if ingest.errors:
        first = ingest.errors[0]
        report = _problem(report, f"ingest: {len(ingest.errors)} bad input(s), first: "
                                  f"{first.source} {first.position}: {first.message}")
    return report


def _labels(config: Config, report: NightlyReport, tell: Tell, wait: bool) -> NightlyReport:
    tell("labels", 0, None)
    labels = _guard("labels", report, lambda: load_labels(
        config.warehouse, list(config.labels), case_id_attribute=config.case_id_attribute,
        wait=wait))
    report = replace(report, labels=labels)
    if labels.outcome == Outcome.FAILED.value:
        first = f" (first error: {labels.errors[0]})" if labels.errors else ""
        raise _StageFailed("labels", labels.error or f"no labelled case could be read{first}",
                           report)
    if labels.errors:
        report = _problem(report, f"labels: {len(labels.errors)} bad row(s), first: "
                                  f"{labels.errors[0]}")
    return report


def _scoring(config: Config, selection: ScorerSelection, report: NightlyReport, tell: Tell,
             factory: LlmJudge | None, wait: bool, ray: OnRay | None = None) -> NightlyReport:
    tell("score", 0, None)
    report = replace(report, judge="llm" if factory is not None else "rules")
    try:
        score = _guard("score", report, lambda: _score(
            config.warehouse, selection, factory, wait, lambda d, t: tell("score", d, t))
            if ray is None else run_ray_score(
            config.warehouse, ray.data_root, scorers=selection.scorers,
            ray_address=ray.address, wait=wait, scorers_for_agent=selection.per_agent,
            llm_judge=factory, publish_snapshot=False))
    finally:
        if factory is not None:
            factory.close()
    report = replace(report, score=score)
    if score.errors:
        report = _problem(report, f"score: {score.errors} errored score(s), retried next run")
    if score.stopped_reason:
        report = _problem(report, f"score: stopped early: {score.stopped_reason}")
    return report


def _views_and_report(config: Config, report: NightlyReport, tell: Tell,
                      wait: bool) -> NightlyReport:
    warehouse = config.warehouse
    tell("views", 0, None)
    views = _guard("views", report, lambda: _refresh_views(warehouse, wait))
    report = replace(report, views=tuple(views))
    tell("report", 0, None)
    out = config.report or warehouse / REPORT_FILE
    summary = _guard("report", report, lambda: build_report(warehouse, out=out))
    return replace(report, report=summary)


def _problem(report: NightlyReport, problem: str) -> NightlyReport:
    return replace(report, problems=(*report.problems, problem))


def _notes(config: Config) -> tuple[str, ...]:
    if config.path is not None:
        return ()
    # A nightly is a scheduled job: running on defaults is worth saying, not failing.
    return (f"no config file (no --config, no ./turnscore.toml): ran on the defaults, "
            f"warehouse {config.warehouse}, no sources to ingest, no labels, every "
            f"registered scorer",)


def _guard(stage: str, report: NightlyReport, work: Callable[[], _T]) -> _T:
    """Run a stage's work; a library failure becomes `_StageFailed` (keeping `report`),
    busy propagates."""
    try:
        return work()
    except WarehouseBusy:
        raise
    except (TurnscoreError, OSError, duckdb.Error) as exc:
        raise _StageFailed(stage, str(exc), report) from exc


def _ingest_progress(tell: Tell, p: Progress) -> None:
    tell("ingest", p.files_done, p.files_total)


def _score(warehouse: Path, selection: ScorerSelection, factory: LlmJudge | None, wait: bool,
           progress: Callable[[int, int], None]) -> ScoreReport:
    return score_turns(warehouse, scorers=selection.scorers, judge_factory=factory,
                       wait=wait, progress=progress, publish_snapshot=False,
                       scorers_for_agent=selection.per_agent)


def _refresh_views(warehouse: Path, wait: bool) -> list[str]:
    with writer_lock(warehouse, wait=wait):
        con = open_warehouse(warehouse)
        try:
            return refresh_views(con)
        finally:
            con.close()


def _start(config: Config, started: datetime) -> str:
    """The night's `runs` row, written first so that a night killed at any point leaves
    one: unfinished, it is marked interrupted by the next run that takes the lock."""
    settings = {"config": str(config.path) if config.path else None,
                "sources": [str(p) for p in config.sources],
                "labels": [str(p) for p in config.labels]}
    con = open_warehouse(config.warehouse)
    try:
        return start_run(con, RunKind.NIGHTLY, settings, now=started)
    finally:
        con.close()


def _finish(config: Config, report: NightlyReport, clock: float,
            exc: BaseException) -> None:
    """Close the night's row after an exception no stage handled, saying what was done."""
    interrupted = isinstance(exc, KeyboardInterrupt)
    report = replace(report, outcome=Outcome.INTERRUPTED if interrupted else Outcome.FAILED,
                     seconds=round(time.monotonic() - clock, 3))
    log.error("nightly %s: %s", report.run_id, report.outcome.value)
    con = open_warehouse(config.warehouse)
    try:
        finish_run(con, report.run_id, report.outcome, report.to_json(),
                   error=f"{type(exc).__name__}: {exc}")
    finally:
        con.close()


def _record_and_publish(config: Config, report: NightlyReport, clock: float
                        ) -> NightlyReport:
    if report.outcome is Outcome.OK and report.problems:
        report = replace(report, outcome=Outcome.PARTIAL)
    con = open_warehouse(config.warehouse)
    try:
        report = replace(report, seconds=round(time.monotonic() - clock, 3))
        finish_run(con, report.run_id, report.outcome, report.to_json(),
                   "; ".join(report.problems[:20]) or None)
        report = _publish(config.warehouse, con, report)
    finally:
        con.close()
    log.info("nightly %s: %s in %.1fs", report.run_id, report.outcome.value, report.seconds)
    return report


def _publish(warehouse: Path, con: duckdb.DuckDBPyConnection,
             report: NightlyReport) -> NightlyReport:
    try:
        return replace(report, published=str(publish(warehouse, con=con)))
    except (TurnscoreError, OSError, duckdb.Error) as exc:
        failed = replace(report, outcome=Outcome.FAILED,
                         failed_stage=report.failed_stage or "publish",
                         problems=(*report.problems, f"publish: {exc}"))
        con.execute(UPDATE_RUN, [failed.outcome.value, _json(failed.to_json()),
                                 f"publish: {exc}", failed.run_id])
        return failed


def _json(value: object) -> str:
    return orjson.dumps(value, default=str).decode()
