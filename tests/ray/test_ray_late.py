"""`--engine ray` over input that continues what earlier runs stored, on the two-node cluster
and the S3 API: late spans of stored traces, later turns of stored conversations.

A corpus export and a bench export, each cut in two halves, are ingested through Ray in
two runs: alternate files in each half (exporters cut traces and sessions across files,
so the second half holds late spans of the first half's traces, later turns of its
conversations, and earlier ones), and each corpus `multi_turn.json` cut by trace, its
first traces in the first half (conversations continued in the second half by
conversation id, and conversation-less traces continuing stored ones by history). The
warehouse must then hold exactly the turns of the local engine ingesting the same two
halves, and of it ingesting every file at once; the second run's account (turns new,
rebuilt, removed; spans stored) must be the local second run's; and a rerun of the
second half must change and add nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from tests.ingest.outputs import bench_ingest
from tests.ray.cluster import Cluster
from tests.ray.parity import FIXTURES, upload, warehouse_rows
from turnscore.warehouse.ingest_run import IngestReport, run_ingest
from turnscore.warehouse.ray_run import run_ray_ingest

pytestmark = pytest.mark.ray

BENCH_SPANS, BENCH_SPANS_PER_FILE = 1_200, 150


def _halves(root: Path) -> tuple[Path, Path]:
    """`root/a` and `root/b`: the corpus's files alternately, and a bench export cut in two."""
    first, second = root / "a", root / "b"
    for folder in sorted(p for p in (FIXTURES / "corpus").iterdir() if p.is_dir()):
        files = sorted(p for p in folder.rglob("*")
                       if p.is_file() and "ground_truth" not in p.name)
        for i, path in enumerate(files):
            rel = Path(folder.name) / path.relative_to(folder)
            if path.name == "multi_turn.json" and _cut_by_trace(path, first / rel, second / rel):
                continue
            dest = (first if i % 2 == 0 else second) / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
    bench = bench_ingest()
    export = bench.generate(root.parent / "export", BENCH_SPANS, BENCH_SPANS_PER_FILE,
                            bench.Generator(seed=16), ("json",))["json"]
    for i, path in enumerate(export):
        dest = (first if i % 2 == 0 else second) / "bench" / path.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    return first, second


def _cut_by_trace(path: Path, first: Path, second: Path) -> bool:
    """An OTLP/JSON request of spans alone as two: its earlier traces (by start), then the
    rest; False (nothing written) for any other file."""
    request = orjson.loads(path.read_bytes())
    if set(request) != {"resourceSpans"}:
        return False
    starts: dict[str, int] = {}
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                start = int(span["startTimeUnixNano"])
                starts[span["traceId"]] = min(start, starts.get(span["traceId"], start))
    if len(starts) < 2:
        return False
    order = sorted(starts, key=lambda t: (starts[t], t))
    early = set(order[: len(order) // 2])
    for dest, keep in ((first, early), (second, set(order) - early)):
        part = {"resourceSpans": [
            {**resource, "scopeSpans": [
                {**scope, "spans": [s for s in scope["spans"] if s["traceId"] in keep]}
                for scope in resource["scopeSpans"]]}
            for resource in request["resourceSpans"]]}
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(orjson.dumps(part))
    return True


def _account(report: IngestReport) -> tuple[object, ...]:
    return (report.outcome, report.files_read, report.spans, report.new_spans,
            report.turns_new, report.turns_rebuilt, report.turns_removed)


def test_a_second_half_rebuilds_what_the_first_stored_as_the_local_engine_does(
        cluster: Cluster, s3_endpoint: str, bucket: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    root = tmp_path / "in"
    first, second = _halves(root)
    upload(root, s3_endpoint, bucket, "in")
    all_at_once, two_runs = tmp_path / "all", tmp_path / "two"
    run_ingest([root], all_at_once)
    run_ingest([first], two_runs)
    local_second = run_ingest([second], two_runs)
    want = warehouse_rows(two_runs, str(root))
    assert want["turns"] == warehouse_rows(all_at_once, str(root))["turns"]
    assert local_second.turns_rebuilt + local_second.turns_removed > 0  # it continues

    wh, data = tmp_path / "wh", f"s3://{bucket}/data"
    prefix = f"s3://{bucket}/in"
    run_ray_ingest([f"{prefix}/a/"], wh, data, ray_address=cluster.address)
    ray_second = run_ray_ingest([f"{prefix}/b/"], wh, data, ray_address=cluster.address)
    rows = warehouse_rows(wh, prefix)
    for table in ("turns", "errors", "files"):
        assert rows[table] == want[table], table
    assert _account(ray_second) == _account(local_second)

    rerun = run_ray_ingest([f"{prefix}/b/"], wh, data, ray_address=cluster.address)
    assert (rerun.turns_new, rerun.turns_rebuilt, rerun.turns_removed, rerun.new_spans) == (
        0, 0, 0, 0)
    assert warehouse_rows(wh, prefix) == rows
