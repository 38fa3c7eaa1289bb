"""What a convention decoder reads (`SpanView`) and returns (`Decoded`).

Each convention module exposes a `Convention`: what marks its spans (as data) and
`decode(view, problems) -> Decoded`. Decoding is a pure function of the view; `problems`
collects what was malformed so the dispatcher can report it without dropping the span
(DESIGN §3, STYLE 10).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Self, TypeVar

from msgspec import Struct
from msgspec.structs import replace

from turnscore.ingest.conventions.values import JsonValue, load
from turnscore.ingest.model import Message, SpanKind, ToolDef, ToolExecution
from turnscore.ingest.records import Attributes, AttrValue


@dataclass(frozen=True, slots=True)
class ContentEvent:
    """A span event or a log record joined to its span, reduced to what decoders read.

    `fields` merges the event attributes with a kvlist body (body keys win), so the older
    per-message events read the same whether they came as log records (content in the
    body) or as span events (content in attributes).
    """

    name: str
    time_unix_nano: int
    fields: Attributes


@dataclass(frozen=True, slots=True)
class SpanView:
    """The raw span as decoders see it: its attributes and every content event, in time order."""

    span_id: str
    name: str
    attributes: Attributes
    events: tuple[ContentEvent, ...] = ()

    def get(self, key: str) -> AttrValue:
        return self.attributes.get(key)

    def load(self, key: str, problems: list[str]) -> JsonValue:
        """The attribute `key`, JSON by contract (`values.load`)."""
        return load(self.attributes, key, problems)


class Decoded(Struct, frozen=True, gc=False):
    """What one convention could read from one span; None means "this convention has no say"."""

    kind: SpanKind | None = None
    input_messages: tuple[Message, ...] | None = None
    output_messages: tuple[Message, ...] | None = None
    system_instructions: str | None = None
    tool_definitions: tuple[ToolDef, ...] | None = None
    tool_execution: ToolExecution | None = None
    conversation_id: str | None = None
    agent_name: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None
    response_id: str | None = None

    def fill(self, other: Decoded) -> Self:
        """Fields still None here taken from `other` (self has precedence; a model call takes
        no tool execution from it); of a tool execution, and of each tool definition (by
        name), the parts still None too: two conventions on one span may each capture part of
        them (ADK's `gen_ai.*` without content beside OpenInference's `output.value` and
        `llm.tools`)."""
        mine = [getattr(self, name) for name in _DECODED_FIELDS]
        changed = False
        # A model call is not a tool's execution, whatever a later convention calls the span:
        # OpenInference's OpenLIT span processor marks TOOL every span naming gen_ai.tool.name
        # (openinference-instrumentation-openlit `_span_processor.py`, `_is_tool_span`), and
        # OpenLIT names there the calls a chat span's model requested.
        kept_out = _TOOL_EXECUTION if self.kind is SpanKind.LLM else -1
        for i, name in enumerate(_DECODED_FIELDS):
            if i != kept_out and mine[i] is None and (theirs := getattr(other, name)) is not None:
                mine[i] = theirs
                changed = True
        for i, name in _PARTWISE:
            if mine[i] is not None and (theirs := getattr(other, name)) is not None:
                filled = _fill_tools(mine[i], theirs) if name == "tool_definitions" \
                    else _fill_parts(mine[i], theirs)
                changed = changed or filled is not mine[i]
                mine[i] = filled
        # Positional construction: `dataclasses.replace` per merge was a tenth of decoding.
        return type(self)(*mine) if changed else self


# In declaration order, which `fill` relies on to construct positionally.
_DECODED_FIELDS = Decoded.__struct_fields__
_PARTWISE = tuple((i, n) for i, n in enumerate(_DECODED_FIELDS)
                  if n in ("tool_definitions", "tool_execution"))
_TOOL_EXECUTION = _DECODED_FIELDS.index("tool_execution")

S = TypeVar("S", ToolDef, ToolExecution)


def _fill_parts(mine: S, theirs: S) -> S:
    """`mine` with its None fields taken from `theirs`, when both name the same tool."""
    if mine.name != theirs.name:
        return mine
    changes = {f: v for f in mine.__struct_fields__
               if getattr(mine, f) is None and (v := getattr(theirs, f)) is not None}
    return replace(mine, **changes) if changes else mine


def _fill_tools(mine: tuple[ToolDef, ...], theirs: tuple[ToolDef, ...]) -> tuple[ToolDef, ...]:
    by_name = {t.name: t for t in theirs}
    filled = tuple(_fill_parts(t, by_name[t.name]) if t.name in by_name else t for t in mine)
    return mine if all(a is b for a, b in zip(filled, mine, strict=True)) else filled


@dataclass(frozen=True, slots=True)
class Convention:
    """A decoder: its name (recorded on the span), what marks a span as its, how to decode.

    Detection is data, so the dispatcher looks at a span's keys once for every convention
    (`turnscore.ingest.decode.detected`): a span speaks a convention when it has one of its
    `markers`, a key under one of its `prefixes`, or one of its `events`, and `accepts` (when
    given: a marker's value decides, as Vercel's `ai.operationId`) agrees.
    """

    name: str
    decode: Callable[[SpanView, list[str]], Decoded]
    markers: frozenset[str] = frozenset()
    """Attribute keys only this convention's spans carry."""
    prefixes: tuple[str, ...] = ()
    """Prefixes (ending in '.') of the flattened keys only this convention's spans carry."""
    events: frozenset[str] = frozenset()
    """Names of the span events or log records that carry this convention's content."""
    accepts: Callable[[SpanView], bool] | None = None
    content_keys: tuple[str, ...] = ()
    """Attributes holding message content (requests, answers, prompts, tool arguments and
    results, documents), each a key or a prefix of flattened keys (`key.`): kept out of
    `Turn.attributes`, where redaction and "not captured" rules do not reach (issue 17)."""
