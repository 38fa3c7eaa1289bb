"""Scoring a run's batches on worker processes (DESIGN §7: scoring a batch is pure).

The scorers are polars and Python: one process scores one batch at a time on one core,
while DuckDB writes the previous batch on another thread. A large judge-free run hands
its batches to `workers` processes instead, each running the runner's own
`score_run.score_batch` on the batch as read (`PendingBatch`: the turns' Arrow rows,
their cases and pending scorers), and gets the score tables back; reading and writing
stay in the run's process, on its one connection, in batch order, one transaction per
batch, so what a killed run leaves is what it leaves without workers.

Worker processes are started fresh (`spawn`: the run's process holds DuckDB threads and
connections that a fork would copy mid-flight), which costs a second or two: a run with
fewer than `POOL_MIN_TURNS` pending turns, or with an LLM judge (its cache and budget
live on the run's connection), scores in its own process.
"""

from __future__ import annotations

import multiprocessing
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from functools import cache

import pyarrow as pa

from turnscore.ingest.settings import workers_from_env
from turnscore.scorers.base import Scorer
from turnscore.warehouse.score_input import PendingBatch
from turnscore.warehouse.score_write import Tally

WORKERS_ENV = "TURNSCORE_SCORE_WORKERS"
MAX_DEFAULT_WORKERS = 4
POOL_MIN_TURNS = 40_000
"""Pending turns from which a run scores on worker processes (four default batches)."""
_OWN_SCORERS = "turnscore.scorers."


def score_workers() -> int:
    """`$TURNSCORE_SCORE_WORKERS`, else the cores (up to `MAX_DEFAULT_WORKERS`)."""
    return workers_from_env(WORKERS_ENV, MAX_DEFAULT_WORKERS)


def workers_for(pending_turns: int, chosen: Sequence[Scorer]) -> int:
    """The processes a judge-free run of `pending_turns` scores on: `score_workers()`
    from `POOL_MIN_TURNS` on, else 1 (the run's own). Also 1 when a chosen scorer is not
    one of turnscore's own (`portable`)."""
    if pending_turns < POOL_MIN_TURNS or not all(map(portable, chosen)):
        return 1
    return score_workers()


def portable(s: Scorer) -> bool:
    """Whether a fresh process finds `s` in its registry: turnscore's scorers register on
    import; one registered at run time (a plug-in, a test's) is only in this process."""
    return s.fn.__module__.startswith(_OWN_SCORERS)


Written = Callable[[PendingBatch, list[pa.Table]], None]
"""Hands a scored batch's tables to the writer (called in batch order)."""


def score_on_workers(batches: Iterator[PendingBatch], chosen: Sequence[Scorer], workers: int,
                     write: Written, tally: Tally) -> None:
    """Score every batch of `batches` on `workers` processes, handing each batch's tables
    to `write` in batch order; each scorer's seconds (in the workers) add to `tally`.

    A batch more than there are workers is in flight, so a worker is never idle while
    the oldest batch is handed over; at most that many batches are in memory beside the
    one being read."""
    names = tuple((s.name, s.version) for s in chosen)
    context = multiprocessing.get_context("spawn")
    in_flight: deque[tuple[PendingBatch, Future[tuple[list[pa.Table], dict[str, float]]]]] = (
        deque())
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        try:
            while True:
                clock = time.perf_counter()
                batch = next(batches, None)
                tally.time("read", clock)
                if batch is None:
                    break
                in_flight.append((batch, pool.submit(_score, batch, names)))
                if len(in_flight) > workers:
                    _hand_over(in_flight.popleft(), write, tally)
            while in_flight:
                _hand_over(in_flight.popleft(), write, tally)
        except BaseException:
            for _, future in in_flight:
                future.cancel()
            raise


def _hand_over(item: tuple[PendingBatch, Future[tuple[list[pa.Table], dict[str, float]]]],
               write: Written, tally: Tally) -> None:
    batch, future = item
    clock = time.perf_counter()
    tables, seconds = future.result()  # a worker's failure raises here
    tally.time("score wait", clock)
    for name, spent in seconds.items():
        tally.seconds[name] = tally.seconds.get(name, 0.0) + spent
    write(batch, tables)


def _score(batch: PendingBatch, names: tuple[tuple[str, str], ...]
           ) -> tuple[list[pa.Table], dict[str, float]]:
    """In a worker: the batch's score tables (`score_run.score_batch`) and each scorer's
    seconds."""
    from turnscore.warehouse.score_run import score_batch

    tally = Tally()
    return score_batch(batch, _scorers(names), None, tally), tally.seconds


@cache
def _scorers(names: tuple[tuple[str, str], ...]) -> dict[str, Scorer]:
    """The run's scorers, as this process registered them: the same versions, or the run's
    process and this one run different code."""
    from turnscore.warehouse.score_run import resolve_scorers

    found = {s.name: s for s in resolve_scorers([name for name, _ in names])}
    for name, version in names:
        if found[name].version != version:
            raise RuntimeError(f"scorer {name} is version {found[name].version} in a worker "
                               f"process, {version} in the run's")
    return found
