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

With an LLM judge configured (and some chosen scorer judged), the batches go to a pool of
actors (`JudgedBatches`), each running the local `JudgeEngine` with the budget, endpoint
limits and judge cache of one gate actor for the run (`ray_judge`); the driver drains the
replies paid for into `judge_cache` as batches finish, and reports a budget stop as the
local runner does. Judges with `batch = true` (the Batch API, whose state lives in the
warehouse) score with the local engine only.

A run killed before its DuckDB commit leaves its pairs pending. If it died after its
manifest (its scores committed on storage, never loaded), the next run loads them instead
of scoring those pairs again (`_recover`): the dead run's rows whose pair is still pending
and whose scorer version is current are written (their turns leave the score queue only
if the score is current), then the pending pairs are found again by the one staleness
rule, so a recovered score of a turn changed since is scored again.
The recovering run names the runs it recovered in its manifest (`recovered`), so they are
not read again; their files stay, referenced by their manifests, as every committed run's
do. A run killed before its manifest leaves files no manifest names; the next run (score
or ingest) removes them (`storage.sweep_uncommitted`).
"""

from __future__ import annotations

import logging
import math
import pickle
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from turnscore.ingest.storage import (
    Location,
    Manifest,
    commit,
    committed,
    location,
    run_prefix,
    sweep_uncommitted,
)
from turnscore.scorers.base import Scorer, Status
from turnscore.scorers.judge.config import Budget, load_judge_settings
from turnscore.scorers.judged import SPECS, make_judge_runner
from turnscore.warehouse import score_queue
from turnscore.warehouse.db import bulk_writes
from turnscore.warehouse.errors import InvalidOption
from turnscore.warehouse.judge_batch import batched
from turnscore.warehouse.judging import LlmJudge
from turnscore.warehouse.ray_engine import connect, require_ray
from turnscore.warehouse.ray_judge import (
    GateCache,
    GateLedger,
    GateLimits,
    JudgeGate,
    drain_into,
    prior_replies,
    run_judges,
)
from turnscore.warehouse.ray_run import DATASETS, LOADED_RUNS
from turnscore.warehouse.score_input import PendingBatch, pending_batches
from turnscore.warehouse.score_run import (
    DEFAULT_BATCH_SIZE,
    JUDGED_BATCH_SIZE,
    JudgeTap,
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

__all__ = ["BATCH_JUDGE_NOT_ON_RAY", "JudgedBatches", "run_ray_score", "write_part"]

log = logging.getLogger(__name__)

BATCH_JUDGE_NOT_ON_RAY = (
    "--engine ray does not send judges with batch = true through the Batch API (its "
    "batches are kept in the warehouse, one process's); score those with the local engine, "
    "or set batch = false for the run")
BATCHES_PER_CPU = 2
PENDING_TURNS = "SELECT count(DISTINCT turn_id) FROM _pending"
# A dead run's scores that this run would otherwise compute again: the pair is pending and
# the scorer version is the current one.
RECOVERABLE = """
SELECT d.* FROM _dead_scores AS d
WHERE EXISTS (SELECT 1 FROM _pending AS p WHERE p.turn_id = d.turn_id AND p.scorer = d.scorer)
  AND EXISTS (SELECT 1 FROM _versions AS v
              WHERE v.scorer = d.scorer AND v.version = d.scorer_version)
