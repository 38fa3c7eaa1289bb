"""Turns of plain OTel GenAI agent runs, straight from their spans (the direct path of ingest).

Most agent traffic has one shape, the one the OTel GenAI semantic conventions describe for
agents: a trace per run, an `invoke_agent` root span naming the conversation, and as its
children the run's `chat` model calls (each carrying the conversation so far), its
`execute_tool` spans and spans without GenAI content. Such a run is one turn, and a
conversation is its runs in time order.

`find_runs` picks out the traces of that shape and decodes each span only for what a turn
reads; of a run's model-call inputs it decodes only the first and the last into messages:
each input is the one before plus what followed, so a middle one is a slice of the last.
That is checked on the text (the shorter JSON array is a prefix of the longer, up to an
element boundary), not assumed; a middle input is only parsed to count its elements.
`assemble_runs` then builds the turns without the general grouping.

The result is what `decode_spans` + `assemble_turns` give for the same spans (the tests hold
both paths to identical turns): a trace is taken only when every condition that makes the
shortcut exact holds, and anything else (other conventions, events, nesting, a run that
starts a second turn, content that decodes with a problem) is left to the general path.
The caller decides which traces may go this way at all (new ones, no log records, a
conversation nothing else in the batch or the store belongs to).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import orjson

from turnscore.ingest import attributes as A
from turnscore.ingest.assemble import Run, assemble_runs
from turnscore.ingest.conventions import otel_genai
from turnscore.ingest.conventions.base import Decoded, SpanView
from turnscore.ingest.conventions.messages import system_text
from turnscore.ingest.conventions.values import SYNTHETIC_TOOL_NAMES, as_str
from turnscore.ingest.decode import CONVENTIONS, attributes_json, build_span, conversation_id
from turnscore.ingest.grouping import newest_user
from turnscore.ingest.links import SpanLinks, history_key
from turnscore.ingest.model import Span, SpanKind, ToolDef, ToolExecution
from turnscore.ingest.records import AttrValue, RawSpan
from turnscore.ingest.turn import Turn

__all__ = [
    "Conversations",
    "DirectConversation",
    "find_runs",
    "fits",
    "solve",
]

Conversations = dict[str, list[Run]]
"""Conversation id -> its runs in order."""


@dataclass(frozen=True, slots=True)
class DirectConversation:
    """A conversation the direct path assembled: what the caller stores and checks."""

    traces: frozenset[str]
    turns: tuple[Turn, ...]
    links: tuple[tuple[tuple[str, str], SpanLinks], ...]
    """What `span_links` would store for its spans, by (trace id, span id)."""
    histories: frozenset[str]
    """`history_key` of each model call, when asked for: a trace without a conversation id
    that continues one of them would join the conversation on the general path."""


def solve(
    traces: Iterable[Sequence[RawSpan]],
    *,
    case_id_attribute: str | None,
    ingest_id: str,
    histories: bool = False,
) -> dict[str, DirectConversation]:
    """`find_runs`, then each conversation's turns (`assemble_runs`) and links, and with
    `histories` its model calls' history keys. Pure, so shares of the conversations may
    be solved in other processes."""
    out: dict[str, DirectConversation] = {}
    for cid, runs in find_runs(traces, case_id_attribute=case_id_attribute).items():
        # As `span_links` stores them: the conversation id (none for a conversation named
        # after its trace) and each model call's history key.
        named = SpanLinks(conversation_id=cid)
        steps = {(s.trace_id, s.span_id): history_key(s) for r in runs for s in r.steps}
        links = []
        for r in runs:
            conversation = cid if r.root.trace_id != cid else None
            for s in (r.root, *r.steps, *r.tools, *r.others):
                key = (s.trace_id, s.span_id)
                found = steps.get(key)
                if found is not None:
                    links.append((key, SpanLinks(conversation_id=conversation, history_key=found)))
                elif conversation is not None:
                    links.append((key, named))
        out[cid] = DirectConversation(
            traces=frozenset(r.root.trace_id for r in runs),
            turns=tuple(assemble_runs(cid, runs, ingest_id=ingest_id)),
            links=tuple(links),
            histories=frozenset(k for k in steps.values() if k is not None) if histories
            else frozenset(),
        )
    return out


_OTEL = otel_genai.NAME
_READ = frozenset({
    A.GEN_AI_INPUT_MESSAGES, A.GEN_AI_OUTPUT_MESSAGES, A.GEN_AI_SYSTEM_INSTRUCTIONS,
    A.GEN_AI_TOOL_DEFINITIONS, A.GEN_AI_TOOL_CALL_ARGUMENTS, A.GEN_AI_TOOL_CALL_RESULT,
})  # fmt: skip
"""The OTel GenAI content keys this path decodes (`otel_genai.current`, `tool_execution`)."""
_FORBIDDEN = (frozenset(otel_genai.CONTENT_KEYS) - _READ) | {A.VERCEL_OPERATION_ID}
"""OTel GenAI content this path does not decode (the deprecated whole-prompt keys), and a
key another convention is detected by by value."""
_NOT_ON_ROOT = frozenset({A.GEN_AI_INPUT_MESSAGES, A.GEN_AI_OUTPUT_MESSAGES})
"""Content that would make the root, or a tool span, decode another way."""


def find_runs(
    traces: Iterable[Sequence[RawSpan]], *, case_id_attribute: str | None = None
) -> Conversations:
    """The conversations whose every given trace is a run of the plain shape, decoded.

    Each item of `traces` is every span of one trace. A conversation with one trace that
    does not fit is left out whole: its turns depend on all its traces.
    """
    found: dict[str, list[Run]] = {}
    misfits: set[str] = set()
    for spans in traces:
        run = _run(spans, case_id_attribute)
        if run is None:
            root = next((s for s in spans if s.parent_span_id is None), None)
            cid = conversation_id(root.attributes) if root is not None else None
            misfits.add(cid or "")
            continue
        found.setdefault(run[0], []).append(run[1])
    out: Conversations = {}
    for cid, runs in found.items():
        if cid in misfits:
            continue
        runs.sort(key=lambda r: (r.steps[0].start_unix_nano, r.root.trace_id, r.steps[0].span_id))
        # Runs that overlap in time interleave their model calls, which the general
        # grouping would split into more turns.
        if all(
            a.steps[-1].start_unix_nano < b.steps[0].start_unix_nano
            for a, b in pairwise(runs)
        ):
            out[cid] = runs
    return out


# --- one trace ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Shape:
    root: RawSpan
    chats: list[RawSpan]
    tools: list[RawSpan]
    others: list[RawSpan]


def fits(spans: Sequence[RawSpan]) -> str | None:
    """The conversation id of a trace of the plain shape, whose spans name no other; None
    for any other trace. Cheap (no content is parsed): the caller sorts traces with it
    before any decoding, since only such a trace's conversations are known without it."""
    shape = _shape(spans)
    return None if shape is None else _conversation(shape)


