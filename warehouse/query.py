"""Read-only queries for `turnscore query`: a view or table by name, or one SELECT.

The live `warehouse.duckdb` is opened read-only. While a writer holds it (DuckDB lets no
other process open a file a writer has open), the last published snapshot is read
instead, and the result says so: a reader never meets a lock error. Asked for, the
snapshot is read in any case: its views are materialised tables, so a view over a
million turns answers in milliseconds instead of seconds, as of the last run.

The shipped views are (re)created as TEMP views on the read-only connection, so a view
can be queried by name before any run has published, and always with the installed
definition; in the snapshot, where views are tables materialised at publish time, the
tables are read.

Limits: ad-hoc SQL runs with a memory limit (DuckDB's `memory_limit`; past it DuckDB
spills or fails the query) and a timeout (a timer interrupts the connection), so one
heavy SELECT cannot take a laptop down (`QueryLimits`; defaults a quarter of the RAM and
five minutes).

The statement check reads DuckDB's own parse tree (`json_serialize_sql`): a
data-modifying CTE (`WITH x AS (DELETE ... RETURNING ...) SELECT ...`) parses as a
SELECT, so the statement type alone does not show it. The read-only connection would
refuse it too; the check says why, before anything runs.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa

from turnscore.warehouse.db import DB_FILE, create_macros, open_readonly, quote_ident
from turnscore.warehouse.errors import (
    InvalidOption,
    QueryLimitReached,
    QueryRejected,
    WarehouseBusy,
    WarehouseError,
    WarehouseMissing,
)
from turnscore.warehouse.publish import PUBLISHED_DB, create_view_sql, shipped_views

log = logging.getLogger(__name__)

# DESCRIBE, SHOW, SUMMARIZE, VALUES and WITH ... SELECT all parse as SELECT. EXPLAIN is
# allowed for the statement it explains: EXPLAIN ANALYZE runs it (a COPY TO would write).
_READ_ONLY = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
_EXPLAIN = re.compile(
    r"^(?:\s|--[^\n]*\n|/\*.*?\*/)*EXPLAIN\s+(?:ANALY[SZ]E\s+)?(?:\([^)]*\)\s*)?",
    re.IGNORECASE | re.DOTALL,
)
SERIALIZE_SQL = "SELECT json_serialize_sql(?)"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Query nodes of a parse tree that only read; any other (DELETE_QUERY_NODE,
# INSERT_QUERY_NODE, UPDATE_QUERY_NODE, ...) would write.
_READING_NODES = {"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"}
SET_MEMORY_LIMIT = "SET memory_limit = ?"
DEFAULT_MEMORY_LIMIT = "25%"
"""Of the machine's RAM: DuckDB's own default (80%) leaves a laptop little."""
DEFAULT_TIMEOUT_S = 300.0
SELECT_TABLE_NAMES = """
SELECT table_name FROM duckdb_tables()
WHERE NOT temporary AND database_name = current_database() AND schema_name = 'main'
"""
FIND_RELATION = """
SELECT 1 FROM duckdb_views() WHERE NOT internal AND view_name = $name
UNION ALL
SELECT 1 FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = $name
"""


@dataclass(frozen=True, slots=True)
class QueryLimits:
    """What one `turnscore query` may use (config `[query]`, options, environment)."""

    memory_limit: str = DEFAULT_MEMORY_LIMIT
    """DuckDB's `memory_limit`: a size (`4GB`, `512MiB`) or a share of the RAM (`25%`)."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """Seconds before the query is interrupted."""


@dataclass(frozen=True, slots=True)
class QueryResult:
    sql: str
    """What ran."""
    relation: str | None
    """The view or table named, when the input was a name."""
    database: Path
    """The file read: the live warehouse, or the published snapshot while a run holds it."""
    snapshot: bool
    table: pa.Table


def open_for_reading(warehouse_dir: Path, *, published: bool = False
                     ) -> tuple[duckdb.DuckDBPyConnection, Path, bool]:
    """A read-only connection to the live warehouse, else to the published snapshot;
    `published` reads the snapshot only (its views are tables: fast at any size)."""
    con, path, is_snapshot = _open_for_reading(warehouse_dir, published)
    # The installed agent rule, whatever version wrote the file (the report's SQL calls it).
    create_macros(con, temp=True)
    return con, path, is_snapshot


def _open_for_reading(warehouse_dir: Path, published: bool
                      ) -> tuple[duckdb.DuckDBPyConnection, Path, bool]:
    live, snapshot = warehouse_dir / DB_FILE, warehouse_dir / PUBLISHED_DB
    if published:
        if not snapshot.is_file():
            raise WarehouseError(
                f"no published snapshot at {snapshot}: `turnscore score` and `turnscore "
                "nightly` write it when they finish; run one, or leave out --published")
        return open_snapshot(snapshot), snapshot, True
    try:
        return open_readonly(live), live, False
    except WarehouseMissing:
        if not snapshot.is_file():
            raise
    except WarehouseBusy:
        if not snapshot.is_file():
            raise
        log.info("a run holds %s; reading the published snapshot %s", live, snapshot)
    return open_snapshot(snapshot), snapshot, True


SNAPSHOT_OPEN_ATTEMPTS = 3


