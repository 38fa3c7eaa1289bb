"""The ingest stage: OTLP files in, `spans/` and `turns/` Parquet out (DESIGN §1, §7).

`ingest_paths` works through the input in groups of files (about `group_bytes` of file
content each), so memory holds one group's records plus the stored spans of the traces
that group touches, never the whole input. Per group (`_gather`, then `_solve_group`,
which return what they found; the caller writes the turns and keeps the totals):

1. read every record (`otlp.read_file`); input errors are kept, reading goes on. Only
   this process reads, so it reads the next group while workers solve this one (step 4);
2. dedup spans by (trace_id, span_id) and log records by content: identical records in
   two files, or already in `spans/`, are one record (the stored copy wins; a differing
   copy is reported). New traces without their root span wait for the next group, once:
   exporters cut batches in the order spans end, and a root ends last, so the trace is
   then read whole once rather than stored half and rebuilt;
3. load the stored records of every trace the group touches, and split all of them into
   partitions by conversation (`turnscore.ingest.partition`), one per worker process;
4. solve each partition (decode, assemble, link: one pure function) on a worker process
   (`turnscore.ingest.shards`), each writing its new records' span files. Partitions
   whose keys show they share a conversation, or that continue conversations stored
   earlier (by conversation id or by the message history they continue,
   `turnscore.ingest.links`), are solved again here, together and with those stored
   traces, so late spans, late turns and late earlier turns all rebuild the whole
   conversation;
5. each turn replaces its older row, and rows of rebuilt traces that the rebuild no longer
   produced are removed (`TurnStore`): while the next group's partitions are solved, as
   its reading is, so that neither adds to this process's work between groups.

How the input is cut into groups and partitions changes how much work a group takes,
never its result. Every trace the input touches is rebuilt, even when all its spans were
stored already: that is what lets a rerun after a crash (records stored, warehouse not
loaded) finish the job. The warehouse load (`turnscore.warehouse.ingest_run`) compares
rows and leaves unchanged turns alone. The caller holds the warehouse writer lock.

(Over ~400 lines: the group loop and the steps above hand one another the carry, the
rebuilt traces and the overlap with the workers; `inputs`, `partition` and `shards` hold
the parts that stand alone.)
"""

from __future__ import annotations

