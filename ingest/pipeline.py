"""The ingest stage: OTLP files in, `spans/` and `turns/` Parquet out (DESIGN §1, §7).

`ingest_paths` works through the input in groups of files (about `group_bytes` of file
content each), so memory holds one group's records plus the stored spans of the traces
that group touches, never the whole input. Per group (`_solve_group`, which returns what
it found; the caller writes the turns and keeps the totals):

1. read every record (`otlp.read_file`); input errors are kept, reading goes on;
2. dedup spans by (trace_id, span_id) and log records by content: identical records in
   two files, or already in `spans/`, are one record (the stored copy wins; a differing
   copy is reported). New traces without their root span wait for the next group, once:
   exporters cut batches in the order spans end, and a root ends last, so the trace is
   then read whole once rather than stored half and rebuilt;
3. load the stored records of every trace the group touches, and split all of them into
   partitions by conversation (`turnscore.ingest.partition`), one per worker process;
4. solve each partition (decode, assemble, link: one pure function) on its process
   (`turnscore.ingest.shards`), each writing its new records' span files. Partitions
   whose keys show they share a conversation, or that continue conversations stored
   earlier (by conversation id or by the message history they continue,
   `turnscore.ingest.links`), are solved again here, together and with those stored
   traces, so late spans, late turns and late earlier turns all rebuild the whole
   conversation;
5. each turn replaces its older row, and rows of rebuilt traces that the rebuild no longer
   produced are removed (`TurnStore`).

How the input is cut into groups and partitions changes how much work a group takes,
never its result. Every trace the input touches is rebuilt, even when all its spans were
stored already: that is what lets a rerun after a crash (records stored, warehouse not
loaded) finish the job. The warehouse load (`turnscore.warehouse.ingest_run`) compares
rows and leaves unchanged turns alone. The caller holds the warehouse writer lock.
"""

from __future__ import annotations

import gc
import logging
import os
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from turnscore.ingest import shards
from turnscore.ingest.decode import conversation_id, decode_spans, trace_order
from turnscore.ingest.formats import Limits
from turnscore.ingest.inputs import (
    Fresh,
    IngestedFile,
    SkippedFile,
    conflicts,
    file_key,
    groups,
    plan,
    read_into,
)
from turnscore.ingest.links import JoinKeys, join_keys
from turnscore.ingest.partition import Partition, Solved, assemble, clashes, merge, split
from turnscore.ingest.records import InputError, RawLog, RawSpan
from turnscore.ingest.settings import DEFAULT_GROUP_BYTES, IngestSettings
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
    "IngestSettings",
    "IngestedFile",
    "Progress",
    "ProgressFn",
    "SkippedFile",
    "default_workers",
    "file_key",
    "ingest_paths",
]

logger = logging.getLogger(__name__)

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
    rebuilt_traces: frozenset[str]
    """Traces rebuilt from all their spans: their turns not in `turn_files` are gone."""
    removed_turn_ids: tuple[str, ...]
    errors: tuple[InputError, ...]


