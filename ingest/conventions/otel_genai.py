"""OTel GenAI semantic conventions: current attributes, both event forms, deprecated prompt.

Precedence inside the convention, newest form first:
1. `gen_ai.input.messages` / `output.messages` / `system_instructions` / `tool.definitions`,
   from span attributes (JSON strings) overlaid by `gen_ai.client.inference.operation.details`
   events (structured AnyValue; Strands sends one attribute per event, so all are merged);
   an output text that is the repr of the model's message dump (the OpenAI Agents SDK's
   official OTel bridge) is that message (`_dumped`);
2. the older per-message events (`gen_ai.system.message`, `user`, `assistant`, `tool`,
   `gen_ai.choice`), as log records or span events, in time order; a body sent as its
   JSON text (Semantic Kernel Python 1.19 and later, through Python `logging`; the Azure AI
   Inference SDK under `gen_ai.event.content`) is read as that body (`_body`);
3. the deprecated whole-prompt `gen_ai.prompt` / `gen_ai.completion`: span attributes, else
   the semconv 1.26/1.27 span events `gen_ai.content.prompt` / `gen_ai.content.completion`
   carrying the same keys. Their values are a message list, a request or response, plain
   text, or (prompts only, on OpenLIT's spans: `_is_openlit`) OpenLIT's `role: content`
   transcript (`prefixed_messages`). Emitters: OpenLIT 1.17 to 1.36 (openlit/openlit
   `sdk/python/src/openlit/instrumentation/*/`, `format_content`), Semantic Kernel Python
   1.8 to 1.18 (microsoft/semantic-kernel
   `python/semantic_kernel/utils/telemetry/model_diagnostics/decorators.py`, OpenAI-format
   JSON with tool calls and results, operation names `chat.completions` and kin, usage under
   `gen_ai.response.prompt_tokens`), Langtrace (`gen_ai.content.completion` only).
   OpenLIT lists a model call's requested calls on the span, content captured or not
   (`gen_ai.tool.name` / `.call.id` / `gen_ai.tool.args`, values joined by ", ").
On an `execute_tool` span the same events describe the execution, not a conversation; the
Google GenAI SDK's instrumentation records the tool function's Python call there instead
(`code.function.parameters.<param>.value`, `code.function.return.value`, `_code_call`).
OpenLIT's LangChain callback records arguments as a dict's repr (`_literal_arguments`) and
leaves a failed tool the run id for its call id (`_RUN_ID`).

(Over ~400 lines: the four generations of the convention above share their readers of
messages, tools and executions; apart, each would restate the precedence between them.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from itertools import pairwise

from msgspec.structs import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import ContentEvent, Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    continued_messages,
    execution,
    instructions_text,
    keep,
    model_said,
    parse_message,
    parse_messages,
    parse_tool_defs,
    remember_history,
    system_text,
    tool_call,
    unwrap_tool_input,
    unwrap_tool_output,
    whole_messages,
)
from turnscore.ingest.conventions.values import (
    ContentError,
    JsonValue,
    as_int,
    as_str,
    json_or_text,
    load,
    python_literal,
    result_text,
    structured,
    try_json,
)
from turnscore.ingest.model import Message, Part, PartType, SpanKind, ToolDef, ToolExecution
from turnscore.ingest.records import AttrValue

_KINDS = {
    A.OP_CHAT: SpanKind.LLM,
    A.OP_TEXT_COMPLETION: SpanKind.LLM,
    A.OP_GENERATE_CONTENT: SpanKind.LLM,
    A.OP_INVOKE_AGENT: SpanKind.AGENT,
    A.OP_INVOKE_WORKFLOW: SpanKind.CHAIN,
    A.OP_EXECUTE_TOOL: SpanKind.TOOL,
    # Declaring an agent is not running one; embeddings and retrieval are no steps of the
    # conversation (the table in turnscore.ingest.calls).
    A.OP_CREATE_AGENT: SpanKind.OTHER,
    A.OP_EMBEDDINGS: SpanKind.OTHER,
    A.OP_RETRIEVAL: SpanKind.OTHER,
    A.OP_SK_CHAT: SpanKind.LLM,
    A.OP_SK_CHAT_STREAMING: SpanKind.LLM,
    A.OP_SK_TEXT: SpanKind.LLM,
    A.OP_SK_TEXT_STREAMING: SpanKind.LLM,
    A.OP_LLM_REQUEST: SpanKind.LLM,
}
_CONTENT_KEYS = (
    A.GEN_AI_INPUT_MESSAGES,
    A.GEN_AI_OUTPUT_MESSAGES,
    A.GEN_AI_SYSTEM_INSTRUCTIONS,
    A.GEN_AI_TOOL_DEFINITIONS,
)
_MESSAGE_EVENTS = {
    A.EV_SYSTEM_MESSAGE: "system",
    A.EV_USER_MESSAGE: "user",
    A.EV_ASSISTANT_MESSAGE: "assistant",
    A.EV_TOOL_MESSAGE: "tool",
}
MESSAGE_EVENT_NAMES = frozenset({*_MESSAGE_EVENTS, A.EV_CHOICE})
"""The older per-message events `event_message` reads."""
_WHOLE_EVENTS = {A.EV_CONTENT_PROMPT: A.GEN_AI_PROMPT, A.EV_CONTENT_COMPLETION: A.GEN_AI_COMPLETION}
_MODEL_CALL_EVENTS = frozenset({A.EV_CHOICE, A.EV_OPERATION_DETAILS, A.EV_CONTENT_COMPLETION})


def decode(view: SpanView, problems: Problems) -> Decoded:
    operation = as_str(view.get(A.GEN_AI_OPERATION_NAME))
    if view.name.partition(" ")[0] == A.OP_EXECUTE_TASK:
        # An agent's task step, as its name says, whatever operation it claims: OpenLIT's AG2
        # instrumentation names an agent's generate_reply, receive and send so and sets them
        # `chat` (openlit `instrumentation/ag2/utils.py`), though the model calls are the
        # OpenAI client's own spans below them.
        operation = A.OP_EXECUTE_TASK
    kind = _KINDS.get(operation or "", SpanKind.OTHER if operation else None)
    if kind is SpanKind.TOOL and A.GEN_AI_AGENT_LIFECYCLE_PHASE in view.attributes \
            and A.GEN_AI_TOOL_NAME not in view.attributes:
        # A phase of an agent's run that names no tool is no tool's run: OpenLIT's Pydantic
        # AI node spans (`execute_tool <model>`: the graph's CallToolsNode, which runs every
        # call the model asked for, or none for its answer; openlit
        # `instrumentation/pydantic_ai/utils.py`, `common_internal_node`).
        return Decoded(kind=SpanKind.CHAIN)
    if kind is SpanKind.TOOL:
        execution = tool_execution(view, problems)
        description = as_str(view.get(A.GEN_AI_TOOL_DESCRIPTION))
        # The tool span describes the tool it ran; its schema is not part of the convention.
        definition = (ToolDef(execution.name, description),) if description else None
        return Decoded(kind=kind, tool_execution=execution, tool_definitions=definition)
    merged = current(view, problems, kind)
    # The older forms are read only where present: most spans carry neither.
    if any(e.name in _MESSAGE_EVENTS or e.name == A.EV_CHOICE for e in view.events):
        merged = merged.fill(_message_events(view, problems))
    if (A.GEN_AI_PROMPT in view.attributes or A.GEN_AI_COMPLETION in view.attributes
            or any(e.name in _WHOLE_EVENTS for e in view.events)):
        merged = merged.fill(_deprecated(view, problems))
    if operation is None and _is_model_call(view):
        merged = merged.fill(Decoded(kind=SpanKind.LLM))
    # Listed whether or not content is captured: OpenLIT records calls regardless.
    if merged.kind is SpanKind.LLM and A.GEN_AI_TOOL_ARGS in view.attributes:
        calls = _listed_calls(view)
        if calls:
            merged = replace(merged, output_messages=_with_calls(merged.output_messages or (),
                                                                 calls))
    if operation == A.OP_INVOKE_WORKFLOW and \
            as_str(view.get(A.GEN_AI_PROVIDER_NAME)) == A.LANGGRAPH_INTEGRATION:
        # A LangGraph graph is the agent; the `invoke_agent` spans below it name its nodes
        # (a ReAct graph's `agent`), which every such app shares (OpenLIT 1.45).
        merged = replace(merged, agent_name=as_str(view.get(A.GEN_AI_WORKFLOW_NAME)))
    if A.GEN_AI_RESPONSE_PROMPT_TOKENS in view.attributes:  # Semantic Kernel before 1.19
        merged = merged.fill(Decoded(
            input_tokens=as_int(view.get(A.GEN_AI_RESPONSE_PROMPT_TOKENS)),
            output_tokens=as_int(view.get(A.GEN_AI_RESPONSE_COMPLETION_TOKENS))))
    return merged


def _is_model_call(view: SpanView) -> bool:
    """Without an operation name, only model calls carry a completion or choice events.

    A non-standard operation name (Strands' `execute_event_loop_cycle`, OpenLLMetry's
    `execute_task`) is not a model call even when it repeats the messages. Nor is a span
    whose operation-details events tell only what went in: Strands for TypeScript's
    `execute_agent_loop_cycle` span (no operation name) records the history a cycle starts
    from as a `gen_ai.client.inference.operation.details` event with `gen_ai.input.messages`
    alone (strands-agents/sdk-typescript `src/telemetry/tracer.ts`, `startAgentLoopSpan`,
    `@strands-agents/sdk` 1.19): the conversation so far, which for a turn's first cycle
    lacks the turn's request, not what a model was sent.
    """
    return (
        A.GEN_AI_COMPLETION in view.attributes
        or A.GEN_AI_OUTPUT_MESSAGES in view.attributes
        or any(e.name in _MODEL_CALL_EVENTS and _tells_output(e) for e in view.events)
    )


def _tells_output(event: ContentEvent) -> bool:
    """Whether a model-call event says what came back: an operation-details event only
    when it carries output messages (a choice or completion event always does)."""
    return event.name != A.EV_OPERATION_DETAILS or A.GEN_AI_OUTPUT_MESSAGES in event.fields


def content_attributes(view: SpanView) -> Mapping[str, AttrValue]:
    """Span attributes overlaid with every operation-details event's attributes."""
    merged: dict[str, AttrValue] = {k: view.attributes[k] for k in _CONTENT_KEYS
                                    if k in view.attributes}
    for event in view.events:
        if event.name == A.EV_OPERATION_DETAILS:
            merged.update({k: event.fields[k] for k in _CONTENT_KEYS if k in event.fields})
    return merged


