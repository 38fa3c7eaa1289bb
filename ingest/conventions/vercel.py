"""Vercel AI SDK telemetry (`experimental_telemetry`): `ai.*` attributes.

Spans by `ai.operationId`: `ai.generateText` / `ai.streamText` / `ai.generateObject` wrap
a whole multi-step call (an agent run, in our terms), their `.doGenerate` / `.doStream`
children are the model calls, `ai.toolCall` the tool executions. Model calls carry the
messages as a JSON string in `ai.prompt.messages` (content parts `text`, `tool-call`,
`tool-result`), the answer in `ai.response.text` / `ai.response.toolCalls`, and each tool
definition as its own JSON string in the `ai.prompt.tools` array. v4 and v5 differ in a
few names (`args`/`input`, `result`/`output`, `promptTokens`/`inputTokens`).
Sessions have no standard key; `ai.telemetry.metadata.{sessionId,conversationId,threadId}`
are read when present.

Recorded forms (`tests/fixtures/stacks/vercel-ai*`): AI SDK 6's built-in telemetry and 7's
`LegacyOpenTelemetry` (vercel/ai `packages/otel/src/legacy-open-telemetry.ts`) give this
form; a tool span is the run's child in 6, and in 7 the child of the model call that asked
for it, and a tool call's `input` in `ai.response.toolCalls` is JSON text in 6, an object in
7. AI SDK 7's default integration (`OpenTelemetry`, `packages/otel/src/open-telemetry.ts`)
gives the OTel GenAI conventions instead (`invoke_agent` > `step N` > `chat` /
`execute_tool`, no `ai.*` key), which `otel_genai` decodes.

Traceloop's span processor (`@traceloop/node-server-sdk` `createSpanProcessor`, recorded at
0.27 in `tests/fixtures/stacks/vercel-ai-traceloop*`) rewrites these spans as they end and
keeps `ai.operationId`: a tool span is renamed `execute_tool <name>` and its `ai.toolCall.*`
keys are moved to `gen_ai.tool.name` / `gen_ai.tool.call.{id,arguments,result}` and
`traceloop.entity.*` (its `transformToolCallAttributes` / `transformToolCalls`), the model
calls' messages to `gen_ai.input.messages` / `gen_ai.output.messages`. Where no `ai.*` key
is left, this convention has no say and the GenAI one reads the span.
"""

from __future__ import annotations

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    parse_messages,
    parse_tool_defs,
    system_text,
    text_message,
    tool_call,
)
from turnscore.ingest.conventions.values import (
    JsonValue,
    as_int,
    as_str,
    first_str,
    json_or_text,
    result_text,
)
from turnscore.ingest.model import Message, Part, PartType, SpanKind, ToolExecution

_MODEL_CALLS = frozenset({
    "ai.generateText.doGenerate", "ai.streamText.doStream", "ai.generateObject.doGenerate",
    "ai.streamObject.doStream",
})
_RUNS = frozenset({"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"})
_TOOL_CALL_KEYS = (
    A.VERCEL_TOOL_CALL_NAME, A.VERCEL_TOOL_CALL_ID, A.VERCEL_TOOL_CALL_ARGS,
    A.VERCEL_TOOL_CALL_INPUT, A.VERCEL_TOOL_CALL_RESULT, A.VERCEL_TOOL_CALL_OUTPUT,
)
_SESSION_KEYS = tuple(
    A.VERCEL_METADATA_PREFIX + k for k in ("sessionId", "session_id", "conversationId", "threadId")
)


def _accepts(view: SpanView) -> bool:
    return (as_str(view.get(A.VERCEL_OPERATION_ID)) or "").startswith("ai.")


