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
- gaps: `gap_keys` among the prefixes, `gap_history_key` among the histories; and, since
  the store keeps one history key per span, both are stored among `prefix_keys` and both
  looked up as histories (`gap_keys` too), so either side finds the other in the store.
  Over-approximate: calls with the same input that asked for tools, or inputs with a gap
  after the same history, find each other there too;
- requests recorded wrong: a replayed request's keys among the prefixes, `call_gap_keys`
  among the histories; both stored among `prefix_keys`, the latter marked
  (`stored_call_gap`) and each side looked up as the other's, so neither meets its own
  kind (inputs replaying one request are not joined for that);
- the response ids of their model calls (two instrumentations of one call in separate
  traces);
- **reports apart**: a model call and another instrumentation's report of it alone in a
  trace of its own (`lone_traces`), from the same service, which says the same (or, where
  the report lost its output, or said what no call said, was sent the same) and started
  within it (`apart_keys`: the ten seconds the report started in, and for the call each ten
  seconds it spans, up to ten minutes: `apart_windows`); and two reports of one call each
  alone in a trace of its own, the handler's (no response id) around the client's
  (`_enclosure_keys`, by what both were sent as far as both tell it: `gist_key`); and a
  client SDK's own report of a call that captured nothing but the response id and usage,
  alone in a trace of its own, around the start of a call that names no response
  (`_silent_keys`, by the usage both count). All are
  stored among `prefix_keys` and looked up as histories, each side marked so that it finds
  the other's kind only (`apart_twins`: what a stored one looks up); the time keeps a call
  repeated word for word (a greeting, nightly evaluations) from finding every other's.
