"""Framework forms layered on the standard conventions: Pydantic AI, Strands, MLflow, ADK
(Logfire's own forms: `turnscore.ingest.conventions.logfire`).

Each reads only its own attributes; the standard parts of the same spans (Pydantic AI's
chat spans, Strands' events, ADK's `gen_ai.tool.*`) are left to `otel_genai`.
- Pydantic AI: `pydantic_ai.all_messages` on the agent span (the whole conversation, the
  last assistant message being the answer), `final_result`, tools in
  `model_request_parameters.function_tools[].parameters_json_schema`, aggregated usage;
  0.x's default event mode, the older per-message events as JSON arrays (`events` on chat
  spans, `all_messages_events` on the agent span: `_pydantic_events`).
- Strands: per-called-tool `gen_ai.tool.json_schema`, tool names in `gen_ai.agent.tools`;
  1.0's system prompt as `system_prompt` on the agent span (`_strands_system_prompt`).
- MLflow: every value JSON-encoded; full request/response in `mlflow.spanInputs/Outputs`;
  an Agents SDK agent's span named after the agent (`_agents_sdk_agent`);
  a streamed call's chunks as `mlflow.chunk.item.N` span events; the tools as sent in the
  request's kwargs or LangChain's `invocation_params` (also under MLflow's GenAI translation).
- Google ADK: Gemini request/response JSON in `gcp.vertex.agent.llm_request/llm_response`,
  tool args and response in `gcp.vertex.agent.tool_call_args/tool_response`. ADK Python
  dumps its pydantic models in snake_case (`system_instruction`, `usage_metadata`); ADK for
  TypeScript (`@google/adk`) writes the same attributes with `JSON.stringify` of the
  `@google/genai` objects, in their camelCase (`systemInstruction`, `usageMetadata`,
  `promptTokenCount`, `finishReason`: google/adk-js `core/src/telemetry/tracing.ts`,
  `traceCallLlm` / `buildLlmRequestForTrace`), so each field is read under either name
  (`_adk_field`).
"""

from __future__ import annotations

from typing import Any

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import ContentEvent, Convention, Decoded, SpanView
from turnscore.ingest.conventions.langsmith import graph_agent, run_metadata, run_thread
from turnscore.ingest.conventions.logfire import agents_span, declared_structured
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    instructions_text,
    merge_assistant,
    parse_messages,
    parse_tool_defs,
    system_text,
    text_message,
)
from turnscore.ingest.conventions.otel_genai import MESSAGE_EVENT_NAMES, event_message
from turnscore.ingest.conventions.values import (
    SYNTHETIC_TOOL_NAMES,
    JsonValue,
    as_int,
    as_str,
    json_or_text,
    result_text,
    try_json,
)
from turnscore.ingest.model import Message, SpanKind, ToolDef, ToolExecution


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
    decoded = decoded.fill(_pydantic_events(view, problems))
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
            Decoded(output_messages=(text_message("assistant", text),))
        )
    params = view.load(A.PYDANTIC_AI_MODEL_REQUEST_PARAMETERS, problems)
    if isinstance(params, dict) and isinstance(params.get("function_tools"), list):
        tools = parse_tool_defs(params["function_tools"], "function_tools", problems)
        decoded = decoded.fill(Decoded(tool_definitions=tools))
    return decoded



def _pydantic_events(view: SpanView, problems: Problems) -> Decoded:
    """Pydantic AI 0.x's messages in its default event mode (`event_mode='attributes'`): the
    older per-message OTel events as one JSON array of `{**body, "event.name": ...}` on each
    chat span (`events`: the request's messages, its answer a `gen_ai.choice`), and the whole
    conversation on the agent-run span (`all_messages_events`: every message an event, the
    last assistant one the answer; the agent named `agent_name`) (pydantic/pydantic-ai 0.4
    `pydantic_ai/models/instrumented.py`, `_emit_events`, `event_to_dict`;
    `pydantic_ai/agent.py`, `iter` and `_run_span_end_attributes`). Each is read as the
    event it was (`otel_genai`'s reader)."""
    chat = _attribute_events(view, A.PYDANTIC_AI_EVENTS, problems)
    if chat is not None:
        inputs = tuple(m for name, m in chat if name != A.EV_CHOICE)
        outputs = tuple(m for name, m in chat if name == A.EV_CHOICE)
        return Decoded(input_messages=inputs, output_messages=outputs or None,
                       system_instructions=system_text(inputs))  # fmt: skip
    run = _attribute_events(view, A.PYDANTIC_AI_ALL_MESSAGES_EVENTS, problems)
    if run is None:
        return Decoded()
    history, answer = _split_answer(tuple(m for _, m in run))
    return Decoded(
        kind=SpanKind.AGENT, input_messages=history, output_messages=answer or None,
        system_instructions=system_text(history),
        model=as_str(view.get(A.PYDANTIC_AI_MODEL_NAME)),
        agent_name=as_str(view.get(A.PYDANTIC_AI_AGENT_NAME)),
    )  # fmt: skip


