"""`turnscore ingest` as a library call: OTLP files in, warehouse `turns` loaded.

`run_ingest` takes the writer lock, skips files whose content is already recorded in
`ingested_files`, runs the ingest stage (`turnscore.ingest.pipeline`, which writes the
`spans/` and `turns/` Parquet under the warehouse folder), then in ONE transaction:
upserts the batch's turns (a new turn_id is inserted, a rebuilt turn whose row differs
replaces the old row under the same turn_id, an identical one is left alone), deletes the
turns of rebuilt traces that the rebuild no longer produced, inserts `ingest_errors`,
records `ingested_files` and finishes the `runs` row.

Crash safety: a file is recorded only in the transaction that loads its turns, so a run
killed anywhere before the commit is redone by the next one; the Parquet stores dedup
spans and keep one row per turn, and the load leaves unchanged rows alone, so the redo
adds nothing twice.

`turns/` is written before that commit, so a run killed in between leaves turns in
Parquet that the warehouse lacks (and turns removed from Parquet that it still has); if
the same input is never offered again, no redo comes. So each run leaves a marker,
`.unloaded-turns/<run id>`, before it writes anything and removes it after its commit.
A later run that finds a dead run's marker loads that run's part files (those still
there, as they are now) with its own, treating their traces as rebuilt, and removes the
marker after committing: only dead runs' files are read, never the whole store.

Bad input: a file that gave no span or log record, only input errors (not OTLP, cut off,
corrupt compression, unreadable), is not recorded, so every run reads and reports it
again until it is fixed or removed; a run skipping it as done would turn a nightly green
on bad input. A file that gave records is recorded even when some of its lines were bad:
its good records are in, and the same errors every night would be noise.

(Over ~400 lines: the run, its one load transaction and the dead-run recovery above share
the marker and the upsert rules; split, the recovery would restate the load's.)
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from turnscore.errors import TurnscoreError
from turnscore.ingest.assemble import ISSUES
from turnscore.ingest.formats import INPUT_SUFFIXES_HELP, Limits
from turnscore.ingest.otlp import folders_without_input
from turnscore.ingest.pipeline import IngestBatch, IngestedFile, ProgressFn, ingest_paths
from turnscore.ingest.records import WHOLE_FILE
from turnscore.ingest.schema import TURN_FIELDS
from turnscore.ingest.settings import IngestSettings
from turnscore.ingest.store import TurnStore
from turnscore.warehouse.db import (
    open_warehouse,
    quote_ident,
    record_commit,
    transaction,
    writer_lock,
)
from turnscore.warehouse.errors import InvalidOption
from turnscore.warehouse.runs import (
    Outcome,
    RunKind,
    close_interrupted_runs,
    finish_run,
    start_run,
)
from turnscore.warehouse.score_queue import queue_loaded_turns
from turnscore.warehouse.score_schema import COLUMNS as SCORE_COLUMNS

__all__ = ["ErrorLine", "IngestReport", "finish_ingest_run", "load_batch", "run_ingest"]

logger = logging.getLogger(__name__)

_COLUMNS = ", ".join(quote_ident(f.name) for f in TURN_FIELDS)
# A row is "rebuilt" when anything but its lineage changed.
_DIFFERS = " OR ".join(
    f"s.{quote_ident(f.name)} IS DISTINCT FROM t.{quote_ident(f.name)}"
    for f in TURN_FIELDS
    if f.name not in ("turn_id", "ingest_id")
)

UNLOADED_DIR = ".unloaded-turns"
"""Under the warehouse folder: one marker per ingest run whose `turns/` writes are not
(yet) committed to the warehouse (see the module doc)."""
KNOWN_FILE_KEYS = "SELECT file_key FROM ingested_files"
# What the run's turns say of themselves, from its own files (never a scan of `turns`),
# read once.
TURN_QUALITY = """
WITH t AS MATERIALIZED (SELECT status, convention, issues FROM read_parquet($files))
SELECT 'status' AS kind, status AS name, count(*) FROM t GROUP BY status
UNION ALL
SELECT 'convention', convention, count(*) FROM t GROUP BY convention
UNION ALL
SELECT 'issue', issue, count(*) FROM (SELECT unnest(issues) AS issue FROM t) GROUP BY issue
"""
# Staged: the keys only. The rows go from the files straight into `turns`, new ones by a
# plain INSERT: INSERT OR REPLACE checks every row against the key for a conflict and
# costs twice as much (measured), and most turns of a run are new.
STAGE_KEYS = """
CREATE OR REPLACE TEMP TABLE _staged_keys AS
SELECT turn_id, trace_id FROM read_parquet($files)
"""
# Cost: a run must cost what its batch costs, not what the warehouse holds. Reading one
# narrow column of `turns` is cheap; a join that needs every column of `turns` (the
# comparison below) or a DELETE scans all of it, so both run only when the narrow
# lookups found something to compare or to delete.
COUNT_KNOWN = """
SELECT count(*) FROM turns WHERE turn_id IN (SELECT turn_id FROM _staged_keys)
"""
CLASSIFY_TURNS = f"""
CREATE OR REPLACE TEMP TABLE _changed_turns AS
SELECT s.turn_id, t.turn_id IS NULL AS is_new
FROM read_parquet($files) s LEFT JOIN turns t ON s.turn_id = t.turn_id
WHERE t.turn_id IS NULL OR {_DIFFERS}
"""
ALL_NEW_TURNS = """
CREATE OR REPLACE TEMP TABLE _changed_turns AS
SELECT turn_id, true AS is_new FROM _staged_keys
"""
COUNT_CHANGED = """
SELECT (SELECT count(*) FROM _staged_keys), count(*) FILTER (is_new),
       count(*) FILTER (NOT is_new)
