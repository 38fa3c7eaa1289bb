"""Memory stays bounded as the input grows: peak RSS for an input many groups long is
about that for an input a few groups long.

The input is the benchmark's generated agent traffic (real OTel SDK spans, traces cut
across files); each ingest runs in a fresh process so its peak RSS is its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ingest.outputs import bench_ingest

SPANS_PER_FILE = 500
GROUP_BYTES = 1 << 20
"""Files are ~2 MB, so every file is a group of its own."""
SMALL, LARGE = 8, 40
"""Files in each input; the small one is past the first groups' warm-up (imports, caches
filling up to their bounds)."""

CHILD = """
import json, resource, sys
from pathlib import Path
from turnscore.ingest.pipeline import ingest_paths
from tests.ingest.outputs import bench_ingest
batch = ingest_paths([Path(sys.argv[1])], Path(sys.argv[2]), group_bytes=int(sys.argv[3]),
                     workers=int(sys.argv[4]))
peak = max(resource.getrusage(who).ru_maxrss
           for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({"spans": batch.spans, "turns": batch.turns, "peak_kib": peak}))
"""




@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("memory")
    files = bench_ingest().generate(root / "all", LARGE * SPANS_PER_FILE, SPANS_PER_FILE)["jsonl"]
    small, large = root / "small", root / "large"
    small.mkdir()
    large.mkdir()
    for i, path in enumerate(files):
        if i < SMALL:
            os.link(path, small / path.name)
        os.link(path, large / path.name)
    return {"small": small, "large": large}


def _peak(folder: Path, out: Path, workers: int) -> tuple[int, dict[str, int]]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), str(out), str(GROUP_BYTES), str(workers)],
        check=True, capture_output=True, text=True,
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return report["peak_kib"] * 1024, report


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir())


@pytest.mark.parametrize("workers", [1, 2], ids=["plain", "fast"])
def test_peak_memory_does_not_grow_with_the_input(
    inputs: dict[str, Path], tmp_path: Path, workers: int
) -> None:
    small_peak, small = _peak(inputs["small"], tmp_path / "small", workers)
    large_peak, large = _peak(inputs["large"], tmp_path / "large", workers)
    assert large["spans"] == LARGE * SPANS_PER_FILE
    assert small["spans"] == SMALL * SPANS_PER_FILE
    extra_input = _size(inputs["large"]) - _size(inputs["small"])
    assert extra_input > 16 * GROUP_BYTES  # many groups more than the chunk size
    # Holding the input would add several times its size (decoded records are larger than
    # their JSON); bounded, the peak moves by noise and the small span index only. The
    # noise is allocator retention (pyarrow's pool among others): up to ~40 MB here.
    assert large_peak - small_peak < extra_input, (small_peak, large_peak, extra_input)
