"""`turnscore ingest --engine ray` on a real two-node Ray cluster, reading from a real S3 API.

The same input ingested by the local engine and by Ray (from the moto server, into an
s3:// data root) must give the same rows: every turn column but the run id, every input
error, every ingested file (paths compared relative to where the input was read).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.ray.cluster import Cluster
from tests.ray.parity import FIXTURES, SHARED_CORPUS, upload, warehouse_rows
from turnscore.ingest.storage import committed, location
from turnscore.warehouse.ingest_run import run_ingest

pytestmark = pytest.mark.ray

TURNSCORE = str(Path(sys.executable).with_name("turnscore"))


def ingest_ray(source: str, warehouse: Path, data_root: str, cluster: Cluster,
               *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TURNSCORE, "ingest", source, "--engine", "ray", "--ray-address", cluster.address,
         "--data-root", data_root, "--warehouse", str(warehouse), "--json", *extra],
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
def local_rows(inputs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list]:
    warehouse = tmp_path_factory.mktemp("local")
    report = run_ingest([inputs], warehouse)
    assert report.turns_new > 100
    return warehouse_rows(warehouse, str(inputs))


def test_corpus_through_ray_from_s3_gives_the_local_rows(
        inputs: Path, local_rows: dict[str, list], cluster: Cluster, s3_endpoint: str,
        bucket: str, tmp_path: Path) -> None:
    upload(inputs, s3_endpoint, bucket, "in")
    done = ingest_ray(f"s3://{bucket}/in/", tmp_path / "wh", f"s3://{bucket}/data", cluster)
    assert done.returncode == 3, done.stderr  # the corpus holds bad files: partial, as local
    report = orjson.loads(done.stdout)
    rows = warehouse_rows(tmp_path / "wh", f"s3://{bucket}/in")
    for table in ("turns", "errors", "files"):
        assert rows[table] == local_rows[table], table
    assert report["turns_new"] == len(local_rows["turns"])

    [manifest] = committed(location(f"s3://{bucket}/data"))
    assert manifest.files["turns"] and manifest.files["spans"]

    # A rerun skips every ingested file (only the files that gave nothing but errors are
    # read and reported again, as locally) and changes no row.
    again = orjson.loads(ingest_ray(f"s3://{bucket}/in/", tmp_path / "wh",
                                    f"s3://{bucket}/data", cluster).stdout)
    assert (again["turns_new"], again["turns_rebuilt"], again["spans"]) == (0, 0, 0)
    assert again["files_skipped"] >= len(local_rows["files"])
    assert warehouse_rows(tmp_path / "wh", f"s3://{bucket}/in") == rows
