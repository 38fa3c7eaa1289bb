"""`turnscore ingest --engine ray` as a library call: the Ray job, then the warehouse load.

`run_ray_ingest` takes the warehouse writer lock and records the run, as local ingest
does; the job (`ray_engine.ingest_job`) writes `spans/` and `turns/` under the data root
(a URI: `s3://...`, `gs://...`, `file://...`, or a folder) and commits them by manifest;
then the committed turn files are copied to a temporary folder and loaded into DuckDB by
the same load as a local run (`ingest_run.load_batch`: upsert, removals, errors, files, the
`runs` row, one transaction), so views, publishing and dashboards do not change.

Crash safety, the object-storage form of local ingest's unloaded-turns markers:
- a job killed before its manifest left files no reader lists; this run removes them
  (`storage.sweep_uncommitted`, under the writer lock, so no job is writing);
- a run whose manifest is committed but whose DuckDB load never committed (the driver
  died in between) is found here (a manifest whose run is not `ok`/`partial` in `runs`)
  and its turn files are loaded with this run's, as recovered; its input files count as
  ingested (their keys are in its manifest), so they are not read a second time and no
  turn is stored twice.

Input that continues traces or conversations of earlier runs (late spans, a later turn,
a trace chained by history) is rebuilt with their stored spans, as locally: the job finds
and reads them in the committed `spans/` (`ray_engine`, its stored-links stage), writes
every turn of the traces it rebuilt, and names those traces in the batch
(`rebuilt_traces`), so the load replaces their older turns and removes the ones the
rebuild no longer produced. Older runs' `turns/` files keep their builds of those turns:
the warehouse, not the union of committed `turns/`, holds one row per turn.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from turnscore.errors import TurnscoreError
from turnscore.ingest.pipeline import IngestBatch
from turnscore.ingest.settings import IngestSettings
from turnscore.ingest.storage import (
    Location,
    Manifest,
    committed,
    exists,
    location,
    sweep_uncommitted,
)
from turnscore.warehouse.db import open_warehouse, writer_lock
from turnscore.warehouse.errors import InvalidOption
from turnscore.warehouse.ingest_run import (
    KNOWN_FILE_KEYS,
    LOAD_MEMORY_LIMIT,
    SET_MEMORY_LIMIT,
    IngestReport,
    finish_ingest_run,
    load_batch,
)
from turnscore.warehouse.ray_engine import RayIngest, connect, ingest_job, require_ray
from turnscore.warehouse.runs import RunKind, close_interrupted_runs, start_run

__all__ = ["DATASETS", "LOADED_RUNS", "OnRay", "run_ray_ingest"]

log = logging.getLogger(__name__)

DATASETS = ("spans", "turns", "scores")
"""The datasets runs write under the data root, each under `<dataset>/run=<run id>/`."""
LOADED_RUNS = "SELECT run_id FROM runs WHERE outcome IN ('ok', 'partial')"


@dataclass(frozen=True, slots=True)
class OnRay:
    """Where a run's ingest and scoring go with `--engine ray` (`nightly.run_nightly`)."""

    data_root: str
    """The data root URI (or folder) of `spans/`, `turns/` and `scores/`."""
    address: str | None = None
    """The cluster's head; None: a local Ray started for each stage."""


def run_ray_ingest(
    inputs: Sequence[str],
    warehouse_dir: Path,
    data_root: str,
    settings: IngestSettings | None = None,
    *,
    ray_address: str | None = None,
    wait: bool = False,
    partitions: int | None = None,
    on_job: Callable[[RayIngest], None] | None = None,
) -> IngestReport:
    """Ingest `inputs` (URIs or paths) through Ray into `data_root`, then load the turns
    into the warehouse at `warehouse_dir`. Raises `RayMissing` without Ray, `InvalidOption`
    for an input that does not exist, `WarehouseBusy` as local ingest does; any other
    failure is a failed run's report. `on_job` is given the job's own account (stage
    times, shuffle volume: `bench/scale.py`)."""
    started = time.monotonic()
    require_ray()
    store = location(data_root)
    for raw in inputs:  # before the lock, as locally: a typo should not wait
        if not exists(location(raw)):
            raise InvalidOption(f"no such file or folder: {raw}")
    with writer_lock(warehouse_dir, wait=wait):
        con = open_warehouse(warehouse_dir)
        try:
            con.execute(SET_MEMORY_LIMIT, [LOAD_MEMORY_LIMIT])
            close_interrupted_runs(con)
            run_id = start_run(con, RunKind.INGEST, {
                "paths": list(inputs), "warehouse": str(warehouse_dir), "engine": "ray",
                "data_root": store.uri})
            try:
                swept = sweep_uncommitted(store, DATASETS)
                if swept:
                    log.warning("removed the files of runs that died before committing: %s",
                                ", ".join(swept))
                manifests = committed(store)
                loaded = {row[0] for row in con.execute(LOADED_RUNS).fetchall()}
                dead = [m for m in manifests if m.run_id not in loaded and "turns" in m.files]
                known = {row[0] for row in con.execute(KNOWN_FILE_KEYS).fetchall()}
                known |= {k for m in manifests for k in m.meta.get("file_keys", ())}
                with connect(ray_address):
                    job = ingest_job(inputs, store, run_id, known_file_keys=frozenset(known),
                                     settings=settings or IngestSettings(),
                                     partitions=partitions)
                log.info("ray ingest %s: stages %s, %d bytes shuffled, %d partition(s)",
                         run_id, job.seconds, job.shuffled_bytes, job.partitions)
                if on_job is not None:
                    on_job(job)
                with tempfile.TemporaryDirectory(prefix="turnscore-load-") as tmp:
                    recovered = _download(store, dead, Path(tmp))
                    mine = _download(store, [job.manifest] if job.manifest else [], Path(tmp))
                    return load_batch(con, _batch(job, mine), known, (), started, recovered)
            except (TurnscoreError, OSError, duckdb.Error) as exc:
                log.error("ingest run %s failed: %s", run_id, exc)
                report = IngestReport(run_id, "failed", seconds=time.monotonic() - started,
                                      error=str(exc))
                finish_ingest_run(con, report)
                return report
        finally:
            con.close()


def _download(store: Location, manifests: Sequence[Manifest], into: Path) -> tuple[Path, ...]:
    """Local copies of the committed turn files of `manifests` (DuckDB reads local files:
    its object-storage extension is a download of its own)."""
    out = []
    for m in manifests:
        for rel in m.files.get("turns", ()):
            out.append(store.child(rel).download(into / rel))
    return tuple(out)


def _batch(job: RayIngest, turn_files: tuple[Path, ...]) -> IngestBatch:
    return IngestBatch(
        ingest_id=job.run_id,
        files=job.files,
        skipped=job.skipped,
        spans=job.spans,
        logs=job.logs,
        new_spans=job.new_spans,
        new_logs=job.new_logs,
        turn_files=turn_files,
        turns=job.turns,
        rebuilt_traces=job.traces,
        removed_turn_ids=(),
        errors=job.errors,
    )
