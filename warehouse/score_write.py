"""Writing a score run's batches while the next batch is scored.

Scoring is Python (it holds the GIL); writing is mostly DuckDB, which releases the GIL
while it works. So `BatchWriter` hands each scored batch to ONE writer thread and the
runner goes on scoring the next batch: writing batch n overlaps scoring batch n+1.

What stays true with the overlap:

- Each batch is still written by one `write_scores` call, i.e. one transaction. A run
  killed while a write is in flight loses that batch (uncommitted) and the one being
  scored, never part of a batch; the next run finds both pending.
- One write is in flight at a time, and batches commit in order: handing over batch n+1
  first waits for batch n. Progress (`committed`) is reported on the runner's thread
  once a batch's write has returned, i.e. when the next batch is handed over or at the
  end, so the count reported is always committed rows.
- A failed write is raised on the runner's thread, at the next hand-over or `flush`.

A run with a judge runner writes in line instead (`in_line`): the judge cache
(`DuckDBJudgeCache`) writes its replies on the warehouse connection while the batch is
being scored, and those writes must not interleave with a batch's transaction on
another thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from types import TracebackType

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from turnscore.scorers.base import Status
from turnscore.warehouse.scores import ScoreRow, Settle, write_scores

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Tally:
    """What a run wrote, per scorer and status, and where its time went."""

    counts: dict[str, dict[Status, int]] = field(default_factory=dict)

    seconds: dict[str, float] = field(default_factory=dict)
    """Per scorer, then 'read', 'write' and 'write wait' (see `ScoreReport`)."""

    def add(self, scorer: str, status: Status, n: int = 1) -> None:
        per = self.counts.setdefault(scorer, {})
        per[status] = per.get(status, 0) + n

    def add_columns(self, table: pa.Table) -> None:
        """Count a scorer's table of verdicts (one scorer per table)."""
        scorer = table.column("scorer")[0].as_py()
        for item in pc.value_counts(table.column("status")).to_pylist():
            self.add(scorer, Status(item["values"]), item["counts"])

    def time(self, key: str, since: float) -> None:
        """Add the time since `since` (a `time.perf_counter()` reading) to `key`."""
        self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - since


class BatchWriter:
    """Writes batches with `write_scores`, each on a worker thread while the caller scores
    the next batch (see the module docstring); `in_line` writes on the caller's thread.

    `committed(rows)` is called on the caller's thread, once per committed batch and in
    order; `settle` runs in each batch's transaction (the score queue's dequeue). A failed
    write raises at the next `write` or `flush`. Leaving the context waits for the write
    in flight, so the connection is free again afterwards.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, run_id: str, tally: Tally,
                 committed: Callable[[int], None], *, in_line: bool, settle: Settle) -> None:
        self.con, self.run_id, self.tally, self.committed = con, run_id, tally, committed
        self.settle = settle
        self.pool = None if in_line else ThreadPoolExecutor(1, "score-writer")
        self.in_flight: Future[int] | None = None

    def write(self, rows: list[ScoreRow], tables: list[pa.Table], *, replacing: bool) -> None:
        self.flush()
        if self.pool is None:
            clock = time.perf_counter()
            written = self._write(rows, tables, replacing)
            self.tally.time("write wait", clock)
            self.committed(written)
        else:
            self.in_flight = self.pool.submit(self._write, rows, tables, replacing)

    def flush(self) -> None:
        """Wait for the write in flight, if any."""
        if self.in_flight is not None:
            clock = time.perf_counter()
            future, self.in_flight = self.in_flight, None
            written = future.result()
            self.tally.time("write wait", clock)
            self.committed(written)

    def _write(self, rows: list[ScoreRow], tables: list[pa.Table], replacing: bool) -> int:
        clock = time.perf_counter()
        written = write_scores(self.con, rows, self.run_id, replacing=replacing,
                               columns=tables, settle=self.settle)
        self.tally.time("write", clock)
        return written

    def __enter__(self) -> BatchWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.pool is None:
            return
        if self.in_flight is not None and kind is not None:
            # Already failing: let the write finish (or fail) before the connection is
            # used to record the run, and keep the original error.
            try:
                self.in_flight.result()
            except Exception:
                log.exception("writing a batch failed while the run was stopping")
            self.in_flight = None
        self.pool.shutdown(wait=True)