A prefix joins a history, never another prefix: two raw-client traces sharing a system
prompt are not one conversation. `components` joins whatever meets, directly or through
others. When a batch brings a trace, every stored trace of the same conversation must be
rebuilt with it, or turn order and boundaries would depend on how the input was cut (and
a call recorded twice, its two traces ingested by different runs, would be counted
twice). So each stored span carries the keys that find it again (`SpanLinks`, columns of
`SPAN_FIELDS`, one key kind each in the store's key index), and the store answers every
kind of `JoinKeys` (`SpanStore.linked_traces`):
- `conversation_id`: the conversation it was grouped into, unless that is its own trace,
  or for a root that continues another trace, that trace (found by
  `JoinKeys.conversations`; a trace is found by its id through `JoinKeys.continues`);
- `history_key`: each model call's (found by `prefixes`);
- `prefix_keys`: the first model call's of a conversation-less trace, its `gap_keys` and
  its replayed requests' keys; and each model call's `gap_history_key` and marked
  `call_gap_keys` in such a trace (found by `histories`);
- `response_id`: each model call's (found by `responses`). Span files written before this
  column existed lack it: their calls are found by the other keys only.

Every model call with input and output carries a `history_key`, in traces with a
conversation id too: grouping chains a conversation-less trace (an agent run whose root
span never arrived, say) onto any earlier call, so a trace stored with its conversation
id must be found by history as well, or such a trace would join it only when both come
in one batch. Keys over-approximate (any call's prefixes, any named trace): joining an
unrelated trace costs time, never correctness, since assembly is a pure function of the
spans it gets.

**Gaps.** Some emitters replay the assistant message that asked for a tool with its role
alone: BerriAI/litellm `litellm/integrations/opentelemetry.py` (`set_attributes`: a
prompt's `content` only when truthy, never its `tool_calls`; the completion keeps the call
as `gen_ai.completion.N.function_call.*`), OpenLLMetry's older `gen_ai.prompt.N.{role,
content}`, OpenInference where tool calls are not captured. The later input then no longer
extends the earlier call's input + output. So an assistant message of an input that
normalizes to nothing, after a user message and followed by a tool result, is a **gap**:
it stands for whatever an earlier call output there, provided that output asked for tools
and said nothing (had it said something, the replay would carry it). Both sides hash the
normalized history with a gap marker in that place, a message no capture normalizes to
(`["assistant",[]]`): `gap_keys` (prefix side: before each gap of an input) and
`gap_history_key` (history side: a call's input, then the gap its output leaves). These
are extra keys; every other key is unchanged. Only calls of traces that name no
conversation (raw clients: the traces chained by history) have a history side: an agent
run's calls would otherwise meet every run given the same request. Grouping compares call
ids where the tool results after the gap and the earlier output both name them.

**Requests recorded wrong.** Some instrumentations record a streamed output wrong while
the client replays it right: the last chunk's call only, or parallel calls merged into
one (ids and names concatenated). The later input then holds an assistant message of tool
calls, followed by their results, that extends no earlier history. So each such message
of an input (after a user message) also gives a key per call it holds: the history before
it, then that call named alone, by id, else (a replay that drops ids: OpenLIT's Gemini
messages) by name and arguments. A call of a conversation-less trace whose output asks
for tools and says nothing gives the same per call it asked for, by id (and each id a
merged one concatenates, `call_ids`) and by name and arguments: `call_gap_keys`. One call
in common joins them. Runs of one script stay apart by their fresh call ids; where the
replay has none, they meet as the exact keys of id-less calls already make them meet
(grouping then takes the latest earlier call).

(Over ~400 lines: the keys are defined once here for grouping, partitions and the store,
and each key's rule is read with the others it must agree with.)
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

import orjson
from msgspec import Struct

from turnscore.ingest.decode import collector_paused
from turnscore.ingest.model import Message, PartType, Span, SpanKind

__all__ = [
    "Gap", "JoinKeys", "Lookups", "NormMessage", "SpanLinks", "apart_keys", "apart_twins",
    "apart_windows", "call_gap_keys", "call_ids", "components", "counted", "gap_history_key",
    "gap_keys", "gaps", "gist_key", "history_key", "input_key", "join_keys", "lone_traces",
    "normalize", "prefix_keys", "says_nothing", "silent_report", "span_links",
    "stored_call_gap", "trace_keys",
]

K = TypeVar("K", bound=Hashable)
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
    """First model call of a conversation-less trace: hashes of every prefix of its input,
    then its `gap_keys`; any model call of such a trace: its `gap_history_key` and
    `call_gap_keys`; any model call: its stored `apart_keys`, last."""
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
    """Backward: every prefix of every model input of the conversation-less traces, their
    `gap_keys` and their replayed requests' keys; the stored `apart_keys`."""
    histories: AbstractSet[str] = frozenset()
    """Forward: input + output of each model call; `gap_history_key`, `gap_keys`,
    `call_gap_keys` and the marked replayed requests' keys of the calls of
    conversation-less traces (the module doc says why); the looked-up `apart_keys`."""
    responses: AbstractSet[str] = frozenset()
    """Response ids of the model calls."""
    continues: AbstractSet[str] = frozenset()
    """Traces that some of these continue by a span link (`Span.continues`), found by
    their trace ids; among `conversations` too, which their own trace ids meet."""

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
    _bound(decoded)
    with collector_paused():  # `span_links` says why
        return _join_keys(decoded)


def _join_keys(decoded: Sequence[Span]) -> JoinKeys:
    with_id = {s.trace_id for s in decoded if s.conversation_id}
    calls = [s for s in decoded if s.kind is SpanKind.LLM]
    free = [s for s in calls if s.trace_id not in with_id]
    # Grouping chains a conversation-less trace by its first main-line call, known only
    # once assembled; every call with input stands in for it here.
    walked = [_input_keys(s) for s in free if s.input_messages is not None]
    gapped = {key for _, keys, _ in walked for key in keys}
    replayed = {key for _, _, keys in walked for key in keys}
    continues = frozenset(s.continues for s in decoded if s.continues)
    said = [(s, history_key(s)) for s in calls]
    lone = lone_traces(decoded)
    apart = [apart_keys(s, s.trace_id in lone, key) for s, key in said]
    return JoinKeys(
        conversations=frozenset(
            {s.conversation_id for s in decoded if s.conversation_id}
            | {s.trace_id for s in decoded}
            | continues
        ),
        prefixes=frozenset(key for keys, _, _ in walked for key in keys)
        | gapped
        | replayed
        | {k for stored, _ in apart for k in stored},
        histories=frozenset(k for _, k in said if k is not None)
        | {k for s in free if (k := gap_history_key(s)) is not None}
        | {k for s in free for k in call_gap_keys(s)}
        | gapped
        | {stored_call_gap(k) for k in replayed}
        | {k for _, wanted in apart for k in wanted},
        responses=frozenset(s.response_id for s in calls if s.response_id),
        continues=continues,
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
    # The history prefixes these make are kept (`_Prefix`): with the collector on, its
    # passes over a batch's live spans were most of the time, and found nothing.
    _bound(decoded)
    with collector_paused():
        return _span_links(decoded, trace_conv)


def _span_links(decoded: Sequence[Span], trace_conv: dict[str, str]) -> dict[SpanKey, SpanLinks]:
    firsts = _first_calls(decoded)
    with_id = {s.trace_id for s in decoded if s.conversation_id}
    lone = lone_traces(decoded)
    out: dict[SpanKey, SpanLinks] = {}
    for s in decoded:
        # A root that continues another trace names it, so that trace, arriving later,
        # finds this one by its own id, whatever conversation this one was grouped into.
        conv = s.conversation_id or s.continues or trace_conv.get(s.trace_id)
        call = s.kind is SpanKind.LLM
        keys: tuple[str, ...] = ()
        if firsts.get(s.trace_id) is s:
            keys = tuple(k for kind in _input_keys(s) for k in kind)
        if call and s.trace_id not in with_id:
            if (gap := gap_history_key(s)) is not None:
                keys = (*keys, gap)
            keys = (*keys, *(stored_call_gap(k) for k in call_gap_keys(s)))
        said = history_key(s) if call else None
        if call:
            keys = (*keys, *apart_keys(s, s.trace_id in lone, said)[0])
        links = SpanLinks(
            conversation_id=conv if conv and conv != s.trace_id else None,
            history_key=said,
            prefix_keys=keys,
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


# --- reports apart ---------------------------------------------------------------------


def lone_traces(spans: Iterable[Span]) -> set[str]:
    """Traces that are a model call reported alone: the root claims to be a model call,
    no span is an agent's run or a tool's, and none names a conversation (what is below
    the call is the call's: the SDK's own span, an HTTP client's). A client
    instrumentation's span is one when it started outside the framework's context
    (OpenInference's LangChain tracer never makes its spans current, so the OpenAI
    instrumentation's span of a call is a root of its own); so is every trace of a raw
    client, which is why the other side of a report apart is a call that is not one
    (`apart_keys`)."""
    rooted: set[str] = set()
    mixed: set[str] = set()
    for s in spans:
        if s.parent_span_id is None and s.kind is SpanKind.LLM:
            rooted.add(s.trace_id)
        if s.kind in (SpanKind.AGENT, SpanKind.TOOL) or s.conversation_id:
            mixed.add(s.trace_id)
    return rooted - mixed


APART_WINDOW_NS = 10 * 10**9
"""The span of time a report apart's key names: ten seconds, so that calls saying the same
meet only those that overlap them (a fixed prompt sent all day meets no other's)."""
APART_WINDOWS = 60
"""A call's keys name its first ten minutes at most: a report that started later in a
longer call is not joined to it, in a batch (`calls`) or across."""


def apart_windows(call: Span) -> range:
    """The windows of `APART_WINDOW_NS` that a call's keys name: each it spans, capped."""
    start = call.start_unix_nano // APART_WINDOW_NS
    end = min(call.end_unix_nano // APART_WINDOW_NS, start + APART_WINDOWS - 1)
    return range(start, max(start, end) + 1)


def apart_keys(
    call: Span, lone: bool, said: str | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(stored, looked up): the keys that join a model call of a lone trace (`lone`) to
    the call of another trace it reports, by its service, what both said (`said`: the
    call's `history_key`, which the caller has) and the time:
    the window the report started in, and each the other call spans (`apart_windows`;
    the report started within it). What both said: input and output (`history_key`); a
    report that lost its output (a stream's span that ended before it was read), by what
    it was sent (`input_key`), which the call offers too. Each side is marked apart (`~a`
    and `~b`, the report with and without its output; `~r` and `~s`, the call's keys for
    each) and looks up the other's mark only (`apart_twins`): two raw-client calls alike
    meet nothing by it, and runs of one prompt that answered differently meet no other's.
    A call of another trace that carries its response id, or recorded no output, has
    none: a client's report carries the provider's id too, and rule 3 merges the two by
    it; the keys are for the framework's record that lost it (a streamed LangChain
    message)."""
    silent = _silent_keys(call, lone)
    if call.response_id and not lone:
        return silent
    if lone:
        window = call.start_unix_nano // APART_WINDOW_NS
        # What it said, and what it was sent: `calls` takes a report with an output that
        # fits no call by what it said by what it was sent, as one that lost its output.
        marked = [("a", _named(call, said))] if said is not None else []
        if (sent := input_key(call)) is not None:
            marked.append(("b", _named(call, sent)))
        enclosing = _enclosure_keys(call)
        return ((*(f"~{mark}{window}:{named}" for mark, named in marked), *enclosing[0],
                 *silent[0]),
                (*(f"~{_TWIN[mark]}{window}:{named}" for mark, named in marked),
                 *enclosing[1], *silent[1]))
    if said is None:
        return silent
    keys = [("r", _named(call, said))]
    if (sent := input_key(call)) is not None:
        keys.append(("s", _named(call, sent)))
    windows = apart_windows(call)
    return ((*(f"~{mark}{w}:{named}" for mark, named in keys for w in windows), *silent[0]),
            (*(f"~{_TWIN[mark]}{w}:{named}" for mark, named in keys for w in windows),
             *silent[1]))


_TWIN = {"a": "r", "r": "a", "b": "s", "s": "b", "e": "f", "f": "e", "g": "h", "h": "g"}


def silent_report(call: Span) -> bool:
    """Whether a model call is a client SDK's own report of it: it names the provider's
    response and counts its usage, and captured nothing it was sent or said (the Anthropic
    TypeScript SDK's `anthropic.messages.create` span, `com.anthropic.sdk.typescript`)."""
    return (call.input_messages is None and call.output_messages is None
            and bool(call.response_id) and counted(call) is not None)


def counted(call: Span) -> tuple[int, int] | None:
    """A call's input and output tokens, where it counts both."""
    if call.input_tokens is None or call.output_tokens is None:
        return None
    return call.input_tokens, call.output_tokens


def _silent_keys(call: Span, lone: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(stored, looked up) of a model call for `calls` rule 3's silent report apart: a
    `silent_report` alone in a trace of its own (`~g`, each window it spans) and a call
    that names no response and captured what it was sent (`~h`, the window it started
    in), by service and the usage both count, each finding the other's mark only."""
    usage = counted(call)
    if usage is None:
        return (), ()
    named = _named(call, f"{usage[0]}/{usage[1]}")
    if silent_report(call):
        if not lone:
            return (), ()
        windows = apart_windows(call)
        return (tuple(f"~g{w}:{named}" for w in windows),
                tuple(f"~h{w}:{named}" for w in windows))
    if call.response_id or call.input_messages is None:
        return (), ()
    window = call.start_unix_nano // APART_WINDOW_NS
    return (f"~h{window}:{named}",), (f"~g{window}:{named}",)


def _enclosure_keys(call: Span) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(stored, looked up) of a lone call for `calls` rule 3's two reports apart: a
    handler's report that names no response (`~e`, each window it spans) and the client's
    report that names one (`~f`, the window it started in), by service and what both were
    sent as far as both tell it (`gist_key`), each finding the other's mark only."""
    if call.input_messages is None:
        return (), ()
    named = _named(call, gist_key(call.input_messages))
    if call.response_id:
        window = call.start_unix_nano // APART_WINDOW_NS
        return (f"~f{window}:{named}",), (f"~e{window}:{named}",)
    windows = apart_windows(call)
    return (tuple(f"~e{w}:{named}" for w in windows),
            tuple(f"~f{w}:{named}" for w in windows))


def gist_key(messages: Iterable[Message]) -> str:
    """Hash of what two reports of one request agree on where one kept text parts only
    (OpenLLMetry's LangChain.js handler: no tool calls, no call ids, in the history it
    replays too): the normalized messages' texts and tool results' texts, by role."""
    gist = []
    for role, parts in normalize(messages):
        texts = [(kind, text) for kind, text, *_ in parts if kind is not PartType.TOOL_CALL]
        if texts:
            gist.append((role, texts))
    return hashlib.blake2b(orjson.dumps(gist), digest_size=16).hexdigest()


def _named(call: Span, key: str) -> str:
    return hashlib.blake2b(f"{call.service_name}\0{key}".encode(), digest_size=16).hexdigest()


def apart_twins(stored: Iterable[str]) -> set[str]:
    """What stored `apart_keys` look up: each one's other mark. For a follower that has
    only the stored keys (the Ray engine's), not the spans to make them again."""
    return {f"~{_TWIN[k[1]]}{k[2:]}" for k in stored if k[:1] == "~" and k[1:2] in _TWIN}


# --- history ---------------------------------------------------------------------------


def history_key(span: Span) -> str | None:
    """Hash of the normalized input + output of a call that captured both, else None."""
    if span.input_messages is None or span.output_messages is None:
        return None
    return _walk(span.output_messages, _walk(span.input_messages, _root())[-1])[-1].key()


def input_key(call: Span) -> str | None:
    """Hash of the call's normalized input; None where it has none, or one that
    normalizes to nothing (a system prompt alone)."""
    if call.input_messages is None:
        return None
    walked = _walk(call.input_messages, _root())
    return walked[-1].key() if len(walked) > 1 else None


def prefix_keys(call: Span) -> tuple[str, ...]:
    """Hash of every prefix (1, 2, ... messages) of the call's normalized input."""
    return tuple(n.key() for n in _walk(call.input_messages or (), _root())[1:])


def _input_keys(call: Span) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """`prefix_keys`, `gap_keys` and the replayed requests' keys of the call, in one walk."""
    found: list[Gap] = []
    walked = _walk(call.input_messages or (), _root(), found)
    return (
        tuple(n.key() for n in walked[1:]),
        tuple(g.key for g in found if g.answers is not None),
        tuple(g.key for g in found if g.answers is None),
    )


def stored_call_gap(key: str) -> str:
    """A `call_gap_keys` key as stored among `prefix_keys` and looked up there: apart from
    the replayed requests' keys stored in the same column, so that neither side meets its
    own kind (a prefix joins a history, never another prefix)."""
    return "+" + key


class Gap(NamedTuple):
    """A gap in an input (the module doc): where, its key, what follows it."""

    at: int
    """How many normalized messages precede it: the history it stands after."""
    key: str
    """Hash of those messages, then the gap marker."""
    answers: frozenset[str] | None
    """Call ids of the tool results that follow it (empty where none is named); None for
    a replayed request for tools, whose key names one of its calls (`call_gap_keys`)."""


def gaps(call: Span) -> tuple[Gap, ...]:
    """The gaps of the call's input, and its replayed requests' calls, in order."""
    found: list[Gap] = []
    _walk(call.input_messages or (), _root(), found)
    return tuple(found)


def gap_keys(call: Span) -> tuple[str, ...]:
    """Prefix side of the gap rule: each gap's key."""
    return tuple(g.key for g in gaps(call) if g.answers is not None)


def gap_history_key(span: Span) -> str | None:
    """History side of the gap rule: the hash of the call's normalized input, then the gap
    its output leaves when replayed without content; for a call whose input has a user
    message and whose output asks for tools and says nothing, or was not captured (it may
    have: OpenLLMetry's Together instrumentation ends a streamed call's span before the
    stream is read), else None."""
    if span.input_messages is None:
        return None
    if span.output_messages is not None and not _asks_only(span.output_messages):
        return None
    walked = _walk(span.input_messages, _root())
    if not _has_user(walked):
        return None
    return walked[-1].gap_key()


def call_gap_keys(span: Span) -> tuple[str, ...]:
    """History side of the rule for outputs recorded wrong: for a call whose input has a
    user message and whose output asks for tools and says nothing, the hash of its
    normalized input, then each call it asked for named alone (by id, each id of a merged
    one too; by name and arguments where it has none); else ()."""
    if span.input_messages is None or not _asks_only(span.output_messages or ()):
        return ()
    walked = _walk(span.input_messages, _root())
    if not _has_user(walked):
        return ()
    before = walked[-1]
    return tuple(
        before.key_with(_asked(ident))
        for m in span.output_messages or () for p in m.tool_calls
        for ident in (*(("id", i) for i in call_ids(p.call_id)), ("content", p.name, p.arguments))
    )  # fmt: skip


def _replayed_keys(before: _Prefix, request: _Prefix) -> tuple[str, ...]:
    """Prefix side: each call of a replayed request for tools (`request`, after `before`)
    named alone, by id, else by name and arguments (a replay that drops ids still finds
    its output); kept on the request's node, as every later input of the run replays it."""
    if request.asked is None:
        assert request.last is not None
        request.asked = tuple(
            before.key_with(_asked(("id", call_id) if call_id else ("content", name, arguments)))
            for _, _, call_id, name, arguments in request.last[1]
        )  # fmt: skip
    return request.asked


def _asked(ident: tuple[str | None, ...]) -> bytes:
    """A call named alone where a request for tools stands: no capture normalizes to it."""
    return orjson.dumps(("assistant", (("asked", *ident),)))


_ID_HEAD = re.compile(r"[A-Za-z]+[_-]")


def call_ids(call_id: str | None) -> list[str]:
    """The id, and where it is its own head repeated with pieces of one length
    (`call_a1…call_b2…`), each id it merges: @arizeai/openinference-instrumentation-openai
    4.x joins streamed parallel calls' deltas by their place in the chunk, not their
    `index`, ids and names concatenated. (Ids without such a head, uuids or Mistral's nine
    characters, are not split: their merged calls are not found.)"""
    if not call_id:
        return []
    head = _ID_HEAD.match(call_id)
    if head is not None:
        pieces = call_id.split(head.group())[1:]
        if len(pieces) > 1 and all(pieces) and len({len(p) for p in pieces}) == 1:
            return [call_id, *(head.group() + piece for piece in pieces)]
    return [call_id]


def _calls_only(message: NormMessage) -> bool:
    return message[0] == "assistant" and all(p[0] is PartType.TOOL_CALL for p in message[1])


def _asks_only(messages: Iterable[Message]) -> bool:
    asks = False
    for m in messages:
        for p in m.parts:
            if p.type is PartType.TOOL_CALL:
                asks = True
            elif p.type is not PartType.OTHER and (p.text or "").strip():
                return False
    return asks


def _has_user(walked: Sequence[_Prefix]) -> bool:
    return any(n.last is not None and n.last[0] == "user" for n in walked)


def normalize(messages: Iterable[Message]) -> tuple[NormMessage, ...]:
    """Messages reduced to what any two captures of them agree on (for history matching):
    no system messages, no empty text or non-content parts; call ids kept, so two runs of
    the same script with fresh ids stay apart."""
    return tuple(n.last for n in _walk(messages, _root())[1:] if n.last is not None)


def says_nothing(messages: Iterable[Message]) -> bool:
    """Whether the messages normalize to nothing (`normalize`): a history they end adds
    nothing to the input before them."""
    return all(_normalize_message(m) is None for m in messages)


def _normalize_message(m: Message) -> NormMessage | None:
    if m.role == "system":
        return None
    parts: list[NormPart] = []
    for p in m.parts:
        # A StrEnum is its value: `p.type` is written as the string.
        if p.type is PartType.TOOL_CALL:
            parts.append((p.type, None, p.call_id, p.name, p.arguments))
        elif p.type is not PartType.OTHER:
            text = (p.text or "").strip()
            if text or p.type is PartType.TOOL_RESULT:  # empty text says nothing
                parts.append((p.type, text, p.call_id, None, None))
    return (m.role, tuple(parts)) if parts else None


class _Prefix(Struct, gc=False):
    """A normalized history prefix: its last message normalized (None: the empty history,
    whose next message is written without a comma) and the running hash of its JSON
    array, still open (`[m1,m2`), as `orjson.dumps(normalize(...))` spells it; its key and
    gap key once asked for; a replayed request's keys where it is one (`_replayed_keys`);
    and the prefixes that extend it by one message, by that message's id (the message held so the
    id stays its; None where it normalizes to nothing, so the prefix is this one).

    A call's input is the previous call's input plus what followed, with the same Message
    objects (the decoder's memos): a history is hashed on from the prefix it extends, so
    each message is normalized and hashed once per history it is in, not once per call
    that repeats it. A tree without cycles: its nodes are untracked, but their `next` dicts
    and tuples are not, so the passes that grow it (`join_keys`, `span_links`, assembly's
    grouping) run with the collector paused (`decode.collector_paused`)."""

    running: hashlib._Hash
    last: NormMessage | None
    closed: str | None = None
    gapped: str | None = None
    asked: tuple[str, ...] | None = None
    next: dict[int, tuple[Message, _Prefix | None]] = {}

    def key(self) -> str:
        """The hash of the closed array (`[m1,m2]`)."""
        if self.closed is None:
            closed = self.running.copy()
            closed.update(b"]")
            self.closed = closed.hexdigest()[:32]
        return self.closed

    def gap_key(self) -> str:
        """The hash of this prefix, then a gap (`[m1,m2,["assistant",[]]]`)."""
        if self.gapped is None:
            gapped = self.running.copy()
            gapped.update((_GAP if self.last is None else b"," + _GAP) + b"]")
            self.gapped = gapped.hexdigest()[:32]
        return self.gapped

    def key_with(self, message: bytes) -> str:
        """The hash of this prefix, then `message` (JSON), closed."""
        running = self.running.copy()
        running.update((message if self.last is None else b"," + message) + b"]")
        return running.hexdigest()[:32]

    def extended(self, m: Message) -> _Prefix:
        """This prefix with `m` (itself when `m` normalizes to nothing)."""
        hit = self.next.get(id(m))
        if hit is not None and hit[0] is m:
            return hit[1] or self
        norm = _normalize_message(m)
        child = None
        if norm is not None:
            running = self.running.copy()
            piece = orjson.dumps(norm)
            running.update(piece if self.last is None else b"," + piece)
            child = _Prefix(running, norm)
        global _PREFIXES
        _PREFIXES += 1
        self.next[id(m)] = (m, child)
        return child or self


def _root() -> _Prefix:
    """The empty history."""
    return _ROOT


def _bound(decoded: Sequence[Span]) -> None:
    """All prefixes dropped once `_PREFIXES_SIZE` were made, as a pass over a new batch
    begins (one whose first span is not the last pass's)."""
    global _ROOT, _PREFIXES, _FIRST
    first = decoded[0] if decoded else None
    if first is _FIRST:
        return
    _FIRST = first
    if _PREFIXES >= _PREFIXES_SIZE:
        _ROOT, _PREFIXES = _Prefix(hashlib.sha256(b"["), None), 0


def _walk(
    messages: Iterable[Message], start: _Prefix, found: list[Gap] | None = None
) -> list[_Prefix]:
    """`start` and each distinct prefix after it that `messages` make, in order; and the
    gaps among them, into `found` when given."""
    out = [start]
    node = start
    gap: _Prefix | None = None  # before an assistant message replayed empty
    asked: tuple[_Prefix, _Prefix] | None = None  # a replayed request for tools, and before
    for m in messages:
        child = node.extended(m)
        if child is node:
            if found is not None and m.role == "assistant":
                gap = node
            continue
        last = child.last
        if found is not None and last is not None and (gap is not None or asked is not None):
            results = [p for p in last[1] if p[0] is PartType.TOOL_RESULT]
            if results and _has_user(out):
                if gap is not None:
                    answers = frozenset(p[2] for p in results if p[2])
                    found.append(Gap(len(out) - 1, gap.gap_key(), answers))
                if asked is not None:
                    found += [Gap(len(out) - 2, key, None) for key in _replayed_keys(*asked)]
        gap = None
        calls_only = found is not None and last is not None and _calls_only(last)
        asked = (node, child) if calls_only else None
        out.append(child)
        node = child
    return out


_GAP = orjson.dumps(("assistant", ()))
"""The gap marker: `_normalize_message` never yields a message without parts."""


_ROOT = _Prefix(hashlib.sha256(b"["), None)
_FIRST: Span | None = None
_PREFIXES = 0
_PREFIXES_SIZE = 16_384
"""Prefixes made since the last drop. Chat spans share their history's Message objects,
so one conversation's calls walk one path, and each of the several passes over a batch's
calls (join keys, grouping, stored links) walks what the first hashed. So the tree is
dropped only as a pass over a list of spans other than the last one's begins (`_bound`),
never inside a pass: held are at most this many prefixes and one batch's (~11k per 8,000
bench spans, ~0.5 KB each). A batch is recognised by its list's first span, which
assembly's grouping and the re-solve of linked partitions do not always pass first: there
a drop between two passes over one batch costs only hashing it again, never a wrong key
(a node's hash depends on its messages alone)."""
