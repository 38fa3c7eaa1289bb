"""Opening the warehouse: the DuckDB file, the writer lock, the migrations, and fewer
checkpoints during bulk writes (`bulk_writes`).

Layout of a warehouse folder::

    warehouse.duckdb     the live database (one writer process at a time)
    .writer.lock         flock'ed by the writer; holds its pid for the busy message
    published.duckdb     the last consistent snapshot, for readers (see `publish`)
    published/           Parquet exports of every view (a symlink swapped atomically)

The SQL macros (`MACROS`: the agent rule) are (re)created by every writer's open, so the
views and the runners' SQL can call them on any migrated warehouse, always with the
installed definition; they are copied into the snapshot with the tables.

Migrations are `migrations/NNNN_name.sql`, applied in number order, each in its own
transaction together with its row in `_migrations`, so a crash leaves the database at
the previous migration, never half-way through one.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import duckdb

from turnscore.warehouse.errors import (
    InvalidOption,
    MigrationError,
    WarehouseBusy,
    WarehouseMissing,
)

log = logging.getLogger(__name__)

DB_FILE = "warehouse.duckdb"
LOCK_FILE = ".writer.lock"
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

CREATE_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS _migrations (
    name VARCHAR PRIMARY KEY,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
)
"""
SELECT_APPLIED = "SELECT name FROM _migrations ORDER BY name"
RECORD_MIGRATION = "INSERT INTO _migrations (name) VALUES (?)"
RECORD_COMMIT = "INSERT INTO _commits (run_id, committed_at) VALUES (?, ?)"
SELECT_COMMIT_STAMP = """
SELECT (SELECT count(*) FROM {database}.main._commits),
       (SELECT max(name) FROM {database}.main._migrations)
"""
SELECT_CURRENT_DATABASE = "SELECT current_database()"
SELECT_CHECKPOINT_THRESHOLD = "SELECT current_setting('checkpoint_threshold')"
SET_CHECKPOINT_THRESHOLD = "SET checkpoint_threshold = $threshold"

BULK_CHECKPOINT_THRESHOLD = "256MiB"
"""The WAL size that triggers a checkpoint during `bulk_writes` (DuckDB's default: 16 MiB).

DuckDB checkpoints at the commit that takes the WAL past the threshold. A score run
commits a batch (25,000 score rows, ~7 MB of WAL) every few tenths of a second; at the
default that was a checkpoint every two or three batches, each costing about 0.3 s
whatever its size: over half of the writer's time (bench/score.py). 256 MiB is a few checkpoints per
million turns, still taken by the committing (writer) thread, and bounds what a crashed
run leaves to replay when the warehouse is next opened (a few seconds).
"""


def quote_ident(name: str) -> str:
    """Quote an SQL identifier so any string (quotes, spaces, keywords) stays one name."""
    if "\x00" in name:
        raise ValueError(f"identifier contains a NUL byte: {name!r}")
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True, slots=True)
class Macro:
    """A DuckDB scalar macro the views (and the package's other SQL) call."""

    name: str
    parameters: tuple[str, ...]
    body: str
    """The expression, over the parameters."""
    description: str

    def create_sql(self, *, temp: bool = False) -> str:
        params = ", ".join(quote_ident(p) for p in self.parameters)
        kind = "TEMP MACRO" if temp else "MACRO"
        return f"CREATE OR REPLACE {kind} {quote_ident(self.name)}({params}) AS {self.body}"


AGENT_MACRO = Macro(
    "turn_agent", ("agent_name", "service_name"), "coalesce(agent_name, service_name)",
    "a turn's agent: its agent name, else its resource's service.name")
"""The agent rule (DESIGN §4 `agent_name, service_name`): the one place it is spelled."""

MACROS: tuple[Macro, ...] = (AGENT_MACRO,)


def create_macros(con: duckdb.DuckDBPyConnection, *, temp: bool = False) -> list[str]:
    """(Re)create `MACROS` on `con`: in its database, or as TEMP macros (allowed on a
    read-only connection, and found before the database's own); returns the names."""
    for macro in MACROS:
        con.execute(macro.create_sql(temp=temp))
    return [m.name for m in MACROS]


@dataclass(frozen=True, slots=True)
class Migration:
    number: int
    name: str
    """File name, e.g. `0001_turns.sql`; what `_migrations` records."""
    sql: str


def migrations() -> list[Migration]:
    """Every migration shipped with the package, in order."""
    found = []
    for entry in resources.files("turnscore.warehouse.migrations").iterdir():
        m = _MIGRATION_NAME.match(entry.name)
        if m:
            found.append(Migration(int(m.group(1)), entry.name, entry.read_text("utf-8")))
        elif entry.name.endswith(".sql"):
            raise MigrationError(f"migration file {entry.name!r} is not named NNNN_name.sql")
    found.sort(key=lambda mig: mig.number)
    numbers = [mig.number for mig in found]
    if len(set(numbers)) != len(numbers):
        raise MigrationError(f"two migrations share a number: {[mig.name for mig in found]}")
    return found


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply pending migrations; returns the names applied."""
    con.execute(CREATE_MIGRATIONS_TABLE)
    applied = {row[0] for row in con.execute(SELECT_APPLIED).fetchall()}
    known = migrations()
    unknown = applied - {mig.name for mig in known}
    if unknown:
        raise MigrationError(
            f"the warehouse has migrations this turnscore does not know ({sorted(unknown)}); "
            "it was written by a newer version: upgrade turnscore"
        )
    done = []
    for mig in known:
        if mig.name in applied:
            continue
        try:
            with transaction(con):
                con.execute(mig.sql)
                con.execute(RECORD_MIGRATION, [mig.name])
        except duckdb.Error as exc:
            raise MigrationError(f"migration {mig.name} failed: {exc}") from exc
        log.info("applied migration %s", mig.name)
        done.append(mig.name)
    return done


def record_commit(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Stamp the open write transaction as a commit readers must see (see
    the `_commits` migration). Every writer of `turns`, `ingest_errors`,
    `ingested_files`, `scores`, `scores_history` and `labels` calls it before its COMMIT;
    bookkeeping only a run reads (`runs`, the judge cache and batches, `request_norms`,
    which follows `turns`) does not."""
    con.execute(RECORD_COMMIT, [run_id, datetime.now(UTC)])