import gc
import logging
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from turnscore.ingest import shards
from turnscore.ingest.decode import conversation_id, decode_spans, trace_order
from turnscore.ingest.detached import attach, detached_response, response_of, responses
from turnscore.ingest.formats import Limits
from turnscore.ingest.inputs import (
    Fresh,
    IngestedFile,
    InputFile,
    SkippedFile,
    conflicts,
    file_key,
    groups,
    plan,
    read_into,
)
from turnscore.ingest.links import JoinKeys, Lookups, join_keys
from turnscore.ingest.partition import Partition, Solved, assemble, clashes, merge, split
from turnscore.ingest.records import InputError, RawLog, RawSpan
from turnscore.ingest.settings import DEFAULT_GROUP_BYTES, IngestSettings, workers_from_env
from turnscore.ingest.store import (
    RecordKey,
    SpanStore,
    StoredRecords,
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
T = TypeVar("T")

MAX_LINK_ROUNDS = 64
"""Bound on following conversation/history links through stored traces per group (each
round also looks up the conversations the traces found were stored in, so a chain of
traces each joined only to the one before it takes a few rounds, not one per trace);
reaching it is logged."""
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
        workers=workers or settings.workers or default_workers(),
        group_bytes=group_bytes or settings.group_bytes,
        limits=limits or settings.limits,
    )
    ingest_id = ingest_id or uuid.uuid4().hex
    remove_stale_temp_files(out_dir)
    run = _Run(SpanStore(out_dir, ingest_id), settings, ingest_id)
    turn_store = TurnStore(out_dir, ingest_id)
    totals = _Totals()
    inputs, skipped = plan(paths, known_file_keys, totals.errors)
    reader = _Reader(settings.limits, progress, len(inputs), sum(i.size for i in inputs))
    cuts = [*groups(inputs, settings.group_bytes), []]
    def store_turns(result: _GroupResult | None) -> None:
        if result is not None:
            write = turn_store.replace(result.turns, result.rebuilt)
            totals.add(result, write.written, write.removed_ids)

    def meanwhile(
        solved: _GroupResult | None, group: Sequence[InputFile], carry: dict[RecordKey, RawSpan]
    ) -> tuple[Fresh, list[InputError]]:
        store_turns(solved)
        return reader.read(group, carry)

    try:
        with _fewer_collections():
            fresh, carried = reader.read(cuts[0], {}), frozenset[str]()
            unstored: _GroupResult | None = None
            for n, upcoming in enumerate([*cuts[1:], None]):
                if upcoming is None and not fresh[0].spans:
                    break  # nothing was carried to the last round
                totals.errors.extend(fresh[1])
                work = _gather(run.store, fresh[0], carried, last=upcoming is None)
                # While this group's partitions are solved, the group before's turns are
                # written and the next group is read: on the workers' cores that is work
                # in parallel; after them it would be this process's alone (step 5 reads
                # no turn, so it can wait one group; TurnStore calls stay in order).
                later = partial(meanwhile, unstored, upcoming or [], work.carry)
                unstored, fresh = _solve_group(run, work, n, later)
                carried = frozenset(_traces(work.carry))
            store_turns(unstored)
    finally:
        run.store.close()
        turn_store.close()
    written = {p for p in totals.turn_files if p.exists()}
    return IngestBatch(
        ingest_id=ingest_id,
        files=tuple(reader.files),
        skipped=tuple(skipped),
        spans=reader.spans,
        logs=sum(f.logs for f in reader.files),
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


@dataclass(slots=True)
class _Reader:
    """Reads the groups of one ingest in order, keeping its file list and counts."""

    limits: Limits
    progress: ProgressFn | None
    files_total: int
    bytes_total: int
    files: list[IngestedFile] = field(default_factory=list)
    spans: int = 0
    bytes_done: int = 0

    def read(
        self, group: Sequence[InputFile], carry: dict[RecordKey, RawSpan]
    ) -> tuple[Fresh, list[InputError]]:
        """The group's records, after the spans carried from the group before; and the
        input errors found reading it."""
        fresh = Fresh(spans=dict(carry))
        errors: list[InputError] = []
        for item in group:
            read = read_into(item, fresh, errors, self.limits)
            self.files.append(read)
            self.spans += read.spans
            self.bytes_done += item.size
            if self.progress is not None:
                self.progress(Progress(len(self.files), self.files_total, self.bytes_done,
                                       self.bytes_total, self.spans))
        return fresh, errors


@dataclass(frozen=True, slots=True)
class _Work:
    """One group's work: every record of the traces it touches (step 3 of the module doc)."""

    spans: list[RawSpan]
    logs: list[RawLog]
    """Those with a trace id."""
    new: list[RawSpan | RawLog]
    """Records to store: not stored yet."""
    loose: list[RawLog]
    """New log records without a trace id: stored as they are."""
    rebuilt: frozenset[str]
    new_spans: int
    new_logs: int
    errors: list[InputError]
    carry: dict[RecordKey, RawSpan]
    """Spans of new traces without their root yet: they wait for the next group."""
    sources: set[str]
    carried: frozenset[str]
    """Traces carried in from the group before."""


def _gather(store: SpanStore, fresh: Fresh, carried: frozenset[str], *, last: bool) -> _Work:
    """Steps 2 and 3 of the module doc for one group's fresh records."""
    fresh = _attached(store, fresh)
    touched = {k[1] for k in (*fresh.spans, *fresh.logs) if k[1] is not None}
    stored = store.read(touched)
    stored_traces = {s.trace_id for s in stored.spans}
    stored_traces |= {lg.trace_id for lg in stored.logs if lg.trace_id}
    waiting = set() if last else _rootless(fresh, carried | stored_traces)
    carry = {k: s for k, s in fresh.spans.items() if s.trace_id in waiting}
    touched -= waiting
    stored_spans = {record_key(s): s for s in stored.spans}
    stored_logs = stored.keys() - set(stored_spans)
    new_spans = [s for k, s in fresh.spans.items() if k not in stored_spans and k not in carry]
    new_logs = [lg for k, lg in fresh.logs.items() if k not in stored_logs]
    # Stored traces of the conversations the group's spans name, read before the split so
    # that a partition continuing a stored conversation is solved whole on its worker,
    # not solved there and again here (history links, known only once decoded, still
    # are: the check after the shards).
    named = {c for s in (*new_spans, *stored.spans) if (c := conversation_id(s.attributes))}
    earlier = store.linked_traces(JoinKeys(frozenset(named))) - touched if named else set()
    extra = store.read(earlier) if earlier else StoredRecords()
    return _Work(
        spans=[*stored.spans, *extra.spans, *new_spans],
        logs=[lg for lg in (*stored.logs, *extra.logs, *new_logs) if lg.trace_id],
        new=[*new_spans, *(lg for lg in new_logs if lg.trace_id)],
        loose=[lg for lg in new_logs if not lg.trace_id],
        rebuilt=frozenset(touched | earlier),
        new_spans=len(new_spans),
        new_logs=len(new_logs),
        errors=list(conflicts(fresh.spans, stored_spans)),
        carry=carry,
        sources=fresh.sources,
        carried=carried,
    )


@dataclass(frozen=True, slots=True)
class _GroupResult:
    """What one group solved: its turns, the traces rebuilt, what it stored."""

    turns: list[Turn]
    rebuilt: frozenset[str]
    new_spans: int
    new_logs: int
    errors: list[InputError]


@dataclass(slots=True)
class _Totals:
    new_spans: int = 0
    new_logs: int = 0
    turns: int = 0
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
    return workers_from_env(WORKERS_ENV, MAX_DEFAULT_WORKERS)


def _solve_group(
    run: _Run, work: _Work, n: int, meanwhile: Callable[[], T]
) -> tuple[_GroupResult, T]:
    """Step 4 of the module doc for one group's work, and what `meanwhile` returns: it runs
    while the partitions are solved on other processes."""
    store = run.store
    errors = list(work.errors)
    if work.loose:  # no trace to join: reported (content logs) and stored as they are
        errors.extend(decode_spans([], work.loose)[1])
        store.write(work.loose)
    workers = run.settings.workers or 1
    count = max(1, min(workers, len(work.spans) // shards.MIN_SHARED_SPANS))
    if count == 1:
        solved, rebuilt = _solve_linked(run, Partition(work.spans, work.logs, work.new),
                                        work.rebuilt)
        store.write(work.new, solved.links)
        turns, found, later = solved.turns, solved.errors, meanwhile()
    else:
        turns, found, rebuilt, later = _solve_shards(run, work, n, count, meanwhile)
    errors.extend(_own_errors(found, work.sources, work.carried))
    # One order however the work was cut: by time, then as assembled.
    turns.sort(key=lambda t: (t.started_at, t.conversation_id, t.turn_index))
    logger.info(
        "group %d: %d new span(s), %d trace(s) rebuilt, %d turn(s), %d partition(s), "
        "%d span(s) of unfinished traces carried to the next group",
        n, work.new_spans, len(rebuilt), len(turns), count, len(work.carry),
    )
    return _GroupResult(turns, rebuilt, work.new_spans, work.new_logs, errors), later


def _solve_shards(
    run: _Run, work: _Work, n: int, count: int, meanwhile: Callable[[], T]
) -> tuple[list[Turn], list[InputError], frozenset[str], T]:
    """`work` in `count` partitions on worker processes; partitions whose keys show they
    share a conversation, or continue one stored earlier, solved again here, together."""
    store = run.store
    parts = split(work.spans, work.logs, work.new, count)
    job = shards.ShardJob(store, f"-g{n}", run.settings.case_id_attribute, run.ingest_id)
    done, later = shards.run_shards(parts, job, meanwhile)
    # A stored trace two partitions continue joins them: its id is one of their keys.
    linked = [store.linked_traces(d.keys) - work.rebuilt for d in done]
    keys = [replace(d.keys, conversations=d.keys.conversations | more)
            for d, more in zip(done, linked, strict=True)]
    turns: list[Turn] = []
    found: list[InputError] = []
    rebuilt = work.rebuilt
    for together in clashes(keys):
        if len(together) == 1 and not linked[together[0]]:
            store.index_parts(done[together[0]].parts)
            turns.extend(done[together[0]].turns)
            found.extend(done[together[0]].errors)
            continue
        for i in together:
            job.remove_files(i)
        part = merge([parts[i] for i in together])
        solved, rebuilt = _solve_linked(run, part, rebuilt)
        store.write(part.new, solved.links)
        turns.extend(solved.turns)
        found.extend(solved.errors)
    return turns, found, rebuilt, later


def _solve_linked(
    run: _Run, part: Partition, rebuilt: frozenset[str]
) -> tuple[Solved, frozenset[str]]:
    """`partition.solve` of `part` with every stored trace of the same conversations (by
    conversation id or history, `turnscore.ingest.links`) not in `rebuilt`, followed until
    no new one turns up; and `rebuilt` with the stored traces it took."""
    case = run.settings.case_id_attribute
    decoded, errors = decode_spans(trace_order(part.spans), part.logs, case_id_attribute=case)
    frontier = decoded
    named: set[str] = set()  # the conversations the traces found last were stored in
    for _ in range(MAX_LINK_ROUNDS):
        keys = join_keys(frontier)
        found = run.store.linked_traces(
            replace(keys, conversations=keys.conversations | named)) - rebuilt
        if not found:
            break
        extra = run.store.read(found)
        frontier, more = decode_spans(trace_order(extra.spans), extra.logs,
                                      case_id_attribute=case)
        decoded.extend(frontier)
        errors.extend(more)
        rebuilt |= found
        named = extra.conversations
    else:
        logger.warning("stopped following stored traces of one conversation after %d rounds; "
                       "it may be rebuilt in part", MAX_LINK_ROUNDS)
    return assemble(decoded, errors, ingest_id=run.ingest_id), rebuilt


def _attached(store: SpanStore, fresh: Fresh) -> Fresh:
    """`fresh` with each content record that names no span, or another than the one that
    reported its response, given the ids of that span (`turnscore.ingest.detached`),
    whether the two arrive together or one of them was stored by an earlier group or run."""
    said = {k: lg for k, lg in fresh.logs.items() if response_of(lg)}
    stored_detached = store.holds_detached()
    if not said and not stored_detached:  # most groups: nothing to attach
        return fresh
    by_response = responses(fresh.spans.values())
    wanted = {rid for lg in said.values() if (rid := detached_response(lg))}
    if missing := wanted - by_response.keys():
        stored = store.read(store.linked_traces(Lookups(responses=frozenset(missing))))
        for rid, spans in responses(stored.spans).items():
            by_response.setdefault(rid, spans)
    earlier = store.detached(by_response.keys() - wanted) if stored_detached else []
    if not (said and by_response) and not earlier:
        return fresh
    named = {(s.trace_id, s.span_id): s for s in fresh.spans.values()}
    logs = dict(fresh.logs)
    for key, log in zip(said, attach(list(said.values()), by_response, named), strict=True):
        if log is not said[key]:
            del logs[key]
            logs[record_key(log)] = log
    for log in attach(earlier, by_response):
        if log.trace_id:
            logs.setdefault(record_key(log), log)
    return replace(fresh, logs=logs)


def _rootless(fresh: Fresh, exempt: Collection[str]) -> set[str]:
    """New traces of `fresh` without a root span yet, no log records and not `exempt`
    (carried before, or stored: a late part of a stored trace is solved now)."""
    rooted = {s.trace_id for s in fresh.spans.values() if s.parent_span_id is None}
    logged = {k[1] for k in fresh.logs}
    return {s.trace_id for s in fresh.spans.values()} - rooted - logged - set(exempt)


def _traces(records: dict[RecordKey, RawSpan]) -> Iterator[str]:
    return (k[1] for k in records if k[1] is not None)


def _own_errors(
    errors: Iterable[InputError], sources: set[str], carried: Collection[str]
) -> Iterator[InputError]:
    """Errors about this group's files or the traces it carried in; stored spans' errors
    were reported when first read."""
    for err in errors:
        if not err.source or err.source in sources or err.trace_id in carried:
            yield err