FROM _changed_turns
"""
INSERT_NEW_TURNS = f"""
INSERT INTO turns ({_COLUMNS})
SELECT {_COLUMNS} FROM read_parquet($files)
WHERE turn_id IN (SELECT turn_id FROM _changed_turns WHERE is_new)
"""
REPLACE_CHANGED_TURNS = f"""
INSERT OR REPLACE INTO turns ({_COLUMNS})
SELECT {_COLUMNS} FROM read_parquet($files)
WHERE turn_id IN (SELECT turn_id FROM _changed_turns WHERE NOT is_new)
"""
CREATE_STAGED_IDS = "CREATE OR REPLACE TEMP TABLE _staged_ids (turn_id VARCHAR NOT NULL)"
CREATE_REBUILT_TRACES = """
CREATE OR REPLACE TEMP TABLE _rebuilt_traces AS SELECT trace_id FROM _batch_rebuilt_traces
"""
RECORD_STAGED_TRACES = "INSERT INTO _rebuilt_traces SELECT DISTINCT trace_id FROM _staged_keys"
RECORD_STAGED_IDS = "INSERT INTO _staged_ids SELECT turn_id FROM _staged_keys"
FIND_GONE_TURNS = """
CREATE OR REPLACE TEMP TABLE _gone_turns AS
SELECT turn_id FROM turns
WHERE trace_id IN (SELECT trace_id FROM _rebuilt_traces)
  AND turn_id NOT IN (SELECT turn_id FROM _staged_ids)
"""
COUNT_GONE = "SELECT count(*) FROM _gone_turns"
COUNT_REBUILT_TRACES = "SELECT count(*) FROM _rebuilt_traces"
DELETE_GONE_TURNS = """
DELETE FROM turns WHERE turn_id IN (SELECT turn_id FROM _gone_turns) RETURNING turn_id
"""
# A removed turn's scores describe a turn that no longer exists: they leave `scores` (so
# no view counts them) for `scores_history`, as a replaced score does.
SCORE_COLS = ", ".join(SCORE_COLUMNS)
RETIRE_GONE_SCORES = f"""
INSERT INTO scores_history ({SCORE_COLS}, replaced_at)
SELECT {SCORE_COLS}, ? FROM scores WHERE turn_id IN (SELECT turn_id FROM _gone_turns)
"""
DELETE_GONE_SCORES = "DELETE FROM scores WHERE turn_id IN (SELECT turn_id FROM _gone_turns)"
SET_MEMORY_LIMIT = "SET memory_limit = ?"
LOAD_MEMORY_LIMIT = "256MB"
"""DuckDB's memory for the load; past it DuckDB spills to disk, so big batches stay bounded."""
LOAD_FILES_PER_STEP = 4
INSERT_ERRORS = """
INSERT INTO ingest_errors (run_id, source, position, trace_id, span_id, message, recorded_at)
SELECT ?, source, position, trace_id, span_id, message, ? FROM _new_errors
"""
INSERT_FILES = """
INSERT OR IGNORE INTO ingested_files (file_key, path, bytes, spans, logs, run_id, ingested_at)
SELECT file_key, path, bytes, spans, logs, ?, ? FROM _new_files
"""


