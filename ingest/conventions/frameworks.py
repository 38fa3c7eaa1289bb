"""Framework forms layered on the standard conventions: Pydantic AI, Logfire, Strands,
MLflow, ADK.

Each reads only its own attributes; the standard parts of the same spans (Pydantic AI's
chat spans, Strands' events, ADK's `gen_ai.tool.*`) are left to `otel_genai`.
- Pydantic AI: `pydantic_ai.all_messages` on the agent span (the whole conversation, the
  last assistant message being the answer), `final_result`, tools in
  `model_request_parameters.function_tools[].parameters_json_schema`, aggregated usage.
- Logfire LLM providers (`logfire.instrument_openai()`, `instrument_anthropic()`): the
  request body in `request_data` (chat and Anthropic messages, tools, system; a legacy
  completion's prompt), the answer in `response_data` (`{message, usage}`, a stream's
  combined text, a completion's text), the Responses API's input and output items in
  `events`. A streamed request's span is structure (`stream` in its body; with
  `version='latest'` alone, no answer, usage or exception): the `streaming response
  from ...` log reports that call. Anthropic tool-call arguments come wrapped as `{"input": {...}}`.
  Logfire's `gen_ai.*` attributes (4.19+; messages only with `version='latest'`) are
  `otel_genai`'s. Under Pydantic AI's chat span the request span is the same call
  (`turnscore.ingest.calls`, rule 2).
- Logfire's OpenAI Agents SDK bridge (`logfire.instrument_openai_agents()`), told by its
  message templates: `Responses API` spans (input items in `raw_input`, the `Response`
  with output, instructions and tools in `response`), `Chat completion` spans (`input`
  and `output` messages; their `request_data` joins both), `Function:` spans (arguments
  and result), `Agent run:` and `Turn ... for agent` spans (agent name, tool names, the
  SDK's span `error`), the trace span (`group_id` as conversation). Logfire's
  `instrument_claude_agent_sdk()` writes OTel GenAI attributes: `otel_genai`'s.
- Strands: per-called-tool `gen_ai.tool.json_schema`, tool names in `gen_ai.agent.tools`.
- MLflow: every value JSON-encoded; full request/response in `mlflow.spanInputs/Outputs`.
- Google ADK: Gemini request/response JSON in `gcp.vertex.agent.llm_request/llm_response`,
  tool args and response in `gcp.vertex.agent.tool_call_args/tool_response`.
"""

from __future__ import annotations

from typing import Any

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    instructions_text,
    parse_messages,
    parse_tool_defs,
    system_text,
)
from turnscore.ingest.conventions.values import (
    SYNTHETIC_TOOL_NAMES,
    JsonValue,
    as_int,
    as_str,
    json_or_text,
    result_text,
    try_json,
)
from turnscore.ingest.model import Message, Part, PartType, SpanKind, ToolDef, ToolExecution


def _split_answer(messages: tuple[Message, ...]) -> tuple[tuple[Message, ...], tuple[Message, ...]]:
    """History and the closing assistant message, when the list ends with one."""
    if messages and messages[-1].role == "assistant":
        return messages[:-1], messages[-1:]
    return messages, ()


# --- Pydantic AI --------------------------------------------------------------------


