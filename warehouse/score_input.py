"""What the score runner feeds its scorers: pending turns, batch by batch, with their cases.

All pending turns are read by ONE streaming query on a second connection (a cursor), so
each turn is read once; selecting each batch by id instead made every batch scan the
whole `turns` table. The cursor's read transaction does not block the runner's writes
on the main connection, and the run holds the writer lock, so `turns` and `labels`
cannot change underneath it. Batches come in scan order, not turn-id order: a killed
run leaves the uncommitted pairs pending whatever their order.

A turn's case was found by the runner (`_pending.case_id`, from the `turn_cases` macro:
the label whose case_id equals the turn's, else the one whose `input_norm` equals the
turn's normalised request, the smallest case_id first) with its `label_hash`, and is
joined here in the same query, with the hash a label-reading scorer's score records
(`_labelled_hash`, the `scored_hash` macro): the scores record the fingerprint of the
very case they read (the writer lock keeps `labels` as it was when the runner looked).
A case is decoded once per run and shared by its turns (`Case` is frozen).

A batch keeps its rows as Arrow and gives them to the scorers as a polars DataFrame
(`PendingBatch.frame`), decoded on the reader thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from turnscore.ingest.turn import Turn
from turnscore.scorers.base import Case

log = logging.getLogger(__name__)

# The list's order does not matter (`_pending_rows`); an ordered aggregate costs more.
PENDING_BY_TURN = """
SELECT turn_id, list(scorer) AS scorers, bool_or(prior) AS prior,
       -- the same on every row of a turn:
       any_value(case_id) AS case_id, any_value(label_hash) AS label_hash
FROM _pending GROUP BY turn_id
"""
_PENDING_TURNS = "_pending_turns"
_LABEL_COLUMNS = tuple(f.name for f in fields(Case))
"""The `labels` columns a `Case` holds, in its order (`_case`)."""
READ_PENDING = f"""
SELECT t.*, p.scorers AS _scorers, p.prior AS _prior,
       {", ".join(f"l.{c} AS _label_{c}" for c in _LABEL_COLUMNS)},
       scored_hash(t.content_hash, p.label_hash, true) AS _labelled_hash
FROM turns AS t
JOIN {_PENDING_TURNS} AS p ON p.turn_id = t.turn_id
LEFT JOIN labels AS l ON l.case_id = p.case_id
"""

_FRAME_NAMES = (*(f.name for f in fields(Turn)), "_labelled_hash")


@dataclass(frozen=True)  # no slots: `frame` is a cached property
class PendingBatch:
    rows: pa.RecordBatch
    """The turns' rows (the `turns` columns and some of the query's own)."""
    cases: list[Case | None]
    pending: dict[str, list[int]]
    """Per scorer with pending pairs in the batch, the rows pending on it (ascending)."""
    replacing: bool
    """Some pending pair in the batch has a current score (to move to history)."""

    @cached_property
    def frame(self) -> pl.DataFrame:
        """The rows as a polars DataFrame of the `Turn` fields, and `_labelled_hash`: the
        hash a score of a scorer that reads labels records."""
        frame = pl.from_arrow(self.rows.select(list(_FRAME_NAMES)))
        assert isinstance(frame, pl.DataFrame)
        return frame


def pending_batches(con: duckdb.DuckDBPyConnection, batch_size: int
                    ) -> Generator[PendingBatch, None, None]:
    """The turns in `_pending` (a temp table on `con`), `batch_size` at a time.

    Once the first batch is read, `con` itself is no longer used: the caller may write
    on it from another thread while the next batch is read (cursors of one database
    are independent connections).
    """
    cur = con.cursor()
    try:
        cur.register(_PENDING_TURNS, con.sql(PENDING_BY_TURN).to_arrow_table())
        by_id: dict[str, Case] = {}
        for batch in cur.sql(READ_PENDING).to_arrow_reader(batch_size):
            if batch.num_rows == 0:
                continue
            cases = _cases(batch, by_id)
            replacing = bool(pc.any(batch.column("_prior")).as_py())
            yield PendingBatch(batch, cases, _pending_rows(batch.column("_scorers")), replacing)
    finally:
        cur.close()


class ReadAhead:
    """`pending_batches`, read one batch ahead on a worker thread.

    Reading is mostly DuckDB and polars, which release the GIL, so reading batch n+1
    overlaps scoring batch n, as writing batch n-1 does (`score_write`). The generator
    only ever runs on the worker, one batch at a time; `close` waits for the read in
    flight and closes the generator there, which ends the cursor's read. With `frame`
    (the runner's case), each batch's polars DataFrame is decoded on the worker too.
    """

    def __init__(self, batches: Generator[PendingBatch, None, None], *, frame: bool = True
                 ) -> None:
        self.batches, self.frame = batches, frame
        self.seconds = 0.0
        """Seconds spent reading on the worker thread."""
        self.pool = ThreadPoolExecutor(1, "score-reader")
        self.ahead: Future[PendingBatch | None] | None = self.pool.submit(self._read)

    def _read(self) -> PendingBatch | None:
        clock = time.perf_counter()
        batch = next(self.batches, None)
        if batch is not None and self.frame:
            _ = batch.frame  # cached on the batch
        self.seconds += time.perf_counter() - clock
        return batch

    def __iter__(self) -> ReadAhead:
        return self

    def __next__(self) -> PendingBatch:
        if self.ahead is None:
            raise StopIteration
        batch = self.ahead.result()  # a failed read raises here, on the caller's thread
        self.ahead = None if batch is None else self.pool.submit(self._read)
        if batch is None:
            raise StopIteration
        return batch

    def close(self) -> None:
        ahead, self.ahead = self.ahead, None
        try:
            if ahead is not None:
                # Wait for it. A read failing now changes nothing (the run is stopping),
                # but say so: it may be why the next run fails.
                failed = ahead.exception()
                if failed is not None:
                    log.warning("reading the next batch failed as the run stopped: %s", failed)
        finally:
            self.pool.submit(self.batches.close).result()
            self.pool.shutdown()


def _pending_rows(scorers: pa.ListArray) -> dict[str, list[int]]:
    """Per scorer named in the `_scorers` lists, the rows whose list names it."""
    names, rows = pc.list_flatten(scorers), pc.list_parent_indices(scorers)
    return {name: rows.filter(pc.equal(names, name)).to_pylist()
            for name in sorted(pc.unique(names).to_pylist())}


def _cases(batch: pa.RecordBatch, by_id: dict[str, Case]) -> list[Case | None]:
    """The cases joined by case_id; `by_id` remembers them for the run (many turns share
    a case, and only the first one's label columns are decoded)."""
    ids = batch.column("_label_case_id").to_pylist()
    new = pa.array([i for i, case_id in enumerate(ids)
                    if case_id is not None and case_id not in by_id], pa.int64())
    if len(new):
        cols = [batch.column(f"_label_{c}").take(new).to_pylist() for c in _LABEL_COLUMNS]
        for row in zip(*cols, strict=True):
            by_id[row[0]] = _case(row)
    return [None if case_id is None else by_id[case_id] for case_id in ids]


def _case(row: Sequence[Any]) -> Case:
    case_id, text, canary, ideal, mode, expected, expected_mode, decline, tags = row
    return Case(
        case_id=case_id, input=text, canary=None if canary is None else tuple(canary),
        ideal_response=ideal, match_mode=mode,
        expected_tools=None if expected is None else tuple(expected),
        expected_tools_mode=expected_mode, should_decline=decline, tags=tuple(tags or ()),
    )
