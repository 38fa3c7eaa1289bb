"""Incremental publishing: bring a copy of the previous snapshot up to the live warehouse
by the rows that changed, and recompute only what those rows touch (issue 15).

The previous `published.duckdb` was a consistent copy of the live warehouse when it was
made, under the writer lock; a byte copy of it is the starting point. Then:

* Base tables (`sync_tables`). A keyed table (`KEYED`) is diffed on its key and the
  columns every writer changes when it changes a row (its stamps: the loading run, the
  content hash, the write time): `(key, stamps)` pairs the live table has and the
  snapshot lacks are new or replaced rows, keys only the snapshot has are deleted rows.
  Reading a few narrow columns of both sides is what this costs, not a copy of every
  column. (`_commits` cannot say which rows changed: a recovering ingest commits rows
  stamped with the dead run's id, and a rebuilt trace deletes rows that carry no stamp.)
  An append-only table (`APPEND_ONLY`) gets the live rows past the snapshot's count, by
  rowid (dense while nothing is deleted, which is checked). Any other table (`runs`,
  `judge_batches`, `_migrations`: small, and updated in place without a stamp) is
  compared whole and replaced when it differs.
* What changed is recorded for the views: the turns (`_affected_turns`: changed or
  deleted turns, and the turns of changed or deleted scores), the UTC days those turns
  started on before and after (`_affected_days`), and the UTC days of `scored_at` of the
  changed score and score-history rows (`_affected_score_days`).
* Views (`VIEW_KEYS`): a view whose rows are per turn or per day is kept as a table in the
  snapshot; its rows for the affected keys are deleted and recomputed with the view's own
  SQL, filtered to those keys (DuckDB pushes the filter into the scans). A view that reads
  no changed table or view keeps its table. Any other view (the whole-warehouse rollups,
  and views the shipped package does not know) is recomputed whole.

A view's key must determine its rows: the rows of `daily_trends` for a day depend only on
the scores of turns that started that day, and so on. The oracle test
(tests/warehouse/test_publish_incremental.py) checks every table and view of incremental
snapshots against a full recomputation over sequences of loads, rescoring, rebuilt traces
and label changes.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import duckdb

from turnscore.warehouse.db import quote_ident, transaction
from turnscore.warehouse.errors import WarehouseError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Keyed:
    """A table diffed by key: `stamps` are SQL expressions over its columns that change
    whenever a writer replaces a row; `group` (a NOT NULL column, most often the writing
    run's id), when given, narrows the diff to the groups whose rows changed."""

    key: tuple[str, ...]
    stamps: tuple[str, ...]
    group: str | None = None


KEYED: Mapping[str, Keyed] = {
    # A re-ingest that changes a turn writes its own ingest_id (or a dead run's, for
    # recovered part files: never one the snapshot holds for that turn). started_at too,
    # what the day-keyed views go by, for writers that keep the ingest_id (test loaders).
    "turns": Keyed(("turn_id",), ("ingest_id", "content_hash", "started_at"), "ingest_id"),
    "scores": Keyed(("turn_id", "scorer"), ("run_id", "scored_at", "content_hash"), "run_id"),
    "labels": Keyed(("case_id",), ("run_id", "loaded_at"), "run_id"),
    # No run stamp: diffed whole (three narrow columns).
    "request_norms": Keyed(("turn_id",), ("content_hash", "norm_md5")),
    "ingested_files": Keyed(("file_key",), ("run_id", "ingested_at"), "run_id"),
    "judge_cache": Keyed(("cache_key",), ("created_at",), "CAST(created_at AS DATE)"),
    # reply, error and used_run_id are each set once, from NULL.
    "judge_batch_items": Keyed(("batch_key", "custom_id"),
                               ("used_run_id", "reply IS NULL", "error IS NULL"), "batch_key"),
}
APPEND_ONLY = frozenset({"scores_history", "ingest_errors", "_commits"})


@dataclass(frozen=True, slots=True)
class ViewKey:
    """How a view's rows are recomputed for what changed: rows whose `column` is in the
    affected set `affected` (one of the `_affected_*` temp tables), computed with the
    view's SQL over the tables it reads cut down to the rows those keys need
    (`restrict`: table -> condition), so the recomputation reads what changed, not the
    whole warehouse (a filter over the view's result is not pushed below its GROUP BY)."""

    column: str
    affected: str
    restrict: Mapping[str, str]


AFFECTED_TURNS = "_affected_turns"
AFFECTED_DAYS = "_affected_days"
AFFECTED_SCORE_DAYS = "_affected_score_days"
UTC_DAY = "CAST(timezone('UTC', {column}) AS DATE)"

_OF_TURNS = "turn_id IN (SELECT turn_id FROM temp.main._affected_turns)"
_STARTED_ON = (UTC_DAY.format(column="started_at")
               + " IN (SELECT day FROM temp.main._affected_days)")
_SCORED_ON = (UTC_DAY.format(column="scored_at")
              + " IN (SELECT day FROM temp.main._affected_score_days)")
PER_TURN = ViewKey("turn_id", AFFECTED_TURNS,
                   {"turns": _OF_TURNS, "scores": _OF_TURNS, "turn_scores": _OF_TURNS})

VIEW_KEYS: Mapping[str, ViewKey] = {
    "turn_scores": PER_TURN,
    "turns_scored": PER_TURN,
    "tool_calls": PER_TURN,
    # Per UTC day of the turns' start: a day's rows read only that day's turns (and
    # their scores, through the join).
    "daily_trends": ViewKey("day", AFFECTED_DAYS, {"turns": _STARTED_ON}),
    "grounding_and_correctness": ViewKey("day", AFFECTED_DAYS, {"turns": _STARTED_ON}),
    # Per UTC day of scored_at, over scores and scores_history.
    "judge_cost": ViewKey("day", AFFECTED_SCORE_DAYS,
                          {"scores": _SCORED_ON, "scores_history": _SCORED_ON}),
}

TABLE_COLUMNS = """
SELECT table_name, list(column_name || ' ' || data_type ORDER BY column_index)
FROM duckdb_columns()
WHERE database_name = ? AND schema_name = 'main'
  AND table_name IN (SELECT table_name FROM duckdb_tables()
                     WHERE database_name = ? AND schema_name = 'main' AND NOT temporary)
GROUP BY table_name
"""
CREATE_AFFECTED = """
CREATE OR REPLACE TEMP TABLE _affected_turns (turn_id VARCHAR);
CREATE OR REPLACE TEMP TABLE _affected_days (day DATE);
CREATE OR REPLACE TEMP TABLE _affected_score_days (day DATE);
"""
COUNT_ROWS = "SELECT count(*), coalesce(max(rowid) + 1, 0) FROM {table}"


@dataclass(frozen=True, slots=True)
class TableDelta:
    table: str
    upserted: int
    deleted: int


def sync_tables(con: duckdb.DuckDBPyConnection, live: str, snap: str,
                materialised: Iterable[str],
                seconds: dict[str, float] | None = None) -> list[TableDelta]:
    """Bring every base table of `snap` (an attached copy of an earlier snapshot, whose
    `materialised` views are tables) to `live`'s rows; fills the `_affected_*` temp
    tables; returns what changed, per table that changed. Raises `WarehouseError` when
    the two have different tables or columns (the caller publishes from empty instead)."""
    live_cols = _columns(con, live)
    views = set(materialised)
    snap_cols = {t: c for t, c in _columns(con, snap).items() if t not in views}
    if live_cols != snap_cols:
        raise WarehouseError("the snapshot's tables or columns differ from the warehouse's")
    con.execute(CREATE_AFFECTED)
    deltas = []
    for table in sorted(live_cols):
        started = time.perf_counter()
        if table in KEYED:
            delta = _sync_keyed(con, table, KEYED[table], live, snap)
        elif table in APPEND_ONLY:
            delta = _sync_appended(con, table, live, snap)
        else:
            delta = _sync_whole(con, table, live, snap)
        if seconds is not None:
            seconds[f"delta {table}"] = time.perf_counter() - started
        if delta.upserted or delta.deleted:
            deltas.append(delta)
    return deltas


def _sync_keyed(con: duckdb.DuckDBPyConnection, table: str, spec: Keyed,
                live: str, snap: str) -> TableDelta:
    lq, sq = _qualified(live, table), _qualified(snap, table)
    key = ", ".join(quote_ident(k) for k in spec.key)
    stamps = ", ".join(spec.stamps)
    on = " AND ".join(f"t.{quote_ident(k)} = d.{quote_ident(k)}" for k in spec.key)
    live_rows, snap_rows = f"SELECT {key}, {stamps} FROM {lq}", f"SELECT {key}, {stamps} FROM {sq}"
    if spec.group is not None:
        # The groups whose rows differ, by count and an order-free checksum of keys and
        # stamps: one aggregation per side instead of a join of every row. A row that is
        # new, replaced or deleted changes the checksum of the group it left or joined;
        # a key that moved groups is in both groups' candidates.
        sig = f"{spec.group} AS g, count(*), bit_xor(hash({key}, {stamps}))"
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE _delta_groups AS
            SELECT g FROM (SELECT {sig} FROM {lq} GROUP BY g EXCEPT
                           SELECT {sig} FROM {sq} GROUP BY g)
            UNION SELECT g FROM (SELECT {sig} FROM {sq} GROUP BY g EXCEPT
                                 SELECT {sig} FROM {lq} GROUP BY g)
        """)
        changed = f" WHERE {spec.group} IN (SELECT g FROM temp.main._delta_groups)"
        live_rows, snap_rows = live_rows + changed, snap_rows + changed
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _delta_keys AS
        WITH l AS ({live_rows}), s AS ({snap_rows})
        SELECT {key}, true AS upsert FROM (FROM l EXCEPT FROM s)
        UNION ALL
        SELECT {key}, false AS upsert FROM (SELECT {key} FROM s EXCEPT SELECT {key} FROM l)
    """)
    upserted, deleted = con.execute(
        "SELECT count(*) FILTER (upsert), count(*) FILTER (NOT upsert) "
        "FROM temp.main._delta_keys").fetchall()[0]
    if not (upserted or deleted):
        return TableDelta(table, 0, 0)
    if table == "turns":
        _note_turns(con, lq, sq, on)
    elif table == "scores":
        _note_scores(con, live, snap, on)
    con.execute(f"DELETE FROM {sq} AS t USING temp.main._delta_keys AS d WHERE {on}")
    con.execute(f"INSERT INTO {sq} SELECT t.* FROM {lq} AS t "
                f"JOIN (SELECT * FROM temp.main._delta_keys WHERE upsert) AS d ON {on}")
    return TableDelta(table, upserted, deleted)


