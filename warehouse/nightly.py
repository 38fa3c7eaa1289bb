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
written at the end rather than the start because every stage marks unfinished runs as
interrupted when it takes the writer lock.
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
from turnscore.warehouse.report.build import ReportSummary, build_report
from turnscore.warehouse.runs import Outcome, RunKind, new_run_id
from turnscore.warehouse.score_run import ScoreReport, resolve_scorers, score_turns

__all__ = ["JudgeMode", "NightlyProgress", "NightlyReport", "run_nightly"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

REPORT_FILE = "report.html"

NightlyProgress = Callable[[str, int, int | None], None]
"""Called with (stage, done, total): once with (stage, 0, None) as each stage starts, then
as it advances (files for ingest, (turn, scorer) pairs for score)."""


RECORD_RUN = """
INSERT INTO runs (run_id, kind, started_at, ended_at, outcome, summary, config, error)
VALUES (?, ?, ?, ?, ?, ?::JSON, ?::JSON, ?)
"""
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
    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage


@dataclass(slots=True)
class _Run:
    """What the stages have produced so far."""

    report: NightlyReport
    problems: list[str] = field(default_factory=list)


def run_nightly(config: Config, *, progress: NightlyProgress | None = None,
                judge: JudgeMode = "auto", max_cost: float | None = None,
                wait: bool = False) -> NightlyReport:
    """Run every stage for `config`; raises `WarehouseBusy` when another nightly holds
    the warehouse (and `wait` is false), and `UnknownScorer` for a misspelt scorer name in
    the config, before anything is ingested: that is a usage error, as in `turnscore
    score`, not a failed stage. Other failures come back as a `failed` report."""
    selection = config.scorer_selection([s.name for s in resolve_scorers(None)])
    with writer_lock(config.warehouse, wait=wait):
        started, clock = datetime.now(UTC), time.monotonic()
        run = _Run(NightlyReport(new_run_id(RunKind.NIGHTLY, started), Outcome.OK, started,
                                 0.0, judge="rules", notes=_notes(config)))
        try:
            _stages(config, selection, run, progress, judge, max_cost, wait)
        except _StageFailed as exc:
            log.error("nightly %s: %s failed: %s", run.report.run_id, exc.stage, exc)
            run.problems.append(f"{exc.stage}: {exc}")
            run.report = replace(run.report, outcome=Outcome.FAILED, failed_stage=exc.stage)
        run.report = replace(run.report, problems=tuple(run.problems))
        run.report = _record_and_publish(config, run, wait, clock)
    return run.report


def _stages(config: Config, selection: ScorerSelection, run: _Run,
            progress: NightlyProgress | None, judge: JudgeMode, max_cost: float | None,
            wait: bool) -> None:
    def tell(stage: str, done: int = 0, total: int | None = None) -> None:
        if progress is not None:
            progress(stage, done, total)

    warehouse = config.warehouse
    if config.sources:
        tell("ingest")
        ingest = _guard("ingest", lambda: run_ingest(
            list(config.sources), warehouse, config.ingest_settings, wait=wait,
            progress=lambda p: _ingest_progress(tell, p)))
        run.report = replace(run.report, ingest=ingest)
        if ingest.outcome == "failed":
            first_error = (f"{ingest.errors[0].source} {ingest.errors[0].position}: "
                           f"{ingest.errors[0].message}" if ingest.errors else "")
            raise _StageFailed("ingest", ingest.error or f"every input file was unreadable "
                                                         f"({len(ingest.errors)} error(s), "
                                                         f"first: {first_error})")
        if ingest.errors:
            first = ingest.errors[0]
            run.problems.append(f"ingest: {len(ingest.errors)} bad input(s), first: "
                                f"{first.source} {first.position}: {first.message}")
    if config.labels:
        tell("labels")
        labels = _guard("labels", lambda: load_labels(
            warehouse, list(config.labels), case_id_attribute=config.case_id_attribute,
            wait=wait))
        run.report = replace(run.report, labels=labels)
        if labels.outcome == Outcome.FAILED.value:
            raise _StageFailed("labels", labels.error or "no labelled case could be read")
        if labels.errors:
            run.problems.append(f"labels: {len(labels.errors)} bad row(s), first: "
                                f"{labels.errors[0]}")

    tell("score")
    try:
        factory = llm_judge_for(config.judge, judge, Budget(max_cost_usd=max_cost))
    except TurnscoreError as exc:
        raise _StageFailed("score", str(exc)) from exc
    run.report = replace(run.report, judge="llm" if factory is not None else "rules")
    try:
        score = _guard("score", lambda: _score(config.warehouse, selection, factory, wait,
                                               lambda d, t: tell("score", d, t)))
    finally:
        if factory is not None:
            factory.close()
    run.report = replace(run.report, score=score)
    if score.errors:
        run.problems.append(f"score: {score.errors} errored score(s), retried next run")
    if score.stopped_reason:
        run.problems.append(f"score: stopped early: {score.stopped_reason}")

    tell("views")
    views = _guard("views", lambda: _refresh_views(warehouse, wait))
    run.report = replace(run.report, views=tuple(views))
    tell("report")
    out = config.report or warehouse / REPORT_FILE
    summary = _guard("report", lambda: build_report(warehouse, out=out))
    run.report = replace(run.report, report=summary)


def _notes(config: Config) -> tuple[str, ...]:
    if config.path is not None:
        return ()
    # A nightly is a scheduled job: running on defaults is worth saying, not failing.
    return (f"no config file (no --config, no ./turnscore.toml): ran on the defaults, "
            f"warehouse {config.warehouse}, no sources to ingest, no labels, every "
            f"registered scorer",)


def _guard(stage: str, work: Callable[[], _T]) -> _T:
    """Run a stage; a library failure becomes `_StageFailed`, busy propagates."""
    try:
        return work()
    except WarehouseBusy:
        raise
    except (TurnscoreError, OSError, duckdb.Error) as exc:
        raise _StageFailed(stage, str(exc)) from exc


def _ingest_progress(tell: Callable[[str, int, int | None], None], p: Progress) -> None:
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


def _record_and_publish(config: Config, run: _Run, wait: bool, clock: float) -> NightlyReport:
    report = run.report
    if report.outcome is Outcome.OK and report.problems:
        report = replace(report, outcome=Outcome.PARTIAL)
    settings = {"config": str(config.path) if config.path else None,
                "sources": [str(p) for p in config.sources],
                "labels": [str(p) for p in config.labels], "judge": report.judge}
    with writer_lock(config.warehouse, wait=wait):
        con = open_warehouse(config.warehouse)
        try:
            report = replace(report, seconds=round(time.monotonic() - clock, 3))
            con.execute(RECORD_RUN, [
                report.run_id, RunKind.NIGHTLY.value, report.started_at, datetime.now(UTC),
                report.outcome.value, _json(report.to_json()), _json(settings),
                "; ".join(report.problems[:20]) or None])
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