def _attribute_events(
    view: SpanView, key: str, problems: Problems
) -> list[tuple[str, Message]] | None:
    """(event name, message) of each older per-message event in the JSON array at `key`;
    None where the key holds no such array (Logfire's Responses spans use `events` too, for
    message dicts without event names)."""
    raw = view.load(key, problems)
    if not isinstance(raw, list) or not raw:
        return None
    named = [e for e in raw if isinstance(e, dict) and isinstance(e.get(A.EVENT_NAME), str)]
    if len(named) != len(raw):
        return None
    messages = []
    for i, item in enumerate(named):
        name = str(item[A.EVENT_NAME])
        if name not in MESSAGE_EVENT_NAMES:
            continue
        fields = {k: v for k, v in item.items() if k != A.EVENT_NAME}
        event = ContentEvent(name, 0, fields)
        message = event_message(event, f"{key}[{i}] {name}", problems)
        if message is not None:
            messages.append((name, message))
    return messages


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
        if isinstance(value, str) and keys[0] in declared_structured(view):
            # Logfire stores a structured result as JSON text; render it as chat spans do.
            ok, parsed = try_json(value)
            result = result_text(parsed) if ok and isinstance(parsed, dict | list) else value
    return execution(name, as_str(view.get(A.GEN_AI_TOOL_CALL_ID)), arguments, result)


def _pydantic_accepts(view: SpanView) -> bool:
    """Every Logfire span with a structured attribute carries its JSON schema: Logfire's
    LLM-provider and OpenAI Agents SDK spans do too, and are no Pydantic AI span. Pydantic
    AI writes the schema (and `logfire.msg`) itself on its own tracer's spans, never a
    message template (pydantic/pydantic-ai `pydantic_ai/_instrumentation.py`,
    `capabilities/instrumentation.py`); a span made through Logfire's API names its
    template, so one marked by the schema alone is another integration's (Logfire's
    `instrument_claude_agent_sdk()`: OTel GenAI attributes, `otel_genai`'s)."""
    if A.LOGFIRE_REQUEST_DATA in view.attributes or agents_span(view) is not None:
        return False
    return A.LOGFIRE_MSG_TEMPLATE not in view.attributes or not _PYDANTIC_OWN.isdisjoint(
        view.attributes)


_PYDANTIC_OWN = frozenset({
    A.PYDANTIC_AI_ALL_MESSAGES, A.PYDANTIC_AI_MODEL_REQUEST_PARAMETERS,
    A.PYDANTIC_AI_TOOL_ARGUMENTS, A.PYDANTIC_AI_TOOL_RESPONSE,
})  # fmt: skip
"""Keys only Pydantic AI writes (older releases made their spans through Logfire's API)."""