def _pydantic_decode(view: SpanView, problems: Problems) -> Decoded:
    decoded = Decoded(
        input_tokens=as_int(view.get(A.GEN_AI_AGGREGATED_INPUT_TOKENS)),
        output_tokens=as_int(view.get(A.PYDANTIC_AI_AGGREGATED_OUTPUT_TOKENS)),
        tool_execution=_pydantic_tool(view, problems),
    )
    raw = view.load(A.PYDANTIC_AI_ALL_MESSAGES, problems)
    if raw is not None:
        # Only agent-run spans carry the whole conversation; older versions set no
        # operation name on them.
        messages = parse_messages(raw, A.PYDANTIC_AI_ALL_MESSAGES, problems)
        history, answer = _split_answer(messages)
        decoded = decoded.fill(Decoded(
            kind=SpanKind.AGENT, input_messages=history, output_messages=answer or None,
            system_instructions=system_text(history),
            model=as_str(view.get(A.PYDANTIC_AI_MODEL_NAME)),
        ))
    final = view.get(A.PYDANTIC_AI_FINAL_RESULT)
    if decoded.output_messages is None and final is not None:
        text = final if isinstance(final, str) else result_text(final)
        decoded = decoded.fill(
            Decoded(output_messages=(Message("assistant", (Part(PartType.TEXT, text=text),)),))
        )
    params = view.load(A.PYDANTIC_AI_MODEL_REQUEST_PARAMETERS, problems)
    if isinstance(params, dict) and isinstance(params.get("function_tools"), list):
        tools = parse_tool_defs(params["function_tools"], "function_tools", problems)
        decoded = decoded.fill(Decoded(tool_definitions=tools))
    return decoded


def _declared_structured(view: SpanView, types: tuple[str, ...] = ("object", "array")
                         ) -> frozenset[str]:
    """Attributes Logfire declares as object/array: their string values are JSON text (as
    is the 'null' it writes for None, declared as type null)."""
    raw = view.get(A.LOGFIRE_JSON_SCHEMA)
    ok, schema = try_json(raw) if isinstance(raw, str) else (True, raw)
    properties = schema.get("properties") if ok and isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return frozenset()
    return frozenset(k for k, v in properties.items()
                     if isinstance(v, dict) and v.get("type") in types)


def _pydantic_tool(view: SpanView, problems: Problems) -> ToolExecution | None:
    name = as_str(view.get(A.GEN_AI_TOOL_NAME))
    keys = [k for k in (A.GEN_AI_TOOL_CALL_RESULT, A.PYDANTIC_AI_TOOL_RESPONSE)
            if k in view.attributes]
    arguments = view.get(A.GEN_AI_TOOL_CALL_ARGUMENTS)
    if arguments is None:
        arguments = view.get(A.PYDANTIC_AI_TOOL_ARGUMENTS)
    if name is None or (not keys and arguments is None):
        return None
    result: str | None = None
    if keys:
        value = view.get(keys[0])
        result = value if isinstance(value, str) else result_text(value)
        if isinstance(value, str) and keys[0] in _declared_structured(view):
            # Logfire stores a structured result as JSON text; render it as chat spans do.
            ok, parsed = try_json(value)
            result = result_text(parsed) if ok and isinstance(parsed, dict | list) else value
    return execution(name, as_str(view.get(A.GEN_AI_TOOL_CALL_ID)), arguments, result)


def _pydantic_accepts(view: SpanView) -> bool:
    # Every Logfire span with a structured attribute carries its JSON schema: Logfire's
    # LLM-provider and OpenAI Agents SDK spans do too, and are no Pydantic AI span.
    return A.LOGFIRE_REQUEST_DATA not in view.attributes and _agents_span(view) is None


PYDANTIC_AI = Convention("pydantic-ai", _pydantic_decode, markers=frozenset({
    A.PYDANTIC_AI_ALL_MESSAGES, A.PYDANTIC_AI_MODEL_REQUEST_PARAMETERS,
    A.PYDANTIC_AI_TOOL_ARGUMENTS, A.PYDANTIC_AI_TOOL_RESPONSE, A.LOGFIRE_JSON_SCHEMA,
}), accepts=_pydantic_accepts, content_keys=(
    A.PYDANTIC_AI_ALL_MESSAGES, A.PYDANTIC_AI_FINAL_RESULT,
    A.PYDANTIC_AI_MODEL_REQUEST_PARAMETERS, A.PYDANTIC_AI_TOOL_ARGUMENTS,
    A.PYDANTIC_AI_TOOL_RESPONSE,
))

# --- Logfire LLM providers ----------------------------------------------------------
# pydantic/logfire `logfire/_internal/integrations/llm_providers/openai.py`, `anthropic.py`
# and `llm_provider.py` (read at 4.41): one span per request, named by its message template
# ("Chat Completion with {request_data[model]!r}", "Responses API with ...", "Completion
# with ...", "Message with ..." for Anthropic), every dict attribute JSON text.


