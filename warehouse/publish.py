"""Publishing: a consistent, read-only snapshot of the warehouse for readers.

(Over 400 lines: the publish sequence, its atomic swap, the staleness check and the view
materialisation it runs stay in one module, the one tests patch to kill a publish midway;
the incremental planning, table deltas and exports are in `publish_plan`,
`publish_delta` and `publish_export`.)

Dashboards and `duckdb` sessions read `published.duckdb` and the Parquet files under
`published/`, never the live `warehouse.duckdb`, so they never meet a writer's lock or a
half-finished run.

* Built in `published.duckdb.tmp`, one of two ways (one code path; `_build`):
  - nothing published before (or the previous publish cannot be built on: another
    migration, other view or macro definitions, exports that do not go with the
    snapshot): the schema is copied, then each table's rows (without keys or constraints:
    the snapshot is only read), and every view becomes a table of the same name and
    columns, computed once with the view's own SQL (dependencies first, so `turns_scored`
    reads the `turn_scores` table): readers get table scans instead of re-running joins
    and JSON unpacking on every dashboard refresh. Views with a `day` column are stored
    sorted by day, for date filters. The base tables (turns, scores, labels, runs, ...)
    stay for ad-hoc SQL.
  - incrementally (issue 15): a byte copy of the previous `published.duckdb`, whose tables
    are brought to the live ones by the rows that changed, and whose view tables are
    recomputed only for the turns and days those rows touch, or whole for the rollups
    that cannot be split, or not at all when they read nothing that changed
    (`publish_delta`, `publish_plan`). `Published` says which views were which.
* Each view's table is exported to `<view>.parquet` (a file, or a folder of one file per
  day for the per-turn views) in a fresh folder `.published-<stamp>`; files of what did
  not change are hard links to the previous folder's, so no old file is written again
  (`publish_export`).
* `published` is a symlink to the new folder, swapped with `os.replace`, which is atomic.
  (Renaming a folder over a non-empty folder is not possible, and removing then renaming
  leaves a moment with no folder.) The previous folder is kept for readers still in it;
  older ones are removed.
* Then the checkpointed snapshot is `os.replace`d over `published.duckdb`. A reader that
  has the old file open keeps reading the old inode; the next open sees the new snapshot.
  It goes last because it is what staleness is judged by (below).

Staleness: a run that wrote nothing still publishes when the snapshot is behind the live
warehouse (`snapshot_behind`), or a publish killed midway (after the scores were
committed) would leave dashboards stale for good. "Behind" compares two commit stamps
(`db.commit_stamp`): every write readers must see records a row in `_commits` inside its
own transaction (`db.record_commit`), and the snapshot holds the copy of `_commits` made
with the tables, in the same read. Equal counts (and the same
last migration): nothing was committed since. A no-op run thus ATTACHes the snapshot and
reads two small counts, whatever the warehouse's size (`bench/publish_stress.py
--no-op-runs`). A snapshot from before the stamp, or one that cannot be opened, is behind.
"""

from __future__ import annotations

import importlib
import logging
import os
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import duckdb

from turnscore.warehouse.db import (
    commit_stamp,
    create_macros,
    current_database,
    open_warehouse,
    quote_ident,
    transaction,
    writer_lock,
)
from turnscore.warehouse.errors import WarehouseError
from turnscore.warehouse.publish_delta import VIEW_KEYS, apply_view_delta
from turnscore.warehouse.publish_export import (
    VERSION_PREFIX,
    PreviousExports,
    export_views,
    new_version,
    read_previous,
    write_manifest,
)
from turnscore.warehouse.publish_plan import (
    SELECT_TABLE_NAMES,
    VIEW_COLUMNS,
    NotIncremental,
    ViewPlan,
    ordered,
    plan_sync,
    view_names,
)
from turnscore.warehouse.publish_plan import definitions as plan_definitions
from turnscore.warehouse.publish_plan import exports as plan_exports

log = logging.getLogger(__name__)

PUBLISHED_DB = "published.duckdb"
PUBLISHED_DIR = "published"
_VERSION_PREFIX = VERSION_PREFIX
_SNAPSHOT_ALIAS = "_turnscore_snapshot"
_MATERIALISING = "_turnscore_materialising"
_CLUSTER_BY = "day"

