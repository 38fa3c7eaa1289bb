"""The keys that join traces into conversations, defined once: for assembly's grouping, for
cutting work into partitions, and for finding stored traces again.

Turn assembly groups traces into conversations (`turnscore.ingest.grouping`): by
conversation id where the spans carry one, else by **history**: a trace's first model
call continues the earlier call whose input + output is a prefix of its input. A call's
history is its messages reduced to what any two captures of them agree on (`normalize`),
hashed: `history_key` (input + output) and `prefix_keys` (every prefix of its input).
Grouping matches the one against the other; so do partitions and the store.

`JoinKeys` are what joins some traces to traces elsewhere:
- the conversation ids their spans name, and their own trace ids (a conversation chained
  by history is named after its first trace, and later traces store that name);
- **backward**: the `prefix_keys` of the model calls of conversation-less traces, matched
  against other calls' `history_key`: the trace this one continues;
- **forward**: the `history_key` of each model call, matched against later first calls'
  `prefix_keys`: traces that continue this one (an earlier trace arriving after the later
  ones);
- the response ids of their model calls (two instrumentations of one call in separate
  traces).
A prefix joins a history, never another prefix: two raw-client traces sharing a system
prompt are not one conversation. `components` joins whatever meets, directly or through
others. When a batch brings a trace, every stored trace of the same conversation must be
rebuilt with it, or turn order and boundaries would depend on how the input was cut (and
a call recorded twice, its two traces ingested by different runs, would be counted
twice). So each stored span carries the keys that find it again (`SpanLinks`, columns of
`SPAN_FIELDS`, one key kind each in the store's key index), and the store answers every
kind of `JoinKeys` (`SpanStore.linked_traces`):
- `conversation_id`: the conversation it was grouped into, unless that is its own trace
  (found by `JoinKeys.conversations`, as is its trace id);
- `history_key`: each model call's (found by `prefixes`);
- `prefix_keys`: the first model call's of a conversation-less trace (found by
  `histories`);
- `response_id`: each model call's (found by `responses`). Span files written before this
  column existed lack it: their calls are found by the other keys only.

Every model call with input and output carries a `history_key`, in traces with a
conversation id too: grouping chains a conversation-less trace (an agent run whose root
span never arrived, say) onto any earlier call, so a trace stored with its conversation
id must be found by history as well, or such a trace would join it only when both come
in one batch. Keys over-approximate (any call's prefixes, any named trace): joining an
unrelated trace costs time, never correctness, since assembly is a pure function of the
spans it gets.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TypeVar

import orjson

from turnscore.ingest.model import Message, Part, PartType, Span, SpanKind

__all__ = [
    "JoinKeys", "Lookups", "NormMessage", "SpanLinks", "components", "history_key",
    "join_keys", "normalize", "prefix_keys", "span_links", "trace_keys",
]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
SpanKey = tuple[str, str]
NormPart = tuple[str, str | None, str | None, str | None, str | None]
NormMessage = tuple[str, tuple[NormPart, ...]]


@dataclass(frozen=True, slots=True)
class SpanLinks:
    """The keys stored with a span so that later batches find its trace."""

    conversation_id: str | None = None
    history_key: str | None = None
    """Model call: hash of its normalized input + output."""
    prefix_keys: tuple[str, ...] = ()
    """First model call of a conversation-less trace: hashes of every prefix of its input."""
    response_id: str | None = None
    """Model call: its response id, which another instrumentation's report of the same
    call, in another trace, shares."""


@dataclass(frozen=True, slots=True)
class JoinKeys:
    """What joins some traces to traces elsewhere (the module doc)."""

    # Any set: the store's callers look up plain sets.
    conversations: AbstractSet[str] = frozenset()
    """Conversation ids the spans name, and their trace ids."""
    prefixes: AbstractSet[str] = frozenset()
    """Backward: every prefix of every model input of the conversation-less traces."""
    histories: AbstractSet[str] = frozenset()
    """Forward: input + output of each model call."""
    responses: AbstractSet[str] = frozenset()
    """Response ids of the model calls."""

    def meets(self, other: JoinKeys) -> bool:
        return bool(
            self.conversations & other.conversations
            or self.prefixes & other.histories
            or self.histories & other.prefixes
            or self.responses & other.responses
        )


Lookups = JoinKeys
"""What to look for among stored spans (`SpanStore.linked_traces`): the same keys."""


def join_keys(decoded: Sequence[Span]) -> JoinKeys:
    with_id = {s.trace_id for s in decoded if s.conversation_id}
    calls = [s for s in decoded if s.kind is SpanKind.LLM]
    # Grouping chains a conversation-less trace by its first main-line call, known only
    # once assembled; every call with input stands in for it here.
    return JoinKeys(
        conversations=frozenset(
            {s.conversation_id for s in decoded if s.conversation_id}
            | {s.trace_id for s in decoded}
        ),
        prefixes=frozenset(
            key
            for s in calls
            if s.input_messages is not None and s.trace_id not in with_id
            for key in prefix_keys(s)
        ),
        histories=frozenset(k for s in calls if (k := history_key(s)) is not None),
        responses=frozenset(s.response_id for s in calls if s.response_id),
    )


def trace_keys(decoded: Sequence[Span]) -> dict[str, JoinKeys]:
    """`join_keys` of each trace among `decoded` (every span of each trace)."""
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in decoded:
        by_trace[span.trace_id].append(span)
    return {trace_id: join_keys(spans) for trace_id, spans in by_trace.items()}


def components(keys: Mapping[K, JoinKeys]) -> dict[K, K]:
    """Each of `keys` -> its component's name (its first member in `keys`' order): the
    members joined when two of them `meet`, directly or through others. A union-find over
    an index of each key, so the cost is the number of keys, not of pairs."""
    order = {k: i for i, k in enumerate(keys)}
    parent = {k: k for k in keys}

    def find(k: K) -> K:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def union(members: Iterable[K]) -> None:
        roots = sorted({find(m) for m in members}, key=order.__getitem__)
        for r in roots[1:]:
            parent[r] = roots[0]

    by_conversation: dict[str, list[K]] = defaultdict(list)
    by_response: dict[str, list[K]] = defaultdict(list)
    by_history: dict[str, list[K]] = defaultdict(list)
    by_prefix: dict[str, list[K]] = defaultdict(list)
    for k, jk in keys.items():
        for c in jk.conversations:
            by_conversation[c].append(k)
        for r in jk.responses:
            by_response[r].append(k)
        for h in jk.histories:
            by_history[h].append(k)
        for p in jk.prefixes:
            by_prefix[p].append(k)
    for members in (*by_conversation.values(), *by_response.values()):
        union(members)
    for key, continuing in by_prefix.items():  # a prefix joins a history, not a prefix
        if key in by_history:
            union([*by_history[key], *continuing])
    return {k: find(k) for k in keys}


def span_links(decoded: Sequence[Span], trace_conv: dict[str, str]) -> dict[SpanKey, SpanLinks]:
    """Per span worth finding, its keys; `trace_conv` is assembly's trace -> conversation."""
    firsts = _first_calls(decoded)
    out: dict[SpanKey, SpanLinks] = {}
    for s in decoded:
        conv = s.conversation_id or trace_conv.get(s.trace_id)
        call = s.kind is SpanKind.LLM
        links = SpanLinks(
            conversation_id=conv if conv and conv != s.trace_id else None,
            history_key=history_key(s) if call else None,
            prefix_keys=prefix_keys(s) if firsts.get(s.trace_id) is s else (),
            response_id=s.response_id if call else None,
        )
        if links != _NONE:
            out[(s.trace_id, s.span_id)] = links
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