@dataclass(frozen=True, slots=True)
class ErrorLine:
    """One bad-input finding, as stored in `ingest_errors`."""

    source: str
    position: str
    message: str
    trace_id: str | None = None
    span_id: str | None = None

    def __str__(self) -> str:
        """`source, position: message`; a whole-file problem has no position to show."""
        if self.position in ("", WHOLE_FILE):
            return f"{self.source}: {self.message}"
        return f"{self.source}, {self.position}: {self.message}"


@dataclass(frozen=True, slots=True)
class IngestReport:
    run_id: str
    outcome: str
    """`ok`, `partial` (completed, some input was bad) or `failed` (nothing loaded)."""
    files_read: int = 0
    files_skipped: int = 0
    spans: int = 0
    """Spans read, duplicates included."""
    new_spans: int = 0
    logs: int = 0
    turns_new: int = 0
    turns_rebuilt: int = 0
    """Existing turns whose row changed (late spans, decoder fix) and were replaced."""
    turns_unchanged: int = 0
    turns_removed: int = 0
    """Turns of rebuilt traces that the rebuild no longer produced."""
    turns_recovered: int = 0
    """Turns a killed earlier run wrote to `turns/` but never loaded, loaded now (new or
    changed; removals count in `turns_removed`)."""
    errors: tuple[ErrorLine, ...] = ()
    seconds: float = 0.0
    error: str | None = None
    """Why the run failed, when it did."""
    skipped: tuple[str, ...] = field(default=())
    """Paths skipped, with the reason."""
    notes: tuple[str, ...] = field(default=())
    """What is worth saying but is no input error: a folder given with no input file."""
    turn_status: dict[str, int] = field(default_factory=dict)
    """The run's turns (new, rebuilt and unchanged) by status."""
    turn_issues: dict[str, int] = field(default_factory=dict)
    """The run's turns with each issue (`turns.issues`: what assembly could not trust,
    such as content not captured), in `turnscore.ingest.assemble.ISSUES` order."""
    turn_conventions: dict[str, int] = field(default_factory=dict)
    """The run's turns by the decoders that produced them (`turns.convention`), most first:
    what turnscore took a stack's spans for."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_ingest(
    paths: Sequence[Path],
    warehouse_dir: Path,
    settings: IngestSettings | None = None,
    *,
    progress: ProgressFn | None = None,
    wait: bool = False,
    limits: Limits | None = None,
) -> IngestReport:
    """Ingest OTLP files/folders into the warehouse at `warehouse_dir` as `settings` say;
    `limits`, when given, override theirs (how far a compressed file may expand).

    Raises `InvalidOption` for a path that does not exist (before taking the lock: a typo
    should not wait), `WarehouseBusy` when another run holds the lock (and `wait` is
    false). Any other failure is recorded as a failed run and returned as a report with
    outcome `failed`; nothing of the batch is then loaded.
    """
    started = time.monotonic()
    for path in paths:
        if not path.exists():
            raise InvalidOption(f"no such file or folder: {path}")
    with writer_lock(warehouse_dir, wait=wait):
        con = open_warehouse(warehouse_dir)
        try:
            con.execute(SET_MEMORY_LIMIT, [LOAD_MEMORY_LIMIT])
            # We hold the writer lock: a run still open in the table died without finishing.
            close_interrupted_runs(con)
            run_id = start_run(con, RunKind.INGEST, {"paths": [str(p) for p in paths],
                                                     "warehouse": str(warehouse_dir)})
            dead = _unloaded_runs(warehouse_dir)
            _mark_unloaded(warehouse_dir, run_id)
            try:
                known = {row[0] for row in con.execute(KNOWN_FILE_KEYS).fetchall()}
                notes = tuple(
                    f"{folder}: no input file in this folder (taken: {INPUT_SUFFIXES_HELP})"
                    for folder in folders_without_input(paths)
                )
                batch = ingest_paths(
                    paths,
                    warehouse_dir,
                    known_file_keys=known,
                    progress=progress,
                    ingest_id=run_id,
                    settings=settings,
                    limits=limits,
                )
                report = load_batch(con, batch, known, notes, started,
                               _recovered(warehouse_dir, dead))
                for done in (*dead, run_id):
                    (warehouse_dir / UNLOADED_DIR / done).unlink(missing_ok=True)
                return report
            except (TurnscoreError, OSError, duckdb.Error) as exc:
                logger.error("ingest run %s failed: %s", run_id, exc)
                report = IngestReport(
                    run_id, "failed", seconds=time.monotonic() - started, error=str(exc)
                )
                finish_ingest_run(con, report)
                return report
        finally:
            con.close()


def _unloaded_runs(warehouse_dir: Path) -> list[str]:
    """Earlier runs with a marker: they died (or failed) between writing `turns/` and
    committing. Called under the writer lock, before this run leaves its own marker."""
    folder = warehouse_dir / UNLOADED_DIR
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def _mark_unloaded(warehouse_dir: Path, run_id: str) -> None:
    folder = warehouse_dir / UNLOADED_DIR
    folder.mkdir(exist_ok=True)
    marker = folder / run_id
    with open(marker, "wb") as fh:  # durable before the first Parquet write
        os.fsync(fh.fileno())
    fd = os.open(folder, os.O_RDONLY)  # the marker's name too, not only its (empty) content
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _recovered(warehouse_dir: Path, dead: Sequence[str]) -> tuple[Path, ...]:
    if not dead:
        return ()
    store = TurnStore(warehouse_dir, "recover")
    files = tuple(path for run_id in dead for path in store.files_of(run_id))
    logger.warning("ingest runs %s died before loading their turns; loading their %d "
                   "turns/ file(s) now", ", ".join(dead), len(files))
    return files


def finish_ingest_run(con: duckdb.DuckDBPyConnection, report: IngestReport) -> None:
    """Close the run's `runs` row with the report (errors and skipped files are rows of
    their own tables, not repeated in the summary)."""
    summary = report.to_json()
    summary.pop("errors")
    summary.pop("skipped")
    finish_run(con, report.run_id, Outcome(report.outcome), summary, report.error)


def load_batch(
    con: duckdb.DuckDBPyConnection,
    batch: IngestBatch,
    known: set[str],
    notes: tuple[str, ...],
    started: float,
    recovered: tuple[Path, ...] = (),
) -> IngestReport:
    """Load the batch's turns (and `recovered`: part files of dead runs, see the module
    doc) in one transaction with the run's errors, files and `runs` row."""
    errors = tuple(
        ErrorLine(e.source, e.position, e.message, e.trace_id, e.span_id) for e in batch.errors
    )
    now = datetime.now(UTC)
    # A dead run wrote its traces' turns whole (it rebuilt them): what the warehouse holds
    # of those traces beyond its files' rows is gone, as for this run's rebuilt traces.
    con.register(
        "_batch_rebuilt_traces",
        pa.table({"trace_id": pa.array(sorted(batch.rebuilt_traces), pa.string())}),
    )
    con.register("_new_errors", _errors_table(errors))
    con.register("_new_files", _files_table(batch))
    try:
        with transaction(con):
            con.execute(CREATE_STAGED_IDS)
            con.execute(CREATE_REBUILT_TRACES)
            _, recovered_new, recovered_changed = _upsert(con, recovered, rebuilt=True)
            staged, new, rebuilt = _upsert(con, batch.turn_files)
            removed = []
            # Only a rebuilt trace can lose turns; a night of new traces has none to look for
            # (the search reads the trace ids of every turn).
            if _scalar(con, COUNT_REBUILT_TRACES):
                con.execute(FIND_GONE_TURNS)
                if _scalar(con, COUNT_GONE):
                    removed = con.execute(DELETE_GONE_TURNS).fetchall()
                    con.execute(RETIRE_GONE_SCORES, [now])
                    con.execute(DELETE_GONE_SCORES)
            con.execute(INSERT_ERRORS, [batch.ingest_id, now])
            con.execute(INSERT_FILES, [batch.ingest_id, now])
            outcome, failure = _outcome(batch, errors, known)
            status, issues, conventions = _turn_quality(con, [*recovered, *batch.turn_files])
            report = IngestReport(
                run_id=batch.ingest_id,
                outcome=outcome,
                files_read=len(batch.files),
                files_skipped=len(batch.skipped),
                spans=batch.spans,
                new_spans=batch.new_spans,
                logs=batch.logs,
                turns_new=new,
                turns_rebuilt=rebuilt,
                turns_unchanged=staged - new - rebuilt,
                turns_removed=len(removed),
                turns_recovered=recovered_new + recovered_changed,
                errors=errors,
                seconds=time.monotonic() - started,
                skipped=tuple(f"{s.path}: {s.reason}" for s in batch.skipped),
                error=failure,
                notes=notes,
                turn_status=status,
                turn_issues=issues,
                turn_conventions=conventions,
            )
            finish_ingest_run(con, report)
            record_commit(con, batch.ingest_id)
    finally:
        for name in ("_batch_rebuilt_traces", "_new_errors", "_new_files"):
            con.unregister(name)
    logger.info(
        "ingest %s: %d file(s), %d span(s), turns %d new / %d rebuilt / %d unchanged, %d error(s)",
        report.run_id,
        report.files_read,
        report.spans,
        new,
        rebuilt,
        report.turns_unchanged,
        len(errors),
    )
    return report


