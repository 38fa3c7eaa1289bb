"""LlamaIndex's own OTel integration (`llama-index-observability-otel`): content in span
events named by LlamaIndex's instrumentation event classes.

The integration opens a span per dispatcher span (named `Class.method`, no attributes but
the `llamaindex.*` tags) and adds each instrumentation event to its span as a span event
named by the event's class, its `model_dump()` flattened with dots and lists of objects as
JSON text (run-llama/llama_index `llama-index-observability-otel/.../base.py`, `utils.py`).
Decoded here, on the model-call spans:
- `LLMChatStartEvent` / `LLMChatEndEvent`: the request in `messages` (ChatMessage dumps:
  `role`, `blocks` of `{block_type: text|tool_call, ...}`, a tool result as role `tool`
  with `additional_kwargs.tool_call_id`; before content blocks, `content` and OpenAI
  `additional_kwargs.tool_calls`), the answer in `response.message.role` / `.blocks`;
- `LLMCompletionStartEvent` / `LLMCompletionEndEvent`: `prompt`, `response.text`;
- the model from `model_dict.model` / `model_name`, usage from the provider's counts in
  `response.additional_kwargs` or `response.raw.usage`;
- the tools offered from the start event's `additional_kwargs.tools`: the call's extra
  keyword arguments, where a function-calling LLM puts the provider's own tool payload
  (llama-index-llms-openai `base.py`, `_prepare_chat_with_tools`: OpenAI's nested
  `{"type": "function", "function": {...}}` list; `LLMChatStartEvent.additional_kwargs`
  in llama-index-core `instrumentation/events/llm.py`).
Messages are rewritten into OpenAI's chat shape and read by the shared parser. A streamed
call's end event comes after its span closed and is dropped by the integration, so such
a span has the request only (its calls are read where the next call's request replays
them: `linking` rule 1); tool spans and workflow steps carry Python reprs cut at 200
characters (`llamaindex.step.input_summary`, `step.output`: llama-index-workflows
`_event_summary.py`, `summarize_event`): calls are read from the answers, results from
the next call's request. Two reprs are read, and only where the value is whole:
- a tool's own span (`FunctionTool.acall`: BaseTool's dispatcher span, inside the agent's
  `call_tool` step, tagged `llamaindex.step.input_event` `ToolCall`) is the tool's
  execution, named by its step's `ToolCall(tool_name=..., tool_kwargs=..., tool_id=...)`
  (the id and arguments too when the repr is whole): its span status says whether the tool
  failed, which nothing else in the export does (the result the model sees is the error's
  text, with no flag);
- the run's `workflow.output` event (`StopEvent(result=AgentOutput(response=ChatMessage(
  ...blocks=[TextBlock(..., text='...')])...`) makes the run's span an agent span with that
  answer, when the text's literal closes before the cut: a streamed last call's answer
  is recorded nowhere else.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import ContentEvent, Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    parse_messages,
    parse_tool_defs,
    system_text,
    text_message,
)
from turnscore.ingest.conventions.values import (
    JsonValue,
    as_int,
    as_str,
    canonical_arguments,
    compact_json,
    first_str,
    json_or_text,
)
from turnscore.ingest.model import Message, SpanKind, ToolDef, ToolExecution

_STARTS = (A.LI_EV_CHAT_START, A.LI_EV_COMPLETION_START)
_ENDS = (A.LI_EV_CHAT_END, A.LI_EV_COMPLETION_END)


def decode(view: SpanView, problems: Problems) -> Decoded:
    start = _last(view.events, _STARTS)
    end = _last(view.events, _ENDS)
    if start is None and end is None:
        return _run(view) or _tool(view) or Decoded()
    request = end if end is not None and _has_request(end) else start
    inputs = None if request is None else _request(request, problems)
    fields = {**(start.fields if start else {}), **(end.fields if end else {})}
    return Decoded(
        kind=SpanKind.LLM,
        input_messages=inputs,
        output_messages=None if end is None else _response(end, problems),
        system_instructions=system_text(inputs),
        model=first_str(fields, A.LI_MODEL_KEYS),
        input_tokens=_count(fields, A.LI_INPUT_TOKEN_KEYS),
        output_tokens=_count(fields, A.LI_OUTPUT_TOKEN_KEYS),
        tool_definitions=None if start is None else _tools(start, problems),
    )


def _tools(event: ContentEvent, problems: Problems) -> tuple[ToolDef, ...] | None:
    """The tools the call offered the model, as the provider payload the LLM built. Only
    objects are definitions: an LLM that passes its tools on as objects leaves their reprs
    (`"<FunctionTool object at 0x...>"`), which name no tool."""
    tools = json_or_text(event.fields.get(A.LI_TOOLS))
    if not isinstance(tools, list):
        return None
    payload = [t for t in tools if isinstance(t, dict)]
    return parse_tool_defs(payload, f"{event.name}.{A.LI_TOOLS}", problems) if payload else None


# A Python string literal as repr() writes it ('...' or "...", backslash escapes).
_LITERAL = r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
# `summarize_event` of the agent's ToolCall; a string field longer than 50 characters is cut
# to 50 and "..." (`_summarize_value`), the whole repr to 200 (then it ends in "...").
_TOOL_CALL = re.compile(rf"ToolCall\(tool_name={_LITERAL}, tool_kwargs=(.*), tool_id={_LITERAL}\)",
                        re.DOTALL)
_TOOL_NAME = re.compile(rf"ToolCall\(tool_name={_LITERAL}, ")
_CUT_FIELD = 50
# The run's StopEvent as the agent workflow ends it: one text block, its literal closed.
_ANSWER = re.compile(
    rf"StopEvent\(result=AgentOutput\(response=ChatMessage\(role=<MessageRole.ASSISTANT: "
    rf"'assistant'>, .*?blocks=\[TextBlock\(block_type='text', text={_LITERAL}\)\]\)",
    re.DOTALL,
)


def _run(view: SpanView) -> Decoded | None:
    """A workflow run's span, its answer from the StopEvent's summary when whole."""
    event = _last(view.events, (A.LI_EV_WORKFLOW_OUTPUT,))
    if event is None:
        return None
    summary = as_str(event.fields.get(A.LI_OUTPUT))
    found = _ANSWER.match(summary) if summary else None
    text = _literal(found.group(1)) if found else None
    return Decoded(
        kind=SpanKind.AGENT,
        output_messages=None if text is None else (text_message("assistant", text),),
    )


def _tool(view: SpanView) -> Decoded | None:
    """A tool's own span inside the agent's tool step: the execution of the call its
    step's ToolCall summary names."""
    owner, _, method = view.name.rpartition(".")
    if (method not in A.LI_TOOL_METHODS or not owner.endswith("Tool")
            or view.get(A.LI_STEP_INPUT_EVENT) != A.LI_TOOL_CALL_EVENT):
        return None
    summary = as_str(view.get(A.LI_STEP_INPUT_SUMMARY)) or ""
    whole = _TOOL_CALL.fullmatch(summary)
    found = whole or _TOOL_NAME.match(summary)
    name = _literal(found.group(1)) if found else None
    if name is None or _summarized(name):
        return None
    call_id = _literal(whole.group(3)) if whole else None
    arguments = _kwargs(whole.group(2)) if whole else None
    return Decoded(
        kind=SpanKind.TOOL,
        tool_execution=ToolExecution(
            name, None if call_id is None or _summarized(call_id) else call_id, arguments,
        ),
    )


