"""Haystack's own tracing (`haystack.tracing.OpenTelemetryTracer`, content tracing on).

Tags become span attributes as they are, a structured value as JSON text of its `to_dict()`
form (deepset-ai/haystack `haystack/tracing/utils.py`, `coerce_tag_value`). Decoded here:
- a chat generator's run: `haystack.component.run` (Haystack 2) with
  `haystack.component.input` `{messages, tools}` and `haystack.component.output`
  `{replies}`, or `haystack.agent.step.llm` (the Agent loop of Haystack 2.2x/3) with
  `haystack.agent.step.llm.input` / `.output` of the same shapes
  (`haystack/components/agents/agent.py`);
- messages as `ChatMessage.to_dict()`: `{role, content: [{text} | {tool_call: {tool_name,
  arguments, id}} | {tool_call_result: {result, origin, error}}], meta}` (before 2.9 a
  string `content`; 2.9-2.11 `_role` / `_content`), the model and usage in a reply's `meta`;
  tools as `Tool.to_dict()`, `{type, data: {name, description, parameters}}`;
- a tool call: `haystack.agent.step.tool` with `haystack.tool.name` and the call's
  arguments and result in `.input` / `.output` (one span per call; the grouped form,
  `{messages, state}` in, `{tool_messages}` out, is structure, its results reaching the
  next model call's input, as with the ToolInvoker component);
- `haystack.agent.run` is the agent. Haystack records no session and never reports a
  failure on its spans (a tool's failure is in its result's `error`).

OpenInference's Haystack instrumentation (Arize-ai/openinference `python/instrumentation/
openinference-instrumentation-haystack/src/openinference/instrumentation/haystack/
_wrappers.py`) wraps each component's `run` instead: a generator's span is an LLM span whose
`input.value` / `output.value` are the run's arguments and result as JSON written with
`default=str`, so each `ChatMessage` and `Tool` is its dataclass repr (`ChatMessage(_role=
<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result=..., origin=ToolCall(tool_name=...,
arguments={...}, id=...), error=True)], ...)`; `Tool(name=..., parameters={...}, function=
<function f at 0x...>)`), while its flattened `llm.input_messages` keep a message's text
alone (a tool call's id, a tool result, every tool definition are only in the reprs). Those
reprs are read here (`_from_repr`: a literal tree, never evaluated; `<...>` objects as their
enum value or None) into the `to_dict()` shapes above; model and usage stay OpenInference's.
An Agent run on its own (no Pipeline) runs its tools inside its own `run`: no tool span.
"""

from __future__ import annotations

import ast
import io
import tokenize
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
from turnscore.ingest.conventions.values import (
    JsonValue,
    as_str,
    json_or_text,
    result_text,
    usage_tokens,
)
from turnscore.ingest.model import SpanKind, ToolDef


def decode(view: SpanView, problems: Problems) -> Decoded:
    if A.OI_SPAN_KIND in view.attributes and not _HS_KEYS.intersection(view.attributes):
        return _openinference_chat(view, problems)
    if A.HS_TOOL_NAME in view.attributes:
        return _tool_step(view)
    for in_key, out_key in ((A.HS_STEP_LLM_INPUT, A.HS_STEP_LLM_OUTPUT),
                            (A.HS_COMPONENT_INPUT, A.HS_COMPONENT_OUTPUT)):
        inputs = json_or_text(view.get(in_key))
        outputs = json_or_text(view.get(out_key))
        if _is_chat(inputs, outputs):
            return _chat(inputs, outputs, in_key, problems)
    if A.HS_AGENT_MAX_STEPS in view.attributes or A.HS_AGENT_INPUT in view.attributes:
        return Decoded(kind=SpanKind.AGENT)
    if A.HS_COMPONENT_INPUT in view.attributes or A.HS_STEP_TOOL_INPUT in view.attributes:
        return Decoded(kind=SpanKind.CHAIN)
    return Decoded()


def _is_chat(inputs: JsonValue, outputs: JsonValue) -> bool:
    """A chat generator's run: messages in (replies out, unless it failed)."""
    if not isinstance(inputs, dict) or not isinstance(inputs.get("messages"), list):
        return False
    return outputs in (None, "") or (
        isinstance(outputs, dict) and isinstance(outputs.get("replies"), list))