"""


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
    llm_judge: LlmJudge | None = None,
    publish_snapshot: bool = True,
) -> ScoreReport:
    """Score every pending (turn, scorer) pair on Ray; record the run; publish.

    `llm_judge`: the run's LLM judge (`judging.llm_judge_for`): its `[judge]` table and
    budget are the whole cluster's. Raises `RayMissing` without Ray, `InvalidOption` for a
    batched judge (see the module doc) or a bad `sample`, `ConfigError` for a bad `[judge]`.
    """
    if sample is not None and not 0 < sample <= 1:
        raise InvalidOption(f"--sample must be a fraction in (0, 1], got {sample}")
    require_ray()
    chosen = resolve_scorers(scorers)
    judging = None
    if llm_judge is not None and any(s.kind == "judge" for s in chosen):
        # Checked here, before the lock: a bad table or a missing key fails at once.
        make_judge_runner(llm_judge.table, llm_judge.budget).close()
        if batched(load_judge_settings(llm_judge.table, known_scorers=tuple(SPECS))):
            raise InvalidOption(BATCH_JUDGE_NOT_ON_RAY)
        judging = llm_judge
    store = location(data_root)
    config: dict[str, object] = {"scorers": [s.name for s in chosen], "rescore": rescore,
                                 "sample": sample, "engine": "ray", "data_root": store.uri}
    return recorded_score_run(
        warehouse_dir, config,
        lambda con, run_id: _run(con, store, run_id, chosen, rescore, sample, ray_address,
                                 scorers_for_agent, judging),
        wait=wait, publish_snapshot=publish_snapshot)


def _run(con: duckdb.DuckDBPyConnection, store: Location, run_id: str, chosen: list[Scorer],
         rescore: bool, sample: float | None, ray_address: str | None,
         scorers_for_agent: ScorersForAgent | None, judging: LlmJudge | None) -> ScoreReport:
    start = time.monotonic()
    in_scope, disabled, pending_before = queue_pending(con, chosen, rescore, sample,
                                                       scorers_for_agent)
    tally = Tally()
    swept = sweep_uncommitted(store, DATASETS)  # under the writer lock: no job is writing
    if swept:
        log.warning("removed the files of runs that died before committing: %s",
                    ", ".join(swept))
    recovered = _recover(con, store, run_id, chosen, tally)
    if recovered:  # what they scored is no longer pending (unless stale since)
        queue_pending(con, chosen, rescore, sample, scorers_for_agent)
    turns = con.execute(PENDING_TURNS).fetchall()[0][0]
    stopped: str | None = None
    notes: dict[str, None] = {}
    if turns:
        with connect(ray_address) as ray:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            most = DEFAULT_BATCH_SIZE if judging is None else JUDGED_BATCH_SIZE
            size = min(most, max(1, math.ceil(turns / (BATCHES_PER_CPU * cpus))))
            batches = list(pending_batches(con, size))
            clock = time.perf_counter()
            if judging is None:
                written = _score_on_ray(ray, batches, chosen, store, run_id)
            else:
                written = _judge_on_ray(ray, con, batches, chosen, store, run_id, judging,
                                        max(1, cpus))
                stopped = next((row["stop"] for row in written if row["stop"]), None)
                notes = dict.fromkeys(n for row in written for n in row["notes"])
            tally.time("score", clock)
        if stopped:
            log.warning("run %s stopped early: %s", run_id, stopped)
        files = tuple(sorted(row["file"] for row in written if row["file"]))
        commit(store, Manifest(run_id, {"scores": files}, {
            "engine": "ray", "kind": "score", "recovered": list(recovered)}))
        clock = time.perf_counter()
        if files:
            with bulk_writes(con):
                _load(con, store, files, run_id,
                      replacing=any(b.replacing for b in batches), tally=tally)
        tally.time("write", clock)
    elif recovered:  # nothing left to score: still say they are recovered
        commit(store, Manifest(run_id, {"scores": ()}, {
            "engine": "ray", "kind": "score", "recovered": list(recovered)}))
    con.execute("DROP TABLE _pending")
    con.execute("DROP TABLE _turn_cases")
    counts = tuple(
        ScorerCounts(s.name, s.version, pending_before.get(s.name, 0),
                     **{st.value: tally.counts.get(s.name, {}).get(st, 0) for st in Status})
        for s in chosen
    )
    return ScoreReport(run_id, in_scope, counts, round(time.monotonic() - start, 3), stopped,
                       judge_notes=tuple(notes),
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
        out["file"].append(write_part(table, store_uri, run_id, index))
        out["rows"].append(table.num_rows)
    return pa.table(out)


def write_part(table: pa.Table, store_uri: str, run_id: str, index: int) -> str:
    """Batch `index`'s scores as Parquet under the run's prefix; its path there. Named by
    batch: a retried task overwrites its own file."""
    rel = f"{run_prefix('scores', run_id)}/part-{index:05d}.parquet"
    with tempfile.TemporaryDirectory(prefix="turnscore-scores-") as tmp:
        local = Path(tmp) / "part.parquet"
        pq.write_table(table, local)
        location(store_uri).child(rel).upload(local)
    return rel


def _judge_on_ray(ray: Any, con: duckdb.DuckDBPyConnection, batches: Sequence[PendingBatch],
                  chosen: Sequence[Scorer], store: Location, run_id: str, judging: LlmJudge,
                  actors: int) -> list[dict[str, Any]]:
    """The batches through a pool of `actors` judging workers sharing one `JudgeGate`; the
    replies they paid for go to `judge_cache` as their batches finish (and on failure)."""
    names = [s.name for s in chosen]
    prior = prior_replies(con, run_judges(judging.table, names))
    gate = ray.remote(JudgeGate).options(
        name=f"turnscore-judge-gate-{run_id}", num_cpus=0, max_concurrency=10_000,
    ).remote(judging.budget, prior)
    items = [{"index": i, "batch": pickle.dumps(b)} for i, b in enumerate(batches)]
    written: list[dict[str, Any]] = []
    try:
        results = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            JudgedBatches, batch_size=1, batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=min(actors, len(items))),
            fn_constructor_kwargs={"scorers": tuple(names), "store_uri": store.uri,
                                   "run_id": run_id, "judge_table": dict(judging.table),
                                   "gate": gate})
        for row in results.iter_rows():
            written.append(row)
            drain_into(con, gate, run_id)
        judged = ray.get(gate.workers.remote())
        log.info("run %s: %d turns judged by %d worker(s) (%s)", run_id, sum(judged.values()),
                 len(judged), ", ".join(str(n) for n in sorted(judged.values())))
    finally:
        drain_into(con, gate, run_id)
        ray.kill(gate)
    return written


class JudgedBatches:
    """One worker of the judging pool (a Ray Data actor): scores pending batches with the
    runner's per-batch function and a `JudgeEngine` whose budget, endpoint limits and cache
    are the gate's (`ray_judge`); writes each batch's scores as Parquet (`write_part`). A
    batch that begins after the run's stop is not scored, as the local runner stops."""

    def __init__(self, scorers: tuple[str, ...], store_uri: str, run_id: str,
                 judge_table: Mapping[str, object], gate: Any) -> None:
        ray = require_ray()
        context = ray.get_runtime_context()
        actor = context.get_actor_id()
        holder = f"{actor}/{uuid.uuid4().hex[:12]}"  # this incarnation: Ray keeps the id
        ray.get(gate.register.remote(actor, holder, context.current_actor))
        self.engine = make_judge_runner(judge_table, Budget(), GateCache(gate))
        self.engine.ledger = GateLedger(gate)
        self.engine.limits_factory = lambda config: GateLimits(gate, config, holder)
        self.by_name = {s.name: s for s in resolve_scorers(scorers)}
        self.store_uri, self.run_id = store_uri, run_id

    def __call__(self, rows: pa.Table) -> pa.Table:
        out: dict[str, list[Any]] = {"file": [], "rows": [], "stop": [], "notes": []}
        for index, payload in zip(rows["index"].to_pylist(), rows["batch"].to_pylist(),
                                  strict=True):
            batch: PendingBatch = pickle.loads(payload)
            stop = self.engine.stop
            file, n, message = None, 0, None if stop is None else stop.message
            if stop is None:
                tap = JudgeTap(self.engine.run)
                table = score_table([], self.run_id,
                                    columns=score_batch(batch, self.by_name, tap, Tally()))
                file, n = write_part(table, self.store_uri, self.run_id, index), table.num_rows
                message = tap.stop
            out["file"].append(file)
            out["rows"].append(n)
            out["stop"].append(message)
            out["notes"].append(list(self.engine.notes))
        return pa.table({"file": pa.array(out["file"], pa.string()), "rows": out["rows"],
                         "stop": pa.array(out["stop"], pa.string()),
                         "notes": pa.array(out["notes"], pa.list_(pa.string()))})


