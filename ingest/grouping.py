"""Which spans belong together: the span forest, conversations, and turn segments.

Helpers for `turnscore.ingest.assemble`. The algorithm, in order:

1. **Deduplicate** spans by (trace id, span id): exports repeat batches. Of two copies the
   later-ending, then richer one wins, so the choice does not depend on input order.
   A span whose parent never arrived (a batch processor's full queue, an exporter's lost
   batch, a span processor that filters spans out) is **adopted** by the deepest span of
   its trace that encloses it in time and is no model call (`adopt_orphans`): every span
   of a trace descends from its root, so the lost parent sat below some span that encloses
   it, and the deepest such one is the nearest ancestor left, or a span beside it at the
   same depth (parallel tools: either is below the same run). Else a dropped agent step or
   task split its turn where the orphan's calls lost the run above them. The turn still
   says a parent never arrived (`Forest.missing_parent`).
2. **Model calls** are *leaf* LLM spans (no LLM span below them): some stacks nest a
   framework model span over the client's, and both repeat the same request.
   A model call below a TOOL span is a sub-agent's call (agent used as a tool): it counts
   for usage but does not segment turns or request calls of the turn. Unless every model
   call of its trace is below one: then the run itself was called as a tool by something
   the export does not hold (a tool server whose caller's trace went elsewhere, a function
   traced as a tool around an agent), and those outermost tool spans are the run's
   **frame**, neither calls of its turns nor a sub-agent boundary; else the run's calls
   would make no turn and nothing would say so. So is one below a
   **delegated run** (`delegated_runs`): an agent span nested in another agent's run, after
   a model call of that run's own, and given a task of its own (its first model call's
   newest user message is not the one that call answered): smolagents' managed agents
   (`MultiStepAgent.__call__` runs the sub-agent on a templated task, and OpenInference's
   smolagents instrumentation wraps every `run` as an AGENT span, no TOOL span between).
   An agent handed the same user message (ADK's `transfer_to_agent`, nested under the
   agent that transferred) runs the same turn.
3. **Conversation id** of a span: its own, else its nearest ancestor's, else the only one
   its trace carries. Traces with an id group by it; traces without one start as their own
   group and are then chained **by history**: the group's first model call joins the group
   of an earlier call whose input + output is the longest prefix of its input (system
   messages, empty text and non-content parts ignored; call ids compared, so two runs of
   the same script with fresh ids stay apart; a history without user text, content
   capture off, only where it names a call id drawn at random: `_drawn_ids`); of several
   alike (runs at once), one that had ended, continued the fewest times, latest
   (`_HistoryIndex.predecessor`). An
   assistant message replayed without its content, then tool results, stands for an earlier
   call's output that asked for tools and said nothing (`links`: the gap rule; LiteLLM's
   older OTel callback drops the tool calls it replays), in traces that name no
   conversation; so does a replayed request for tools sharing one call with an earlier
   output that asked for tools (`links`: requests recorded wrong, a streamed output's last
   chunk or its merged parallel calls). A trace that names no conversation and
   **continues** another by a span link (`Span.continues`: an in-process agent runtime's
   message from one agent's run to the next, OTel messaging) joins that trace's group
   instead of chaining by history, and the traces such links join are one run (rule 4).
4. **Turns**: the conversation's main-line model calls, in start order, split where the
   newest genuine user message changes (its text, or a larger count of genuine user
   messages: a repeated identical request in replayed history is still a new turn), and
   where a call falls in another agent-run trace (a trace with an agent span) than the
   previous one, of another run: agent frameworks give one trace per run, even when they
   replay no history.
   A call whose input was not captured stays in the current turn.
5. **Orchestrated runs.** A call's newest user message is the request of the run it works
   for, unless a span above it that is not a model call (the orchestration's own span, or
   the agent run's) was given a genuine user message whose text the call's contains and
   differs from: then the orchestrator built the call's prompt from that request, and the
   outermost such span's message is the call's request for rule 4. Node agents of a
   multi-agent orchestration each get a built prompt (strands-agents/sdk-python
   `multiagent/swarm.py` `_build_node_input`: `Context:` ... `User Request: <task>`;
   `multiagent/graph.py`: the task, or `Original Task: <task>` and the previous nodes'
   outputs), below the orchestration's span that holds the task as its user message
   (`telemetry/tracer.py` `start_multiagent_span`: `invoke_swarm` / `invoke_graph`): one
   turn, not one per node. A span given another request (a later turn's agent run) does
   not contain it, so it stays apart; nor does a request the call's input holds as an
   earlier user message of its own (a session's first turn, on the span around the
   session: the call continues that conversation, it was not built from it).
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from msgspec.structs import replace

from turnscore.ingest.links import (
    JoinKeys,
    NormMessage,
    call_gap_keys,
    components,
    gap_history_key,
    gaps,
    history_key,
    normalize,
    prefix_keys,
    says_nothing,
)
from turnscore.ingest.model import Message, Span, SpanKind
from turnscore.ingest.records import InputError

log = logging.getLogger(__name__)

SpanKey = tuple[str, str]
"""(trace id, span id): span ids are unique only within a trace."""


def key_of(span: Span) -> SpanKey:
    return (span.trace_id, span.span_id)


def _order(span: Span) -> tuple[int, str, str]:
    return (span.start_unix_nano, span.trace_id, span.span_id)


def dedupe(spans: Iterable[Span]) -> tuple[list[Span], list[InputError]]:
    """One span per (trace, span id), in start order; conflicting copies are reported."""
    best: dict[SpanKey, Span] = {}
    errors: list[InputError] = []
    for span in spans:
        k = key_of(span)
        other = best.get(k)
        if other is None:
            best[k] = span
            continue
        if other == span:
            continue
        ranks = _richness(other), _richness(span)
        keep, drop = (span, other) if ranks[1] > ranks[0] else (other, span)
        best[k] = keep
        if ranks[0][:2] == ranks[1][:2]:
            errors.append(
                InputError(
                    source=drop.source or keep.source,
                    position=f"span {span.span_id}",
                    message="the same span id arrived twice with different content; "
                    f"kept the copy from {keep.source or 'unknown source'}",
                    span_id=span.span_id,
                    trace_id=span.trace_id,
                )
            )
    return sorted(best.values(), key=_order), errors


def adopt_orphans(spans: list[Span]) -> tuple[list[Span], dict[SpanKey, str]]:
    """`spans` (one per key, from `dedupe`) with each span whose parent never arrived
    adopted (rule 1), and each adopted span's key -> the parent id it named.

    The children of one lost parent are adopted together, by a span enclosing them all
    (as the lost parent did) that is none of them nor below them: a lost agent step's
    parallel tool calls are not taken for one another's sub-calls, though the longest
    encloses the others."""
    by_key = {key_of(s): s for s in spans}
    lost: dict[SpanKey, list[Span]] = defaultdict(list)  # a lost parent -> its children
    for s in spans:
        if s.parent_span_id is not None and (up := (s.trace_id, s.parent_span_id)) not in by_key:
            lost[up].append(s)
    if not lost:
        return spans, {}
    in_trace: dict[str, list[Span]] = defaultdict(list)
    for s in spans:
        if s.kind is not SpanKind.LLM and s.end_unix_nano > s.start_unix_nano:
            in_trace[s.trace_id].append(s)
    chains: dict[SpanKey, list[SpanKey]] = {}

    def chain(s: Span) -> list[SpanKey]:
        """`s` and its ancestors as they arrived, nearest first (a cycle ends it)."""
        if (keys := chains.get(key_of(s))) is None:
            keys = chains[key_of(s)] = [key_of(s)]
            while (s.parent_span_id is not None
                   and (up := (s.trace_id, s.parent_span_id)) in by_key and up not in keys):
                keys.append(up)
                s = by_key[up]
        return keys

    adopted: dict[SpanKey, Span] = {}
    named: dict[SpanKey, str] = {}
    for (trace_id, parent_id), children in lost.items():
        start = min(c.start_unix_nano for c in children)
        end = max(c.end_unix_nano for c in children)
        theirs = {key_of(c) for c in children}
        fits = [(len(chain(c)), c.start_unix_nano, c.span_id, c) for c in in_trace[trace_id]
                if c.start_unix_nano <= start and end <= c.end_unix_nano
                and theirs.isdisjoint(chain(c))]
        if fits:
            adopter = max(fits, key=lambda f: f[:3])[3]
            for c in children:
                adopted[key_of(c)] = replace(c, parent_span_id=adopter.span_id)
                named[key_of(c)] = parent_id
    return [adopted.get(key_of(s), s) for s in spans], named


def _richness(span: Span) -> tuple[int, int, str]:
    text = span.attributes.json()  # built here only: copies that differ are rare
    return (span.end_unix_nano, len(text), text)


class Forest:
    """Parent/child navigation over one set of spans, given in start order (as `dedupe`
    gives them). What each span's ancestors say of it is found once, here, in one pass:
    assembly asks it several times per span."""

    def __init__(self, spans: Sequence[Span], orphans: Mapping[SpanKey, str] | None = None) -> None:
        self.spans = list(spans)
        self._orphans = orphans or {}
        """Adopted spans -> the parent id they named (`adopt_orphans`)."""
        self.by_key: dict[SpanKey, Span] = {key_of(s): s for s in self.spans}
        self.agent_traces = {s.trace_id for s in self.spans if s.kind is SpanKind.AGENT}
        """Traces of agent runs (one run per trace in agent frameworks)."""
        self.continues = linked(self.spans)
        """Trace -> the trace it continues by a span link (rule 3)."""
        self._runs = runs(self.spans, self.continues)
        self._ancestors: dict[SpanKey, tuple[Span, ...]] = {}
        self.under_tool: set[SpanKey] = set()
        """Spans with a TOOL span above them, frames not counted (rule 2)."""
        self.frames: set[SpanKey] = set()
        """TOOL spans that frame their trace's whole run (rule 2)."""
        self.under_agent: set[SpanKey] = set()
        """Spans with an AGENT span above them."""
        self._has_llm_below: set[SpanKey] = set()
        self._below: dict[SpanKey, list[Span]] = defaultdict(list)
        tools_above: dict[SpanKey, int] = {}
        for s in self.spans:
            k = key_of(s)
            chain: list[Span] = []
            seen = {k}
            cur = self.parent(s)
            while cur is not None and (up := key_of(cur)) not in seen:  # a cycle ends here
                chain.append(cur)
                seen.add(up)
                if cur.kind is SpanKind.TOOL:
                    tools_above[k] = tools_above.get(k, 0) + 1
                elif cur.kind is SpanKind.AGENT:
                    self.under_agent.add(k)
                if s.kind is SpanKind.LLM:
                    self._has_llm_below.add(up)
                cur = self.parent(cur)
            self._ancestors[k] = tuple(chain)
            if chain:
                self._below[key_of(chain[-1])].append(s)
        self._frame(tools_above)

    def _frame(self, tools_above: dict[SpanKey, int]) -> None:
        """`under_tool` and `frames` from each span's count of TOOL spans above it: in a
        trace whose every model call has some, the fewest any has are frames."""
        framed: dict[str, int] = {}  # trace -> TOOL spans above its least-nested model call
        for s in self.spans:
            if self.is_leaf_model_call(s):
                n = tools_above.get(key_of(s), 0)
                framed[s.trace_id] = min(framed.get(s.trace_id, n), n)
        for k, n in tools_above.items():
            if n > framed.get(k[0], 0):
                self.under_tool.add(k)
        for s in self.spans:
            k = key_of(s)
            if (s.kind is SpanKind.TOOL and k in self._has_llm_below
                    and tools_above.get(k, 0) < framed.get(s.trace_id, 0)):  # fmt: skip
                self.frames.add(k)

    def run(self, trace_id: str) -> str:
        """The run `trace_id` is part of (`runs`)."""
        return self._runs.get(trace_id, trace_id)

    def parent(self, span: Span) -> Span | None:
        if span.parent_span_id is None:
            return None
        return self.by_key.get((span.trace_id, span.parent_span_id))

    def ancestors(self, span: Span) -> tuple[Span, ...]:
        """Nearest first, up to the topmost ancestor that arrived."""
        return self._ancestors[key_of(span)]

    def root(self, span: Span) -> Span:
        chain = self.ancestors(span)
        return chain[-1] if chain else span

    def missing_parent(self, span: Span) -> str | None:
        """Id of the parent on the way up that never arrived, if any."""
        if self._orphans:
            for s in (span, *self.ancestors(span)):
                if (lost := self._orphans.get(key_of(s))) is not None:
                    return lost
        top = self.root(span)
        if top.parent_span_id is not None and (top.trace_id, top.parent_span_id) not in self.by_key:
            return top.parent_span_id
        return None

    def below(self, root: Span) -> list[Span]:
        """The spans whose topmost ancestor is `root` (every span below it, when it is a
        root: no cycle runs through a span without a parent), in start order."""
        return self._below.get(key_of(root), [])

    def is_leaf_model_call(self, span: Span) -> bool:
        return span.kind is SpanKind.LLM and key_of(span) not in self._has_llm_below


