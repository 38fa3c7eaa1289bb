"""An incremental night: new turns added to an existing warehouse, timed.

    python bench/incremental.py WAREHOUSE [--turns 10000] [--out bench/out/incremental]

Generates `--turns` new agent turns (new sessions, the next day, the same generator as
`bench/ingest.py`) as JSONL files, ingests them into WAREHOUSE with `run_ingest` (decoding
included; `TURNSCORE_INGEST_WORKERS` applies), and checks that no Parquet file already
in the warehouse was rewritten or removed. Target: 10,000 turns into a warehouse of
1 million in under 5 seconds.

The split: the same files are then ingested into an empty warehouse (`--no-split` skips
it); that run's time is what the night costs by itself (reading, decoding, assembling,
writing), and the difference is what the existing warehouse adds. Before the timed run
the ingest folder's key indexes are brought up to date (`sync_indexes`): a no-op for a
warehouse kept by this version, a one-off read for one written before the indexes
existed; its time is reported apart. WAREHOUSE is modified: run it on a copy.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

DAY_NS = 86_400 * 1_000_000_000
NEW_SESSIONS_FROM = 50_000_000
"""Session numbers of the new night: no new turn continues an old conversation."""


def _bench_ingest() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_ingest", Path(__file__).with_name(
        "ingest.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parquet_files(root: Path) -> dict[Path, tuple[int, int, int]]:
    """Every Parquet file under `root` with (inode, size, mtime_ns): a rewrite changes one."""
    out = {}
    for path in root.rglob("*.parquet"):
        st = path.stat()
        out[path] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path)
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=Path("bench/out/incremental"))
    parser.add_argument("--no-split", action="store_true",
                        help="skip the comparison run into an empty warehouse")
    args = parser.parse_args(argv)
    from turnscore.ingest.pipeline import default_workers
    from turnscore.ingest.store import sync_indexes
    from turnscore.warehouse.db import DB_FILE, open_readonly
    from turnscore.warehouse.ingest_run import run_ingest

    bench = _bench_ingest()
    shutil.rmtree(args.out, ignore_errors=True)
    gen = bench.Generator(seed=1234)
    gen.sessions = NEW_SESSIONS_FROM
    gen.now = bench.T0 + DAY_NS
    # ~8 spans a turn; generate whole files until the night holds enough turns.
    files = bench.generate(args.out, args.turns * 8, 8_000, gen, ("jsonl",))["jsonl"]

    con = open_readonly(args.warehouse / DB_FILE)
    try:
        row = con.execute("SELECT count(*) FROM turns").fetchone()
    finally:
        con.close()
    before_turns = row[0] if row else 0
    before = _parquet_files(args.warehouse)
    start = time.perf_counter()
    sync_indexes(args.warehouse)
    index_seconds = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    report = run_ingest(files, args.warehouse)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    after = _parquet_files(args.warehouse)
    changed = [p for p, key in before.items() if after.get(p) != key]
    empty_seconds = empty_cpu = None
    if not args.no_split:
        with tempfile.TemporaryDirectory(prefix="incremental-empty-") as empty:
            start, cpu = time.perf_counter(), time.process_time()
            run_ingest(files, Path(empty))
            empty_seconds, empty_cpu = time.perf_counter() - start, time.process_time() - cpu
    result = {
        "warehouse_turns_before": before_turns,
        "new_turns": report.turns_new,
        "rebuilt_turns": report.turns_rebuilt,
        "spans": report.spans,
        "seconds": seconds,
        "seconds_into_empty_warehouse": empty_seconds,
        "warehouse_overhead_seconds": None if empty_seconds is None else seconds - empty_seconds,
        # CPU time of this process (workers not included): steadier on a shared machine.
        "cpu_seconds": cpu_seconds,
        "cpu_seconds_into_empty_warehouse": empty_cpu,
        "warehouse_overhead_cpu_seconds": None if empty_cpu is None else cpu_seconds - empty_cpu,
        "index_sync_seconds_before_run": index_seconds,
        "old_parquet_files": len(before),
        "old_parquet_files_rewritten_or_removed": len(changed),
        "workers": default_workers(),
        "outcome": report.outcome,
    }
    print(json.dumps(result, indent=2))
    for path in changed[:10]:
        print(f"rewritten or removed: {path}", file=sys.stderr)
    return 0 if not changed and report.outcome == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
