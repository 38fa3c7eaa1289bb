"""The lean ideal JSON ingest of `bench/ceiling.py`: msgspec, raw attribute slices, Python.

msgspec decodes an OTLP/JSON request into typed structs and leaves each span's
attributes, events and resource as `msgspec.Raw`: the exact bytes of their OTLP/JSON
KeyValue lists, which is already the `spans/` store's format, so the store costs no
JSON encoding at all. Turns for the bench's one convention are built in Python from the
decoded structs, decoding only the attributes a turn reads (the same fields as
`ceiling.TURNS_SQL`); both tables are written with pyarrow. Checks on ids, times, UTF-8
and unknown fields are kept; the real ingest's other work is not done.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from msgspec import Raw, Struct

_NONE = Raw(b"[]")


class _Status(Struct, frozen=True, forbid_unknown_fields=True):
    code: int = 0
    message: str = ""


class _Span(Struct, forbid_unknown_fields=True):
    traceId: str
    spanId: str
    name: str = ""
    kind: int = 0
    startTimeUnixNano: str = "0"
    endTimeUnixNano: str = "0"
    attributes: Raw = _NONE
    status: _Status = _Status()
    parentSpanId: str = ""
    traceState: str = ""
    flags: int = 0
    events: Raw = _NONE
    links: Raw = _NONE
    droppedAttributesCount: int = 0
    droppedEventsCount: int = 0
    droppedLinksCount: int = 0


class _Scope(Struct, frozen=True, forbid_unknown_fields=True):
    name: str = ""
    version: str = ""
    attributes: Raw = _NONE
    droppedAttributesCount: int = 0


class _ScopeSpans(Struct, forbid_unknown_fields=True):
    scope: _Scope = _Scope()
    spans: list[_Span] = []
    schemaUrl: str = ""


class _Resource(Struct, frozen=True, forbid_unknown_fields=True):
    attributes: Raw = _NONE
    droppedAttributesCount: int = 0


class _ResourceSpans(Struct, forbid_unknown_fields=True):
    resource: _Resource = _Resource()
    scopeSpans: list[_ScopeSpans] = []
    schemaUrl: str = ""


class _Request(Struct, forbid_unknown_fields=True):
    resourceSpans: list[_ResourceSpans] = []


class _AnyValue(Struct, forbid_unknown_fields=True):
    stringValue: str | None = None
    intValue: str | int | None = None
    doubleValue: float | None = None
    boolValue: bool | None = None
    bytesValue: str | None = None
    arrayValue: Raw | None = None
    kvlistValue: Raw | None = None


class _KeyValue(Struct):
    key: str
    value: Raw


_REQUEST = msgspec.json.Decoder(_Request)
_KEY_VALUES = msgspec.json.Decoder(list[_KeyValue])
_ANY = msgspec.json.Decoder(_AnyValue)

_READ = {
    "gen_ai.operation.name", "gen_ai.conversation.id", "gen_ai.agent.name",
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions",
    "gen_ai.system_instructions", "gen_ai.tool.name", "gen_ai.tool.call.id",
    "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
    "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
}  # fmt: skip
_LATER = {"gen_ai.input.messages", "gen_ai.output.messages"}
"""Decoded only on the model calls a turn reads them from."""


def _value(raw: Raw) -> Any:
    v = _ANY.decode(raw)
    if v.stringValue is not None:
        return v.stringValue
    if v.intValue is not None:
        return int(v.intValue)
    return v.doubleValue if v.doubleValue is not None else v.boolValue


def _spans_table(request: _Request, source: str) -> tuple[pa.Table, list[_Span]]:
    cols: dict[str, list[Any]] = {name: [] for name in _SPAN_COLUMNS}
    spans: list[_Span] = []
    for rs in request.resourceSpans:
        resource = bytes(rs.resource.attributes)
        for ss in rs.scopeSpans:
            for s in ss.spans:
                spans.append(s)
                for name, value in zip(_SPAN_COLUMNS, (
                    s.traceId, s.spanId, s.parentSpanId or None, s.name, s.kind,
                    s.startTimeUnixNano, s.endTimeUnixNano, s.status.code, s.status.message,
                    bytes(s.attributes), bytes(s.events), resource, ss.scope.name,
                    ss.scope.version,
                ), strict=False):  # fmt: skip
                    cols[name].append(value)
    n = len(spans)
    table = pa.table({
        "trace_id": _ids(cols["trace_id"], 32),
        "span_id": _ids(cols["span_id"], 16),
        "parent_span_id": _ids(cols["parent_span_id"], 16),
        "name": pa.array(cols["name"], pa.string()),
        "kind": pa.array(cols["kind"], pa.int32()),
        "start_unix_nano": pc.cast(pa.array(cols["start_unix_nano"], pa.string()), pa.int64()),
        "end_unix_nano": pc.cast(pa.array(cols["end_unix_nano"], pa.string()), pa.int64()),
        "status_code": pa.array(cols["status_code"], pa.int32()),
        "status_message": pa.array(cols["status_message"], pa.string()),
        # raw bytes cast to string: Arrow checks they are UTF-8
        "attributes": pa.array(cols["attributes"], pa.binary()).cast(pa.string()),
        "events": pa.array(cols["events"], pa.binary()).cast(pa.string()),
        "resource": pa.array(cols["resource"], pa.binary()).cast(pa.string()),
        "scope_name": pa.array(cols["scope_name"], pa.string()),
        "scope_version": pa.array(cols["scope_version"], pa.string()),
        "source": pa.array([source] * n, pa.string()),
        "position": pa.array(["line 1"] * n, pa.string()),
    })  # fmt: skip
    return table, spans


_SPAN_COLUMNS = (
    "trace_id", "span_id", "parent_span_id", "name", "kind", "start_unix_nano",
    "end_unix_nano", "status_code", "status_message", "attributes", "events", "resource",
    "scope_name", "scope_version",
)  # fmt: skip


def _ids(values: list[str | None], digits: int) -> pa.Array:
    array = pa.array(values, pa.string())
    hex_ok = pc.match_substring_regex(array.drop_null(), f"^[0-9a-fA-F]{{{digits}}}$")
    if not pc.all(hex_ok).as_py():
        raise ValueError("an id that is not hex")
    return pc.utf8_lower(array)


_TOOL = pa.struct([("name", pa.string()), ("description", pa.string()),
                   ("parameters", pa.string())])  # fmt: skip
_CALL = pa.struct([
    ("name", pa.string()), ("call_id", pa.string()), ("arguments", pa.string()),
    ("result", pa.string()), ("status", pa.string()), ("started_at", pa.timestamp("us")),
    ("duration_ms", pa.float64()),
])  # fmt: skip
_TURN_TYPES = {
    "started_at": pa.timestamp("us"), "ended_at": pa.timestamp("us"),
    "tools": pa.list_(_TOOL), "calls": pa.list_(_CALL), "llm_calls": pa.int64(),
    "input_tokens": pa.int64(), "output_tokens": pa.int64(),
}  # fmt: skip
_TURN_COLUMNS = (
    "turn_id", "trace_id", "conversation_id", "started_at", "ended_at", "request",
    "system_instructions", "tools", "calls", "final_answer", "llm_calls", "input_tokens",
    "output_tokens", "agent_name", "content_hash",
)  # fmt: skip


def _first_text(messages: str, index: int) -> str | None:
    """The first part's content of message `index` (`ceiling.TURNS_SQL`'s JSON paths)."""
    try:
        return orjson.loads(messages)[index]["parts"][0].get("content")
    except (KeyError, IndexError, TypeError, orjson.JSONDecodeError):
        return None


def _content(parts: str) -> str | None:
    try:
        return orjson.loads(parts)[0].get("content")
    except (KeyError, IndexError, TypeError, orjson.JSONDecodeError):
        return None


def _total(values: list[Any]) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _turns_table(spans: list[_Span]) -> pa.Table:
    traces: dict[str, list[tuple[int, int, _Span, dict[str, Any]]]] = {}
    for s in spans:
        read = {
            kv.key: kv.value if kv.key in _LATER else _value(kv.value)
            for kv in _KEY_VALUES.decode(s.attributes)
            if kv.key in _READ
        }
        start, end = int(s.startTimeUnixNano), int(s.endTimeUnixNano)
        traces.setdefault(s.traceId, []).append((start, end, s, read))
    rows: dict[str, list[Any]] = {name: [] for name in _TURN_COLUMNS}
    for trace, members in traces.items():
        ops = [m[3].get("gen_ai.operation.name") for m in members]
        root = next((m for m, op in zip(members, ops, strict=True)
                     if not m[2].parentSpanId and op == "invoke_agent"), None)  # fmt: skip
        chats = sorted(m for m, op in zip(members, ops, strict=True) if op == "chat")
        if root is None or not chats:
            continue
        tools_called = sorted(m for m, op in zip(members, ops, strict=True) if op == "execute_tool")
        attrs = root[3]
        request = _first_text(_value(chats[0][3]["gen_ai.input.messages"]), -1)
        answer = _first_text(_value(chats[-1][3]["gen_ai.output.messages"]), 0)
        system = attrs.get("gen_ai.system_instructions")
        definitions = attrs.get("gen_ai.tool.definitions")
        tools = [
            {"name": t.get("name"), "description": t.get("description"),
             "parameters": orjson.dumps(t["parameters"]).decode() if "parameters" in t else None}
            for t in orjson.loads(definitions)
        ] if definitions else None  # fmt: skip
        calls = [
            {"name": a.get("gen_ai.tool.name"), "call_id": a.get("gen_ai.tool.call.id"),
             "arguments": a.get("gen_ai.tool.call.arguments"),
             "result": a.get("gen_ai.tool.call.result"),
             "status": "error" if s.status.code == 2 else "ok",
             "started_at": start // 1000, "duration_ms": (end - start) / 1e6}
            for start, end, s, a in tools_called
        ]  # fmt: skip
        for name, value in (
            ("turn_id", hashlib.md5((trace + root[2].spanId).encode()).hexdigest()),
            ("trace_id", trace),
            ("conversation_id", attrs.get("gen_ai.conversation.id")),
            ("started_at", chats[0][0] // 1000),
            ("ended_at", max(c[1] for c in chats) // 1000),
            ("request", request),
            ("system_instructions", _content(system) if system else None),
            ("tools", tools),
            ("calls", calls),
            ("final_answer", answer),
            ("llm_calls", len(chats)),
            ("input_tokens", _total([c[3].get("gen_ai.usage.input_tokens") for c in chats])),
            ("output_tokens", _total([c[3].get("gen_ai.usage.output_tokens") for c in chats])),
            ("agent_name", attrs.get("gen_ai.agent.name")),
            ("content_hash", hashlib.md5(
                "|".join(x for x in (request, definitions, answer) if x).encode()).hexdigest()),
        ):  # fmt: skip
            rows[name].append(value)
    return pa.table({k: pa.array(v, _TURN_TYPES.get(k, pa.string())) for k, v in rows.items()})


def lean_json_file(path: Path, out: Path) -> dict[str, float]:
    """The lean stages for one file: CPU seconds of parse, turns (built and written) and
    spans (table and write)."""
    cpu: dict[str, float] = {}
    start = time.process_time()
    request = _REQUEST.decode(path.read_bytes())
    cpu["parse"] = time.process_time() - start
    start = time.process_time()
    table, spans = _spans_table(request, str(path))
    pq.write_table(table.sort_by([("trace_id", "ascending"), ("start_unix_nano", "ascending")]),
                   out / f"spans-{path.stem}.parquet", compression="snappy")  # fmt: skip
    cpu["spans"] = time.process_time() - start
    start = time.process_time()
    pq.write_table(_turns_table(spans), out / f"turns-{path.stem}.parquet", compression="snappy")
    cpu["turns"] = time.process_time() - start
    return cpu
