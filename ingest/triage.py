"""Triage of a group's traces: which wait for the next group, which may take the direct
path, and which must go the general way (steps 2-4 of `turnscore.ingest.pipeline`).

Every rule here only moves work around: a trace put on the wrong side costs time, never
a different result, as long as nothing the general path would join to a conversation is
left out of it. The general path joins by conversation id (checked in the pipeline
against what its traces name) and by history: a trace without a conversation id continues
the model call whose input + output its first main-line call extends (`prefixes`,
`clashes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from turnscore.ingest.direct import DirectConversation, fits
from turnscore.ingest.fast_read import Decoded
from turnscore.ingest.links import Lookups, prefix_keys
from turnscore.ingest.model import Span, SpanKind
from turnscore.ingest.records import RawSpan
from turnscore.ingest.store import RecordKey, SpanStore

__all__ = ["Carry", "candidates", "carry", "clashes", "prefixes"]


@dataclass(slots=True)
class Carry:
    """Spans of traces whose root span had not arrived by the end of a group. They wait one
    group for it, since exporters cut batches in the order spans end and a root ends last:
    the trace is then read whole once, not stored half and rebuilt. Carried at most once."""

    spans: dict[RecordKey, RawSpan] = field(default_factory=dict)
    decoded: dict[int, Decoded] = field(default_factory=dict)


def carry(
    fresh: dict[RecordKey, RawSpan],
    logs: Iterable[RecordKey],
    decoded: dict[int, Decoded],
    carried: Carry,
    stored_traces: set[str],
) -> Carry:
    """Take out of `fresh` the spans of new traces without a root span yet (not carried
    before, no log records, nothing stored: a late part of a stored trace is processed now)."""
    rooted = {s.trace_id for s in fresh.values() if s.parent_span_id is None}
    logged = {k[1] for k in logs}
    waiting = {k[1] for k in carried.spans}
    out = Carry()
    for key, span in list(fresh.items()):
        trace = span.trace_id
        if trace in rooted or trace in logged or trace in waiting or trace in stored_traces:
            continue
        out.spans[key] = fresh.pop(key)
        found = decoded.get(id(span))
        if found is not None:
            out.decoded[id(span)] = found
    return out


def candidates(
    new_spans: Sequence[RawSpan], excluded: set[str], spans_store: SpanStore
) -> dict[str, list[list[RawSpan]]]:
    """New traces (not `excluded`) of the plain shape (`direct.fits`), by their conversation
    id; conversations something stored belongs to are left out. Every other trace goes the
    general way, and decoding it there shows which conversations it names."""
    by_trace: dict[str, list[RawSpan]] = {}
    for s in new_spans:
        if s.trace_id not in excluded:
            by_trace.setdefault(s.trace_id, []).append(s)
    conversations: dict[str, list[list[RawSpan]]] = {}
    for spans in by_trace.values():
        cid = fits(spans)
        if cid is not None:
            conversations.setdefault(cid, []).append(spans)
    if conversations and spans_store.linked_traces(Lookups(conversations=set(conversations))):
        for cid in list(conversations):
            if spans_store.linked_traces(Lookups(conversations={cid})):
                del conversations[cid]
    return conversations


def prefixes(decoded: Sequence[Span]) -> set[str]:
    """History prefixes by which traces without a conversation id could chain into another
    trace's conversation. Grouping chains such a trace by its first main-line model call;
    every model call with input stands in for it here (a needless move only costs time)."""
    with_id = {s.trace_id for s in decoded if s.conversation_id}
    return {
        key
        for s in decoded
        if s.kind is SpanKind.LLM and s.input_messages is not None and s.trace_id not in with_id
        for key in prefix_keys(s)
    }


def clashes(solved: dict[str, DirectConversation], prefixes: set[str]) -> None:
    """Take out of `solved` the conversations a trace without a conversation id would chain
    into by history: they go the general way."""
    for cid in list(solved):
        if not prefixes.isdisjoint(solved[cid].histories):
            del solved[cid]
