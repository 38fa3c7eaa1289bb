"""Independent conversations in shards, one per process: ingest on every core.

When nothing else in a group can join a conversation (its traces are new, nothing stored
or elsewhere in the group names its conversation id, and no trace without an id could
chain into it by history: the caller checks all three), its turns and stored spans depend
on its own spans alone. `run_shards` splits such conversations by a stable hash of their
id (a conversation's traces stay together) into a shard per process: `workers - 1`
forked children, and this process, which takes a smaller share since it also does the
rest of the group (`meanwhile`). Each shard takes the direct path where its traces fit
(`direct.solve`) and the general one (`decode_spans` + `assemble_turns`) where they don't,
writes its spans' Parquet files under its own names (`SpanStore.write_parts`) and returns
its turns, errors and index rows; the caller indexes the files and writes the turns.

Fork, not spawn: children inherit the spans already in memory, and only results are
pickled back. The work is pure, so the result is the same for any number of workers. A
child that fails or hangs costs only time: its files are removed and its shard runs here.
Children hold the warehouse's writer lock as the parent does (inherited), which keeps any
rerun out while one still writes; they die with the parent.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import pickle
import signal
import sys
import traceback
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path

from turnscore.ingest.assemble import assemble_turns
from turnscore.ingest.decode import decode_spans, trace_order
from turnscore.ingest.direct import solve
from turnscore.ingest.key_index import KeyRow
from turnscore.ingest.links import span_links
from turnscore.ingest.records import InputError, RawSpan
from turnscore.ingest.store import SpanStore
from turnscore.ingest.turn import Turn

__all__ = ["MIN_SHARED_SPANS", "Shard", "run_shards"]

logger = logging.getLogger(__name__)

MIN_SHARED_SPANS = 2_000
"""Below this many spans per process a fork costs more than it saves."""
CHILD_TIMEOUT = 600.0
"""Seconds to wait for a child's shard (seconds of work) before running it here."""
_PR_SET_PDEATHSIG = 1

Trace = Sequence[RawSpan]


@dataclass(frozen=True, slots=True)
class Shard:
    """What one shard produced."""

    turns: list[Turn]
    direct_turns: int
    errors: list[InputError]
    parts: list[tuple[Path, list[KeyRow]]]
    """Span files written and their key-index rows."""


@dataclass(frozen=True, slots=True)
class _Job:
    store: SpanStore
    tag: str
    case_id_attribute: str | None
    ingest_id: str

    def __call__(self, traces: Sequence[Trace], shard: int) -> Shard:
        solved = solve(traces, case_id_attribute=self.case_id_attribute, ingest_id=self.ingest_id)
        direct = {t for c in solved.values() for t in c.traces}
        rest = [s for trace in traces for s in trace if s.trace_id not in direct]
        decoded, errors = decode_spans(
            trace_order(rest), (), case_id_attribute=self.case_id_attribute
        )
        result = assemble_turns(decoded, ingest_id=self.ingest_id)
        links = span_links(decoded, result.trace_conversations)
        for conversation in solved.values():
            links.update(conversation.links)
        spans = [s for trace in traces for s in trace]
        parts = self.store.write_parts(spans, links, tag=self._tag(shard))
        solved_turns = [t for c in solved.values() for t in c.turns]
        return Shard(
            turns=[*result.turns, *solved_turns],
            direct_turns=len(solved_turns),
            errors=[*errors, *result.errors],
            parts=parts,
        )

    def _tag(self, shard: int) -> str:
        return f"{self.tag}s{shard}"

    def remove_files(self, shard: int) -> None:
        """Files a failed child may have written: their names are its own."""
        pattern = f"date=*/part-{self.store.ingest_id}{self._tag(shard)}-*.parquet"
        for path in self.store.root.glob(pattern):
            path.unlink(missing_ok=True)


def run_shards(
    conversations: Mapping[str, Sequence[Trace]],
    *,
    workers: int,
    store: SpanStore,
    tag: str,
    case_id_attribute: str | None,
    ingest_id: str,
    meanwhile: Callable[[], None] = lambda: None,
) -> list[Shard]:
    """Every conversation's turns and stored spans, in shards on up to `workers` processes;
    `meanwhile` runs here while the children work. `tag` tells this call's files apart."""
    job = _Job(store, tag, case_id_attribute, ingest_id)
    spans = sum(len(t) for traces in conversations.values() for t in traces)
    count = max(1, min(workers, spans // MIN_SHARED_SPANS))
    shares: list[list[Trace]] = [[] for _ in range(count)]
    for cid, traces in conversations.items():
        shares[zlib.crc32(cid.encode()) % count].extend(traces)
    context = multiprocessing.get_context("fork")
    running: list[tuple[BaseProcess, Connection, int]] = []
    try:
        for shard, share in enumerate(shares[1:], start=1):
            reader, writer = context.Pipe(duplex=False)
            proc = context.Process(target=_child, args=(writer, job, share, shard), daemon=True)
            proc.start()
            writer.close()
            running.append((proc, reader, shard))
        meanwhile()
        out = [job(shares[0], 0)]
        while running:
            child, reader, shard = running[0]
            sent = _receive(reader)
            running.pop(0)
            reader.close()
            child.join()
            if not isinstance(sent, Shard):
                logger.warning("ingest worker %d failed (%s); running its shard here", shard, sent)
                job.remove_files(shard)
                sent = job(shares[shard], shard)
            out.append(sent)
    finally:
        for child, reader, shard in running:  # their files would be stored unindexed
            child.kill()
            child.join()
            reader.close()
            job.remove_files(shard)
    return out


def _receive(reader: Connection) -> Shard | str:
    """The child's shard, or why there is none."""
    if not wait([reader], timeout=CHILD_TIMEOUT):
        return f"no answer in {CHILD_TIMEOUT:.0f} s"
    try:
        sent = reader.recv()
    except (EOFError, OSError, pickle.UnpicklingError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return sent if isinstance(sent, Shard | str) else f"unexpected answer {type(sent).__name__}"


def _child(writer: Connection, job: _Job, share: Sequence[Trace], shard: int) -> None:
    _die_with_parent()
    with writer:
        try:
            writer.send(job(share, shard))
        except Exception:  # the parent logs it and runs the shard itself
            writer.send(traceback.format_exc(limit=5))


def _die_with_parent() -> None:
    """A child outliving a killed parent would hold the warehouse lock it inherited
    (`warehouse.db.writer_lock`) for as long as it runs: have Linux kill it too."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