def _decode(view: SpanView, problems: Problems) -> Decoded:
    operation = as_str(view.get(A.VERCEL_OPERATION_ID)) or ""
    base = Decoded(
        conversation_id=first_str(view.attributes, _SESSION_KEYS),
        agent_name=as_str(view.get(A.VERCEL_FUNCTION_ID)) if operation in _RUNS else None,
        model=as_str(view.get(A.VERCEL_RESPONSE_MODEL)) or as_str(view.get(A.VERCEL_MODEL_ID)),
        input_tokens=_tokens(view, A.VERCEL_USAGE_INPUT_TOKENS, A.VERCEL_USAGE_PROMPT_TOKENS),
        output_tokens=_tokens(view, A.VERCEL_USAGE_OUTPUT_TOKENS,
                              A.VERCEL_USAGE_COMPLETION_TOKENS),
    )
    if operation == "ai.toolCall":
        return base.fill(Decoded(kind=SpanKind.TOOL, tool_execution=_tool(view)))
    if operation in _MODEL_CALLS:
        messages = view.load(A.VERCEL_PROMPT_MESSAGES, problems)
        inputs = None if messages is None else parse_messages(
            messages, A.VERCEL_PROMPT_MESSAGES, problems)
        tools = view.get(A.VERCEL_PROMPT_TOOLS)
        return base.fill(Decoded(
            kind=SpanKind.LLM,
            input_messages=inputs,
            output_messages=_response(view, problems),
            system_instructions=system_text(inputs),
            tool_definitions=None if tools is None
            else parse_tool_defs(tools, A.VERCEL_PROMPT_TOOLS, problems),
        ))
    if operation in _RUNS:
        prompt = view.load(A.VERCEL_PROMPT, problems)
        return base.fill(Decoded(
            kind=SpanKind.AGENT,
            input_messages=_run_prompt(prompt, problems),
            output_messages=_response(view, problems),
            system_instructions=as_str(prompt.get("system")) if isinstance(prompt, dict) else None,
        ))
    return base.fill(Decoded(kind=SpanKind.OTHER))


def _tokens(view: SpanView, key: str, older: str) -> int | None:
    """A token count under v5's key, else (only when v5's is absent) v4's."""
    return as_int(view.get(key) if view.get(key) is not None else view.get(older))


def _run_prompt(prompt: JsonValue, problems: Problems) -> tuple[Message, ...] | None:
    """`ai.prompt` of a run: `{prompt}` (one user text) or `{system, messages}`."""
    if not isinstance(prompt, dict):
        return None
    if isinstance(prompt.get("messages"), list):
        return parse_messages(prompt["messages"], A.VERCEL_PROMPT, problems)
    if isinstance(prompt.get("prompt"), str):
        return (text_message("user", prompt["prompt"]),)
    return None


def _response(view: SpanView, problems: Problems) -> tuple[Message, ...] | None:
    text = view.get(A.VERCEL_RESPONSE_TEXT)
    calls = view.load(A.VERCEL_RESPONSE_TOOL_CALLS, problems)
    if text is None and calls is None:
        return None
    parts: list[Part] = []
    if isinstance(text, str) and text:
        parts.append(Part(PartType.TEXT, text=text))
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            parts.append(tool_call(call.get("toolCallId"), call.get("toolName"),
                                   call.get("input", call.get("args"))))
    finish = as_str(view.get(A.VERCEL_RESPONSE_FINISH_REASON))
    return (Message("assistant", tuple(parts), finish),)


def _tool(view: SpanView) -> ToolExecution | None:
    """The tool call from its `ai.toolCall.*` keys; None when a span processor moved them all
    elsewhere (Traceloop's): the span's name is then no tool's name, and `otel_genai` reads
    the keys they went to."""
    if all(view.get(key) is None for key in _TOOL_CALL_KEYS):
        return None
    arguments = view.get(A.VERCEL_TOOL_CALL_INPUT)
    if arguments is None:
        arguments = view.get(A.VERCEL_TOOL_CALL_ARGS)
    result = view.get(A.VERCEL_TOOL_CALL_OUTPUT)
    if result is None:
        result = view.get(A.VERCEL_TOOL_CALL_RESULT)
    result = json_or_text(result)  # the SDK JSON-encodes what the tool returned, strings too
    return execution(as_str(view.get(A.VERCEL_TOOL_CALL_NAME)) or view.name,
                     as_str(view.get(A.VERCEL_TOOL_CALL_ID)), arguments,
                     None if result is None else result_text(result))


VERCEL = Convention(
    "vercel-ai", _decode, markers=frozenset({A.VERCEL_OPERATION_ID}), accepts=_accepts,
    content_keys=(
        A.VERCEL_PROMPT, A.VERCEL_PROMPT_MESSAGES, A.VERCEL_PROMPT_TOOLS, A.VERCEL_RESPONSE_TEXT,
        A.VERCEL_RESPONSE_TOOL_CALLS, A.VERCEL_RESPONSE_OBJECT, A.VERCEL_RESPONSE_REASONING,
        A.VERCEL_TOOL_CALL_ARGS, A.VERCEL_TOOL_CALL_INPUT, A.VERCEL_TOOL_CALL_RESULT,
        A.VERCEL_TOOL_CALL_OUTPUT, A.VERCEL_VALUE, A.VERCEL_VALUES,
    ),
)  # fmt: skip