def _note_turns(con: duckdb.DuckDBPyConnection, lq: str, sq: str, on: str) -> None:
    """The changed turns, and the days they started on before and after."""
    day = UTC_DAY.format(column="t.started_at")
    con.execute(f"""
        INSERT INTO temp.main._affected_turns SELECT turn_id FROM temp.main._delta_keys;
        INSERT INTO temp.main._affected_days
        SELECT DISTINCT {day} FROM {sq} AS t JOIN temp.main._delta_keys AS d ON {on}
        UNION SELECT DISTINCT {day} FROM {lq} AS t JOIN temp.main._delta_keys AS d ON {on};
    """)


def _note_scores(con: duckdb.DuckDBPyConnection, live: str, snap: str, on: str) -> None:
    """The turns of changed scores, their days (from both sides' `turns`, whichever was
    synced first), and the days the old and new rows were scored on."""
    scored_day = UTC_DAY.format(column="t.scored_at")
    turn_day = UTC_DAY.format(column="t.started_at")
    con.execute("INSERT INTO temp.main._affected_turns "
                "SELECT DISTINCT turn_id FROM temp.main._delta_keys")
    for database in (snap, live):
        scores, turns = _qualified(database, "scores"), _qualified(database, "turns")
        con.execute(f"""
            INSERT INTO temp.main._affected_score_days
            SELECT DISTINCT {scored_day} FROM {scores} AS t
            JOIN temp.main._delta_keys AS d ON {on};
            INSERT INTO temp.main._affected_days
            SELECT DISTINCT {turn_day} FROM {turns} AS t
            WHERE t.turn_id IN (SELECT turn_id FROM temp.main._delta_keys);
        """)


