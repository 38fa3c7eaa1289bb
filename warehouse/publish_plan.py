"""Planning an incremental publish (issue 15): which views to recompute, whole or for
the affected keys, and which Parquet files to write or link. `publish` runs the plan.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import duckdb

from turnscore.warehouse.db import commit_stamp, quote_ident
from turnscore.warehouse.errors import WarehouseError
from turnscore.warehouse.publish_delta import VIEW_KEYS, reads, sync_tables
from turnscore.warehouse.publish_export import MANIFEST_FORMAT, Export, Write, exported_by_day

log = logging.getLogger(__name__)

VIEW_COLUMNS = "SELECT column_name FROM (DESCRIBE {view})"

SELECT_VIEWS = """
SELECT view_name, sql FROM duckdb_views()
WHERE NOT internal AND NOT temporary AND database_name = ? AND schema_name = 'main'
"""
SELECT_TABLE_NAMES = """
SELECT table_name FROM duckdb_tables()
WHERE NOT temporary AND database_name = ? AND schema_name = 'main'
"""
SELECT_TABLE_MACROS = """
SELECT function_name FROM duckdb_functions()
WHERE function_type = 'table_macro' AND database_name = ? AND schema_name = 'main'
"""
# What the views compute by: their statements and every macro's (a changed one makes the
# previous exports useless, so the next publish is a full one).
SELECT_DEFINITIONS = """
SELECT 'view', view_name, sql FROM duckdb_views()
WHERE NOT internal AND NOT temporary AND database_name = current_database()
UNION ALL
SELECT 'macro', function_name, list(macro_definition ORDER BY macro_definition)::VARCHAR
FROM duckdb_functions()
WHERE function_type IN ('macro', 'table_macro') AND database_name = current_database()
GROUP BY function_name
ORDER BY 1, 2
"""



class Named(Protocol):
    @property
    def name(self) -> str: ...


class NotIncremental(Exception):
    """The previous snapshot cannot be brought up to date: publish from empty."""


@dataclass(frozen=True, slots=True)
class ViewPlan:
    views: frozenset[str]
    """Every view of the live warehouse."""
    whole: frozenset[str]
    """Recomputed whole."""
    delta: frozenset[str]
    """Recomputed for the affected keys (`publish_delta.VIEW_KEYS`)."""
    sql: Mapping[str, str]
    """The live CREATE VIEW of each view."""
    tables: frozenset[str] = frozenset()
    """The base tables that changed."""

    @classmethod
    def everything(cls, views: Mapping[str, str]) -> ViewPlan:
        names = frozenset(views)
        return cls(names, names, frozenset(), views)


def plan_sync(con: duckdb.DuckDBPyConnection, live: str, snap: str,
              seconds: dict[str, float]) -> ViewPlan:
    """Bring the attached copy's tables to the live ones; which views to recompute."""
    live_stamp = commit_stamp(con)
    try:
        snap_stamp = commit_stamp(con, snap)
    except duckdb.CatalogException as exc:
        raise NotIncremental(f"the snapshot has no commit stamp ({exc})") from exc
    if snap_stamp[1] != live_stamp[1]:
        raise NotIncremental(f"the snapshot is at migration {snap_stamp[1]}, "
                              f"the warehouse at {live_stamp[1]}")
    views = view_names(con, live)
    try:
        deltas = sync_tables(con, live, snap, views, seconds)
    except WarehouseError as exc:
        raise NotIncremental(str(exc)) from exc
    tables = {t for (t,) in con.execute(SELECT_TABLE_NAMES, [live]).fetchall()}
    macros = {m for (m,) in con.execute(SELECT_TABLE_MACROS, [live]).fetchall()}
    changed = {d.table for d in deltas}
    whole: set[str] = set()
    delta: set[str] = set()
    # Until nothing more changes: a view reading a changed view changes too.
    grew = True
    while grew:
        grew = False
        for name, sql in views.items():
            if name in changed or not reads(sql, set(views) | tables, macros, tables) & changed:
                continue
            (delta if name in VIEW_KEYS else whole).add(name)
            changed.add(name)
            grew = True
    log.info("publishing incrementally: %s", ", ".join(
        f"{d.table} +{d.upserted}/-{d.deleted}" for d in deltas) or "no table changed")
    return ViewPlan(frozenset(views), frozenset(whole), frozenset(delta), views,
                     frozenset(d.table for d in deltas))


def ordered(names: set[str] | frozenset[str], shipped: Sequence[Named]) -> list[str]:
    """Shipped views in `load_views` order (a view after those it reads), then by name."""
    rank = {v.name: i for i, v in enumerate(shipped)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def view_names(con: duckdb.DuckDBPyConnection, database: str, *, tables: bool = False
                ) -> dict[str, str]:
    """The views of `database` with their CREATE statements; with `tables`, also every
    table (a snapshot's materialised views are tables), each with an empty statement."""
    found = {n: s for n, s in con.execute(SELECT_VIEWS, [database]).fetchall()}
    if tables:
        found.update({t: "" for (t,) in con.execute(SELECT_TABLE_NAMES, [database])
                      .fetchall()})
    return found


def exports(con: duckdb.DuckDBPyConnection, views: Sequence[str], plan: ViewPlan,
            shipped: Sequence[Named]) -> list[Export]:
    """What to do with each view's files."""
    declared = {v.name: getattr(v, "order", None) for v in shipped}
    exports = []
    for name in views:
        columns = {c for (c,) in con.execute(VIEW_COLUMNS.format(view=quote_ident(name)))
                   .fetchall()}
        by_day = exported_by_day(columns, declared.get(name))
        # Files split by the day of their turn move with the turns, changed rows or not.
        moved = by_day == "turn" and "turns" in plan.tables
        write: Write = ("all" if name in plan.whole else
                 "days" if (name in plan.delta or moved) and by_day else
                 "all" if name in plan.delta else "none")
        exports.append(Export(name, by_day, write))
    return exports


def definitions(con: duckdb.DuckDBPyConnection) -> str:
    """A fingerprint of what the exports are computed by: the views, the macros, and how
    files are laid out."""
    rows = con.execute(SELECT_DEFINITIONS).fetchall()
    return hashlib.sha256(repr((MANIFEST_FORMAT, rows)).encode()).hexdigest()
