"""The Parquet stores under an ingest folder: raw records in `spans/`, turns in `turns/`.

`spans/` keeps every OTLP span and log record exactly as read (`SPAN_FIELDS`), so a
trace's turns can be rebuilt when late spans arrive, without the original files. Attribute
values are stored as OTLP/JSON `AnyValue` text (int64 as a decimal string, bytes as
base64, non-finite doubles as "NaN"/"Infinity"), which `turnscore.ingest.anyvalue` reads
back: `str` vs `bytes` and `int` vs `float` survive, and so do nested lists and maps.

`turns/` holds exactly one row per turn_id: writing a turn removes older rows with the
same turn_id, and rows of rebuilt traces that the rebuild no longer produced.

Which part files hold a trace, a turn or a conversation's keys is answered by a key
index per store under `.index/` (`turnscore.ingest.key_index`): a run reads only the files
its batch touches and never the key columns of the whole store, so an incremental night
costs what its input costs. The indexes are derived and re-synced with the files on open.

Both are partitioned by UTC date (`date=YYYY-MM-DD/part-<ingest_id>-<n>.parquet`) and
written atomically: a hidden temporary file (`.tmp-...`, which dataset readers skip) is
renamed over the final name. Temporary files left by a crashed run are removed by
`remove_stale_temp_files`. Callers hold the warehouse writer lock; nothing here locks.

Both stores live in this one module (past the ~400-line guide) because they share the
partition layout, part naming and atomic writes, and must change together.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import math
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from turnscore.ingest.anyvalue import decode_json_any_value, decode_json_key_values
from turnscore.ingest.detached import detached_response
from turnscore.ingest.key_index import KeyIndex, KeyRow
from turnscore.ingest.links import Lookups, SpanLinks
from turnscore.ingest.records import Attributes, AttrValue, RawEvent, RawLink, RawLog, RawSpan
from turnscore.ingest.schema import SPAN_FIELDS, arrow_schema
from turnscore.ingest.turn import Turn, turns_from_arrow, turns_to_arrow

__all__ = [
    "SPAN_KEY_COLUMNS",
    "SpanStore",
    "StoredRecords",
    "TurnStore",
    "decode_attributes",
    "encode_attributes",
    "encode_value",
    "read_key_columns",
    "read_part",
    "record_key",
    "remove_stale_temp_files",
    "sync_indexes",
    "write_parquet_atomic",
]

logger = logging.getLogger(__name__)

SPANS_DIR = "spans"
TURNS_DIR = "turns"
TEMP_PREFIX = ".tmp-"
INDEX_DIR = ".index"
"""Under the ingest folder: the stores' key indexes (`turnscore.ingest.key_index`)."""
_SPAN_SCHEMA = arrow_schema(SPAN_FIELDS)
_SPAN_COLUMNS = [f.name for f in SPAN_FIELDS]
_ROW_ORDER = (
    "record_type", "record_id", "trace_id", "span_id", "parent_span_id", "name",
    "kind", "start_unix_nano", "end_unix_nano", "status_code",
    "status_message",
    "attributes", "events", "links", "body",
    "resource", "scope_name", "scope_version",
    "conversation_id", "history_key", "prefix_keys",
    "response_id",
    "source", "position", "ingest_id", "occurrence",
)  # fmt: skip
"""The fields in the order `SpanStore._span_row` and `_log_row` write them."""
if tuple(_SPAN_COLUMNS) != _ROW_ORDER:
    raise ImportError("store._ROW_ORDER no longer matches SPAN_FIELDS: update the row builders")
_NS_PER_DAY = 86_400 * 1_000_000_000
SPAN_ROW_GROUP = 1024
"""Rows per row group in `spans/`: reading one trace back reads about this many rows."""

RecordKey = tuple[str, str | None, str]
"""(record_type, trace_id, record_id): identical records from two files share a key."""


# --- type-preserving JSON ---------------------------------------------------------------