def _sync_appended(con: duckdb.DuckDBPyConnection, table: str, live: str, snap: str
                   ) -> TableDelta:
    lq, sq = _qualified(live, table), _qualified(snap, table)
    have = con.execute(COUNT_ROWS.format(table=sq)).fetchall()[0][0]
    count, dense = con.execute(COUNT_ROWS.format(table=lq)).fetchall()[0]
    if count < have or count != dense:
        # Rows were deleted after all: the rowids no longer say which rows are new.
        log.info("%s is not append-only since the last publish; compared whole", table)
        return _sync_whole(con, table, live, snap)
    if count == have:
        return TableDelta(table, 0, 0)
    con.execute(f"INSERT INTO {sq} SELECT * FROM {lq} WHERE rowid >= ?", [have])
    if table == "scores_history":
        con.execute(f"""
            INSERT INTO temp.main._affected_score_days
            SELECT DISTINCT {UTC_DAY.format(column='scored_at')} FROM {lq} WHERE rowid >= ?
        """, [have])
    return TableDelta(table, count - have, 0)


def _sync_whole(con: duckdb.DuckDBPyConnection, table: str, live: str, snap: str
                ) -> TableDelta:
    lq, sq = _qualified(live, table), _qualified(snap, table)
    differs = con.execute(f"SELECT EXISTS (SELECT * FROM {lq} EXCEPT ALL SELECT * FROM {sq}) "
                          f"OR EXISTS (SELECT * FROM {sq} EXCEPT ALL SELECT * FROM {lq})"
                          ).fetchall()[0][0]
    if not differs:
        return TableDelta(table, 0, 0)
    con.execute(f"DELETE FROM {sq}")
    # A table copied whole counts as all its rows written (INSERT returns its count).
    written = con.execute(f"INSERT INTO {sq} SELECT * FROM {lq}").fetchall()[0][0]
    return TableDelta(table, written, 0)


