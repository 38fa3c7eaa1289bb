"""The score runner: score every turn that lacks a current score, batch by batch.

A (turn, scorer) pair is *pending* when the turn has no score from that scorer, or the
score came from another scorer version, or is an `error` (errors are retried), or is
stale: the `score_stale` macro (migration 0013) says so, the one statement of the rule,
which `score_coverage` counts by too (through `score_staleness`). A scorer that reads
labels (`reads` names a `labels.LABEL_FIELDS` field) records the case it read in its
hash (the `scored_hash` macro), so a case new, changed or gone since makes its score
stale. The turns' cases come from the `turn_cases` macro, read once at the start of the
run. `rescore` makes every pair pending. `score_pending.queue_pending` finds the pairs:
from the score queue's turns (`score_queue`) when it stands for a pass over every turn,
else by that pass; a batch's finished turns leave the queue once it commits.

Pending turns are read in batches by one streaming query (`score_input`); each batch is
scored by every scorer with pending pairs in it, the same way for all: the batch as a
polars DataFrame, the cases, and the run's judge (`Scorer.score`, DESIGN §5), which
returns score columns, written as Arrow in one transaction per batch (`write_scores`).
A run killed or stopped (a judge budget) between or inside batches loses only
uncommitted batches, and the next run picks up exactly the pairs still pending.

Writing a batch overlaps scoring the next one (`score_write.BatchWriter`, one writer
thread, still one transaction per batch), so a killed run loses the batch being written
(uncommitted) and the one being scored, never part of a batch. A run with an LLM judge
writes in line: the judge cache shares the warehouse connection. Reading overlaps too:
the next batch is read on a reader thread (`score_input.ReadAhead`) while one is scored.

Sampling is deterministic: a turn is in a `sample` of fraction f when
`md5_number(turn_id) % 1_000_000 < f * 1_000_000`, so the same fraction picks the same
turns on every run and a larger fraction picks a superset.

(Over ~400 lines: the run's SQL, its report record and the loop that ties reading,
scoring and writing together; reading and writing already live in `score_input` and
`score_write`.)
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TypeAlias

import duckdb
import polars as pl
import pyarrow as pa

from turnscore.ingest.turn import Turn
from turnscore.scorers.base import REGISTRY, Case, Judge, JudgeBatch, Scorer, Status, Turns
from turnscore.warehouse import score_queue
from turnscore.warehouse.db import bulk_writes, open_warehouse, writer_lock
from turnscore.warehouse.errors import InvalidOption, UnknownScorer, WarehouseError
from turnscore.warehouse.judge_cache import DuckDBJudgeCache
from turnscore.warehouse.publish import publish, snapshot_behind
from turnscore.warehouse.runs import (
    Outcome,
    RunKind,
    close_interrupted_runs,
    finish_run,
    start_run,
)
from turnscore.warehouse.score_input import PendingBatch, ReadAhead, pending_batches
from turnscore.warehouse.score_pending import ScorersForAgent, queue_pending, reads_labels
from turnscore.warehouse.score_workers import score_on_workers, workers_for
from turnscore.warehouse.score_write import BatchWriter, Tally
from turnscore.warehouse.scores import COLUMNAR_SCHEMA

log = logging.getLogger(__name__)

COUNT_PENDING_TURNS = "SELECT count(DISTINCT turn_id) FROM _pending"
ProgressFn = Callable[[int, int], None]
"""Called after each committed batch with (pairs done, pairs pending at the start)."""


JudgeRunner: TypeAlias = Judge
"""Scores kind 'judge' scorers: `(scorer name, turns, cases) -> JudgeBatch`
(`JudgeEngine.run`); handed to every scorer as its `judge`."""
JudgeFactory = Callable[[DuckDBJudgeCache], JudgeRunner]
"""Builds the runner once the warehouse is open, so its replies are cached in the
warehouse's `judge_cache` table (and its batches recorded there, `judge_batch`)."""


@dataclass(frozen=True, slots=True)
class ScorerCounts:
    scorer: str
    version: str
    pending_before: int
    scored: int = 0
    inconclusive: int = 0
    not_run: int = 0
    error: int = 0

    @property
    def written(self) -> int:
        return self.scored + self.inconclusive + self.not_run + self.error


