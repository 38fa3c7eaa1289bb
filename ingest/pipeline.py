"""The ingest stage: OTLP files in, `spans/` and `turns/` Parquet out (DESIGN §1).

`ingest_paths` works through the input in groups of files (about `group_bytes` of file
content each), so memory holds one group's records plus the stored spans of the traces
that group touches, never the whole input. Per group:

1. read every record (`otlp.read_file`); input errors are kept, reading goes on;
2. dedup spans by (trace_id, span_id) and log records by content: identical records in
   two files, or already in `spans/`, are one record (the stored copy wins; a differing
   copy is reported);
3. load the stored records of every trace the group touches, decode stored + new, and
   widen to the stored traces of the same conversations, by conversation id or by the
   message history they continue (`turnscore.ingest.links`), so late spans, late turns
   and late earlier turns all rebuild the whole conversation;
4. assemble turns (a pure function: the same spans give the same turns and turn ids),
   store the new raw records, then the turns: each turn replaces its older row, and rows
   of rebuilt traces that the rebuild no longer produced are removed (`TurnStore`).

Every trace the input touches is rebuilt, even when all its spans were stored already:
that is what lets a rerun after a crash (records stored, warehouse not loaded) finish the
job. The warehouse load (`turnscore.warehouse.ingest_run`) compares rows and leaves
unchanged turns alone. The caller holds the warehouse writer lock.
"""

from __future__ import annotations

import hashlib
import logging
import os
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from turnscore.ingest.arrow_read import raw_spans, read_span_table
from turnscore.ingest.assemble import assemble_turns
from turnscore.ingest.decode import decode_spans, trace_order
from turnscore.ingest.direct import DirectConversation, conversation_id, solve
from turnscore.ingest.fast_read import Decoded, FileRead, prefetch
from turnscore.ingest.links import Lookups, lookups, prefix_keys, span_links
from turnscore.ingest.model import Span, SpanKind
from turnscore.ingest.otlp import Record, iter_input_files, read_file
from turnscore.ingest.records import InputError, RawLog, RawSpan
from turnscore.ingest.shards import run_shards
from turnscore.ingest.store import (
    RecordKey,
    SpanStore,
    TurnStore,
    record_key,
    remove_stale_temp_files,
)
from turnscore.ingest.turn import Turn

__all__ = [
    "DEFAULT_GROUP_BYTES",
    "WORKERS_ENV",
    "IngestBatch",
    "IngestedFile",
    "Progress",
    "ProgressFn",
    "SkippedFile",
    "file_key",
    "ingest_paths",
]

logger = logging.getLogger(__name__)

DEFAULT_GROUP_BYTES = 32 << 20
"""File bytes read per group; decoded records take a few times this in memory."""
MAX_LINK_ROUNDS = 64
"""Bound on following conversation/history links through stored traces per group."""
WORKERS_ENV = "TURNSCORE_INGEST_WORKERS"
"""Processes in all (this one included) for an ingest; 1: this one alone."""
MAX_DEFAULT_WORKERS = 4


@dataclass(frozen=True, slots=True)
class Progress:
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    spans: int


ProgressFn = Callable[[Progress], None]


@dataclass(frozen=True, slots=True)
class IngestedFile:
    """A file read in this batch: an `ingested_files` row once the warehouse load commits."""

    file_key: str
    """sha256 of the file's bytes: the same content under another name is the same file."""
    path: Path
    bytes: int
    spans: int
    logs: int
    errors: int


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: Path
    file_key: str
    reason: str


@dataclass(frozen=True, slots=True)
class IngestBatch:
    """What `ingest_paths` read and wrote."""

    ingest_id: str
    files: tuple[IngestedFile, ...]
    skipped: tuple[SkippedFile, ...]
    spans: int
    """Spans read (a span in two files counts twice)."""
    logs: int
    new_spans: int
    """Spans stored for the first time."""
    new_logs: int
    turn_files: tuple[Path, ...]
    """This batch's `turns/` files: every turn of every rebuilt trace, one row each."""
    turns: int
    direct_turns: int
    """Of `turns`, those built on the direct path (`turnscore.ingest.direct`)."""
    rebuilt_traces: frozenset[str]
    """Traces rebuilt from all their spans: their turns not in `turn_files` are gone."""
    removed_turn_ids: tuple[str, ...]
    errors: tuple[InputError, ...]


