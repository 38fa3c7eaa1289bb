"""Pydantic Logfire's own span forms (pydantic/logfire, read at 4.41 and 5.4), and the JSON
schema it declares beside every structured attribute (`declared_structured`), which
Pydantic AI's spans carry too.

- LLM providers (`logfire.instrument_openai()`, `instrument_anthropic()`) with `version=1`
  (4.x's default): the request body in `request_data` (chat and Anthropic messages, tools,
  system; a legacy completion's prompt), the answer in `response_data` (`{message, usage}`,
  a stream's combined text, which drops its calls, a completion's text), the Responses
  API's input and output items in `events`. A streamed request's span is structure
  (`stream` in its body; with `version=2` or `'latest'` alone, no answer, usage or
  exception): the `streaming response from ...` log reports that call. Anthropic
  tool-call arguments come wrapped as `{"input": {...}}`. Logfire's `gen_ai.*` attributes
  (4.19+; messages only with `version=2`, 5.4's default, or `'latest'`, `request_data`
  then only the model) are `otel_genai`'s. Under Pydantic AI's chat span the request span
  is the same call (`turnscore.ingest.calls`, rule 2).
- the OpenAI Agents SDK bridge (`logfire.instrument_openai_agents()`), told by its
  message templates: `Responses API` spans (input items in `raw_input`, the `Response`
  with output, instructions and tools in `response`), `Chat completion` spans (`input`
  and `output` messages; their `request_data` joins both), `Function:` spans (arguments
  and result), `Agent run:` and `Turn ... for agent` spans (agent name, tool names, the
  SDK's span `error`), the trace span (`group_id` as conversation). A streamed
  chat-completions generation's `output` is the `Response` the SDK built from the chunks.
  Logfire's `instrument_claude_agent_sdk()` writes OTel GenAI attributes: `otel_genai`'s.

Recorded (`tests/fixtures/stacks/`): `instrument_anthropic` (`anthropic-logfire*`),
`instrument_openai` (`logfire-openai*`: chat completions and Responses, plain and streamed)
and `instrument_openai_agents` (`logfire-openai-agents*`), Logfire 5.4. Its scrubbing, on
as it ships, blanks whole values of the agents bridge's attributes (a request mentioning
"auth"); Logfire's own `gen_ai.*` messages are exempt.
"""

from __future__ import annotations

from typing import Any

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    hosted_parts,
    instructions_text,
    merge_assistant,
    parse_messages,
    parse_tool_defs,
    system_text,
    text_message,
)
from turnscore.ingest.conventions.values import (
    JsonValue,
    as_str,
    result_text,
    try_json,
    usage_tokens,
)
from turnscore.ingest.model import Message, Part, PartType, SpanKind, ToolDef


