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
then the turns loaded into a keyed DuckDB table in one process; two designs:
- `sql`: pyarrow's JSON reader into the Arrow span table (`arrow_read.read_span_table`,
  the reader the ingest uses), turns by one DuckDB query (`TURNS_SQL`), spans written by
  DuckDB with attributes as JSON text (`to_json`; `--native-spans`: as Arrow);
- `lean` (`ceiling_lean`): msgspec decodes typed structs and keeps each span's
  attributes as the raw bytes of their OTLP/JSON KeyValue list, which is the `spans/`
  store's format already, so storing needs no JSON encoding; turns built in Python from
  the attributes they read; both tables written by pyarrow. Same turns as `sql`.

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
from turnscore.ingest.arrow_read import read_span_table


def _attr(key: str, member: str = "stringValue") -> str:
    return f"list_filter(attributes, lambda a: a.key = '{key}')[1].value.{member}"


TURNS_SQL = f"""
WITH s AS (
    SELECT trace_id, span_id, parent_span_id, start_unix_nano AS st, end_unix_nano AS en,
        status_code,
        {_attr("gen_ai.operation.name")} AS op,
        {_attr("gen_ai.conversation.id")} AS cid,
        {_attr("gen_ai.agent.name")} AS agent,
        {_attr("gen_ai.input.messages")} AS inputs,
        {_attr("gen_ai.output.messages")} AS outputs,
        {_attr("gen_ai.tool.definitions")} AS tool_defs,
        {_attr("gen_ai.system_instructions")} AS system,
        {_attr("gen_ai.tool.name")} AS tool,
        {_attr("gen_ai.tool.call.id")} AS call_id,
        {_attr("gen_ai.tool.call.arguments")} AS arguments,
        {_attr("gen_ai.tool.call.result")} AS result,
        CAST({_attr("gen_ai.usage.input_tokens", "intValue")} AS BIGINT) AS input_tokens,
        CAST({_attr("gen_ai.usage.output_tokens", "intValue")} AS BIGINT) AS output_tokens
    FROM spans
),
chats AS (
    SELECT trace_id, arg_min(inputs, st) AS first_input, arg_max(outputs, st) AS last_output,
        count(*) AS llm_calls, sum(input_tokens) AS input_tokens,
        sum(output_tokens) AS output_tokens, min(st) AS st, max(en) AS en
    FROM s WHERE op = 'chat' GROUP BY trace_id
),
calls AS (
    SELECT trace_id, list(struct_pack(
        name := tool, call_id := call_id, arguments := arguments, result := result,
        status := CASE WHEN status_code = 2 THEN 'error' ELSE 'ok' END,
        started_at := make_timestamp(st // 1000), duration_ms := (en - st) / 1e6
    ) ORDER BY st) AS calls
    FROM s WHERE op = 'execute_tool' GROUP BY trace_id
)
SELECT md5(r.trace_id || r.span_id) AS turn_id, r.trace_id, r.cid AS conversation_id,
    make_timestamp(c.st // 1000) AS started_at, make_timestamp(c.en // 1000) AS ended_at,
    json_extract_string(c.first_input, '$[#-1].parts[0].content') AS request,
    json_extract_string(r.system, '$[0].content') AS system_instructions,
    from_json(r.tool_defs, '[{{"name": "VARCHAR", "description": "VARCHAR",
                               "parameters": "JSON"}}]') AS tools,
    coalesce(k.calls, []) AS calls,
    json_extract_string(c.last_output, '$[0].parts[0].content') AS final_answer,
    c.llm_calls, c.input_tokens, c.output_tokens, r.agent AS agent_name,
    md5(concat_ws('|', request, r.tool_defs, final_answer)) AS content_hash
FROM s AS r JOIN chats AS c USING (trace_id) LEFT JOIN calls AS k USING (trace_id)
WHERE r.parent_span_id IS NULL AND r.op = 'invoke_agent'
"""

SPANS_SQL = """
SELECT trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano,
    status_code, status_message, {attributes} AS attributes, to_json(events) AS events,
    to_json(resource) AS resource, scope_name, scope_version, source, position
FROM spans ORDER BY trace_id, start_unix_nano
"""

STAGES = ("parse", "turns", "spans")


def json_file(path: Path, out: Path, native_spans: bool) -> dict[str, float]:
    """Stages 1-3 for one file: CPU seconds per stage."""
    cpu: dict[str, float] = {}
    start = time.process_time()
    table = read_span_table(path)
    if table is None:
        raise SystemExit(f"{path}: pyarrow cannot read it (the bench writes files it can)")
    cpu["parse"] = time.process_time() - start
    con = duckdb.connect()
    con.execute("SET threads = 1")  # one process per core already
    con.register("spans", table)
    start = time.process_time()
    con.execute(f"COPY ({TURNS_SQL}) TO '{out}/turns-{path.stem}.parquet' (FORMAT parquet)")
    cpu["turns"] = time.process_time() - start
    start = time.process_time()
    sql = SPANS_SQL.format(attributes="attributes" if native_spans else "to_json(attributes)")
    con.execute(f"COPY ({sql}) TO '{out}/spans-{path.stem}.parquet' (FORMAT parquet)")
    cpu["spans"] = time.process_time() - start
    con.close()
    return cpu


def _json_job(args: tuple[str, Path, Path, bool]) -> dict[str, float]:
    design, path, out, native_spans = args
    return lean_json_file(path, out) if design == "lean" else json_file(path, out, native_spans)


def ideal_json(
    design: str, files: Sequence[Path], out: Path, processes: int, native_spans: bool
) -> tuple[float, dict[str, float]]:
    """Wall seconds of an ideal JSON ingest (`design`: sql or lean) and CPU s per stage."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    start = time.perf_counter()
    jobs = [(design, p, out, native_spans) for p in files]
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
    parser.add_argument(
        "--native-spans",
        action="store_true",
        help="sql design: store attributes as Arrow, not JSON text",
    )
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
    spans_as = "Arrow" if args.native_spans else "JSON text"
    for design in ("sql", "lean"):
        runs = [
            ideal_json(design, json_files, args.out / design, args.processes, args.native_spans)
            for _ in range(args.repeats)
        ]
        wall, cpu = min(runs, key=lambda r: r[0])
        total = sum(cpu.values())
        stored = "raw JSON slices" if design == "lean" else spans_as
        print(f"  {design}: {wall:.2f}s, ratio {parse / wall:.2f}; CPU s "
              + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
              + f"; sum {total:.2f}, ratio {parse * args.processes / total:.2f} if shared "
              f"perfectly (spans stored as {stored})")  # fmt: skip
        if design == "sql":
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
