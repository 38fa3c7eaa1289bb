"""Shared by the benchmarks: the machine's details and synthetic warehouse data.

`SyntheticTurns` writes realistic turns straight into a warehouse as Arrow (no OTLP, no
assembly: the score and view benchmarks start where ingest ends). A pool of *templates*
is drawn with `random` (tools with JSON Schemas, 0-5 calls with arguments and results,
answers of 100-1,500 characters built from the results' facts, some hallucinated,
some invalid or duplicate calls, tool errors, uncaptured results); each turn is a
template drawn at random, made unique with a ticket id that appears in both its request
and its answer. A share of turns carry the case id of a labelled template (canary,
ideal response, expected tools).
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import orjson
import polars
import pyarrow as pa
import pyarrow.compute as pc

from turnscore.ingest.schema import arrow_schema
from turnscore.scorers.text import normalize_series

T0 = datetime(2026, 11, 1, tzinfo=UTC)
DAYS = 30


def machine() -> dict[str, Any]:
    """Cores, RAM, CPU model and library versions: printed with every benchmark."""
    info: dict[str, Any] = {"cores": os.cpu_count(), "python": sys.version.split()[0]}
    try:
        with open("/proc/cpuinfo") as fh:
            info["cpu"] = next((ln.split(":", 1)[1].strip() for ln in fh
                                if ln.startswith("model name")), "unknown")
        with open("/proc/meminfo") as fh:
            kib = next(int(ln.split()[1]) for ln in fh if ln.startswith("MemTotal"))
        info["ram_gib"] = round(kib / 1024 / 1024, 1)
    except (OSError, StopIteration, ValueError):
        info.update(cpu="unknown", ram_gib=None)
    info.update(duckdb=duckdb.__version__, polars=polars.__version__, pyarrow=pa.__version__,
                orjson=orjson.__version__)
    return info


def _obj(props: dict[str, Any], required: list[str]) -> str:
    return orjson.dumps({"type": "object", "properties": props, "required": required,
                         "additionalProperties": False}).decode()


S, INT, N = {"type": "string"}, {"type": "integer"}, {"type": "number"}
TOOLS: dict[str, tuple[str, str]] = {
    "get_weather": ("Current weather for a city.",
                    _obj({"city": S, "units": {"enum": ["celsius", "fahrenheit"]}}, ["city"])),
    "lookup_order": ("Fetch an order by id.",
                     _obj({"order_id": {"type": "string", "pattern": "^ORD-[0-9]+$"}},
                          ["order_id"])),
    "search_docs": ("Search the documentation.",
                    _obj({"query": S, "limit": {"type": "integer", "minimum": 1,
                                                "maximum": 20}}, ["query"])),
    "calculator": ("Evaluate an arithmetic expression.", _obj({"expression": S}, ["expression"])),
    "convert_currency": ("Convert an amount between currencies.",
                         _obj({"amount": N, "from": S, "to": S}, ["amount", "from", "to"])),
    "get_stock_price": ("Latest price of a stock.", _obj({"symbol": S}, ["symbol"])),
    "book_flight": ("Book a flight.", _obj({"origin": S, "destination": S, "date": S},
                                           ["origin", "destination", "date"])),
    "get_employee": ("An employee record by id.", _obj({"employee_id": INT}, ["employee_id"])),
}
CITIES = ("Paris", "Lisbon", "New York", "Buenos Aires", "Cape Town", "Osaka", "Oslo", "Lima")
PEOPLE = ("Maria Lopez", "John Carter", "Aiko Tanaka", "Lars Berg", "Nadia Haddad")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
FILLER = ("the result looks consistent with what was asked and nothing else stands out",
          "this is based on the latest data available to me right now",
          "let me know if you would like more detail or a different format",
          "i checked the relevant source before answering so this should be accurate",
          "please note that figures can change over the course of the day",
          "if anything looks off i can look it up again with other parameters")
AGENTS = ("support-bot", "travel-agent", "finance-helper", "hr-assistant", "docs-qa")


@dataclass(frozen=True, slots=True)
class _Call:
    name: str
    arguments: str | None
    result: str | None
    error: str | None
    status: str
    facts: tuple[str, ...]


def _call(rng: random.Random, name: str) -> _Call:
    city, n = rng.choice(CITIES), rng.randint(1000, 99999)
    price = round(rng.uniform(5, 900), 2)
    day = f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, 2026"
    args: dict[str, Any]
    facts: tuple[str, ...]
    if name == "get_weather":
        args, facts = {"city": city}, (city, f"{rng.randint(-5, 35)}.{rng.randint(0, 9)}")
        result = (f"{city}: {facts[1]} C, humidity {rng.randint(20, 95)}%, "
                  f"wind {rng.randint(0, 40)} km/h")
    elif name == "lookup_order":
        args, facts = {"order_id": f"ORD-{n}"}, (f"ORD-{n}", day, str(price))
        result = orjson.dumps({"id": f"ORD-{n}", "status": "shipped", "eta": day,
                               "total": price}).decode()
    elif name == "search_docs":
        args, facts = {"query": "rate limit retry", "limit": 5}, (f"{rng.randint(10, 600)}",)
        result = f"Snippet: requests are limited to {facts[0]} per minute; retry after backoff."
    elif name == "calculator":
        a, b = rng.randint(10, 999), rng.randint(10, 999)
        args, facts = {"expression": f"{a} * {b}"}, (f"{a * b:,}",)
        result = str(a * b)
    elif name == "convert_currency":
        args = {"amount": price, "from": "USD", "to": "EUR"}
        facts = (f"{price * 0.92:.2f}",)
        result = f"{price} USD = {facts[0]} EUR"
    elif name == "get_stock_price":
        sym = rng.choice(("ACME", "GLOBX", "INITECH", "UMBR"))
        args, facts = {"symbol": sym}, (str(price),)
        result = f"{sym} last trade {price} at 15:{rng.randint(10, 59)} UTC"
    elif name == "book_flight":
        dest = rng.choice(CITIES)
        args = {"origin": city, "destination": dest, "date": "2026-12-0" + str(rng.randint(1, 9))}
        facts = (dest, f"FL{n}", args["date"])
        result = f"Booked FL{n} {city} -> {dest} on {args['date']}, seat {rng.randint(1, 40)}C"
    else:
        person = rng.choice(PEOPLE)
        args, facts = {"employee_id": n}, (person,)
        result = orjson.dumps({"id": n, "name": person, "team": "platform"}).decode()
    roll = rng.random()
    if roll < 0.04:  # invalid arguments: a missing required field or a wrong type
        args = {} if rng.random() < 0.5 else {k: 12345 for k in args}
    elif roll < 0.06:
        return _Call(name, "{not json", None, "bad arguments", "error", ())
    if rng.random() < 0.05:
        return _Call(name, orjson.dumps(args).decode(), None, "upstream timeout", "error", ())
    if rng.random() < 0.02:
        return _Call(name, orjson.dumps(args).decode(), None, None, "no_result", ())
    return _Call(name, orjson.dumps(args).decode(), result, None, "ok", facts)


def _answer(rng: random.Random, calls: list[_Call]) -> tuple[str, list[str]]:
    facts = [f for c in calls for f in c.facts]
    target = rng.randint(100, 1500)
    parts = [f"Here is what I found: {facts[0]}." if facts else "I could not find anything."]
    for fact in facts[1:]:
        parts.append(f"The relevant value is {fact}.")
    if rng.random() < 0.12:  # a hallucinated specific
        parts.append(f"It was last updated on {rng.choice(MONTHS)} {rng.randint(1, 28)}, 2019"
                     f" by {rng.choice(PEOPLE)}.")
    while sum(len(p) + 1 for p in parts) < target:
        parts.append(rng.choice(FILLER).capitalize() + ".")
    return " ".join(parts)[:1500], facts


def _template(rng: random.Random, i: int) -> dict[str, Any]:
    names = rng.sample(sorted(TOOLS), rng.randint(2, 6))
    n_calls = rng.choices(range(6), weights=(15, 35, 25, 12, 8, 5))[0]
    chosen = [rng.choice(names) if rng.random() > 0.02 else "delete_everything"
              for _ in range(n_calls)]
    calls = [_call(rng, n) for n in chosen]
    if calls and rng.random() < 0.05:  # an exact duplicate call
        calls.append(calls[-1])
    answer, facts = _answer(rng, calls)
    has_answer = rng.random() > 0.03
    t0 = T0 + timedelta(seconds=i)
    labelled = rng.random() < 0.4
    label: dict[str, Any] | None = None
    if labelled:
        label = {
            "canary": [facts[0]] if facts and rng.random() < 0.8 else None,
            "ideal_response": (facts[-1] if facts else "no result") if rng.random() < 0.7 else None,
            "match_mode": rng.choice(("contains", "normalized", "exact", None)),
            "expected_tools": sorted({c.name for c in calls} | ({names[0]} if rng.random() < 0.2
                                                                  else set())) or None,
            "expected_tools_mode": rng.choice(("any", "all", "exact", "ordered", None)),
            "should_decline": not calls,
        }
    return {
        "agent_name": rng.choice(AGENTS), "service_name": "bench", "model": "gpt-4.1-mini",
        "status": "ok" if has_answer else rng.choice(("error", "incomplete")),
        "error": None if has_answer else "model call failed",
        "request": f"Please help with request {i}: {rng.choice(FILLER)}",
        "system_instructions": "You are a helpful agent. Use tools when they help.",
        "tools": [{"name": n, "description": TOOLS[n][0], "parameters": TOOLS[n][1]}
                  for n in names],
        "tools_source": "declared",
        "calls": [{"call_id": f"call_{i}_{k}", "name": c.name, "arguments": c.arguments,
                   "result": c.result, "error": c.error, "status": c.status,
                   "step": k // 2, "started_at": t0 + timedelta(milliseconds=200 * k),
                   "duration_ms": rng.uniform(5, 900)} for k, c in enumerate(calls)],
        "final_answer": answer if has_answer else None,
        "llm_calls": 1 + len(calls), "input_tokens": rng.randint(200, 8000),
        "output_tokens": rng.randint(20, 600), "convention": "otel_genai",
        "label": label,
    }


_PER_TEMPLATE = ("agent_name", "service_name", "model", "status", "error", "request",
                 "system_instructions", "tools", "tools_source", "calls", "final_answer",
                 "llm_calls", "input_tokens", "output_tokens", "convention")
INSERT_TURNS = "INSERT INTO turns SELECT * FROM _bench_turns"
INSERT_LABELS = """
INSERT INTO labels (case_id, input, input_norm, canary, ideal_response, match_mode,
                    expected_tools, expected_tools_mode, should_decline, source, run_id)