def _logfire_decode(view: SpanView, problems: Problems) -> Decoded:
    if (sdk_span := _agents_span(view)) is not None:
        return _agents_decode(sdk_span, view, problems)
    request = view.load(A.LOGFIRE_REQUEST_DATA, problems)
    if not isinstance(request, dict):
        return Decoded()
    if _stream_request(view, request):
        # A streamed request's span closes when the stream opens, before any answer; the
        # call is reported whole (request, answer, usage) by the log Logfire writes when the
        # stream ends, under the request's parent. Counting both would double the call.
        return Decoded(kind=SpanKind.CHAIN)
    inputs = _logfire_request(view, request, problems)
    if inputs is None:  # embeddings, images, files: no step of the conversation
        return Decoded()
    history, answer = inputs
    response = view.load(A.LOGFIRE_RESPONSE_DATA, problems)
    response = response if isinstance(response, dict) else {}
    outputs = answer or _logfire_response(view, response, problems)
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    reported = A.GEN_AI_USAGE_INPUT_TOKENS in view.attributes  # Logfire's own count first
    known_model = not {A.GEN_AI_RESPONSE_MODEL, A.GEN_AI_REQUEST_MODEL}.isdisjoint(view.attributes)
    return Decoded(
        kind=SpanKind.LLM,
        input_messages=history,
        output_messages=outputs,
        system_instructions=instructions_text(request.get("system")) or system_text(history),
        tool_definitions=None if request.get("tools") is None
        else parse_tool_defs(request["tools"], A.LOGFIRE_REQUEST_DATA, problems),
        model=None if known_model else as_str(request.get("model")),
        input_tokens=None if reported
        else as_int(usage.get("prompt_tokens", usage.get("input_tokens"))),
        output_tokens=None if reported
        else as_int(usage.get("completion_tokens", usage.get("output_tokens"))),
    )


def _stream_request(view: SpanView, request: dict[str, Any]) -> bool:
    """The span of a streamed request, not the log of its answer: the body says `stream`.
    With `version='latest'` alone the body is only the model: a chat span with no answer,
    no usage and no exception is then a stream's (a returned call has both, a failed one
    records its exception)."""
    if view.name.startswith(A.LOGFIRE_STREAM_LOG):
        return False
    if request.get("stream") is True:
        return True
    return (
        set(request) == {"model"}
        and as_str(view.get(A.GEN_AI_OPERATION_NAME)) in (A.OP_CHAT, A.OP_TEXT_COMPLETION)
        and _NO_ANSWER.isdisjoint(view.attributes)
        and not any(e.name == A.EXCEPTION_EVENT for e in view.events)
    )


_NO_ANSWER = frozenset({
    A.GEN_AI_OUTPUT_MESSAGES, A.GEN_AI_USAGE_INPUT_TOKENS, A.GEN_AI_USAGE_OUTPUT_TOKENS,
    A.GEN_AI_RESPONSE_ID,
})  # fmt: skip


def _logfire_request(
    view: SpanView, request: dict[str, Any], problems: Problems
) -> tuple[tuple[Message, ...], tuple[Message, ...] | None] | None:
    """The request's messages, and for the Responses API the answer items Logfire appends
    to the same list; None when the request is no conversation."""
    if isinstance(request.get("messages"), list):  # chat completions, Anthropic messages
        return parse_messages(request["messages"], A.LOGFIRE_REQUEST_DATA, problems), None
    prompt = request.get("prompt")
    if isinstance(prompt, str | list):  # legacy completions: a prompt or a list of them
        prompts = prompt if isinstance(prompt, list) else [prompt]
        return tuple(Message("user", (Part(PartType.TEXT, text=p),))
                     for p in prompts if isinstance(p, str)), None
    events = view.load(A.LOGFIRE_EVENTS, problems)
    if not isinstance(events, list):
        return None
    # Responses API: request_data holds only model and stream; `events` lists the input
    # items as chat messages (one per content part), then the output items, all
    # role "assistant": the answer is the run of assistant items after the last other one.
    items = [e for e in events if isinstance(e, dict) and e.get(A.EVENT_NAME) != _UNKNOWN_ITEM]
    end = len(items)
    while end and items[end - 1].get("role") == "assistant":
        end -= 1
    history = _joined(parse_messages(items[:end], A.LOGFIRE_EVENTS, problems))
    answer = parse_messages(items[end:], A.LOGFIRE_EVENTS, problems)
    return history, _merge_assistant(answer) if answer else None


