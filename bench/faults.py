"""Faults: a nightly over ten good files and one file of each bad kind, and decompression bombs.

1. A nightly (`run_nightly`: ingest, score, views, publish, report) over ten good files of
   real OTel SDK spans (`bench/ingest.py`'s generator), alone (the baseline) and then with
   one file of each bad kind beside them: what each file gave (ingested or not, its
   `ingest_errors` rows), the turns kept against the baseline's, the exit code, peak RSS.
2. An ingest of each decompression bomb alone (a 64 KB `.zst` of 2 GiB, a 1 MB `.gz` of
   1 GiB), peak RSS against the cap (`[ingest] max_expanded_mb`) and against the same
   ingest of one good file.

Each run is a fresh process, so its peak RSS is its own. About a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import orjson
import zstandard

sys.path.insert(0, str(Path(__file__).parent))
import ingest as bench  # bench/ingest.py: real OTel SDK agent traffic

GOOD_FILES = 10
SPANS_PER_FILE = 400
CHUNK = 1 << 20


def _zstd_bomb(path: Path, size: int) -> None:
    blank = b" " * CHUNK
    with open(path, "wb") as fh, zstandard.ZstdCompressor(level=19).stream_writer(fh) as out:
        for _ in range(size // CHUNK):
            out.write(blank)


def _gzip_bomb(path: Path, size: int) -> None:
    blank = b" " * CHUNK
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as fh:
        for _ in range(size // CHUNK):
            fh.write(packer.compress(blank))
        fh.write(packer.flush())


def _mutated(export: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> bytes:
    """The export with its first span changed: the rest of the file is good."""
    change(export["resourceSpans"][0]["scopeSpans"][0]["spans"][0])
    return orjson.dumps(export)


def _set(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda span: span.update(fields)


def _end_before_start(span: dict[str, Any]) -> None:
    span["endTimeUnixNano"] = str(int(span["startTimeUnixNano"]) - 1_800_000 * 10**9)


def make_inputs(root: Path) -> tuple[Path, Path, dict[str, str]]:
    """Ten good files (`good/`), the same plus one of each bad kind (`faults/`), and what
    each bad file is."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    good, faults = root / "good", root / "faults"
    good.mkdir(parents=True)
    gen = bench.Generator(seed=11)
    sessions = gen.spans(SPANS_PER_FILE)
    for n in range(GOOD_FILES):
        spans = next(sessions)
        (good / f"good-{n:02d}.json").write_bytes(orjson.dumps(bench._request_json(spans)))
    shutil.copytree(good, faults)
    kinds: dict[str, str] = {}

    def export() -> dict[str, Any]:
        """Spans of their own for each bad file (a span in two files is one span)."""
        spans: dict[str, Any] = bench._request_json(next(sessions))
        return spans

    def bad(name: str, what: str, data: bytes) -> None:
        (faults / name).write_bytes(data)
        kinds[name] = what

    bad("start-2-63.json", "start time 2^63 ns",
        _mutated(export(), _set(startTimeUnixNano=str(2**63))))
    bad("end-1e19.json", "end time 10^19 ns", _mutated(export(), _set(endTimeUnixNano=str(10**19))))
    bad("kind-2-40.json", "kind 2^40", _mutated(export(), _set(kind=2**40)))
    request = encode_spans(next(sessions))
    request.resource_spans[0].scope_spans[0].spans[0].start_time_unix_nano = 2**63
    bad("start-2-63.pb", "protobuf, start time 2^63 ns", request.SerializeToString())
    bad("deep.json", "JSON nested 5,000 deep",
        b'{"resourceSpans": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    bad("repeated-key.json", "resourceSpans twice in one object",
        orjson.dumps(export())[:-1] + b',"resourceSpans":[]}')
    bad("end-before-start.json", "a span ends 30 min before it starts",
        _mutated(export(), _end_before_start))
    bad("time-0.json", "a span starts at 0", _mutated(export(), _set(startTimeUnixNano="0")))
    bad("wrong-types.json", "a span's name an object, its kind a word",
        _mutated(export(), _set(name={"oops": 1}, kind="sideways")))
    packed = zlib.compress(orjson.dumps(export()), wbits=31)
    bad("truncated.json.gz", "gzip cut in half", packed[: len(packed) // 2])
    bad("not-otlp.json", "a JSON array of numbers", b"[1, 2, 3]")
    _zstd_bomb(faults / "bomb.json.zst", 2 << 30)
    kinds["bomb.json.zst"] = "zstd bomb, 2 GiB of spaces"
    _gzip_bomb(faults / "bomb.json.gz", 1 << 30)
    kinds["bomb.json.gz"] = "gzip bomb, 1 GiB of spaces"
    return good, faults, kinds


# --- children: one run each, in a fresh process -------------------------------------------


def _peak_mib() -> float:
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return max(u.ru_maxrss for u in usage) / 1024


def nightly_child(sources: Path, warehouse: Path) -> dict[str, Any]:
    from turnscore.cli.options import EXIT_FOR_OUTCOME
    from turnscore.warehouse.config import Config
    from turnscore.warehouse.nightly import run_nightly

    start = time.perf_counter()
    report = run_nightly(
        Config(warehouse=warehouse, sources=(sources,), report=warehouse / "report.html")
    )
    seconds = time.perf_counter() - start
    with duckdb.connect(str(warehouse / "warehouse.duckdb"), read_only=True) as con:
        ingested = [p for (p,) in con.execute("SELECT path FROM ingested_files").fetchall()]
        errors = con.execute(
            "SELECT source, position, message FROM ingest_errors ORDER BY source, position"
        ).fetchall()
        turns = con.execute("SELECT count(*) FROM turns").fetchone()
        negative = con.execute("SELECT count(*) FROM turns WHERE duration_ms < 0").fetchone()
    return {
        "outcome": report.outcome.value,
        "exit_code": EXIT_FOR_OUTCOME[report.outcome.value],
        "seconds": seconds,
        "turns": turns[0] if turns else 0,
        "negative_durations": negative[0] if negative else 0,
        "scored": report.score.to_json() if report.score else None,
        "ingested": ingested,
        "errors": errors,
        "peak_rss_mib": _peak_mib(),
    }


def ingest_child(path: Path, warehouse: Path) -> dict[str, Any]:
    from turnscore.warehouse.config import load_config
    from turnscore.warehouse.ingest_run import run_ingest

    start = time.perf_counter()
    report = run_ingest([path], warehouse, limits=load_config(None).ingest)  # env: TURNSCORE_*
    return {
        "outcome": report.outcome,
        "seconds": time.perf_counter() - start,
        "errors": [str(e) for e in report.errors],
        "peak_rss_mib": _peak_mib(),
    }


def _child(mode: str, *args: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", mode, *map(str, args)],
        check=True, capture_output=True, text=True, env={**os.environ, **(env or {})},
    )
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# --- the report ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("bench/out/faults"))
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, first, second = args.child
        work = nightly_child if mode == "nightly" else ingest_child
        print(json.dumps(work(Path(first), Path(second)), default=str))
        return 0
    from turnscore.ingest.formats import DEFAULT_LIMITS, Limits

    shutil.rmtree(args.out, ignore_errors=True)
    start = time.perf_counter()
    good, faults, kinds = make_inputs(args.out / "input")
    print(f"generated {GOOD_FILES} good files and {len(kinds)} bad ones in "
          f"{time.perf_counter() - start:.1f}s", flush=True)

    base = _child("nightly", good, args.out / "wh-good")
    run = _child("nightly", faults, args.out / "wh-faults")
    print("\nnightly       outcome  exit  turns  negative durations  seconds  peak RSS")
    for name, r in (("good only", base), ("with faults", run)):
        print(f"{name:13} {r['outcome']:8} {r['exit_code']:4} {r['turns']:6,} "
              f"{r['negative_durations']:19} {r['seconds']:8.1f} {r['peak_rss_mib']:7.0f}Mi")
    ratio = run["peak_rss_mib"] / base["peak_rss_mib"]
    print(f"turns kept beside the faults: {run['turns']:,} (good files alone: {base['turns']:,}"
          f", plus the bad files' usable spans); peak RSS {ratio:.2f}x the good-only run")
    ingested = {Path(p).name for p in run["ingested"]}
    by_file: dict[str, list[str]] = {}
    for source, position, message in run["errors"]:
        by_file.setdefault(Path(source).name, []).append(f"{position}: {message}")
    good_names = {p.name for p in good.iterdir()}
    print(f"\ngood files ingested: {len(good_names & ingested)} of {len(good_names)}; "
          f"their error rows: {sum(len(by_file.get(n, [])) for n in good_names)}")
    print(f"\n{'bad file':24} {'what':40} {'ingested':8} {'rows':>4}  first row")
    for name, what in kinds.items():
        rows = by_file.get(name, [])
        first = rows[0][:110] if rows else "-"
        print(f"{name:24} {what:40} {'yes' if name in ingested else 'no':8} {len(rows):4}  {first}")

    one = _child("ingest", good / "good-00.json", args.out / "wh-one")
    print(f"\ndecompression bombs, each ingested alone; baseline: one good file "
          f"({(good / 'good-00.json').stat().st_size:,} bytes), peak RSS "
          f"{one['peak_rss_mib']:.0f}Mi")
    print(f"{'file':14} {'bytes':>9} {'expands to':>10} {'limits':24} {'cap':>8} {'outcome':8} "
          f"{'seconds':>7} {'peak RSS':>9} {'over baseline':>13} {'/ cap':>6}")
    unbounded_ratio = {"TURNSCORE_INGEST_MAX_EXPANSION_RATIO": "1000000"}
    for name, expands in (("bomb.json.zst", "2 GiB"), ("bomb.json.gz", "1 GiB")):
        size = (faults / name).stat().st_size
        for label, env in (("defaults", {}), ("ratio off: the size cap", unbounded_ratio)):
            ratio = int(env.get("TURNSCORE_INGEST_MAX_EXPANSION_RATIO", 0)) or None
            limits = Limits(DEFAULT_LIMITS.max_expanded_mb,
                            ratio or DEFAULT_LIMITS.max_expansion_ratio)
            cap = limits.cap(size) / (1 << 20)
            r = _child("ingest", faults / name, args.out / f"wh-{name}-{len(env)}", env=env)
            over = r["peak_rss_mib"] - one["peak_rss_mib"]
            print(f"{name:14} {size:9,} {expands:>10} {label:24} {cap:6.0f}Mi {r['outcome']:8} "
                  f"{r['seconds']:7.1f} {r['peak_rss_mib']:7.0f}Mi {over:11.0f}Mi "
                  f"{over / cap:6.2f}")
    print(f"\ntotal {time.perf_counter() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