def apply_view_delta(con: duckdb.DuckDBPyConnection, database: str, name: str,
                     select_sql: str, key: ViewKey, order: str | None) -> None:
    """Recompute `name`'s rows for the affected keys in `database` (the snapshot, the
    current database), where `name` is a table holding the previous rows and the tables
    it reads are current. A table stored in a declared order is rewritten in that order
    (those are small)."""
    table, column = quote_ident(name), quote_ident(key.column)
    affected = f"(SELECT * FROM temp.main.{quote_ident(key.affected)})"
    # CTEs named as the tables shadow them in the view's SQL (qualified inside, so each
    # reads the table, not itself).
    cut = ",\n".join(f"{quote_ident(t)} AS (SELECT * FROM {_qualified(database, t)} "
                     f"WHERE {cond})" for t, cond in key.restrict.items())
    try:
        with transaction(con):
            con.execute(f"DELETE FROM {table} WHERE {column} IN {affected}")
            con.execute(f"INSERT INTO {table} WITH {cut}\nSELECT * FROM (\n{select_sql}\n) "
                        f"AS v WHERE v.{column} IN {affected}")
            if order:
                con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM {table} "
                            f"ORDER BY {order}")
    except duckdb.Error as exc:
        raise WarehouseError(f"could not update view {name}: {exc}") from exc


def reads(sql: str, names: Iterable[str], table_macros: Iterable[str],
          every: Iterable[str]) -> set[str]:
    """The relations (of `names`) a view's SQL reads: the names it spells as words, and
    every table (`every`) when it calls a table macro, whose tables it cannot see."""
    body = "\n".join(ln.split("--", 1)[0] for ln in sql.splitlines())
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", body))
    found = {n for n in names if n in words}
    if words & set(table_macros):
        found |= set(every)
    return found


def _columns(con: duckdb.DuckDBPyConnection, database: str) -> dict[str, list[str]]:
    return {t: list(cols) for t, cols in con.execute(TABLE_COLUMNS, [database, database])
            .fetchall()}


def _qualified(database: str, table: str) -> str:
    return f"{quote_ident(database)}.main.{quote_ident(table)}"
