"""Langfuse Python SDK v3 to v5 (OTel-based): `langfuse.observation.*` attributes.

Every observation is an OTel span typed by `langfuse.observation.type` (`generation`,
`embedding`, `agent`, `tool`, `chain`, `retriever`, `evaluator`, `guardrail`, `span`,
`event`), with its input and output in `langfuse.observation.input` / `output`: JSON text
of whatever the caller passed, or the string itself when it was a string (langfuse-python
`langfuse/_client/attributes.py`, `_serialize`). Decoded here:
- generations from the OpenAI integration (`langfuse/openai.py`): input a message list,
  or `{tools|functions, messages}` when tools were given, or (Responses API) the input
  items, `{instructions, input, tools}`; output the assistant message (`tool_calls` in
  OpenAI's shape), a list of them for several choices, or Responses output items;
- generations from the LangChain callback (`langfuse/langchain/CallbackHandler.py`):
  OpenAI-like message dicts whose `tool_calls` are LangChain's `{name, args, id}`, and the
  tool definitions appended to the input as `{"role": "tool", "content": <definition>}`
  pseudo-messages (they are definitions, never results);
- generations from `@observe(as_type="generation")` on the application's own model call:
  the function's arguments, `{"args": [...], "kwargs": {...}}`, the message list and the
  definitions list among them (the app sets model and usage itself);
- tools: `@observe(as_type="tool")` records `{"args": [...], "kwargs": {...}}` and the
  return value; the LangChain callback the tool's input and the `ToolMessage` it returned
  (`model_dump`: content, `tool_call_id`, `status`);
- agents: `@observe(as_type="agent")` with one string argument (the request) and a string
  return (the answer). The LangChain callback types a chain run `agent` when its name or
  class path says "agent" (`_get_observation_type_from_serialized`), so LangGraph's
  `create_react_agent` gives its model node, `agent`, that type: a run with a
  `langgraph_node` in its metadata (`langfuse.observation.metadata.*`, JSON values) is a
  node of a graph and names no agent; LangChain runs are named as LangSmith's are
  (`langsmith.graph_agent`: `lc_agent_name`, or the invoked graph's run);
- model `langfuse.observation.model.name`; tokens from `langfuse.observation.usage_details`
  (Langfuse's `input`/`output`, or the provider's usage keys the OpenAI integration
  passes through); the session in `session.id` (read generically) or the older
  `langfuse.session.id`; level `ERROR` with its status message is a failure.
Recorded (`tests/fixtures/stacks/langfuse-*`): langfuse 3.15 and 5.2, the OpenAI
integration streamed and not, the LangChain callback over LangGraph 1.2, `@observe` around
a hand-written loop, and (OpenInference's spans, which Langfuse's processor exports as they
are: `openinference`'s) the OpenAI Agents SDK as Langfuse's guide instruments it. At 3.15 a
streamed generation's output keeps its tool calls' names and arguments but not their ids.
The JS SDK v5 (`@langfuse/openai` `observeOpenAI`, `@langfuse/tracing` observations;
`tests/fixtures/stacks/langfuse-js-openai*`) writes the same keys; its streamed tool-call
output is `{"tool_calls": [...]}` with no role and one call for all (`_streamed_calls`).
"""

from __future__ import annotations

from typing import Any

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.langsmith import graph_agent
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    instructions_text,
    parse_messages,
    parse_tool_defs,
    system_text,
    text_message,
    unwrap_tool_input,
    unwrap_tool_output,
)
from turnscore.ingest.conventions.values import (
    JsonValue,
    as_int,
    as_str,
    json_or_text,
    result_text,
)
from turnscore.ingest.model import Message, SpanKind, ToolDef, ToolExecution

_KINDS = {
    "generation": SpanKind.LLM,
    "agent": SpanKind.AGENT,
    "tool": SpanKind.TOOL,
    "chain": SpanKind.CHAIN,
}
_INPUT_TOKEN_KEYS = ("input", "input_tokens", "prompt_tokens")
_OUTPUT_TOKEN_KEYS = ("output", "output_tokens", "completion_tokens")
_RESPONSES_ITEMS = frozenset({"message", "function_call", "function_call_output"})
_TOOL_CALLS = "tool_calls"