def ingest_paths(
    paths: Sequence[Path],
    out_dir: Path,
    settings: IngestSettings | None = None,
    *,
    known_file_keys: Collection[str] = frozenset(),
    progress: ProgressFn | None = None,
    ingest_id: str | None = None,
    workers: int | None = None,
    group_bytes: int | None = None,
    limits: Limits | None = None,
) -> IngestBatch:
    """Ingest OTLP files and folders into `out_dir/spans` and `out_dir/turns`.

    Files whose content key is in `known_file_keys`, or repeats an earlier file of this
    batch, are skipped. Raises `FileNotFoundError` for a path that does not exist.
    `workers`, `group_bytes` and `limits`, when given, override those of `settings`.
    Default workers: `$TURNSCORE_INGEST_WORKERS`, else the cores (up to 4); the result is
    the same for any number.
    """
    settings = settings or IngestSettings()
    settings = replace(
        settings,
        workers=default_workers() if (workers or settings.workers) is None
        else workers or settings.workers,
        group_bytes=group_bytes or settings.group_bytes,
        limits=limits or settings.limits,
    )
    ingest_id = ingest_id or uuid.uuid4().hex
    remove_stale_temp_files(out_dir)
    run = _Run(SpanStore(out_dir, ingest_id), settings, ingest_id)
    turn_store = TurnStore(out_dir, ingest_id)
    totals = _Totals()
    inputs, skipped = plan(paths, known_file_keys, totals.errors)
    bytes_total = sum(i.size for i in inputs)
    try:
        with _fewer_collections():
            carry: dict[RecordKey, RawSpan] = {}
            cuts = [*groups(inputs, settings.group_bytes), []]
            for n, group in enumerate(cuts):
                last = n == len(cuts) - 1
                if last and not carry:
                    break
                fresh = Fresh(spans=dict(carry))
                for item in group:
                    read = read_into(item, fresh, totals.errors, settings.limits)
                    totals.files.append(read)
                    totals.spans += read.spans
                    totals.logs += read.logs
                    totals.bytes_done += item.size
                    if progress is not None:
                        progress(Progress(len(totals.files), len(inputs), totals.bytes_done,
                                          bytes_total, totals.spans))
                result = _solve_group(run, fresh, set(_traces(carry)), n, last=last)
                write = turn_store.replace(result.turns, result.rebuilt)
                totals.add(result, write.written, write.removed_ids)
                carry = result.carry
    finally:
        run.store.close()
        turn_store.close()
    written = {p for p in totals.turn_files if p.exists()}
    return IngestBatch(
        ingest_id=ingest_id,
        files=tuple(totals.files),
        skipped=tuple(skipped),
        spans=totals.spans,
        logs=totals.logs,
        new_spans=totals.new_spans,
        new_logs=totals.new_logs,
        turn_files=tuple(sorted(written)),
        turns=totals.turns,
        rebuilt_traces=frozenset(totals.rebuilt),
        removed_turn_ids=tuple(sorted(totals.removed - totals.written_ids)),
        errors=tuple(totals.errors),
    )


@dataclass(frozen=True, slots=True)
class _Run:
    """One `ingest_paths` call: its span store and settings."""

    store: SpanStore
    settings: IngestSettings
    ingest_id: str


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


@dataclass(frozen=True, slots=True)
class _GroupResult:
    """What one group solved: its turns, the traces rebuilt, what it stored, what waits."""

    turns: list[Turn]
    rebuilt: set[str]
    new_spans: int
    new_logs: int
    errors: list[InputError]
    carry: dict[RecordKey, RawSpan]
    """Spans of new traces without their root yet: they wait for the next group."""


@dataclass(slots=True)
class _Totals:
    files: list[IngestedFile] = field(default_factory=list)
    spans: int = 0
    logs: int = 0
    new_spans: int = 0
    new_logs: int = 0
    turns: int = 0
    bytes_done: int = 0
    turn_files: set[Path] = field(default_factory=set)
    rebuilt: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    written_ids: set[str] = field(default_factory=set)
    errors: list[InputError] = field(default_factory=list)

    def add(self, result: _GroupResult, written: Iterable[Path], removed: Iterable[str]) -> None:
        self.errors.extend(result.errors)
        self.turn_files.update(written)
        self.rebuilt |= result.rebuilt
        self.removed.update(removed)
        self.written_ids.update(t.turn_id for t in result.turns)
        self.turns += len(result.turns)
        self.new_spans += result.new_spans
        self.new_logs += result.new_logs


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


