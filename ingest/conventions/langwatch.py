"""LangWatch's Python SDK (langwatch/langwatch `python-sdk/src/langwatch/`; read in
langwatch 1.4.0).

`langwatch.setup()` attaches LangWatch's OTLP exporter to a tracer provider; its spans come
from its decorators and its autotracking, each written by `LangWatchSpan.update`
(`telemetry/span.py`):
- `langwatch.span.type`: the span's kind (`domain.SpanTypes`: `llm`, `tool`, `agent`,
  `chain`, `workflow`, `task`, `module`, `component`, `rag`, `span`, ...);
- `langwatch.input` / `langwatch.output`: JSON text of a typed value
  (`utils/transformation.convert_typed_values`): `{"type": "chat_messages", "value":
  [OpenAI chat messages]}`, `{"type": "text", "value": str}`, `{"type": "json", "value":
  ...}`, `{"type": "list", "value": [typed values]}` (a response's several choices) or
  `{"type": "raw", "value": str}`; a decorated function's input is its arguments by name
  (`_set_callee_input_information`), its output what it returned;
- `langwatch.params`: the request's parameters as JSON, the OpenAI request's `tools`
  (OpenAI-nested) among them; `gen_ai.request.model` as `<vendor>/<model>` (`openai` or
  `azure`, `OpenAIChatCompletionTracer.end_span`: the model is read without it, `_model`);
  `gen_ai.usage.prompt_tokens` / `completion_tokens` beside `langwatch.metrics`.
`trace.autotrack_openai_calls(client)` (`openai.py`, `OpenAIChatCompletionTracer`) makes
each chat completion an `llm` span: the request's messages and the response's as
`chat_messages`. A streamed response is accumulated from its deltas (`handle_deltas`),
which starts a new message at every delta that names a role: the one answer may arrive as
one assistant message per chunk, each part of the same output.
A `@langwatch.span(type="tool")` function is a tool's execution: the span is named for
the function (or the `name` given), its arguments the input, its return the output, an
exception recorded (ERROR status, exception event); no call id. A `@langwatch.trace()`
function's root span carries the trace's metadata as JSON text under `metadata`, where
LangWatch reads a conversation's `thread_id` (and the older `langwatch.thread.id`,
`AttributeKey.LangWatchThreadId`).
"""

from __future__ import annotations

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    parse_messages,
    parse_tool_defs,
    text_message,
)
from turnscore.ingest.conventions.values import JsonValue, as_str, json_or_text, result_text
from turnscore.ingest.model import Message, SpanKind, ToolDef, ToolExecution

_KINDS = {
    "llm": SpanKind.LLM,
    "tool": SpanKind.TOOL,
    "agent": SpanKind.AGENT,
    "chain": SpanKind.CHAIN,
    "workflow": SpanKind.CHAIN,
    "task": SpanKind.CHAIN,
    "module": SpanKind.CHAIN,
    "component": SpanKind.CHAIN,
}
"""LangWatch's span types that are turnscore's; `span`, `rag`, `guardrail`, `evaluation`,
`server`, `client`, ... are none of a turn's structure."""
_CHAT, _TEXT, _LIST = "chat_messages", "text", "list"
_THREAD_ID = "thread_id"
_VENDORS = ("openai/", "azure/")
"""The prefixes LangWatch's OpenAI autotracking puts before the model it was asked for."""


def decode(view: SpanView, problems: Problems) -> Decoded:
    kind = _KINDS.get(as_str(view.get(A.LANGWATCH_SPAN_TYPE)) or "")
    conversation = _thread(view)
    if kind is SpanKind.TOOL:
        return Decoded(kind=kind, tool_execution=_tool(view), conversation_id=conversation)
    asked = _typed(view.get(A.LANGWATCH_INPUT))
    said = _typed(view.get(A.LANGWATCH_OUTPUT))
    return Decoded(
        kind=kind,
        input_messages=_messages(asked, "user", A.LANGWATCH_INPUT, problems),
        output_messages=_said(said, problems),
        tool_definitions=_tools(view, problems),
        conversation_id=conversation,
        agent_name=view.name if kind is SpanKind.AGENT else None,
        model=_model(view) if kind is SpanKind.LLM else None,
    )  # fmt: skip


def _typed(value: object) -> tuple[str, JsonValue] | None:
    """A typed value's type and value (JSON text, or a `list` item already parsed); None
    when the value is not one."""
    parsed = json_or_text(value) if isinstance(value, str) else value
    if isinstance(parsed, dict) and isinstance(kind := parsed.get("type"), str) \
            and "value" in parsed:
        return kind, parsed["value"]
    return None


def _messages(typed: tuple[str, JsonValue] | None, role: str, where: str,
              problems: Problems) -> tuple[Message, ...] | None:
    """Chat messages as they are; a text as one message of `role`; anything else (a
    decorated function's arguments by name) says no messages."""
    if typed is None:
        return None
    kind, value = typed
    if kind == _CHAT:
        return parse_messages(value, where, problems)
    if kind == _TEXT and isinstance(value, str):
        return (text_message(role, value),)
    return None


def _said(typed: tuple[str, JsonValue] | None, problems: Problems) -> tuple[Message, ...] | None:
    """The output: of several choices (`list`) the first."""
    if typed is not None and typed[0] == _LIST and isinstance(typed[1], list) and typed[1]:
        typed = _typed(typed[1][0])
    return _messages(typed, "assistant", A.LANGWATCH_OUTPUT, problems)


def _tool(view: SpanView) -> ToolExecution:
    """A decorated tool function: its name, its arguments, what it returned."""
    asked = _typed(view.get(A.LANGWATCH_INPUT))
    said = _typed(view.get(A.LANGWATCH_OUTPUT))
    result = None if said is None else result_text(said[1])
    return execution(view.name, None, None if asked is None else asked[1], result)


def _tools(view: SpanView, problems: Problems) -> tuple[ToolDef, ...] | None:
    params = json_or_text(view.get(A.LANGWATCH_PARAMS))
    tools = params.get("tools") if isinstance(params, dict) else None
    return parse_tool_defs(tools, A.LANGWATCH_PARAMS, problems) if tools else None


def _model(view: SpanView) -> str | None:
    model = as_str(view.get(A.GEN_AI_REQUEST_MODEL))
    vendor = next((v for v in _VENDORS if model and model.startswith(v)), None)
    return model.removeprefix(vendor) if model and vendor else None


def _thread(view: SpanView) -> str | None:
    if thread := as_str(view.get(A.LANGWATCH_THREAD_ID)):
        return thread
    metadata = json_or_text(view.get(A.LANGWATCH_METADATA))
    return as_str(metadata.get(_THREAD_ID)) if isinstance(metadata, dict) else None


LANGWATCH = Convention(
    "langwatch",
    decode,
    markers=frozenset({A.LANGWATCH_SPAN_TYPE, A.LANGWATCH_INPUT, A.LANGWATCH_OUTPUT}),
    content_keys=(A.LANGWATCH_INPUT, A.LANGWATCH_OUTPUT, A.LANGWATCH_RAG_CONTEXTS),
)
