"""The Parquet exports of a publish: one version folder per publish, files of unchanged
views hard-linked from the previous version, changed ones written (issue 15).

Layout of a version folder (what `published/` points to)::

    <view>.parquet            a view without a `day` column, or with a declared order
                              (the rollups: small, one file)
    <view>.parquet/<YYYY-MM-DD>.parquet
                              a view with no declared order and a `day` column (the per-
                              turn and per-call views, `turns_scored` and `tool_calls`) or
                              a `turn_id` (`turn_scores`: by the day its turn started):
                              a folder of one file per UTC day, the columns as the view's
                              in each (`none.parquet`: rows without a day; `empty.parquet`,
                              no rows, when the view has none), so a night that adds turns
                              writes its own days' files only. The path is the one a single
                              file had, and readers take the folder as one table:
                              DuckDB `read_parquet('published/turns_scored.parquet')`,
                              `pyarrow.parquet.read_table`, `polars.read_parquet`.
    _manifest.json            which files each view has, what they were made from (the
                              definitions of the views and macros) and which
                              `published.duckdb` (inode, size, mtime) they go with.

A file in a version folder is never written again: a later publish links it (same inode,
no bytes written) or writes a new file in its own folder. A folder stays complete, so
readers in the previous version keep reading it while the new one is swapped in.
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from turnscore.warehouse.db import quote_ident

log = logging.getLogger(__name__)

VERSION_PREFIX = ".published-"
MANIFEST = "_manifest.json"
MANIFEST_FORMAT = 1
DAY = "day"
NO_DAY = "none"
EMPTY = "empty"
# View names become file names; anything else could escape the folder.
_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

SELECT_ALL = "SELECT * FROM {table}"
# The rows with their day (`_export_day`): the view's own `day`, or its turn's.
DAY_OWN = "SELECT *, day AS _export_day FROM {table}"
DAY_OF_TURN = """
SELECT v.*, CAST(timezone('UTC', t.started_at) AS DATE) AS _export_day
FROM {table} AS v LEFT JOIN turns AS t ON t.turn_id = v.turn_id
"""
SELECT_DAYS = "SELECT * FROM ({rows}){where} ORDER BY _export_day"
WHERE_AFFECTED_DAYS = " WHERE _export_day IN (SELECT day FROM temp.main._affected_days)"
SELECT_AFFECTED_DAYS = "SELECT day FROM temp.main._affected_days"


SplitBy = Literal["day", "turn"] | None
"""How a view's rows are cut into files: by its own `day` column, by the day its turn
started, or not at all (one file)."""
Write = Literal["all", "days", "none"]
"""'all': write every file; 'days': write the affected days' files and link the others;
'none': link every file of the previous version."""


@dataclass(frozen=True, slots=True)
class Export:
    """What to do with one view's files."""

    name: str
    by_day: SplitBy
    """Exported one file per day (`<view>.parquet/<day>.parquet`), else as `<view>.parquet`."""
    write: Write


@dataclass(frozen=True, slots=True)
class PreviousExports:
    folder: Path
    manifest: Mapping[str, object]

    def files(self, name: str) -> list[str] | None:
        views = self.manifest.get("views")
        entry = views.get(name) if isinstance(views, dict) else None
        files = entry.get("files") if isinstance(entry, dict) else None
        return [str(f) for f in files] if isinstance(files, list) else None


def exported_by_day(columns: set[str], declared_order: str | None) -> SplitBy:
    """How a view's rows are split into files: a view in a declared order is a small
    rollup, one file; else a view with a day column by that day, and a per-turn view
    without one (`turn_scores`) by the day of its turn."""
    if declared_order:
        return None
    return "day" if DAY in columns else "turn" if "turn_id" in columns else None


