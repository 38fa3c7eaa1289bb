"""Partitions on forked worker processes: ingest on every core.

`run_shards` runs the pure per-partition work (`turnscore.ingest.partition.solve`) of
each partition on a forked child of its own, while this process reads the next group's
files (so reading, which only this process can do, overlaps solving). Each child writes
its new records' span files under its own names (`SpanStore.write_parts`) and returns its
turns, errors, join keys and index rows; the caller checks the keys (partitions that turn
out to share a conversation are solved again together), indexes the files and writes the
turns.

Fork, not spawn: children inherit the records already in memory, and only results are
pickled back. The work is pure, so the result is the same for any number of workers. A
child that fails or hangs costs only time: its files are removed and its shard runs here.
Children hold the warehouse's writer lock as the parent does (inherited), which keeps any
rerun out while one still writes; they die with the parent.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import multiprocessing
import pickle
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TypeVar

import pyarrow as pa

from turnscore.ingest.key_index import KeyRow
from turnscore.ingest.partition import JoinKeys, Partition, solve
from turnscore.ingest.records import InputError
from turnscore.ingest.store import SpanStore
from turnscore.ingest.turn import Turn

__all__ = ["CHILD_TIMEOUT", "MIN_SHARED_SPANS", "Shard", "ShardJob", "run_shards"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

MIN_SHARED_SPANS = 2_000
"""Below this many spans per process a fork costs more than it saves."""
CHILD_TIMEOUT = 600.0
"""Seconds to wait for a child's shard (seconds of work) before running it here."""
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True, slots=True)
class Shard:
    """What one partition's process produced."""

    turns: list[Turn]
    errors: list[InputError]
    keys: JoinKeys
    parts: list[tuple[Path, list[KeyRow]]]
    """Span files written (the partition's new records) and their key-index rows."""


@dataclass(frozen=True, slots=True)
class ShardJob:
    """`partition.solve` and the span files of a partition, named apart by `tag`."""

    store: SpanStore
    tag: str
    case_id_attribute: str | None
    ingest_id: str

    def __call__(self, part: Partition, shard: int) -> Shard:
        solved = solve(part, case_id_attribute=self.case_id_attribute, ingest_id=self.ingest_id)
        parts = self.store.write_parts(part.new, solved.links, tag=self._tag(shard))
        return Shard(solved.turns, solved.errors, solved.keys, parts)

    def _tag(self, shard: int) -> str:
        return f"{self.tag}s{shard}"

    def remove_files(self, shard: int) -> None:
        """Files a failed child, or a shard solved again, may have written: their names
        are its own."""
        pattern = f"date=*/part-{self.store.ingest_id}{self._tag(shard)}-*.parquet"
        for path in self.store.root.glob(pattern):
            path.unlink(missing_ok=True)


def run_shards(
    parts: Sequence[Partition], job: ShardJob, meanwhile: Callable[[], T]
) -> tuple[list[Shard], T]:
    """Each partition's shard, in order, each on a forked child; and what `meanwhile`
    returns, run here while they work (the next group's reading)."""
    context = multiprocessing.get_context("fork")
    # pyarrow imports pandas on its first conversion of Python values (0.2 s CPU): here,
    # once, before forking, not in every child of every group (a no-op after the first).
    pa.array([], pa.string())
    running: list[tuple[BaseProcess, Connection, int]] = []
    try:
        # Children inherit every record in this process. Frozen, those objects are out of
        # the children's collections: a collection would write to each one's header, so
        # copy every page they sit on, and walk them all for nothing.
        gc.freeze()
        try:
            for shard, part in enumerate(parts):
                reader, writer = context.Pipe(duplex=False)
                proc = context.Process(
                    target=_child, args=(writer, job, part, shard), daemon=True
                )
                proc.start()
                writer.close()
                running.append((proc, reader, shard))
        finally:
            gc.unfreeze()
        later = meanwhile()
        out = []
        while running:
            child, reader, shard = running[0]
            sent = _receive(reader)
            running.pop(0)
            reader.close()
            child.join()
            if not isinstance(sent, Shard):
                logger.warning("ingest worker %d failed (%s); running its shard here", shard, sent)
                job.remove_files(shard)
                sent = job(parts[shard], shard)
            out.append(sent)
    finally:
        for child, reader, shard in running:  # their files would be stored unindexed
            child.kill()
            child.join()
            reader.close()
            job.remove_files(shard)
    return out, later


def _receive(reader: Connection) -> Shard | str:
    """The child's shard, or why there is none."""
    if not wait([reader], timeout=CHILD_TIMEOUT):
        return f"no answer in {CHILD_TIMEOUT:.0f} s"
    try:
        sent = reader.recv()
    except (EOFError, OSError, pickle.UnpicklingError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return sent if isinstance(sent, Shard | str) else f"unexpected answer {type(sent).__name__}"


def _child(writer: Connection, job: ShardJob, share: Partition, shard: int) -> None:
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