def decode(view: SpanView, problems: Problems) -> Decoded:
    observation = as_str(view.get(A.LF_OBSERVATION_TYPE)) or ""
    kind = _KINDS.get(observation, SpanKind.OTHER if observation else None)
    def meta(key: str) -> Any:
        return view.get(A.LF_OBSERVATION_METADATA_PREFIX + key)

    node = meta(A.LC_META_LANGGRAPH_NODE) is not None
    base = Decoded(
        kind=kind,
        conversation_id=as_str(view.get(A.LF_SESSION_ID_COMPAT)),
        model=as_str(view.get(A.LF_OBSERVATION_MODEL)),
        error=_failure(view),
        agent_name=view.name if kind is SpanKind.AGENT and not node
        else graph_agent(view.name, meta),
    )
    usage = json_or_text(view.get(A.LF_OBSERVATION_USAGE_DETAILS))
    if isinstance(usage, dict):
        base = base.fill(Decoded(input_tokens=_count(usage, _INPUT_TOKEN_KEYS),
                                 output_tokens=_count(usage, _OUTPUT_TOKEN_KEYS)))
    inputs = json_or_text(view.get(A.LF_OBSERVATION_INPUT))
    outputs = json_or_text(view.get(A.LF_OBSERVATION_OUTPUT))
    if kind is SpanKind.TOOL:
        return base.fill(Decoded(tool_execution=_tool(view, inputs)))
    if kind is SpanKind.AGENT:
        return base.fill(Decoded(
            input_messages=_request(inputs),
            output_messages=_text_message("assistant", outputs),
        ))
    if kind is not SpanKind.LLM:
        return base
    messages_in, tools, instructions = _prompt(inputs, problems)
    return base.fill(Decoded(
        input_messages=messages_in,
        output_messages=_completion(outputs, problems),
        system_instructions=instructions or system_text(messages_in),
        tool_definitions=tools,
    ))


def _failure(view: SpanView) -> str | None:
    if as_str(view.get(A.LF_OBSERVATION_LEVEL)) != "ERROR":
        return None
    return as_str(view.get(A.LF_OBSERVATION_STATUS_MESSAGE)) or "observation level ERROR"