def current(view: SpanView, problems: Problems, kind: SpanKind | None = None) -> Decoded:
    """The current attributes (and operation-details events): messages, instructions, tools."""
    attrs = content_attributes(view)
    inputs = _calls_joined(_messages(attrs, A.GEN_AI_INPUT_MESSAGES, problems, history=True,
                                     transcript=_is_openlit(view)))
    outputs = _calls_joined(model_said(_messages(attrs, A.GEN_AI_OUTPUT_MESSAGES, problems)))
    if outputs and any(p.text and p.text.startswith("{'") for m in outputs for p in m.parts):
        outputs = tuple(_dumped(m, problems) for m in outputs)
    if view.name == A.TL_RESPONSES_SPAN and A.TL_IS_STREAMING in view.attributes:
        inputs, outputs = _item_ids_dropped(inputs), _item_ids_dropped(outputs)
    if _is_openlit(view) and as_str(view.get(A.GEN_AI_PROVIDER_NAME)) == A.OPENLIT_GEMINI:
        inputs, outputs = _openlit_gemini(inputs), _openlit_gemini(outputs)
    tools = _definitions(attrs, problems)
    own = view.get(A.GEN_AI_TOOL_DEFINITIONS)
    if tools and own is not None and own is not attrs.get(A.GEN_AI_TOOL_DEFINITIONS):
        # An event overlaid the span's own definitions (ADK's log records drop the schemas
        # the span attribute has): what the event lacks comes from the span.
        tools = _fill_definitions(tools, _span_definitions(own))
    # JSON parts by the convention; OpenLLMetry's LangGraph instrumentation sends the plain
    # text, which is the instructions as they are.
    instructions = json_or_text(attrs.get(A.GEN_AI_SYSTEM_INSTRUCTIONS))
    return Decoded(
        kind=kind,
        input_messages=inputs,
        output_messages=outputs,
        system_instructions=instructions_text(instructions) or system_text(inputs),
        tool_definitions=tools,
    )


