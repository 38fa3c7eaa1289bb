"""Partitioning an ingest by conversation, for engines that assemble partitions apart (DESIGN §7).

Assembly (`assemble_turns`) is a pure function of the spans it gets, and conversations
do not interact: assembling two independent conversations together gives the union of
assembling each alone. So an engine may split a batch of traces into partitions and
assemble each on its own worker, provided every trace of a conversation lands in the same
partition. Which traces belong together is known only after decoding (conversation ids are
attributes; a conversation-less trace joins the one whose history it continues), so this
is a first pass over decoded traces:

1. `dedup_records`: one copy of each record (`store.record_key`), the first in input order
   (file, then position); a differing copy is an input error, as on the local path;
2. `trace_keys`: per trace, the keys that join it to others, the same keys the span store
   uses to find stored traces of a conversation (`turnscore.ingest.links.lookups`): the
   conversation ids its spans name and its own id; the history keys of its model calls;
   the prefix keys of its first model input when it names no conversation;
3. `components`: traces joined when one names the other's conversation (or id), or when a
   prefix key of one is a history key of another; connected components, found with a
   union-find. Keys over-approximate (see `links`), which costs partition size, never
   correctness;
4. `assign`: components packed into at most `n` partitions of about equal span counts.

Nothing here knows about an engine: the functions take and return plain records.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeAlias

from turnscore.ingest.links import lookups
from turnscore.ingest.model import Span, SpanKind
from turnscore.ingest.records import InputError, RawLog, RawSpan
from turnscore.ingest.store import record_key

__all__ = ["TraceKeys", "assign", "components", "dedup_records", "trace_keys"]

Record: TypeAlias = RawSpan | RawLog


def dedup_records(records: Iterable[Record]) -> tuple[list[Record], list[InputError]]:
    """One copy per record key, the first of `records` (pass them in input order); a copy
    whose content differs from the kept one is reported."""
    kept: dict[object, Record] = {}
    errors: list[InputError] = []
    for rec in records:
        first = kept.setdefault(record_key(rec), rec)
        if first is not rec and isinstance(rec, RawSpan) and _content(first) != _content(rec):
            errors.append(InputError(
                rec.source, rec.position,
                f"span {rec.span_id} of trace {rec.trace_id} arrived twice with different "
                f"content; kept the first copy (from {first.source}, {first.position})",
                span_id=rec.span_id, trace_id=rec.trace_id))
    return list(kept.values()), errors


def _content(rec: Record) -> Record:
    return replace(rec, source="", position="")


@dataclass(frozen=True, slots=True)
class TraceKeys:
    """What joins one trace to others (see the module doc)."""

    conversations: frozenset[str]
    """Conversation ids its spans name, and its own trace id."""
    histories: frozenset[str]
    """History keys of its model calls (input + output)."""
    prefixes: frozenset[str]
    """Prefix keys of its first model input, when it names no conversation."""
    responses: frozenset[str] = frozenset()
    """Response ids of its model calls."""


def trace_keys(decoded: Sequence[Span]) -> dict[str, TraceKeys]:
    """The keys of each trace among `decoded` (every span of each trace)."""
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in decoded:
        by_trace[span.trace_id].append(span)
    out = {}
    for trace_id, spans in by_trace.items():
        found = lookups(spans)
        responses = frozenset(s.response_id for s in spans
                              if s.kind is SpanKind.LLM and s.response_id)
        out[trace_id] = TraceKeys(frozenset(found.conversations), frozenset(found.histories),
                                  frozenset(found.prefixes), responses)
    return out


def components(keys: Mapping[str, TraceKeys]) -> dict[str, str]:
    """Trace id -> its component's name (the smallest trace id in it)."""
    parent = {t: t for t in keys}

    def find(t: str) -> str:
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    def union(members: Iterable[str]) -> None:
        roots = sorted({find(m) for m in members})
        for r in roots[1:]:
            parent[r] = roots[0]

    by_conversation: dict[str, list[str]] = defaultdict(list)
    by_history: dict[str, list[str]] = defaultdict(list)
    by_prefix: dict[str, list[str]] = defaultdict(list)
    for trace_id, k in keys.items():
        for c in k.conversations:
            by_conversation[c].append(trace_id)
        for r in k.responses:
            # Apart from conversation names: a response id is no conversation's name.
            by_conversation[f"response\x1f{r}"].append(trace_id)
        for h in k.histories:
            by_history[h].append(trace_id)
        for p in k.prefixes:
            by_prefix[p].append(trace_id)
    for members in by_conversation.values():
        union(members)
    # A prefix joins only a history (the trace it continues), never another prefix: two
    # raw-client traces sharing a system prompt are not one conversation.
    for key, continuing in by_prefix.items():
        continued = by_history.get(key)
        if continued:
            union([*continued, *continuing])
    return {t: find(t) for t in keys}


def assign(component_of: Mapping[str, str], sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """Component name -> partition number in [0, n): largest components first, each onto
    the partition with the fewest records so far (`sizes`: records per trace)."""
    weight: dict[str, int] = defaultdict(int)
    for trace_id, comp in component_of.items():
        weight[comp] += sizes.get(trace_id, 1)
    heap = [(0, p) for p in range(max(1, n))]
    out = {}
    for comp in sorted(weight, key=lambda c: (-weight[c], c)):
        load, p = heapq.heappop(heap)
        out[comp] = p
        heapq.heappush(heap, (load + weight[comp], p))
    return out