def _recover(con: duckdb.DuckDBPyConnection, store: Location, run_id: str,
             chosen: Sequence[Scorer], tally: Tally) -> tuple[str, ...]:
    """Write the still-pending scores of score runs that committed their manifest but
    never loaded it (the driver died in between); the ids of those runs."""
    loaded = {row[0] for row in con.execute(LOADED_RUNS).fetchall()}
    manifests = committed(store)
    done = {r for m in manifests if m.run_id in loaded for r in m.meta.get("recovered", ())}
    dead = [m for m in manifests if m.meta.get("kind") == "score" and m.files.get("scores")
            and m.run_id not in loaded and m.run_id not in done]
    if not dead:
        return ()
    table = _read(store, [rel for m in dead for rel in m.files["scores"]])
    con.register("_dead_scores", table)
    con.register("_versions", pa.table({"scorer": [s.name for s in chosen],
                                        "version": [s.version for s in chosen]}))
    try:
        rows = con.sql(RECOVERABLE).to_arrow_table()
    finally:
        con.unregister("_dead_scores")
        con.unregister("_versions")
    log.warning("run %s: loading %d scores of run(s) %s, which committed them but never "
                "loaded them", run_id, rows.num_rows, ", ".join(m.run_id for m in dead))
    with bulk_writes(con):
        _write(con, rows, run_id, replacing=True, tally=tally)
    return tuple(m.run_id for m in dead)


def _read(store: Location, files: Sequence[str]) -> pa.Table:
    with tempfile.TemporaryDirectory(prefix="turnscore-scores-") as tmp:
        tables = [pq.read_table(store.child(rel).download(Path(tmp) / rel)) for rel in files]
    return pa.concat_tables(tables)


def _load(con: duckdb.DuckDBPyConnection, store: Location, files: Sequence[str], run_id: str,
          *, replacing: bool, tally: Tally) -> None:
    """Every committed score file of the run, in one transaction (`scores.write_score_table`)."""
    _write(con, _read(store, files), run_id, replacing=replacing, tally=tally)


def _write(con: duckdb.DuckDBPyConnection, table: pa.Table, run_id: str, *, replacing: bool,
           tally: Tally) -> None:
    for item in pc.value_counts(pc.binary_join_element_wise(
            table["scorer"], table["status"], "\x1f")).to_pylist():
        scorer, status = item["values"].split("\x1f")
        tally.add(scorer, Status(status), item["counts"])
    # As a local run's batches, recovered scores included: in the load's transaction, a
    # turn leaves the queue only if its score is current (a recovered one may be stale).
    write_score_table(con, table, run_id, replacing=replacing, settle=score_queue.dequeue)