def open_snapshot(snapshot: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the published snapshot, retried on an IO error.

    DuckDB opens a file several times while connecting (`publish._publish` says why), so
    a publish that swaps the snapshot in between can make one connect fail with an IO
    error ("No more data remaining in MetadataReader"); the next one opens the new
    snapshot whole. Dashboards connecting on their own should retry the same way.
    """
    for attempt in range(1, SNAPSHOT_OPEN_ATTEMPTS):
        try:
            return open_readonly(snapshot)
        except duckdb.IOException as exc:
            log.info("opening %s failed (%s); trying again", snapshot, exc)
            time.sleep(0.05 * attempt)
    return open_readonly(snapshot)


def create_temp_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The shipped views as TEMP views (allowed on a read-only connection).

    A name the database holds as a table is left alone: in a published snapshot the views
    are materialised tables, computed at publish time, and a TEMP view would shadow them
    and recompute every query."""
    tables = {name for (name,) in con.execute(SELECT_TABLE_NAMES).fetchall()}
    create_macros(con, temp=True)
    created = []
    for view in shipped_views():
        if view.name in tables:
            continue
        try:
            con.execute(create_view_sql(view, temp=True))
            created.append(view.name)
        except duckdb.Error as exc:  # e.g. an old snapshot without a newer table
            log.warning("view %s is not available here: %s", view.name, exc)
    return created


def statement_for(con: duckdb.DuckDBPyConnection, text: str) -> tuple[str, str | None]:
    """The SQL to run for `text` (a view or table name, or one read-only statement)."""
    if con.execute(FIND_RELATION, {"name": text.strip()}).fetchall():
        name = text.strip()
        return f"SELECT * FROM {quote_ident(name)}", name
    if _NAME.match(text.strip()):  # one word: a misspelt view, not SQL
        views = sorted(v.name for v in shipped_views())
        raise QueryRejected(f"not a view name and not valid SQL: no view or table named "
                            f"{text.strip()!r}; the views: "
                            f"{', '.join(views)} (`turnscore views` describes them)")
    _check_read_only(con, text)
    return text, None


def _check_read_only(con: duckdb.DuckDBPyConnection, text: str) -> None:
    try:
        statements = con.extract_statements(text)
    except duckdb.Error as exc:
        raise QueryRejected(f"not a view name and not valid SQL: {exc}") from None
    if len(statements) != 1:
        raise QueryRejected(f"give one statement, not {len(statements)}")
    kind = statements[0].type
    if kind is duckdb.StatementType.EXPLAIN:
        explained = _EXPLAIN.match(text)
        if explained is None:
            raise QueryRejected("could not tell which statement EXPLAIN explains")
        _check_read_only(con, text[explained.end():])
    elif kind not in _READ_ONLY:
        raise QueryRejected(
            f"only read-only queries (SELECT, WITH, DESCRIBE, SHOW, EXPLAIN) are allowed; "
            f"got {kind.name}"
        )
    else:
        _check_query_nodes(con, text)


def _check_query_nodes(con: duckdb.DuckDBPyConnection, text: str) -> None:
    """Refuse a SELECT whose parse tree holds a writing node (a data-modifying CTE)."""
    rows = con.execute(SERIALIZE_SQL, [text]).fetchall()
    tree = orjson.loads(rows[0][0]) if rows else {"error": True}
    if tree.get("error"):
        # Fail closed: a SELECT DuckDB cannot serialize is one this check cannot see into.
        raise QueryRejected("only read-only queries are allowed; could not check this one: "
                            f"{tree.get('error_message', 'no parse tree')}")
    writing = sorted({n for n in _node_types(tree) if n not in _READING_NODES})
    if writing:
        kinds = ", ".join(n.removesuffix("_QUERY_NODE").removesuffix("_NODE") for n in writing)
        raise QueryRejected(f"only read-only queries are allowed; this one holds {kinds} "
                            "(a data-modifying WITH clause)")


def _node_types(tree: object) -> Iterator[str]:
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            kind = item.get("type")
            if isinstance(kind, str) and kind.endswith("_NODE"):
                yield kind
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def run_query(warehouse_dir: Path, text: str, *, published: bool = False,
              limits: QueryLimits | None = None) -> QueryResult:
    """Run a view by name or one read-only statement; returns the rows as Arrow.
    `published`: against the last published snapshot rather than the live warehouse.
    Raises `QueryLimitReached` when the query needs more than `limits` allow."""
    limits = limits or QueryLimits()
    if not limits.timeout_s > 0:
        raise InvalidOption(f"the query timeout must be a positive number of seconds, "
                            f"got {limits.timeout_s}")
    con, path, snapshot = open_for_reading(warehouse_dir, published=published)
    try:
        try:
            con.execute(SET_MEMORY_LIMIT, [limits.memory_limit])
        except duckdb.Error as exc:
            raise InvalidOption(f"query memory limit {limits.memory_limit!r}: {exc}") from None
        create_temp_views(con)
        # The connection is read-only, but DuckDB can still read and write files by path
        # (read_csv, COPY TO): a query reads the warehouse, nothing else. Cannot be undone.
        con.execute("SET enable_external_access = false")
        sql, relation = statement_for(con, text)
        table = _run_limited(con, sql, limits)
    finally:
        con.close()
    return QueryResult(sql, relation, path, snapshot, table)


def _run_limited(con: duckdb.DuckDBPyConnection, sql: str, limits: QueryLimits) -> pa.Table:
    timer = threading.Timer(limits.timeout_s, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        return con.sql(sql).to_arrow_table()
    except duckdb.InterruptException:
        raise QueryLimitReached(
            f"query stopped after {limits.timeout_s:g} s, the query timeout (raise it with "
            "--timeout, TURNSCORE_QUERY_TIMEOUT or [query] timeout_s)") from None
    except duckdb.OutOfMemoryException:
        raise QueryLimitReached(
            f"query needs more memory than its limit, {limits.memory_limit} (raise it with "
            "--memory-limit, TURNSCORE_QUERY_MEMORY_LIMIT or [query] memory_limit)") from None
    except duckdb.Error as exc:
        raise QueryRejected(f"query failed: {exc}") from None
    finally:
        timer.cancel()
