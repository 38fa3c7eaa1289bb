"""Qwen Code's own OpenTelemetry export (`@qwen-code/qwen-code`, `telemetry` settings).

Qwen Code is a fork of Gemini CLI that talks to OpenAI-compatible APIs; unlike Gemini CLI
its spans hold the turn: a prompt is a `qwen-code.interaction` span (`invoke_agent`, its
`qwen-code.prompt_id`), under it a `qwen-code.llm_request` span per model call (`chat`,
usage, response id) and a `qwen-code.tool` span per tool call (`execute_tool`, name, call
id). Its content is on log records named by `event.name` that name those spans:
`qwen-code.api_request` (`request_text`: the request's `contents` as JSON, in Gemini's form,
`{role, parts}` with `text` / `functionCall` / `functionResponse` parts),
`qwen-code.api_response` (`response_text`: the answer's text, empty where the model
called tools) and `qwen-code.tool_call` (`function_args`, `success`, `error`), with
`logPrompts`. Its `qwen-code.user_prompt` record names no span. Recorded from 0.24.4
(`tests/fixtures/stacks/qwen-code-otel`); the events: QwenLM/qwen-code
`packages/core/src/telemetry/constants.ts` (`EVENT_*`, `SPAN_*`), `types.ts`.

So a model call's input is its `api_request`'s contents, decoded as OTel GenAI messages
(`otel_genai.current`: Gemini's parts are one of their forms), its output the answer's
text. The CLI sends the user's prompt as the last part of a user content whose earlier
parts are context it adds, each wrapped in `<system-reminder>` (skills, environment,
deferred tools, date): each such part is a message of its own, so that the newest user
message is the prompt the user typed. A tool span's arguments are its `tool_call` record's;
its result is the next request's `functionResponse` of the same call id, as the CLI sends it
on the OpenAI API (`extractFunctionResponseContent` in its OpenAI converter,
`packages/core/src/core/openaiContentGenerator/converter.ts`): the response's `output`
where that is a string, else its `error` (a failure), else the response as JSON. The system
prompt and the tool declarations are in no span and no record (`KNOWN_GAPS`).

A model call outside any prompt (`llm_request.context` `standalone`: no interaction span
is current, `packages/core/src/telemetry/session-tracing.ts`) is the CLI's own background
work, as its managed memory's extraction after a prompt (`subagent_name`
`managed-auto-memory-extractor`), in a trace of its own: no turn of the user's, so it is
decoded as no model call.
"""

from __future__ import annotations

import orjson
from msgspec.structs import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import ContentEvent, Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import Problems, execution
from turnscore.ingest.conventions.otel_genai import current
from turnscore.ingest.conventions.values import as_str, try_json
from turnscore.ingest.model import Message, Part, PartType, SpanKind
from turnscore.ingest.records import AttrValue

LLM_REQUEST = "qwen-code.llm_request"
TOOL = "qwen-code.tool"
API_REQUEST = "qwen-code.api_request"
API_RESPONSE = "qwen-code.api_response"
TOOL_CALL = "qwen-code.tool_call"
PROMPT_ID = "qwen-code.prompt_id"
_CONTEXT = "llm_request.context"
_STANDALONE = "standalone"
_REMINDER = "<system-reminder>"
_REMINDER_END = "</system-reminder>"


def decode(view: SpanView, problems: Problems) -> Decoded:
    if view.name == LLM_REQUEST:
        return _model_call(view, problems)
    if view.name == TOOL:
        return _tool(view)
    return Decoded()


def _model_call(view: SpanView, problems: Problems) -> Decoded:
    """A model call: its `api_request`'s contents in, its `api_response`'s text out."""
    if view.get(_CONTEXT) == _STANDALONE:
        return Decoded(kind=SpanKind.OTHER)
    sent = _last(view.events, API_REQUEST, "request_text")
    answer = _last(view.events, API_RESPONSE, "response_text")
    said: dict[str, AttrValue] = {}
    if sent is not None:
        said[A.GEN_AI_INPUT_MESSAGES] = sent
    if answer:
        said[A.GEN_AI_OUTPUT_MESSAGES] = orjson.dumps(
            [{"role": "model", "parts": [{"text": answer}]}]).decode()
    if not said:
        return Decoded()
    decoded = current(SpanView(view.span_id, view.name, said), problems, SpanKind.LLM)
    inputs = decoded.input_messages
    if inputs:
        decoded = replace(decoded, input_messages=tuple(
            m for msg in inputs for m in _reminders_apart(_results_as_sent(msg))))
    return decoded


def _results_as_sent(message: Message) -> Message:
    """`message` with each tool result the text the CLI sends for it (module docstring)."""
    if not any(p.type is PartType.TOOL_RESULT for p in message.parts):
        return message
    return replace(message, parts=tuple(_result_as_sent(p) for p in message.parts))


def _result_as_sent(part: Part) -> Part:
    ok, response = try_json(part.text or "") if part.type is PartType.TOOL_RESULT else (False, None)
    if not ok or not isinstance(response, dict):
        return part
    if isinstance(output := response.get("output"), str):
        return replace(part, text=output)
    if isinstance(error := response.get("error"), str):
        return replace(part, text=error, is_error=True)
    return part


def _reminders_apart(message: Message) -> tuple[Message, ...]:
    """A user message whose text parts are the CLI's `<system-reminder>` context and the
    user's prompt: a message per reminder, then the rest."""
    if message.role != "user" or not any(_is_reminder(p.text) for p in message.parts):
        return (message,)
    out = [Message(role="user", parts=(p,)) for p in message.parts if _is_reminder(p.text)]
    rest = tuple(p for p in message.parts if not _is_reminder(p.text))
    return (*out, Message(role="user", parts=rest)) if rest else tuple(out)


def _is_reminder(text: str | None) -> bool:
    stripped = (text or "").strip()
    return stripped.startswith(_REMINDER) and stripped.endswith(_REMINDER_END)


def _tool(view: SpanView) -> Decoded:
    """A tool's run: its name and call id the span's, its arguments its `tool_call`
    record's; failed where the record says so, the error its result."""
    record = next((e.fields for e in reversed(view.events) if e.name == TOOL_CALL), {})
    name = as_str(view.get(A.GEN_AI_TOOL_NAME)) or as_str(record.get("function_name")) or ""
    call_id = as_str(view.get(A.GEN_AI_TOOL_CALL_ID)) or as_str(record.get("call_id"))
    ok, arguments = try_json(as_str(record.get("function_args")) or "")
    failed = record.get("success") is False
    error = as_str(record.get("error")) if failed else None
    return Decoded(kind=SpanKind.TOOL, tool_execution=execution(
        name, call_id, arguments if ok else None, error, failed=failed))


def _last(events: tuple[ContentEvent, ...], name: str, key: str) -> str | None:
    for event in reversed(events):
        if event.name == name:
            return as_str(event.fields.get(key))
    return None


def _speaks(view: SpanView) -> bool:
    return view.name in (LLM_REQUEST, TOOL)


QWEN_CODE = Convention(
    "qwen_code", decode, markers=frozenset({PROMPT_ID, "call_id"}),
    events=frozenset({API_REQUEST, API_RESPONSE, TOOL_CALL}), accepts=_speaks,
    content_keys=(),
)  # fmt: skip