# --- history ---------------------------------------------------------------------------


def history_key(span: Span) -> str | None:
    """Hash of the normalized input + output of a call that captured both, else None."""
    if span.input_messages is None or span.output_messages is None:
        return None
    messages = (*span.input_messages, *span.output_messages)
    return _memo(_HISTORY_KEYS, span, lambda: _key(_encoded(messages)))


def prefix_keys(call: Span) -> tuple[str, ...]:
    """Hash of every prefix (1, 2, ... messages) of the call's normalized input."""
    return _memo(_PREFIX_KEYS, call, lambda: _hashes(_encoded(call.input_messages or ())))


def normalize(messages: Iterable[Message]) -> tuple[NormMessage, ...]:
    """Messages reduced to what any two captures of them agree on (for history matching):
    no system messages, no empty text or non-content parts; call ids kept, so two runs of
    the same script with fresh ids stay apart."""
    return tuple(n[0] for m in messages if (n := _normalized(m)) is not None)


def _normalized(m: Message) -> tuple[NormMessage, bytes] | None:
    hit = _NORMALIZED.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    norm = _normalize_message(m)
    out = (norm, orjson.dumps(norm)) if norm is not None else None
    if len(_NORMALIZED) >= _NORMALIZED_SIZE:
        _NORMALIZED.clear()
    _NORMALIZED[id(m)] = (m, out)  # holding `m` keeps its id from being reused
    return out