def _messages(
    attrs: Mapping[str, AttrValue], key: str, problems: Problems, history: bool = False,
    transcript: bool = False,
) -> tuple[Message, ...] | None:
    """The messages under `key`; with `history`, a JSON text continuing an input seen
    before is parsed only where it is new (`continued_messages`).

    Prose where the JSON belongs is what it says: OpenLIT 1.37 and later send most
    providers' messages as its `role: content` transcript here (openlit/openlit
    `sdk/python/src/openlit/instrumentation/*/utils.py`), read as one (`transcript`) on
    OpenLIT's spans only; anyone else's prose is one message. Broken JSON (text opening
    with `[` or `{`) is reported instead: read as prose it would be garbage."""
    text = attrs.get(key)
    if isinstance(text, str) and text.strip() and text.lstrip()[0] not in "[{":
        return whole_messages(text, "user" if history else "assistant", key, problems,
                              prefixed=history and transcript)
    memo = text if history and isinstance(text, str) else None
    if memo is not None and (known := continued_messages(memo, key)) is not None:
        return known
    before = len(problems)
    raw = load(attrs, key, problems)
    if raw is None:
        return None
    if not history and isinstance(raw, list):
        raw = [_roleless_as_model(m) for m in raw]
    messages = parse_messages(raw, key, problems)
    if memo is not None and len(problems) == before:
        remember_history(memo, messages)
    return messages


def _roleless_as_model(message: JsonValue) -> JsonValue:
    """An output message naming no role (`"role": null`) is the model's, as every output
    message is: Logfire's streamed OpenAI chat output is the OpenAI SDK's accumulated
    snapshot (pydantic/logfire `llm_providers/openai.py`, `OpenaiChatCompletionStreamState`),
    whose role is null when no chunk said one, and the concatenation of every chunk's role
    when each repeated it (`openai/lib/streaming/_deltas.py`, `accumulate_delta`): the
    latter, no known role, is `model_said`'s."""
    if isinstance(message, dict) and message.get("role") is None:
        return {**message, "role": "assistant"}
    return message


