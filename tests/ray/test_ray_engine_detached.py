"""`--engine ray` joins a content record that names no span to the span that reported its
response (`turnscore.ingest.detached`) as local ingest does: in one run (the record's
response routes it to its span's partition), and in a run after the one that stored its
span (the response key finds the stored trace)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ingest.test_detached_records import _files
from tests.ray.cluster import Cluster
from tests.ray.parity import upload, warehouse_rows
from turnscore.warehouse.ingest_run import run_ingest
from turnscore.warehouse.ray_run import run_ray_ingest

pytestmark = pytest.mark.ray


@pytest.mark.parametrize("apart", [False, True], ids=["one-run", "record-later"])
def test_a_detached_record_joins_its_span(
        cluster: Cluster, s3_endpoint: str, bucket: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, apart: bool) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    traces, logs = _files(tmp_path, ("chatcmpl-1", True), ("chatcmpl-2", False))
    root = tmp_path / "in"
    parts = ["a", "b"] if apart else ["a"]
    for part in parts:
        (root / part).mkdir(parents=True)
    traces.rename(root / "a" / traces.name)
    logs.rename(root / parts[-1] / logs.name)
    upload(root, s3_endpoint, bucket, "in")
    local = tmp_path / "local"
    for part in parts:
        run_ingest([root / part], local)
    want = warehouse_rows(local, str(root))
    assert len(want["turns"]) == 2 and want["errors"] == []
    assert sum("get_weather" in repr(row) for row in want["turns"]) == 1  # the record's tools

    wh, data, prefix = tmp_path / "wh", f"s3://{bucket}/data", f"s3://{bucket}/in"
    for part in parts:
        run_ray_ingest([f"{prefix}/{part}/"], wh, data, ray_address=cluster.address)
    got = warehouse_rows(wh, prefix)
    assert (got["turns"], got["errors"]) == (want["turns"], want["errors"])
