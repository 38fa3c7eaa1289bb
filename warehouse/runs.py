"""The `runs` table: one row per ingest, labels, score or nightly run.

A run row is written when the run starts (ended_at and outcome NULL) and completed when it
ends. Writers hold the warehouse lock, so a run still unfinished when the next writer
takes the lock died mid-way: `close_interrupted_runs` marks it `interrupted`.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum

import duckdb
import orjson

log = logging.getLogger(__name__)


class RunKind(StrEnum):
    INGEST = "ingest"
    LABELS = "labels"
    SCORE = "score"
    NIGHTLY = "nightly"


class Outcome(StrEnum):
    OK = "ok"
    PARTIAL = "partial"
    """Completed, but some rows failed (errored scores, bad input) or a budget stopped it."""
    FAILED = "failed"
    INTERRUPTED = "interrupted"


INSERT_RUN = "INSERT INTO runs (run_id, kind, started_at, config) VALUES (?, ?, ?, ?::JSON)"
FINISH_RUN = """
UPDATE runs SET ended_at = ?, outcome = ?, summary = ?::JSON, error = ? WHERE run_id = ?
"""
CLOSE_INTERRUPTED = """
UPDATE runs SET outcome = 'interrupted', error = 'the process ended before the run finished'
WHERE ended_at IS NULL AND outcome IS NULL AND NOT list_contains($running, run_id)
RETURNING run_id
"""

_RUNNING: set[str] = set()
"""Runs this process started and has not finished. The writer lock is re-entrant within a
process, so a run unfinished under it is dead unless it is one of these: a nightly's own
row while its stages, each closing interrupted runs, go on."""


def new_run_id(kind: RunKind, now: datetime | None = None) -> str:
    """Sortable and readable: `score-20260130T021500Z-1a2b3c4d`."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{kind.value}-{stamp}-{uuid.uuid4().hex[:8]}"


def _json(value: Mapping[str, object] | None) -> str | None:
    return None if value is None else orjson.dumps(value, default=str).decode()


def start_run(con: duckdb.DuckDBPyConnection, kind: RunKind,
              config: Mapping[str, object] | None = None, now: datetime | None = None) -> str:
    """Record a run as started (at `now`, default the present); returns its id."""
    now = now or datetime.now(UTC)
    run_id = new_run_id(kind, now)
    con.execute(INSERT_RUN, [run_id, kind.value, now, _json(config)])
    _RUNNING.add(run_id)
    return run_id


def finish_run(con: duckdb.DuckDBPyConnection, run_id: str, outcome: Outcome,
               summary: Mapping[str, object] | None = None, error: str | None = None) -> None:
    con.execute(FINISH_RUN, [datetime.now(UTC), outcome.value, _json(summary), error, run_id])
    _RUNNING.discard(run_id)


def close_interrupted_runs(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Mark runs a dead process left unfinished. Call only while holding the writer lock."""
    ids = [row[0] for row in con.execute(CLOSE_INTERRUPTED,
                                         {"running": sorted(_RUNNING)}).fetchall()]
    for run_id in ids:
        log.warning("run %s did not finish; marked interrupted", run_id)
    return ids