_UNKNOWN_ITEM = "gen_ai.unknown"
"""Logfire's stand-in for an item it has no message form for (reasoning): no content."""


def _joined(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Consecutive messages of one role (not tool results, one per call) as one message:
    Logfire splits a message's content parts into one event each."""
    out: list[Message] = []
    for m in messages:
        if out and m.role == out[-1].role and m.role != "tool":
            out[-1] = Message(m.role, out[-1].parts + m.parts, m.finish_reason)
        else:
            out.append(m)
    return tuple(out)


def _logfire_response(
    view: SpanView, response: dict[str, Any], problems: Problems
) -> tuple[Message, ...] | None:
    message = response.get("message")
    if isinstance(message, dict):
        if view.name.startswith(A.LOGFIRE_ANTHROPIC_SPAN):
            message = _anthropic_calls(message)
        return parse_messages(message, A.LOGFIRE_RESPONSE_DATA, problems)
    # Streams without a message form (Anthropic, completions, older chat) and legacy
    # completions give the text alone.
    text = response.get("combined_chunk_content", response.get("text"))
    if not isinstance(text, str):
        return None
    parts = (Part(PartType.TEXT, text=text),) if text else ()
    return (Message("assistant", parts, as_str(response.get("finish_reason"))),)


def _anthropic_calls(message: dict[str, Any]) -> dict[str, Any]:
    """Anthropic's response rewritten as an OpenAI message by Logfire, whose tool call
    arguments are the block dumped with only its input: `{"input": {...}}`."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message
    unwrapped = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            ok, parsed = try_json(function["arguments"])
            if ok and isinstance(parsed, dict) and set(parsed) == {"input"}:
                call = {**call, "function": {**function, "arguments": parsed["input"]}}
        unwrapped.append(call)
    return {**message, "tool_calls": unwrapped}


# --- Logfire's OpenAI Agents SDK bridge ----------------------------------------------
# pydantic/logfire `logfire/_internal/integrations/openai_agents.py` (read at 4.41; the
# shapes in its `tests/otel_integrations/test_openai_agents.py`): one Logfire span per SDK
# span, named by a message template per span-data type, the span data's `export()` as
# attributes. Logfire's own `instrument_openai()` records nothing under the agent's model
# spans (`is_current_agent_span` in `llm_providers/openai.py`), so each model call is
# reported once.
_AGENTS_TEMPLATES = {
    "OpenAI Agents trace: {name}": "trace",
    "Agent run: {name!r}": "agent",
    "Function: {name}": "function",
    "Chat completion with {gen_ai.request.model!r}": "generation",
    "Responses API": "response",
    "Responses API with {gen_ai.request.model!r}": "response",
    "Handoff: {from_agent} → {to_agent}": "handoff",
    "Handoff: {from_agent} -> {to_agent}": "handoff",  # Logfire 3.9 and before
    "Guardrail {name!r} {triggered=}": "guardrail",
    "MCP: list tools from server {server}": "mcp_tools",
    "Custom span: {name}": "custom",
}


def _agents_span(view: SpanView) -> str | None:
    """The SDK span type of a Logfire OpenAI Agents span, else None. Task and turn spans
    (openai-agents 0.14+) inline their name in the template and say their type in
    `sdk_span_type`. `instrument_openai()`'s own Responses span shares the template but
    records the request body (`request_data`)."""
    template = view.get(A.LOGFIRE_MSG_TEMPLATE)
    if not isinstance(template, str):
        return None
    kind = _AGENTS_TEMPLATES.get(template)
    if kind == "response" and A.LOGFIRE_REQUEST_DATA in view.attributes:
        return None
    if kind is None and isinstance(view.get(A.LOGFIRE_AGENTS_SDK_SPAN_TYPE), str):
        return as_str(view.get(A.LOGFIRE_AGENTS_SDK_SPAN_TYPE))
    return kind


def _agents_decode(sdk_span: str, view: SpanView, problems: Problems) -> Decoded:
    error = _agents_error(view, problems)
    if sdk_span == "response":
        return _agents_response(view, problems).fill(Decoded(error=error))
    if sdk_span == "generation":
        # `request_data` is the input and the output joined (for Logfire's UI): read each.
        inputs = parse_messages(view.load(A.LOGFIRE_AGENTS_INPUT, problems) or [],
                                A.LOGFIRE_AGENTS_INPUT, problems)
        output = view.load(A.LOGFIRE_AGENTS_OUTPUT, problems)
        return Decoded(
            kind=SpanKind.LLM, input_messages=inputs, system_instructions=system_text(inputs),
            output_messages=None if not output
            else _merge_assistant(parse_messages(output, A.LOGFIRE_AGENTS_OUTPUT, problems)),
            error=error,
        )
    if sdk_span == "function":
        name = as_str(view.get(A.LOGFIRE_AGENTS_NAME)) or view.name
        output = view.get(A.LOGFIRE_AGENTS_OUTPUT)
        if isinstance(output, str) and A.LOGFIRE_AGENTS_OUTPUT in _declared_structured(
                view, ("object", "array", "null")):
            ok, parsed = try_json(output)  # a structured result, as Logfire's JSON text
            output = parsed if ok else output
        return Decoded(kind=SpanKind.TOOL, error=error, tool_execution=execution(
            name, None, view.get(A.LOGFIRE_AGENTS_INPUT),
            None if output is None else result_text(output)))
    if sdk_span == "agent":
        names = view.load(A.LOGFIRE_AGENTS_TOOLS, problems)
        return Decoded(
            kind=SpanKind.AGENT, agent_name=as_str(view.get(A.LOGFIRE_AGENTS_NAME)), error=error,
            # Names only: the schemas are on the model spans (Responses API) or nowhere.
            tool_definitions=tuple(ToolDef(n) for n in names if isinstance(n, str) and n)
            if isinstance(names, list) else None,
        )
    if sdk_span == "trace":
        group = as_str(view.get(A.LOGFIRE_AGENTS_GROUP_ID))
        # The run's group id threads a conversation's runs (`trace(..., group_id=...)`).
        return Decoded(kind=SpanKind.CHAIN, error=error,
                       conversation_id=None if group == "null" else group)
    if sdk_span == "turn":
        # One agent's step (0.14+) inside its run: where the SDK records what ends the run
        # (a guardrail tripwire, too many turns), which the run span held before.
        return Decoded(kind=SpanKind.AGENT, error=error,
                       agent_name=as_str(view.get(A.LOGFIRE_AGENTS_AGENT_NAME)))
    return Decoded(kind=SpanKind.CHAIN, error=error)


def _agents_error(view: SpanView, problems: Problems) -> str | None:
    """The SDK's span error (`{message, data}`), which Logfire records as `error` with
    level error but no error status: a tool's non-fatal failure, a guardrail tripwire."""
    if A.LOGFIRE_AGENTS_ERROR not in view.attributes:
        return None
    error = view.load(A.LOGFIRE_AGENTS_ERROR, problems)
    if not isinstance(error, dict):
        return None
    message = as_str(error.get("message")) or "error"
    data = error.get("data")
    detail = as_str(data.get("error")) if isinstance(data, dict) else None
    return f"{message}: {detail}" if detail else message


def _agents_response(view: SpanView, problems: Problems) -> Decoded:
    """A Responses API call: the input items as the SDK sent them (`raw_input`) and the
    `response` as returned, with its instructions and tools. Logfire's `events` list both
    in one run, the output items role assistant too, which leaves the boundary unknown when
    the input ends with an assistant item (a handoff's summarized history)."""
    raw = view.load(A.LOGFIRE_AGENTS_RAW_INPUT, problems)
    response = view.load(A.LOGFIRE_AGENTS_RESPONSE, problems)
    response = response if isinstance(response, dict) else {}
    if isinstance(raw, str):
        raw = [{"role": "user", "content": raw}]
    if not isinstance(raw, list):
        return Decoded(kind=SpanKind.LLM)
    instructions = instructions_text(response.get("instructions"))
    items = [i for i in map(_responses_item, raw) if i is not None]
    history = parse_messages(items, A.LOGFIRE_AGENTS_RAW_INPUT, problems)
    if instructions:
        history = (Message("system", (Part(PartType.TEXT, text=instructions),)), *history)
    outputs = response.get("output")
    answer = None
    if isinstance(outputs, list):
        produced = [i for i in map(_responses_item, outputs) if i is not None]
        answer = _merge_assistant(parse_messages(produced, A.LOGFIRE_AGENTS_RESPONSE, problems))
    tools = response.get("tools")
    functions = [t for t in tools if isinstance(t, dict) and t.get("type") == "function"] \
        if isinstance(tools, list) else None
    # A run on a server-side conversation (`Runner.run(..., conversation_id=...)`) sends
    # only the new items: the conversation the response names threads the runs.
    conversation = response.get("conversation")
    return Decoded(
        kind=SpanKind.LLM, input_messages=history, output_messages=answer,
        conversation_id=as_str(conversation.get("id")) if isinstance(conversation, dict)
        else None,
        system_instructions=instructions or system_text(history),
        tool_definitions=None if functions is None
        else parse_tool_defs(functions, A.LOGFIRE_AGENTS_RESPONSE, problems),
        model=as_str(response.get("model")),
    )


def _responses_item(item: JsonValue) -> JsonValue:
    """A Responses API item as `parse_messages` reads it, or None for an item that is no
    message (reasoning, hosted tool calls). A function call and its output are linked by
    `call_id`; the item's own `id` names the item, not the call."""
    if not isinstance(item, dict):
        return item
    if item.get("type") in ("function_call", "function_call_output"):
        return {**item, "id": item.get("call_id")}
    return item if "role" in item else None


def _is_logfire(view: SpanView) -> bool:
    return A.LOGFIRE_MSG_TEMPLATE in view.attributes or A.LOGFIRE_SPAN_TYPE in view.attributes


def _logfire_accepts(view: SpanView) -> bool:
    """A Logfire LLM-provider request (its body in `request_data`) or an OpenAI Agents
    SDK span (its message template)."""
    if A.LOGFIRE_REQUEST_DATA in view.attributes:
        return _is_logfire(view)
    return _agents_span(view) is not None


LOGFIRE = Convention("logfire", _logfire_decode, markers=frozenset({
    A.LOGFIRE_REQUEST_DATA, A.LOGFIRE_MSG_TEMPLATE,
}), accepts=_logfire_accepts, content_keys=(
    A.LOGFIRE_REQUEST_DATA, A.LOGFIRE_RESPONSE_DATA, A.LOGFIRE_EVENTS,
    A.LOGFIRE_AGENTS_RAW_INPUT, A.LOGFIRE_AGENTS_RESPONSE, A.LOGFIRE_AGENTS_INPUT,
    A.LOGFIRE_AGENTS_OUTPUT,
))

# --- Strands ------------------------------------------------------------------------


def _strands_decode(view: SpanView, problems: Problems) -> Decoded:
    name = as_str(view.get(A.GEN_AI_TOOL_NAME))
    schema = view.get(A.STRANDS_TOOL_JSON_SCHEMA)
    if name and schema is not None:
        tools = parse_tool_defs(
            {"name": name, "description": view.get(A.GEN_AI_TOOL_DESCRIPTION),
             "parameters": schema},
            A.STRANDS_TOOL_JSON_SCHEMA, problems,
        )
        error = None
        if as_str(view.get(A.STRANDS_TOOL_STATUS)) == "error":
            error = "tool reported status error"
        return Decoded(tool_definitions=tools, error=error)
    names = view.load(A.STRANDS_AGENT_TOOLS, problems)
    if isinstance(names, list):
        # Names only: the agent declares its tool set without schemas.
        return Decoded(tool_definitions=tuple(ToolDef(str(n)) for n in names if n))
    return Decoded()


STRANDS = Convention("strands", _strands_decode, markers=frozenset({
    A.STRANDS_TOOL_JSON_SCHEMA, A.STRANDS_AGENT_TOOLS,
}))

# --- MLflow -------------------------------------------------------------------------

_MLFLOW_KINDS = {
    "LLM": SpanKind.LLM,
    "CHAT_MODEL": SpanKind.LLM,
    "AGENT": SpanKind.AGENT,
    "TOOL": SpanKind.TOOL,
    "CHAIN": SpanKind.CHAIN,
}


def _mlflow_decode(view: SpanView, problems: Problems) -> Decoded:
    span_type = as_str(json_or_text(view.get(A.MLFLOW_SPAN_TYPE))) or ""
    kind = _MLFLOW_KINDS.get(span_type.upper(), SpanKind.OTHER if span_type else None)
    inputs = json_or_text(view.get(A.MLFLOW_SPAN_INPUTS))
    outputs = json_or_text(view.get(A.MLFLOW_SPAN_OUTPUTS))
    usage = json_or_text(view.get(A.MLFLOW_TOKEN_USAGE))
    usage = usage if isinstance(usage, dict) else {}
    model = next((as_str(v.get("model")) for v in (outputs, inputs)
                  if isinstance(v, dict) and v.get("model")), None)
    base = Decoded(
        kind=kind,
        model=model,
        input_tokens=as_int(usage.get("input_tokens")),
        output_tokens=as_int(usage.get("output_tokens")),
    )
    if kind is SpanKind.TOOL:
        return base.fill(Decoded(tool_execution=execution(
            view.name, None, inputs, None if outputs is None else result_text(outputs))))
    messages_in = _mlflow_request(inputs, problems)
    messages_out = _mlflow_response(outputs, problems)
    chat = json_or_text(view.get(A.MLFLOW_CHAT_MESSAGES))
    if messages_in is None and isinstance(chat, list):
        # Older MLflow: the whole exchange, answer last, in one standardized list.
        history, answer = _split_answer(parse_messages(chat, A.MLFLOW_CHAT_MESSAGES, problems))
        messages_in, messages_out = history, messages_out or answer or None
    tools_raw = json_or_text(view.get(A.MLFLOW_CHAT_TOOLS))
    if tools_raw is None and isinstance(inputs, dict):
        tools_raw = inputs.get("tools")
    return base.fill(Decoded(
        input_messages=messages_in,
        output_messages=messages_out,
        system_instructions=system_text(messages_in),
        tool_definitions=None if tools_raw is None
        else parse_tool_defs(tools_raw, A.MLFLOW_CHAT_TOOLS, problems),
    ))


def _mlflow_request(inputs: JsonValue, problems: Problems) -> tuple[Message, ...] | None:
    if not isinstance(inputs, dict):
        return None
    if isinstance(inputs.get("messages"), list):
        return parse_messages(inputs["messages"], A.MLFLOW_SPAN_INPUTS, problems)
    request = inputs.get("input")
    if isinstance(request, str):
        return parse_messages({"role": "user", "content": request}, A.MLFLOW_SPAN_INPUTS, problems)
    if isinstance(request, list):
        return parse_messages(request, A.MLFLOW_SPAN_INPUTS, problems)
    return None


def _mlflow_response(outputs: JsonValue, problems: Problems) -> tuple[Message, ...] | None:
    if outputs is None:
        return None
    if isinstance(outputs, str):
        return parse_messages({"role": "assistant", "content": outputs},
                              A.MLFLOW_SPAN_OUTPUTS, problems)
    if isinstance(outputs, dict) and isinstance(outputs.get("choices"), list):
        items: list[Any] = [
            {**c["message"], "finish_reason": c.get("finish_reason")}
            for c in outputs["choices"]
            if isinstance(c, dict) and isinstance(c.get("message"), dict)
        ]
        return parse_messages(items, A.MLFLOW_SPAN_OUTPUTS, problems)
    if isinstance(outputs, dict) and isinstance(outputs.get("output"), list):
        return _merge_assistant(parse_messages(outputs["output"], A.MLFLOW_SPAN_OUTPUTS, problems))
    return None


def _merge_assistant(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Responses API output items (a message, then function calls) as one assistant turn."""
    parts = tuple(p for m in messages if m.role == "assistant" for p in m.parts)
    return (Message("assistant", parts),) if parts else messages


MLFLOW = Convention("mlflow", _mlflow_decode, markers=frozenset({
    A.MLFLOW_SPAN_TYPE, A.MLFLOW_SPAN_INPUTS,
}), content_keys=(
    A.MLFLOW_SPAN_INPUTS, A.MLFLOW_SPAN_OUTPUTS, A.MLFLOW_CHAT_TOOLS, A.MLFLOW_CHAT_MESSAGES,
))

# --- Google ADK ---------------------------------------------------------------------


def _adk_decode(view: SpanView, problems: Problems) -> Decoded:
    base = Decoded(conversation_id=as_str(view.get(A.ADK_SESSION_ID)))
    if A.ADK_TOOL_CALL_ARGS in view.attributes or A.ADK_TOOL_RESPONSE in view.attributes:
        if as_str(view.get(A.GEN_AI_TOOL_NAME)) in SYNTHETIC_TOOL_NAMES:
            # The merged span's args and response are no call's (not even JSON).
            return base.fill(Decoded(kind=SpanKind.CHAIN))
        args = view.load(A.ADK_TOOL_CALL_ARGS, problems)
        response = view.load(A.ADK_TOOL_RESPONSE, problems)
        return base.fill(Decoded(kind=SpanKind.TOOL, tool_execution=execution(
            as_str(view.get(A.GEN_AI_TOOL_NAME)) or view.name.removeprefix("execute_tool "),
            as_str(view.get(A.GEN_AI_TOOL_CALL_ID)), args,
            None if response is None else result_text(response),
        )))
    request = view.load(A.ADK_LLM_REQUEST, problems)
    if not isinstance(request, dict) or not request.get("contents"):
        return base
    config = request.get("config") if isinstance(request.get("config"), dict) else {}
    assert isinstance(config, dict)
    response = view.load(A.ADK_LLM_RESPONSE, problems)
    outputs = None
    usage: dict[str, Any] = {}
    if isinstance(response, dict) and isinstance(response.get("content"), dict):
        finish = as_str(response.get("finish_reason"))
        outputs = parse_messages({**response["content"], "finish_reason": finish},
                                 A.ADK_LLM_RESPONSE, problems)
        usage = response.get("usage_metadata") or {}
    tools = config.get("tools")
    return base.fill(Decoded(
        kind=SpanKind.LLM,
        model=as_str(request.get("model")),
        input_messages=parse_messages(request["contents"], A.ADK_LLM_REQUEST, problems),
        output_messages=outputs,
        system_instructions=instructions_text(config.get("system_instruction")),
        tool_definitions=None if tools is None
        else parse_tool_defs(tools, A.ADK_LLM_REQUEST, problems),
        input_tokens=as_int(usage.get("prompt_token_count")),
        output_tokens=as_int(usage.get("candidates_token_count")),
    ))


ADK = Convention("google-adk", _adk_decode, markers=frozenset({
    A.ADK_LLM_REQUEST, A.ADK_TOOL_CALL_ARGS, A.ADK_TOOL_RESPONSE,
}), content_keys=(
    A.ADK_LLM_REQUEST, A.ADK_LLM_RESPONSE, A.ADK_TOOL_CALL_ARGS, A.ADK_TOOL_RESPONSE,
))