# Materialising one view (the templates take quoted identifiers).
CREATE_TABLE_FROM_VIEW = "CREATE TABLE {table} AS SELECT * FROM {view}{order}"
DROP_VIEW = "DROP VIEW {view}"
RENAME_TABLE = "ALTER TABLE {table} RENAME TO {name}"
DROP_TABLE = "DROP TABLE {table}"

# The snapshot's own database and the live one (identifiers through quote_ident).
ATTACH = "ATTACH ? AS {alias}"
ATTACH_READ_ONLY = "ATTACH ? AS {alias} (READ_ONLY)"
DETACH = "DETACH {alias}"
USE_DATABASE = "USE {database}"
COPY_SCHEMA = "COPY FROM DATABASE {source} TO {target} (SCHEMA)"
# Each table's rows, without its keys and constraints: the snapshot is only read, and an
# incremental publish that changes rows of a table with a primary key first loads the
# whole key index (50k score rows into 1M: 1 s with the index, 0.2 s without).
COPY_TABLE = """
DROP TABLE {target}.main.{table};
CREATE TABLE {target}.main.{table} AS SELECT * FROM {source}.main.{table};
"""
CHECKPOINT_DATABASE = "CHECKPOINT {database}"

SELECT_VIEW_NAMES = """
SELECT view_name FROM duckdb_views()
WHERE NOT internal AND NOT temporary AND database_name = current_database()
  AND schema_name = 'main'
ORDER BY view_name
"""


class ViewDef(Protocol):
    """What `turnscore.queries.load_views()` yields for each view."""

    @property
    def name(self) -> str: ...
    @property
    def sql(self) -> str: ...


def shipped_views() -> Sequence[ViewDef]:
    """The views in `queries/*.sql`, or none while that module has no `load_views`."""
    queries = importlib.import_module("turnscore.queries")
    load = getattr(queries, "load_views", None)
    if load is None:
        log.info("turnscore.queries has no load_views(); no shipped views to create")
        return []
    views: Sequence[ViewDef] = load()
    return views


def create_view_sql(view: ViewDef, *, temp: bool = False) -> str:
    """`CREATE OR REPLACE [TEMP] VIEW` for `view` (a shipped `View` orders its rows as its
    header says; any other object's `sql` is its SELECT, or already a CREATE)."""
    create = getattr(view, "create_sql", None)
    if callable(create):
        return str(create(temp=temp))
    body = view.sql.strip().rstrip(";")
    if body.upper().startswith("CREATE"):
        return body
    kind = "TEMP VIEW" if temp else "VIEW"
    return f"CREATE OR REPLACE {kind} {quote_ident(view.name)} AS\n{body}"


def refresh_views(con: duckdb.DuckDBPyConnection,
                  views: Sequence[ViewDef] | None = None) -> list[str]:
    """(Re)create the SQL macros and the shipped views; a view may use another, in any
    file order."""
    create_macros(con)
    remaining = list(shipped_views() if views is None else views)
    created: list[str] = []
    while remaining:
        failed: list[tuple[ViewDef, str]] = []
        for view in remaining:
            try:
                con.execute(create_view_sql(view))
                created.append(view.name)
            except duckdb.Error as exc:
                failed.append((view, str(exc)))
        if len(failed) == len(remaining):
            detail = "; ".join(f"{v.name}: {err}" for v, err in failed)
            raise WarehouseError(f"could not create views: {detail}")
        remaining = [v for v, _ in failed]
    return created


@dataclass(frozen=True, slots=True)
class Published:
    path: Path
    """The snapshot, `published.duckdb`."""
    views: tuple[str, ...]
    """The views materialised as tables (and exported, when their name is a file name)."""
    seconds: Mapping[str, float]
    """Wall time per stage: `copy`, `delta <table>` for each table (incremental),
    `view <name>` for each view recomputed, `parquet`, `checkpoint`."""
    incremental: bool = False
    """Built from the previous snapshot and exports, else from empty."""
    recomputed: tuple[str, ...] = ()
    """Views recomputed whole (with nothing published before: every view)."""
    updated: tuple[str, ...] = ()
    """Views whose rows were recomputed only for the affected turns or days."""


