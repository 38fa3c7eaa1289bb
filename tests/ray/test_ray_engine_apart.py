"""`--engine ray` follows a report apart through stored traces as local ingest does
(`links.apart_twins`): a session's first run and the client's report of its call, stored by
one Ray run, and the session's next run in a second: the second run finds the stored run by
its session, and the report from the stored run's keys alone (`calls` rule 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.conventions.build import Recorder
from tests.ingest.test_reports_apart import A1, MS, NIGHT, Q1, Run, said, user
from tests.ray.cluster import Cluster
from tests.ray.parity import upload, warehouse_rows
from turnscore.warehouse.ingest_run import run_ingest
from turnscore.warehouse.ray_run import run_ray_ingest

pytestmark = pytest.mark.ray


def _run(folder: Path, start: int, request: str, answer: str) -> None:
    r = Recorder("app")
    steps = Run(r, start, session="s1")
    with steps.agent() as root:
        steps.call(root, ([user(request)], [said(answer)]))
    folder.mkdir(parents=True)
    r.write(folder, "run")


def test_a_later_run_finds_the_stored_report_through_the_stored_call(
        cluster: Cluster, s3_endpoint: str, bucket: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    root = tmp_path / "in"
    _run(root / "a", NIGHT, Q1, A1)
    _run(root / "b", NIGHT + 60_000 * MS, "And Rome?", "Sunny.")
    upload(root, s3_endpoint, bucket, "in")
    local = tmp_path / "local"
    run_ingest([root], local)
    want = warehouse_rows(local, str(root))["turns"]
    assert len(want) == 2

    wh, data, prefix = tmp_path / "wh", f"s3://{bucket}/data", f"s3://{bucket}/in"
    run_ray_ingest([f"{prefix}/a/"], wh, data, ray_address=cluster.address)
    run_ray_ingest([f"{prefix}/b/"], wh, data, ray_address=cluster.address)
    assert warehouse_rows(wh, prefix)["turns"] == want
