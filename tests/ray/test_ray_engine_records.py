"""`--engine ray` builds record-only turns (`turnscore.ingest.record_turns`: Claude Code with
its traces off) as local ingest does when a session's records arrive in two runs: a prompt cut
in two (its second half finds the stored first through the anchored span), and a later prompt
of the session (the stored log row's conversation key finds its predecessor)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ingest.test_record_turns import MULTI, REQUESTS, _halves
from tests.ray.cluster import Cluster
from tests.ray.parity import upload, warehouse_rows
from turnscore.warehouse.ingest_run import run_ingest
from turnscore.warehouse.ray_run import run_ray_ingest

pytestmark = pytest.mark.ray


@pytest.mark.parametrize("between_prompts", [False, True], ids=["prompt-cut", "prompt-later"])
def test_a_sessions_records_in_two_runs_give_the_local_turns(
        cluster: Cluster, s3_endpoint: str, bucket: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, between_prompts: bool) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    root = tmp_path / "in"
    halves = _halves(MULTI, tmp_path, between_prompts=between_prompts)
    for part, half in zip("ab", halves, strict=True):
        (root / part).mkdir(parents=True)
        half.rename(root / part / half.name)
    upload(root, s3_endpoint, bucket, "in")
    local = tmp_path / "local"
    for part in "ab":
        run_ingest([root / part], local)
    want = warehouse_rows(local, str(root))
    assert want["errors"] == []
    assert sorted(REQUESTS) == sorted(r for row in want["turns"] for r in row
                                      if r in REQUESTS)

    wh, data, prefix = tmp_path / "wh", f"s3://{bucket}/data", f"s3://{bucket}/in"
    for part in "ab":
        run_ray_ingest([f"{prefix}/{part}/"], wh, data, ray_address=cluster.address)
    got = warehouse_rows(wh, prefix)
    assert (got["turns"], got["errors"]) == (want["turns"], want["errors"])