def _calls_joined(messages: tuple[Message, ...] | None) -> tuple[Message, ...] | None:
    """An assistant message of tool calls alone, right after an assistant message, is part
    of it: the convention gives one assistant message per model answer, with all its parts.

    A Responses API input is a list of items, each answer's text a `message` item and each
    call a `function_call` item of its own, and OpenLLMetry replays every item as a message
    (opentelemetry-instrumentation-openai 0.62.4, traceloop/openllmetry
    `instrumentation/openai/v1/responses_wrappers.py`, `set_data_attributes`), while its
    output of the same answer is one message: split, the replay would not extend the
    history that output left (`links`). Logfire's output of a Responses call is split the
    same way, one message per output item (logfire 5.4 `llm_providers/openai.py`,
    `convert_responses_outputs_to_semconv`), and is joined alike."""
    if not messages or not any(_calls_only(b) and a.role == "assistant"
                               for a, b in pairwise(messages)):  # fmt: skip
        return messages
    joined: list[Message] = []
    for m in messages:
        if joined and joined[-1].role == "assistant" and _calls_only(m):
            last = joined[-1]
            joined[-1] = Message(last.role, last.parts + m.parts, last.finish_reason)
        else:
            joined.append(m)
    return tuple(joined)


def _item_ids_dropped(messages: tuple[Message, ...] | None) -> tuple[Message, ...] | None:
    """The OpenAI instrumentation's Responses spans without their tool calls' ids, which name
    no call for sure: a `function_call` item has its own `id` (`fc_...`) beside the
    `call_id` its `function_call_output` answers, and the tool call parts carry the output
    item's `id`, and in the input the item's `id`, or its `call_id` where the app sent the
    item without one (opentelemetry-instrumentation-openai 0.62.4 `v1/responses_wrappers.py`,
    `set_data_attributes`). Kept, a replay would not extend the history its output left
    (`links`) where the app rebuilt its items (langchain-openai's
    `_construct_responses_api_input`: the `id` only where it kept them); the results'
    `call_id` names the calls (`linking.attach_results`). The Agents SDK bridge's spans keep
    theirs: its output names the `call_id`, and a run is one trace."""
    if not messages or not any(p.call_id for m in messages for p in m.tool_calls):
        return messages
    return tuple(
        Message(m.role, tuple(replace(p, call_id=None) if p.type is PartType.TOOL_CALL else p
                              for p in m.parts), m.finish_reason)
        if any(p.call_id for p in m.tool_calls) else m
        for m in messages
    )


def _calls_only(message: Message) -> bool:
    return message.role == "assistant" and bool(message.parts) and all(
        p.type is PartType.TOOL_CALL for p in message.parts
    )


def _dumped(message: Message, problems: Problems) -> Message:
    """An output whose text is the repr of the model's message dump is that message.

    The OpenAI Agents SDK's official OTel bridge writes `str(item)` for an output item that
    has no text, so a chat completion that only asks for tools arrives as the text
    `{'content': None, 'role': 'assistant', 'tool_calls': [...]}`
    (opentelemetry-instrumentation-openai-agents-v2 0.1.0, open-telemetry/
    opentelemetry-python-contrib `instrumentation-genai/opentelemetry-instrumentation-
    openai-agents-v2/.../span_processor.py`, `_normalize_output_messages_to_role_parts`).
    Read back only when it is an assistant message's dump (its role and its calls), so an
    answer that quotes a dict stays the answer."""
    if message.role != "assistant":
        return message
    parts: list[Part] = []
    for part in message.parts:
        dump = python_literal(part.text) if part.type is PartType.TEXT and part.text else None
        if isinstance(dump, dict) and dump.get("role") == "assistant" and "tool_calls" in dump:
            read = parse_message(dump, A.GEN_AI_OUTPUT_MESSAGES, problems)
            parts.extend(read.parts if read is not None else (part,))
        else:
            parts.append(part)
    return Message(message.role, tuple(parts), message.finish_reason)


def _definitions(attrs: Mapping[str, AttrValue], problems: Problems) -> tuple[ToolDef, ...] | None:
    """`gen_ai.tool.definitions`, each text parsed once (`_TOOLS_CACHE`)."""
    text = attrs.get(A.GEN_AI_TOOL_DEFINITIONS)
    if isinstance(text, str) and text in _TOOLS_CACHE:
        return _TOOLS_CACHE[text]
    before = len(problems)
    raw = load(attrs, A.GEN_AI_TOOL_DEFINITIONS, problems)
    tools = None if raw is None else parse_tool_defs(raw, A.GEN_AI_TOOL_DEFINITIONS, problems)
    if isinstance(text, str) and len(problems) == before:
        keep(_TOOLS_CACHE, _TOOLS_CACHE_SIZE, text, tools)
    return tools


def _span_definitions(value: AttrValue) -> tuple[ToolDef, ...]:
    try:
        return parse_tool_defs(structured(value, A.GEN_AI_TOOL_DEFINITIONS),
                               A.GEN_AI_TOOL_DEFINITIONS, [])
    except ContentError:
        return ()


def _fill_definitions(
    tools: tuple[ToolDef, ...], other: tuple[ToolDef, ...]
) -> tuple[ToolDef, ...]:
    by_name = {t.name: t for t in other}
    out = []
    for t in tools:
        o = by_name.get(t.name)
        out.append(t if o is None else ToolDef(
            t.name, t.description or o.description, t.parameters or o.parameters))
    return tuple(out)


_TOOLS_CACHE: dict[str, tuple[ToolDef, ...] | None] = {}
_TOOLS_CACHE_SIZE = 256
"""Every agent and model span of an agent repeats the same `gen_ai.tool.definitions`
text: it is parsed once. Bounded; cleared whole when full. Only clean parses are kept,
so a problem is reported on every span that has it, in its place."""