def _conversation(shape: _Shape) -> str | None:
    cid = conversation_id(shape.root.attributes)
    if cid is None:
        return None
    for s in (*shape.chats, *shape.tools, *shape.others):
        own = conversation_id(s.attributes)
        if own is not None and own != cid:
            return None
    return cid


def _run(spans: Sequence[RawSpan], case_attr: str | None) -> tuple[str, Run] | None:
    shape = _shape(spans)
    cid = None if shape is None else _conversation(shape)
    if shape is None or cid is None:
        return None
    decode = _Decoder(case_attr)
    root = decode.agent(shape.root)
    steps = decode.chats(shape.chats)
    tools = [decode.tool(s) for s in shape.tools]
    if root is None or steps is None or any(t is None for t in tools):
        return None
    newest = newest_user(steps[0].input_messages)
    if newest is None:
        return None
    others = tuple(decode.other(s) for s in shape.others)
    run = Run(root, tuple(steps), newest[1], tuple(t for t in tools if t is not None), others)
    return cid, run


def _shape(spans: Sequence[RawSpan]) -> _Shape | None:
    root: RawSpan | None = None
    chats: list[RawSpan] = []
    tools: list[RawSpan] = []
    others: list[RawSpan] = []
    for raw in spans:
        otel = _detected(raw.attributes)
        if otel is None or raw.events:
            return None
        op = raw.attributes.get(A.GEN_AI_OPERATION_NAME)
        if raw.parent_span_id is None:
            if root is not None or op != A.OP_INVOKE_AGENT or _NOT_ON_ROOT & raw.attributes.keys():
                return None
            root = raw
        elif op == A.OP_CHAT:
            chats.append(raw)
        elif op == A.OP_EXECUTE_TOOL and not _NOT_ON_ROOT & raw.attributes.keys():
            tools.append(raw)
        elif op is None and not otel:
            others.append(raw)
        else:
            return None
    if root is None or not chats:
        return None
    if any(s.parent_span_id != root.span_id for s in (*chats, *tools, *others)):
        return None
    if _merges(chats, tools):
        return None
    for group in (chats, tools, others):
        group.sort(key=lambda s: (s.start_unix_nano, s.span_id))
    return _Shape(root, chats, tools, others)


def _merges(chats: list[RawSpan], tools: list[RawSpan]) -> bool:
    """Whether `turnscore.ingest.calls` would change these spans (two chats reporting one
    response id, a synthetic tool span): such a trace goes the general way, where the
    rules live, rather than have them written twice."""
    ids = [r for s in chats if (r := s.attributes.get(A.GEN_AI_RESPONSE_ID)) is not None]
    if len(ids) != len(set(map(str, ids))):
        return True
    return any(as_str(s.attributes.get(A.GEN_AI_TOOL_NAME)) in SYNTHETIC_TOOL_NAMES for s in tools)


_DETECTED: dict[frozenset[str], bool | None] = {}
_DETECTED_SIZE = 1024


