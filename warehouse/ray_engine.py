"""`--engine ray`: ingest as a Ray Data job over object storage (DESIGN §7).

The job runs the same pure functions as local ingest, as Ray Data tasks:

1. **read** (one task per input file): the file's bytes from storage, its content key
   (sha256, as `ingested_files` records it), its records (`otlp.read_bytes`, failures
   stopped at the file by `inputs.read_whole`);
2. **trace pass** (`groupby(trace_id)`): one copy of each record (`inputs.dedup_records`),
   decode (`decode.decode_spans`), and the trace's conversation keys (`partition.trace_keys`);
3. **stored links** (tasks over the committed `spans/` files, in rounds): the stored traces the
   input continues, found by the keys stored with their spans (`SPAN_KEY_COLUMNS`, what
   local ingest's `SpanStore.linked_traces` looks up: same trace id, same conversation
   id, history, same response id), followed through stored traces until no new one
   turns up;
4. on the driver, traces (new and stored) joined into components and packed into
   partitions (`partition.components`, `partition.assign`): a few keys per trace cross
   the network;
5. **assemble** (`groupby(partition)`): the partition's stored traces read from their
   committed files (`store.read_part`, the local store's decoding), stored copies winning
   over new ones as locally; `partition.solve` (local ingest's per-partition work) over
   stored + new records, and the partition's `spans/` (its new records only) and `turns/`
   (every turn of its traces, stored ones rebuilt) Parquet written by the stores' own
   writers into a temporary folder, then uploaded under the run's prefix of the data root.
   The warehouse load replaces the rebuilt traces' older turns (`ingest_run.load_batch`).

The driver commits the run by writing its manifest (`turnscore.ingest.storage`); nothing
before that is visible to a reader. File names depend only on the run and the partition,
so a task Ray retries after losing a worker overwrites its own files, never adds a copy.

Records travel between stages pickled in a binary column: they are the reader's frozen
records, and decoding again in the assemble stage costs less than shipping decoded spans.

Cost of stage 3: each round reads the five key columns of every committed span file (a
task per few files), so it grows with the data root, not only with the input; local
ingest answers the same lookups from a key index (`turnscore.ingest.key_index`), which
object storage does not have yet. Rounds: one more than the longest chain of links
through stored traces (one when the input continues nothing), twice when a continued
trace's keys change with its new records.

One module past the ~400-line guide: the stages' Arrow schemas (what one stage's rows
carry to the next) and the driver's plan between them must change together.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import tempfile
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from turnscore.ingest.decode import decode_spans, trace_order
from turnscore.ingest.detached import attach, detached_response, response_of, responses
from turnscore.ingest.formats import Limits, is_input_name
from turnscore.ingest.inputs import conflicts, dedup_records, read_whole
from turnscore.ingest.links import apart_twins
from turnscore.ingest.otlp import read_bytes
from turnscore.ingest.partition import (
    JoinKeys,
    Partition,
    assign,
    components,
    solve,
    trace_keys,
)
from turnscore.ingest.pipeline import MAX_LINK_ROUNDS, IngestedFile, SkippedFile
from turnscore.ingest.records import InputError, RawLog, RawSpan
from turnscore.ingest.settings import IngestSettings
from turnscore.ingest.storage import (
    Location,
    Manifest,
    StorageError,
    commit,
    committed,
    list_files,
    location,
    run_prefix,
)
from turnscore.ingest.store import (
    SpanStore,
    StoredRecords,
    TurnStore,
    read_key_columns,
    read_part,
    record_key,
)
from turnscore.warehouse.errors import InvalidOption

__all__ = ["RAY_INSTALL", "RayIngest", "RayMissing", "connect", "ingest_job", "require_ray"]

log = logging.getLogger(__name__)

RAY_INSTALL = "pip install 'turnscore[ray]'"
LOCAL_OBJECT_STORE = 200_000_000
"""Bytes of object store for a local Ray started for one run: partitions are small."""
PARTITIONS_PER_CPU = 2
FILE_BLOCKS_PER_PARTITION = 4
"""Input files are read in about this many blocks per partition (a task each)."""


class RayMissing(InvalidOption):
    """`--engine ray` without Ray installed."""

    def __init__(self, cause: str) -> None:
        super().__init__(f"--engine ray needs Ray, which is not installed ({cause}); "
                         f"install it with: {RAY_INSTALL}")


def require_ray() -> Any:
    """The `ray` module, or `RayMissing` saying how to install it."""
    try:
        import ray
        import ray.data  # the [data] extra, not just core
    except ImportError as exc:
        raise RayMissing(str(exc)) from exc
    return ray


@contextmanager
def connect(address: str | None, *, num_cpus: int | None = None) -> Iterator[Any]:
    """Ray connected to the cluster at `address`, or a local Ray started for the run (and
    stopped after it) when `address` is None."""
    ray = require_ray()
    if address:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    else:
        # "local": a new Ray for this run, never one that happens to run on the machine.
        ray.init(address="local", num_cpus=num_cpus or min(os.cpu_count() or 1, 4),
                 include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE,
                 log_to_driver=False, logging_level=logging.WARNING)
    try:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        # Sort-based shuffles run as plain tasks; the hash shuffle starts aggregator actors
        # (a process each), which costs more than a small partition's work.
        context.shuffle_strategy = ray.data.context.ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
        yield ray
    finally:
        ray.shutdown()


@dataclass(frozen=True, slots=True)
class RayIngest:
    """What one ingest job read and committed."""

    run_id: str
    files: tuple[IngestedFile, ...]
    skipped: tuple[SkippedFile, ...]
    spans: int
    logs: int
    new_spans: int
    new_logs: int
    turns: int
    traces: frozenset[str]
    """Every trace the job assembled, stored traces it rebuilt included."""
    errors: tuple[InputError, ...]
    manifest: Manifest | None
    """The committed run, or None when no file was read."""
    partitions: int = 0
    seconds: Mapping[str, float] = field(default_factory=dict)
    """Wall seconds per stage (`read`, `plan`, `trace pass`, `partition` on the driver,
    `assemble`, `commit`): what `bench/scale.py` models scaling from."""
    shuffled_bytes: int = 0
    """Bytes of records the two shuffles moved (by trace bucket, then by partition)."""


def input_files(inputs: Sequence[str]) -> list[Location]:
    """The input files under each URI or path, as local ingest picks them in folders
    (`formats.is_input_name`); a file named explicitly is taken whatever its name."""
    seen: set[str] = set()
    out = []
    for raw in inputs:
        loc = location(raw)
        try:
            found = list_files(loc, is_input_name)
        except StorageError as exc:
            raise InvalidOption(str(exc)) from exc
        for f in found:
            if f.location.uri not in seen:
                seen.add(f.location.uri)
                out.append(f.location)
    return out


def ingest_job(
    inputs: Sequence[str],
    store: Location,
    run_id: str,
    *,
    known_file_keys: frozenset[str] = frozenset(),
    settings: IngestSettings | None = None,
    partitions: int | None = None,
) -> RayIngest:
    """Ingest the OTLP files under `inputs` into `store` as run `run_id`, on the Ray
    cluster this process is connected to (`connect`); commits the run's manifest. Traces
    and conversations the input continues that committed runs stored are rebuilt with it
    from their stored spans, as local ingest rebuilds them."""
    ray = require_ray()
    clock = _Clock()
    settings = settings or IngestSettings()
    limits, case_id_attribute = settings.limits, settings.case_id_attribute
    files = input_files(inputs)
    n = partitions or max(1, PARTITIONS_PER_CPU * int(ray.cluster_resources().get("CPU", 1)))
    read = ray.data.from_items(
        [{"file_index": i, "uri": f.uri} for i, f in enumerate(files)],
        override_num_blocks=max(1, min(len(files), FILE_BLOCKS_PER_PARTITION * n)),
    ).map_batches(_read_files, batch_size=1, batch_format="pyarrow",
                  fn_kwargs={"limits": limits, "buckets": n}).materialize()
    clock.lap("read")
    plan = _plan(read, files, known_file_keys)
    clock.lap("plan")
    if not plan.files:
        return RayIngest(run_id, (), plan.skipped, 0, 0, 0, 0, 0, frozenset(),
                         plan.read_errors, None, seconds=clock.seconds)
    records = read.map_batches(_select, batch_format="pyarrow", fn_kwargs={
        "kinds": ("span", "log"), "files": tuple(sorted(plan.file_index))})
    # Grouped by trace bucket, not by trace: a group is a task's call, and one call per
    # trace costs more in Ray's bookkeeping than the trace's work.
    traces = records.groupby("bucket", num_partitions=n).map_groups(
        _trace_pass, batch_format="pyarrow",
        fn_kwargs={"case_id_attribute": case_id_attribute}).materialize()
    clock.lap("trace pass")
    keys, sizes, dup_errors = _keys(traces)
    stored = _stored_links(ray, store, keys, n)
    continued = {t for t in keys if t in stored.keys}
    if continued:
        # A continued trace's keys come from its stored and new records together (a span
        # stored earlier and its content arriving now make a history neither has alone),
        # as local ingest decodes a partition's stored and new records together.
        keys.update(_rekey(ray, traces, store, stored, continued, case_id_attribute))
        stored = _stored_links(ray, store, keys, n, stored)
    log.info("run %s continues %d stored trace(s) (%d of them with new records)", run_id,
             len(stored.keys), len(continued))
    clock.lap("stored links")
    for t, k in stored.keys.items():
        keys[t] = _union([keys[t], k]) if t in keys else k
        sizes[t] = sizes.get(t, 0) + stored.sizes[t]
    component_of = components(dict(sorted(keys.items())))  # named by smallest id
    part_of_component = assign(component_of, sizes, n)
    part_of = {t: part_of_component[c] for t, c in component_of.items()}
    reads: dict[int, dict[str, list[str]]] = {}
    for (rel, t) in sorted(stored.rows):
        reads.setdefault(part_of[t], {}).setdefault(rel, []).append(t)
    clock.lap("partition")
    parts = traces.map_batches(_with_partition, batch_format="pyarrow",
                               fn_kwargs={"part_of": ray.put(part_of)})
    written = parts.groupby("partition", num_partitions=n).map_groups(
        _assemble_partition, batch_format="pyarrow",
        fn_kwargs={"store_uri": store.uri, "run_id": run_id,
                   "case_id_attribute": case_id_attribute,
                   "stored": ray.put(reads)}).take_all()
    clock.lap("assemble")
    span_files = sorted(p for row in written for p in row["span_files"])
    turn_files = sorted(p for row in written for p in row["turn_files"])
    # Stored spans' errors were reported by the run that first read them, as locally.
    sources = {str(f.path) for f in plan.files}
    errors = [*plan.read_errors, *dup_errors,
              *(e for row in written for e in pickle.loads(row["errors"])
                if not e.source or e.source in sources)]
    manifest = Manifest(run_id, {"spans": tuple(span_files), "turns": tuple(turn_files)},
                        {"engine": "ray", "inputs": list(inputs),
                         # As `ingested_files` records them: a file that gave only
                         # errors is read (and reported) again by the next run.
                         "file_keys": sorted(f.file_key for f in plan.files
                                             if f.spans or f.logs or not f.errors),
                         "turns": sum(int(row["turns"]) for row in written)})
    commit(store, manifest)
    clock.lap("commit")
    return RayIngest(
        run_id=run_id,
        files=plan.files,
        skipped=plan.skipped,
        spans=plan.spans,
        logs=plan.logs,
        new_spans=sum(int(row["spans"]) for row in written),
        new_logs=sum(int(row["logs"]) for row in written),
        turns=int(manifest.meta["turns"]),
        traces=frozenset(t for t in keys if t and not t.startswith(_DETACHED)),
        errors=tuple(errors),
        manifest=manifest,
        partitions=len(written),
        seconds=clock.seconds,
        shuffled_bytes=int(read.size_bytes()) + int(traces.size_bytes()),
    )


class _Clock:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = round(now - self._last, 3)
        self._last = now


# --- stage 1: read ------------------------------------------------------------------------

_READ_SCHEMA = pa.schema([
    # `span`, `log`, `error` (an input error of the file) or `file` (its key and counts)
    ("kind", pa.string()),
    ("file_index", pa.int64()),
    ("seq", pa.int64()),
    ("trace_id", pa.string()),
    ("bucket", pa.int64()),
    ("payload", pa.binary()),
])


def _bucket(trace_id: str, buckets: int) -> int:
    """A stable bucket for a trace (Python's str hash differs per process)."""
    return zlib.crc32(trace_id.encode()) % buckets


def _read_files(batch: pa.Table, limits: Limits, buckets: int) -> pa.Table:
    rows: dict[str, list[Any]] = {name: [] for name in _READ_SCHEMA.names}

    def add(kind: str, index: int, seq: int, trace_id: str, payload: object) -> None:
        for name, value in zip(_READ_SCHEMA.names,
                               (kind, index, seq, trace_id, _bucket(trace_id, buckets),
                                pickle.dumps(payload)),
                               strict=True):
            rows[name].append(value)

    for index, uri in zip(batch["file_index"].to_pylist(), batch["uri"].to_pylist(),
                          strict=True):
        loc = location(uri)
        try:
            data = loc.read_bytes()
        except StorageError as exc:
            add("error", index, 0, "", InputError(uri, "file", f"cannot read file: {exc}"))
            add("file", index, 0, "", (None, 0, 0, 0, 1))
            continue
        records = read_whole(uri, partial(read_bytes, data, uri, limits))
        counts = {"span": 0, "log": 0, "error": 0}
        for seq, rec in enumerate(records):
            if isinstance(rec, RawSpan):
                kind, trace = "span", rec.trace_id
            elif isinstance(rec, RawLog):
                kind, trace = "log", rec.trace_id or _detached_route(rec)
            else:
                kind, trace = "error", ""
            counts[kind] += 1
            add(kind, index, seq, trace, rec)
        key = hashlib.sha256(data).hexdigest()
        add("file", index, 0, "", (key, len(data), counts["span"], counts["log"],
                                   counts["error"]))
    return pa.table(rows, schema=_READ_SCHEMA)


def _detached_route(log: RawLog) -> str:
    """The trace pass's group of a log record with no trace id: a content record that
    names a response goes in a group of that response (its trace pass keys it by the
    response, so the partition of the span that reported it takes it); the rest in ''."""
    rid = detached_response(log)
    return f"{_DETACHED}{rid}" if rid else ""


_DETACHED = "detached:"
"""Prefix of `_detached_route`'s groups: no trace id is made of 32 hex digits and a colon."""


@dataclass(frozen=True, slots=True)
class _Plan:
    files: tuple[IngestedFile, ...]
    skipped: tuple[SkippedFile, ...]
    file_index: frozenset[int]
    read_errors: tuple[InputError, ...]
    spans: int
    logs: int


def _plan(read: Any, files: Sequence[Location], known: frozenset[str]) -> _Plan:
    """Which files this run ingests: not those already ingested, nor a second file of
    the same content (the first by path is read), as local ingest decides."""
    small = read.map_batches(_select, batch_format="pyarrow",
                             fn_kwargs={"kinds": ("file", "error")}).take_all()
    stats = {r["file_index"]: pickle.loads(r["payload"]) for r in small if r["kind"] == "file"}
    ingested: list[tuple[int, IngestedFile]] = []
    skipped: list[SkippedFile] = []
    seen: dict[str, str] = {}
    for index in sorted(stats):
        key, size, spans, logs, errors = stats[index]
        uri = files[index].uri
        if key is not None and key in known:
            skipped.append(SkippedFile(cast(Path, uri), key, "already ingested"))
        elif key is not None and key in seen:
            skipped.append(SkippedFile(cast(Path, uri), key, f"same content as {seen[key]}"))
        else:
            if key is not None:
                seen[key] = uri
            ingested.append((index, IngestedFile(key or "", cast(Path, uri), size, spans, logs,
                                                 errors)))
    keep = frozenset(i for i, _ in ingested)
    errors = tuple(pickle.loads(r["payload"]) for r in small
                   if r["kind"] == "error" and r["file_index"] in keep)
    return _Plan(tuple(f for _, f in ingested), tuple(skipped), keep, errors,
                 sum(f.spans for _, f in ingested), sum(f.logs for _, f in ingested))


def _select(batch: pa.Table, kinds: tuple[str, ...],
            files: tuple[int, ...] | None = None) -> pa.Table:
    """The rows of `kinds` (of the files numbered `files`, if given)."""
    keep = pc.is_in(batch["kind"], pa.array(kinds, pa.string()))
    if files is not None:
        keep = pc.and_(keep, pc.is_in(batch["file_index"], pa.array(files, pa.int64())))
    return batch.filter(keep)


# --- stage 2: per trace --------------------------------------------------------------------

_TRACE_SCHEMA = pa.schema([
    ("trace_id", pa.string()),
    ("records", pa.binary()),
    ("n_records", pa.int64()),
    ("conversations", pa.list_(pa.string())),
    ("histories", pa.list_(pa.string())),
    ("prefixes", pa.list_(pa.string())),
    ("responses", pa.list_(pa.string())),
    ("errors", pa.binary()),
])


def _trace_pass(group: pa.Table, case_id_attribute: str | None) -> pa.Table:
    """Every trace of one bucket: its records once each, and its keys."""
    order = group.sort_by([("trace_id", "ascending"), ("file_index", "ascending"),
                           ("seq", "ascending")])
    by_trace: dict[str, list[RawSpan | RawLog]] = {}
    for trace_id, payload in zip(order["trace_id"].to_pylist(), order["payload"].to_pylist(),
                                 strict=True):
        by_trace.setdefault(trace_id, []).append(pickle.loads(payload))
    rows: dict[str, list[Any]] = {name: [] for name in _TRACE_SCHEMA.names}
    for trace_id, records in by_trace.items():
        kept, errors = dedup_records(records)
        spans = [r for r in kept if isinstance(r, RawSpan)]
        logs = [r for r in kept if isinstance(r, RawLog)]
        keys = JoinKeys(conversations=frozenset({trace_id}))
        if trace_id.startswith(_DETACHED):
            keys = replace(keys, responses=frozenset({trace_id.removeprefix(_DETACHED)}))
        elif trace_id and (spans or logs):  # records alone may tell spans (`record_turns`)
            decoded, _ = decode_spans(trace_order(spans), logs,
                                      case_id_attribute=case_id_attribute)
            keys = trace_keys(decoded).get(trace_id, keys)
        for name, value in (
            ("trace_id", trace_id), ("records", pickle.dumps(kept)),
            ("n_records", len(kept)), ("conversations", sorted(keys.conversations)),
            ("histories", sorted(keys.histories)), ("prefixes", sorted(keys.prefixes)),
            ("responses", sorted(keys.responses)), ("errors", pickle.dumps(errors)),
        ):
            rows[name].append(value)
    return pa.table(rows, schema=_TRACE_SCHEMA)


def _keys(traces: Any) -> tuple[dict[str, JoinKeys], dict[str, int], list[InputError]]:
    keys: dict[str, JoinKeys] = {}
    sizes: dict[str, int] = {}
    errors: list[InputError] = []
    columns = ["trace_id", "n_records", "conversations", "histories", "prefixes", "responses",
               "errors"]
    for batch in traces.select_columns(columns).iter_batches(batch_format="pyarrow"):
        for row in batch.to_pylist():
            t = row["trace_id"]
            keys[t] = JoinKeys(conversations=frozenset(row["conversations"]),
                               prefixes=frozenset(row["prefixes"]),
                               histories=frozenset(row["histories"]),
                               responses=frozenset(row["responses"]))
            sizes[t] = row["n_records"]
            errors.extend(pickle.loads(row["errors"]))
    return keys, sizes, errors


# --- stage 3: stored traces the input continues -------------------------------------------


@dataclass(frozen=True, slots=True)
class _Stored:
    keys: dict[str, JoinKeys] = field(default_factory=dict)
    """Each stored trace the input continues, directly or through other stored traces,
    and the keys its stored spans carry."""
    sizes: dict[str, int] = field(default_factory=dict)
    """Its stored records."""
    rows: dict[tuple[str, str], int] = field(default_factory=dict)
    """(committed span file, stored trace) -> the trace's records in that file."""
    asked: JoinKeys = field(default_factory=JoinKeys)
    """The keys looked up so far."""

    def files_of(self, traces: Iterable[str]) -> dict[str, list[str]]:
        """Committed span file -> which of `traces` it holds records of."""
        wanted = set(traces)
        out: dict[str, list[str]] = {}
        for rel, t in sorted(self.rows):
            if t in wanted:
                out.setdefault(rel, []).append(t)
        return out


_MATCH_SCHEMA = pa.schema([
    ("file", pa.string()),
    ("trace_id", pa.string()),
    ("n", pa.int64()),
    ("conversations", pa.list_(pa.string())),
    ("histories", pa.list_(pa.string())),
    ("prefixes", pa.list_(pa.string())),
    ("responses", pa.list_(pa.string())),
])


def _stored_links(ray: Any, store: Location, keys: Mapping[str, JoinKeys], n: int,
                  start: _Stored | None = None) -> _Stored:
    """The stored traces that the traces of `keys` continue, as local ingest finds them
    (`SpanStore.linked_traces`, followed as `pipeline._solve_linked` follows it): each
    round looks up the keys not looked up yet (`start`: a search to go on with), in every
    committed span file, until a round finds no new key. A trace found is looked up by
    its id too, so the last round has found every file holding a record of it."""
    files = sorted(rel for m in committed(store) for rel in m.files.get("spans", ()))
    out = start or _Stored()
    if not files:
        return out
    rows = ray.data.from_items([{"file": f} for f in files],
                               override_num_blocks=max(1, min(len(files), n)))
    asked = _union([out.asked, JoinKeys(conversations=frozenset({""}))])
    wanted = _without(_union([*keys.values(), *out.keys.values()]), asked)
    for _ in range(MAX_LINK_ROUNDS):
        if not (wanted.conversations or wanted.prefixes or wanted.histories
                or wanted.responses):
            break
        matched = rows.map_batches(_match_stored, batch_size=None, batch_format="pyarrow",
                                   fn_kwargs={"store_uri": store.uri,
                                              "wanted": ray.put(wanted)}).take_all()
        for row in matched:
            t = row["trace_id"]
            out.rows[(row["file"], t)] = int(row["n"])
            k = JoinKeys(conversations=frozenset(row["conversations"]),
                         prefixes=frozenset(row["prefixes"]),
                         histories=frozenset(row["histories"]),
                         responses=frozenset(row["responses"]))
            out.keys[t] = _union([out.keys[t], k]) if t in out.keys else k
        asked = _union([asked, wanted])
        wanted = _without(_union(out.keys.values()), asked)
    out.sizes.clear()
    for (_, t), count in out.rows.items():
        out.sizes[t] = out.sizes.get(t, 0) + count
    return replace(out, asked=asked)


_REKEY_SCHEMA = pa.schema([
    ("trace_id", pa.string()),
    ("conversations", pa.list_(pa.string())),
    ("histories", pa.list_(pa.string())),
    ("prefixes", pa.list_(pa.string())),
    ("responses", pa.list_(pa.string())),
])


def _rekey(ray: Any, traces: Any, store: Location, stored: _Stored, continued: set[str],
           case_id_attribute: str | None) -> dict[str, JoinKeys]:
    """The keys of each `continued` input trace from its stored and new records."""
    files = ray.put({t: stored.files_of([t]) for t in continued})
    rows = traces.select_columns(["trace_id", "records"]).map_batches(
        _rekey_batch, batch_format="pyarrow",
        fn_kwargs={"files": files, "store_uri": store.uri,
                   "case_id_attribute": case_id_attribute}).take_all()
    return {r["trace_id"]: JoinKeys(conversations=frozenset(r["conversations"]),
                                    prefixes=frozenset(r["prefixes"]),
                                    histories=frozenset(r["histories"]),
                                    responses=frozenset(r["responses"]))
            for r in rows}


def _rekey_batch(batch: pa.Table, files: Any, store_uri: str,
                 case_id_attribute: str | None) -> pa.Table:
    import ray

    where: dict[str, dict[str, list[str]]] = files if isinstance(files, dict) else ray.get(files)
    root = location(store_uri)
    out: dict[str, list[Any]] = {name: [] for name in _REKEY_SCHEMA.names}
    for trace_id, payload in zip(batch["trace_id"].to_pylist(), batch["records"].to_pylist(),
                                 strict=True):
        if trace_id not in where:
            continue
        spans, logs = _with_stored(pickle.loads(payload), _read_stored(root, where[trace_id]))[:2]
        decoded, _ = decode_spans(trace_order(spans), logs, case_id_attribute=case_id_attribute)
        keys = trace_keys(decoded).get(trace_id, JoinKeys(conversations=frozenset({trace_id})))
        for name, value in (("trace_id", trace_id),
                            ("conversations", sorted(keys.conversations)),
                            ("histories", sorted(keys.histories)),
                            ("prefixes", sorted(keys.prefixes)),
                            ("responses", sorted(keys.responses))):
            out[name].append(value)
    return pa.table(out, schema=_REKEY_SCHEMA)


def _union(keys: Iterable[JoinKeys]) -> JoinKeys:
    conversations: set[str] = set()
    prefixes: set[str] = set()
    histories: set[str] = set()
    responses: set[str] = set()
    for k in keys:
        conversations |= k.conversations
        prefixes |= k.prefixes
        histories |= k.histories
        responses |= k.responses
    return JoinKeys(frozenset(conversations), frozenset(prefixes), frozenset(histories),
                    frozenset(responses))


def _without(keys: JoinKeys, known: JoinKeys) -> JoinKeys:
    return JoinKeys(frozenset(keys.conversations - known.conversations),
                    frozenset(keys.prefixes - known.prefixes),
                    frozenset(keys.histories - known.histories),
                    frozenset(keys.responses - known.responses))


def _match_stored(batch: pa.Table, store_uri: str, wanted: Any) -> pa.Table:
    """The stored traces of the committed span files of `batch` that `wanted` finds, with
    the keys of their matching rows: a stored conversation id or trace id among
    `wanted.conversations`, a stored history among its prefixes, a stored prefix among
    its histories, a stored response id among its responses (`JoinKeys.meets`). A stored
    report apart's key looks up its twin (`links.apart_twins`), as the spans' would."""
    import ray

    look: JoinKeys = wanted if isinstance(wanted, JoinKeys) else ray.get(wanted)
    conversations = pa.array(sorted(look.conversations), pa.string())
    prefixes = pa.array(sorted(look.prefixes), pa.string())
    histories = pa.array(sorted(look.histories), pa.string())
    responses = pa.array(sorted(look.responses), pa.string())
    root = location(store_uri)
    out: dict[str, list[Any]] = {name: [] for name in _MATCH_SCHEMA.names}
    for rel in batch["file"].to_pylist():
        loc = root.child(rel)
        with loc.fs.open_input_file(loc.path) as fh:
            table = read_key_columns(fh)  # older files lack newer key columns
        lists = table["prefix_keys"].combine_chunks()
        by_prefix = pc.filter(pc.list_parent_indices(lists),
                              pc.is_in(pc.list_flatten(lists), value_set=histories))
        hit = pc.or_(
            pc.or_(pc.is_in(table["trace_id"], value_set=conversations),
                   pc.is_in(table["conversation_id"], value_set=conversations)),
            pc.or_(pc.or_(pc.is_in(table["history_key"], value_set=prefixes),
                          pc.is_in(table["response_id"], value_set=responses)),
                   pc.is_in(pa.array(range(table.num_rows), pa.int64()),
                            value_set=by_prefix.cast(pa.int64()))))
        by_trace: dict[str, list[dict[str, Any]]] = {}
        for row in table.filter(pc.fill_null(hit, False)).to_pylist():
            if row["trace_id"] is not None:
                by_trace.setdefault(row["trace_id"], []).append(row)
        for t, matched in sorted(by_trace.items()):
            out["file"].append(rel)
            out["trace_id"].append(t)
            out["n"].append(len(matched))
            out["conversations"].append(sorted(
                {t} | {r["conversation_id"] for r in matched if r["conversation_id"]}))
            out["histories"].append(sorted(
                {r["history_key"] for r in matched if r["history_key"]}
                | apart_twins(p for r in matched for p in r["prefix_keys"] or ())))
            out["prefixes"].append(sorted(
                {p for r in matched for p in r["prefix_keys"] or ()}))
            out["responses"].append(sorted(
                {r["response_id"] for r in matched if r["response_id"]}))
    return pa.table(out, schema=_MATCH_SCHEMA)


def _with_partition(batch: pa.Table, part_of: Any) -> pa.Table:
    import ray

    table: dict[str, int] = part_of if isinstance(part_of, dict) else ray.get(part_of)
    parts = [table[t] for t in batch["trace_id"].to_pylist()]
    return batch.append_column("partition", pa.array(parts, pa.int64()))


# --- stage 4: per partition -----------------------------------------------------------------

_WRITTEN_SCHEMA = pa.schema([
    ("partition", pa.int64()),
    ("span_files", pa.list_(pa.string())),
    ("turn_files", pa.list_(pa.string())),
    ("turns", pa.int64()),
    ("spans", pa.int64()),
    ("logs", pa.int64()),
    ("errors", pa.binary()),
])


def _assemble_partition(group: pa.Table, store_uri: str, run_id: str,
                        case_id_attribute: str | None, stored: Any) -> pa.Table:
    import ray

    part = int(group["partition"][0].as_py())
    records: list[RawSpan | RawLog] = []
    for payload in group.sort_by("trace_id")["records"].to_pylist():
        records.extend(pickle.loads(payload))
    reads: dict[int, dict[str, list[str]]] = (
        stored if isinstance(stored, dict) else ray.get(stored))
    old = _read_stored(location(store_uri), reads.get(part, {}))
    all_spans, all_logs, spans, logs, errors = _with_stored(_attached(records, old), old)
    solved = solve(Partition(all_spans, all_logs),
                   case_id_attribute=case_id_attribute, ingest_id=run_id)
    errors, links = [*errors, *solved.errors], solved.links
    turns = sorted(solved.turns, key=lambda t: (t.started_at, t.conversation_id, t.turn_index))
    store = location(store_uri)
    with tempfile.TemporaryDirectory(prefix="turnscore-part-") as tmp:
        root = Path(tmp)
        tag = f"-p{part:05d}"
        span_paths = [p for p, _ in SpanStore(root, run_id).write_parts(
            [*spans, *logs], links, tag=tag)]
        turn_store = TurnStore(root, f"{run_id}{tag}")
        try:
            turn_paths = list(turn_store.replace(turns, ()).written)
        finally:
            turn_store.close()
        span_files = [_upload(root, p, store, run_id) for p in span_paths]
        turn_files = [_upload(root, p, store, run_id) for p in turn_paths]
    return pa.table({
        "partition": [part], "span_files": [span_files], "turn_files": [turn_files],
        "turns": [len(turns)], "spans": [len(spans)], "logs": [len(logs)],
        "errors": [pickle.dumps(errors)],
    }, schema=_WRITTEN_SCHEMA)


def _attached(records: Sequence[RawSpan | RawLog], old: StoredRecords
              ) -> list[RawSpan | RawLog]:
    """`records` with each content record that names no span, or another than the one that
    reported its response, given the ids of that span of the partition, new or stored
    (`turnscore.ingest.detached`): what local ingest does as it gathers a group."""
    logs = [r for r in records if isinstance(r, RawLog)]
    if not any(response_of(lg) for lg in logs):
        return list(records)
    spans = [r for r in records if isinstance(r, RawSpan)]
    named = {(s.trace_id, s.span_id): s for s in spans}
    return [*spans, *attach(logs, responses([*spans, *old.spans]), named)]


def _with_stored(
    records: Sequence[RawSpan | RawLog], old: StoredRecords
) -> tuple[list[RawSpan], list[RawLog], list[RawSpan], list[RawLog], list[InputError]]:
    """Stored and new records together (every span, every log), the new ones alone (to
    store) and the errors of new copies that differ from stored ones: the stored copy
    wins, as locally (`pipeline._gather`)."""
    spans = [r for r in records if isinstance(r, RawSpan)]
    logs = [r for r in records if isinstance(r, RawLog)]
    if not (old.spans or old.logs):
        return spans, logs, spans, logs, []
    old_spans = {record_key(s): s for s in old.spans}
    old_logs = {record_key(lg) for lg in old.logs}
    fresh = {record_key(s): s for s in spans}
    errors = list(conflicts(fresh, old_spans))
    spans = [s for k, s in fresh.items() if k not in old_spans]
    logs = [lg for lg in logs if record_key(lg) not in old_logs]
    return [*old.spans, *spans], [*old.logs, *logs], spans, logs, errors


def _read_stored(root: Location, files: Mapping[str, Sequence[str]]) -> StoredRecords:
    """The stored records of the traces listed per committed span file."""
    out = StoredRecords()
    for rel, traces in sorted(files.items()):
        loc = root.child(rel)
        with loc.fs.open_input_file(loc.path) as fh:
            read_part(fh, traces, into=out)
    return out


def _upload(root: Path, path: Path, store: Location, run_id: str) -> str:
    """Copy a part file to the run's prefix of its dataset; returns its manifest path."""
    dataset, *rest = path.relative_to(root).parts
    rel = f"{run_prefix(dataset, run_id)}/{'/'.join(rest)}"
    store.child(rel).upload(path)
    return rel