def _upsert(con: duckdb.DuckDBPyConnection, turn_files: Sequence[Path], *,
            rebuilt: bool = False) -> tuple[int, int, int]:
    """Upsert the turns of `turn_files`, recording their ids in `_staged_ids` (and with
    `rebuilt`, their traces in `_rebuilt_traces`); returns (staged, new, changed)."""
    staged = new = changed = 0
    files = [str(p) for p in turn_files]
    # A few files at a time: comparing every turn at once costs memory for nothing.
    for i in range(0, len(files), LOAD_FILES_PER_STEP):
        step = {"files": files[i : i + LOAD_FILES_PER_STEP]}
        con.execute(STAGE_KEYS, step)
        if rebuilt:
            con.execute(RECORD_STAGED_TRACES)
        if _scalar(con, COUNT_KNOWN):
            con.execute(CLASSIFY_TURNS, step)
        else:
            con.execute(ALL_NEW_TURNS)
        step_staged, step_new, step_changed = con.execute(COUNT_CHANGED).fetchone() or (0, 0, 0)
        staged, new, changed = staged + step_staged, new + step_new, changed + step_changed
        queue_loaded_turns(con)  # their scores may be stale now (before the upsert)
        if step_new:
            con.execute(INSERT_NEW_TURNS, step)
        if step_changed:
            con.execute(REPLACE_CHANGED_TURNS, step)
        con.execute(RECORD_STAGED_IDS)
    return staged, new, changed