SELECT *, 'bench', 'bench' FROM _bench_labels
"""


class SyntheticTurns:
    """Templates drawn once; `insert` adds turns to a warehouse connection."""

    def __init__(self, templates: int, *, labelled_share: float = 0.3, seed: int = 7) -> None:
        rng = random.Random(seed)
        drawn = [_template(rng, i) for i in range(templates)]
        schema = arrow_schema()
        self.table = pa.table({name: pa.array([t[name] for t in drawn],
                                              schema.field(name).type)
                               for name in _PER_TEMPLATE})
        self.case_ids = pa.array([f"case-{i:06d}" if t["label"] else None
                                  for i, t in enumerate(drawn)], pa.string())
        self.labels = [(f"case-{i:06d}", t["request"], t["label"])
                       for i, t in enumerate(drawn) if t["label"]]
        self.labelled_share = labelled_share
        self.rng = random.Random(seed + 1)
        self.inserted = 0

    def insert_labels(self, con: duckdb.DuckDBPyConnection) -> int:
        inputs = [r for _, r, _ in self.labels]
        norms = normalize_series(polars.Series("i", inputs, dtype=polars.String)).to_list()
        cols = ("canary", "ideal_response", "match_mode", "expected_tools",
                "expected_tools_mode", "should_decline")
        table = pa.table({"case_id": [c for c, _, _ in self.labels], "input": inputs,
                          "input_norm": norms,
                          **{k: [lab[k] for _, _, lab in self.labels] for k in cols}})
        table = table.cast(pa.schema([
            ("case_id", pa.string()), ("input", pa.string()), ("input_norm", pa.string()),
            ("canary", pa.list_(pa.string())), ("ideal_response", pa.string()),
            ("match_mode", pa.string()), ("expected_tools", pa.list_(pa.string())),
            ("expected_tools_mode", pa.string()), ("should_decline", pa.bool_())]))
        con.register("_bench_labels", table)
        con.execute(INSERT_LABELS)
        con.unregister("_bench_labels")
        return table.num_rows

    def chunks(self, n: int, chunk: int = 50_000) -> Iterator[pa.Table]:
        for start in range(0, n, chunk):
            yield self._chunk(min(chunk, n - start))

    def insert(self, con: duckdb.DuckDBPyConnection, n: int) -> int:
        for table in self.chunks(n):
            con.register("_bench_turns", table)
            con.execute(INSERT_TURNS)
            con.unregister("_bench_turns")
        return n

    def _chunk(self, size: int) -> pa.Table:
        rng, first = self.rng, self.inserted
        self.inserted += size
        pool = self.table.num_rows
        idx = pa.array([rng.randrange(pool) for _ in range(size)], pa.int64())
        base = self.table.take(idx)
        ids = rng.randbytes(16 * size).hex()
        turn_ids = [ids[32 * k:32 * k + 32] for k in range(size)]
        hashes = rng.randbytes(16 * size).hex()
        tickets = pa.array([f" (ticket TK-{first + k})" for k in range(size)])
        refs = pa.array([f" Reference: TK-{first + k}." for k in range(size)])
        t0_us, span_us = int(T0.timestamp() * 1e6), DAYS * 86_400 * 1_000_000
        start_us = [t0_us + rng.randrange(span_us) for _ in range(size)]
        duration = [rng.uniform(300, 30_000) for _ in range(size)]
        ts = pa.timestamp("us", tz="UTC")
        labelled = pc.and_(pc.is_valid(self.case_ids.take(idx)),
                           pa.array([rng.random() < self.labelled_share for _ in range(size)]))
        cols: dict[str, pa.Array | pa.ChunkedArray] = {
            "turn_id": pa.array(turn_ids), "trace_id": pa.array(turn_ids),
            "conversation_id": pa.array(turn_ids),
            "turn_index": pa.array([0] * size, pa.int32()),
            "started_at": pa.array(start_us, ts),
            "ended_at": pa.array([s + int(d * 1000) for s, d in zip(start_us, duration,
                                                                    strict=True)], ts),
            "duration_ms": pa.array(duration, pa.float64()),
            "request": pc.binary_join_element_wise(base["request"], tickets, ""),
            "final_answer": pc.binary_join_element_wise(base["final_answer"], refs, ""),
            "case_id": pc.if_else(labelled, self.case_ids.take(idx), pa.scalar(None, pa.string())),
            "content_hash": pa.array([hashes[32 * k:32 * k + 32] for k in range(size)]),
            "attributes": pa.array(["{}"] * size), "ingest_id": pa.array(["bench"] * size),
            "source": pa.array(["bench"] * size),
            "issues": pa.array([[]] * size, pa.list_(pa.string())),
        }
        schema = arrow_schema()
        return pa.table([cols[f.name] if f.name in cols else base[f.name] for f in schema],
                        schema=schema)