@dataclass(frozen=True, slots=True)
class ScoreReport:
    run_id: str
    turns_in_scope: int
    """Turns considered (all turns, or the sample)."""
    scorers: tuple[ScorerCounts, ...]
    seconds: float
    stopped_reason: str | None = None
    """Why the run stopped before scoring everything pending (a judge budget), or None."""
    judge_notes: tuple[str, ...] = ()
    """What the judges' runner reported once (an endpoint fell back to prompt-only replies)."""
    published: str | None = None
    """Path of the snapshot published at the end, if any."""
    publish_error: str | None = None
    """Why publishing failed (the scores are written; readers keep the previous snapshot)."""
    publish_seconds: float = 0.0
    """Seconds spent publishing the snapshot after scoring (not in `seconds`)."""
    scorer_seconds: dict[str, float] = field(default_factory=dict)
    """Seconds spent inside each scorer (its function, or the judge runner)."""
    read_seconds: float = 0.0
    """Seconds the run waited for pending turns and their cases (shared by the scorers):
    the part of reading not overlapped with scoring."""
    read_ahead_seconds: float = 0.0
    """Seconds spent reading on the reader thread, one batch ahead of the scoring."""
    write_seconds: float = 0.0
    """Seconds spent writing scores (shared by the scorers; on a worker thread, overlapping
    the scoring of the next batch)."""
    write_wait_seconds: float = 0.0
    """Seconds the run spent waiting for (or doing) writes: the part not overlapped."""
    checkpoint_seconds: float = 0.0
    """Seconds of the checkpoint that ends the run (see `db.bulk_writes`; in `seconds`)."""
    workers: int = 1
    """Processes the batches were scored on (`score_workers`: 1, this run's own)."""
    disabled: tuple[tuple[str | None, str], ...] = ()
    """(agent, scorer) pairs the per-agent choice switched off, of the scorers the run
    chose: the `score_coverage` view reads them from the latest score run's summary, so
    their turns are `disabled` there, not `missing`."""

    @property
    def pending_before(self) -> int:
        return sum(c.pending_before for c in self.scorers)

    @property
    def written(self) -> int:
        return sum(c.written for c in self.scorers)

    @property
    def errors(self) -> int:
        return sum(c.error for c in self.scorers)

    @property
    def nothing_to_do(self) -> bool:
        return self.pending_before == 0

    @property
    def outcome(self) -> Outcome:
        partial = self.errors or self.stopped_reason or self.publish_error
        return Outcome.PARTIAL if partial else Outcome.OK

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        out.update(pending_before=self.pending_before, written=self.written,
                   errors=self.errors, nothing_to_do=self.nothing_to_do,
                   outcome=self.outcome.value)
        return out


DEFAULT_BATCH_SIZE = 10_000
"""Turns per batch: a read, a scoring pass per scorer and a write transaction each. The
scorers pay a fixed cost per batch (hundreds of polars steps for groundedness),
so small batches cost CPU; three batches are in memory at once (read ahead, scored,
being written)."""
JUDGED_BATCH_SIZE = 500
"""Turns per batch when an LLM judge scores them: a batch is also the unit of progress and
of a write, and 10,000 judge calls can take the best part of an hour."""


def resolve_scorers(names: Sequence[str] | None) -> list[Scorer]:
    """The registered scorers to run (all of them by default), in name order."""
    importlib.import_module("turnscore.scorers")  # registers the built-in scorers
    if not names:
        return [REGISTRY[n] for n in sorted(REGISTRY)]
    for name in names:
        if name not in REGISTRY:
            raise UnknownScorer(name, list(REGISTRY))
    return [REGISTRY[n] for n in sorted(set(names))]