def _turn_quality(con: duckdb.DuckDBPyConnection, turn_files: Sequence[Path]
                  ) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """The turns of `turn_files` by status, by issue and by convention."""
    if not turn_files:
        return {}, {}, {}
    rows = con.execute(TURN_QUALITY, {"files": [str(p) for p in turn_files]}).fetchall()
    status = {name: n for kind, name, n in sorted(rows, key=_status_order) if kind == "status"}
    found = {name: n for kind, name, n in rows if kind == "issue"}
    conventions = sorted(((n, name) for kind, name, n in rows if kind == "convention"),
                         key=lambda c: (-c[0], c[1]))
    return (status, {i: found[i] for i in ISSUES if i in found},
            {name: n for n, name in conventions})


def _status_order(row: tuple[str, str, int]) -> tuple[int, str]:
    """`ok`, `error`, `incomplete`, then any other status by name."""
    order = ("ok", "error", "incomplete")
    return (order.index(row[1]) if row[1] in order else len(order), row[1])


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0]) if row else 0


def _outcome(
    batch: IngestBatch, errors: tuple[ErrorLine, ...], known: set[str]
) -> tuple[str, str | None]:
    """The run's outcome, and why when it failed. It failed when there were input errors
    and no input file gave anything: no record read, none already ingested. A bad file
    beside good ones (read now or before) is bad input in a completed run: partial."""
    if not errors:
        return "ok", None
    if batch.spans or batch.logs or any(s.file_key in known for s in batch.skipped):
        return "partial", None
    return "failed", (
        f"no span or log record could be read from the input ({len(errors)} input "
        "error(s), all in the ingest_errors table)"
    )


def _done(file: IngestedFile) -> bool:
    """Whether a file read in this run is recorded as ingested (see the module doc)."""
    return bool(file.spans or file.logs or not file.errors)


def _errors_table(errors: Sequence[ErrorLine]) -> pa.Table:
    return pa.table(
        {
            "source": pa.array([e.source for e in errors], pa.string()),
            "position": pa.array([e.position for e in errors], pa.string()),
            "trace_id": pa.array([e.trace_id for e in errors], pa.string()),
            "span_id": pa.array([e.span_id for e in errors], pa.string()),
            "message": pa.array([e.message for e in errors], pa.string()),
        }
    )


def _files_table(batch: IngestBatch) -> pa.Table:
    done = [f for f in batch.files if _done(f)]
    return pa.table(
        {
            "file_key": pa.array([f.file_key for f in done], pa.string()),
            "path": pa.array([str(f.path) for f in done], pa.string()),
            "bytes": pa.array([f.bytes for f in done], pa.int64()),
            "spans": pa.array([f.spans for f in done], pa.int64()),
            "logs": pa.array([f.logs for f in done], pa.int64()),
        }
    )