def linked(spans: Sequence[Span]) -> dict[str, str]:
    """Trace -> the trace it continues by a span link (`Span.continues`), for the traces
    that name no conversation of their own: only those are grouped by it (rule 3)."""
    with_id = {s.trace_id for s in spans if s.conversation_id}
    return {s.trace_id: s.continues for s in spans if s.continues and s.trace_id not in with_id}


def runs(spans: Sequence[Span], continues: Mapping[str, str]) -> dict[str, str]:
    """Each trace a span link joins to another (`continues`, from `linked`) -> its run, named
    after the first of the traces the links join, directly or through others, in `spans`'
    order (one name for a malformed cycle too). A union-find: a long chain costs its length
    once, not once per trace."""
    if not continues:
        return {}
    order: dict[str, int] = {}
    for s in spans:
        order.setdefault(s.trace_id, len(order))
    parent: dict[str, str] = {}

    def find(t: str) -> str:
        parent.setdefault(t, t)
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    def rank(t: str) -> tuple[int, str]:
        return (order.get(t, len(order)), t)  # a trace not in the batch after those that are

    for trace, sender in continues.items():
        a, b = find(trace), find(sender)
        if a != b:
            first, last = sorted((a, b), key=rank)
            parent[last] = first
    return {t: find(t) for t in list(parent)}