def encode_value(value: AttrValue) -> dict[str, Any]:
    """One value as an OTLP/JSON `AnyValue` object (the inverse of `decode_json_any_value`)."""
    kind = type(value)
    if kind is str:  # most values: answer before the isinstance chain below
        return {"stringValue": value}
    if kind is int:
        return {"intValue": str(value)}
    if value is None:
        return {}
    if isinstance(value, bool):  # before int: bool is an int subclass
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        if math.isfinite(value):
            return {"doubleValue": value}
        return {
            "doubleValue": "NaN"
            if math.isnan(value)
            else ("Infinity" if value > 0 else "-Infinity")
        }
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode("ascii")}
    if isinstance(value, list):
        return {"arrayValue": {"values": [encode_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": _key_values(value)}}
    raise TypeError(f"not an OTLP attribute value: {type(value).__name__}")


def _key_values(attrs: Attributes) -> list[dict[str, Any]]:
    # Strings, most values, skip the call: this runs for every attribute of every span.
    return [
        {"key": k, "value": {"stringValue": v} if type(v) is str else encode_value(v)}
        for k, v in attrs.items()
    ]


def encode_attributes(attrs: Attributes) -> str:
    """Attributes as an OTLP/JSON KeyValue list, JSON text."""
    return _attributes_json(attrs).decode()


def _attributes_json(attrs: Attributes) -> bytes:
    """`encode_attributes` as UTF-8, which is what Arrow stores: no round trip via `str`."""
    return orjson.dumps(_key_values(attrs))


def decode_attributes(text: str) -> dict[str, AttrValue]:
    return decode_json_key_values(orjson.loads(text))


def _encode_events(events: Sequence[RawEvent]) -> bytes:
    if not events:
        return b"[]"
    return orjson.dumps(
        [
            {
                "name": e.name,
                "timeUnixNano": str(e.time_unix_nano),
                "attributes": _key_values(e.attributes),
            }
            for e in events
        ]
    )


def _decode_events(text: str | None) -> tuple[RawEvent, ...]:
    if not text:
        return ()
    return tuple(
        RawEvent(e["name"], int(e["timeUnixNano"]), decode_json_key_values(e["attributes"]))
        for e in orjson.loads(text)
    )


def _encode_links(links: Sequence[RawLink]) -> bytes | None:
    if not links:
        return None
    return orjson.dumps(
        [
            {"traceId": k.trace_id, "spanId": k.span_id, "attributes": _key_values(k.attributes)}
            for k in links
        ]
    )


def _decode_links(text: str | None) -> tuple[RawLink, ...]:
    if not text:
        return ()
    return tuple(
        RawLink(k["traceId"], k["spanId"], decode_json_key_values(k["attributes"]))
        for k in orjson.loads(text)
    )


def _log_record_id(log: RawLog, body: str, attributes: str, resource: str) -> str:
    content = [log.trace_id, log.span_id, log.event_name, log.time_unix_nano, body, attributes,
               resource]
    # The first of records alike keeps the id records were stored under before occurrences.
    raw = orjson.dumps([*content, log.occurrence] if log.occurrence else content)
    return hashlib.sha256(raw).hexdigest()[:32]


def record_key(record: RawSpan | RawLog) -> RecordKey:
    if isinstance(record, RawSpan):
        return ("span", record.trace_id, record.span_id)
    body = orjson.dumps(encode_value(record.body)).decode()
    rid = _log_record_id(
        record, body, encode_attributes(record.attributes), encode_attributes(record.resource)
    )
    return ("log", record.trace_id, rid)


# --- atomic files ----------------------------------------------------------------------


def write_parquet_atomic(table: pa.Table, path: Path, row_group_size: int | None = None) -> None:
    """Write `table` to `path` so that readers see the whole file or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{TEMP_PREFIX}{path.name}.{os.getpid()}")
    try:
        # No dictionary pages: zstd takes the repeats, and dictionaries cost the writer a
        # fifth of its time (8k bench spans: 48 -> 35 ms, 2.23 -> 2.15 MB; 6k turns:
        # 100 -> 86 ms, DuckDB reads them as fast).
        pq.write_table(
            table, tmp, compression="zstd", row_group_size=row_group_size, use_dictionary=False
        )
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def remove_stale_temp_files(root: Path) -> int:
    """Delete temporary files a crashed run left under `root/spans` and `root/turns`."""
    removed = 0
    for sub in (SPANS_DIR, TURNS_DIR):
        for tmp in (root / sub).glob(f"*/{TEMP_PREFIX}*"):
            tmp.unlink(missing_ok=True)
            removed += 1
    if removed:
        logger.info("removed %d temporary file(s) left by an interrupted run", removed)
    return removed


@cache
def _day_name(day: int) -> str:
    return datetime.fromtimestamp(day * 86_400, UTC).strftime("%Y-%m-%d")


def _record_time(rec: RawSpan | RawLog) -> int:
    """When a record happened: a span's start, a log record's time (its day and order)."""
    return rec.start_unix_nano if isinstance(rec, RawSpan) else rec.time_unix_nano


def _trace_order(rec: RawSpan | RawLog) -> tuple[str, int]:
    """Rows of a part in this order put a trace in one or two row groups."""
    return rec.trace_id or "", _record_time(rec)


class _Resources:
    """Encoded resource attributes by dict identity: the spans of one OTLP resource share
    one dict, so a batch encodes it once, not once per span."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Attributes, bytes]] = {}

    def encode(self, resource: Attributes) -> bytes:
        hit = self._seen.get(id(resource))
        if hit is not None and hit[0] is resource:
            return hit[1]
        text = _attributes_json(resource)
        self._seen[id(resource)] = (resource, text)  # holding it keeps the id unique
        return text


def _part_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("date=*/part-*.parquet") if not p.name.startswith("."))


@dataclass(slots=True)
class _PartNamer:
    ingest_id: str
    counter: int = 0

    def next(self, root: Path, day: str, tag: str = "") -> Path:
        self.counter += 1
        name = f"part-{self.ingest_id}{tag}-{self.counter:05d}.parquet"
        return root / f"date={day}" / name


def sync_indexes(root: Path) -> None:
    """Bring the key indexes of the ingest folder `root` up to date with its part files.

    A no-op when they are current; for a folder written before the indexes existed, one
    read of the key columns of every part file, which the first ingest would pay anyway.
    """
    for store in (SpanStore(root, "sync"), TurnStore(root, "sync")):
        store._load_index()
        store.close()


# --- spans/ ------------------------------------------------------------------------------


_NO_LINKS = SpanLinks()


@dataclass(frozen=True, slots=True)
class StoredRecords:
    spans: list[RawSpan] = field(default_factory=list)
    logs: list[RawLog] = field(default_factory=list)
    conversations: set[str] = field(default_factory=set)
    """The conversation keys the records were stored with (`SpanLinks.conversation_id`):
    what finds the rest of their conversations in one lookup."""

    def keys(self) -> set[RecordKey]:
        records: list[RawSpan | RawLog] = [*self.spans, *self.logs]
        return {record_key(r) for r in records}


class _PartStore:
    """A folder of date-partitioned part files and the key index that finds them."""

    def __init__(
        self, root: Path, ingest_id: str, folder: str, read_keys: Callable[[Path], list[KeyRow]]
    ) -> None:
        self.root = root / folder
        self._names = _PartNamer(ingest_id)
        self._index_path = root / INDEX_DIR / f"{folder}.sqlite3"
        self._read_keys = read_keys
        """The index rows of a part file the index does not know (written before it)."""
        self._index: KeyIndex | None = None

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def _load_index(self) -> KeyIndex:
        if self._index is None:
            self._index = KeyIndex(self._index_path, self.root)
            self._index.sync(_part_files(self.root), self._read_keys)
        return self._index

    def files(self) -> list[Path]:
        return _part_files(self.root)


class SpanStore(_PartStore):
    """The raw span/log store of one ingest folder."""

    def __init__(self, root: Path, ingest_id: str) -> None:
        super().__init__(root, ingest_id, SPANS_DIR, _read_span_keys)
        self.ingest_id = ingest_id

    def write(
        self,
        records: Iterable[RawSpan | RawLog],
        links: Mapping[tuple[str, str], SpanLinks] | None = None,
    ) -> list[Path]:
        """Store records (callers pass only ones not stored yet); one file per UTC day.

        `links` gives, by (trace_id, span_id), the keys that find a span's trace later.
        """
        parts = self.write_parts(records, links)
        self.index_parts(parts)
        return [path for path, _ in parts]

    def write_parts(
        self,
        records: Iterable[RawSpan | RawLog],
        links: Mapping[tuple[str, str], SpanLinks] | None = None,
        *,
        tag: str = "",
    ) -> list[tuple[Path, list[KeyRow]]]:
        """`write` without the key index: the files and the index rows `index_parts` takes.
        Touches nothing but new files, so another process may call it; `tag` keeps its
        file names apart from this process's."""
        conv = links or {}
        by_day: dict[int, list[RawSpan | RawLog]] = {}
        for rec in records:
            by_day.setdefault(max(_record_time(rec), 0) // _NS_PER_DAY, []).append(rec)
        resources = _Resources()
        parts = []
        for day, recs in sorted(by_day.items()):
            path = self._names.next(self.root, _day_name(day), tag)
            recs.sort(key=_trace_order)
            # Row tuples turned into columns by `zip`: a dict per row and
            # `Table.from_pylist` cost more than the encoding.
            rows = [
                self._span_row(rec, conv, resources)
                if isinstance(rec, RawSpan)
                else self._log_row(rec, conv, resources)
                for rec in recs
            ]
            columns = zip(zip(*rows, strict=True), _SPAN_SCHEMA, strict=True)
            table = pa.Table.from_arrays(
                [pa.array(column, f.type) for column, f in columns], schema=_SPAN_SCHEMA
            )
            write_parquet_atomic(table, path, row_group_size=SPAN_ROW_GROUP)
            parts.append((path, _span_key_rows(table)))
        return parts

    def index_parts(self, parts: Iterable[tuple[Path, list[KeyRow]]]) -> None:
        index = self._load_index()
        for path, rows in parts:
            index.put(path, rows)

    # A row is a tuple in `SPAN_FIELDS` order (`_ROW_ORDER` spells it and is checked
    # against the contract at import, so a reordered field fails loudly, not as swapped
    # columns of one type); one line per line of `_ROW_ORDER`.

    def _span_row(
        self, span: RawSpan, conv: Mapping[tuple[str, str], SpanLinks], resources: _Resources
    ) -> tuple[Any, ...]:
        links = conv.get((span.trace_id, span.span_id), _NO_LINKS) if conv else _NO_LINKS
        return (
            "span", span.span_id, span.trace_id, span.span_id, span.parent_span_id, span.name,
            span.kind, span.start_unix_nano, span.end_unix_nano, span.status_code,
            span.status_message,
            _attributes_json(span.attributes), _encode_events(span.events),
            _encode_links(span.links), None,
            resources.encode(span.resource), span.scope_name, span.scope_version,
            links.conversation_id, links.history_key, list(links.prefix_keys) or None,
            links.response_id,
            span.source, span.position, self.ingest_id, None,
        )  # fmt: skip

    def _log_row(
        self, log: RawLog, conv: Mapping[tuple[str, str], SpanLinks], resources: _Resources
    ) -> tuple[Any, ...]:
        # A record-only turn's records (`record_turns`) are the only rows of their trace:
        # the conversation of the span they tell is theirs to index, or a later prompt of
        # the session, ingested apart, would not find this one.
        told = conv.get((log.trace_id or "", log.span_id or "")) if conv else None
        attributes = encode_attributes(log.attributes)
        resource = resources.encode(log.resource).decode()
        body = orjson.dumps(encode_value(log.body)).decode()
        return (
            "log", _log_record_id(log, body, attributes, resource), log.trace_id, log.span_id,
            None, log.event_name,
            None, log.time_unix_nano, None, None,
            None,
            attributes, None, None, body,
            resource, "", "",
            told.conversation_id if told else None, None, None,
            detached_response(log),
            log.source, log.position, self.ingest_id, log.occurrence or None,
        )  # fmt: skip

    def read(self, trace_ids: Collection[str]) -> StoredRecords:
        """Every stored span and log record of the given traces."""
        files = sorted(self._load_index().files_with(_TRACE, trace_ids))
        out = StoredRecords()
        for path in files:
            read_part(path, trace_ids, into=out)
        return out

    def detached(self, response_ids: Collection[str]) -> list[RawLog]:
        """Stored content records that name no span but one of `response_ids`
        (`turnscore.ingest.detached`): their span had not arrived when they were stored."""
        files = self._load_index().files_with(_DETACHED, response_ids)
        wanted = _strings(set(response_ids))
        logs: list[RawLog] = []
        for path in sorted(files):
            table = pq.read_table(path, columns=[*_RECORD_COLUMNS, "response_id"])
            table = table.filter(pc.and_(pc.is_null(table["trace_id"]),
                                         pc.is_in(table["response_id"], value_set=wanted)))
            logs.extend(_log_from_row(row) for row in table.to_pylist())
        return logs

    def holds_detached(self) -> bool:
        """Whether any stored content record names no span but a response (`detached`)."""
        return self._load_index().holds(_DETACHED)

    def read_conversations(self, conversation_ids: Collection[str]) -> StoredRecords:
        """Every stored record of every trace in which a span names one of the conversations."""
        return self.read(self.linked_traces(Lookups(conversations=set(conversation_ids))))

    def linked_traces(self, wanted: Lookups) -> set[str]:
        """Stored traces that share a conversation, a history link or a model call's
        response id with `wanted` (`JoinKeys.meets`), and those it continues."""
        index = self._load_index()
        return (
            index.traces_with(_CONVERSATION, wanted.conversations)
            | index.traces_with(_HISTORY, wanted.prefixes)
            | index.traces_with(_PREFIX, wanted.histories)
            | index.traces_with(_RESPONSE, wanted.responses)
            | index.traces_with(_TRACE, wanted.continues)
        )


# Key kinds in the indexes. A span file is found by its traces, and its traces by the
# conversation, history and response keys they carry (`turnscore.ingest.links`); a turn
# file by its turns and traces.
_TRACE, _TURN = "trace", "turn"
_CONVERSATION, _HISTORY, _PREFIX, _RESPONSE = "conversation", "history", "prefix", "response"
_DETACHED = "detached"
_INDEX_COLUMNS = ("trace_id", "conversation_id", "history_key", "prefix_keys", "response_id")
_LINK_COLUMNS = frozenset(_INDEX_COLUMNS) - {"trace_id"}
_RECORD_COLUMNS = [name for name in _SPAN_COLUMNS if name not in _LINK_COLUMNS]
"""What a stored record is read back from: not its keys, which only the index reads
(and which files written before a key existed lack)."""
_READ_COLUMNS = (*_RECORD_COLUMNS, "conversation_id")
"""What `read_part` reads: the records, and the conversation each was stored in
(`StoredRecords.conversations`)."""


def read_key_columns(source: Path | pa.NativeFile) -> pa.Table:
    """The key columns (`SPAN_KEY_COLUMNS`) of one `spans/` part file. A file written
    before a key column existed lacks it: read as nulls, no such keys (as a score table
    without a column is filled, `turnscore.warehouse.scores`)."""
    pf = pq.ParquetFile(source)
    present = set(pf.schema_arrow.names)
    table = pf.read(columns=[name for name in _INDEX_COLUMNS if name in present])
    for name in _INDEX_COLUMNS:
        if name not in present:
            spec = _SPAN_SCHEMA.field(name)
            table = table.append_column(spec, pa.nulls(table.num_rows, spec.type))
    return table.select(list(_INDEX_COLUMNS))


def _read_span_keys(path: Path) -> list[KeyRow]:
    return _span_key_rows(read_key_columns(path))


def _span_key_rows(table: pa.Table) -> list[KeyRow]:
    rows: list[KeyRow] = []
    cols = [table[name].to_pylist() for name in _INDEX_COLUMNS]
    for trace, conv, history, prefixes, response in zip(*cols, strict=True):
        if trace is None:
            if response is not None:  # a content record that names no span, by its response
                rows.append((_DETACHED, response, None))
            continue
        rows.append((_TRACE, trace, trace))
        if conv is not None:
            rows.append((_CONVERSATION, conv, trace))
        if history is not None:
            rows.append((_HISTORY, history, trace))
        if response is not None:
            rows.append((_RESPONSE, response, trace))
        rows.extend((_PREFIX, key, trace) for key in prefixes or ())
    return rows


SPAN_KEY_COLUMNS = _INDEX_COLUMNS
"""The columns of `spans/` that find a span's trace again (what `linked_traces` looks up);
`read_key_columns` reads them from any part file."""


def read_part(
    source: Path | pa.NativeFile, trace_ids: Collection[str], *, into: StoredRecords | None = None
) -> StoredRecords:
    """The records of `trace_ids` in one `spans/` part file (a path, or a file opened on
    any filesystem: the Ray engine reads object storage), added to `into` if given."""
    out = into if into is not None else StoredRecords()
    for row in _read_matching(source, _strings(set(trace_ids))).to_pylist():
        if (conversation := row.get("conversation_id")) is not None:
            out.conversations.add(conversation)
        if row["record_type"] == "span":
            out.spans.append(_span_from_row(row))
        else:
            out.logs.append(_log_from_row(row))
    return out


def _read_matching(path: Path | pa.NativeFile, trace_ids: pa.Array) -> pa.Table:
    """The rows of `path` whose trace is in `trace_ids`, reading only the row groups that
    hold them (rows are written sorted by trace, so a trace sits in one or two groups)."""
    pf = pq.ParquetFile(path)
    mask = pc.is_in(pf.read(columns=["trace_id"])["trace_id"], value_set=trace_ids)
    groups, offset = [], 0
    for i in range(pf.metadata.num_row_groups):
        rows = pf.metadata.row_group(i).num_rows
        if pc.any(mask.slice(offset, rows)).as_py():
            groups.append(i)
        offset += rows
    present = set(pf.schema_arrow.names)  # a file written before a column existed lacks it
    columns = [name for name in _READ_COLUMNS if name in present]
    table = pf.read_row_groups(groups, columns=columns)
    return table.filter(pc.is_in(table["trace_id"], value_set=trace_ids))


def _strings(values: Collection[str]) -> pa.Array:
    return pa.array(sorted(values), pa.string())


def _span_from_row(row: Mapping[str, Any]) -> RawSpan:
    return RawSpan(
        trace_id=row["trace_id"],
        span_id=row["span_id"],
        parent_span_id=row["parent_span_id"],
        name=row["name"],
        kind=row["kind"],
        start_unix_nano=row["start_unix_nano"],
        end_unix_nano=row["end_unix_nano"],
        status_code=row["status_code"],
        status_message=row["status_message"] or "",
        attributes=decode_attributes(row["attributes"]),
        events=_decode_events(row["events"]),
        links=_decode_links(row.get("links")),
        resource=decode_attributes(row["resource"]),
        scope_name=row["scope_name"],
        scope_version=row["scope_version"],
        source=row["source"],
        position=row["position"],
    )


def _log_from_row(row: Mapping[str, Any]) -> RawLog:
    return RawLog(
        trace_id=row["trace_id"],
        span_id=row["span_id"],
        event_name=row["name"],
        time_unix_nano=row["start_unix_nano"],
        body=decode_json_any_value(orjson.loads(row["body"])),
        attributes=decode_attributes(row["attributes"]),
        resource=decode_attributes(row["resource"]),
        source=row["source"],
        position=row["position"],
        occurrence=row.get("occurrence") or 0,
    )


# --- turns/ ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnWrite:
    """What one `TurnStore.replace` did."""

    written: tuple[Path, ...]
    removed_ids: tuple[str, ...]
    """Turns of rebuilt traces that the rebuild no longer produced (now deleted)."""


class TurnStore(_PartStore):
    """The `turns/` folder: one row per turn_id, the latest build of each turn."""

    def __init__(self, root: Path, ingest_id: str) -> None:
        super().__init__(root, ingest_id, TURNS_DIR, _read_turn_keys)

    def replace(self, turns: Sequence[Turn], rebuilt_traces: Collection[str]) -> TurnWrite:
        """Store `turns`, replacing older rows with the same turn_id and every other row
        whose trace is in `rebuilt_traces` (the caller rebuilt those traces completely).

        A turn identical to its stored row except for `ingest_id` keeps the stored
        ingest_id, so re-ingesting the same spans leaves the rows as they were.
        """
        index = self._load_index()
        new_ids = {t.turn_id for t in turns}
        traces = set(rebuilt_traces)
        affected = sorted(index.files_with(_TURN, new_ids) | index.files_with(_TRACE, traces))
        old_rows: dict[str, Turn] = {}
        kept: dict[Path, pa.Table] = {}
        for path in affected:
            table = pq.read_table(path)
            drop = pc.or_(
                pc.is_in(table["turn_id"], pa.array(sorted(new_ids), pa.string())),
                pc.is_in(table["trace_id"], pa.array(sorted(traces), pa.string())),
            )
            for old in turns_from_arrow(table.filter(drop)):
                old_rows[old.turn_id] = old
            kept[path] = table.filter(pc.invert(drop))
        final = [_keep_lineage(t, old_rows.get(t.turn_id)) for t in turns]
        written = self._write(final)
        # New rows are in place before old ones go: a crash in between leaves a duplicate
        # that the rerun (its input file not yet recorded) removes, never a lost turn.
        for path, table in kept.items():
            if table.num_rows:
                write_parquet_atomic(table, path)
                index.put(path, _turn_key_rows(table))
            else:
                path.unlink(missing_ok=True)
                index.remove(path)
        removed = sorted(set(old_rows) - new_ids)
        return TurnWrite(tuple(written), tuple(removed))

    def _write(self, turns: Sequence[Turn]) -> list[Path]:
        by_day: dict[str, list[Turn]] = {}
        for t in turns:
            by_day.setdefault(t.started_at.astimezone(UTC).strftime("%Y-%m-%d"), []).append(t)
        written = []
        index = self._load_index()
        for day, group in sorted(by_day.items()):
            path = self._names.next(self.root, day)
            write_parquet_atomic(turns_to_arrow(group), path)
            index.put(path, [row for t in group for row in _turn_keys(t.turn_id, t.trace_id)])
            written.append(path)
        return written

    def files_of(self, ingest_id: str) -> list[Path]:
        """The part files ingest run `ingest_id` wrote that are still there."""
        return sorted(p for p in self.root.glob(f"date=*/part-{ingest_id}-*.parquet")
                      if not p.name.startswith("."))

    def read_all(self) -> Iterator[Turn]:
        for path in self.files():
            yield from turns_from_arrow(pq.read_table(path))


def _read_turn_keys(path: Path) -> list[KeyRow]:
    return _turn_key_rows(pq.read_table(path, columns=["turn_id", "trace_id"]))


def _turn_key_rows(table: pa.Table) -> list[KeyRow]:
    ids = zip(table["turn_id"].to_pylist(), table["trace_id"].to_pylist(), strict=True)
    return [row for turn_id, trace_id in ids for row in _turn_keys(turn_id, trace_id)]


def _turn_keys(turn_id: str, trace_id: str) -> tuple[KeyRow, KeyRow]:
    return (_TURN, turn_id, trace_id), (_TRACE, trace_id, trace_id)


def _keep_lineage(turn: Turn, old: Turn | None) -> Turn:
    if old is not None and replace(old, ingest_id=turn.ingest_id) == turn:
        return old
    return turn
