"""Parse-only ceilings: how fast the JSON parsers at hand read the ingest benchmark's files.

    python bench/parsers.py [--spans 48000] [--spans-per-file 8000] [--repeats 3]
                            [--out bench/out/parsers]

Issue 6 asks for an end-to-end JSON ingest at 1.3x the throughput of merely parsing the
same files with orjson. This prints what each parser that could carry a columnar ingest
does with those files (the generator of `bench/ingest.py`, JSON Lines: one export batch
per line), so the target can be set against what the machine can parse at all:

- `orjson.loads` per line: the issue's baseline (one core, Python objects);
- `pyarrow.json.read_json` with an explicit OTLP schema (spans, attributes and their
  string/int/double/bool values; both cores);
- DuckDB `read_json` with the same columns, spans unnested (both cores).

Best of --repeats per parser, wall and CPU seconds, and the ratio of each to orjson's
wall time. Like every bench here, compare ratios within one run: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa
import pyarrow.json as pj

sys.path.insert(0, str(Path(__file__).parent))
from ingest import generate, machine

_VALUE = pa.struct([("stringValue", pa.string()), ("intValue", pa.string()),
                    ("doubleValue", pa.float64()), ("boolValue", pa.bool_())])
_ATTRIBUTES = pa.list_(pa.struct([("key", pa.string()), ("value", _VALUE)]))
_SPAN = pa.struct([
    ("traceId", pa.string()), ("spanId", pa.string()), ("parentSpanId", pa.string()),
    ("name", pa.string()), ("kind", pa.int64()), ("startTimeUnixNano", pa.string()),
    ("endTimeUnixNano", pa.string()), ("attributes", _ATTRIBUTES),
    ("status", pa.struct([("code", pa.int64()), ("message", pa.string())])),
])
_SCOPE_SPANS = pa.struct([
    ("scope", pa.struct([("name", pa.string()), ("version", pa.string())])),
    ("spans", pa.list_(_SPAN)),
])
OTLP_SCHEMA = pa.schema([("resourceSpans", pa.list_(pa.struct([
    ("resource", pa.struct([("attributes", _ATTRIBUTES)])),
    ("scopeSpans", pa.list_(_SCOPE_SPANS)),
])))])

_DUCK_VALUE = "STRUCT(stringValue VARCHAR, intValue VARCHAR, doubleValue DOUBLE, boolValue BOOLEAN)"
_DUCK_ATTRIBUTES = f"STRUCT(key VARCHAR, value {_DUCK_VALUE})[]"
_DUCK_SPAN = (
    "STRUCT(traceId VARCHAR, spanId VARCHAR, parentSpanId VARCHAR, name VARCHAR, kind BIGINT, "
    f"startTimeUnixNano VARCHAR, endTimeUnixNano VARCHAR, attributes {_DUCK_ATTRIBUTES}, "
    "status STRUCT(code BIGINT, message VARCHAR))[]"
)
_DUCK_RESOURCE_SPANS = (
    f"STRUCT(resource STRUCT(attributes {_DUCK_ATTRIBUTES}), scopeSpans "
    f"STRUCT(scope STRUCT(name VARCHAR, version VARCHAR), spans {_DUCK_SPAN})[])[]"
)
# Counting the unnested spans' attributes makes DuckDB build every span and attribute.
DUCKDB_SPANS = f"""
SELECT count(*), sum(len(s.attributes)) FROM (
  SELECT unnest(ss.spans) AS s FROM (
    SELECT unnest(rs.scopeSpans) AS ss FROM (
      SELECT unnest(resourceSpans) AS rs
      FROM read_json($files, columns = {{resourceSpans: '{_DUCK_RESOURCE_SPANS}'}},
                     format = 'newline_delimited', maximum_object_size = 1000000000))))
"""


def orjson_lines(files: Sequence[Path]) -> int:
    spans = 0
    for path in files:
        for line in path.read_bytes().splitlines():
            for rs in orjson.loads(line)["resourceSpans"]:
                spans += sum(len(ss["spans"]) for ss in rs["scopeSpans"])
    return spans


def pyarrow_json(files: Sequence[Path]) -> int:
    # A block must hold whole lines: one export batch per line can be tens of MB.
    block = max(p.stat().st_size for p in files) + 1
    options = pj.ReadOptions(block_size=block, use_threads=True)
    parse = pj.ParseOptions(explicit_schema=OTLP_SCHEMA, unexpected_field_behavior="ignore")
    spans = 0
    for path in files:
        table = pj.read_json(path, read_options=options, parse_options=parse)
        scope_spans = table.column("resourceSpans").combine_chunks().flatten().field("scopeSpans")
        spans += len(scope_spans.flatten().field("spans").flatten())
    return spans


def duckdb_json(files: Sequence[Path]) -> int:
    con = duckdb.connect()
    try:
        con.execute("SET threads = 2")
        rows = con.execute(DUCKDB_SPANS, {"files": [str(p) for p in files]}).fetchall()
        return int(rows[0][0])
    finally:
        con.close()


PARSERS: dict[str, Callable[[Sequence[Path]], int]] = {
    "orjson (baseline)": orjson_lines,
    "pyarrow.json": pyarrow_json,
    "duckdb read_json": duckdb_json,
}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spans", type=int, default=48_000)
    p.add_argument("--spans-per-file", type=int, default=8_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", type=Path, default=Path("bench/out/parsers"))
    args = p.parse_args(argv)
    print("machine: " + ", ".join(f"{k}={v}" for k, v in machine().items()), flush=True)
    files = generate(args.out, args.spans, args.spans_per_file, formats=("jsonl",))["jsonl"]
    mb = sum(f.stat().st_size for f in files) / 1e6
    print(f"{len(files)} JSON Lines file(s), {mb:,.1f} MB, {args.spans:,} spans")
    print(f"{'parser':<20} {'wall s':>7} {'cpu s':>7} {'MB/s':>7} {'spans/s':>10} {'x orjson':>9}")
    base = 0.0
    for name, parse in PARSERS.items():
        best_wall, best_cpu, spans = float("inf"), float("inf"), 0
        for _ in range(args.repeats):
            wall, cpu = time.perf_counter(), time.process_time()
            spans = parse(files)
            best_wall = min(best_wall, time.perf_counter() - wall)
            best_cpu = min(best_cpu, time.process_time() - cpu)
        if spans != args.spans:
            raise RuntimeError(f"{name} found {spans:,} spans, expected {args.spans:,}")
        base = base or best_wall
        print(f"{name:<20} {best_wall:>7.2f} {best_cpu:>7.2f} {mb / best_wall:>7.0f} "
              f"{spans / best_wall:>10,.0f} {base / best_wall:>9.2f}")
    print(f"an end-to-end ingest at the 1.3x target would read {1.3 * mb / base:,.0f} MB/s")
    print("load average (1, 5, 15 min): {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