def delegated_runs(forest: Forest, calls: Sequence[Span]) -> set[SpanKey]:
    """Keys of the spans at or below a delegated run (rule 2), given the main-line leaf
    model calls in start order."""
    nearest: dict[SpanKey, list[Span]] = defaultdict(list)  # agent -> its own model calls
    first: dict[SpanKey, Span] = {}  # agent -> the first model call at any depth below it
    for c in calls:
        agents = [a for a in forest.ancestors(c) if a.kind is SpanKind.AGENT]
        if agents:
            nearest[key_of(agents[0])].append(c)
        for a in agents:
            first.setdefault(key_of(a), c)
    runs: list[Span] = []
    for key in first:
        run = forest.by_key[key]
        opening = newest_user(first[key].input_messages) if key in forest.under_agent else None
        if opening is None:
            continue
        for outer in forest.ancestors(run):
            own = nearest.get(key_of(outer), ())
            before = [c for c in own if c.start_unix_nano <= run.start_unix_nano]
            asked = newest_user(before[-1].input_messages) if before else None
            if asked is not None and asked[1].text.strip() != opening[1].text.strip():
                runs.append(run)
                break
    if not runs:
        return set()
    found = {key_of(r) for r in runs}
    below = (s for s in forest.spans if any(key_of(a) in found for a in forest.ancestors(s)))
    return found | {key_of(s) for s in below}


