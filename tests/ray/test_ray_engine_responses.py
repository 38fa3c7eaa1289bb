"""`--engine ray` finds a stored trace by the response id of its model calls, as local
ingest does (`SpanStore.linked_traces`): one model call recorded by two instrumentations,
each in a trace of its own, ingested by two Ray runs, gives the turns of one local run of
both (`tests/ingest/test_links_responses.py` records them with the real OTel SDK).
A committed span file written before the `response_id` column existed is still read
(no response keys in it).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.ingest.test_links_responses import CASES, _record
from tests.ray.cluster import Cluster
from tests.ray.parity import upload, warehouse_rows
from turnscore.ingest.links import JoinKeys, SpanLinks
from turnscore.ingest.records import RawSpan
from turnscore.ingest.store import SpanStore, write_parquet_atomic
from turnscore.warehouse.ingest_run import run_ingest
from turnscore.warehouse.ray_engine import _match_stored
from turnscore.warehouse.ray_run import run_ray_ingest

pytestmark = pytest.mark.ray

# The cases that meet by response id alone (not by history too).
BY_RESPONSE = [c for c in CASES if len(c.calls) == 1]


def test_two_ray_runs_join_two_instrumentations_of_one_call(
        cluster: Cluster, s3_endpoint: str, bucket: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    root = tmp_path / "in"
    for n, case in enumerate(BY_RESPONSE):  # a: one instrumentation's traces, b: the other's
        calls = [replace(c, response_id=f"{c.response_id}-{n}") for c in case.calls]
        _record(root / "a" / f"case{n}", calls, case.first)
        _record(root / "b" / f"case{n}", calls, case.second)
    upload(root, s3_endpoint, bucket, "in")
    local = tmp_path / "local"
    run_ingest([root], local)
    want = warehouse_rows(local, str(root))["turns"]
    assert len(want) == len(BY_RESPONSE)

    wh, data, prefix = tmp_path / "wh", f"s3://{bucket}/data", f"s3://{bucket}/in"
    run_ray_ingest([f"{prefix}/a/"], wh, data, ray_address=cluster.address)
    second = run_ray_ingest([f"{prefix}/b/"], wh, data, ray_address=cluster.address)
    assert warehouse_rows(wh, prefix)["turns"] == want
    # The second run's traces joined the stored ones: their turns, rebuilt, are as stored.
    assert (second.turns_new, second.turns_unchanged) == (0, len(BY_RESPONSE))


def test_stored_traces_are_matched_by_response_id_in_old_and_new_files(tmp_path: Path) -> None:
    span = RawSpan(trace_id="a" * 32, span_id="1" * 16, parent_span_id=None, name="chat",
                   kind=3, start_unix_nano=1, end_unix_nano=2, status_code=0,
                   status_message="", attributes={}, events=(), resource={},
                   scope_name="s", scope_version="1", source="x.json", position="line 1")
    store = SpanStore(tmp_path, "r")
    links = {(span.trace_id, span.span_id): SpanLinks(history_key="h", response_id="resp-1")}
    [new_file] = store.write([span], links)
    [old_file] = store.write([replace(span, trace_id="b" * 32)], {
        ("b" * 32, span.span_id): SpanLinks(history_key="h", response_id="resp-1")})
    store.close()
    write_parquet_atomic(pq.read_table(old_file).drop_columns(["response_id"]), old_file)
    files = [p.relative_to(tmp_path).as_posix() for p in (new_file, old_file)]
    batch = pa.table({"file": files})
    found = _match_stored(batch, str(tmp_path), JoinKeys(responses=frozenset({"resp-1"})))
    assert found["trace_id"].to_pylist() == ["a" * 32]
    assert found["responses"].to_pylist() == [["resp-1"]]
    by_history = _match_stored(batch, str(tmp_path), JoinKeys(prefixes=frozenset({"h"})))
    assert sorted(by_history["trace_id"].to_pylist()) == ["a" * 32, "b" * 32]
    assert by_history["responses"].to_pylist() == [["resp-1"], []]
