"""Parse-only ceilings and the OTLP reader: how fast the parsers at hand, and
`turnscore.ingest.otlp.read_file`, read the ingest benchmark's files.

    python bench/parsers.py [--spans 48000] [--spans-per-file 8000] [--repeats 3]
                            [--out bench/out/parsers] [--no-columnar] [--reuse]

Issue 15 asks for a JSON ingest at 0.6x the throughput of merely parsing the same files
with orjson, and a protobuf ingest at least as fast as the JSON one. This prints, on the
files of `bench/ingest.py`'s generator (JSON Lines: one export batch per line; and the
same spans as protobuf), what the reader does against what the machine can parse at all:

- `orjson.loads` per line: the issue's baseline (one core, Python objects);
- msgspec decoding into the reader's typed structs (`otlp_json._Request`): the reader's
  own parse, the floor of its JSON cost;
- the reader (`read_file`, every check), JSON Lines and protobuf: every span a `RawSpan`;
- `ParseFromString` of the protobuf files (upb), the floor of the protobuf reader;
- unless --no-columnar: `pyarrow.json.read_json` with an explicit OTLP schema and DuckDB
  `read_json` with the same columns, spans unnested (both cores).

Best of --repeats per row, wall and CPU seconds, and the ratio of each to orjson's wall
and CPU time (on a loaded machine the CPU ratio is the steadier one). Run it with another
checkout's interpreter (`/path/.venv/bin/python bench/parsers.py --reuse`) to measure
that checkout's reader on the same files. Like every bench
here, compare ratios within one run: the machine is shared.
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
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

sys.path.insert(0, str(Path(__file__).parent))
from ingest import generate, machine
from turnscore.ingest.otlp import read_file
from turnscore.ingest.records import RawSpan

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


def msgspec_structs(files: Sequence[Path]) -> int:
    from turnscore.ingest.otlp_json import _DECODER  # absent before the typed reader

    spans = 0
    for path in files:
        for line in path.read_bytes().splitlines():
            for rs in _DECODER.decode(line).resourceSpans:
                spans += sum(len(ss.spans) for ss in rs.scopeSpans)
    return spans


def reader(files: Sequence[Path]) -> int:
    return sum(isinstance(r, RawSpan) for path in files for r in read_file(path))


def protobuf_parse(files: Sequence[Path]) -> int:
    spans = 0
    for path in files:
        request = ExportTraceServiceRequest.FromString(path.read_bytes())
        spans += sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
    return spans


PARSERS: dict[str, tuple[str, Callable[[Sequence[Path]], int]]] = {
    "orjson (baseline)": ("jsonl", orjson_lines),
    "msgspec structs": ("jsonl", msgspec_structs),
    "reader, JSON Lines": ("jsonl", reader),
    "protobuf parse": ("pb", protobuf_parse),
    "reader, protobuf": ("pb", reader),
    "pyarrow.json": ("jsonl", pyarrow_json),
    "duckdb read_json": ("jsonl", duckdb_json),
}
COLUMNAR = ("pyarrow.json", "duckdb read_json")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spans", type=int, default=48_000)
    p.add_argument("--spans-per-file", type=int, default=8_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", type=Path, default=Path("bench/out/parsers"))
    p.add_argument("--no-columnar", action="store_true", help="skip pyarrow and DuckDB")
    p.add_argument("--reuse", action="store_true", help="read the files a run left in --out")
    args = p.parse_args(argv)
    print("machine: " + ", ".join(f"{k}={v}" for k, v in machine().items()), flush=True)
    if args.reuse:
        files = {fmt: sorted((args.out / fmt).glob("*")) for fmt in ("jsonl", "pb")}
        args.spans = protobuf_parse(files["pb"])  # what the files hold, not --spans
    else:
        files = generate(args.out, args.spans, args.spans_per_file, formats=("jsonl", "pb"))
    mb = {fmt: sum(f.stat().st_size for f in paths) / 1e6 for fmt, paths in files.items()}
    print(f"{len(files['jsonl'])} file(s) per format, {mb['jsonl']:,.1f} MB JSON Lines, "
          f"{mb['pb']:,.1f} MB protobuf, {args.spans:,} spans")
    print(f"{'parser':<20} {'wall s':>7} {'cpu s':>7} {'MB/s':>7} {'spans/s':>10} {'x orjson':>9} "
          f"{'cpu x orjson':>12}")
    base = base_cpu = 0.0
    for name, (fmt, parse) in PARSERS.items():
        if args.no_columnar and name in COLUMNAR:
            continue
        best_wall, best_cpu, spans = float("inf"), float("inf"), 0
        try:
            for _ in range(args.repeats):
                wall, cpu = time.perf_counter(), time.process_time()
                spans = parse(files[fmt])
                best_wall = min(best_wall, time.perf_counter() - wall)
                best_cpu = min(best_cpu, time.process_time() - cpu)
        except ImportError as exc:  # a checkout without this stage
            print(f"{name:<20} (not in this checkout: {exc})")
            continue
        if spans != args.spans:
            raise RuntimeError(f"{name} found {spans:,} spans, expected {args.spans:,}")
        base, base_cpu = base or best_wall, base_cpu or best_cpu
        print(f"{name:<20} {best_wall:>7.2f} {best_cpu:>7.2f} {mb[fmt] / best_wall:>7.0f} "
              f"{spans / best_wall:>10,.0f} {base / best_wall:>9.2f} "
              f"{base_cpu / best_cpu:>12.2f}", flush=True)
    base_mb = mb["jsonl"] / base
    print(f"an end-to-end ingest at the 0.6x target would read {0.6 * base_mb:,.0f} MB/s")
    print("load average (1, 5, 15 min): {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