# --- conversations ---------------------------------------------------------------


def newest_user(messages: Sequence[Message] | None) -> tuple[int, Message] | None:
    """(count of genuine user messages, the newest one), or None."""
    if not messages:
        return None
    # The role first: most messages are the assistant's or tools', and the property is dear.
    genuine = [m for m in messages if m.role == "user" and m.is_genuine_user]
    return (len(genuine), genuine[-1]) if genuine else None


@dataclass(slots=True)
class Conversation:
    conversation_id: str
    traces: list[str]
    calls: list[Span] = field(default_factory=list)
    """Main-line leaf model calls, in start order."""


def group_conversations(forest: Forest, calls: Sequence[Span]) -> list[Conversation]:
    """Conversations over every trace, each with its main-line model calls."""
    traces = list(dict.fromkeys(s.trace_id for s in forest.spans))  # by their first start
    own: dict[str, str] = {}  # trace -> its group: "c:" + conversation id, or "t:" + itself
    for s in forest.spans:  # a trace's group takes its first span's own or inherited id:
        if s.trace_id in own:  # where rule 3 would give one its trace's only id, it is that
            continue
        up = (a.conversation_id for a in forest.ancestors(s) if a.conversation_id)
        if cid := s.conversation_id or next(up, None):
            own[s.trace_id] = "c:" + cid
    joins = {t: {own.setdefault(t, "t:" + t)} for t in traces}
    # A trace joins one group at most, so that a group holds one conversation id at most: by
    # its link, else by history (below).
    for trace, sender in forest.continues.items():
        if own[trace].startswith("t:"):
            joins[trace].add(own.get(sender, "t:" + sender))
    first_calls: dict[str, Span] = {}
    for c in calls:
        first_calls.setdefault(c.trace_id, c)
    history: _HistoryIndex | None = None  # built on first need: most traces carry an id
    for trace, call in first_calls.items():
        if own[trace].startswith("c:") or call.input_messages is None:
            continue
        if trace in forest.continues:
            continue
        history = history or _HistoryIndex(calls, forest)
        prev = history.predecessor(call)
        if prev is not None:
            joins[trace].add(own[prev.trace_id])
    group = components({t: JoinKeys(conversations=frozenset(keys)) for t, keys in joins.items()})
    convs: dict[str, Conversation] = {}
    for trace in traces:
        conv = convs.setdefault(group[trace], Conversation(group[trace], []))
        conv.traces.append(trace)
        if own[trace].startswith("c:"):  # at most one id per group: only "t:" groups chain
            conv.conversation_id = own[trace][2:]
    for c in calls:
        convs[group[c.trace_id]].calls.append(c)
    return list(convs.values())


