"""`turnscore score --engine ray`: judge-free scoring as Ray Data `map_batches` (DESIGN §7).

The driver holds the warehouse writer lock and decides what is pending exactly as the
local runner does (its `_pending` rule, cases and per-agent choice, from
`turnscore.warehouse.score_run`), then reads the pending turns in batches
(`score_input.pending_batches`: the turns' rows and their cases). The batches become a
Ray dataset; `map_batches` scores each with the runner's own per-batch function
(`score_run._score_batch`: the columnar entry point where a scorer has one, its row
function otherwise; judged scorers through their rules judge), and writes the batch's
scores as Parquet (the columns `write_scores` writes) under `scores/run=<run id>/` of the
data root. The driver commits the run's manifest, then loads the committed files into
`scores` in one transaction (replaced scores to `scores_history`, as locally) and
publishes. Views, publishing and dashboards do not change.

A run killed before its DuckDB commit leaves its pairs pending: the next run scores them
again (scores are deterministic); a committed manifest of a run never loaded is data no
one reads as current (the warehouse's `runs` says it did not finish).

Not here yet: an LLM judge on the cluster (a pool of actors sharing one rate limiter,
budget and cache). With an LLM judge configured, `--engine ray` refuses to run, so no
run silently scores with the rules judge instead.
"""

from __future__ import annotations

import logging
import math
import pickle
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from turnscore.ingest.storage import Location, Manifest, commit, location, run_prefix
from turnscore.scorers.base import Scorer, Status
from turnscore.warehouse.db import bulk_writes
from turnscore.warehouse.errors import InvalidOption
from turnscore.warehouse.ray_engine import connect, require_ray
from turnscore.warehouse.score_input import PendingBatch, pending_batches
from turnscore.warehouse.score_run import (
    DEFAULT_BATCH_SIZE,
    ScorerCounts,
    ScoreReport,
    ScorersForAgent,
    queue_pending,
    recorded_score_run,
    resolve_scorers,
    score_batch,
)
from turnscore.warehouse.score_write import Tally
from turnscore.warehouse.scores import score_table, write_score_table

__all__ = ["LLM_JUDGE_NOT_ON_RAY", "run_ray_score"]

log = logging.getLogger(__name__)

LLM_JUDGE_NOT_ON_RAY = (
    "--engine ray scores with code scorers and the rules judge only: an LLM judge on a "
    "cluster (one rate limiter and budget for all workers) is not built yet; use "
    "--judge rules, or the local engine for LLM-judged scores")
BATCHES_PER_CPU = 2
PENDING_TURNS = "SELECT count(DISTINCT turn_id) FROM _pending"


def run_ray_score(
    warehouse_dir: Path,
    data_root: str,
    *,
    scorers: Sequence[str] | None = None,
    rescore: bool = False,
    sample: float | None = None,
    ray_address: str | None = None,
    wait: bool = False,
    scorers_for_agent: ScorersForAgent | None = None,
    llm_judge: bool = False,
    publish_snapshot: bool = True,
) -> ScoreReport:
    """Score every pending (turn, scorer) pair on Ray; record the run; publish.

    Raises `RayMissing` without Ray, `InvalidOption` with `llm_judge` (not built for Ray,
    see the module doc) or a bad `sample`.
    """
    if llm_judge:
        raise InvalidOption(LLM_JUDGE_NOT_ON_RAY)
    if sample is not None and not 0 < sample <= 1:
        raise InvalidOption(f"--sample must be a fraction in (0, 1], got {sample}")
    require_ray()
    chosen = resolve_scorers(scorers)
    store = location(data_root)
    config: dict[str, object] = {"scorers": [s.name for s in chosen], "rescore": rescore,
                                 "sample": sample, "engine": "ray", "data_root": store.uri}
    return recorded_score_run(
        warehouse_dir, config,
        lambda con, run_id: _run(con, store, run_id, chosen, rescore, sample, ray_address,
                                 scorers_for_agent),
        wait=wait, publish_snapshot=publish_snapshot)