def _field(fields: Mapping[str, JsonValue], key: str) -> JsonValue:
    """An event field; span-event attributes carry JSON strings where log bodies nest."""
    value = fields.get(key)
    if isinstance(value, str) and key in ("tool_calls", "message"):
        ok, parsed = try_json(value)
        if ok and isinstance(parsed, dict | list):
            return parsed
    return value


_BODY_KEYS = ("role", "message", "tool_calls", "id", "finish_reason")
"""Fields of an older per-message event's body besides `content`."""


def _body(event: ContentEvent) -> Mapping[str, JsonValue]:
    """The event's fields, or the body it carries as JSON text in their place.

    Semantic Kernel Python (1.19 and later) logs these events through Python `logging`, the
    message the JSON text of the whole body: `json.dumps(message.to_dict())`, an OpenAI-form
    message with its role, and for a choice `{"message": ..., "finish_reason": ...}`
    (microsoft/semantic-kernel `python/semantic_kernel/utils/telemetry/model_diagnostics/
    decorators.py`, `_set_completion_input` / `_set_completion_response`). The OTel logging
    handler exports that text as a string body, which reaches here as `content`. It is the
    body only where no body field sits beside it and it names the event's own role (a
    choice: holds a message object), so a user who typed JSON still said JSON.

    The Azure AI Inference SDK's own tracing sends the same JSON text under the event
    attribute `gen_ai.event.content` (Azure/azure-sdk-for-python `sdk/ai/azure-ai-inference/
    azure/ai/inference/tracing.py`, `_add_request_chat_message_events`,
    `_add_response_chat_message_events`: `json.dumps` of the request message, or of
    `{"message", "finish_reason", "index"}` for a choice); read the same way."""
    text = event.fields.get("content")
    if text is None:
        text = event.fields.get(A.GEN_AI_EVENT_CONTENT)
    if not isinstance(text, str) or not text.startswith("{") or any(
            k in event.fields for k in _BODY_KEYS):
        return event.fields
    ok, parsed = try_json(text)
    if not ok or not isinstance(parsed, dict):
        return event.fields
    if event.name == A.EV_CHOICE:
        is_body = isinstance(parsed.get("message"), dict)
    else:
        is_body = parsed.get("role") == _MESSAGE_EVENTS[event.name]
    return parsed if is_body else event.fields


def event_message(event: ContentEvent, where: str, problems: Problems) -> Message | None:
    """One older per-message event (system/user/assistant/tool message or choice); one
    whose content was not captured as such (`_uncaptured`)."""
    fields = _body(event)
    uncaptured = _uncaptured(event.name, fields)
    if uncaptured is not None:
        return uncaptured
    if event.name == A.EV_CHOICE:
        body = _field(fields, "message")
        finish = as_str(fields.get("finish_reason"))
        if isinstance(body, dict) and ("content" in body or "tool_calls" in body):
            obj = {"role": "assistant", **body, "finish_reason": finish}
            # OpenLLMetry's events mode puts the calls beside the message, not inside it.
            beside = _field(fields, "tool_calls")
            if "tool_calls" not in body and beside is not None:
                obj["tool_calls"] = beside
        else:
            obj = {"role": "assistant", "content": body, "finish_reason": finish}
        return parse_message(obj, where, problems)
    role = as_str(fields.get("role")) or _MESSAGE_EVENTS[event.name]
    obj = {
        "role": role,
        "content": fields.get("content"),
        "tool_calls": _field(fields, "tool_calls"),
        # The convention's `id`; an OpenAI-form body (Semantic Kernel's) says tool_call_id.
        "tool_call_id": fields.get("id") or fields.get("tool_call_id"),
    }
    return parse_message(obj, where, problems)


def _uncaptured(name: str, fields: Mapping[str, JsonValue]) -> Message | None:
    """A per-message event without its content: the conventions put `content` (and a tool
    call's `arguments`) in the body only when content capture is on, which it is not by
    default, and keep the role, the tool calls' ids and names and a tool message's `id`
    (semantic-conventions `gen-ai-events.md`, v1.28-1.36; open-telemetry/opentelemetry-
    python-contrib `opentelemetry-instrumentation-openai-v2` `utils.py`,
    `message_to_event` / `choice_to_event`: `if capture_content`). Such a message is what
    it was without its words: a user message of text not captured (so still the user
    speaking: a turn begins there), a tool message answering its call, calls with their
    arguments not captured, an answer not captured. None for an event carrying content."""
    message = _field(fields, "message") if name == A.EV_CHOICE else fields
    if not isinstance(message, Mapping) or "content" in message:
        return None
    role = as_str(message.get("role")) or _MESSAGE_EVENTS.get(name, "assistant")
    calls = _field(message, "tool_calls")
    if name == A.EV_CHOICE and calls is None:
        calls = _field(fields, "tool_calls")  # OpenLLMetry's events mode: beside it
    if isinstance(calls, list):
        found = tuple(_uncaptured_call(c) for c in calls if isinstance(c, Mapping))
        return Message(role, found, as_str(fields.get("finish_reason")))
    if calls is not None or set(message) - _UNCAPTURED_KEYS:
        return None  # something else is said here: read as it is
    if role == "user":
        return Message(role, (Part(PartType.TEXT),))
    if role == "tool" and (call_id := as_str(message.get("id"))):
        return Message(role, (Part(PartType.TOOL_RESULT, call_id=call_id),))
    return Message(role, (), as_str(fields.get("finish_reason")))