def _count(usage: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    """Langfuse's own usage key, else the provider's the OpenAI integration passes on."""
    return next((as_int(usage[k]) for k in keys if k in usage), None)


def _prompt(
    value: JsonValue, problems: Problems
) -> tuple[tuple[Message, ...] | None, tuple[ToolDef, ...] | None, str | None]:
    """A generation's input: (messages, tool definitions, instructions given apart)."""
    if value is None:
        return None, None, None
    value = _observed_call(value)
    if isinstance(value, str):
        return _text_message("user", value), None, None
    tools: list[Any] = []
    instructions = None
    if isinstance(value, dict) and ("messages" in value or "input" in value
                                    or "instructions" in value):
        for key in ("tools", "functions"):
            if isinstance(value.get(key), list):
                tools.extend(value[key])
        instructions = instructions_text(value.get("instructions"))
        value = value.get("messages", value.get("input"))
        if isinstance(value, str):
            return _text_message("user", value), _definitions(tools, problems), instructions
    items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    messages = []
    for item in items:
        if _is_definition_message(item):
            tools.append(item["content"])
        else:
            messages.append(item)
    parsed = parse_messages(messages, A.LF_OBSERVATION_INPUT, problems) if messages else ()
    return parsed, _definitions(tools, problems), instructions


def _observed_call(value: JsonValue) -> JsonValue:
    """`@observe(as_type="generation")` on the application's own function records its
    arguments, `{"args": [...], "kwargs": {...}}` (langfuse-python `langfuse/_client/
    observe.py`, `_get_input_from_func_args`): its prompt is the argument that is a message
    list (or the one text argument), its tools the argument that is a list of definitions,
    whatever the function named them."""
    if not (isinstance(value, dict) and set(value) == {"args", "kwargs"}):
        return value
    args, kwargs = value["args"], value["kwargs"]
    given = [*(args if isinstance(args, list) else []),
             *(kwargs.values() if isinstance(kwargs, dict) else [])]  # fmt: skip
    lists = [a for a in given if isinstance(a, list) and a and all(isinstance(i, dict) for i in a)]
    messages = next((a for a in lists if all("role" in i for i in a)), None)
    if messages is None:
        texts = [a for a in given if isinstance(a, str)]
        return texts[0] if len(texts) == 1 else value
    tools = next((a for a in lists if all(_is_definition(i) for i in a)), [])
    return {"messages": messages, "tools": tools}


def _is_definition(item: dict[str, Any]) -> bool:
    """A tool definition in any provider's shape: OpenAI's nested `function`, or a flat
    one with its schema (`parameters`, Anthropic's `input_schema`)."""
    return isinstance(item.get("function"), dict) or "parameters" in item or "input_schema" in item


def _is_definition_message(item: JsonValue) -> bool:
    """The LangChain callback's `{"role": "tool", "content": {"type": "function", ...}}`:
    a tool definition it appends to the prompt, not a tool's result."""
    if not isinstance(item, dict) or item.get("role") != "tool" or item.get("tool_call_id"):
        return False
    content = item.get("content")
    return isinstance(content, dict) and (
        isinstance(content.get("function"), dict) or "parameters" in content
    )


def _definitions(tools: list[Any], problems: Problems) -> tuple[ToolDef, ...] | None:
    return parse_tool_defs(tools, A.LF_OBSERVATION_INPUT, problems) if tools else None


def _completion(value: JsonValue, problems: Problems) -> tuple[Message, ...] | None:
    """A generation's output: an assistant message, several (one per choice), Responses
    output items (merged into the one assistant message they are), or text."""
    if value is None:
        return None
    if isinstance(value, str):
        return _text_message("assistant", value)
    items = value if isinstance(value, list) else [value]
    items = [_streamed_calls(i) for i in items]
    if not all(isinstance(i, dict) and ("role" in i or i.get("type") in _RESPONSES_ITEMS)
               for i in items):
        return _text_message("assistant", value)
    shaped = [i if "role" in i or i.get("type") != "message"
              else {**i, "role": "assistant"} for i in items]
    messages = parse_messages(shaped, A.LF_OBSERVATION_OUTPUT, problems)
    if any(isinstance(i, dict) and "type" in i and i.get("type") in _RESPONSES_ITEMS
           for i in items):
        parts = tuple(p for m in messages if m.role == "assistant" for p in m.parts)
        return (Message("assistant", parts),)
    return messages


def _streamed_calls(item: JsonValue) -> JsonValue:
    """The JS SDK's streamed tool-call output, `{"tool_calls": [{"function": {name,
    arguments}}]}` (no role, no ids; `@langfuse/openai` `getToolCallOutput`), as the
    assistant message it is. That one call holds every streamed call: the last name, all
    arguments joined (`linking` reads the calls back from the next request)."""
    if not isinstance(item, dict) or set(item) != {_TOOL_CALLS}:
        return item
    calls = item[_TOOL_CALLS]
    return {"role": "assistant", _TOOL_CALLS: calls} if isinstance(calls, list) else item


def _request(value: JsonValue) -> tuple[Message, ...] | None:
    """An agent observation's input as the user's message: a string, or `@observe`'s
    `{"args": [text], "kwargs": {}}` for a function given the request alone."""
    if isinstance(value, dict) and set(value) == {"args", "kwargs"}:
        args, kwargs = value["args"], value["kwargs"]
        if isinstance(args, list) and len(args) == 1 and not kwargs:
            value = args[0]
    return _text_message("user", value) if isinstance(value, str) else None


def _text_message(role: str, value: JsonValue) -> tuple[Message, ...] | None:
    """Text as one message; an assistant's structured value as its JSON text."""
    if value is None or (role == "user" and not isinstance(value, str)):
        return None
    text = value if isinstance(value, str) else result_text(value)
    return (text_message(role, text),) if text else ()


def _tool(view: SpanView, inputs: JsonValue) -> ToolExecution:
    arguments, wrapped_id = unwrap_tool_input(inputs)
    raw = view.get(A.LF_OBSERVATION_OUTPUT)
    output = json_or_text(raw)
    if _is_tool_message(output):
        assert isinstance(output, dict)
        content = output.get("content")
        text, _, failed = unwrap_tool_output(content)
        return execution(view.name, as_str(output.get("tool_call_id")) or wrapped_id,
                         arguments, text, failed or output.get("status") == "error")
    result = raw if isinstance(raw, str) or raw is None else as_str(output)
    text, result_id, failed = unwrap_tool_output(result)
    return execution(view.name, result_id or wrapped_id, arguments, text, failed)


def _is_tool_message(value: JsonValue) -> bool:
    """LangChain's ToolMessage as pydantic dumps it (flat, not the `lc` constructor form)."""
    return (isinstance(value, dict) and value.get("type") == "tool"
            and "tool_call_id" in value and "content" in value)


LANGFUSE = Convention(
    "langfuse",
    decode,
    markers=frozenset({A.LF_OBSERVATION_TYPE, A.LF_OBSERVATION_INPUT, A.LF_OBSERVATION_OUTPUT}),
    content_keys=(
        A.LF_OBSERVATION_INPUT, A.LF_OBSERVATION_OUTPUT, A.LF_TRACE_INPUT, A.LF_TRACE_OUTPUT,
        A.LF_OBSERVATION_STATUS_MESSAGE, A.LF_EXPERIMENT_ITEM_EXPECTED_OUTPUT,
    ),
)  # fmt: skip