def publish(warehouse_dir: Path, *, con: duckdb.DuckDBPyConnection | None = None) -> Path:
    """Refresh views and write the snapshot and Parquet exports; returns the snapshot path.

    Pass the writer's open connection when calling from inside a run; without one this
    takes the writer lock and opens the warehouse itself.
    """
    return publish_snapshot(warehouse_dir, con=con).path


def publish_snapshot(warehouse_dir: Path, *, con: duckdb.DuckDBPyConnection | None = None,
                     full: bool = False) -> Published:
    """`publish`, also saying what was materialised and how long each stage took. With
    `full`, from empty even when the previous snapshot could be brought up to date (the
    baseline of `bench/publish_stress.py`)."""
    if con is None:
        with writer_lock(warehouse_dir):
            own = open_warehouse(warehouse_dir)
            try:
                return publish_snapshot(warehouse_dir, con=own, full=full)
            finally:
                own.close()
    try:
        return _publish(warehouse_dir, con, full=full)
    except (OSError, duckdb.Error) as exc:
        # A full disk or a failing copy: the caller's committed work stands, only the
        # snapshot is stale, so this is a publishing failure, not a crash.
        raise WarehouseError(f"publishing {warehouse_dir} failed: {exc}") from exc


def _publish(warehouse_dir: Path, con: duckdb.DuckDBPyConnection, *, full: bool
             ) -> Published:
    refresh_views(con)
    definitions = plan_definitions(con)
    previous = None if full else read_previous(
        warehouse_dir / PUBLISHED_DIR, warehouse_dir / PUBLISHED_DB, definitions)
    if previous is not None:
        try:
            return _build(warehouse_dir, con, definitions, previous)
        except NotIncremental as exc:
            log.info("publishing in full: %s", exc)
    return _build(warehouse_dir, con, definitions, None)


def _build(warehouse_dir: Path, con: duckdb.DuckDBPyConnection, definitions: str,
           previous: PreviousExports | None) -> Published:
    """One publish: from a copy of the previous snapshot and its exports (`previous`),
    or, with nothing published before, from empty."""
    seconds: dict[str, float] = {}
    tmp = warehouse_dir / (PUBLISHED_DB + ".tmp")
    _remove(tmp)
    live_name = current_database(con)
    live = quote_ident(live_name)
    alias = quote_ident(_SNAPSHOT_ALIAS)
    version: Path | None = None
    try:
        started = time.perf_counter()
        if previous is not None:
            # A byte copy of the snapshot readers have (not of the live file: see below).
            shutil.copyfile(warehouse_dir / PUBLISHED_DB, tmp)
            seconds["copy"] = time.perf_counter() - started
        # One ATTACH on the writer's own connection (same settings, so the materialised
        # rows are the live views'), DETACHed before the rename: detaching closes the file.
        con.execute(ATTACH.format(alias=alias), [str(tmp)])
        try:
            if previous is None:
                # Table by table, not a byte copy of the checkpointed live file, though
                # that is ~10-50x faster: with byte copies, readers opening
                # `published.duckdb` in a loop through back-to-back publishes met "No more
                # data remaining in MetadataReader" (`bench/publish_stress.py`: 7 errors in
                # 107k reads over 2,000 publishes). Why (strace): DuckDB 2.0 opens the file
                # three times to connect (magic bytes; the headers; then the file it reads,
                # without re-reading the headers), so a rename between the 2nd and 3rd open
                # would have it follow the old snapshot's metadata pointer into the new
                # file. Any swap of the path has that window, fresh copies included. A byte
                # copy must also run in a child process: closing a descriptor of the live
                # file in this process releases DuckDB's POSIX locks.
                # `_commits` too: the snapshot carries the commit stamp of its rows.
                con.execute(COPY_SCHEMA.format(source=live, target=alias))
                for (table,) in con.execute(SELECT_TABLE_NAMES, [live_name]).fetchall():
                    con.execute(COPY_TABLE.format(source=live, target=alias,
                                                  table=quote_ident(table)))
                seconds["copy"] = time.perf_counter() - started
                plan = ViewPlan.everything(view_names(con, live_name))
            else:
                plan = plan_sync(con, live_name, _SNAPSHOT_ALIAS, seconds)
            con.execute(USE_DATABASE.format(database=alias))
            try:
                _update_views(con, plan, seconds)
                views = _in_order(set(view_names(con, _SNAPSHOT_ALIAS, tables=True)) & plan.views)
                started = time.perf_counter()
                version = new_version(warehouse_dir)
                files = export_views(con, version, plan_exports(con, views, plan, shipped_views()),
                                     previous)
                seconds["parquet"] = time.perf_counter() - started
            finally:
                con.execute(USE_DATABASE.format(database=live))
            started = time.perf_counter()
            # Everything into the main file: only that file is renamed into place.
            con.execute(CHECKPOINT_DATABASE.format(database=alias))
            seconds["checkpoint"] = time.perf_counter() - started
        finally:
            con.execute(DETACH.format(alias=alias))
        if _has_wal(tmp):
            raise WarehouseError(f"snapshot {tmp} still has a WAL after checkpoint; not published")
        # The snapshot is final (os.replace keeps its inode and mtime): the manifest names it.
        write_manifest(version, definitions, tmp, files)
    except BaseException:
        _remove(tmp)
        if version is not None:
            shutil.rmtree(version, ignore_errors=True)
        raise
    target = warehouse_dir / PUBLISHED_DB
    # The link first: `snapshot_behind` compares only `published.duckdb`, so a kill
    # between the two steps must leave that file the stale one, and the rerun publishes
    # both again (in full: the new exports' manifest names a snapshot not in place).
    _swap_link(warehouse_dir, version)
    os.replace(tmp, target)
    log.info("published %s (%s)", target,
             ", ".join(f"{stage} {s:.1f} s" for stage, s in seconds.items()))
    return Published(target, tuple(views), seconds, incremental=previous is not None,
                     recomputed=tuple(v for v in views if v in plan.whole),
                     updated=tuple(v for v in views if v in plan.delta))