_DRAWN_ID = 12
"""Characters a call id has at least where a provider drew it at random (OpenAI's
`call_` + 24, Anthropic's `toolu_` + 24, a UUID); a framework's made-up ids (`call_0`, a
tool's name) are shorter, and alike in every run."""


def _drawn_ids(history: Sequence[NormMessage]) -> bool:
    """Whether a normalized history names a call by an id drawn at random: then it is its
    conversation's own even where no user text was captured (content capture off, the
    default of the OTel GenAI instrumentations, leaves the ids: `otel_genai._uncaptured`),
    and a later call replaying it continues it. A history of nothing but words no capture
    kept would meet every other conversation's, so it is not indexed."""
    return any(len(part[2] or "") >= _DRAWN_ID for _, parts in history for part in parts)


class _HistoryIndex:
    """Model calls by the history they leave behind (`history_key`; `gap_history_key` and
    `call_gap_keys` for the calls of traces that name no conversation, as `links` stores
    them), for prefix lookups."""

    def __init__(self, calls: Sequence[Span], forest: Forest) -> None:
        self._by_history: dict[str, list[Span]] = defaultdict(list)
        self._by_gap: dict[str, list[Span]] = defaultdict(list)
        self._silent: set[SpanKey] = set()
        """Calls whose output normalizes to nothing: their history is their input."""
        self._continued: Counter[SpanKey] = Counter()
        """How many continuations `predecessor` has given each call."""
        with_id = {s.trace_id for s in forest.spans if s.conversation_id}
        for c in calls:
            if c.input_messages is None:
                continue
            unnamed = c.trace_id not in with_id
            # A call whose output was not captured may be the one a gap stands for: it
            # has that history side (`gap_history_key`), and no other.
            if unnamed and (gap := gap_history_key(c)) is not None:
                self._by_gap[gap].append(c)
            if c.output_messages is None:
                continue
            after = normalize((*c.input_messages, *c.output_messages))
            if any(role == "user" for role, _ in after) or _drawn_ids(after):
                self._by_history[history_key(c) or ""].append(c)
                if says_nothing(c.output_messages):
                    self._silent.add(key_of(c))
            if unnamed:
                for key in call_gap_keys(c):  # each names its call: matched as histories
                    self._by_history[key].append(c)

    def predecessor(self, call: Span) -> Span | None:
        """The latest earlier call, in another trace, whose history is the longest prefix
        of this call's input, a gap standing for the output of the call it continues
        (`links`: the gap rule) where the tool results after it name none of that
        output's calls' ids only, or a replayed request sharing a call with that output
        (`links`: requests recorded wrong). Called in start order, it marks the call it
        returns as continued.

        Only a call of the same service: an agent continues its own conversations, and
        two agents asked the same thing at once (an evaluation running one task set
        through several frameworks) are two. The keys leave the service out, so that keys
        stored before still find and are found; partitions and store lookups joined by
        them may bring in another service's traces, which cost time, never a turn.

        Two rules keep conversations that run at once apart where their histories are
        alike (users asking the same thing of one deterministic agent, an evaluation
        running a case several times in parallel), which is where a call's output lost
        its ids or never had any: a call sent exactly the input of an earlier call whose
        output says nothing, before that call ended, reading as many tokens or after
        another call continued it, is that prompt sent again, not its continuation; and of
        the earlier calls it may continue, a call takes one that had ended when it started
        (it holds its output), then one continued the fewest times yet (a history continued
        twice, a retried or regenerated step, still is; a call whose output was not
        captured leaves the call before it to be continued again, by the next turn), then
        the latest. A span that ends late (a stream's, ended when its wrapper is dropped)
        is still taken when nothing else fits."""
        # A history through a gap at n is n + 1 messages long, the output in the gap.
        found: list[tuple[int, str, frozenset[str] | None]] = [
            (n + 1, key, None) for n, key in enumerate(prefix_keys(call))
        ]
        whole = len(found)
        found += [(g.at + 1, g.key, g.answers) for g in gaps(call)]
        for length, key, answers in sorted(found, key=lambda f: (f[0], f[2] is None),
                                           reverse=True):
            index = self._by_history if answers is None else self._by_gap
            resent = answers is None and length == whole
            earlier = [
                c for c in index.get(key, ())
                if _order(c) < _order(call) and c.trace_id != call.trace_id
                and c.service_name == call.service_name
                and (answers is None or _answered(c, answers))
                and not (resent and key_of(c) in self._silent
                         and (key_of(c) in self._continued or _resent(call, c)))
            ]
            if earlier:
                prev = max(earlier, key=lambda c: (
                    c.end_unix_nano <= call.start_unix_nano,
                    -self._continued[key_of(c)],
                    _order(c),
                ))
                self._continued[key_of(prev)] += 1
                return prev
        return None