def score_turns(
    warehouse_dir: Path,
    *,
    scorers: Sequence[str] | None = None,
    rescore: bool = False,
    sample: float | None = None,
    batch_size: int | None = None,
    progress: ProgressFn | None = None,
    judge_runner: JudgeRunner | None = None,
    judge_factory: JudgeFactory | None = None,
    wait: bool = False,
    publish_snapshot: bool = True,
    scorers_for_agent: ScorersForAgent | None = None,
) -> ScoreReport:
    """Score every pending (turn, scorer) pair; record the run; publish a snapshot.

    Judged scorers judge with `judge_runner` (or the runner `judge_factory` builds over the
    warehouse's judge cache) when given, else with the rules judge.
    With `scorers_for_agent`, a scorer is run on a turn (and counted pending) only when it
    is among `scorers` and among the names returned for the turn's agent.
    `batch_size` defaults to `JUDGED_BATCH_SIZE` when an LLM judge scores some chosen
    scorer, else to `DEFAULT_BATCH_SIZE`.
    """
    if sample is not None and not 0 < sample <= 1:
        raise InvalidOption(f"--sample must be a fraction in (0, 1], got {sample}")
    chosen = resolve_scorers(scorers)
    if batch_size is None:
        llm = judge_runner is not None or judge_factory is not None
        judged = llm and any(s.kind == "judge" for s in chosen)
        batch_size = JUDGED_BATCH_SIZE if judged else DEFAULT_BATCH_SIZE
    if batch_size < 1:
        raise InvalidOption(f"batch size must be at least 1, got {batch_size}")
    config: dict[str, object] = {"scorers": [s.name for s in chosen], "rescore": rescore,
                                 "sample": sample, "batch_size": batch_size}
    size = batch_size

    def run(con: duckdb.DuckDBPyConnection, run_id: str) -> ScoreReport:
        runner = judge_runner
        if judge_factory is not None:
            runner = judge_factory(DuckDBJudgeCache(con, run_id))
        return _run(con, run_id, chosen, rescore, sample, size, progress, runner,
                    scorers_for_agent)

    return recorded_score_run(warehouse_dir, config, run, wait=wait,
                              publish_snapshot=publish_snapshot)


def recorded_score_run(
    warehouse_dir: Path,
    config: dict[str, object],
    run: Callable[[duckdb.DuckDBPyConnection, str], ScoreReport],
    *,
    wait: bool,
    publish_snapshot: bool,
) -> ScoreReport:
    """`run` as a recorded score run, whichever engine scores: under the writer lock, with
    interrupted runs closed, a `runs` row started with `config` and finished with the
    outcome (or the failure), and the snapshot published when the run wrote something or
    the snapshot is behind."""
    with writer_lock(warehouse_dir, wait=wait):
        con = open_warehouse(warehouse_dir)
        try:
            close_interrupted_runs(con)
            run_id = start_run(con, RunKind.SCORE, config)
            try:
                report = run(con, run_id)
                # Nothing written now, but an earlier run may have died before or
                # while publishing what it wrote.
                if publish_snapshot and (not report.nothing_to_do
                                         or snapshot_behind(warehouse_dir, con)):
                    report = _published(report, warehouse_dir, con)
            except BaseException as exc:
                interrupted = isinstance(exc, KeyboardInterrupt)
                finish_run(con, run_id, Outcome.INTERRUPTED if interrupted else Outcome.FAILED,
                           error=f"{type(exc).__name__}: {exc}")
                raise
            finish_run(con, run_id, report.outcome, report.to_json())
        finally:
            con.close()
    return report


def _published(report: ScoreReport, warehouse_dir: Path, con: duckdb.DuckDBPyConnection
               ) -> ScoreReport:
    started = time.monotonic()
    try:
        path = publish(warehouse_dir, con=con)
        return replace(report, published=str(path),
                       publish_seconds=round(time.monotonic() - started, 3))
    except WarehouseError as exc:  # the scores are committed; only the snapshot is stale
        log.error("run %s: publishing failed: %s", report.run_id, exc)
        return replace(report, publish_error=str(exc))