def new_version(warehouse_dir: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    version = warehouse_dir / f"{VERSION_PREFIX}{stamp}-{uuid.uuid4().hex[:6]}"
    version.mkdir()
    return version


def export_views(con: duckdb.DuckDBPyConnection, version: Path, exports: Sequence[Export],
                 previous: PreviousExports | None) -> dict[str, list[str]]:
    """Write or link each view's files into `version`; returns each view's files."""
    done: dict[str, list[str]] = {}
    for export in exports:
        if not _SAFE_NAME.match(export.name):
            log.warning("view %r not exported: its name is not a safe file name", export.name)
            continue
        old = previous.files(export.name) if previous else None
        write: Write = export.write if old is not None else "all"
        if write == "none":
            assert previous is not None and old is not None
            done[export.name] = _link(previous.folder, version, old)
        elif not export.by_day:
            done[export.name] = [_write_file(con, export.name, version)]
        elif write == "all":
            done[export.name] = _write_days(con, export, version, affected_only=False)
        else:
            assert previous is not None and old is not None
            affected = {_day_file(export.name, d)
                        for (d,) in con.execute(SELECT_AFFECTED_DAYS).fetchall()}
            affected.add(_empty_file(export.name))
            kept = _link(previous.folder, version, [f for f in old if f not in affected])
            done[export.name] = sorted(kept + _write_days(con, export, version,
                                                          affected_only=True))
        if export.by_day and not done[export.name]:
            # A folder with no file is no table to its readers: one file of no rows.
            done[export.name] = [_write_empty(con, export.name, version)]
    return done


def write_manifest(version: Path, definitions: str, db_file: Path,
                   files: Mapping[str, list[str]]) -> None:
    st = db_file.stat()
    manifest = {"format": MANIFEST_FORMAT, "definitions": definitions,
                "db": [st.st_ino, st.st_size, st.st_mtime_ns],
                "views": {name: {"files": f} for name, f in files.items()}}
    tmp = version / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    os.replace(tmp, version / MANIFEST)


def read_previous(link: Path, db_file: Path, definitions: str) -> PreviousExports | None:
    """The previous version's exports when they go with `db_file` and were made from the
    same `definitions`; None (and why, in the log) otherwise."""
    try:
        folder = link.resolve(strict=True)
        manifest = json.loads((folder / MANIFEST).read_text())
        st = db_file.stat()
    except (OSError, ValueError) as exc:
        log.info("no previous publish to start from (%s); publishing in full", exc)
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        log.info("%s is of another format; publishing in full", folder / MANIFEST)
        return None
    if manifest.get("definitions") != definitions:
        log.info("the views or macros changed since the last publish; publishing in full")
        return None
    if manifest.get("db") != [st.st_ino, st.st_size, st.st_mtime_ns]:
        # A publish killed between the link swap and the snapshot's rename.
        log.info("%s does not go with %s; publishing in full", folder, db_file)
        return None
    return PreviousExports(folder, manifest)


def _link(source: Path, target: Path, files: Sequence[str]) -> list[str]:
    for rel in files:
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.link(source / rel, dest)
    return list(files)


def _write_file(con: duckdb.DuckDBPyConnection, name: str, version: Path) -> str:
    reader = con.sql(SELECT_ALL.format(table=quote_ident(name))).to_arrow_reader()
    rel = f"{name}.parquet"
    with pq.ParquetWriter(version / rel, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)
    return rel


def _day_file(name: str, day: date | None) -> str:
    return f"{name}.parquet/{day.isoformat() if day is not None else NO_DAY}.parquet"


def _empty_file(name: str) -> str:
    return f"{name}.parquet/{EMPTY}.parquet"


def _write_empty(con: duckdb.DuckDBPyConnection, name: str, version: Path) -> str:
    schema = con.sql(SELECT_ALL.format(table=quote_ident(name))).to_arrow_reader().schema
    rel = _empty_file(name)
    pq.write_table(schema.empty_table(), version / rel)
    return rel


def _write_days(con: duckdb.DuckDBPyConnection, export: Export, version: Path, *,
                affected_only: bool) -> list[str]:
    """One file per day of the view's rows (of the affected days only, when asked); the
    query is sorted by day, so each day's rows come together and one writer is open at a
    time."""
    name = export.name
    rows = (DAY_OWN if export.by_day == "day" else DAY_OF_TURN).format(table=quote_ident(name))
    where = WHERE_AFFECTED_DAYS if affected_only else ""
    reader = con.sql(SELECT_DAYS.format(rows=rows, where=where)).to_arrow_reader()
    schema = reader.schema.remove(reader.schema.get_field_index("_export_day"))
    (version / f"{name}.parquet").mkdir(exist_ok=True)
    written: list[str] = []
    writer: pq.ParquetWriter | None = None
    current: object = object()
    try:
        for batch in reader:
            for value, part in _split_by_day(batch):
                if value != current:
                    if writer is not None:
                        writer.close()
                    current = value
                    written.append(_day_file(name, value))
                    writer = pq.ParquetWriter(version / written[-1], schema)
                assert writer is not None
                writer.write_batch(part.drop_columns(["_export_day"]))
    finally:
        if writer is not None:
            writer.close()
    return written


def _split_by_day(batch: pa.RecordBatch) -> list[tuple[date | None, pa.RecordBatch]]:
    """The batch's runs of one day, in order (the batch is sorted by day, NULLs last)."""
    if batch.num_rows == 0:
        return []
    column = batch.column("_export_day")
    parts = []
    for value in pc.unique(column).to_pylist():
        mask = pc.is_null(column) if value is None else pc.equal(column, pa.scalar(
            value, column.type))
        parts.append((value, batch.filter(mask)))
    return parts