_UNCAPTURED_KEYS = frozenset({"role", "id", "index", "finish_reason", A.TL_SYSTEM,
                              A.GEN_AI_PROVIDER_NAME, A.EVENT_NAME})
"""What a per-message event without content holds beside its tool calls: its body's
fields, and the attributes a log record carries (`ContentEvent.fields` merges both)."""


def _uncaptured_call(call: Mapping[str, JsonValue]) -> Part:
    """A tool call of an event without content: its arguments, absent, were not captured."""
    function = call.get("function")
    named = function if isinstance(function, Mapping) else call
    if "arguments" in named:
        return tool_call(call.get("id"), named.get("name"), named.get("arguments"))
    return Part(PartType.TOOL_CALL, call_id=as_str(call.get("id")), name=as_str(named.get("name")))


def _message_events(view: SpanView, problems: Problems) -> Decoded:
    inputs: list[Message] = []
    outputs: list[Message] = []
    seen = False
    for i, event in enumerate(view.events):
        if event.name not in _MESSAGE_EVENTS and event.name != A.EV_CHOICE:
            continue
        seen = True
        message = event_message(event, f"event {i} {event.name}", problems)
        if message is not None:
            (outputs if event.name == A.EV_CHOICE else inputs).append(message)
    if not seen:
        return Decoded()
    has_input = any(e.name in _MESSAGE_EVENTS for e in view.events)
    has_output = any(e.name == A.EV_CHOICE for e in view.events)
    input_messages = _results_once(inputs) if has_input else None
    return Decoded(
        input_messages=input_messages,
        output_messages=tuple(outputs) if has_output else None,
        system_instructions=system_text(input_messages),
    )


def _results_once(messages: list[Message]) -> tuple[Message, ...]:
    """The messages with each tool result once: a result a tool message gave, repeated by a
    later message by call id, is dropped there, its failure flag kept on the first.

    The botocore instrumentation's Bedrock events send a user message holding `toolResult`
    blocks twice: one `gen_ai.tool.message` per block (its `id` and `content`, no `status`),
    then the `gen_ai.user.message` whose content is the blocks as sent, `status: error` on a
    failed one (open-telemetry/opentelemetry-python-contrib `instrumentation/
    opentelemetry-instrumentation-botocore/src/opentelemetry/instrumentation/botocore/
    extensions/bedrock_utils.py`, `message_to_event`)."""
    given: set[str] = set()
    failed: set[str] = set()
    kept: list[Message] = []
    for message in messages:
        parts = []
        for part in message.parts:
            cid = part.call_id
            if part.type is not PartType.TOOL_RESULT or cid is None or cid not in given:
                parts.append(part)
                if part.type is PartType.TOOL_RESULT and cid is not None:
                    given.add(cid)
            elif part.is_error:
                failed.add(cid)
        if parts or not message.parts:
            kept.append(message if len(parts) == len(message.parts)
                        else replace(message, parts=tuple(parts)))  # fmt: skip
    if not failed:
        return tuple(kept)
    return tuple(
        replace(m, parts=tuple(replace(p, is_error=True) if p.type is PartType.TOOL_RESULT
                               and p.call_id in failed else p for p in m.parts))
        for m in kept
    )  # fmt: skip


def _deprecated(view: SpanView, problems: Problems) -> Decoded:
    """The whole prompt and completion, from the span's attributes or its content events."""
    inputs = _whole(view, A.EV_CONTENT_PROMPT, "user", problems)
    outputs = _whole(view, A.EV_CONTENT_COMPLETION, "assistant", problems)
    return Decoded(input_messages=inputs, output_messages=outputs,
                   system_instructions=system_text(inputs))


def _whole(
    view: SpanView, event_name: str, role: str, problems: Problems
) -> tuple[Message, ...] | None:
    """The span attribute, else every `event_name` event's value under the same key, in
    time order (OpenLIT sends one completion event per choice); None when none has one
    (OpenLIT's event for a completion that is only tool calls carries no value). OpenLIT
    before 1.3x records any completion of a request that sent tools as the stand-in
    `Function called with tools` (openlit 1.26 `instrumentation/openai/openai.py`, `chat_
    completions`: `if kwargs.get("tools")`), the model's text and calls nowhere: not
    captured, no answer."""
    key = _WHOLE_EVENTS[event_name]
    own = view.get(key)
    values = [own] if own is not None else [
        e.fields[key] for e in view.events if e.name == event_name and key in e.fields
    ]
    if role == "assistant" and _is_openlit(view):
        values = [v for v in values if v != A.OPENLIT_TOOLS_COMPLETION]
    if not values:
        return None
    # Only OpenLIT's prompts are `role: content` transcripts; an answer is what it says.
    prefixed = role == "user" and _is_openlit(view)
    return tuple(m for i, value in enumerate(values)
                 for m in whole_messages(value, role, f"{key} {i}" if i else key,
                                         problems, prefixed=prefixed))


