"""Which stored traces a batch must rebuild with: the keys that join traces into conversations.

Turn assembly groups traces into conversations (`turnscore.ingest.grouping`): by
conversation id where the spans carry one, else by **history**: a trace's first model
call continues the earlier call whose input + output is a prefix of its input. When a
batch brings a trace, every stored trace of the same conversation must be rebuilt with
it, or turn order and turn boundaries would depend on how the input was split into files.

So each stored span carries the keys that find it again (`SpanLinks`, columns of
`SPAN_FIELDS`), and a batch looks up (`Lookups`):
- the conversation ids its spans name, and its own trace ids (a conversation chained by
  history is named after its first trace, and later traces store that name);
- **backward**: hashes of every prefix of each conversation-less trace's first model
  input, matched against stored calls' `history_key` (input + output): the stored
  trace this one continues;
- **forward**: the `history_key` of each of its model calls, matched against stored
  first calls' `prefix_keys`: stored traces that continue this one (an earlier trace
  arriving after the later ones).

Every model call with input and output carries a `history_key`, in traces with a
conversation id too: grouping chains a conversation-less trace (an agent run whose root
span never arrived, say) onto any earlier call, so a trace stored with its conversation
id must be found by history as well, or such a trace would join it only when both come
in one batch.

Keys over-approximate (any shared prefix, any named trace): rebuilding an unrelated trace
costs time, never correctness, since assembly is a pure function of the spans it gets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import orjson

from turnscore.ingest.grouping import NormMessage, normalize
from turnscore.ingest.model import Span, SpanKind

__all__ = ["Lookups", "SpanLinks", "history_key", "lookups", "prefix_keys", "span_links"]

SpanKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class SpanLinks:
    """The keys stored with a span so that later batches find its trace."""

    conversation_id: str | None = None
    history_key: str | None = None
    """Model call: hash of its normalized input + output."""
    prefix_keys: tuple[str, ...] = ()
    """First model call of a conversation-less trace: hashes of every prefix of its input."""


@dataclass(frozen=True, slots=True)
class Lookups:
    """What to look for among stored spans."""

    conversations: set[str] = field(default_factory=set)
    prefixes: set[str] = field(default_factory=set)
    """Backward: match stored `history_key`."""
    histories: set[str] = field(default_factory=set)
    """Forward: match stored `prefix_keys`."""


def span_links(decoded: Sequence[Span], trace_conv: dict[str, str]) -> dict[SpanKey, SpanLinks]:
    """Per span worth finding, its keys; `trace_conv` is assembly's trace -> conversation."""
    firsts = _first_calls(decoded)
    out: dict[SpanKey, SpanLinks] = {}
    for s in decoded:
        conv = s.conversation_id or trace_conv.get(s.trace_id)
        links = SpanLinks(
            conversation_id=conv if conv and conv != s.trace_id else None,
            history_key=history_key(s) if _chains(s) else None,
            prefix_keys=prefix_keys(s) if firsts.get(s.trace_id) is s else (),
        )
        if links != _NONE:
            out[(s.trace_id, s.span_id)] = links
    return out


def lookups(decoded: Sequence[Span]) -> Lookups:
    firsts = _first_calls(decoded)
    out = Lookups(
        conversations={s.conversation_id for s in decoded if s.conversation_id}
        | {s.trace_id for s in decoded}
    )
    for call in firsts.values():
        out.prefixes.update(prefix_keys(call))
    for s in decoded:
        if _chains(s):
            key = history_key(s)
            if key is not None:
                out.histories.add(key)
    return out


_NONE = SpanLinks()


def _first_calls(decoded: Iterable[Span]) -> dict[str, Span]:
    """The first model call with captured input of each trace that names no conversation."""
    decoded = list(decoded)
    with_conv = {s.trace_id for s in decoded if s.conversation_id}
    first: dict[str, Span] = {}
    for s in decoded:
        if s.trace_id in with_conv or s.kind is not SpanKind.LLM or s.input_messages is None:
            continue
        seen = first.get(s.trace_id)
        if seen is None or (s.start_unix_nano, s.span_id) < (seen.start_unix_nano, seen.span_id):
            first[s.trace_id] = s
    return first


def _chains(span: Span) -> bool:
    """A model call whose history a later conversation-less trace may continue (in any
    trace: see the module doc)."""
    return (
        span.kind is SpanKind.LLM
        and span.input_messages is not None
        and span.output_messages is not None
    )


def history_key(span: Span) -> str | None:
    if span.input_messages is None or span.output_messages is None:
        return None
    hit = _HISTORY_KEYS.get(id(span))
    if hit is not None and hit[0] is span:
        return hit[1]
    key = _hash(normalize(span.input_messages) + normalize(span.output_messages))
    if len(_HISTORY_KEYS) >= _HISTORY_KEYS_SIZE:
        _HISTORY_KEYS.clear()
    _HISTORY_KEYS[id(span)] = (span, key)  # holding `span` keeps its id from being reused
    return key


_HISTORY_KEYS: dict[int, tuple[Span, str]] = {}
_HISTORY_KEYS_SIZE = 16_384
"""A group asks for a call's key up to three times (store lookups, the links it stores,
the partition's join keys): hashed once. Bounded."""


def prefix_keys(call: Span) -> tuple[str, ...]:
    history = normalize(call.input_messages or ())
    return tuple(_hash(history[:n]) for n in range(1, len(history) + 1))


def _hash(history: tuple[NormMessage, ...]) -> str:
    return hashlib.sha256(orjson.dumps(history)).hexdigest()[:32]
