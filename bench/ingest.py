"""Ingest benchmark: a realistic synthetic OTLP export, ingested end to end per format.

    python bench/ingest.py [--spans 1000000] [--spans-per-file 8000] [--workers N]
                           [--out bench/out] [--formats json,jsonl,pb] [--input DIR]

Generates agent traces with the real OTel SDK (GenAI semantic-convention attributes, as
`opentelemetry-util-genai` writes them): per trace one `invoke_agent` span, 2-4 `chat`
spans carrying the conversation so far, 1-5 `execute_tool` spans and sometimes a
retrieval span (6-12 spans); sessions of 1-3 turns share a `gen_ai.conversation.id` and
carry earlier turns in their history. Six agents each declare their own 3-10 tools (JSON
Schemas with enums, bounds and nested objects) and call them with fitting arguments. The
same spans are written as OTLP/JSON (one request per file), JSONL (one request per export
batch per line, as the Collector file exporter writes) and protobuf, `--spans-per-file`
spans per file cut in the order spans finish, so traces and sessions straddle files as a
real exporter cuts them.

Each format is ingested into a fresh warehouse in its own process (`run_ingest`: read,
decode, assemble, write Parquet, load DuckDB), which reports spans/s, MB/s and its peak
RSS; the same files are also just parsed (orjson.loads / ParseFromString), in the same
run, and the ingest's throughput is given as a share of that parse-only throughput (the
target, issue 15: JSON >= 0.6x on 2 workers; protobuf ingest at least as many spans/s as
JSON ingest of the same spans). `--workers` (default: ingest's, the cores up to 4) sets
`TURNSCORE_INGEST_WORKERS` for the ingest: processes sharing its partitions of
conversations (`turnscore.ingest.shards`; 1 = this process alone).
Machine details are printed first. Results are printed and written to
`<out>/results.json`.

`--profile` runs each format's ingest once more, in one process (1 worker) under cProfile,
and prints where its CPU goes by stage (read, decode, assemble, links, store write and
read, warehouse load; `STAGES`), and the *floor*: read + decode + span write, what any
ingest of these files pays before assembly. Profiling slows Python code more than the C it
calls: the profile gives each stage's share, printed as seconds of the unprofiled run's CPU.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

from turnscore.ingest.pipeline import default_workers

FORMATS = ("json", "jsonl", "pb")
JSONL_BATCH = 512
"""Spans per line in JSONL: the SDK's default BatchSpanProcessor export size."""
T0 = 1_795_996_800_000_000_000  # 2026-11-30T00:00:00Z

_STR = {"type": "string"}
TOOLS: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    # name: (description, JSON Schema properties, required)
    "search_docs": (
        "Search the product documentation and return matching snippets.",
        {"query": _STR, "top_k": {"type": "integer", "minimum": 1, "maximum": 20}},
        ("query",),
    ),
    "get_weather": (
        "Get the current weather for a city.",
        {"city": _STR, "units": {"type": "string", "enum": ["metric", "imperial"]}},
        ("city",),
    ),
    "calculator": (
        "Evaluate an arithmetic expression and return the result.",
        {"expression": {"type": "string", "description": "e.g. (2 + 3) * 4"}},
        ("expression",),
    ),
    "lookup_order": (
        "Fetch an order by id with its items, status and shipping events.",
        {"order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"}},
        ("order_id",),
    ),
    "create_ticket": (
        "Open a support ticket with a title, body and priority.",
        {"title": _STR, "body": _STR,
         "priority": {"type": "string", "enum": ["low", "normal", "high", "urgent"]}},
        ("title", "body"),
    ),
    "list_invoices": (
        "List a customer's invoices, newest first.",
        {"customer_id": _STR,
         "status": {"type": "string", "enum": ["open", "paid", "void", "overdue"]},
         "limit": {"type": "integer", "minimum": 1, "maximum": 100}},
        ("customer_id",),
    ),
    "refund_payment": (
        "Refund all or part of a captured payment.",
        {"payment_id": _STR, "amount": {"type": "number", "exclusiveMinimum": 0},
         "reason": {"type": "string", "maxLength": 500}},
        ("payment_id", "amount"),
    ),
    "track_shipment": (
        "Get the latest carrier events for a tracking number.",
        {"tracking_number": _STR,
         "carrier": {"type": "string", "enum": ["ups", "fedex", "dhl", "usps"]}},
        ("tracking_number",),
    ),
    "update_address": (
        "Change the shipping address on a customer's account.",
        {"customer_id": _STR,
         "address": {"type": "object", "properties": {
             "street": _STR, "city": _STR, "postal_code": _STR,
             "country": {"type": "string", "minLength": 2, "maxLength": 2}},
             "required": ["street", "city", "country"]}},
        ("customer_id", "address"),
    ),
    "send_email": (
        "Send an email to a customer from the support address.",
        {"to": {"type": "string", "format": "email"}, "subject": _STR, "body": _STR},
        ("to", "subject", "body"),
    ),
    "get_account": (
        "Fetch a customer account: plan, billing cycle, seats and usage.",
        {"account_id": _STR, "include_usage": {"type": "boolean"}},
        ("account_id",),
    ),
    "search_web": (
        "Search the public web and return the top results with snippets.",
        {"query": _STR, "recency_days": {"type": "integer", "minimum": 1}},
        ("query",),
    ),
}
AGENTS = (
    "research_assistant",
    "support_agent",
    "billing_agent",
    "shipping_agent",
    "account_manager",
    "triage_bot",
)
"""Each agent has its own 3-10 tools, drawn once per generator."""

