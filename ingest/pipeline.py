"""The ingest stage: OTLP files in, `spans/` and `turns/` Parquet out (DESIGN §1).

`ingest_paths` works through the input in groups of files (about `group_bytes` of file
content each), so memory holds one group's records plus the stored spans of the traces
that group touches, never the whole input. Per group:

1. read every record (pyarrow's reader where it reads a file exactly as the plain one,
   `arrow_read`, else `otlp.read_file`); input errors are kept, reading goes on;
2. dedup spans by (trace_id, span_id) and log records by content: identical records in
   two files, or already in `spans/`, are one record (the stored copy wins; a differing
   copy is reported). New traces without their root span wait for the next group, once
   (`triage.carry`): exporters cut batches in the order spans end, and a root ends last;
3. set aside *candidates*: new traces, without log records, grouped by the conversation
   id their root names, of conversations nothing stored belongs to;
4. the general path: load the stored records of every other trace the group touches,
   decode stored + new, and widen to the stored traces of the same conversations, by
   conversation id or by the message history they continue (`turnscore.ingest.links`),
   so late spans, late turns and late earlier turns all rebuild the whole conversation.
   A candidate conversation these traces name, or could continue by history, joins them;
5. assemble turns (a pure function: the same spans give the same turns and turn ids):
   candidates through the direct path where they fit (`turnscore.ingest.direct`),
   independent conversations in shards on worker processes (`turnscore.ingest.shards`);
   store the new raw records, then the turns: each turn replaces its older row, and rows
   of rebuilt traces that the rebuild no longer produced are removed (`TurnStore`).

Steps 2-5 change how much work a group takes, never its result: the same turns and
stored spans as the general path alone (`direct=False`; tested on mutated inputs).
Every trace the input touches is rebuilt, even when all its spans were stored already:
that is what lets a rerun after a crash (records stored, warehouse not loaded) finish the
job. The warehouse load (`turnscore.warehouse.ingest_run`) compares rows and leaves
unchanged turns alone. The caller holds the warehouse writer lock.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import os
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from turnscore.ingest import triage
from turnscore.ingest.arrow_read import raw_spans, read_span_table
from turnscore.ingest.assemble import assemble_turns
from turnscore.ingest.decode import decode_spans, trace_order
from turnscore.ingest.direct import DirectConversation, solve
from turnscore.ingest.fast_read import Decoded, FileRead, prefetch, read_whole
from turnscore.ingest.formats import DEFAULT_LIMITS, Limits
from turnscore.ingest.links import lookups, span_links
from turnscore.ingest.model import Span
from turnscore.ingest.otlp import Record, iter_input_files, read_file, unreadable
from turnscore.ingest.records import InputError, RawLog, RawSpan
from turnscore.ingest.shards import run_shards
from turnscore.ingest.store import (
    RecordKey,
    SpanStore,
    TurnStore,
    record_key,
    remove_stale_temp_files,
)
from turnscore.ingest.triage import Carry
from turnscore.ingest.turn import Turn

__all__ = [
    "DEFAULT_GROUP_BYTES",
    "WORKERS_ENV",
    "IngestBatch",
    "IngestedFile",
    "Progress",
    "ProgressFn",
    "SkippedFile",
    "default_workers",
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
    limits: Limits = DEFAULT_LIMITS,
) -> IngestBatch:
    """Ingest OTLP files and folders into `out_dir/spans` and `out_dir/turns`.

    Files whose content key is in `known_file_keys`, or repeats an earlier file of this
    batch, are skipped. Raises `FileNotFoundError` for a path that does not exist.
    `case_id_attribute` names the span attribute holding the labelled-case key.
    `direct`: plain OTel GenAI agent runs take the direct path (`turnscore.ingest.direct`),
    independent conversations shared among `workers` processes (`shards`); without it,
    `workers - 1` processes read and decode files ahead (`fast_read`). The result is the
    same either way. Default workers: `$TURNSCORE_INGEST_WORKERS`, else the cores (up to 4).
    `limits`: how far a compressed file may expand (`formats.Limits`).
    """
    ingest_id = ingest_id or uuid.uuid4().hex
    remove_stale_temp_files(out_dir)
    spans_store = SpanStore(out_dir, ingest_id)
    turn_store = TurnStore(out_dir, ingest_id)
    state = _Totals()
    inputs, skipped = _plan(paths, known_file_keys, state.errors)
    total = sum(i.size for i in inputs)
    decode = _Decoder(case_id_attribute)
    workers = default_workers() if workers is None else workers
    reads = (
        prefetch((i.path for i in inputs), workers, case_id_attribute, limits)
        if workers > 1 and not direct
        else None
    )
    run = _Run(
        spans_store, turn_store, decode, ingest_id, state, progress, len(inputs), total, reads,
        direct, workers, limits,
    )
    try:
        with _fewer_collections():
            carry = Carry()
            for group in _groups(inputs, group_bytes):
                carry = _ingest_group(run, group, carry)
            if carry.spans:
                _ingest_group(run, [], carry, last=True)
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


@dataclass(frozen=True, slots=True)
class _Run:
    """One `ingest_paths` call: its stores, settings and running totals."""

    spans_store: SpanStore
    turn_store: TurnStore
    decode: _Decoder
    ingest_id: str
    state: _Totals
    progress: ProgressFn | None
    files_total: int
    bytes_total: int
    reads: Iterator[FileRead] | None
    """Worker processes reading and decoding ahead (`fast_read`), for the general path."""
    direct: bool
    workers: int
    limits: Limits


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Decoding makes millions of small objects without cycles, and the cyclic collector's
    default thresholds would scan a group's records over and over (about 8% of an ingest,
    measured). Raised while ingest runs, restored after; cycles are still collected."""
    before = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


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


