"""`--engine ray` on a real two-node Ray cluster, reading from and writing to a real S3 API.

The same input ingested and scored by the local engine and by Ray (input on the moto
server, data root on s3://) must give the same rows: every turn column but the run id,
every input error, every ingested file, every score column but run id, time and
latency (paths compared relative to where the input was read). A task process or the
second node's raylet SIGKILLed mid-job, then a rerun, must give those same rows too,
with no turn twice in the committed Parquet.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow.parquet as pq
import pytest

from tests.ray.cluster import Cluster, Node
from tests.ray.parity import FIXTURES, SHARED_CORPUS, upload, warehouse_rows
from turnscore.ingest.storage import committed, committed_files, location
from turnscore.warehouse.db import DB_FILE
from turnscore.warehouse.ingest_run import run_ingest
from turnscore.warehouse.labels import load_labels
from turnscore.warehouse.ray_engine import RayIngest
from turnscore.warehouse.ray_run import run_ray_ingest
from turnscore.warehouse.score_run import score_turns

pytestmark = pytest.mark.ray

TURNSCORE = str(Path(sys.executable).with_name("turnscore"))


def turnscore(*args: str, cluster: Cluster) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TURNSCORE, *args, "--ray-address", cluster.address, "--json"],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, RAY_AUTH_MODE="disabled"))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/fixtures and the shared corpus (where present) in one folder."""
    root = tmp_path_factory.mktemp("input") / "in"
    shutil.copytree(FIXTURES, root / "fixtures")
    if SHARED_CORPUS.is_dir():
        shutil.copytree(SHARED_CORPUS, root / "shared-corpus")
    return root


