"""Ingest ceilings: what an ideal ingest of the bench's files costs on this machine.

    python bench/ceiling.py [--spans 200000] [--spans-per-file 8000] [--out bench/out/ceiling]
    python bench/ceiling.py --input bench/out/input      # files bench/ingest.py generated

Issue 6's targets are ratios to merely parsing the files (JSON: ingest at >= 1.3x the
throughput of `orjson.loads`; protobuf: >= 0.4x that of `ParseFromString`). This runs,
on the same files and in one run, idealised ingests that do only the work no design can
skip (parse, build the turns, store every span losslessly, load the turns into a keyed
table) and prints their ratios. They build one convention's turns with no checks; the
real ingest does all of this and more (dedup, triage, links, key indexes, every
convention decoded exactly), so it can only be slower than the better of them.

JSON (the bench's `json` folder), per file, files spread over `--processes` processes,
then the turns loaded into a keyed DuckDB table in one process, in the `lean` design
(`ceiling_lean`): msgspec decodes typed structs and keeps each span's attributes as the
raw bytes of their OTLP/JSON KeyValue list, which is the `spans/` store's format already,
so storing needs no JSON encoding; turns built in Python from the attributes they read;
both tables written by pyarrow. (A second design, pyarrow's JSON reader with turns built
by one DuckDB query, went with the pyarrow reader in issue 15: it was no faster.)

Protobuf (the `pb` folder): `ParseFromString`, then a walk reading each span's ids, name,
times, status and attribute values into Python, the least a reader over upb messages does
(no columnar protobuf decoder is among our dependencies, and `protarrow` was 140x slower
than parsing); the stages after parsing cost what they cost for JSON (same spans).

Each stage's CPU seconds are printed, so the budget can be read off. Every measure is the
best of `--repeats` (the orjson baseline alone varies by +-40% on a shared machine), and
"shared perfectly" divides the summed CPU seconds by the processes.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import duckdb
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

sys.path.insert(0, str(Path(__file__).parent))
from ceiling_lean import lean_json_file

from ingest import TARGETS, generate, machine, parse_only

STAGES = ("parse", "turns", "spans")


def _json_job(args: tuple[Path, Path]) -> dict[str, float]:
    return lean_json_file(*args)


def ideal_json(files: Sequence[Path], out: Path, processes: int) -> tuple[float, dict[str, float]]:
    """Wall seconds of the lean ideal JSON ingest and CPU s per stage."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    start = time.perf_counter()
    jobs = [(p, out) for p in files]
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        per_file = pool.map(_json_job, jobs, chunksize=1)
    cpu = {s: sum(f[s] for f in per_file) for s in STAGES}
    load_start = time.process_time()
    con = duckdb.connect(str(out / "warehouse.duckdb"))
    con.execute(f"CREATE TABLE turns AS SELECT * FROM '{out}/turns-*.parquet' LIMIT 0")
    con.execute("ALTER TABLE turns ADD PRIMARY KEY (turn_id)")
    con.execute(f"INSERT INTO turns SELECT * FROM '{out}/turns-*.parquet'")
    con.close()
    cpu["load"] = time.process_time() - load_start
    return time.perf_counter() - start, cpu


def ideal_protobuf(files: Sequence[Path]) -> dict[str, float]:
    """CPU seconds of ParseFromString and of the least walk over the messages."""
    cpu = {"parse": 0.0, "walk": 0.0}
    for path in files:
        start = time.process_time()
        request = ExportTraceServiceRequest()
        request.ParseFromString(path.read_bytes())
        cpu["parse"] += time.process_time() - start
        start = time.process_time()
        rows = []
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    rows.append(
                        (
                            span.trace_id.hex(),
                            span.span_id.hex(),
                            span.parent_span_id.hex(),
                            span.name,
                            span.start_time_unix_nano,
                            span.end_time_unix_nano,
                            span.status.code,
                            {
                                a.key: getattr(
                                    a.value, a.value.WhichOneof("value") or "string_value"
                                )
                                for a in span.attributes
                            },
                        )
                    )
        cpu["walk"] += time.process_time() - start
    return cpu


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=200_000)
    parser.add_argument("--spans-per-file", type=int, default=8_000)
    parser.add_argument("--input", type=Path, help="a folder with json/ and pb/ to reuse")
    parser.add_argument("--out", type=Path, default=Path("bench/out/ceiling"))
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="best of N, per measure")
    args = parser.parse_args(argv)
    print("machine: " + ", ".join(f"{k}={v}" for k, v in machine().items()), flush=True)
    if args.input is None:
        args.input = args.out / "input"
        shutil.rmtree(args.input, ignore_errors=True)
        generate(args.input, args.spans, args.spans_per_file, formats=("json", "pb"))
    json_files = sorted((args.input / "json").glob("*.json"))
    pb_files = sorted((args.input / "pb").glob("*.pb"))

    parse = min(parse_only("json", json_files)[0] for _ in range(args.repeats))
    print(f"json: {len(json_files)} files; orjson parse {parse:.2f}s (best of {args.repeats}); "
          f"the {TARGETS['json']}x target leaves {parse * args.processes / TARGETS['json']:.2f} "
          f"CPU s on {args.processes} processes")  # fmt: skip
    runs = [ideal_json(json_files, args.out / "lean", args.processes) for _ in range(args.repeats)]
    wall, cpu = min(runs, key=lambda r: r[0])
    total = sum(cpu.values())
    print(f"  lean: {wall:.2f}s, ratio {parse / wall:.2f}; CPU s "
          + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
          + f"; sum {total:.2f}, ratio {parse * args.processes / total:.2f} if shared "
          "perfectly (spans stored as raw JSON slices)")  # fmt: skip
    after = {k: cpu[k] for k in ("turns", "spans", "load")}

    # After parsing, protobuf spans need what JSON ones need: reuse those stages' cost.
    parse = min(parse_only("pb", pb_files)[0] for _ in range(args.repeats))
    cpu = ideal_protobuf(pb_files) | after
    total = sum(cpu.values())
    budget = parse * args.processes / TARGETS["pb"]
    print(
        f"pb: {len(pb_files)} files; ParseFromString {parse:.2f}s (best of {args.repeats}); "
        f"the {TARGETS['pb']}x target leaves {budget:.2f} CPU s on {args.processes} processes"
    )
    print(
        "  CPU s: "
        + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
        + f"; parse, walk and load alone {cpu['parse'] + cpu['walk'] + cpu['load']:.2f}"
    )
    print(f"  ratio {parse * args.processes / total:.2f} if shared perfectly")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