def _literal(text: str) -> str | None:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def _summarized(value: str) -> bool:
    """A string field `summarize_event` cut (50 characters and "...")."""
    return len(value) == _CUT_FIELD + 3 and value.endswith("...")


def _kwargs(text: str) -> str | None:
    """The ToolCall's keyword arguments as canonical JSON, when the summary kept them whole
    (a dict of more than three keys is summarized as `{N keys}`, long strings in it are not
    cut: `repr` of the dict)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return canonical_arguments(value) if isinstance(value, dict) else None


def _last(events: tuple[ContentEvent, ...], names: tuple[str, ...]) -> ContentEvent | None:
    return next((e for e in reversed(events) if e.name in names), None)


def _has_request(event: ContentEvent) -> bool:
    return event.fields.get(A.LI_MESSAGES) is not None or event.fields.get(A.LI_PROMPT) is not None


def _count(fields: Any, keys: tuple[str, ...]) -> int | None:
    return next((n for k in keys if (n := as_int(fields.get(k))) is not None), None)


def _request(event: ContentEvent, problems: Problems) -> tuple[Message, ...] | None:
    prompt = as_str(event.fields.get(A.LI_PROMPT))
    if prompt is not None:
        return (text_message("user", prompt),)
    messages = json_or_text(event.fields.get(A.LI_MESSAGES))
    if not isinstance(messages, list):
        return None
    where = f"{event.name}.{A.LI_MESSAGES}"
    return parse_messages([_openai(m) for m in messages], where, problems)


def _response(event: ContentEvent, problems: Problems) -> tuple[Message, ...] | None:
    text = as_str(event.fields.get(A.LI_RESPONSE_TEXT))
    if event.name == A.LI_EV_COMPLETION_END:
        return None if text is None else (text_message("assistant", text),)
    message = {
        "role": as_str(event.fields.get(A.LI_RESPONSE_ROLE)) or "assistant",
        "blocks": json_or_text(event.fields.get(A.LI_RESPONSE_BLOCKS)),
        "content": event.fields.get(A.LI_RESPONSE_CONTENT),
        "additional_kwargs": {
            "tool_calls": json_or_text(event.fields.get(A.LI_RESPONSE_TOOL_CALLS)),
        },
    }
    if message["blocks"] is None and message["content"] is None:
        return None
    return parse_messages([_openai(message)], f"{event.name}.response", problems)


def _openai(message: JsonValue) -> JsonValue:
    """A LlamaIndex ChatMessage dump as an OpenAI chat message: text blocks joined into
    `content`, `tool_call` blocks as `tool_calls`, a tool result's id from its kwargs."""
    if not isinstance(message, dict):
        return message
    role = message.get("role")
    extra = message.get("additional_kwargs")
    extra = extra if isinstance(extra, dict) else {}
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    blocks = message.get("blocks")
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("block_type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_call":
            arguments = block.get("tool_kwargs")
            calls.append({"id": block.get("tool_call_id"), "type": "function", "function": {
                "name": block.get("tool_name"),
                "arguments": arguments if isinstance(arguments, str) else compact_json(arguments),
            }})
    if not isinstance(blocks, list) and isinstance(message.get("content"), str):
        texts.append(message["content"])
    if not calls and isinstance(extra.get("tool_calls"), list):
        calls = extra["tool_calls"]  # before content blocks: OpenAI's own tool calls
    result: dict[str, Any] = {"role": role, "content": "\n".join(texts) if texts else None}
    if calls:
        result["tool_calls"] = calls
    if extra.get("tool_call_id") is not None:
        result["tool_call_id"] = extra["tool_call_id"]
    return result


# An `AgentInput` or `AgentSetup` event's repr: a pydantic model's, fields in declaration
# order, so `current_agent_name`, declared last, closes it (a string literal: '...' or "...").
_AGENT_EVENT_REPR = re.compile(
    r"""(?:AgentInput|AgentSetup)\(.*, current_agent_name="""
    r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\)""",
    re.DOTALL,
)


def workflow_agent(event: JsonValue) -> str | None:
    """The agent a LlamaIndex agent workflow's step runs, as the step's event names it
    (`current_agent_name`: the FunctionAgent's or ReActAgent's `name`, the active agent of a
    multi-agent AgentWorkflow), in either form the instrumentations record an event: its
    `model_dump()` (OpenLLMetry's `traceloop.entity.output`) or its repr (OpenInference's
    step input, `{"ctx": ..., "ev": repr}`). An agent given no name is LlamaIndex's default
    (`Agent`), which names none."""
    name: object = None
    if isinstance(event, dict):
        name = event.get(A.LI_CURRENT_AGENT_NAME)
    elif isinstance(event, str) and A.LI_CURRENT_AGENT_NAME in event:
        found = _AGENT_EVENT_REPR.fullmatch(event)
        name = ast.literal_eval(found.group(1)) if found else None
    return name if isinstance(name, str) and name not in ("", A.LI_DEFAULT_AGENT_NAME) else None


LLAMAINDEX = Convention(
    "llamaindex", decode,
    markers=frozenset({A.LI_STEP_INPUT_EVENT}),
    events=frozenset({*_STARTS, *_ENDS, A.LI_EV_WORKFLOW_OUTPUT}),
    content_keys=(A.LI_STEP_INPUT_SUMMARY,),
)  # fmt: skip
