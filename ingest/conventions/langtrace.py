"""Langtrace's own instrumentations (Scale3-Labs/langtrace-python-sdk, `langtrace.init`).

Every span names the SDK (`langtrace.sdk.name`) and the kind of library it wrapped
(`langtrace.service.type`: `llm`, `framework`, `vectordb`). A model call (`llm`) keeps the
semconv 1.26 layout `otel_genai` reads (the prompt and the completion as JSON text in the
span events `gen_ai.content.prompt` / `gen_ai.content.completion`, usage under
`gen_ai.usage.*`), with three departures of its own, read here (`src/langtrace_python_sdk/
instrumentation/openai/patch.py` and `utils/llm.py`, 3.8):
1. In the prompt, an assistant message that called tools is replaced by the bare list of
   its calls (`chat_completions_create`), each `{id, type, function}` read with `getattr`,
   so the calls of a message sent as a dict come out `{"id": "", "type": ""}`: such an
   item is the assistant's turn, with the calls it still names (`_prompt`).
2. The request's tools are `gen_ai.request.tools`, a JSON list of JSON texts, each the
   request's whole `tools` list (or one of its legacy `functions`) (`_set_input_attributes`).
3. A streamed call sent with tools keeps only the calls' argument fragments, concatenated,
   as its completion's content, and drops any text (`StreamWrapper.build_streaming_response`
   reads `delta.tool_calls` alone when tools were sent): neither the answer nor the calls,
   so its output is not captured (`_streamed_with_tools`).
Its LangChain-core and LangGraph instrumentations record a wrapped method's arguments,
result and metadata as JSON text (`langchain.inputs` / `outputs` / `metadata`,
`langgraph.node`: content, kept out of the turn's attributes; `instrumentation/
langchain_core/patch.py`, `generic_patch`). Under LangChain the model call is the chat
model span whose result is an AI message (`BaseChatModel.invoke`, task `chatmodel`,
`_chat_model_call`): its first argument the messages (LangChain dumps, by `type`), its
config's `metadata.thread_id` the LangGraph thread, its metadata the tools bound
(`_described`), the AI messages' `name` the agent (`_agent`), its `response_metadata.id`
the response. The OpenAI span below it then holds the request alone: langchain-openai asks
for the raw response, which Langtrace's `_set_response_attributes` cannot read (it fails
silently), so no completion and no usage. A model-call span with a prompt but neither is
that request, not a call of its own: structure (`_request_only`), its exact tools kept.
"""

from __future__ import annotations

from msgspec.structs import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    parse_message,
    parse_tool_defs,
    system_text,
    tool_call,
)
from turnscore.ingest.conventions.values import JsonValue, as_str, json_or_text, try_json
from turnscore.ingest.model import Message, Part, SpanKind, ToolDef


def decode(view: SpanView, problems: Problems) -> Decoded:
    if as_str(view.get(A.LT_LANGCHAIN_TASK)) == A.LT_TASK_CHAT_MODEL:
        return _chat_model_call(view, problems)
    if as_str(view.get(A.LT_SERVICE_TYPE)) != A.LT_SERVICE_LLM:
        return Decoded()
    if _request_only(view):
        return Decoded(kind=SpanKind.CHAIN, tool_definitions=_tools(view, problems))
    inputs = _prompt(view, problems)
    tools = _tools(view, problems)
    outputs = None
    if tools and _streamed(view) and _completion(view) is not None:
        outputs = (Message("assistant", ()),)
    return Decoded(input_messages=inputs, output_messages=outputs,
                   system_instructions=system_text(inputs), tool_definitions=tools)


def _request_only(view: SpanView) -> bool:
    return _completion(view) is None and not any(
        k in view.attributes for k in (A.GEN_AI_USAGE_INPUT_TOKENS, A.GEN_AI_USAGE_OUTPUT_TOKENS))


def _chat_model_call(view: SpanView, problems: Problems) -> Decoded:
    """A LangChain chat model span whose result is an AI message: the model call."""
    output = json_or_text(view.get(A.LT_LANGCHAIN_OUTPUTS))
    if not isinstance(output, dict) or output.get("type") not in _AI_TYPES:
        return Decoded()
    args = json_or_text(view.get(A.LT_LANGCHAIN_INPUTS))
    first = args[0] if isinstance(args, list) and args else None
    inputs = tuple(m for i, item in enumerate(first if isinstance(first, list) else ())
                   if (m := _langchain_message(item, i, problems)) is not None)
    said = _langchain_message(output, 0, problems)
    config = args[1] if isinstance(args, list) and len(args) > 1 else None
    thread = _path(config, "metadata", "thread_id") or _path(config, "configurable", "thread_id")
    metadata = json_or_text(view.get(A.LT_LANGCHAIN_METADATA))
    tools = metadata.get("tools") if isinstance(metadata, dict) else None
    return Decoded(
        kind=SpanKind.LLM,
        input_messages=inputs or None,
        output_messages=(said,) if said is not None else None,
        system_instructions=system_text(inputs),
        tool_definitions=_described(tools, problems),
        conversation_id=as_str(thread),
        agent_name=_agent(output, first),
        response_id=as_str(_path(output, "response_metadata", "id")),
    )