def file_key(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class _Input:
    path: Path
    key: str
    size: int


@dataclass(slots=True)
class _Group:
    """One group's fresh records, deduplicated, first copy kept."""

    spans: dict[RecordKey, RawSpan] = field(default_factory=dict)
    logs: dict[RecordKey, RawLog] = field(default_factory=dict)
    sources: set[str] = field(default_factory=set)
    decoded: dict[int, Decoded] = field(default_factory=dict)
    """Worker decodings of these spans, by `id(raw)` (`fast_read`)."""
    reads: list[FileRead] = field(default_factory=list)
    """Holds every record `decoded` is keyed by alive, so no id is reused in the group."""


def ingest_paths(
    paths: Sequence[Path],
    out_dir: Path,
    *,
    known_file_keys: Collection[str] = frozenset(),
    progress: ProgressFn | None = None,
    ingest_id: str | None = None,
    group_bytes: int = DEFAULT_GROUP_BYTES,
    case_id_attribute: str | None = None,
    workers: int | None = None,
    direct: bool = True,
) -> IngestBatch:
    """Ingest OTLP files and folders into `out_dir/spans` and `out_dir/turns`.

    Files whose content key is in `known_file_keys`, or repeats an earlier file of this
    batch, are skipped. Raises `FileNotFoundError` for a path that does not exist.
    `case_id_attribute` names the span attribute holding the labelled-case key.
    `direct`: plain OTel GenAI agent runs take the direct path (`turnscore.ingest.direct`),
    their conversations shared among `workers` processes (`direct_pool`); without it,
    `workers - 1` processes read and decode files ahead (`fast_read`). The result is the
    same either way. Default workers: `$TURNSCORE_INGEST_WORKERS`, else the cores (up to 4).
    """
    ingest_id = ingest_id or uuid.uuid4().hex
    remove_stale_temp_files(out_dir)
    spans_store = SpanStore(out_dir, ingest_id)
    turn_store = TurnStore(out_dir, ingest_id)
    state = _Totals()
    inputs, skipped = _plan(paths, known_file_keys, state.errors)
    total = sum(i.size for i in inputs)
    decode = _Decoder(case_id_attribute)
    workers = _workers() if workers is None else workers
    reads = (
        prefetch((i.path for i in inputs), workers, case_id_attribute)
        if workers > 1 and not direct
        else None
    )
    carry = _Carry()
    try:
        for group in _groups(inputs, group_bytes):
            carry = _ingest_group(
                group, spans_store, turn_store, decode, ingest_id, state, progress, len(inputs),
                total, reads, carry, direct, workers,
            )
        if carry.spans:
            _ingest_group(
                [], spans_store, turn_store, decode, ingest_id, state, progress, len(inputs),
                total, None, carry, direct, workers, last=True,
            )
    finally:
        if reads is not None:
            reads.close()  # shuts the worker pool down
        spans_store.close()
        turn_store.close()
    written = {p for p in state.turn_files if p.exists()}
    return IngestBatch(
        ingest_id=ingest_id,
        files=tuple(state.files),
        skipped=tuple(skipped),
        spans=state.spans,
        logs=state.logs,
        new_spans=state.new_spans,
        new_logs=state.new_logs,
        turn_files=tuple(sorted(written)),
        turns=state.turns,
        direct_turns=state.direct_turns,
        rebuilt_traces=frozenset(state.rebuilt),
        removed_turn_ids=tuple(sorted(state.removed - state.written_ids)),
        errors=tuple(state.errors),
    )


@dataclass(slots=True)
class _Totals:
    files: list[IngestedFile] = field(default_factory=list)
    spans: int = 0
    logs: int = 0
    new_spans: int = 0
    new_logs: int = 0
    turns: int = 0
    direct_turns: int = 0
    groups: int = 0
    bytes_done: int = 0
    turn_files: set[Path] = field(default_factory=set)
    rebuilt: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    written_ids: set[str] = field(default_factory=set)
    errors: list[InputError] = field(default_factory=list)


def _workers() -> int:
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return min(os.cpu_count() or 1, MAX_DEFAULT_WORKERS)
    try:
        return max(1, int(raw))
    except ValueError:
        logger.warning("%s=%r is not a number; using 1 worker", WORKERS_ENV, raw)
        return 1


def _plan(
    paths: Sequence[Path], known: Collection[str], errors: list[InputError]
) -> tuple[list[_Input], list[SkippedFile]]:
    inputs: list[_Input] = []
    skipped: list[SkippedFile] = []
    seen: dict[str, Path] = {}
    for path in iter_input_files(paths):
        try:
            key = file_key(path)
        except OSError as exc:
            # Not recorded as ingested: a later run retries it once it is readable.
            errors.append(InputError(str(path), "file", f"cannot read file: {exc.strerror or exc}"))
            continue
        if key in known:
            skipped.append(SkippedFile(path, key, "already ingested"))
        elif key in seen:
            skipped.append(SkippedFile(path, key, f"same content as {seen[key]}"))
        else:
            seen[key] = path
            inputs.append(_Input(path, key, path.stat().st_size))
    return inputs, skipped


def _groups(inputs: Sequence[_Input], budget: int) -> Iterator[list[_Input]]:
    group: list[_Input] = []
    size = 0
    for item in inputs:
        if group and size + item.size > budget:
            yield group
            group, size = [], 0
        group.append(item)
        size += item.size
    if group:
        yield group


@dataclass(slots=True)
class _Carry:
    """Spans of traces whose root span had not arrived by the end of a group. They wait one
    group for it, since exporters cut batches in the order spans end and a root ends last:
    the trace is then read whole once, not stored half and rebuilt. Carried at most once."""

    spans: dict[RecordKey, RawSpan] = field(default_factory=dict)
    decoded: dict[int, Decoded] = field(default_factory=dict)
    sources: set[str] = field(default_factory=set)


def _ingest_group(
    group: list[_Input],
    spans_store: SpanStore,
    turn_store: TurnStore,
    decode: _Decoder,
    ingest_id: str,
    state: _Totals,
    progress: ProgressFn | None,
    files_total: int,
    bytes_total: int,
    reads: Iterator[FileRead] | None,
    carried: _Carry,
    direct: bool,
    workers: int,
    *,
    last: bool = False,
) -> _Carry:
    fresh = _Group(spans=dict(carried.spans), decoded=dict(carried.decoded))
    fresh.sources |= carried.sources
    for item in group:
        _read_one(item, fresh, state, None if reads is None else next(reads))
        state.bytes_done += item.size
        if progress is not None:
            progress(
                Progress(len(state.files), files_total, state.bytes_done, bytes_total, state.spans)
            )

    touched = {k[1] for k in (*fresh.spans, *fresh.logs) if k[1] is not None}
    stored = spans_store.read(touched)
    stored_traces = {r.trace_id for r in (*stored.spans, *stored.logs)}
    carry = _Carry() if last else _carry(fresh, carried, stored_traces)
    touched -= {k[1] for k in carry.spans}
    stored_spans = {record_key(s): s for s in stored.spans}
    stored_logs = stored.keys() - set(stored_spans)
    new_spans = [s for k, s in fresh.spans.items() if k not in stored_spans]
    new_logs = [lg for k, lg in fresh.logs.items() if k not in stored_logs]
    state.errors.extend(_conflicts(fresh.spans, stored_spans))

    excluded = stored_traces | {lg.trace_id for lg in new_logs if lg.trace_id}
    candidates = _candidates(new_spans, excluded, spans_store) if direct else {}
    held = {s.trace_id for traces in candidates.values() for t in traces for s in t[:1]}
    decoded, errors = decode(
        trace_order([*stored.spans, *(s for s in new_spans if s.trace_id not in held)]),
        [*stored.logs, *new_logs],
        fresh.decoded,
    )
    rebuilt = set(touched)
    frontier = decoded
    # Stored traces of the same conversations (`turnscore.ingest.links`), until no new one
    # turns up: late spans and late turns rebuild the whole conversation.
    for _ in range(MAX_LINK_ROUNDS):
        found = spans_store.linked_traces(lookups(frontier)) - rebuilt
        if not found:
            break
        extra = spans_store.read(found)
        frontier, more_errors = decode(trace_order(extra.spans), extra.logs)
        decoded.extend(frontier)
        errors.extend(more_errors)
        rebuilt |= found
    # A conversation that traces here name goes the general way with them.
    named = {s.conversation_id for s in decoded if s.conversation_id}
    named |= {s.trace_id for s in decoded}
    back = [s for cid in list(candidates) if cid in named for t in candidates.pop(cid) for s in t]
    if back:
        more, more_errors = decode(trace_order(back), [], fresh.decoded)
        decoded.extend(more)
        errors.extend(more_errors)
    prefixes = _prefixes(decoded)
    held = {s.trace_id for traces in candidates.values() for t in traces for s in t[:1]}
    general_new = [s for s in new_spans if s.trace_id not in held]
    turns: list[Turn] = []

    def general() -> None:
        result = assemble_turns(decoded, ingest_id=ingest_id)
        errors.extend(result.errors)
        turns.extend(result.turns)
        links = span_links(decoded, result.trace_conversations)
        spans_store.write([*general_new, *new_logs], links)

    if candidates and not prefixes:
        # Nothing here can join them: they are independent, one shard per process.
        shards = run_shards(
            candidates,
            workers=workers,
            store=spans_store,
            tag=f"-g{state.groups}",
            case_id_attribute=decode.case_id_attribute,
            ingest_id=ingest_id,
            meanwhile=general,
        )
        for shard in shards:
            turns.extend(shard.turns)
            errors.extend(shard.errors)
            spans_store.index_parts((Path(path), rows) for path, rows in shard.parts)
            state.direct_turns += shard.direct_turns
    elif candidates:
        # A trace without a conversation id may chain into one by history: the direct
        # path solves here, and what a general-path trace would join goes the general way.
        solved = _solve_here(candidates, decode, ingest_id)
        _clashes(solved, prefixes)
        done = {t for c in solved.values() for t in c.traces}  # moved ones are out
        rest = [s for ts in candidates.values() for t in ts for s in t if s.trace_id not in done]
        more, more_errors = decode(trace_order(rest), [], fresh.decoded)
        decoded.extend(more)
        errors.extend(more_errors)
        result = assemble_turns(decoded, ingest_id=ingest_id)
        errors.extend(result.errors)
        links = span_links(decoded, result.trace_conversations)
        for conversation in solved.values():
            links.update(conversation.links)
            turns.extend(conversation.turns)
            state.direct_turns += len(conversation.turns)
        turns.extend(result.turns)
        spans_store.write([*new_spans, *new_logs], links)
    else:
        general()
    state.groups += 1
    state.errors.extend(_own_errors(errors, fresh.sources))
    # One order whatever path built a turn: by time, then as assembled.
    turns.sort(key=lambda t: (t.started_at, t.conversation_id, t.turn_index))
    write = turn_store.replace(turns, rebuilt)
    state.turn_files.update(write.written)
    state.rebuilt |= rebuilt
    state.removed.update(write.removed_ids)
    state.written_ids.update(t.turn_id for t in turns)
    state.turns += len(turns)
    state.new_spans += len(new_spans)
    state.new_logs += len(new_logs)
    logger.info(
        "group of %d file(s): %d new span(s), %d trace(s) rebuilt, %d turn(s) (%d in all "
        "direct), %d span(s) of unfinished traces carried to the next group",
        len(group),
        len(new_spans),
        len(rebuilt),
        len(turns),
        state.direct_turns,
        len(carry.spans),
    )
    return carry


def _carry(fresh: _Group, carried: _Carry, stored_traces: set[str]) -> _Carry:
    """Take out of `fresh` the spans of new traces without a root span yet (not carried
    before, no log records, nothing stored: a late part of a stored trace is processed now)."""
    rooted = {s.trace_id for s in fresh.spans.values() if s.parent_span_id is None}
    logged = {k[1] for k in fresh.logs}
    waiting = {k[1] for k in carried.spans}
    out = _Carry()
    for key, span in list(fresh.spans.items()):
        trace = span.trace_id
        if trace in rooted or trace in logged or trace in waiting or trace in stored_traces:
            continue
        out.spans[key] = fresh.spans.pop(key)
        found = fresh.decoded.get(id(span))
        if found is not None:
            out.decoded[id(span)] = found
        out.sources.add(span.source)
    return out


def _candidates(
    new_spans: Sequence[RawSpan], excluded: set[str], spans_store: SpanStore
) -> dict[str, list[list[RawSpan]]]:
    """New traces (not `excluded`) by the conversation id their root span names, for the
    direct path; conversations something stored belongs to are left out."""
    by_trace: dict[str, list[RawSpan]] = {}
    for s in new_spans:
        if s.trace_id not in excluded:
            by_trace.setdefault(s.trace_id, []).append(s)
    conversations: dict[str, list[list[RawSpan]]] = {}
    for spans in by_trace.values():
        root = next((s for s in spans if s.parent_span_id is None), None)
        cid = conversation_id(root.attributes) if root is not None else None
        if cid is not None:
            conversations.setdefault(cid, []).append(spans)
    if conversations and spans_store.linked_traces(Lookups(conversations=set(conversations))):
        for cid in list(conversations):
            if spans_store.linked_traces(Lookups(conversations={cid})):
                del conversations[cid]
    return conversations


def _prefixes(decoded: Sequence[Span]) -> set[str]:
    """History prefixes by which traces without a conversation id could chain into another
    trace's conversation. Grouping chains such a trace by its first main-line model call;
    every model call with input stands in for it here (a needless move only costs time)."""
    with_id = {s.trace_id for s in decoded if s.conversation_id}
    return {
        key
        for s in decoded
        if s.kind is SpanKind.LLM and s.input_messages is not None and s.trace_id not in with_id
        for key in prefix_keys(s)
    }


def _solve_here(
    candidates: dict[str, list[list[RawSpan]]], decode: _Decoder, ingest_id: str
) -> dict[str, DirectConversation]:
    traces = [t for traces in candidates.values() for t in traces]
    return solve(
        traces, case_id_attribute=decode.case_id_attribute, ingest_id=ingest_id, histories=True
    )


def _clashes(solved: dict[str, DirectConversation], prefixes: set[str]) -> set[str]:
    """Traces of solved conversations that a trace without a conversation id would chain
    into by history: taken out of `solved`, for the general path."""
    moved: set[str] = set()
    for cid in list(solved):
        if not prefixes.isdisjoint(solved[cid].histories):
            moved |= solved.pop(cid).traces
    return moved



@dataclass(frozen=True, slots=True)
class _Decoder:
    case_id_attribute: str | None

    def __call__(
        self,
        spans: Sequence[RawSpan],
        logs: Sequence[RawLog],
        decoded_alone: dict[int, Decoded] | None = None,
    ) -> tuple[list[Span], list[InputError]]:
        return decode_spans(
            spans, logs, case_id_attribute=self.case_id_attribute, decoded_alone=decoded_alone
        )


def _read_one(item: _Input, fresh: _Group, state: _Totals, read: FileRead | None) -> None:
    spans = logs = errors = 0
    source = str(item.path)
    fresh.sources.add(source)
    if read is not None:
        assert read.path == item.path  # prefetch yields the inputs in order
        fresh.reads.append(read)
        fresh.decoded.update(read.by_record())
    for rec in _records(item.path) if read is None else read.records:
        if isinstance(rec, RawSpan):
            spans += 1
            fresh.spans.setdefault(record_key(rec), rec)
        elif isinstance(rec, RawLog):
            logs += 1
            fresh.logs.setdefault(record_key(rec), rec)
        else:
            errors += 1
            state.errors.append(rec)
    state.spans += spans
    state.logs += logs
    state.files.append(IngestedFile(item.key, item.path, item.size, spans, logs, errors))


def _records(path: Path) -> Iterable[Record]:
    """The file's records: through pyarrow's reader when it can read the file exactly as
    the plain reader would (`arrow_read`), else the plain way."""
    table = read_span_table(path)
    return read_file(path) if table is None else raw_spans(table)


def _conflicts(
    fresh: dict[RecordKey, RawSpan], stored: dict[RecordKey, RawSpan]
) -> Iterator[InputError]:
    for key, span in fresh.items():
        old = stored.get(key)
        if old is not None and _content(old) != _content(span):
            yield InputError(
                span.source,
                span.position,
                f"span {span.span_id} of trace {span.trace_id} was already stored with "
                f"different content (from {old.source}); kept the stored copy",
                span_id=span.span_id,
                trace_id=span.trace_id,
            )


def _content(span: RawSpan) -> RawSpan:
    return replace(span, source="", position="")


def _own_errors(errors: Iterable[InputError], sources: set[str]) -> Iterator[InputError]:
    """Errors about this group's files; stored spans' errors were reported when first read."""
    for err in errors:
        if not err.source or err.source in sources:
            yield err