def default_workers() -> int:
    """`$TURNSCORE_INGEST_WORKERS`, else the cores (up to `MAX_DEFAULT_WORKERS`)."""
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
            size = path.stat().st_size
        except OSError as exc:
            # Not recorded as ingested: a later run retries it once it is readable.
            errors.append(unreadable(path, exc))
            continue
        if key in known:
            skipped.append(SkippedFile(path, key, "already ingested"))
        elif key in seen:
            skipped.append(SkippedFile(path, key, f"same content as {seen[key]}"))
        else:
            seen[key] = path
            inputs.append(_Input(path, key, size))
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


def _ingest_group(run: _Run, group: list[_Input], carried: Carry, *, last: bool = False) -> Carry:
    spans_store, turn_store, decode, state = run.spans_store, run.turn_store, run.decode, run.state
    ingest_id, progress, reads = run.ingest_id, run.progress, run.reads
    fresh = _Group(spans=dict(carried.spans), decoded=dict(carried.decoded))
    for item in group:
        _read_one(item, fresh, state, None if reads is None else next(reads), run.limits)
        state.bytes_done += item.size
        if progress is not None:
            progress(
                Progress(
                    len(state.files), run.files_total, state.bytes_done, run.bytes_total,
                    state.spans,
                )
            )

    touched = {k[1] for k in (*fresh.spans, *fresh.logs) if k[1] is not None}
    stored = spans_store.read(touched)
    stored_traces = {r.trace_id for r in (*stored.spans, *stored.logs)}
    carry = (
        Carry()
        if last
        else triage.carry(fresh.spans, fresh.logs, fresh.decoded, carried, stored_traces)
    )
    touched -= {k[1] for k in carry.spans}
    stored_spans = {record_key(s): s for s in stored.spans}
    stored_logs = stored.keys() - set(stored_spans)
    new_spans = [s for k, s in fresh.spans.items() if k not in stored_spans]
    new_logs = [lg for k, lg in fresh.logs.items() if k not in stored_logs]
    state.errors.extend(_conflicts(fresh.spans, stored_spans))

    excluded = stored_traces | {lg.trace_id for lg in new_logs if lg.trace_id}
    candidates = triage.candidates(new_spans, excluded, spans_store) if run.direct else {}
    held = _traces(candidates)
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
    for cid in named & candidates.keys():
        del candidates[cid]
    prefixes = triage.prefixes(decoded) if candidates else set()
    turns: list[Turn] = []

    def general(spans: Sequence[RawSpan], direct: Sequence[DirectConversation] = ()) -> None:
        """Store `spans` with their links, and assemble those the direct conversations do
        not hold on the general path (decoding the ones not decoded yet)."""
        held = {s.trace_id for s in decoded} | {t for c in direct for t in c.traces}
        more, more_errors = decode(
            trace_order(s for s in spans if s.trace_id not in held), [], fresh.decoded
        )
        decoded.extend(more)
        errors.extend(more_errors)
        result = assemble_turns(decoded, ingest_id=ingest_id)
        errors.extend(result.errors)
        turns.extend(result.turns)
        links = span_links(decoded, result.trace_conversations)
        for conversation in direct:
            links.update(conversation.links)
            turns.extend(conversation.turns)
            state.direct_turns += len(conversation.turns)
        spans_store.write([*spans, *new_logs], links)

    if candidates and not prefixes:
        # Nothing here can join them: they are independent, one shard per process.
        held = _traces(candidates)
        shards = run_shards(
            candidates,
            workers=run.workers,
            store=spans_store,
            tag=f"-g{state.groups}",
            case_id_attribute=decode.case_id_attribute,
            ingest_id=ingest_id,
            meanwhile=lambda: general([s for s in new_spans if s.trace_id not in held]),
        )
        for shard in shards:
            turns.extend(shard.turns)
            errors.extend(shard.errors)
            spans_store.index_parts(shard.parts)
            state.direct_turns += shard.direct_turns
    else:
        # A trace without a conversation id may chain into a candidate by history: the
        # direct path solves here, and what a general-path trace would join (or what does
        # not fit) goes the general way.
        solved = solve(
            [t for ts in candidates.values() for t in ts],
            case_id_attribute=decode.case_id_attribute,
            ingest_id=ingest_id,
            histories=True,
        )
        triage.clashes(solved, prefixes)
        general(new_spans, list(solved.values()))
    state.groups += 1
    waited = {k[1] for k in carried.spans}
    state.errors.extend(_own_errors(errors, fresh.sources, waited))
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


