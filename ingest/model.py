"""The one span model every convention decodes into (DESIGN §3).

A convention decoder reads a `RawSpan` (plus any log records and span events that carry
its content) and returns a `Span`. Turn assembly (`turnscore.ingest.assemble`) reads only
these records, never raw attributes, so adding a convention never touches assembly.

"Not captured" differs from "empty": `Span.input_messages is None` means the telemetry
did not carry the model input; `()` means it carried an empty list.

Spans, and their parts, messages, tool definitions and executions, are frozen msgspec
Structs, built in C: decoding makes hundreds of thousands of them, and a frozen
dataclass's `__init__` (one `object.__setattr__` per field) was a large share of
decoding. They hold immutable values and the reader's attribute mappings (never changed
after reading, never referring back to a span), so they take no part in reference cycles
(`gc=False`). A copy with fields changed is `msgspec.structs.replace` (not
`dataclasses.replace`, which takes dataclasses only).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from enum import StrEnum

import orjson
from msgspec import Struct

from turnscore.ingest.records import AttrValue


class SpanKind(StrEnum):
    AGENT = "agent"
    LLM = "llm"
    TOOL = "tool"
    CHAIN = "chain"
    OTHER = "other"


class PartType(StrEnum):
    TEXT = "text"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    OTHER = "other"


class Part(Struct, frozen=True, gc=False):
    """One typed part of a message."""

    type: PartType
    text: str | None = None
    """TEXT: the text. TOOL_RESULT: the result as the model saw it (JSON text if structured)."""
    call_id: str | None = None
    """TOOL_CALL / TOOL_RESULT: the id linking a call to its result."""
    name: str | None = None
    """TOOL_CALL: the tool name (TOOL_RESULT: when the convention gives it)."""
    arguments: str | None = None
    """TOOL_CALL: canonical JSON text of the arguments (sorted keys, no spaces)."""
    is_error: bool = False
    """TOOL_RESULT: the result reports a failure, where the telemetry says so."""


class Message(Struct, frozen=True, gc=False):
    role: str
    """'system', 'user', 'assistant', 'tool' (lower case)."""
    parts: tuple[Part, ...]
    finish_reason: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text or "" for p in self.parts if p.type is PartType.TEXT)

    @property
    def is_genuine_user(self) -> bool:
        """A user message whose parts are text, not tool results (DESIGN §3)."""
        return (
            self.role == "user"
            and any(p.type is PartType.TEXT for p in self.parts)
            and not any(p.type is PartType.TOOL_RESULT for p in self.parts)
        )

    @property
    def tool_calls(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.type is PartType.TOOL_CALL)


class ToolDef(Struct, frozen=True, gc=False):
    name: str
    description: str | None = None
    parameters: str | None = None
    """Canonical JSON Schema text, or None when the telemetry did not carry it."""


class ToolExecution(Struct, frozen=True, gc=False):
    """What a tool span says about the execution it records."""

    name: str
    call_id: str | None = None
    arguments: str | None = None
    """Canonical JSON text."""
    result: str | None = None
    error: str | None = None


class SpanAttributes(Struct, frozen=True, gc=False):
    """A span's raw attributes and its resource's: the mappings the reader built (shared
    with the `RawSpan`, never changed, holding only values), not JSON text, which only a
    turn's root and duplicate spans need. Two are equal, and hash, as their JSON text
    (`json`) does: duplicate spans compare as their stored text would. So comparing or
    hashing one (a `Span` too) writes that text: fine for a tie between duplicates, not
    for keying every span."""

    own: Mapping[str, AttrValue]
    resource: Mapping[str, AttrValue]

    def merged(self) -> dict[str, AttrValue]:
        """Every attribute, the resource's under 'resource.' (winning a clash of names)."""
        merged = dict(self.own)
        merged.update({f"resource.{k}": v for k, v in self.resource.items()})
        return merged

    def json(self) -> str:
        """`merged` as JSON text, nothing dropped: bytes (at any depth) as base64 text."""
        return orjson.dumps(self.merged(), default=bytes_as_base64).decode()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SpanAttributes) and self.json() == other.json()

    def __hash__(self) -> int:
        return hash(self.json())


def bytes_as_base64(value: object) -> object:
    """orjson's `default`: called only for what it cannot write, bytes become base64 text
    (the one rule for bytes in JSON; `conventions.values.jsonable` applies it too)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


class Span(Struct, frozen=True, gc=False):
    """A decoded span. Times are UNIX nanoseconds; ids lowercase hex."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: SpanKind
    start_unix_nano: int
    end_unix_nano: int
    status: str
    """'ok', 'error' or 'unset'."""
    error: str | None
    """Status message, exception type and message, or `error.type`, when status is error."""
    convention: str
    """Which decoder produced it: 'otel-genai', 'openinference', 'openllmetry', ..."""
    service_name: str | None = None
    agent_name: str | None = None
    model: str | None = None
    conversation_id: str | None = None
    case_id: str | None = None
    input_messages: tuple[Message, ...] | None = None
    output_messages: tuple[Message, ...] | None = None
    system_instructions: str | None = None
    tool_definitions: tuple[ToolDef, ...] | None = None
    tool_execution: ToolExecution | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    response_id: str | None = None
    """`gen_ai.response.id`: spans of two instrumentations reporting one model call share it."""
    continues: str | None = None
    """Root span of a message passed between agents (OTel messaging): the one other trace
    its links name, the run that sent the message; this trace continues that run."""
    attributes: SpanAttributes = SpanAttributes({}, {})
    """All raw attributes and resource attributes, as read."""
    source: str = ""
