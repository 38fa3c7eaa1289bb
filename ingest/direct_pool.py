"""The direct path on every core: conversations split into shares, one per process.

`solve_in_shares` gives each of `workers - 1` forked processes a share of the
conversations (by a stable hash of the conversation id, so a conversation's traces stay
together) and solves the first share itself meanwhile. Fork, not spawn: the children
inherit the spans already in memory, so only results (turns, a few KB each) are pickled,
back through a pipe. The work is pure, so the result is the same for any number of
workers; a child that fails costs only time: its share is solved here.
"""

from __future__ import annotations

import logging
import multiprocessing
import zlib
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection

from turnscore.ingest.direct import DirectConversation, solve
from turnscore.ingest.records import RawSpan

__all__ = ["MIN_SHARED_SPANS", "solve_in_shares"]

logger = logging.getLogger(__name__)

MIN_SHARED_SPANS = 2_000
"""Below this many spans a fork costs more than it saves: everything is solved here."""

Trace = Sequence[RawSpan]


def solve_in_shares(
    conversations: Mapping[str, Sequence[Trace]],
    *,
    workers: int,
    case_id_attribute: str | None,
    ingest_id: str,
) -> dict[str, DirectConversation]:
    """`direct.solve` over every conversation's traces, on up to `workers` processes."""
    spans = sum(len(t) for traces in conversations.values() for t in traces)
    count = max(1, min(workers, spans // MIN_SHARED_SPANS))
    shares: list[list[Trace]] = [[] for _ in range(count)]
    for cid, traces in conversations.items():
        shares[zlib.crc32(cid.encode()) % count].extend(traces)
    context = multiprocessing.get_context("fork")
    children = []
    for share in shares[1:]:
        reader, writer = context.Pipe(duplex=False)
        child = context.Process(
            target=_child, args=(writer, share, case_id_attribute, ingest_id), daemon=True
        )
        child.start()
        writer.close()
        children.append((child, reader, share))
    out = solve(shares[0], case_id_attribute=case_id_attribute, ingest_id=ingest_id)
    for child, reader, share in children:
        try:
            out.update(reader.recv())
        except (EOFError, OSError) as exc:
            logger.warning("a direct-path worker failed (%s); solving its share here", exc)
            out.update(solve(share, case_id_attribute=case_id_attribute, ingest_id=ingest_id))
        finally:
            reader.close()
            child.join()
    return out


def _child(
    writer: Connection, share: list[Trace], case_id_attribute: str | None, ingest_id: str
) -> None:
    with writer:
        writer.send(solve(share, case_id_attribute=case_id_attribute, ingest_id=ingest_id))