PYDANTIC_AI = Convention("pydantic-ai", _pydantic_decode, markers=_PYDANTIC_OWN | {
    A.LOGFIRE_JSON_SCHEMA,
}, accepts=_pydantic_accepts, content_keys=(
    A.PYDANTIC_AI_ALL_MESSAGES, A.PYDANTIC_AI_ALL_MESSAGES_EVENTS, A.PYDANTIC_AI_EVENTS,
    A.PYDANTIC_AI_FINAL_RESULT,
    A.PYDANTIC_AI_MODEL_REQUEST_PARAMETERS, A.PYDANTIC_AI_TOOL_ARGUMENTS,
    A.PYDANTIC_AI_TOOL_RESPONSE,
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
        return Decoded(tool_definitions=tuple(ToolDef(str(n)) for n in names if n),
                       system_instructions=_strands_system_prompt(view))  # fmt: skip
    return Decoded()


def _strands_system_prompt(view: SpanView) -> str | None:
    """The agent's system prompt as Strands 1.0 records it, before the convention's
    `gen_ai.system_instructions`: the keyword `system_prompt` its agent passes
    `Tracer.start_agent_span`, which sets every plain keyword as an attribute of the
    invoke_agent span (strands-agents 1.0 `strands/agent/agent.py`,
    `_start_agent_trace_span`; `strands/telemetry/tracer.py`, `start_agent_span`); its chat
    spans' message events leave it out. Read on the span that names the agent's tools, so a
    plain `system_prompt` key elsewhere is not taken for it."""
    text = as_str(view.get(A.STRANDS_SYSTEM_PROMPT))
    return text if text and text.strip() else None


STRANDS = Convention("strands", _strands_decode, markers=frozenset({
    A.STRANDS_TOOL_JSON_SCHEMA, A.STRANDS_AGENT_TOOLS,
}), content_keys=(A.STRANDS_SYSTEM_PROMPT,))

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
    metadata = run_metadata(view.get(A.MLFLOW_LANGCHAIN_METADATA))
    base = Decoded(
        kind=kind,
        model=model,
        agent_name=graph_agent(view.name, metadata.get) or _agents_sdk_agent(view, kind),
        conversation_id=run_thread(metadata),
        input_tokens=as_int(usage.get("input_tokens")),
        output_tokens=as_int(usage.get("output_tokens")),
    )
    if kind is SpanKind.TOOL:
        return base.fill(Decoded(tool_execution=execution(
            view.name, None, inputs, None if outputs is None else result_text(outputs))))
    messages_in = _mlflow_request(inputs, problems)
    messages_out = _mlflow_response(_mlflow_stream(view) or outputs, problems)
    chat = json_or_text(view.get(A.MLFLOW_CHAT_MESSAGES))
    if messages_in is None and isinstance(chat, list):
        # Older MLflow: the whole exchange, answer last, in one standardized list.
        history, answer = _split_answer(parse_messages(chat, A.MLFLOW_CHAT_MESSAGES, problems))
        messages_in, messages_out = history, messages_out or answer or None
    tools_raw = _mlflow_tools_sent(view, inputs)
    return base.fill(Decoded(
        input_messages=messages_in,
        output_messages=messages_out,
        system_instructions=system_text(messages_in),
        tool_definitions=None if tools_raw is None
        else parse_tool_defs(tools_raw, A.MLFLOW_CHAT_TOOLS, problems),
    ))




def _agents_sdk_agent(view: SpanView, kind: SpanKind | None) -> str | None:
    """An OpenAI Agents SDK agent span under MLflow's autolog: an AGENT span named after the
    agent (`span_data.name`), with the agent's `handoffs` and `output_type` as attributes
    (mlflow `openai/_agent_tracer.py`, `_get_span_name`, `_parse_span_data`). The AGENT
    spans above it name no agent: the run's root (`AgentRunner.run`, `run_streamed`) is
    named after the method, a user's `agents.trace` after the trace."""
    if kind is not SpanKind.AGENT or not all(
            k in view.attributes for k in (A.MLFLOW_AGENT_HANDOFFS, A.MLFLOW_AGENT_OUTPUT_TYPE)):
        return None
    return view.name or None


def _mlflow_tools_sent(view: SpanView, inputs: JsonValue) -> JsonValue:
    """The tools as the request sent them. `mlflow.chat.tools` is MLflow's `ChatTool` model
    of them (mlflow `types/chat.py`): a parameter schema keeps only the keywords it models
    (`default` is dropped). The OpenAI integration's inputs are the request's keyword
    arguments (mlflow `openai/autolog.py`); the LangChain tracer writes the callback's
    kwargs as attributes, `invocation_params.tools` among them (`langchain/langchain_tracer.py`,
    `on_chat_model_start`)."""
    for holder in (inputs, json_or_text(view.get(A.MLFLOW_INVOCATION_PARAMS))):
        if isinstance(holder, dict) and isinstance(holder.get("tools"), list):
            return holder["tools"]
    return json_or_text(view.get(A.MLFLOW_CHAT_TOOLS))


_CHAT_CHUNK = "chat.completion.chunk"


def _mlflow_stream(view: SpanView) -> JsonValue:
    """The chat completion a streamed call's chunks add up to, or None. MLflow records each
    chunk as a span event `mlflow.chunk.item.N` (`mlflow.chunk.value`, JSON) and puts in
    `mlflow.spanOutputs` its own reconstruction, which keeps the text only: no tool calls,
    finish reason "stop" (mlflow 3.17 `openai/autolog.py`,
    `_reconstruct_completion_from_stream`). Chat completion chunks are merged as the
    OpenAI SDK merges them: text and arguments appended, a tool call per delta index."""
    values = [json_or_text(e.fields.get(A.MLFLOW_CHUNK_VALUE)) for e in view.events
              if e.name.startswith(A.MLFLOW_CHUNK_EVENT_PREFIX)]  # fmt: skip
    chunks = [v for v in values if isinstance(v, dict) and v.get("object") == _CHAT_CHUNK]
    if not chunks:
        return None
    text: list[str] = []
    calls: dict[Any, dict[str, Any]] = {}
    finish = None
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            raw = choice.get("delta")
            delta: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for part in delta.get("tool_calls") or ():
                if not isinstance(part, dict):
                    continue
                call = calls.setdefault(part.get("index", len(calls)), {
                    "id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                call["id"] = part.get("id") or call["id"]
                named = part.get("function")
                fn: dict[str, Any] = named if isinstance(named, dict) else {}
                for key in ("name", "arguments"):
                    if isinstance(fn.get(key), str):
                        call["function"][key] += fn[key]
            finish = choice.get("finish_reason") or finish
    message = {"role": "assistant", "content": "".join(text) or None,
               "tool_calls": list(calls.values()) or None}
    return {"choices": [{"message": message, "finish_reason": finish}]}


def _roled(value: JsonValue) -> bool:
    """A list of role-keyed messages: what MLflow's Agents SDK processor records on a
    generation span, in and out (`mlflow.message.format` "openai-agent": mlflow
    `openai/_agent_tracer.py`)."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(m, dict) and "role" in m for m in value)


def _mlflow_request(inputs: JsonValue, problems: Problems) -> tuple[Message, ...] | None:
    if _roled(inputs):
        return parse_messages(inputs, A.MLFLOW_SPAN_INPUTS, problems)
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
    if _roled(outputs):
        return merge_assistant(parse_messages(outputs, A.MLFLOW_SPAN_OUTPUTS, problems))
    if isinstance(outputs, dict) and isinstance(outputs.get("choices"), list):
        items: list[Any] = [
            {**c["message"], "finish_reason": c.get("finish_reason")}
            for c in outputs["choices"]
            if isinstance(c, dict) and isinstance(c.get("message"), dict)
        ]
        return parse_messages(items, A.MLFLOW_SPAN_OUTPUTS, problems)
    if isinstance(outputs, dict) and isinstance(outputs.get("output"), list):
        return merge_assistant(parse_messages(outputs["output"], A.MLFLOW_SPAN_OUTPUTS, problems))
    return None



MLFLOW = Convention("mlflow", _mlflow_decode, markers=frozenset({
    # LangChain's kwargs stay beside the GenAI attributes MLflow translates its own into
    # (MLFLOW_ENABLE_OTEL_GENAI_SEMCONV), whose tool definitions are the lossy ChatTool's.
    A.MLFLOW_SPAN_TYPE, A.MLFLOW_SPAN_INPUTS, A.MLFLOW_INVOCATION_PARAMS,
}), content_keys=(
    A.MLFLOW_SPAN_INPUTS, A.MLFLOW_SPAN_OUTPUTS, A.MLFLOW_CHAT_TOOLS, A.MLFLOW_CHAT_MESSAGES,
))

# --- Google ADK ---------------------------------------------------------------------


def _adk_field(obj: dict[str, Any], snake: str) -> Any:
    """`obj[snake]`, else its camelCase twin (ADK for TypeScript's `JSON.stringify` of the
    genai objects; ADK Python's pydantic dump is snake_case)."""
    if snake in obj:
        return obj[snake]
    head, *rest = snake.split("_")
    return obj.get(head + "".join(w.capitalize() for w in rest))


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
        finish = as_str(_adk_field(response, "finish_reason"))
        outputs = parse_messages({**response["content"], "finish_reason": finish},
                                 A.ADK_LLM_RESPONSE, problems)
    if isinstance(response, dict) and isinstance(_adk_field(response, "usage_metadata"), dict):
        # A streamed call's record (ADK for TypeScript, SSE) is its last chunk: usage
        # without content.
        usage = _adk_field(response, "usage_metadata")
    tools = config.get("tools")
    return base.fill(Decoded(
        kind=SpanKind.LLM,
        model=as_str(request.get("model")),
        input_messages=parse_messages(request["contents"], A.ADK_LLM_REQUEST, problems),
        output_messages=outputs,
        system_instructions=instructions_text(_adk_field(config, "system_instruction")),
        tool_definitions=None if tools is None
        else parse_tool_defs(tools, A.ADK_LLM_REQUEST, problems),
        input_tokens=as_int(_adk_field(usage, "prompt_token_count")),
        output_tokens=as_int(_adk_field(usage, "candidates_token_count")),
    ))


ADK = Convention("google-adk", _adk_decode, markers=frozenset({
    A.ADK_LLM_REQUEST, A.ADK_TOOL_CALL_ARGS, A.ADK_TOOL_RESPONSE,
}), content_keys=(
    A.ADK_LLM_REQUEST, A.ADK_LLM_RESPONSE, A.ADK_TOOL_CALL_ARGS, A.ADK_TOOL_RESPONSE,
))