def _detected(attributes: Mapping[str, AttrValue]) -> bool | None:
    """True when OTel GenAI alone speaks for the span, False when no convention does, None
    when another one does. Detectors look at which keys are present (the one that reads a
    value is `_FORBIDDEN`), so the answer is kept per key set."""
    if _FORBIDDEN & attributes.keys():
        return None
    keys = frozenset(attributes)
    if keys in _DETECTED:
        return _DETECTED[keys]
    view = SpanView("", "", attributes)
    names = {c.name for c in CONVENTIONS if c.detect(view)}
    answer = None if names - {_OTEL} else bool(names)
    if len(_DETECTED) >= _DETECTED_SIZE:
        _DETECTED.clear()
    _DETECTED[keys] = answer
    return answer


# --- decoding, only what a turn reads ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Decoder:
    """Spans as `decode_span` decodes them, except `attributes_json`, which only a run's
    root needs (for the turn's attributes) and which is left empty on the others."""

    case_attr: str | None

    def agent(self, raw: RawSpan) -> Span | None:
        problems: list[str] = []
        content = otel_genai.current(_view(raw), problems)
        if problems:
            return None
        return self._span(raw, SpanKind.AGENT, _OTEL, content, json=True)

    def tool(self, raw: RawSpan) -> Span | None:
        problems: list[str] = []
        execution = otel_genai.tool_execution(_view(raw), problems)
        if problems:
            return None
        description = as_str(raw.attributes.get(A.GEN_AI_TOOL_DESCRIPTION))
        tools = (ToolDef(execution.name, description),) if description else None
        return self._span(raw, SpanKind.TOOL, _OTEL, Decoded(tool_definitions=tools), execution)

    def other(self, raw: RawSpan) -> Span:
        return self._span(raw, SpanKind.OTHER, "none", Decoded())

    def chats(self, raws: Sequence[RawSpan]) -> list[Span] | None:
        """The model calls of a run, in start order; only the first and last input parsed."""
        problems: list[str] = []
        first = otel_genai.current(_view(raws[0]), problems)
        last = first if len(raws) == 1 else otel_genai.current(_view(raws[-1]), problems)
        history = last.input_messages
        if problems or first.input_messages is None or history is None:
            return None
        texts = [t for r in raws if isinstance(t := r.attributes.get(A.GEN_AI_INPUT_MESSAGES), str)]
        if len(texts) != len(raws):
            return None
        last_text = texts[-1]
        # Without a problem reported, every element of the last input is one message (only
        # a non-object element is skipped, and that is reported), so slices line up.
        sizes = [len(first.input_messages)]
        for text in texts[1:-1]:
            size = _elements(text)
            if size is None or not _extends(text, last_text):
                return None
            sizes.append(size)
        if len(raws) > 1:
            sizes.append(len(history))
        if history[: sizes[0]] != first.input_messages:
            return None
        if any(b < a for a, b in pairwise(sizes)):
            return None
        # Past the first input, a genuine user message would start another turn.
        if any(m.is_genuine_user for m in history[sizes[0] :]):
            return None
        out = []
        for i, (raw, size) in enumerate(zip(raws, sizes, strict=True)):
            if i == 0:
                content = first
            elif i == len(raws) - 1:
                content = last
            else:
                content = otel_genai.current(_view(raw, without=A.GEN_AI_INPUT_MESSAGES), problems)
                inputs = history[:size]
                content = Decoded(
                    input_messages=inputs,
                    output_messages=content.output_messages,
                    system_instructions=content.system_instructions or system_text(inputs),
                    tool_definitions=content.tool_definitions,
                )
            if problems or content.output_messages is None:
                return None
            out.append(self._span(raw, SpanKind.LLM, _OTEL, content))
        return out

    def _span(
        self,
        raw: RawSpan,
        kind: SpanKind,
        convention: str,
        content: Decoded,
        tool: ToolExecution | None = None,
        *,
        json: bool = False,
    ) -> Span:
        merged = Decoded(
            kind=kind,
            input_messages=content.input_messages,
            output_messages=content.output_messages,
            system_instructions=content.system_instructions,
            tool_definitions=content.tool_definitions,
            tool_execution=tool,
        )
        attributes = attributes_json(raw.attributes, raw.resource) if json else "{}"
        return build_span(
            raw, merged, convention, case_id_attribute=self.case_attr, attributes=attributes
        )

def _view(raw: RawSpan, *, without: str | None = None) -> SpanView:
    attrs = raw.attributes
    if without is not None:
        attrs = {k: v for k, v in attrs.items() if k != without}
    return SpanView(raw.span_id, raw.name, attrs)


def _elements(text: str) -> int | None:
    """How many elements the JSON array `text` has; None when it is not one."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return len(value) if isinstance(value, list) else None


def _extends(short: str, long: str) -> bool:
    """Whether the JSON array `long` starts with every element of the JSON array `short`,
    spelled the same: `short` without its `]` is a prefix of `long`, followed by `,` or by
    the end of `long` (both must be valid arrays; the caller has parsed them)."""
    head = short.rstrip()
    if not head.endswith("]"):
        return False
    head = head[:-1].rstrip()
    if not long.startswith(head):
        return False
    rest = long[len(head) :].lstrip()
    if head == "[":
        return rest.startswith(("{", "]"))
    return rest.startswith(",") or rest.rstrip() == "]"