@pytest.fixture(scope="module")
def labels(inputs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Cases for some corpus turns (joined by request text), so label-reading scorers
    score rather than say inconclusive."""
    warehouse = tmp_path_factory.mktemp("for-labels")
    run_ingest([inputs], warehouse)
    con = duckdb.connect(str(warehouse / DB_FILE), read_only=True)
    rows = con.execute("""
        SELECT request, any_value(final_answer), any_value(calls[1].name) FROM turns
        WHERE request <> '' AND final_answer IS NOT NULL GROUP BY request ORDER BY request
        LIMIT 25""").fetchall()
    con.close()
    path = tmp_path_factory.mktemp("labels") / "cases.jsonl"
    path.write_text("".join(
        orjson.dumps({"input": request, "canary": answer.split()[0],
                      "ideal_response": answer, "expected_tools": [tool] if tool else []}
                     ).decode() + "\n"
        for request, answer, tool in rows))
    return path


@pytest.fixture(scope="module")
def local_rows(inputs: Path, labels: Path, tmp_path_factory: pytest.TempPathFactory
               ) -> dict[str, list[Any]]:
    warehouse = tmp_path_factory.mktemp("local")
    assert run_ingest([inputs], warehouse).turns_new > 100
    load_labels(warehouse, [labels], case_id_attribute="case_id")
    assert score_turns(warehouse).written > 500
    return warehouse_rows(warehouse, str(inputs))


def _ray_ingest(bucket: str, warehouse: Path, cluster: Cluster) -> subprocess.CompletedProcess[str]:
    return turnscore("ingest", f"s3://{bucket}/in/", "--engine", "ray", "--data-root",
                     f"s3://{bucket}/data", "--warehouse", str(warehouse), cluster=cluster)


def _committed_turn_ids(bucket: str) -> list[str]:
    root = location(f"s3://{bucket}/data")
    ids: list[str] = []
    for file in committed_files(root, "turns"):
        with root.fs.open_input_file(file.path) as fh:
            ids.extend(pq.read_table(fh, columns=["turn_id"])["turn_id"].to_pylist())
    return ids


def test_corpus_through_ray_from_s3_gives_the_local_rows(
        inputs: Path, labels: Path, local_rows: dict[str, list[Any]], cluster: Cluster,
        s3_endpoint: str, bucket: str, tmp_path: Path) -> None:
    upload(inputs, s3_endpoint, bucket, "in")
    wh = tmp_path / "wh"
    done = _ray_ingest(bucket, wh, cluster)
    assert done.returncode == 3, done.stderr  # the corpus holds bad files: partial, as local
    assert orjson.loads(done.stdout)["turns_new"] == len(local_rows["turns"])
    prefix = f"s3://{bucket}/in"
    rows = warehouse_rows(wh, prefix)
    for table in ("turns", "errors", "files"):
        assert rows[table] == local_rows[table], table
    assert sorted(_committed_turn_ids(bucket)) == sorted(r[0] for r in local_rows["turns"])

    load_labels(wh, [labels], case_id_attribute="case_id")
    scored = turnscore("score", "--engine", "ray", "--data-root", f"s3://{bucket}/data",
                       "--warehouse", str(wh), cluster=cluster)
    assert scored.returncode == 0, scored.stderr
    assert warehouse_rows(wh, prefix)["scores"] == local_rows["scores"]
    statuses = {r[3] for r in local_rows["scores"]}
    assert {"scored", "inconclusive"} <= statuses  # the labels were read
    runs = {m.run_id: m for m in committed(location(f"s3://{bucket}/data"))}
    assert sum("scores" in m.files for m in runs.values()) == 1

    # A rerun reads nothing new (only the files that gave nothing but errors are read and
    # reported again, as locally) and changes no row; nothing is pending to score.
    rerun = _ray_ingest(bucket, wh, cluster)
    assert rerun.returncode == 3, rerun.stderr  # the bad files, reported again
    again = orjson.loads(rerun.stdout)
    assert (again["turns_new"], again["turns_rebuilt"], again["spans"]) == (0, 0, 0)
    rescored = orjson.loads(turnscore("score", "--engine", "ray", "--data-root",
                                      f"s3://{bucket}/data", "--warehouse", str(wh),
                                      cluster=cluster).stdout)
    assert rescored["nothing_to_do"]
    assert warehouse_rows(wh, prefix) == {**rows, "scores": local_rows["scores"]}


def _kill_when_running(target: Any, what: str, found: list[str]) -> threading.Thread:
    """SIGKILL the first process `target()` names, once it appears (or give up)."""
    def run() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not found:
            for pid, name in target():
                if what in name:
                    os.kill(pid, signal.SIGKILL)
                    found.append(name)
                    return
            time.sleep(0.02)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("victim", ["task", "raylet"])
def test_a_worker_killed_mid_job_then_a_rerun_lose_and_duplicate_nothing(
        victim: str, inputs: Path, local_rows: dict[str, list[Any]], cluster: Cluster,
        s3_endpoint: str, bucket: str, tmp_path: Path) -> None:
    upload(inputs, s3_endpoint, bucket, "in")
    node: Node = cluster.nodes[-1]
    found: list[str] = []
    if victim == "task":
        # A task process on the second node, in the middle of assembling partitions.
        killer = _kill_when_running(lambda: cluster.workers_of(node), "_assemble_partition",
                                    found)
    else:
        # The whole second node, once it has read its share of the input.
        killer = _kill_when_running(
            lambda: [(pid, "raylet") for pid in node.raylet_pids()]
            if any("_trace_pass" in name for _, name in cluster.workers_of(node)) else [],
            "raylet", found)
    wh = tmp_path / "wh"
    first = _ray_ingest(bucket, wh, cluster)
    killer.join(timeout=5)
    assert found, f"nothing to kill ran on the second node ({first.stderr[-2000:]})"
    again = _ray_ingest(bucket, wh, cluster)
    assert again.returncode == 3, again.stderr
    rows = warehouse_rows(wh, f"s3://{bucket}/in")
    for table in ("turns", "errors", "files"):
        assert rows[table] == local_rows[table], table
    assert sorted(_committed_turn_ids(bucket)) == sorted(r[0] for r in local_rows["turns"])
    if victim == "raylet":
        cluster.nodes.remove(node)
        cluster.add_node()  # the cluster as the other tests found it


class _DriverDied(BaseException):
    """Stands for the driver process dying: not an error any layer handles."""


def test_a_run_committed_but_never_loaded_is_loaded_by_the_next(
        cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    source = str(FIXTURES / "corpus")
    expected = tmp_path / "expected"
    run_ingest([FIXTURES / "corpus"], expected)
    wh, root = tmp_path / "wh", f"file://{tmp_path}/data"

    def die(job: RayIngest) -> None:  # after the manifest, before the DuckDB load
        raise _DriverDied

    with pytest.raises(_DriverDied):
        run_ray_ingest([source], wh, root, ray_address=cluster.address, on_job=die)
    [dead] = committed(location(root))
    rerun = run_ray_ingest([source], wh, root, ray_address=cluster.address)
    assert rerun.turns_recovered == len(warehouse_rows(expected, source)["turns"])
    assert rerun.turns_new == 0  # its files were the dead run's: not read twice
    rows, want = warehouse_rows(wh, source), warehouse_rows(expected, source)
    assert rows["turns"] == want["turns"]
    turn_files = list(committed_files(location(root), "turns"))
    assert {f.path for f in turn_files} == {location(root).child(p).path
                                            for p in dead.files["turns"]}