def _traces(candidates: dict[str, list[list[RawSpan]]]) -> set[str]:
    return {trace[0].trace_id for traces in candidates.values() for trace in traces}


def _read_one(
    item: _Input, fresh: _Group, state: _Totals, read: FileRead | None, limits: Limits
) -> None:
    spans = logs = errors = 0
    source = str(item.path)
    fresh.sources.add(source)
    if read is not None:
        assert read.path == item.path  # prefetch yields the inputs in order
        fresh.reads.append(read)
        fresh.decoded.update(read.by_record())
    for rec in _records(item.path, limits) if read is None else read.records:
        if isinstance(rec, RawSpan):
            spans += 1
            first = fresh.spans.setdefault(record_key(rec), rec)
            if first is not rec and _content(first) != _content(rec):
                state.errors.append(_twice(rec, first))
        elif isinstance(rec, RawLog):
            logs += 1
            fresh.logs.setdefault(record_key(rec), rec)
        else:
            errors += 1
            state.errors.append(rec)
    state.spans += spans
    state.logs += logs
    state.files.append(IngestedFile(item.key, item.path, item.size, spans, logs, errors))


def _records(path: Path, limits: Limits) -> list[Record]:
    """The file's records: through pyarrow's reader when it can read the file exactly as
    the plain reader would (`arrow_read`), else the plain way. Reading one file is where
    its failures stop (`read_whole`)."""

    def read() -> Iterable[Record]:
        table = read_span_table(path, limits)
        return read_file(path, limits) if table is None else raw_spans(table)

    return read_whole(path, read)


def _conflicts(
    fresh: dict[RecordKey, RawSpan], stored: dict[RecordKey, RawSpan]
) -> Iterator[InputError]:
    for key, span in fresh.items():
        old = stored.get(key)
        if old is not None and _content(old) != _content(span):
            yield _copy_error(
                span, f"was already stored with different content (from {old.source}); "
                "kept the stored copy"
            )


def _twice(span: RawSpan, first: RawSpan) -> InputError:
    return _copy_error(
        span, f"arrived twice with different content; kept the first copy (from "
        f"{first.source}, {first.position})"
    )


def _copy_error(span: RawSpan, what: str) -> InputError:
    """A copy of a span that differs from the one kept, and `what` was kept."""
    return InputError(
        span.source,
        span.position,
        f"span {span.span_id} of trace {span.trace_id} {what}",
        span_id=span.span_id,
        trace_id=span.trace_id,
    )


def _content(span: RawSpan) -> RawSpan:
    return replace(span, source="", position="")


def _own_errors(
    errors: Iterable[InputError], sources: set[str], carried: set[str]
) -> Iterator[InputError]:
    """Errors about this group's files or the traces it carried in; stored spans' errors
    were reported when first read."""
    for err in errors:
        if not err.source or err.source in sources or err.trace_id in carried:
            yield err
