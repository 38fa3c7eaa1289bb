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
child that fails costs only time: its files are removed and its shard runs here.
"""

from __future__ import annotations

import logging
import multiprocessing
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection

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
_CHILD_WEIGHT = 1
"""A child's share against this process's (which has the rest of the group to do)."""

Trace = Sequence[RawSpan]


@dataclass(frozen=True, slots=True)
class Shard:
    """What one shard produced."""

    turns: list[Turn]
    direct_turns: int
    errors: list[InputError]
    parts: list[tuple[str, list[KeyRow]]]
    """Span files written (paths as text) and their key-index rows."""


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
            parts=[(str(path), rows) for path, rows in parts],
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
    children = max(0, min(workers - 1, spans // MIN_SHARED_SPANS - 1))
    shares: list[list[Trace]] = [[] for _ in range(children + 1)]
    buckets = 1 + _CHILD_WEIGHT * children
    for cid, traces in conversations.items():
        bucket = zlib.crc32(cid.encode()) % buckets
        shares[0 if bucket == 0 else 1 + (bucket - 1) // _CHILD_WEIGHT].extend(traces)
    context = multiprocessing.get_context("fork")
    started = []
    for shard, share in enumerate(shares[1:], start=1):
        reader, writer = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(writer, job, share, shard), daemon=True)
        child.start()
        writer.close()
        started.append((child, reader, share, shard))
    try:
        meanwhile()
        out = [job(shares[0], 0)]
    except BaseException:
        for child, reader, _, shard in started:  # their files would be stored unindexed
            child.kill()
            child.join()
            reader.close()
            job.remove_files(shard)
        raise
    for child, reader, share, shard in started:
        try:
            out.append(reader.recv())
        except (EOFError, OSError) as exc:
            logger.warning("ingest worker for shard %d failed (%s); running it here", shard, exc)
            child.join()
            job.remove_files(shard)
            out.append(job(share, shard))
        finally:
            reader.close()
            child.join()
    return out


def _child(writer: Connection, job: _Job, share: Sequence[Trace], shard: int) -> None:
    with writer:
        writer.send(job(share, shard))