def _openlit_gemini(messages: tuple[Message, ...] | None) -> tuple[Message, ...] | None:
    """OpenLIT's google-genai messages as the model exchanged them. It writes the answer's
    text as `str(response.text)`, "None" for an answer that only calls tools, and a
    function response as the repr of its dict (openlit/openlit `sdk/python/src/openlit/
    instrumentation/google_ai_studio/utils.py`, `process_chat_response`,
    `build_input_messages`): that text is dropped beside the calls, and the repr read back
    as the JSON the API was sent."""
    if not messages:
        return messages
    read = tuple(_openlit_gemini_message(m) for m in messages)
    return messages if all(a is b for a, b in zip(read, messages, strict=True)) else read


def _openlit_gemini_message(message: Message) -> Message:
    calls = any(p.type is PartType.TOOL_CALL for p in message.parts)
    parts: list[Part] = []
    for part in message.parts:
        if calls and part.type is PartType.TEXT and part.text == "None":
            continue
        if part.type is PartType.TOOL_RESULT and part.text and part.text[:1] in "{[":
            value = python_literal(part.text)
            if isinstance(value, (dict, list)) and not try_json(part.text)[0]:
                part = replace(part, text=result_text(value))
        parts.append(part)
    same = len(parts) == len(message.parts) and all(
        a is b for a, b in zip(parts, message.parts, strict=True))
    return message if same else replace(message, parts=tuple(parts))


def _is_openlit(view: SpanView) -> bool:
    """Whether OpenLIT made the span, so its prose prompt is OpenLIT's transcript: every
    OpenLIT model-call span carries `telemetry.sdk.name = "openlit"` as a span attribute
    (openlit/openlit `sdk/python/src/openlit/__helpers.py`, `common_span_attributes`; each
    instrumentation's own `span.set_attribute(TELEMETRY_SDK_NAME, "openlit")` before 1.34).
    The resource says `openlit` only when `openlit.init` made the tracer provider (it reuses
    an application's, `otel/tracing.py`), so the span's own attribute is the one read."""
    return view.get(A.TELEMETRY_SDK_NAME) == _OPENLIT


_OPENLIT = "openlit"


def _listed_calls(view: SpanView) -> tuple[Part, ...]:
    """OpenLIT's requested calls (`gen_ai.tool.name`, `.call.id`, `gen_ai.tool.args`, each
    joined by ", "; openlit/openlit `instrumentation/openai/utils.py`): none unless every
    name has its id and its arguments, since empty values were dropped before joining."""
    names = [n.strip() for n in (as_str(view.get(A.GEN_AI_TOOL_NAME)) or "").split(",")]
    ids = [i.strip() for i in (as_str(view.get(A.GEN_AI_TOOL_CALL_ID)) or "").split(",")]
    text = as_str(view.get(A.GEN_AI_TOOL_ARGS)) or ""
    args = [text] if len(names) == 1 else _json_sequence(text)
    if not all(names) or len(ids) != len(names) or args is None or len(args) != len(names):
        return ()
    return tuple(tool_call(i, n, a) for n, i, a in zip(names, ids, args, strict=True))


def _json_sequence(text: str) -> list[JsonValue] | None:
    """JSON values joined by ", ", or None."""
    decoder = json.JSONDecoder()
    values: list[JsonValue] = []
    at = 0
    while at < len(text):
        try:
            value, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return None
        values.append(value)
        while at < len(text) and text[at] in ", ":
            at += 1
    return values


def _with_calls(outputs: tuple[Message, ...], calls: tuple[Part, ...]) -> tuple[Message, ...]:
    """The completion with the calls the span lists, in its last assistant message."""
    if any(p.type is PartType.TOOL_CALL for m in outputs for p in m.parts):
        return outputs
    if outputs and outputs[-1].role == "assistant":
        last = outputs[-1]
        return (*outputs[:-1], Message("assistant", (*last.parts, *calls), last.finish_reason))
    return (*outputs, Message("assistant", calls))


def _tool_parts(view: SpanView, problems: Problems) -> list[Part]:
    content = current(view, problems)
    messages = (*(content.input_messages or ()), *(content.output_messages or ()))
    return [p for m in messages for p in m.parts]


_PRIMITIVE_TYPES = frozenset({"str", "int", "float", "bool", "NoneType"})


def _code_value(value: AttrValue, python_type: AttrValue) -> JsonValue:
    """One `code.function.*` value: a primitive (or a list of one primitive type) as it is,
    anything else the JSON text of its plain form, read back by its recorded type."""
    if not isinstance(value, str) or python_type in _PRIMITIVE_TYPES:
        return value
    ok, parsed = try_json(value)
    return parsed if ok else value