def _update_views(con: duckdb.DuckDBPyConnection, plan: ViewPlan,
                  seconds: dict[str, float]) -> None:
    """In the snapshot: recompute the delta views' affected rows, then (re)create the
    views to recompute whole and materialise them."""
    shipped = {v.name: v for v in shipped_views()}
    for name in _in_order(plan.delta):
        started = time.perf_counter()
        view = shipped[name]
        apply_view_delta(con, _SNAPSHOT_ALIAS, name, _select_of(view), VIEW_KEYS[name],
                         getattr(view, "order", None))
        seconds[f"view {name}"] = time.perf_counter() - started
    existing = view_names(con, _SNAPSHOT_ALIAS, tables=True)
    for name in _in_order(plan.whole):
        if name in existing and name not in view_names(con, _SNAPSHOT_ALIAS):
            con.execute(DROP_TABLE.format(table=quote_ident(name)))
        if name not in view_names(con, _SNAPSHOT_ALIAS):
            con.execute(plan.sql[name])
    materialise_views(con, seconds)


def _in_order(names: set[str] | frozenset[str]) -> list[str]:
    return ordered(names, shipped_views())


def _select_of(view: ViewDef) -> str:
    select = getattr(view, "select_sql", None)
    return str(select()) if callable(select) else view.sql.strip().rstrip(";")