def _solve_group(
    run: _Run, fresh: Fresh, waited: set[str], n: int, *, last: bool
) -> _GroupResult:
    """Steps 2-4 of the module doc for one group's fresh records."""
    store, settings = run.store, run.settings
    touched = {k[1] for k in (*fresh.spans, *fresh.logs) if k[1] is not None}
    stored = store.read(touched)
    stored_traces = {s.trace_id for s in stored.spans}
    stored_traces |= {lg.trace_id for lg in stored.logs if lg.trace_id}
    carry = {} if last else _rootless(fresh, waited, stored_traces)
    touched -= set(_traces(carry))
    stored_spans = {record_key(s): s for s in stored.spans}
    stored_logs = stored.keys() - set(stored_spans)
    new_spans = [s for k, s in fresh.spans.items() if k not in stored_spans]
    new_logs = [lg for k, lg in fresh.logs.items() if k not in stored_logs]
    errors = list(conflicts(fresh.spans, stored_spans))

    # Stored traces of the conversations the group's spans name, read before the split so
    # that a partition continuing a stored conversation is solved whole on its worker,
    # not solved there and again here (history links, known only once decoded, still
    # are: the check after the shards).
    named = {c for s in (*new_spans, *stored.spans) if (c := conversation_id(s.attributes))}
    named_keys = JoinKeys(conversations=frozenset(named))
    earlier = store.linked_traces(named_keys) - touched if named else set()
    if earlier:
        extra = store.read(earlier)
        stored = replace(stored, spans=[*stored.spans, *extra.spans],
                         logs=[*stored.logs, *extra.logs])
    spans = [*stored.spans, *new_spans]
    logs = [lg for lg in (*stored.logs, *new_logs) if lg.trace_id]
    loose = [lg for lg in new_logs if not lg.trace_id]
    if loose:  # no trace to join: reported (content logs) and stored as they are
        errors.extend(decode_spans([], loose)[1])
        store.write(loose)
    new: list[RawSpan | RawLog] = [*new_spans, *(lg for lg in new_logs if lg.trace_id)]
    workers = settings.workers or 1
    count = max(1, min(workers, len(spans) // shards.MIN_SHARED_SPANS))
    rebuilt = touched | earlier
    turns: list[Turn] = []
    found: list[InputError] = []
    if count == 1:
        solved = _solve_linked(run, Partition(spans, logs, new), rebuilt)
        store.write(new, solved.links)
        turns, found = solved.turns, solved.errors
    else:
        parts = split(spans, logs, new, count)
        job = shards.ShardJob(store, f"-g{n}", settings.case_id_attribute, run.ingest_id)
        done = shards.run_shards(parts, job)
        for together in clashes([d.keys for d in done]):
            keys = done[together[0]].keys
            if len(together) == 1 and not store.linked_traces(keys) - rebuilt:
                store.index_parts(done[together[0]].parts)
                turns.extend(done[together[0]].turns)
                found.extend(done[together[0]].errors)
                continue
            # They share a conversation, or continue one stored earlier: solved again
            # together here, with the stored traces they name.
            for i in together:
                job.remove_files(i)
            part = merge([parts[i] for i in together])
            solved = _solve_linked(run, part, rebuilt)
            store.write(part.new, solved.links)
            turns.extend(solved.turns)
            found.extend(solved.errors)
    errors.extend(_own_errors(found, fresh.sources, waited))
    # One order however the work was cut: by time, then as assembled.
    turns.sort(key=lambda t: (t.started_at, t.conversation_id, t.turn_index))
    logger.info(
        "group %d: %d new span(s), %d trace(s) rebuilt, %d turn(s), %d partition(s), "
        "%d span(s) of unfinished traces carried to the next group",
        n, len(new_spans), len(rebuilt), len(turns), count, len(carry),
    )
    return _GroupResult(turns, rebuilt, len(new_spans), len(new_logs), errors, carry)


def _solve_linked(run: _Run, part: Partition, rebuilt: set[str]) -> Solved:
    """`partition.solve` of `part` with every stored trace of the same conversations (by
    conversation id or history, `turnscore.ingest.links`), followed until no new one turns
    up; the stored traces it took are added to `rebuilt`."""
    case = run.settings.case_id_attribute
    decoded, errors = decode_spans(trace_order(part.spans), part.logs, case_id_attribute=case)
    frontier = decoded
    for _ in range(MAX_LINK_ROUNDS):
        found = run.store.linked_traces(join_keys(frontier)) - rebuilt
        if not found:
            break
        extra = run.store.read(found)
        frontier, more = decode_spans(trace_order(extra.spans), extra.logs,
                                      case_id_attribute=case)
        decoded.extend(frontier)
        errors.extend(more)
        rebuilt |= found
    return assemble(decoded, errors, ingest_id=run.ingest_id)


def _rootless(fresh: Fresh, waited: set[str], stored: set[str]) -> dict[RecordKey, RawSpan]:
    """Take out of `fresh` the spans of new traces without a root span yet (not carried
    before, no log records, nothing stored: a late part of a stored trace is solved now)."""
    rooted = {s.trace_id for s in fresh.spans.values() if s.parent_span_id is None}
    logged = {k[1] for k in fresh.logs}
    out: dict[RecordKey, RawSpan] = {}
    for key, span in list(fresh.spans.items()):
        trace = span.trace_id
        if trace in rooted or trace in logged or trace in waited or trace in stored:
            continue
        out[key] = fresh.spans.pop(key)
    return out


def _traces(records: dict[RecordKey, RawSpan]) -> Iterator[str]:
    return (k[1] for k in records if k[1] is not None)


def _own_errors(
    errors: Iterable[InputError], sources: set[str], carried: set[str]
) -> Iterator[InputError]:
    """Errors about this group's files or the traces it carried in; stored spans' errors
    were reported when first read."""
    for err in errors:
        if not err.source or err.source in sources or err.trace_id in carried:
            yield err
