"""Genkit's own tracing (firebase/genkit, JS and Go): every action a span, `genkit:*` keys.

Genkit runs each action (a model, a tool, a flow, a prompt) in a span of its own
(`js/core/src/tracing/instrumentation.ts`, `runInNewSpan`), typed by `genkit:type` and
`genkit:metadata:subtype`, its input and output as JSON text (`genkit:input`,
`genkit:output`), its outcome as `genkit:state`. What each subtype says:
- `model`: the call. Its input is Genkit's `GenerateRequest` (`js/ai/src/model-types.ts`:
  `messages`, each `{role, content: [Part]}` with role `user`, `model`, `system` or
  `tool`; `tools`, each `{name, description, inputSchema}`), its output a
  `GenerateResponse` (`message`, or `candidates[0].message` before 1.0; `finishReason`;
  `usage.inputTokens` / `outputTokens`; the provider's response as `raw`, whose `id` is the
  provider's response id). A part is `{text}`, `{toolRequest: {name, ref, input}}` (a call,
  `ref` its id) or `{toolResponse: {name, ref, output}}` (its result); read here as the
  OTel GenAI parts they are.
- `tool`: one execution: `genkit:name` the tool, the input its arguments, the output its
  result (JSON text: a string result is quoted); no call id (the model span's `ref` has it).
- `flow`: the app's named AI function (`ai.defineFlow`), the run of an agent: its name
  names the turns below it.
The `generate` util spans between them (Genkit's tool loop, one per model turn) are
structure: the model spans carry the messages.
"""

from __future__ import annotations

from typing import Any

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    parse_messages,
    parse_tool_defs,
    system_text,
)
from turnscore.ingest.conventions.values import JsonValue, as_int, as_str, json_or_text, result_text
from turnscore.ingest.model import Message, SpanKind, ToolDef

_KINDS = {"model": SpanKind.LLM, "tool": SpanKind.TOOL, "flow": SpanKind.AGENT}


def decode(view: SpanView, problems: Problems) -> Decoded:
    subtype = as_str(view.get(A.GENKIT_SUBTYPE)) or ""
    kind = _KINDS.get(subtype, SpanKind.CHAIN)
    name = as_str(view.get(A.GENKIT_NAME))
    failed = as_str(view.get(A.GENKIT_STATE)) == "error"
    if kind is SpanKind.TOOL:
        output = json_or_text(view.get(A.GENKIT_OUTPUT))
        return Decoded(kind=kind, tool_execution=execution(
            name or view.name, None, json_or_text(view.get(A.GENKIT_INPUT)),
            None if output is None else result_text(output), failed=failed,
        ))  # fmt: skip
    if kind is SpanKind.AGENT:
        return Decoded(kind=kind, agent_name=name)
    if kind is not SpanKind.LLM:
        return Decoded(kind=kind)
    request = _object(view.get(A.GENKIT_INPUT))
    response = _object(view.get(A.GENKIT_OUTPUT))
    inputs = _messages(request.get("messages"), A.GENKIT_INPUT, problems)
    reply = response.get("message")
    if reply is None and isinstance(response.get("candidates"), list) and response["candidates"]:
        first = response["candidates"][0]
        reply = first.get("message") if isinstance(first, dict) else None
    outputs = _messages([reply] if isinstance(reply, dict) else None, A.GENKIT_OUTPUT, problems)
    usage, raw = _object(response.get("usage")), _object(response.get("raw"))
    return Decoded(
        kind=kind,
        input_messages=inputs,
        output_messages=_finished(outputs, as_str(response.get("finishReason"))),
        system_instructions=system_text(inputs),
        tool_definitions=_tools(request.get("tools"), problems),
        model=as_str(raw.get("model")) or name,
        input_tokens=as_int(usage.get("inputTokens")),
        output_tokens=as_int(usage.get("outputTokens")),
        response_id=as_str(raw.get("id")),
    )


def _object(value: Any) -> dict[str, Any]:
    """A JSON object, given as text or already parsed; empty when it is none."""
    parsed = json_or_text(value) if isinstance(value, str) else value
    return parsed if isinstance(parsed, dict) else {}


def _messages(items: JsonValue, where: str, problems: Problems) -> tuple[Message, ...] | None:
    """Genkit messages as OTel GenAI ones (`{role, parts}`), then read as those are."""
    if not isinstance(items, list):
        return None
    plain = [
        {"role": m.get("role"), "parts": [_part(p) for p in m.get("content") or []
                                          if isinstance(p, dict)]}
        for m in items if isinstance(m, dict)
    ]  # fmt: skip
    return parse_messages(plain, where, problems)


def _part(part: dict[str, Any]) -> dict[str, Any]:
    if isinstance(call := part.get("toolRequest"), dict):
        return {"type": "tool_call", "id": call.get("ref"), "name": call.get("name"),
                "arguments": call.get("input")}  # fmt: skip
    if isinstance(result := part.get("toolResponse"), dict):
        output = result.get("output")
        return {"type": "tool_call_response", "id": result.get("ref"), "name": result.get("name"),
                "response": output if isinstance(output, str) else result_text(output)}  # fmt: skip
    if isinstance(part.get("text"), str):
        return {"type": "text", "content": part["text"]}
    return part  # media, data, reasoning: kept as Genkit wrote them


def _finished(
    messages: tuple[Message, ...] | None, finish: str | None
) -> tuple[Message, ...] | None:
    """A response's `finishReason` belongs to its one message."""
    if finish is None or not messages or len(messages) != 1 or messages[0].finish_reason:
        return messages
    return (Message(messages[0].role, messages[0].parts, finish),)


def _tools(items: JsonValue, problems: Problems) -> tuple[ToolDef, ...] | None:
    """A request's tools, `inputSchema` the parameters' schema (GenerateRequest's
    `ToolDefinition`)."""
    if not isinstance(items, list):
        return None
    defined = [{"name": t.get("name"), "description": t.get("description"),
                "parameters": t.get("inputSchema")} for t in items if isinstance(t, dict)]
    return parse_tool_defs(defined, A.GENKIT_INPUT, problems)


GENKIT = Convention(
    "genkit", decode, markers=frozenset({A.GENKIT_TYPE}),
    content_keys=(A.GENKIT_INPUT, A.GENKIT_OUTPUT),
)
