"""`turnscore nightly --engine ray`: the night's ingest and scoring on the two-node
cluster give the local nightly's turns and scores; the other stages run as locally."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.ray.cluster import Cluster
from tests.ray.parity import FIXTURES, warehouse_rows

pytestmark = pytest.mark.ray

TURNSCORE = str(Path(sys.executable).with_name("turnscore"))
SOURCE = FIXTURES / "corpus"


def nightly(folder: Path, *engine: str) -> dict[str, object]:
    config = folder / "turnscore.toml"
    folder.mkdir()
    config.write_text(f'warehouse = "{folder / "wh"}"\nsources = ["{SOURCE}"]\n')
    done = subprocess.run([TURNSCORE, "nightly", "--config", str(config), "--json", *engine],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, RAY_AUTH_MODE="disabled"))
    assert done.returncode in (0, 3), done.stderr[-3000:]
    report: dict[str, object] = orjson.loads(done.stdout)
    return report


def test_nightly_on_ray_gives_the_local_nights_turns_and_scores(
        cluster: Cluster, tmp_path: Path) -> None:
    local = nightly(tmp_path / "local")
    on_ray = nightly(tmp_path / "ray", "--engine", "ray", "--ray-address", cluster.address,
                     "--data-root", f"file://{tmp_path / 'data'}")
    assert on_ray["outcome"] == local["outcome"] and on_ray["failed_stage"] is None
    want = warehouse_rows(tmp_path / "local" / "wh", str(SOURCE))
    got = warehouse_rows(tmp_path / "ray" / "wh", str(SOURCE))
    assert got["turns"] == want["turns"] and len(want["turns"]) > 10
    assert got["scores"] == want["scores"]
    # The Ray stages wrote through the data root, committed by manifest.
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == [
        "_manifests", "scores", "spans", "turns"]