def _resent(call: Span, earlier: Span) -> bool:
    """Whether `call`, recorded with the input of `earlier` (whose output says nothing),
    is that prompt sent again: it started before `earlier` ended, so it cannot hold its
    output, or it read as many tokens, as the same prompt does. A recording can make
    different prompts look alike: OpenLIT's Bedrock keeps only the text of each message,
    so the call that answers a tool's result looks sent the same prompt, and reads more;
    a DSPy module's prompt is its template around the question, which the convention
    reduces to the question, and another module's template reads otherwise. Unknown
    counts say nothing."""
    if call.start_unix_nano < earlier.end_unix_nano:
        return True
    said, then = call.input_tokens, earlier.input_tokens
    return said is not None and said == then


def _answered(call: Span, answers: frozenset[str]) -> bool:
    """Whether the tool results after a gap may answer `call`'s output: ids compared where
    both name them, so two runs of one script with fresh ids stay apart."""
    asked = {p.call_id for m in call.output_messages or () for p in m.tool_calls if p.call_id}
    return not asked or not answers or bool(asked & answers)


# --- turns -----------------------------------------------------------------------


@dataclass(slots=True)
class Segment:
    """The main-line model calls of one turn, and the message that started it."""

    calls: list[Span]
    request: Message | None
    user_count: int
    text: str = ""
    """The request's text, stripped: each later call of the turn compares its own with it."""