def _chat(inputs: dict[str, Any], outputs: JsonValue, where: str, problems: Problems) -> Decoded:
    messages = parse_messages([_message(m) for m in inputs["messages"]], where, problems)
    replies = outputs.get("replies") if isinstance(outputs, dict) else None
    answer = None if replies is None else parse_messages(
        [_message(m) for m in replies], where, problems)
    meta: dict[str, Any] = next((r["meta"] for r in replies or () if isinstance(r, dict)
                                 and isinstance(r.get("meta"), dict)), {})
    usage: dict[str, Any] = meta["usage"] if isinstance(meta.get("usage"), dict) else {}
    input_tokens, output_tokens = usage_tokens(usage)
    return Decoded(
        kind=SpanKind.LLM,
        input_messages=messages,
        output_messages=answer,
        system_instructions=system_text(messages),
        tool_definitions=_tools(inputs.get("tools"), problems),
        model=as_str(meta.get("model")),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def _message(obj: JsonValue) -> JsonValue:
    """A `ChatMessage.to_dict()` as an OTel-parts message (other shapes pass through)."""
    if not isinstance(obj, dict):
        return obj
    role, content = obj.get("role", obj.get("_role")), obj.get("content", obj.get("_content"))
    if not isinstance(content, list):
        return {"role": role, "content": content, "name": obj.get("name")}
    parts: list[dict[str, Any]] = []
    finish = None
    for item in content:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            parts.append({"type": "text", "content": item["text"]})
        elif isinstance(item.get("tool_call"), dict):
            call = item["tool_call"]
            parts.append({"type": "tool_call", "id": call.get("id"), "name": call.get("tool_name"),
                          "arguments": call.get("arguments")})
        elif isinstance(item.get("tool_call_result"), dict):
            res = item["tool_call_result"]
            origin = res.get("origin") if isinstance(res.get("origin"), dict) else {}
            assert isinstance(origin, dict)
            parts.append({"type": "tool_call_response", "id": origin.get("id"),
                          "name": origin.get("tool_name"), "response": res.get("result"),
                          "is_error": res.get("error") is True})
    meta = obj.get("meta", obj.get("_meta"))
    if isinstance(meta, dict):
        finish = meta.get("finish_reason")
    return {"role": role, "parts": parts, "finish_reason": finish}


def _tools(value: JsonValue, problems: Problems) -> tuple[ToolDef, ...] | None:
    """`Tool.to_dict()` items (`{type, data}`); a Toolset's `data.tools` flattened."""
    if not isinstance(value, list):
        return None
    plain: list[JsonValue] = []
    for item in value:
        data = item.get("data") if isinstance(item, dict) else None
        if isinstance(data, dict) and isinstance(data.get("tools"), list):
            plain.extend(t.get("data", t) for t in data["tools"] if isinstance(t, dict))
        else:
            plain.append(data if isinstance(data, dict) else item)
    return parse_tool_defs(plain, A.HS_STEP_LLM_INPUT, problems)


# --- OpenInference's Haystack spans: dataclass reprs -----------------------------------

# Haystack's role enum, in every ChatMessage repr it writes (`_role=<ChatRole.USER: 'user'>`,
# before 2.9 `role=<ChatRole.USER: ...>`); LlamaIndex's and smolagents' ChatMessage reprs
# name a `MessageRole` instead, and are not Haystack's.
_REPR_MARK = "<ChatRole."


def _accepts(view: SpanView) -> bool:
    """Haystack's own tags, or an OpenInference LLM span whose input holds Haystack's
    ChatMessage reprs (`_REPR_MARK`)."""
    if _HS_KEYS.intersection(view.attributes):
        return True
    inputs = as_str(view.get(A.OI_INPUT_VALUE)) or ""
    return view.get(A.OI_SPAN_KIND) == "LLM" and _REPR_MARK in inputs


def _openinference_chat(view: SpanView, problems: Problems) -> Decoded:
    inputs = _reprs_read(json_or_text(view.get(A.OI_INPUT_VALUE)))
    outputs = _reprs_read(json_or_text(view.get(A.OI_OUTPUT_VALUE)))
    if not _is_chat(inputs, outputs):
        return Decoded()
    assert isinstance(inputs, dict)
    return _chat(inputs, outputs, A.OI_INPUT_VALUE, problems)


def _reprs_read(value: JsonValue) -> JsonValue:
    """`{messages, tools}` / `{replies}` whose items are reprs, the items read."""
    if not isinstance(value, dict):
        return value
    out = dict(value)
    for key in ("messages", "replies", "tools"):
        items = value.get(key)
        if isinstance(items, list):
            out[key] = [_from_repr(i) if isinstance(i, str) else i for i in items]
    return out


_CONTENT = {
    "TextContent": lambda kw: {"text": kw.get("text")},
    "ToolCall": lambda kw: {"tool_call": kw},
    "ToolCallResult": lambda kw: {"tool_call_result": _origin_plain(kw)},
}
"""Content dataclasses as the key `ChatMessage.to_dict()` gives each (other parts, as
`ReasoningContent`, keep their fields and are skipped by `_message`)."""


def _origin_plain(fields: dict[str, Any]) -> dict[str, Any]:
    """A result's `origin` is the ToolCall's own fields in `to_dict()`, not a content part."""
    origin = fields.get("origin")
    if isinstance(origin, dict) and isinstance(origin.get("tool_call"), dict):
        return {**fields, "origin": origin["tool_call"]}
    return fields


def _from_repr(text: str) -> JsonValue:
    """A dataclass repr as nested dicts (a class's keyword fields; `TextContent` and kin as
    their `to_dict()` keys); the text itself when it is none."""
    try:
        tree = ast.parse(_angle_free(text), mode="eval")
        return _node(tree.body)
    except (SyntaxError, tokenize.TokenError, RecursionError):
        return text


def _angle_free(text: str) -> str:
    """`text` with each `<...>` object repr replaced: an enum's (`<ChatRole.USER: 'user'>`)
    by its value, any other (`<function f at 0x...>`) by None. Tokens, so a `<` inside a
    string literal is left alone."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int, str]] = []
    depth, begin, value, after_colon = 0, 0, "None", False
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        at = starts[tok.start[0] - 1] + tok.start[1]
        if tok.type == tokenize.OP and tok.string == "<":
            if depth == 0:
                begin, value = at, "None"
            depth += 1
        elif tok.type == tokenize.OP and tok.string == ">" and depth:
            depth -= 1
            if depth == 0:
                spans.append((begin, at + 1, value))
        elif depth == 1 and after_colon and tok.type in (tokenize.STRING, tokenize.NUMBER):
            value = tok.string  # an enum's `<Class.NAME: value>`
        after_colon = depth == 1 and tok.type == tokenize.OP and tok.string == ":"
    for begin, end, value in reversed(spans):
        text = text[:begin] + value + text[end:]
    return text


def _node(node: ast.expr) -> JsonValue:
    if isinstance(node, ast.Call):
        fields = {k.arg: _node(k.value) for k in node.keywords if k.arg is not None}
        name = node.func.id if isinstance(node.func, ast.Name) else (
            node.func.attr if isinstance(node.func, ast.Attribute) else "")
        if node.args:
            fields.setdefault("args", [_node(a) for a in node.args])
        return _CONTENT[name](fields) if name in _CONTENT else fields
    if isinstance(node, ast.Dict):
        return {str(_node(k)) if k is not None else "": _node(v)
                for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_node(e) for e in node.elts]
    try:  # constants and negative numbers; anything else (a bare name) as its source text
        value = ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def _tool_step(view: SpanView) -> Decoded:
    arguments = json_or_text(view.get(A.HS_STEP_TOOL_INPUT))
    if isinstance(arguments, dict) and "messages" in arguments and "state" in arguments:
        return Decoded(kind=SpanKind.CHAIN)  # the grouped form: several calls, one span
    output = json_or_text(view.get(A.HS_STEP_TOOL_OUTPUT))
    failed = isinstance(output, dict) and bool(output.get("error"))
    raw = view.get(A.HS_STEP_TOOL_OUTPUT)
    # The tag as recorded: a string result as it is, a structured one as JSON text.
    result = None if raw in (None, "") else raw if isinstance(raw, str) else result_text(output)
    name = as_str(view.get(A.HS_TOOL_NAME)) or view.name
    definition = ToolDef(name, as_str(view.get(A.HS_TOOL_DESCRIPTION)))
    return Decoded(kind=SpanKind.TOOL, tool_definitions=(definition,),
                   tool_execution=execution(name, None, arguments, result, failed))


_HS_KEYS = frozenset({
    A.HS_COMPONENT_INPUT, A.HS_COMPONENT_OUTPUT, A.HS_STEP_LLM_INPUT, A.HS_STEP_LLM_OUTPUT,
    A.HS_STEP_TOOL_INPUT, A.HS_STEP_TOOL_OUTPUT, A.HS_TOOL_NAME, A.HS_AGENT_INPUT,
    A.HS_AGENT_MAX_STEPS,
})  # fmt: skip

HAYSTACK = Convention(
    "haystack",
    decode,
    markers=_HS_KEYS | {A.OI_SPAN_KIND},
    accepts=_accepts,
    content_keys=(
        A.HS_COMPONENT_INPUT, A.HS_COMPONENT_OUTPUT, A.HS_STEP_LLM_INPUT, A.HS_STEP_LLM_OUTPUT,
        A.HS_STEP_TOOL_INPUT, A.HS_STEP_TOOL_OUTPUT, A.HS_AGENT_INPUT, A.HS_AGENT_OUTPUT,
        A.HS_PIPELINE_INPUT, A.HS_PIPELINE_OUTPUT,
    ),
)  # fmt: skip