WORDS = (
    "rate",
    "limit",
    "token",
    "request",
    "authentication",
    "bearer",
    "header",
    "quota",
    "retry",
    "backoff",
    "webhook",
    "signature",
    "payload",
    "endpoint",
    "region",
    "latency",
    "timeout",
    "invoice",
    "refund",
    "shipping",
    "carrier",
    "warehouse",
    "parcel",
    "address",
    "customer",
    "account",
    "plan",
    "upgrade",
    "billing",
    "cycle",
    "proration",
)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _tool_definitions(names: Sequence[str]) -> str:
    return json.dumps(
        [
            {
                "type": "function",
                "name": name,
                "description": TOOLS[name][0],
                "parameters": {
                    "type": "object",
                    "properties": TOOLS[name][1],
                    "required": list(TOOLS[name][2]),
                },
            }
            for name in names
        ]
    )


def _arguments(rng: random.Random, name: str) -> dict[str, Any]:
    """Arguments for a call of `name`: its required properties and some optional ones."""
    _, properties, required = TOOLS[name]
    return {
        key: _value(rng, schema)
        for key, schema in properties.items()
        if key in required or rng.random() < 0.5
    }


def _value(rng: random.Random, schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema["type"]
    if kind == "integer":
        return rng.randint(schema.get("minimum", 1), schema.get("maximum", 50))
    if kind == "number":
        return round(rng.uniform(1, 500), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "object":
        return {k: _value(rng, v) for k, v in schema["properties"].items()}
    return _text(rng, rng.randint(1, 6))


class Generator:
    """Agent sessions as real SDK spans, with explicit timestamps."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider(resource=Resource.create({"service.name": "bench-agent"}))
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = provider.get_tracer("opentelemetry.instrumentation.genai", "1.1b0")
        self.now = T0
        self.sessions = 0
        self.agents: dict[str, tuple[list[str], str]] = {}
        for agent in AGENTS:
            names = self.rng.sample(sorted(TOOLS), self.rng.randint(3, 10))
            self.agents[agent] = (names, _tool_definitions(names))

    def spans(self, count: int) -> Iterator[list[ReadableSpan]]:
        """Batches of about `count` finished spans (whole sessions)."""
        while True:
            while len(self.exporter.get_finished_spans()) < count:
                self._session()
            batch = list(self.exporter.get_finished_spans())
            self.exporter.clear()
            yield batch

    def _tick(self, ms: float) -> int:
        self.now += int(ms * 1_000_000)
        return self.now

    def _session(self) -> None:
        self.sessions += 1
        conv = f"sess-{self.sessions:07d}"
        agent = self.rng.choice(AGENTS)
        history: list[dict[str, Any]] = []
        for _ in range(self.rng.randint(1, 3)):
            self._turn(conv, agent, history)
            self._tick(self.rng.uniform(2_000, 60_000))

    def _turn(self, conv: str, agent_name: str, history: list[dict[str, Any]]) -> None:
        rng = self.rng
        tool_names, tool_defs = self.agents[agent_name]
        request = _text(rng, rng.randint(8, 30)).rstrip(".") + "?"
        history.append({"role": "user", "parts": [{"type": "text", "content": request}]})
        chats = rng.randint(2, 4)
        tools = max(rng.randint(1, 5), chats - 1, 5 - chats)
        per_step = [0] * (chats - 1)
        for i in range(tools):
            per_step[i % (chats - 1)] += 1
        agent = self.tracer.start_span(
            f"invoke_agent {agent_name}",
            kind=SpanKind.INTERNAL,
            start_time=self._tick(1),
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent_name,
                "gen_ai.conversation.id": conv,
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.tool.definitions": tool_defs,
                "gen_ai.system_instructions": json.dumps(
                    [{"type": "text", "content": "You are a helpful assistant. Use the tools."}]
                ),
            },
        )
        ctx = set_span_in_context(agent)
        if rng.random() < 0.5:
            mem = self.tracer.start_span(
                "retrieve_memory",
                context=ctx,
                start_time=self._tick(2),
                attributes={"memory.hits": rng.randint(0, 5)},
            )
            mem.end(end_time=self._tick(rng.uniform(5, 40)))
        for step in range(chats):
            calls = per_step[step] if step < chats - 1 else 0
            self._chat(ctx, history, calls, tool_names)
            for call in history[-1]["parts"] if calls else ():
                self._tool(ctx, call, history)
        agent.end(end_time=self._tick(2))

    def _chat(
        self, ctx: Any, history: list[dict[str, Any]], calls: int, tool_names: list[str]
    ) -> None:
        rng = self.rng
        span = self.tracer.start_span(
            "chat gpt-4o-mini", context=ctx, kind=SpanKind.CLIENT, start_time=self._tick(3)
        )
        if calls:
            parts = [
                {
                    "type": "tool_call",
                    "id": f"call_{rng.getrandbits(64):016x}",
                    "name": name,
                    "arguments": _arguments(rng, name),
                }
                for name in (rng.choice(tool_names) for _ in range(calls))
            ]
            out = {"role": "assistant", "parts": parts, "finish_reason": "tool_calls"}
        else:
            out = {
                "role": "assistant",
                "parts": [{"type": "text", "content": _text(rng, rng.randint(30, 120))}],
                "finish_reason": "stop",
            }
        inp = json.dumps(history)
        span.set_attributes(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                "gen_ai.response.id": f"chatcmpl-{rng.getrandbits(64):016x}",
                "gen_ai.response.finish_reasons": (str(out["finish_reason"]),),
                "gen_ai.usage.input_tokens": len(inp) // 4,
                "gen_ai.usage.output_tokens": len(json.dumps(out)) // 4,
                "gen_ai.input.messages": inp,
                "gen_ai.output.messages": json.dumps([out]),
                "server.address": "api.openai.com",
                "server.port": 443,
            }
        )
        span.end(end_time=self._tick(rng.uniform(300, 4_000)))
        history.append(out)

    def _tool(self, ctx: Any, call: dict[str, Any], history: list[dict[str, Any]]) -> None:
        rng = self.rng
        failed = rng.random() < 0.05
        result = (
            "Error: upstream timeout"
            if failed
            else json.dumps(
                [
                    {
                        "id": f"doc-{rng.randint(1, 999)}",
                        "title": _text(rng, 3),
                        "snippet": _text(rng, rng.randint(20, 80)),
                    }
                    for _ in range(rng.randint(1, 4))
                ]
            )
        )
        span = self.tracer.start_span(
            f"execute_tool {call['name']}",
            context=ctx,
            start_time=self._tick(1),
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call["name"],
                "gen_ai.tool.call.id": call["id"],
                "gen_ai.tool.type": "function",
                "gen_ai.tool.call.arguments": json.dumps(call["arguments"]),
                "gen_ai.tool.call.result": result,
            },
        )
        if failed:
            span.set_status(Status(StatusCode.ERROR, "upstream timeout"))
            span.set_attribute("error.type", "TimeoutError")
        span.end(end_time=self._tick(rng.uniform(20, 900)))
        history.append(
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": call["id"], "response": result}],
            }
        )


# --- OTLP/JSON (spec dialect: hex ids, integer enums, int64 as strings) -----------------


def _any(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    return {"arrayValue": {"values": [_any(v) for v in value]}}


def _kvs(attrs: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any(v)} for k, v in (attrs or {}).items()]


def _span_json(s: ReadableSpan) -> dict[str, Any]:
    ctx = s.get_span_context()
    assert ctx is not None  # a finished SDK span always has one
    out: dict[str, Any] = {
        "traceId": f"{ctx.trace_id:032x}",
        "spanId": f"{ctx.span_id:016x}",
        "name": s.name,
        "kind": s.kind.value + 1,
        "startTimeUnixNano": str(s.start_time),
        "endTimeUnixNano": str(s.end_time),
        "attributes": _kvs(s.attributes),
        "status": {"code": s.status.status_code.value},
    }
    if s.parent is not None:
        out["parentSpanId"] = f"{s.parent.span_id:016x}"
    if s.status.description:
        out["status"]["message"] = s.status.description
    return out


def _request_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    scope = spans[0].instrumentation_scope
    assert scope is not None  # set by the tracer that made them
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _kvs(spans[0].resource.attributes)},
                "scopeSpans": [
                    {
                        "scope": {
                            "name": scope.name,
                            "version": scope.version,
                        },
                        "spans": [_span_json(s) for s in spans],
                    }
                ],
            }
        ]
    }


def generate(
    out: Path,
    total: int,
    per_file: int,
    gen: Generator | None = None,
    formats: Sequence[str] = FORMATS,
) -> dict[str, list[Path]]:
    """`total` spans in files of `per_file` (the last may be short) per format."""
    files: dict[str, list[Path]] = {f: [] for f in formats}
    for f in formats:
        (out / f).mkdir(parents=True, exist_ok=True)
    gen = gen or Generator()
    sessions = gen.spans(per_file)
    pending: list[ReadableSpan] = []
    made = n = 0
    while made < total:
        while len(pending) < per_file:
            pending.extend(next(sessions))
        # Cut in finish order, like an exporter: a trace's agent span often lands in the
        # next file, after its children.
        size = min(per_file, total - made)
        batch, pending = pending[:size], pending[size:]
        made += size
        n += 1
        stem = f"export-{n:04d}"
        if "json" in files:
            path = out / "json" / f"{stem}.json"
            path.write_bytes(orjson.dumps(_request_json(batch)))
            files["json"].append(path)
        if "jsonl" in files:
            path = out / "jsonl" / f"{stem}.jsonl"
            with open(path, "wb") as fh:
                for i in range(0, len(batch), JSONL_BATCH):
                    fh.write(orjson.dumps(_request_json(batch[i : i + JSONL_BATCH])) + b"\n")
            files["jsonl"].append(path)
        if "pb" in files:
            path = out / "pb" / f"{stem}.pb"
            path.write_bytes(encode_spans(batch).SerializeToString())
            files["pb"].append(path)
    return files


def parse_only(fmt: str, files: Sequence[Path]) -> tuple[float, float]:
    """Wall and CPU seconds to just parse the files: the floor any ingester pays."""
    start, cpu = time.perf_counter(), time.process_time()
    for path in files:
        data = path.read_bytes()
        if fmt == "json":
            orjson.loads(data)
        elif fmt == "jsonl":
            for line in data.splitlines():
                orjson.loads(line)
        else:
            ExportTraceServiceRequest().ParseFromString(data)
    return time.perf_counter() - start, time.process_time() - cpu


TARGETS = {"json": 0.6, "jsonl": 0.6, "pb": 0.0}
"""Ingest throughput over parse-only throughput each format should reach (protobuf's
target is JSON's spans/s, printed beside it)."""


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"cores": os.cpu_count(), "python": sys.version.split()[0]}
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")),
                         "unknown")
        with open("/proc/meminfo") as fh:
            kib = next(int(ln.split()[1]) for ln in fh if ln.startswith("MemTotal"))
        info.update(cpu=model, ram_gib=round(kib / 1024 / 1024, 1))
    except (OSError, StopIteration, ValueError):
        info.update(cpu="unknown", ram_gib=None)
    info.update(pyarrow=pyarrow.__version__, duckdb=duckdb.__version__, orjson=orjson.__version__)
    return info


STAGES: dict[str, tuple[tuple[str, str], ...]] = {
    # stage: (module path suffix, function name), summed by cumulative time; none nests
    # in another of the list.
    "read": (("ingest/inputs.py", "read_into"),),
    "decode": (("ingest/decode.py", "decode_spans"),),
    "assemble": (("ingest/assemble.py", "assemble_turns"),),
    "links": (("ingest/links.py", "span_links"), ("ingest/links.py", "lookups"),
              ("ingest/links.py", "join_keys"), ("ingest/partition.py", "join_keys")),
    "span write": (("ingest/store.py", "write_parts"),),
    "turn write": (("ingest/store.py", "replace"),),
    "store read": (("ingest/store.py", "read"), ("ingest/store.py", "linked_traces")),
    "load": (("warehouse/ingest_run.py", "load_batch"),),
}
FLOOR = ("read", "decode", "span write")
"""The stages any ingest of the files pays: parse, decode into records, write them."""


def ingest_child(folder: Path, warehouse: Path, profile: bool = False) -> None:
    """Run in a fresh process so peak RSS is the ingest's own."""
    from turnscore.warehouse.ingest_run import run_ingest

    profiler = cProfile.Profile(time.process_time) if profile else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    report = run_ingest([folder], warehouse)
    if profiler is not None:
        profiler.disable()
    seconds = time.perf_counter() - start
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    peak_kib = max(u.ru_maxrss for u in usage)  # children: the read/decode workers
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    out = {
        "seconds": seconds,
        "spans": report.spans,
        "turns": report.turns_new,
        "errors": len(report.errors),
        "outcome": report.outcome,
        "peak_rss_mib": peak_kib / 1024,
        "cpu_seconds": cpu,
        # This process's share: what the workers cannot take (reading, re-solves, turn
        # writes, the load) bounds the wall time on an idle machine.
        "parent_cpu_seconds": usage[0].ru_utime + usage[0].ru_stime,
    }
    if profiler is not None:
        out["stages"] = stage_shares(pstats.Stats(profiler))
    print(json.dumps(out))


def stage_shares(stats: pstats.Stats) -> dict[str, float]:
    """Share of the profiled CPU per `STAGES` entry, and "other"; they sum to 1."""
    found = {stage: 0.0 for stage in STAGES}
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    for (filename, _, name), (_, _, _, cumulative, _) in raw.items():
        for stage, functions in STAGES.items():
            if any(filename.endswith(path) and name == fn for path, fn in functions):
                found[stage] += cumulative
    total = stats.total_tt  # type: ignore[attr-defined]
    out = {stage: sec / total for stage, sec in found.items()}
    out["other"] = max(0.0, 1 - sum(out.values()))
    return out


def print_profile(fmt: str, shares: dict[str, float], cpu: float, parse_cpu: float,
                  workers: int) -> None:
    """`shares` (`stage_shares`) as seconds of `cpu`, the unprofiled ingest's CPU."""
    print(f"  {fmt}: CPU by stage ({cpu:.1f}s, shares from a one-process profile):", flush=True)
    for stage, share in shares.items():
        print(f"    {stage:11} {share * cpu:6.2f}s {100 * share:5.1f}%", flush=True)
    floor = sum(shares[s] for s in FLOOR) * cpu
    # The best ratio an ingest paying only the floor could reach, its work spread evenly
    # over the workers and nothing else running.
    print(f"    floor ({' + '.join(FLOOR)}): {floor:.2f}s CPU; parse-only {parse_cpu:.2f}s; "
          f"best ratio on {workers} worker(s) {workers * parse_cpu / floor:.2f}x", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--spans-per-file", type=int, default=8_000)
    parser.add_argument("--out", type=Path, default=Path("bench/out"))
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--profile", action="store_true",
                        help="also print a per-stage CPU profile (one process) per format")
    parser.add_argument("--input", type=Path,
                        help="reuse the files an earlier run generated (its <out>/input): "
                        "two checkouts measured on the same bytes, no generation")
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        ingest_child(*args.child, profile=args.profile)
        return 0
    if args.input and args.out.resolve() in (args.input.resolve(), *args.input.resolve().parents):
        parser.error("--input must lie outside --out, which each run empties")
    shutil.rmtree(args.out, ignore_errors=True)
    info = machine()
    print("machine: " + ", ".join(f"{k}={v}" for k, v in info.items()), flush=True)
    print(f"ingest workers: {args.workers}", flush=True)
    start = time.perf_counter()
    formats = args.formats.split(",")
    inputs = args.input or args.out / "input"
    if args.input:
        files = {f: sorted((args.input / f).iterdir()) for f in formats}
        print(f"reusing {len(files[formats[0]])} file(s) per format from {args.input}",
              flush=True)
    else:
        files = generate(args.out / "input", args.spans, args.spans_per_file, formats=formats)
        print(
            f"generated {args.spans:,} spans in {len(files[formats[0]])} file(s) per format "
            f"in {time.perf_counter() - start:.1f}s (OTel SDK)",
            flush=True,
        )
    results = []
    print(
        f"{'format':6} {'MB':>7} {'seconds':>8} {'spans/s':>9} {'MB/s':>6} {'peak RSS':>9} "
        f"{'parse s':>8} {'parse sp/s':>10} {'ratio':>6} {'target':>7}",
        flush=True,
    )
    for fmt in formats:
        size = sum(p.stat().st_size for p in files[fmt]) / 1e6
        parse, parse_cpu = parse_only(fmt, files[fmt])
        r = _run_child(args.out, inputs, fmt, args.workers)
        row = {
            "format": fmt,
            "mb": size,
            "parse_seconds": parse,
            "parse_cpu_seconds": parse_cpu,
            **r,
            "spans_per_s": r["spans"] / r["seconds"],
            "mb_per_s": size / r["seconds"],
            "parse_spans_per_s": r["spans"] / parse,
            # The target metric: ingest throughput as a share of parse-only throughput.
            "throughput_ratio": parse / r["seconds"],
            # The same in CPU time: less sensitive to what else the machine runs.
            "cpu_ratio": parse_cpu / r["cpu_seconds"],
            "target_ratio": TARGETS[fmt],
            "workers": args.workers,
        }
        results.append(row)
        print(
            f"{fmt:6} {size:7.1f} {r['seconds']:8.1f} {row['spans_per_s']:9,.0f} "
            f"{row['mb_per_s']:6.1f} {r['peak_rss_mib']:7.0f}Mi {parse:8.2f} "
            f"{row['parse_spans_per_s']:10,.0f} {row['throughput_ratio']:6.3f} "
            f"{'met' if row['throughput_ratio'] >= TARGETS[fmt] else 'NOT met':>7}"
            f"  (>= {TARGETS[fmt]}; cpu {r['cpu_seconds']:.1f}s, of it parent "
            f"{r['parent_cpu_seconds']:.1f}s, cpu ratio {row['cpu_ratio']:.3f}; "
            f"{r['turns']:,} turns, {r['errors']} errors, "
            f"{r['outcome']})",
            flush=True,
        )
        if args.profile:
            row["stages"] = _run_child(args.out, inputs, fmt, 1, profile=True)["stages"]
            print_profile(fmt, row["stages"], r["cpu_seconds"], parse_cpu, args.workers)
    out = {"machine": info, "spans": results[0]["spans"] if results else 0, "results": results}
    (args.out / "results.json").write_text(json.dumps(out, indent=2))
    # Timings depend on what else the machine runs; say so next to them.
    print("load average (1, 5, 15 min): {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    return 0


def _run_child(out: Path, inputs: Path, fmt: str, workers: int, *,
               profile: bool = False) -> dict[str, Any]:
    """`ingest_child` of `inputs/fmt` on a fresh warehouse in its own process; its report."""
    warehouse = out / f"wh-{fmt}{'-profile' if profile else ''}"
    env = {**os.environ, "TURNSCORE_INGEST_WORKERS": str(workers)}
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(inputs / fmt), str(warehouse),
         *(["--profile"] if profile else [])],
        check=True, capture_output=True, text=True, env=env,
    )
    report: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return report


if __name__ == "__main__":
    sys.exit(main())
