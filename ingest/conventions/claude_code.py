"""Claude Code's own OpenTelemetry export (the CLI, also under the Claude Agent SDK).

With `CLAUDE_CODE_ENABLE_TELEMETRY` the CLI exports its events as OTLP log records named by
`event.name` (`user_prompt`, `api_request`, `assistant_response`, `tool_decision`,
`tool_result`, ...), and with `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA` spans too, each naming
its `span.type`: an `interaction` a prompt (`gen_ai.operation.name` `invoke_agent`, the
prompt as `user_prompt`), an `llm_request` a model call (`chat`, usage as `gen_ai.usage.*`:
`otel_genai`'s, no content), a `tool` a tool's run (`execute_tool`; under it
`tool.execution`, failed with the tool's error, and `tool.blocked_on_user`). Content is
opt-in: `OTEL_LOG_USER_PROMPTS` (`prompt`), `OTEL_LOG_ASSISTANT_RESPONSES` (`response`),
`OTEL_LOG_TOOL_CONTENT` (the tool span's `tool.output` event), `OTEL_LOG_TOOL_DETAILS`
(the `tool_result` record's `tool_input`), `OTEL_LOG_RAW_API_BODIES` (`api_request_body`
and `api_response_body` records: each request's and response's Messages API JSON). The log
records carry the interaction's span id, so they are its content events. Recorded from the
CLI 2.1.337 the Claude Agent SDK 0.2.190 bundles (`tests/fixtures/stacks/claude-code-otel*`).

Read here:
- the interaction: the turn's run (AGENT), its request (`user_prompt`, else the
  `user_prompt` record's `prompt`), its output (`_run`: the calls the run made, each with
  how it ended, then its answer: the last `assistant_response` record's `response`, the
  CLI logging each assistant text, the run's answer last), and from the first raw request
  body, the system prompt (its `system` blocks) and the tools it offered;
- a tool: the name the model called (`tool_name`: an MCP server's tool as
  `mcp__<server>__<tool>`, where `gen_ai.tool.name` is the server's own name for it), its
  call id, and its result (`tool.output`'s `output`);
- a tool's run (`tool.execution`) that failed: the failure (its `error` text), by the
  call's id, which assembly gives to the tool span.
A call's arguments are only in the interaction's `tool_result` record (by `tool_use_id`)
and raw response body, and each model call's messages only in the raw bodies, which are the
interaction's too: no span of the call holds them. So the interaction's output lists the
run's calls by id, as an agent span listing its run's messages does, and assembly gives a
tool span that records no arguments those its run's agent span lists for its call id
(`assemble._run_arguments`).

With its traces off (the default), the CLI exports the same records and no span: each
record then names no trace or span, only its session (`session.id`) and prompt
(`prompt.id`). `RECORD_TURNS` keys them so (`turnscore.ingest.record_turns`), and tells
the spans the CLI would have exported with its traces on (`_record_spans`): the prompt's
`interaction`, from its first record to its last, in its session (`gen_ai.conversation.id`,
as the CLI sets it on its spans), and under it an `llm_request` per `api_request` record
(the model, usage and duration the record gives, ending when it was logged), so the prompt's
records decode into the same turn as the traced export's, less what only the CLI's other
spans say (a tool's output: `OTEL_LOG_TOOL_CONTENT` writes it as an event of the tool span).
Event names and fields: code.claude.com/docs/en/monitoring-usage ("Events").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace as with_fields

from msgspec.structs import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import ContentEvent, Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    instructions_text,
    parse_part,
    parse_tool_defs,
    text_message,
)
from turnscore.ingest.conventions.values import as_int, as_str, canonical_arguments, try_json
from turnscore.ingest.model import Message, Part, PartType, SpanKind
from turnscore.ingest.record_turns import RecordTurns, span_id_of, told_span
from turnscore.ingest.records import AttrValue, RawEvent, RawLog, RawSpan

_INTERACTION = "interaction"
_TOOL = "tool"
_RUN = "tool.execution"
_LLM_REQUEST = "llm_request"
_SPAN_PREFIX = "claude_code."
_NS_PER_MS = 1_000_000
_ERROR = 2  # OTLP status code ERROR


def decode(view: SpanView, problems: Problems) -> Decoded:
    kind = as_str(view.get(A.CC_SPAN_TYPE))
    if kind == _TOOL:
        return _tool(view)
    if kind == _RUN:
        return _failure(view)
    if kind != _INTERACTION:
        return Decoded()
    request = as_str(view.get(A.CC_USER_PROMPT)) or _last(view, A.CC_EV_USER_PROMPT, "prompt")
    answer = _last(view, A.CC_EV_ASSISTANT_RESPONSE, "response")
    body = _first_request(view)
    tools = body.get("tools")
    return Decoded(
        kind=SpanKind.AGENT,
        input_messages=(text_message("user", request),) if request else None,
        output_messages=_run(view, answer),
        system_instructions=instructions_text(body.get("system")),
        tool_definitions=None if tools is None
        else parse_tool_defs(tools, A.CC_EV_API_REQUEST_BODY, problems),
    )


def _tool(view: SpanView) -> Decoded:
    name = as_str(view.get(A.CC_TOOL_NAME)) or as_str(view.get(A.GEN_AI_TOOL_NAME)) or view.name
    call_id = as_str(view.get(A.GEN_AI_TOOL_CALL_ID)) or as_str(view.get(A.CC_TOOL_USE_ID))
    result = _last(view, A.CC_EV_TOOL_OUTPUT, "output")
    return Decoded(kind=SpanKind.TOOL, tool_execution=execution(name, call_id, None, result))


def _failure(view: SpanView) -> Decoded:
    """A tool's run under its tool span, where it failed: the failure, its text the
    result, by the call's id (the run names no tool; `assemble._failed_below` gives it to
    the tool span of the same call). A run that did not fail says nothing its tool span
    does not."""
    if view.get(A.CC_SUCCESS) is not False:
        return Decoded()
    call_id = as_str(view.get(A.GEN_AI_TOOL_CALL_ID)) or as_str(view.get(A.CC_TOOL_USE_ID))
    failure = as_str(view.get(A.CC_ERROR))
    return Decoded(kind=SpanKind.TOOL, tool_execution=execution("", call_id, None, failure,
                                                                failed=True))


def _run(view: SpanView, answer: str | None) -> tuple[Message, ...] | None:
    """The interaction's output, as the run's messages: each call its `tool_result` records
    tell, in their order (its id, tool and input; where `OTEL_LOG_TOOL_DETAILS` left the
    input out, the raw response body's `tool_use` of that id, else None), then how it
    ended (failed or not, a failure's `error` the text the model was told; a success's
    text is the tool span's `tool.output`, not here: None, not captured), then the answer.
    A call no record tells is left out: the run did not say how it ended, and listed
    without an outcome it would be a call the run left open. None when the run told
    neither a call nor an answer."""
    asked: dict[str, Part] = {}
    out: list[Message] = []
    for event in view.events:
        if event.name == A.CC_EV_API_RESPONSE_BODY:
            for block in _blocks(_body(event.fields).get("content")):
                part = parse_part(block, "assistant")
                if part is not None and part.type is PartType.TOOL_CALL and part.call_id:
                    asked.setdefault(part.call_id, part)
        elif event.name == A.CC_EV_TOOL_RESULT and (call := _said_call(event)) is not None:
            if (body := asked.get(call.call_id or "")) is not None:
                call = replace(call, name=body.name or call.name,
                               arguments=body.arguments if call.arguments is None
                               else call.arguments)
            failed = _failed(event.fields)
            error = as_str(event.fields.get(A.CC_ERROR)) if failed else None
            out.append(Message("assistant", (call,)))
            out.append(Message("tool", (Part(PartType.TOOL_RESULT, error, call.call_id,
                                             call.name, is_error=failed),)))
    if answer:
        out.append(text_message("assistant", answer))
    return tuple(out) or None


def _said_call(record: ContentEvent) -> Part | None:
    """A `tool_result` record's call: its id, the name the model called (an MCP tool's
    `mcp__<server>__<tool>`: the record names it `mcp_tool` and its server and tool in
    `tool_parameters`) and its input, None where the record has none; None without an id."""
    call_id = as_str(record.fields.get(A.CC_TOOL_USE_ID))
    if call_id is None:
        return None
    ok, parameters = try_json(as_str(record.fields.get(A.CC_TOOL_PARAMETERS)) or "")
    name = as_str(record.fields.get(A.CC_TOOL_NAME))
    if ok and isinstance(parameters, dict):
        server, tool = (as_str(parameters.get(k)) for k in ("mcp_server_name", "mcp_tool_name"))
        if server and tool:
            name = f"mcp__{server}__{tool}"
    given = as_str(record.fields.get(A.CC_TOOL_INPUT))
    arguments = canonical_arguments(given) if given is not None else None
    return Part(PartType.TOOL_CALL, call_id=call_id, name=name, arguments=arguments)


def _blocks(content: object) -> list[object]:
    return content if isinstance(content, list) else []


def _failed(fields: Mapping[str, object]) -> bool:
    """Whether a `tool_result` record says its call failed (`success`, a bool or its text)."""
    return fields.get(A.CC_SUCCESS) in (False, "false")


def _body(fields: Mapping[str, object]) -> dict[str, object]:
    """A raw body record's Messages API JSON; {} when it is not an object."""
    ok, body = try_json(as_str(fields.get("body")) or "")
    return body if ok and isinstance(body, dict) else {}


def _events(view: SpanView, name: str) -> list[ContentEvent]:
    return [e for e in view.events if e.name == name]


def _last(view: SpanView, event: str, key: str) -> str | None:
    said = [t for e in _events(view, event) if (t := as_str(e.fields.get(key)))]
    return said[-1] if said else None


def _first_request(view: SpanView) -> dict[str, object]:
    """The first raw request body of the interaction (its system prompt and tools are the
    turn's: the CLI sends the same with every request of it); {} without one."""
    for event in _events(view, A.CC_EV_API_REQUEST_BODY):
        if body := _body(event.fields):
            return body
    return {}


def _speaks(view: SpanView) -> bool:
    return as_str(view.get(A.CC_SPAN_TYPE)) in (_INTERACTION, _TOOL, _RUN)


CLAUDE_CODE = Convention(
    "claude_code", decode, markers=frozenset({A.CC_SPAN_TYPE}),
    events=frozenset({A.CC_EV_USER_PROMPT, A.CC_EV_ASSISTANT_RESPONSE, A.CC_EV_API_REQUEST_BODY,
                      A.CC_EV_API_RESPONSE_BODY, A.CC_EV_TOOL_RESULT, A.CC_EV_TOOL_OUTPUT}),
    accepts=_speaks, content_keys=(A.CC_USER_PROMPT,),
)  # fmt: skip


def _record_spans(
    trace_id: str, span_id: str, records: Sequence[RawLog], _own: Sequence[RawSpan] = (),
) -> list[RawSpan]:
    """The spans one prompt's records tell (`record_turns.RecordTurns.spans`; the CLI has no
    spans of its own that name a prompt, `_own`): its
    interaction, under it an `llm_request` per `api_request` record and a `tool` per
    `tool_result` record (failed: with its `tool.execution`, as the CLI's spans say it)."""
    first = records[0]
    session = as_str(first.attributes.get(A.OI_SESSION_ID))
    common: dict[str, AttrValue] = {A.OI_SESSION_ID: session,
                                    A.GEN_AI_CONVERSATION_ID: session} if session else {}
    start = min(r.time_unix_nano for r in records)
    end = max(r.time_unix_nano for r in records)
    interaction: dict[str, AttrValue] = {**common, A.CC_SPAN_TYPE: _INTERACTION,
                                         A.GEN_AI_OPERATION_NAME: "invoke_agent"}
    spans = [told_span(trace_id, span_id, None, _SPAN_PREFIX + _INTERACTION, start, end,
                       first, interaction)]
    results = _sent_results(records)
    for i, record in enumerate(records):
        if record.event_name == A.CC_EV_API_REQUEST:
            spans.append(_model_call(trace_id, span_id, record, i, common))
        elif record.event_name == A.CC_EV_TOOL_RESULT:
            spans.extend(_tool_run(trace_id, span_id, record, common, results))
    return spans


def _sent_results(records: Sequence[RawLog]) -> dict[str, str]:
    """Each call's result as the CLI sent it to the model, by call id: the `tool_result`
    blocks of the raw request bodies (`OTEL_LOG_RAW_API_BODIES`), their text."""
    out: dict[str, str] = {}
    for record in records:
        if record.event_name != A.CC_EV_API_REQUEST_BODY:
            continue
        messages = _body(record.attributes).get("messages")
        for message in messages if isinstance(messages, list) else ():
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    call_id, text = as_str(block.get("tool_use_id")), _text(block.get("content"))
                    if call_id and text is not None:
                        out.setdefault(call_id, text)
    return out


_REMINDERS = re.compile(r"(?:\n*<system-reminder>.*?</system-reminder>\s*)+\Z", re.DOTALL)
"""What the CLI appends to a tool's result before sending it (`<system-reminder>` notes,
after a newline), in the result's string or as text blocks after it: not the tool's."""


def _text(content: object) -> str | None:
    """A `tool_result` block's text, less the CLI's reminders appended to it."""
    if isinstance(content, list):
        texts = [t for b in content if isinstance(b, dict) and (t := as_str(b.get("text")))]
        content = "".join(texts) if texts else None
    return _REMINDERS.sub("", content) if isinstance(content, str) else None


def _tool_run(
    trace_id: str, parent: str, record: RawLog, common: Mapping[str, AttrValue],
    results: Mapping[str, str],
) -> list[RawSpan]:
    """A `tool_result` record's tool span (its name as the model called it, its call id,
    and the result the model was sent, where a raw request body holds it, as the tool
    span's `tool.output` event would); a failed call's `tool.execution` under it."""
    call = _said_call(ContentEvent(record.event_name, record.time_unix_nano, record.attributes))
    if call is None:
        return []
    call_id = call.call_id or ""
    end = record.time_unix_nano
    start = end - (as_int(record.attributes.get(A.CC_DURATION_MS)) or 0) * _NS_PER_MS
    said: dict[str, AttrValue] = {**common, A.CC_SPAN_TYPE: _TOOL,
                                  A.CC_TOOL_NAME: call.name or "", A.CC_TOOL_USE_ID: call_id}
    own = span_id_of(trace_id, parent, call_id)
    tool = told_span(trace_id, own, parent, _SPAN_PREFIX + _TOOL, start, end, record, said)
    if call_id in results:
        tool = with_fields(tool, events=(RawEvent(A.CC_EV_TOOL_OUTPUT, end,
                                              {"output": results[call_id]}),))
    if not _failed(record.attributes):
        return [tool]
    failed: dict[str, AttrValue] = {**common, A.CC_SPAN_TYPE: _RUN, A.CC_TOOL_USE_ID: call_id,
                                    A.CC_SUCCESS: False,
                                    A.CC_ERROR: as_str(record.attributes.get(A.CC_ERROR)) or ""}
    run = told_span(trace_id, span_id_of(trace_id, own, _RUN), own, _SPAN_PREFIX + _RUN,
                    start, end, record, failed)
    return [tool, with_fields(run, status_code=_ERROR, status_message=str(failed[A.CC_ERROR]))]


def _model_call(
    trace_id: str, parent: str, record: RawLog, index: int, common: Mapping[str, AttrValue]
) -> RawSpan:
    """An `api_request` record's model call: it is logged when the response ended, after
    its `duration_ms`."""
    fields = record.attributes
    model = as_str(fields.get(A.CC_MODEL))
    said: dict[str, AttrValue] = {**common, A.CC_SPAN_TYPE: _LLM_REQUEST,
                                  A.GEN_AI_OPERATION_NAME: "chat"}
    if model:
        said[A.GEN_AI_REQUEST_MODEL] = said[A.GEN_AI_RESPONSE_MODEL] = model
    for key, to in ((A.CC_INPUT_TOKENS, A.GEN_AI_USAGE_INPUT_TOKENS),
                    (A.CC_OUTPUT_TOKENS, A.GEN_AI_USAGE_OUTPUT_TOKENS)):
        if (count := as_int(fields.get(key))) is not None:
            said[to] = count
    took = as_int(fields.get(A.CC_DURATION_MS)) or 0
    end = record.time_unix_nano
    sequence = as_str(fields.get(A.CC_EVENT_SEQUENCE)) or str(index)
    return told_span(trace_id, span_id_of(trace_id, parent, sequence), parent,
                     _SPAN_PREFIX + _LLM_REQUEST, end - took * _NS_PER_MS, end, record, said)


RECORD_TURNS = RecordTurns(
    "claude_code",
    events=frozenset({A.CC_EV_USER_PROMPT, A.CC_EV_API_REQUEST, A.CC_EV_API_ERROR,
                      A.CC_EV_ASSISTANT_RESPONSE, A.CC_EV_API_REQUEST_BODY,
                      A.CC_EV_API_RESPONSE_BODY, A.CC_EV_TOOL_DECISION, A.CC_EV_TOOL_RESULT}),
    session=(A.OI_SESSION_ID,), prompt=(A.CC_PROMPT_ID,), spans=_record_spans,
)  # fmt: skip
