"""Writing scores: one current row per (turn, scorer), older rows kept in `scores_history`.

`write_scores` is one transaction: either the whole batch (its history copies and its new
rows) is in the database or none of it is, so a run killed mid-batch leaves the previous
scores current and the batch pending for the next run.

A batch arrives as Arrow tables of score columns (`COLUMNAR_SCHEMA`: what the runner
gets from `Scorer.score`, with the keys) and, for callers outside the runner, as
`ScoreRow`s; both become one Arrow table, written by one statement. When the runner
knows no pair of the batch has a current score, that statement is a plain INSERT: the
upsert's conflict check and the copy to history, each a lookup per row in the
primary-key index, are skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb
import pyarrow as pa

from turnscore.scorers.base import Score, details_json
from turnscore.warehouse.db import record_commit, transaction
from turnscore.warehouse.score_queue import queue_written
from turnscore.warehouse.score_schema import COLUMNS, JSON_COLUMNS, SCORE_FIELDS

log = logging.getLogger(__name__)

_KEY = ("turn_id", "scorer")
_COLS = ", ".join(COLUMNS)

# Nullability is the table's to enforce (a bad batch fails its transaction whole).
_INCOMING_SCHEMA = pa.schema([(f.name, f.type) for f in SCORE_FIELDS])
_INCOMING = "_incoming_scores"
COLUMNAR_SCHEMA = pa.schema([f for f in _INCOMING_SCHEMA
                             if f.name not in ("run_id", "scored_at")])
"""A scorer's verdicts with their keys (`base.VERDICT_COLUMNS` and turn_id, scorer,
scorer_version, content_hash); the run id and time are filled in."""

COPY_REPLACED_TO_HISTORY = f"""
INSERT INTO scores_history ({_COLS}, replaced_at)
SELECT {", ".join(f"s.{c}" for c in COLUMNS)}, ?
FROM scores s JOIN {_INCOMING} i USING (turn_id, scorer)
"""
# In key order: the primary-key index takes sorted keys faster (neighbouring keys share
# its nodes; about a tenth of the writer's CPU), and a turn's rows stay together.
_SELECT_INCOMING = f"""
SELECT {", ".join(f"{c}::JSON" if c in JSON_COLUMNS else c for c in COLUMNS)} FROM {_INCOMING}
ORDER BY {", ".join(_KEY)}"""
UPSERT_SCORES = f"""
INSERT INTO scores ({_COLS}){_SELECT_INCOMING}
ON CONFLICT (turn_id, scorer) DO UPDATE SET
{", ".join(f"{c} = EXCLUDED.{c}" for c in COLUMNS if c not in _KEY)}
"""
INSERT_SCORES = f"""
INSERT INTO scores ({_COLS}){_SELECT_INCOMING}
"""


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """A score ready to write: the verdict plus what it was computed from."""

    turn_id: str
    scorer: str
    scorer_version: str
    content_hash: str
    """What the score was computed from: the turn's content_hash when scored, and for a
    scorer that reads labels, `:` and the label_hash of the turn's case ('' for none;
    `labels.scored_hash`). A different one later makes the score stale."""
    score: Score


def _arrow(rows: Sequence[ScoreRow], run_id: str, now: datetime) -> pa.Table:
    cols: dict[str, list[object]] = {name: [] for name in COLUMNS}
    for r in rows:
        s, u = r.score, r.score.usage
        values: tuple[object, ...] = (
            r.turn_id, r.scorer, r.scorer_version, str(s.status), s.value, s.label,
            s.explanation, details_json(s.details), s.judge,
            s.prompt_sha, u.input_tokens, u.output_tokens, u.cost_usd, u.latency_ms,
            u.attempts, s.error, r.content_hash, run_id, now,
        )
        for name, value in zip(COLUMNS, values, strict=True):
            cols[name].append(value)
    return pa.Table.from_pydict(cols, schema=_INCOMING_SCHEMA)


def _filled(table: pa.Table, run_id: str, now: datetime) -> pa.Table:
    """Scores (`COLUMNAR_SCHEMA`, or fewer columns) with the columns they lack filled in."""
    n = table.num_rows
    fill: dict[str, object] = {"attempts": 0, "run_id": run_id, "scored_at": now}
    columns = []
    for f in _INCOMING_SCHEMA:
        if f.name in table.column_names:
            columns.append(table.column(f.name).cast(f.type))
        elif f.name in fill:
            columns.append(pa.repeat(pa.scalar(fill[f.name], f.type), n))
        else:
            columns.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(columns, schema=_INCOMING_SCHEMA)


def _last_per_key(rows: Sequence[ScoreRow]) -> list[ScoreRow]:
    latest: dict[tuple[str, str], ScoreRow] = {}
    for r in rows:
        key = (r.turn_id, r.scorer)
        if key in latest:
            log.warning("batch has two scores for turn %s, scorer %s; keeping the last", *key)
        latest[key] = r
    return list(latest.values())


def score_table(rows: Sequence[ScoreRow], run_id: str, *, columns: Sequence[pa.Table] = (),
                now: datetime | None = None) -> pa.Table:
    """A batch's scores as one table of the `scores` columns, ready for `write_score_table`.

    `columns`: more scores, as tables of `COLUMNAR_SCHEMA`, one row per (turn, scorer)
    and none of their pairs among `rows`'.
    """
    now = now or datetime.now(UTC)
    parts = [_filled(t, run_id, now) for t in columns if t.num_rows]
    if rows:
        parts.append(_arrow(_last_per_key(rows), run_id, now))
    return pa.concat_tables(parts) if parts else _arrow([], run_id, now)


Settle = Callable[[duckdb.DuckDBPyConnection, str], None]
"""Run in a batch's transaction after its rows are written, with the name of the table of
those rows on the connection: keeps the score queue (`score_queue`) right."""


def write_score_table(con: duckdb.DuckDBPyConnection, table: pa.Table, run_id: str,
                      *, replacing: bool = True, settle: Settle = queue_written) -> int:
    """Write a `score_table` in one transaction; a replaced score is first copied to history.

    `replacing=False` promises that no row of the batch has a current score yet (the
    runner knows): the copy to history, a join over the whole `scores` table, is skipped
    and rows are inserted, not upserted (a current row would then fail the batch).
    `settle` keeps the score queue in the same transaction: by default the batch's turns
    are queued (a score written outside a run may leave its turn pending); a score run
    passes `score_queue.dequeue`. Returns the number of rows written.
    """
    if not table.num_rows:
        return 0
    con.register(_INCOMING, table)
    try:
        with transaction(con):
            if replacing:
                con.execute(COPY_REPLACED_TO_HISTORY, [datetime.now(UTC)])
            con.execute(UPSERT_SCORES if replacing else INSERT_SCORES)
            settle(con, _INCOMING)
            record_commit(con, run_id)
    finally:
        con.unregister(_INCOMING)
    return table.num_rows


def write_scores(con: duckdb.DuckDBPyConnection, rows: Sequence[ScoreRow], run_id: str,
                 *, replacing: bool = True, columns: Sequence[pa.Table] = (),
                 settle: Settle = queue_written) -> int:
    """`score_table` then `write_score_table`: a batch in one transaction."""
    return write_score_table(con, score_table(rows, run_id, columns=columns), run_id,
                             replacing=replacing, settle=settle)
