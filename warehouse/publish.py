"""Publishing: a consistent, read-only snapshot of the warehouse for readers.

Dashboards and `duckdb` sessions read `published.duckdb` and the Parquet files under
`published/`, never the live `warehouse.duckdb`, so they never meet a writer's lock or a
half-finished run.

* The database is copied into `published.duckdb.tmp` (`COPY FROM DATABASE`), checkpointed,
  then `os.replace`d over `published.duckdb`. A reader that has the old file open keeps
  reading the old inode; the next open sees the new snapshot.
* Each view is exported to `<view>.parquet` in a fresh folder `.published-<stamp>`, and
  `published` is a symlink swapped with `os.replace`, which is atomic. (Renaming a folder
  over a non-empty folder is not possible, and removing then renaming leaves a moment with
  no folder.) The previous folder is kept for readers still in it; older ones are removed.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import shutil
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import duckdb
import pyarrow.parquet as pq

from turnscore.warehouse.db import open_warehouse, quote_ident, writer_lock
from turnscore.warehouse.errors import WarehouseError

log = logging.getLogger(__name__)

PUBLISHED_DB = "published.duckdb"
PUBLISHED_DIR = "published"
_VERSION_PREFIX = ".published-"
_SNAPSHOT_ALIAS = "_turnscore_snapshot"
# View names become file names; anything else could escape the folder.
_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

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


def _create_view_sql(view: ViewDef) -> str:
    create = getattr(view, "create_sql", None)
    if callable(create):
        return str(create())
    body = view.sql.strip().rstrip(";")
    if body.upper().startswith("CREATE"):
        return body
    return f"CREATE OR REPLACE VIEW {quote_ident(view.name)} AS\n{body}"


def refresh_views(con: duckdb.DuckDBPyConnection,
                  views: Sequence[ViewDef] | None = None) -> list[str]:
    """(Re)create the shipped views; a view may use another, in any file order."""
    remaining = list(shipped_views() if views is None else views)
    created: list[str] = []
    while remaining:
        failed: list[tuple[ViewDef, str]] = []
        for view in remaining:
            try:
                con.execute(_create_view_sql(view))
                created.append(view.name)
            except duckdb.Error as exc:
                failed.append((view, str(exc)))
        if len(failed) == len(remaining):
            detail = "; ".join(f"{v.name}: {err}" for v, err in failed)
            raise WarehouseError(f"could not create views: {detail}")
        remaining = [v for v, _ in failed]
    return created


def publish(warehouse_dir: Path, *, con: duckdb.DuckDBPyConnection | None = None) -> Path:
    """Refresh views and write the snapshot and Parquet exports; returns the snapshot path.

    Pass the writer's open connection when calling from inside a run; without one this
    takes the writer lock and opens the warehouse itself.
    """
    if con is None:
        with writer_lock(warehouse_dir):
            own = open_warehouse(warehouse_dir)
            try:
                return publish(warehouse_dir, con=own)
            finally:
                own.close()
    refresh_views(con)
    target = _snapshot_database(con, warehouse_dir)
    _export_views(con, warehouse_dir)
    log.info("published %s", target)
    return target


def _remove(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".wal")):
        p.unlink(missing_ok=True)


def _snapshot_database(con: duckdb.DuckDBPyConnection, warehouse_dir: Path) -> Path:
    target = warehouse_dir / PUBLISHED_DB
    tmp = warehouse_dir / (PUBLISHED_DB + ".tmp")
    _remove(tmp)
    source = con.execute("SELECT current_database()").fetchall()[0][0]
    con.execute(f"ATTACH ? AS {quote_ident(_SNAPSHOT_ALIAS)}", [str(tmp)])
    try:
        con.execute(f"COPY FROM DATABASE {quote_ident(source)} TO {quote_ident(_SNAPSHOT_ALIAS)}")
        # Everything into the main file: only that file is renamed into place.
        con.execute(f"CHECKPOINT {quote_ident(_SNAPSHOT_ALIAS)}")
    finally:
        con.execute(f"DETACH {quote_ident(_SNAPSHOT_ALIAS)}")
    if tmp.with_name(tmp.name + ".wal").exists():
        raise WarehouseError(f"snapshot {tmp} still has a WAL after checkpoint; not published")
    os.replace(tmp, target)
    return target


def _export_views(con: duckdb.DuckDBPyConnection, warehouse_dir: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    version = warehouse_dir / f"{_VERSION_PREFIX}{stamp}-{uuid.uuid4().hex[:6]}"
    version.mkdir()
    for (name,) in con.execute(SELECT_VIEW_NAMES).fetchall():
        if not _SAFE_NAME.match(name):
            log.warning("view %r not exported: its name is not a safe file name", name)
            continue
        reader = con.sql(f"SELECT * FROM {quote_ident(name)}").to_arrow_reader()
        with pq.ParquetWriter(version / f"{name}.parquet", reader.schema) as writer:
            for batch in reader:
                writer.write_batch(batch)
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
