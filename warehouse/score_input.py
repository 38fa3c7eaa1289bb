"""What the score runner feeds its scorers: pending turns, batch by batch, with their cases.

All pending turns are read by ONE streaming query on a second connection (a cursor), so
each turn is read once; selecting each batch by id instead made every batch scan the
whole `turns` table. The cursor's read transaction does not block the runner's writes
on the main connection, and the run holds the writer lock, so `turns` and `labels`
cannot change underneath it. Batches come in scan order, not turn-id order: a killed
run leaves the uncommitted pairs pending whatever their order.

A turn's case is the label whose case_id equals the turn's (a join in the same query),
else the label whose `input_norm` equals the turn's normalised request, the smallest
case_id first (looked up per batch, and remembered for the run).

A batch keeps its rows as Arrow. Scorers with a columnar entry point read them as a
polars DataFrame (`PendingBatch.frame`); `Turn`s are decoded only when some scorer needs
them (`PendingBatch.turns`), column by column (`turns_of`), not row by row through
`to_pylist()` dicts, which cost more than most scorers.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa

from turnscore.ingest.turn import Call, Tool, Turn
from turnscore.scorers.base import Case, nested_records
from turnscore.scorers.text import normalize_series

PENDING_BY_TURN = """
SELECT turn_id, list(scorer ORDER BY scorer) AS scorers, bool_or(prior) AS prior
FROM _pending GROUP BY turn_id
"""
_PENDING_TURNS = "_pending_turns"
_LABEL_COLUMNS = ("case_id", "input", "canary", "ideal_response", "match_mode",
                  "expected_tools", "expected_tools_mode", "should_decline", "tags")
READ_PENDING = f"""
SELECT t.*, p.scorers AS _scorers, p.prior AS _prior,
       {", ".join(f"l.{c} AS _label_{c}" for c in _LABEL_COLUMNS)}
FROM turns AS t
JOIN {_PENDING_TURNS} AS p ON p.turn_id = t.turn_id
LEFT JOIN labels AS l ON l.case_id = t.case_id
"""
SELECT_LABEL_NORMS = "SELECT DISTINCT input_norm FROM labels"
SELECT_LABELS_BY_NORM = f"""
SELECT input_norm, {", ".join(_LABEL_COLUMNS)}
FROM labels
WHERE input_norm IN (SELECT unnest($norms::VARCHAR[]))
ORDER BY case_id
"""

_TURN_NAMES = tuple(f.name for f in fields(Turn))
_TOOL_NAMES = tuple(f.name for f in fields(Tool))
_CALL_NAMES = tuple(f.name for f in fields(Call))


@dataclass(frozen=True)  # no slots: `turns` and `frame` are cached properties
class PendingBatch:
    rows: pa.RecordBatch
    """The turns' rows (the `turns` columns and some of the query's own)."""
    cases: list[Case | None]
    scorers: list[list[str]]
    """Per turn, the scorers pending on it."""
    replacing: bool
    """Some pending pair in the batch has a current score (to move to history)."""

    @cached_property
    def turns(self) -> list[Turn]:
        """The rows as `Turn`s, decoded on first use."""
        return turns_of(self.rows)

    @cached_property
    def frame(self) -> pl.DataFrame:
        """The rows as a polars DataFrame of the `Turn` fields (columnar scorers)."""
        frame = pl.from_arrow(self.rows.select(list(_TURN_NAMES)))
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
    lookup = con.cursor()  # label look-ups: a query on `cur` would end its stream
    try:
        cur.register(_PENDING_TURNS, con.sql(PENDING_BY_TURN).to_arrow_table())
        labels = _LabelsByText(lookup)
        for batch in cur.sql(READ_PENDING).to_arrow_reader(batch_size):
            if batch.num_rows == 0:
                continue
            cases = _cases(batch)
            labels.fill(batch.column("request"), cases)
            scorers = batch.column("_scorers").to_pylist()
            replacing = any(batch.column("_prior").to_pylist())
            yield PendingBatch(batch, cases, scorers, replacing)
    finally:
        lookup.close()
        cur.close()


def turns_of(batch: pa.RecordBatch | pa.Table) -> list[Turn]:
    """The batch's rows as `Turn`s (extra columns are ignored)."""
    columns: list[list[Any]] = []
    for name in _TURN_NAMES:
        if name == "tools":
            columns.append(nested_records(batch.column(name), _TOOL_NAMES, Tool))
        elif name == "calls":
            columns.append(nested_records(batch.column(name), _CALL_NAMES, Call))
        else:
            columns.append(batch.column(name).to_pylist())
    return [Turn(*row) for row in zip(*columns, strict=True)]


def _cases(batch: pa.RecordBatch) -> list[Case | None]:
    cols = [batch.column(f"_label_{c}").to_pylist() for c in _LABEL_COLUMNS]
    return [None if row[0] is None else _case(row) for row in zip(*cols, strict=True)]


def _case(row: Sequence[Any]) -> Case:
    case_id, text, canary, ideal, mode, expected, expected_mode, decline, tags = row
    return Case(
        case_id=case_id, input=text, canary=None if canary is None else tuple(canary),
        ideal_response=ideal, match_mode=mode,
        expected_tools=None if expected is None else tuple(expected),
        expected_tools_mode=expected_mode, should_decline=decline, tags=tuple(tags or ()),
    )


class _LabelsByText:
    """Cases by normalised request text, for turns whose case_id found none.

    Only texts that some label has are looked up: the labels' texts are read once (a few
    per case), and most requests match none.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.found: dict[str, Case] = {}
        self.known: set[str] | None = None

    def fill(self, requests: pa.Array | pa.ChunkedArray, cases: list[Case | None]) -> None:
        todo = [i for i, c in enumerate(cases) if c is None]
        if not todo:
            return
        wanted = pl.Series("r", requests.take(pa.array(todo, pa.int64())), dtype=pl.String)
        norms = [str(n) for n in normalize_series(wanted).to_list()]
        if self.known is None:
            self.known = {row[0] for row in self.con.execute(SELECT_LABEL_NORMS).fetchall()}
        unseen = sorted({n for n in norms if n in self.known and n not in self.found})
        if unseen:
            for row in self.con.execute(SELECT_LABELS_BY_NORM, {"norms": unseen}).fetchall():
                self.found.setdefault(row[0], _case(row[1:]))
        for i, norm in zip(todo, norms, strict=True):
            cases[i] = self.found.get(norm)