def segment_turns(forest: Forest, calls: Sequence[Span]) -> list[Segment]:
    segments: list[Segment] = []
    asked: dict[SpanKey, tuple[int, Message] | None] = {}  # span -> its newest user message
    for call in calls:
        newest = _request_of(forest, call, asked)
        cur = segments[-1] if segments else None
        if cur is None or _starts_turn(cur, call, newest, forest):
            count, msg = newest if newest else (0, None)
            text = msg.text.strip() if msg else ""
            segments.append(Segment(calls=[call], request=msg, user_count=count, text=text))
            continue
        cur.calls.append(call)
        if cur.request is None and newest is not None:
            cur.user_count, cur.request = newest
            cur.text = cur.request.text.strip()
    return segments


def _request_of(
    forest: Forest, call: Span, asked: dict[SpanKey, tuple[int, Message] | None]
) -> tuple[int, Message] | None:
    """The call's newest genuine user message, or the request its prompt was built from
    (rule 5): the outermost non-model span above it whose own user message the call's
    contains."""
    newest = newest_user(call.input_messages)
    if newest is None:
        return None
    own = None  # joined only when some span above has a user message: most have none
    for outer in reversed(forest.ancestors(call)):
        if outer.kind is SpanKind.LLM or outer.input_messages is None:
            continue
        k = key_of(outer)
        if k not in asked:
            asked[k] = newest_user(outer.input_messages)
        given = asked[k]
        text = given[1].text.strip() if given else ""
        if not text:
            continue
        own = newest[1].text.strip() if own is None else own
        if text != own and text in own and not _said_before(call, newest[1], text):
            return given
    return newest


def _said_before(call: Span, newest: Message, text: str) -> bool:
    """Whether the user said `text` earlier in the call's input: then it was a turn of the
    conversation the call continues, not a task the call's prompt was built from."""
    return any(
        m is not newest and m.role == "user" and m.text.strip() == text
        for m in call.input_messages or ()
    )


def _starts_turn(
    cur: Segment, call: Span, newest: tuple[int, Message] | None, forest: Forest
) -> bool:
    prev = cur.calls[-1]
    if (prev.trace_id != call.trace_id and call.trace_id in forest.agent_traces
            and forest.run(prev.trace_id) != forest.run(call.trace_id)):  # fmt: skip
        return True
    if newest is None or cur.request is None:
        return False
    count, msg = newest
    return msg.text.strip() != cur.text or count > cur.user_count
