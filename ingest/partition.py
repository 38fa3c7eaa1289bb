"""The per-partition work of ingest, as pure functions (DESIGN §7).

A *partition* is every record of some traces: their spans and content log records, stored
and new. Its work is one function, `solve`: decode (`decode_spans`), assemble
(`assemble_turns`), and the keys to store with each span (`span_links`). The same
records give the same turns, errors and links, whichever process runs it, so the local
engine's worker processes (`turnscore.ingest.shards`) and a Ray task can run it alike.

Partitions must hold whole conversations: assembly joins traces by conversation id, by
history (a conversation-less trace continues an earlier call's input + output) and by
`gen_ai.response.id` (two instrumentations of one call in separate traces). `split` cuts
by a cheap key read from the raw spans (the conversation id they name, else the trace);
each solved partition reports the keys it joins by (`JoinKeys`), and `clashes` finds
partitions that share one, which the caller solves again together. Keys over-approximate:
a needless merge costs time, never a different result.

An engine that can afford a first pass over decoded traces (Ray, `turnscore.warehouse.
ray_engine`) partitions by keys instead: `trace_keys` per trace, `components` joins the
traces whose keys meet (the same union-find `clashes` runs over partitions), and `assign`
packs the components into partitions of about equal size, which `solve` then never has to
solve again together.
"""

from __future__ import annotations

import heapq
import zlib
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from turnscore.ingest.assemble import assemble_turns
from turnscore.ingest.decode import conversation_id, decode_spans, trace_order
from turnscore.ingest.links import (
    JoinKeys,
    SpanKey,
    SpanLinks,
    components,
    join_keys,
    span_links,
    trace_keys,
)
from turnscore.ingest.model import Span
from turnscore.ingest.records import InputError, RawLog, RawSpan
from turnscore.ingest.turn import Turn

K = TypeVar("K", bound=Hashable)

__all__ = [
    "JoinKeys", "Partition", "Solved", "assign", "clashes", "components", "join_keys",
    "solve", "split", "trace_keys",
]


@dataclass(frozen=True, slots=True)
class Partition:
    """Every record of some traces, and which of them to store (the new ones)."""

    spans: list[RawSpan] = field(default_factory=list)
    logs: list[RawLog] = field(default_factory=list)
    new: list[RawSpan | RawLog] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Solved:
    """A partition's turns, the errors found in it, its spans' links and its join keys."""

    turns: list[Turn]
    errors: list[InputError]
    links: dict[SpanKey, SpanLinks]
    keys: JoinKeys


def solve(
    part: Partition, *, case_id_attribute: str | None, ingest_id: str
) -> Solved:
    """Decode, assemble and link one partition's records."""
    decoded, errors = decode_spans(
        trace_order(part.spans), part.logs, case_id_attribute=case_id_attribute
    )
    return assemble(decoded, errors, ingest_id=ingest_id)


def assemble(decoded: Sequence[Span], errors: Sequence[InputError], *, ingest_id: str) -> Solved:
    """`solve` from decoded spans (and the errors their decoding gave)."""
    result = assemble_turns(decoded, ingest_id=ingest_id)
    return Solved(
        turns=result.turns,
        errors=[*errors, *result.errors],
        links=span_links(decoded, result.trace_conversations),
        keys=join_keys(decoded),
    )


def split(
    spans: Iterable[RawSpan],
    logs: Iterable[RawLog],
    new: Iterable[RawSpan | RawLog],
    count: int,
) -> list[Partition]:
    """The records in `count` partitions, a trace's records together, traces that name
    the same conversation id together (by a stable hash of it)."""
    spans, logs = list(spans), list(logs)
    key: dict[str, str] = {}
    for s in spans:
        if s.trace_id not in key or key[s.trace_id] == s.trace_id:
            key[s.trace_id] = conversation_id(s.attributes) or s.trace_id
    parts = [Partition() for _ in range(count)]

    def of(trace_id: str | None) -> Partition:
        k = key.get(trace_id or "", trace_id or "")
        return parts[zlib.crc32(k.encode()) % count]

    for s in spans:
        of(s.trace_id).spans.append(s)
    for lg in logs:
        of(lg.trace_id).logs.append(lg)
    for r in new:
        of(r.trace_id).new.append(r)
    return parts


def clashes(keys: Sequence[JoinKeys]) -> list[list[int]]:
    """Indexes of `keys` in groups that must be solved together (singletons included)."""
    groups: dict[int, list[int]] = {}
    for i, root in components(dict(enumerate(keys))).items():
        groups.setdefault(root, []).append(i)
    return list(groups.values())


def assign(component_of: Mapping[str, K], sizes: Mapping[str, int],
                        n: int) -> dict[K, int]:
    """Component -> partition number in [0, n): largest components first, each onto the
    partition with the fewest records so far (`sizes`: records per trace)."""
    weight: dict[K, int] = defaultdict(int)
    for trace_id, comp in component_of.items():
        weight[comp] += sizes.get(trace_id, 1)
    heap = [(0, p) for p in range(max(1, n))]
    out: dict[K, int] = {}
    for comp in sorted(weight, key=lambda c: (-weight[c], str(c))):
        load, p = heapq.heappop(heap)
        out[comp] = p
        heapq.heappush(heap, (load + weight[comp], p))
    return out


def merge(parts: Sequence[Partition]) -> Partition:
    return Partition(
        spans=[s for p in parts for s in p.spans],
        logs=[lg for p in parts for lg in p.logs],
        new=[r for p in parts for r in p.new],
    )