def _code_call(view: SpanView) -> tuple[JsonValue, JsonValue]:
    """The arguments (by parameter name) and the return value of the Python call a Google
    GenAI tool span records, each None where it records none (content not captured)
    (open-telemetry/opentelemetry-python-contrib `instrumentation-genai/
    opentelemetry-instrumentation-google-genai/src/opentelemetry/instrumentation/
    google_genai/tool_call_wrapper.py`: positional arguments under their parameter's name,
    `args[i]` past the signature)."""
    prefix = A.CODE_FUNCTION_PARAMETERS + "."
    arguments: dict[str, JsonValue] = {}
    for key, value in view.attributes.items():
        if key.startswith(prefix) and key.endswith(".value"):
            param = key[len(prefix) : -len(".value")]
            arguments[param] = _code_value(value, view.get(f"{prefix}{param}.type"))
    returned = view.get(A.CODE_FUNCTION_RETURN_VALUE)
    if returned is not None:
        returned = _code_value(returned, view.get(A.CODE_FUNCTION_RETURN_TYPE))
    return (arguments or None), returned


def tool_execution(view: SpanView, problems: Problems) -> ToolExecution:
    """What an `execute_tool` span says about the call it ran."""
    name = as_str(view.get(A.GEN_AI_TOOL_NAME)) or view.name.removeprefix("execute_tool ").strip()
    arguments: JsonValue = view.get(A.GEN_AI_TOOL_CALL_ARGUMENTS)
    result: JsonValue = view.get(A.GEN_AI_TOOL_CALL_RESULT)
    if arguments is None or result is None:
        called, returned = _code_call(view)
        arguments = called if arguments is None else arguments
        result = returned if result is None else result
    call_id = as_str(view.get(A.GEN_AI_TOOL_CALL_ID))
    for event in view.events:
        # Strands puts the call's input in a tool.message event and its output in a choice.
        if event.name == A.EV_TOOL_MESSAGE and arguments is None:
            arguments = event.fields.get("content")
            call_id = call_id or as_str(event.fields.get("id"))
        elif event.name == A.EV_CHOICE and result is None:
            result = _field(event.fields, "message")
    if arguments is None or result is None:
        # The latest Strands opt-in puts the call and its response in operation details.
        for part in _tool_parts(view, problems):
            if part.type is PartType.TOOL_CALL and arguments is None:
                arguments, call_id = part.arguments, call_id or part.call_id
            elif part.type is PartType.TOOL_RESULT and result is None:
                result, call_id = part.text, call_id or part.call_id
    arguments, wrapped_id = unwrap_tool_input(_literal_arguments(arguments))
    text, result_id, failed = unwrap_tool_output(result)
    if call_id and A.OPENLIT_APPLICATION_NAME in view.attributes and _RUN_ID.fullmatch(call_id):
        call_id = None  # LangChain's run id (`_run_id`), no id the model gave
    return execution(name, call_id or result_id or wrapped_id, arguments, text, failed)


_RUN_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""A UUID as `str(uuid)` writes it: OpenLIT's LangChain callback sets the tool span's
`gen_ai.tool.call.id` to the callback's run id when the tool starts and replaces it with
the `ToolMessage`'s `tool_call_id` only when the tool ends well (openlit/openlit
`sdk/python/src/openlit/instrumentation/langchain/__init__.py`, `on_tool_start` /
`on_tool_end`): a failed tool's span keeps the run id, which no model call names."""


def _literal_arguments(arguments: JsonValue) -> JsonValue:
    """Arguments recorded as the Python repr of their dict are that dict: LangChain's
    callbacks get a tool's input as `input_str`, `str(tool_input)` (langchain-core
    `tools/base.py`, `BaseTool.run`), which OpenLIT records as they are (`on_tool_start`).
    Text that is JSON, or no dict literal, stays as it is."""
    if not isinstance(arguments, str) or not arguments.startswith("{'"):
        return arguments
    if try_json(arguments)[0]:
        return arguments
    value = python_literal(arguments)
    return value if isinstance(value, dict) else arguments


OTEL_GENAI = Convention(
    "otel-genai",
    decode,
    markers=frozenset({
        A.GEN_AI_OPERATION_NAME, *_CONTENT_KEYS, A.GEN_AI_TOOL_CALL_ID,
        A.GEN_AI_TOOL_CALL_ARGUMENTS, A.GEN_AI_TOOL_CALL_RESULT, A.GEN_AI_PROMPT,
        A.GEN_AI_COMPLETION,
    }),
    events=frozenset({A.EV_OPERATION_DETAILS, A.EV_CHOICE, *_MESSAGE_EVENTS, *_WHOLE_EVENTS}),
    content_keys=(
        *_CONTENT_KEYS, A.GEN_AI_TOOL_CALL_ARGUMENTS, A.GEN_AI_TOOL_CALL_RESULT,
        A.GEN_AI_PROMPT, A.GEN_AI_COMPLETION, A.GEN_AI_TOOL_ARGS, A.GEN_AI_RESPONSE_TOOL_CALLS,
        A.CODE_FUNCTION_PARAMETERS + ".", A.CODE_FUNCTION_RETURN_VALUE,
        A.OPENLIT_WORKFLOW_INPUT, A.OPENLIT_WORKFLOW_OUTPUT,
    ),
)  # fmt: skip