def _agent(output: dict[str, JsonValue], history: JsonValue) -> str | None:
    """The name a LangGraph agent gives the AI messages it adds to its state (`name=`,
    after the call returned, so the replayed ones carry it, the call's own output not)."""
    said = [m for m in (history if isinstance(history, list) else ())
            if isinstance(m, dict) and m.get("type") in _AI_TYPES]
    return as_str(output.get("name")) or next(
        (n for m in reversed(said) if (n := as_str(m.get("name")))), None)


def _described(tools: JsonValue, problems: Problems) -> tuple[ToolDef, ...] | None:
    """The bound tools' names and descriptions. Langtrace writes LangChain values through
    `clean_empty` (`instrumentation/langchain_core/patch.py`), which drops every number and
    boolean inside a dict: a schema's defaults and bounds are gone, so the schemas are left
    to the OpenAI span's exact `gen_ai.request.tools` (the turn fills them from it)."""
    if not isinstance(tools, list):
        return None
    return tuple(replace(t, parameters=None)
                 for t in parse_tool_defs(tools, A.LT_LANGCHAIN_METADATA, problems)) or None


_AI_TYPES = frozenset({"ai", "AIMessage", "AIMessageChunk"})


def _langchain_message(item: JsonValue, index: int, problems: Problems) -> Message | None:
    """A LangChain message's dump (`{type, content, tool_calls, tool_call_id, ...}`), read
    as `message_to_dict` would wrap it."""
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        problems.append(f"{A.LT_LANGCHAIN_INPUTS}[0][{index}]: not a LangChain message")
        return None
    return parse_message({"type": item["type"], "data": item}, A.LT_LANGCHAIN_INPUTS, problems)


def _path(value: JsonValue, *keys: str) -> JsonValue:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _streamed(view: SpanView) -> bool:
    stream = view.get(A.LT_REQUEST_STREAM)
    return stream is True or as_str(stream) in ("True", "true")


def _event_value(view: SpanView, event: str, key: str) -> JsonValue:
    """The span attribute `key`, else the last `event` event's value under it."""
    if key in view.attributes:
        return view.get(key)
    values = [e.fields[key] for e in view.events if e.name == event and key in e.fields]
    return values[-1] if values else None


def _completion(view: SpanView) -> JsonValue:
    return _event_value(view, A.EV_CONTENT_COMPLETION, A.GEN_AI_COMPLETION)


def _prompt(view: SpanView, problems: Problems) -> tuple[Message, ...] | None:
    """The prompt's messages, an item that is a list read as the assistant's calls; None
    when the prompt has no such item (a plain message list is `otel_genai`'s)."""
    value = _event_value(view, A.EV_CONTENT_PROMPT, A.GEN_AI_PROMPT)
    ok, items = try_json(value) if isinstance(value, str) else (value is not None, value)
    if not ok or not isinstance(items, list) or not any(isinstance(i, list) for i in items):
        return None
    out: list[Message] = []
    for i, item in enumerate(items):
        if isinstance(item, list):
            out.append(Message("assistant", tuple(_calls(item))))
        elif (message := parse_message(item, f"{A.GEN_AI_PROMPT}[{i}]", problems)) is not None:
            out.append(message)
    return tuple(out)


def _calls(items: list[JsonValue]) -> list[Part]:
    """The calls of a bare call list that still name their function."""
    calls = []
    for item in items:
        function = item.get("function") if isinstance(item, dict) else None
        if isinstance(function, dict) and as_str(function.get("name")):
            calls.append(tool_call(item.get("id") or None, function["name"],
                                   function.get("arguments")))
    return calls


def _tools(view: SpanView, problems: Problems) -> tuple[ToolDef, ...] | None:
    value = view.get(A.LT_REQUEST_TOOLS)
    if not isinstance(value, str):
        return None
    ok, texts = try_json(value)
    if not ok:
        problems.append(f"{A.LT_REQUEST_TOOLS}: not JSON")
        return None
    return parse_tool_defs(texts, A.LT_REQUEST_TOOLS, problems) or None


LANGTRACE = Convention(
    "langtrace", decode, markers=frozenset({A.LT_SDK_NAME}),
    content_keys=(A.LT_REQUEST_TOOLS, A.LT_LANGCHAIN_INPUTS, A.LT_LANGCHAIN_OUTPUTS,
                  A.LT_LANGCHAIN_METADATA, A.LT_LANGGRAPH_NODE),
)  # fmt: skip