def snapshot_behind(warehouse_dir: Path, con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `published.duckdb` lacks a commit the live warehouse (`con`, the writer's
    connection) holds, or it or the `published` folder is missing; removes what a killed
    publish left behind (`published.duckdb.tmp` and its `.wal`)."""
    tmp = warehouse_dir / (PUBLISHED_DB + ".tmp")
    if _remove(tmp):
        log.warning("removed %s, left by a publish that did not finish", tmp)
    snapshot = warehouse_dir / PUBLISHED_DB
    if not snapshot.is_file():
        return True
    if not (warehouse_dir / PUBLISHED_DIR).is_dir():
        # No exports beside the snapshot (a kill while a hand-made folder was set aside,
        # or a missing or dangling link): dashboards reading Parquet have nothing.
        log.info("%s is missing; publishing again", warehouse_dir / PUBLISHED_DIR)
        return True
    live = commit_stamp(con)
    alias = quote_ident(_SNAPSHOT_ALIAS)
    try:
        con.execute(ATTACH_READ_ONLY.format(alias=alias), [str(snapshot)])
    except duckdb.Error as exc:
        log.warning("cannot open %s (%s); publishing again", snapshot, exc)
        return True
    try:
        published = commit_stamp(con, _SNAPSHOT_ALIAS)
    except duckdb.CatalogException:
        log.info("%s has no commit stamp (published by an older turnscore)", snapshot)
        return True
    finally:
        con.execute(DETACH.format(alias=alias))
    if published != live:
        log.info("%s is behind the warehouse (commits %s, the warehouse %s)",
                 snapshot, published, live)
        return True
    return False


def _remove(path: Path) -> bool:
    """Remove `path` and its WAL; whether there was anything to remove."""
    found = False
    for p in (path, path.with_name(path.name + ".wal")):
        found = p.exists() or found
        p.unlink(missing_ok=True)
    return found


def _has_wal(db_file: Path) -> bool:
    wal = db_file.with_name(db_file.name + ".wal")
    return wal.exists() and wal.stat().st_size > 0


def materialise_views(con: duckdb.DuckDBPyConnection,
                      seconds: dict[str, float] | None = None) -> list[str]:
    """Replace every view of `con`'s database by a table with its rows; returns the names,
    and records each view's time in `seconds` (as `view <name>`) when given.

    Shipped views go first, in `load_views` order (a view after the views it reads), so a
    view that reads another reads its table; other views follow by name. A view read by
    one not yet materialised is still a view until its turn, so the order only affects
    speed, never the rows.

    A view that declares its row order (`-- order:`) is stored in that order; the views
    that do and have a `day` column order by day first. Any other view with a `day`
    column is stored sorted by day: dashboards filter on dates, and
    DuckDB skips the row groups whose min/max day is outside the filter (one day of
    `turns_scored` at 1M turns: ~80 ms instead of ~1 s cold, when turns were not
    ingested in time order), for about the same publish time.
    """
    present = [name for (name,) in con.execute(SELECT_VIEW_NAMES).fetchall()]
    shipped = shipped_views()
    rank = {v.name: i for i, v in enumerate(shipped)}
    declared = {v.name: getattr(v, "order", None) for v in shipped}
    order = sorted(present, key=lambda n: (rank.get(n, len(rank)), n))
    for name in order:
        view = quote_ident(name)
        started = time.perf_counter()
        try:
            with transaction(con):
                columns = {c for (c,) in con.execute(VIEW_COLUMNS.format(view=view)).fetchall()}
                table = quote_ident(_MATERIALISING)
                con.execute(CREATE_TABLE_FROM_VIEW.format(
                    table=table, view=view, order=_stored_order(declared.get(name), columns)))
                con.execute(DROP_VIEW.format(view=view))
                con.execute(RENAME_TABLE.format(table=table, name=view))
        except duckdb.Error as exc:
            raise WarehouseError(f"could not materialise view {name}: {exc}") from exc
        if seconds is not None:
            seconds[f"view {name}"] = time.perf_counter() - started
    return order


def _stored_order(declared: str | None, columns: set[str]) -> str:
    """The ORDER BY a view's table is written in: the view's own (its rows, in its order,
    from a table scan), else by day when it has a `day` column, else none."""
    if declared:
        return f" ORDER BY {declared}"
    return f" ORDER BY {quote_ident(_CLUSTER_BY)}" if _CLUSTER_BY in columns else ""


def _swap_link(warehouse_dir: Path, version: Path) -> Path:
    stamp = version.name.removeprefix(_VERSION_PREFIX)
    link = warehouse_dir / PUBLISHED_DIR
    previous = os.readlink(link) if link.is_symlink() else None
    if link.exists() and not link.is_symlink():
        # A real folder from a hand copy or an older layout: set it aside, and keep it as
        # this round's previous version (readers may be in it); the next round prunes it.
        previous = f"{_VERSION_PREFIX}legacy-{stamp}"
        link.rename(warehouse_dir / previous)
    tmp_link = warehouse_dir / f"{PUBLISHED_DIR}.tmp-{uuid.uuid4().hex[:6]}"
    tmp_link.symlink_to(version.name, target_is_directory=True)
    os.replace(tmp_link, link)
    _prune(warehouse_dir, keep={version.name, previous or ""})
    return link


def _prune(warehouse_dir: Path, keep: set[str]) -> None:
    for old in warehouse_dir.glob(f"{_VERSION_PREFIX}*"):
        if old.name not in keep and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