CommitStamp = tuple[int, str | None]
"""Commits recorded, and the last migration applied: equal stamps, equal data."""


def commit_stamp(con: duckdb.DuckDBPyConnection, database: str | None = None) -> CommitStamp:
    """The commit stamp of `database` (an attached database's name; default `con`'s own).
    Raises `duckdb.CatalogException` for a database from before `_commits`."""
    if database is None:
        database = current_database(con)
    row = con.execute(SELECT_COMMIT_STAMP.format(database=quote_ident(database))).fetchall()[0]
    return int(row[0]), row[1]


def current_database(con: duckdb.DuckDBPyConnection) -> str:
    name: str = con.execute(SELECT_CURRENT_DATABASE).fetchall()[0][0]
    return name


def _connect(path: Path, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise WarehouseBusy(path, _holder(path.parent)) from exc
        raise
    # Timestamps come back in UTC whatever the machine's zone is.
    con.execute("SET TimeZone = 'UTC'")
    # DuckDB draws its own progress bar on stdout for long queries; the CLI draws ours.
    con.execute("SET enable_progress_bar = false")
    return con


def open_warehouse(directory: Path) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the live warehouse for writing, migrated to the latest,
    with the installed SQL macros (`turnscore.queries.MACROS`: the agent rule), which the
    views and the runners' SQL call."""
    _make_folder(directory)
    con = _connect(directory / DB_FILE, read_only=False)
    try:
        migrate(con)
        create_macros(con)
    except BaseException:
        con.close()
        raise
    return con


def open_readonly(db_file: Path) -> duckdb.DuckDBPyConnection:
    """Open a database file read-only (the live warehouse or a published snapshot)."""
    if not db_file.is_file():
        raise WarehouseMissing(db_file)
    return _connect(db_file, read_only=True)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The block as one transaction: COMMIT at its end, ROLLBACK if it raises (any
    exception, Ctrl-C included), and the exception goes on. A ROLLBACK that fails too (a
    broken connection, a transaction DuckDB already aborted) keeps the original error."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise


@contextmanager
def bulk_writes(con: duckdb.DuckDBPyConnection,
                threshold: str = BULK_CHECKPOINT_THRESHOLD) -> Iterator[None]:
    """Checkpoint less often during many write transactions; checkpoint once at the end.

    Durability is unchanged: every commit is still in the WAL before it returns, and a
    crash replays the WAL on the next open. The threshold is a setting of the database
    (every connection to it in this process), restored to its previous value on the way
    out, whether the block succeeded or not; the final checkpoint runs only on success
    (a failing block's commits are safe in the WAL).
    """
    previous = con.execute(SELECT_CHECKPOINT_THRESHOLD).fetchall()[0][0]
    con.execute(SET_CHECKPOINT_THRESHOLD, {"threshold": threshold})
    try:
        yield
        con.execute("CHECKPOINT")
    except BaseException:
        with suppress(duckdb.Error):  # a broken connection: keep the original error
            con.execute(SET_CHECKPOINT_THRESHOLD, {"threshold": previous})
        raise
    con.execute(SET_CHECKPOINT_THRESHOLD, {"threshold": previous})


def _make_folder(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission: the option is wrong
        raise InvalidOption(f"warehouse {directory} cannot be a folder: "
                            f"{exc.strerror or exc}") from None


def _holder(directory: Path) -> str | None:
    try:
        pid = (directory / LOCK_FILE).read_text().strip()
    except OSError:
        return None
    return f"pid {pid}" if pid else None


_HELD: dict[tuple[int, Path], int] = {}
"""Writer locks this process holds, with their depth."""


@contextmanager
def writer_lock(directory: Path, *, wait: bool = False) -> Iterator[Path]:
    """Hold the warehouse's exclusive writer lock for the block.

    With `wait=False` a second writer raises `WarehouseBusy` at once; with `wait=True` it
    blocks until the first one is done. The kernel releases the lock when the holder dies,
    so a killed run never leaves the warehouse locked. Re-entrant within one process, so
    `turnscore nightly` holds it across stages that each take it again.
    """
    _make_folder(directory)
    lock_path = directory / LOCK_FILE
    # Keyed by pid too: a forked child inherits the dict but not the lock.
    key = (os.getpid(), lock_path.resolve())
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield lock_path
        finally:
            _HELD[key] -= 1
        return
    # "a" so that a waiting process does not wipe the holder's pid before it gets the lock.
    with open(lock_path, "a+") as fh:
        flags = fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB
        try:
            fcntl.flock(fh.fileno(), flags)
        except BlockingIOError as exc:
            raise WarehouseBusy(lock_path, _holder(directory)) from exc
        _HELD[key] = 1
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(str(os.getpid()))
            fh.flush()
            yield lock_path
        finally:
            del _HELD[key]
            fh.truncate(0)
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