_NORMALIZED: dict[int, tuple[Message, tuple[NormMessage, bytes] | None]] = {}
_NORMALIZED_SIZE = 4096
"""Chat spans share their history's Message objects (the decoder's message cache), so
each is normalized (and encoded) once, not once per model call that repeats it. Bounded."""


def _normalize_message(m: Message) -> NormMessage | None:
    if m.role == "system":
        return None
    parts = tuple(_norm_part(p) for p in m.parts if _keeps(p))
    return (m.role, parts) if parts else None


def _keeps(p: Part) -> bool:
    if p.type is PartType.OTHER:
        return False
    return not (p.type is PartType.TEXT and not (p.text or "").strip())


def _norm_part(p: Part) -> NormPart:
    call = p.type is PartType.TOOL_CALL
    return (
        p.type,  # a StrEnum is its value; `.value` is enum's slow descriptor on 3.11
        None if call else (p.text or "").strip(),
        p.call_id,
        p.name if call else None,
        p.arguments if call else None,
    )


def _encoded(messages: Iterable[Message]) -> list[bytes]:
    return [n[1] for m in messages if (n := _normalized(m)) is not None]


def _hashes(encoded: Sequence[bytes]) -> tuple[str, ...]:
    """The key of each prefix of `encoded` (normalized messages as JSON): the hash of the
    JSON array of its first n messages, as `orjson.dumps(normalized[:n])` spells it, each
    prefix hashed on from the one before (linear, not quadratic, in the history's length)."""
    running = hashlib.sha256(b"[")
    out: list[str] = []
    for i, piece in enumerate(encoded):
        running.update(b"," + piece if i else piece)
        closed = running.copy()
        closed.update(b"]")
        out.append(closed.hexdigest()[:32])
    return tuple(out)


def _key(encoded: Sequence[bytes]) -> str:
    return hashlib.sha256(b"[" + b",".join(encoded) + b"]").hexdigest()[:32]


def _memo(cache: dict[int, tuple[Span, T]], span: Span, compute: Callable[[], T]) -> T:
    hit = cache.get(id(span))
    if hit is not None and hit[0] is span:
        return hit[1]
    value = compute()
    if len(cache) >= _KEYS_SIZE:
        cache.clear()
    cache[id(span)] = (span, value)  # holding `span` keeps its id from being reused
    return value


_HISTORY_KEYS: dict[int, tuple[Span, str]] = {}
_PREFIX_KEYS: dict[int, tuple[Span, tuple[str, ...]]] = {}
_KEYS_SIZE = 16_384
"""A call's keys are asked for several times (grouping, the links it stores, join keys,
store lookups): hashed once. Bounded."""