def _run(con: duckdb.DuckDBPyConnection, store: Location, run_id: str, chosen: list[Scorer],
         rescore: bool, sample: float | None, ray_address: str | None,
         scorers_for_agent: ScorersForAgent | None) -> ScoreReport:
    start = time.monotonic()
    in_scope, disabled, pending_before = queue_pending(con, chosen, rescore, sample,
                                                       scorers_for_agent)
    turns = con.execute(PENDING_TURNS).fetchall()[0][0]
    tally = Tally()
    if turns:
        with connect(ray_address) as ray:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            size = min(DEFAULT_BATCH_SIZE, max(1, math.ceil(turns / (BATCHES_PER_CPU * cpus))))
            batches = list(pending_batches(con, size))
            clock = time.perf_counter()
            written = _score_on_ray(ray, batches, chosen, store, run_id)
            tally.time("score", clock)
        files = tuple(sorted(row["file"] for row in written))
        commit(store, Manifest(run_id, {"scores": files}, {"engine": "ray", "kind": "score"}))
        clock = time.perf_counter()
        with bulk_writes(con):
            _load(con, store, files, run_id,
                  replacing=any(b.replacing for b in batches), tally=tally)
        tally.time("write", clock)
    con.execute("DROP TABLE _pending")
    con.execute("DROP TABLE _turn_cases")
    counts = tuple(
        ScorerCounts(s.name, s.version, pending_before.get(s.name, 0),
                     **{st.value: tally.counts.get(s.name, {}).get(st, 0) for st in Status})
        for s in chosen
    )
    return ScoreReport(run_id, in_scope, counts, round(time.monotonic() - start, 3),
                       scorer_seconds={"ray": round(tally.seconds.get("score", 0.0), 3)},
                       write_seconds=round(tally.seconds.get("write", 0.0), 3),
                       disabled=disabled)


def _score_on_ray(ray: Any, batches: Sequence[PendingBatch], chosen: Sequence[Scorer],
                  store: Location, run_id: str) -> list[dict[str, Any]]:
    items = [{"index": i, "batch": pickle.dumps(b)} for i, b in enumerate(batches)]
    return list(ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
        _score_batches, batch_size=1, batch_format="pyarrow",
        fn_kwargs={"scorers": tuple(s.name for s in chosen), "store_uri": store.uri,
                   "run_id": run_id},
    ).take_all())


def _score_batches(rows: pa.Table, scorers: tuple[str, ...], store_uri: str,
                   run_id: str) -> pa.Table:
    """Score one pending batch with the runner's per-batch function; write its Parquet."""
    by_name = {s.name: s for s in resolve_scorers(scorers)}
    out: dict[str, list[Any]] = {"file": [], "rows": []}
    for index, payload in zip(rows["index"].to_pylist(), rows["batch"].to_pylist(),
                              strict=True):
        batch: PendingBatch = pickle.loads(payload)
        table = score_table([], run_id, columns=score_batch(batch, by_name, None, Tally()))
        # Named by batch: a retried task overwrites its own file.
        rel = f"{run_prefix('scores', run_id)}/part-{index:05d}.parquet"
        with tempfile.TemporaryDirectory(prefix="turnscore-scores-") as tmp:
            local = Path(tmp) / "part.parquet"
            pq.write_table(table, local)
            location(store_uri).child(rel).upload(local)
        out["file"].append(rel)
        out["rows"].append(table.num_rows)
    return pa.table(out)


def _load(con: duckdb.DuckDBPyConnection, store: Location, files: Sequence[str], run_id: str,
          *, replacing: bool, tally: Tally) -> None:
    """Every committed score file of the run, in one transaction (`scores.write_score_table`)."""
    with tempfile.TemporaryDirectory(prefix="turnscore-scores-") as tmp:
        tables = [pq.read_table(store.child(rel).download(Path(tmp) / rel)) for rel in files]
    table = pa.concat_tables(tables)
    for item in pc.value_counts(pc.binary_join_element_wise(
            table["scorer"], table["status"], "\x1f")).to_pylist():
        scorer, status = item["values"].split("\x1f")
        tally.add(scorer, Status(status), item["counts"])
    write_score_table(con, table, run_id, replacing=replacing)