def declared_structured(view: SpanView, types: tuple[str, ...] = ("object", "array")
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


# --- Logfire LLM providers ----------------------------------------------------------
# pydantic/logfire `logfire/_internal/integrations/llm_providers/openai.py`, `anthropic.py`
# and `llm_provider.py` (read at 4.41): one span per request, named by its message template
# ("Chat Completion with {request_data[model]!r}", "Responses API with ...", "Completion
# with ...", "Message with ..." for Anthropic), every dict attribute JSON text.


def _logfire_decode(view: SpanView, problems: Problems) -> Decoded:
    if (sdk_span := agents_span(view)) is not None:
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
    usage = response.get("usage")
    input_tokens = output_tokens = None
    # Logfire's own count (`gen_ai.usage.*`) first: the decoder's generic keys read it.
    if A.GEN_AI_USAGE_INPUT_TOKENS not in view.attributes and isinstance(usage, dict):
        input_tokens, output_tokens = usage_tokens(usage)
    known_model = not {A.GEN_AI_RESPONSE_MODEL, A.GEN_AI_REQUEST_MODEL}.isdisjoint(view.attributes)
    return Decoded(
        kind=SpanKind.LLM,
        input_messages=history,
        output_messages=outputs,
        system_instructions=instructions_text(request.get("system")) or system_text(history),
        tool_definitions=None if request.get("tools") is None
        else parse_tool_defs(request["tools"], A.LOGFIRE_REQUEST_DATA, problems),
        model=None if known_model else as_str(request.get("model")),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def _stream_request(view: SpanView, request: dict[str, Any]) -> bool:
    """The span of a streamed request, not the log of its answer: the body says `stream`.
    With `version=2` (5.4's default) or `'latest'` alone the body is only the model: a chat
    span with no answer, no usage and no exception is then a stream's (a returned call has
    both, a failed one records its exception)."""
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
        return tuple(text_message("user", p)
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
    return history, merge_assistant(answer) if answer else None


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


def agents_span(view: SpanView) -> str | None:
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
        output = _generation_output(view.load(A.LOGFIRE_AGENTS_OUTPUT, problems))
        return Decoded(
            kind=SpanKind.LLM, input_messages=inputs, system_instructions=system_text(inputs),
            output_messages=None if not output
            else merge_assistant(parse_messages(output, A.LOGFIRE_AGENTS_OUTPUT, problems)),
            error=error,
        )
    if sdk_span == "function":
        name = as_str(view.get(A.LOGFIRE_AGENTS_NAME)) or view.name
        output = view.get(A.LOGFIRE_AGENTS_OUTPUT)
        if isinstance(output, str) and A.LOGFIRE_AGENTS_OUTPUT in declared_structured(
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


def _generation_output(output: JsonValue) -> JsonValue:
    """A generation's output: the chat message returned, or for a streamed call the
    `Response` the SDK built from the chunks (openai-agents `models/_trace.py`,
    `populate_generation_span`: `[final_response.model_dump()]`), read as its output items."""
    if not isinstance(output, list):
        return output
    items: list[JsonValue] = []
    for item in output:
        produced = item.get("output") if isinstance(item, dict) \
            and item.get("object") == "response" else None
        if isinstance(produced, list):
            items.extend(i for i in map(_responses_item, produced) if i is not None)
        else:
            items.append(item)
    return items


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
        answer = merge_assistant(parse_messages(produced, A.LOGFIRE_AGENTS_RESPONSE, problems))
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
    message and no call (reasoning). A function call and its output are linked by
    `call_id`; the item's own `id` names the item, not the call. A call the provider ran
    (`messages.hosted_parts`: web search, MCP, ...) is read as it is."""
    if not isinstance(item, dict):
        return item
    if item.get("type") in ("function_call", "function_call_output"):
        return {**item, "id": item.get("call_id")}
    return item if "role" in item or hosted_parts(item) is not None else None


def _is_logfire(view: SpanView) -> bool:
    return A.LOGFIRE_MSG_TEMPLATE in view.attributes or A.LOGFIRE_SPAN_TYPE in view.attributes


def _logfire_accepts(view: SpanView) -> bool:
    """A Logfire LLM-provider request (its body in `request_data`) or an OpenAI Agents
    SDK span (its message template)."""
    if A.LOGFIRE_REQUEST_DATA in view.attributes:
        return _is_logfire(view)
    return agents_span(view) is not None


LOGFIRE = Convention("logfire", _logfire_decode, markers=frozenset({
    A.LOGFIRE_REQUEST_DATA, A.LOGFIRE_MSG_TEMPLATE,
}), accepts=_logfire_accepts, content_keys=(
    A.LOGFIRE_REQUEST_DATA, A.LOGFIRE_RESPONSE_DATA, A.LOGFIRE_EVENTS,
    A.LOGFIRE_AGENTS_RAW_INPUT, A.LOGFIRE_AGENTS_RESPONSE, A.LOGFIRE_AGENTS_INPUT,
    A.LOGFIRE_AGENTS_OUTPUT,
))