def _run(con: duckdb.DuckDBPyConnection, run_id: str, chosen: list[Scorer], rescore: bool,
         sample: float | None, batch_size: int, progress: ProgressFn | None,
         judge_runner: JudgeRunner | None,
         scorers_for_agent: ScorersForAgent | None = None) -> ScoreReport:
    start = time.monotonic()
    in_scope, disabled, pending_before = queue_pending(con, chosen, rescore, sample,
                                                       scorers_for_agent)
    total = sum(pending_before.values())
    log.info("run %s: %d pending (turn, scorer) pairs over %d turns", run_id, total, in_scope)

    tally = Tally()
    stopped: str | None = None
    notes: dict[str, None] = {}
    by_name = {s.name: s for s in chosen}
    done = 0

    def committed(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, total)

    in_line = judge_runner is not None and any(s.kind == "judge" for s in chosen)
    judge = None if judge_runner is None else _JudgeTap(judge_runner)
    # bulk_writes: checkpoints are rarer during the run, and one follows it (once the
    # cursors are closed). closing(): a run that stops early ends the cursor's read
    # before publishing.
    # An LLM judge's cache and budget live on this connection: its runs score here.
    workers = 1 if judge_runner is not None else workers_for(_scalar(con, COUNT_PENDING_TURNS),
                                                              chosen)
    with bulk_writes(con):
        # On workers, batches travel as read; each frame is decoded where it is scored.
        reader = ReadAhead(pending_batches(con, batch_size), frame=workers == 1)
        with closing(reader) as batches, \
                BatchWriter(con, run_id, tally, committed, in_line=in_line,
                            settle=score_queue.dequeue) as writer:

            def write(batch: PendingBatch, tables: list[pa.Table]) -> None:
                writer.write([], tables, replacing=batch.replacing)
                for t in tables:
                    tally.add_columns(t)

            if workers > 1:
                score_on_workers(batches, chosen, workers, write, tally)
            else:
                while True:
                    clock = time.perf_counter()
                    batch = next(batches, None)
                    tally.time("read", clock)
                    if batch is None:
                        break
                    write(batch, score_batch(batch, by_name, judge, tally))
                    if judge is not None:
                        notes.update(dict.fromkeys(judge.notes))
                        stopped = judge.stop
                    if stopped:
                        log.warning("run %s stopped early: %s", run_id, stopped)
                        break
            writer.flush()
        for name in ("_pending", "_turn_cases", "_kept"):
            con.execute(f"DROP TABLE {name}")
        clock = time.perf_counter()
    tally.time("checkpoint", clock)
    counts = tuple(
        ScorerCounts(
            s.name, s.version, pending_before.get(s.name, 0),
            **{st.value: tally.counts.get(s.name, {}).get(st, 0) for st in Status},
        )
        for s in chosen
    )
    seconds = {k: round(v, 3) for k, v in tally.seconds.items()}
    return ScoreReport(run_id, in_scope, counts, round(time.monotonic() - start, 3), stopped,
                       judge_notes=tuple(notes),
                       scorer_seconds={s.name: seconds.get(s.name, 0.0) for s in chosen},
                       read_seconds=seconds.get("read", 0.0),
                       read_ahead_seconds=round(reader.seconds, 3),
                       write_seconds=seconds.get("write", 0.0),
                       write_wait_seconds=seconds.get("write wait", 0.0),
                       checkpoint_seconds=seconds.get("checkpoint", 0.0),
                       workers=workers, disabled=disabled)


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0]) if row else 0


class _JudgeTap:
    """The run's judge as the scorers get it: it keeps what the last batch said of the
    run (a stop, notes), which the runner reads after each batch."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.stop: str | None = None
        self.notes: tuple[str, ...] = ()

    def __call__(self, scorer: str, turns: Sequence[Turn], cases: Sequence[Case | None]
                 ) -> JudgeBatch:
        outcome = self.judge(scorer, turns, cases)
        self.notes = tuple(outcome.notes)
        if outcome.stop is not None:
            self.stop = outcome.stop.message
        return outcome


JudgeTap = _JudgeTap
"""Public for the Ray engine's judging workers, which score batches as this runner does."""


def score_batch(batch: PendingBatch, by_name: dict[str, Scorer], judge: _JudgeTap | None,
                 tally: Tally) -> list[pa.Table]:
    """The batch's scores, one table (`COLUMNAR_SCHEMA`) per scorer; the turns a judge
    left pending have no row."""
    tables: list[pa.Table] = []
    for name in sorted(batch.pending):
        clock = time.perf_counter()
        s = by_name[name]
        idx = batch.pending[name]
        turns, cases = Turns(batch.frame).take(idx), [batch.cases[i] for i in idx]
        frame = turns.frame
        out = s.score(turns, cases, judge=judge)
        recorded = "_labelled_hash" if reads_labels(s) else "content_hash"
        keyed = out.with_columns(
            frame.get_column("turn_id"), frame.get_column(recorded).alias("content_hash"),
            scorer=pl.lit(s.name, pl.String), scorer_version=pl.lit(s.version, pl.String),
        ).filter(pl.col("status").is_not_null())
        if keyed.height:
            tables.append(keyed.select(COLUMNAR_SCHEMA.names).to_arrow().cast(COLUMNAR_SCHEMA))
        tally.time(name, clock)
    return tables
