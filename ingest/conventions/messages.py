"""Messages, parts and tool definitions in every shape the conventions use, to one model.

One reader for all conventions, because the shapes cross convention lines: OTel parts
(`{type: text|tool_call|tool_call_response}`), OpenAI chat (`content`, `tool_calls`,
`tool_call_id`), OpenAI Responses items, Anthropic and Bedrock content blocks (`tool_use`,
`toolUse`, `toolResult`), Gemini parts (`function_call`, `function_response`) and LangChain
serialized messages all turn up inside OTel, OpenInference and framework attributes.

Hosted (server-run) tools are calls too: the model chose the tool and its arguments, the
provider ran it, and the call and its result sit in the model's own output. Read as a
tool-call part followed by a tool-result part of the same id (`hosted_parts`): OpenAI
Responses output items (`web_search_call`, `file_search_call`, `code_interpreter_call`,
`image_generation_call`, `mcp_call`: openai/openai-python `types/responses/`, one item
holding both), OTel GenAI's `server_tool_call` / `server_tool_call_response` parts
(semantic-conventions `gen-ai-input-messages.json` / `gen-ai-output-messages.json`), and
Anthropic's `server_tool_use` / `mcp_tool_use` blocks with their `*_tool_result` blocks
(anthropic-sdk-python `types/`: `web_search_tool_result`, `code_execution_tool_result`,
`mcp_tool_result`, ...). Assembly reads a call answered in its own output as finished.

Rules: arguments become canonical JSON text (sorted keys); a tool result stays a string
when it is one and becomes compact JSON in its own key order when structured; a malformed
item is skipped and reported, never the whole list (Phoenix drops the list; we do better).
A result object with an `error` and no `output` reports a failure (`_error_object`: Gemini's).

One module past the ~400-line guide: every shape above feeds every other (a Bedrock block
inside an OTel part, a LangChain message inside OpenInference), and the memos of parsed
messages and histories must see all of them to stay exact.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import orjson
from msgspec.structs import replace

from turnscore.ingest.conventions.values import (
    JsonValue,
    as_str,
    canonical_arguments,
    canonical_json,
    is_placeholder,
    python_literal,
    result_text,
    try_json,
    unflatten,
)
from turnscore.ingest.model import Message, Part, PartType, ToolDef, ToolExecution
from turnscore.ingest.records import AttrValue

Problems = list[str]
K = TypeVar("K")
V = TypeVar("V")

_ROLES = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "chatbot": "assistant",  # Cohere's v1 chat history (USER / CHATBOT / SYSTEM / TOOL)
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
    # Framework roles for calls and results rendered as text (smolagents' MessageRole).
    "tool-call": "assistant",
    "tool-response": "tool",
}
_LC_CLASSES = {
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
}
_BLOCK_KEYS = frozenset(
    {"type", "text", "toolUse", "toolResult", "function_call", "functionCall",
     "function_response", "functionResponse", "json"}
)


def normalize_role(role: JsonValue) -> str:
    text = (as_str(role) or "").lower()
    if text not in _ROLES and (repeated := _REPEATED_ROLE.fullmatch(text)):
        text = repeated[1] if repeated[1] in _ROLES else text
    if text not in _ROLES:
        text = _enum_member_role(text) or text
    return _ROLES.get(text, text or "user")


_ENUM_MEMBER = re.compile(r"[a-z_]\w*\.([a-z_]\w*)")


def _enum_member_role(text: str) -> str | None:
    """The role a Python enum member's `str()` names (`MessageRole.SYSTEM`), or None.
    smolagents gives its messages' roles as members of `MessageRole(str, Enum)` (values
    `user`, `system`, `tool-call`, ...), which the OpenAI SDK sends as their values, but the
    OTel project's OpenAI instrumentation records `str(role)` (opentelemetry-instrumentation-
    genai-openai 1.3b0 `utils.py`, `_prepare_input_messages`), and on Python 3.11 a mixed-in
    enum's `str()` is `<Class>.<MEMBER>`. The member's name, lowercased with `_` as `-`,
    is the value where it is a role."""
    member = _ENUM_MEMBER.fullmatch(text)
    name = member[1].replace("_", "-") if member else ""
    return name if name in _ROLES else None


_REPEATED_ROLE = re.compile(r"(.+?)\1+")
"""A known role said over and over (`assistantassistant`): the OpenAI SDK's stream
accumulator appends every string field of each chunk's delta to the one so far, the role
too (openai-python 1.58 `openai/lib/streaming/_deltas.py`, `accumulate_delta`), so a server
that repeats `role` in every chunk (Ollama's OpenAI-compatible API, and the scripted server
of `tests/ingest/instrumented`) leaves a streamed reply that many copies of it; Logfire 2.x
records that reply (`response_data.message`)."""


_KNOWN_ROLES = frozenset(_ROLES.values())


def model_said(messages: tuple[Message, ...] | None) -> tuple[Message, ...] | None:
    """A model call's output messages, each the model's (`assistant`) whatever unknown role
    it was given: OpenLLMetry's LangChain instrumentation names a streamed reply's
    `AIMessageChunk` `unknown` (traceloop/openllmetry `opentelemetry-instrumentation-
    langchain` `span_utils.py`, `_message_type_to_role`)."""
    if not messages or all(m.role in _KNOWN_ROLES for m in messages):
        return messages
    return tuple(m if m.role in _KNOWN_ROLES else replace(m, role="assistant")
                 for m in messages)


def text_message(role: str, text: str) -> Message:
    """A message that is one text part."""
    return Message(role, (Part(PartType.TEXT, text=text),))


def tool_call(call_id: JsonValue, name: JsonValue, arguments: JsonValue) -> Part:
    return Part(
        PartType.TOOL_CALL,
        call_id=as_str(call_id),
        name=as_str(name),
        arguments=canonical_arguments(arguments),
    )


def tool_result(
    call_id: JsonValue, value: JsonValue, name: JsonValue = None, is_error: bool = False
) -> Part:
    text = None if value is None or is_placeholder(value) else block_result_text(value)
    if call_id is None and text is not None:
        text, is_error = _unlabelled(text, is_error)
    is_error = is_error or _error_object(value)
    return Part(
        PartType.TOOL_RESULT,
        text=text,
        call_id=as_str(call_id),
        name=as_str(name),
        is_error=is_error,
    )


def _error_object(value: JsonValue) -> bool:
    """A result object, or its JSON text, that reports a failure as the Gemini API defines
    one: an `error` key (the error details) and no `output` key (google-genai
    `types.FunctionResponse.response`: 'Use "output" key to specify function output and
    "error" key to specify error details'). Instrumentations pass the object on as they
    got it: the OTel contrib google-genai one as the tool_call_response's `response`,
    OpenLLMetry's google-generativeai as its JSON text, OpenInference's as the tool
    message's content."""
    if isinstance(value, str):
        if not value.startswith("{") or '"error"' not in value:
            return False
        _, value = try_json(value)
    return isinstance(value, dict) and bool(value.get("error")) and "output" not in value


_OBSERVATION, _ERROR = re.compile(r"Observation:[ \n]"), "Error:\n"


def _unlabelled(text: str, is_error: bool) -> tuple[str, bool]:
    """A result rendered as text without a call id carries a ReAct label the framework
    added, not the tool: `Observation:\n<output>` (smolagents) or `Observation: <output>`
    (LlamaIndex) is the output; `Error:\n<what failed>` is a failure, whose first line is
    what failed (the rest is the framework's advice to the model, `Please try again...`)."""
    if (label := _OBSERVATION.match(text)) is not None:
        return text[label.end() :], is_error
    if text.startswith(_ERROR):
        return text[len(_ERROR) :].split("\n", 1)[0], True
    return text, is_error


def block_result_text(value: JsonValue) -> str:
    """Result content; a list of text-only blocks is the text the model read."""
    if isinstance(value, list) and value and all(_is_text_block(b) for b in value):
        return "".join(_block_text(b) for b in value)
    if isinstance(value, list) and len(value) == 1 and _is_json_block(value[0]):
        return result_text(value[0]["json"])
    return result_text(value)


def _is_json_block(block: JsonValue) -> bool:
    return isinstance(block, dict) and set(block) == {"json"}


def _is_text_block(block: JsonValue) -> bool:
    if not isinstance(block, dict):
        return False
    if set(block) == {"text"}:
        return isinstance(block["text"], str)
    return block.get("type") == "text" and isinstance(block.get("text", block.get("content")), str)


def _block_text(block: dict[str, Any]) -> str:
    text = block.get("text", block.get("content"))
    return text if isinstance(text, str) else ""


def looks_like_blocks(value: JsonValue) -> bool:
    """A list of content blocks (as a JSON string in Strands, OpenLLMetry) rather than prose."""
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(isinstance(i, dict) and _BLOCK_KEYS & set(i) for i in items)


def parse_part(obj: JsonValue, role: str) -> Part | None:
    """One part in any known shape; None when it is not a dict with a recognised shape."""
    if isinstance(obj, str):
        return Part(PartType.TEXT, text=obj)
    if not isinstance(obj, dict):
        return None
    # One look at the keys: most parts wrap nothing (OTel, OpenAI parts).
    if not _WRAPPERS.isdisjoint(obj) and (part := _wrapped_part(obj)) is not None:
        return part
    kind = as_str(obj.get("type")) or ""
    handler = _PART_TYPES.get(kind)
    if handler is None and kind.endswith(_SERVER_RESULT_SUFFIX):
        handler = _server_result_part  # Anthropic's server tools name a result type each
    if handler is not None:
        return handler(obj)
    if "text" in obj and isinstance(obj["text"], str):
        return Part(PartType.TEXT, text=obj["text"])
    if kind == "" and "content" in obj and role != "tool":
        return Part(PartType.TEXT, text=as_str(obj["content"]) or "")
    return Part(PartType.OTHER, text=canonical_json(obj))


_WRAPPERS = frozenset({
    "toolUse", "tool_use", "toolResult", "function_call", "functionCall", "function_response",
    "functionResponse",
})  # fmt: skip
"""Keys of the Bedrock, Anthropic and Gemini blocks that wrap a call or a result."""


def _wrapped_part(obj: dict[str, Any]) -> Part | None:
    for key in ("toolUse", "tool_use"):
        if isinstance(obj.get(key), dict):
            use = obj[key]
            call_id = use.get("toolUseId") or use.get("id")
            return tool_call(call_id, use.get("name"), use.get("input"))
    if isinstance(obj.get("toolResult"), dict):
        res = obj["toolResult"]
        return tool_result(
            res.get("toolUseId"), res.get("content"), res.get("name"),
            is_error=res.get("status") == "error",
        )
    for key in ("function_call", "functionCall"):
        if isinstance(obj.get(key), dict):
            call = obj[key]
            arguments = call.get("args", call.get("arguments"))
            return tool_call(call.get("id"), call.get("name"), arguments)
    for key in ("function_response", "functionResponse"):
        if isinstance(obj.get(key), dict):
            resp = obj[key]
            return tool_result(resp.get("id"), resp.get("response"), resp.get("name"))
    return None


def _text_part(obj: dict[str, Any]) -> Part:
    text = obj.get("content", obj.get("text"))
    if text is None:
        # A text part without its text is content not captured (`_not_captured`), never
        # the text "null": the OTel JS OpenAI instrumentation with capture off sends each
        # message's parts as `{"type": "text"}` alone (`@opentelemetry/instrumentation-openai`
        # 0.22.0 `src/responses.ts`, the converters' `captureMessageContent` checks).
        return Part(PartType.TEXT)
    return Part(PartType.TEXT, text=text if isinstance(text, str) else result_text(text))


_ARGUMENT_KEYS = ("arguments", "input", "args")


def _call_part(obj: dict[str, Any]) -> Part:
    function = obj.get("function") if isinstance(obj.get("function"), dict) else {}
    assert isinstance(function, dict)
    arguments = obj.get("arguments", obj.get("input", obj.get("args", function.get("arguments"))))
    # A Responses API item's `call_id` is what its output names; its `id` (`fc_...`) is
    # the item's own.
    call_id = obj.get("call_id") or obj.get("id") or obj.get("toolCallId")
    part = tool_call(call_id, obj.get("name") or function.get("name") or obj.get("toolName"),
                     arguments)
    if obj.get("type") == "tool_call" and not any(k in obj for k in _ARGUMENT_KEYS):
        # A GenAI semconv part without `arguments` is arguments not captured, not a call
        # without arguments (`{}`): emitters leave the key out when content capture is off
        # (`@opentelemetry/instrumentation-openai` for a Responses call, its default;
        # pydantic-ai `_otel_messages`: `arguments` only with `include_content`). Other
        # forms leave out empty arguments instead (OpenInference's flattened tool calls
        # under the Agents SDK: a handoff's `{}`), so only this part is read so.
        return replace(part, arguments=None)
    return part


_TYPED_OUTPUTS = frozenset({"text", "json", "error-text", "error-json"})


def _response_part(obj: dict[str, Any]) -> Part:
    value = obj.get("response", obj.get("result", obj.get("output", obj.get("content"))))
    is_error = obj.get("is_error") is True
    if isinstance(value, dict) and value.get("type") in _TYPED_OUTPUTS and "value" in value:
        # Vercel AI SDK v5 wraps tool output as {type, value}.
        is_error = is_error or str(value["type"]).startswith("error")
        value = value["value"]
    call_id = obj.get("id") or obj.get("call_id") or obj.get("tool_use_id") or obj.get("toolCallId")
    return tool_result(call_id, value, obj.get("name") or obj.get("toolName"), is_error=is_error)


# --- hosted (server-run) tools ---------------------------------------------------------


def _server_call_part(obj: dict[str, Any]) -> Part:
    """OTel GenAI `server_tool_call`: `{id, name, server_tool_call: {type, ...}}`, the
    provider's own call object under `server_tool_call` (its arguments under `arguments`
    or `input` where it has such a key, else the object less its `type`)."""
    inner = obj.get("server_tool_call")
    inner = inner if isinstance(inner, dict) else {}
    arguments = inner.get("arguments", inner.get("input"))
    if arguments is None:
        arguments = {k: v for k, v in inner.items() if k != "type"}
    return tool_call(obj.get("id"), obj.get("name") or inner.get("type"), arguments)


def _server_response_part(obj: dict[str, Any]) -> Part:
    """OTel GenAI `server_tool_call_response`: `{id, server_tool_call_response: {...}}`,
    the provider's result object (an Anthropic `*_tool_result` block as it is, or
    `{type, response}`)."""
    inner = obj.get("server_tool_call_response")
    if isinstance(inner, dict) and (as_str(inner.get("type")) or "").endswith(
        _SERVER_RESULT_SUFFIX
    ):
        return _with_id(_server_result_part(inner), obj.get("id"))
    value = inner
    if isinstance(inner, dict):
        value = next((inner[k] for k in ("response", "output", "result", "content") if k in inner),
                     {k: v for k, v in inner.items() if k != "type"})
    return tool_result(obj.get("id"), value, is_error=_reports_error(inner))


_SERVER_RESULT_SUFFIX = "_tool_result"


def _server_result_part(obj: dict[str, Any]) -> Part:
    """An Anthropic `*_tool_result` block (`web_search_tool_result`, `mcp_tool_result`,
    ...): `{tool_use_id, content}`; a failure is `is_error` or a content of an `*_error`
    type (`web_search_tool_result_error`)."""
    content = obj.get("content")
    failed = obj.get("is_error") is True or _reports_error(content)
    return tool_result(obj.get("tool_use_id") or obj.get("id"), content, is_error=failed)


def _reports_error(value: JsonValue) -> bool:
    return isinstance(value, dict) and (
        (as_str(value.get("type")) or "").endswith("_error") or value.get("is_error") is True
    )


def _with_id(part: Part, call_id: JsonValue) -> Part:
    """`part` with `call_id` where it has none."""
    if part.call_id is not None or call_id is None:
        return part
    return Part(part.type, part.text, as_str(call_id), part.name, part.arguments, part.is_error)


_HOSTED_ITEMS: dict[str, tuple[str | None, str | tuple[str, ...], str]] = {
    "web_search_call": ("web_search", "action", "action.sources"),
    "file_search_call": ("file_search", ("queries",), "results"),
    "code_interpreter_call": ("code_interpreter", ("code",), "outputs"),
    "image_generation_call": ("image_generation", ("revised_prompt",), ""),
    "mcp_call": (None, "arguments", "output"),
}
"""OpenAI Responses output items the provider ran (openai-python `types/responses/`:
`response_function_web_search.py`, `response_file_search_tool_call.py`,
`response_code_interpreter_tool_call.py`, `response_output_item.py` `ImageGenerationCall`
and `McpCall`): item type -> (tool name, None where the item names it; the key holding
the arguments, or the keys gathered into them; the path of the result, "" for none).
An item without its result (not requested with `include`, or an image's base64) gives
its `status` as the result: the call ran; `failed`, `incomplete` or an `error` is a
failure. Client-run items (`computer_call`, `local_shell_call`, `custom_tool_call`) are
not here: their output arrives as an input item of the next call."""
_FAILED = frozenset({"failed", "incomplete"})


def hosted_parts(item: dict[str, Any]) -> tuple[Part, Part] | None:
    """A Responses output item the provider ran, as its call and its result (one id), or
    None when `item` is no such item."""
    spec = _HOSTED_ITEMS.get(as_str(item.get("type")) or "")
    if spec is None:
        return None
    name, argument_keys, result_path = spec
    head, _, tail = result_path.partition(".")
    if isinstance(argument_keys, str):
        arguments = item.get(argument_keys)
        if tail and head == argument_keys and isinstance(arguments, dict):
            arguments = {k: v for k, v in arguments.items() if k != tail}  # the result's
    else:
        arguments = {k: item[k] for k in argument_keys if item.get(k) is not None}
    result = item.get(head) if head else None
    if tail:
        result = result.get(tail) if isinstance(result, dict) else None
    error = item.get("error")
    failed = bool(error) or item.get("status") in _FAILED
    if result is None:
        result = error if isinstance(error, str) and error else item.get("status")
    call_id = item.get("id") or item.get("call_id")
    call = tool_call(call_id, name or item.get("name"), arguments)
    return call, tool_result(call_id, result, call.name, is_error=failed)


_PART_TYPES: dict[str, Callable[[dict[str, Any]], Part]] = {
    "text": _text_part,
    "input_text": _text_part,
    "output_text": _text_part,
    "tool_call": _call_part,
    "tool_use": _call_part,
    "function_call": _call_part,
    "function": _call_part,
    "tool_call_response": _response_part,
    "tool_result": _response_part,
    "function_call_output": _response_part,
    "tool-call": _call_part,
    "tool-result": _response_part,
    # Anthropic's server-run and MCP-connector calls: `tool_use`'s shape.
    "server_tool_use": _call_part,
    "mcp_tool_use": _call_part,
    "server_tool_call": _server_call_part,
    "server_tool_call_response": _server_response_part,
}


def _parts_of(obj: JsonValue, role: str) -> tuple[Part, ...]:
    """`parse_part`'s part, or a hosted item's call and result."""
    # Most parts are no hosted item: the type is looked up here, not through a call.
    kind = obj.get("type") if isinstance(obj, dict) else None
    if type(kind) is str and kind in _HOSTED_ITEMS and (hosted := hosted_parts(obj)):
        return hosted
    part = parse_part(obj, role)
    if part is None or (_not_captured(part) and not _unsaid_request(part, role)):
        return ()
    return (part,)


def _unsaid_request(part: Part, role: str) -> bool:
    """A user's text part without its text (capture off): kept, the user still spoke there
    and a turn begins (grouping rule 4); its text, None, is no request's
    (`otel_genai._uncaptured` makes the older per-message events' so)."""
    return role == "user" and part.text is None


def parse_content(content: JsonValue, role: str, call_id: JsonValue = None) -> tuple[Part, ...]:
    """A message's `content` (string, JSON-string blocks, block list or block) as parts."""
    if content is None or is_placeholder(content):
        return ()
    if isinstance(content, str):
        ok, parsed = try_json(content)
        if ok and looks_like_blocks(parsed):
            return parse_content(parsed, role, call_id)
        if role == "tool":
            return (tool_result(call_id, content),)
        return (Part(PartType.TEXT, text=content),)
    blocks = content if isinstance(content, list) else [content]
    if role == "tool" and not any(
        isinstance(b, dict) and ("toolResult" in b or b.get("type") in _RESULT_TYPES)
        for b in blocks
    ):
        return (tool_result(call_id, content),)
    return tuple(p for b in blocks for p in _parts_of(b, role))


def _not_captured(part: Part) -> bool:
    return part.type is PartType.TEXT and (part.text is None or is_placeholder(part.text))


_RESULT_TYPES = frozenset({
    "tool_call_response", "tool_result", "function_call_output", "tool-result",
    "server_tool_call_response",
})


def parse_message(obj: JsonValue, where: str, problems: Problems) -> Message | None:
    """One message in any known shape, or None (reported) when it is not a message; its
    role the speaker's where the emitter's says otherwise (`_calls_are_the_models`,
    `_relayed`)."""
    message = _parse_message(obj, where, problems)
    return None if message is None else _observed(_relayed(_calls_are_the_models(message)))


def _parse_message(obj: JsonValue, where: str, problems: Problems) -> Message | None:
    if not isinstance(obj, dict):
        problems.append(f"{where}: expected a message object, got {type(obj).__name__}")
        return None
    if obj.get("lc") == 1 and isinstance(obj.get("kwargs"), dict):
        ident = obj.get("id")
        cls = ident[-1] if isinstance(ident, list) and ident else ""
        body = dict(obj["kwargs"])
        body.setdefault("type", _LC_CLASSES.get(str(cls), "user"))
        return _langchain_message(body)
    if "data" in obj and isinstance(obj["data"], dict) and "role" not in obj:
        return _langchain_message({**obj["data"], "type": obj.get("type", obj["data"].get("type"))})
    if "role" not in obj and obj.get("type") in ("function_call", "function_call_output"):
        part = parse_part(obj, "assistant")
        role = "assistant" if obj["type"] == "function_call" else "tool"
        return Message(role, (part,) if part else ())
    if "role" not in obj and (hosted := hosted_parts(obj)) is not None:
        return Message("assistant", hosted)
    role = normalize_role(obj.get("role"))
    finish = as_str(obj.get("finish_reason"))
    if isinstance(obj.get("parts"), list):
        parts = [p for item in obj["parts"] for p in _parts_of(item, role)]
        # LiteLLM's OTel callback (BerriAI/litellm `integrations/opentelemetry.py`) keeps
        # OpenAI's keys beside the parts: an assistant's `tool_calls`, a tool message's
        # `tool_call_id` (its parts plain text). A tool message's text is its result, id
        # or not: OpenLIT's LangChain instrumentation sends a ToolMessage as a text part
        # alone (openlit/openlit `sdk/python/src/openlit/instrumentation/langchain/
        # utils.py`, `build_input_messages_from_langchain`).
        _add_listed_calls(parts, obj)
        if role == "tool":
            result_id = as_str(obj.get("tool_call_id"))
            parts = [
                Part(PartType.TOOL_RESULT, p.text, result_id, p.name, p.arguments, p.is_error)
                if p.type is PartType.TEXT else p
                for p in parts
            ]  # fmt: skip
        return Message(role, tuple(parts), finish)
    call_id = obj.get("tool_call_id") or obj.get("id") if role == "tool" else None
    parts_list = list(parse_content(obj.get("content"), role, call_id))
    if role == "tool" and parts_list and obj.get("name"):
        parts_list = _named(parts_list, as_str(obj["name"]))
    _add_listed_calls(parts_list, obj)
    if isinstance(obj.get("function_call"), dict):
        parts_list.append(_call_part(obj["function_call"]))
    return Message(role, tuple(parts_list), finish)


_RELAYED = re.compile(r"For context:\s*(?:below is a transcript of what another agent did|\[)")


def _relayed(message: Message) -> Message:
    """Google ADK hands an agent the other agents' events of the session as user-role text
    (google/adk `flows/llm_flows/contents.py`, `_present_other_agent_message`: `For
    context:` then `[agent] said: ...` / `[agent] called tool ...`; 2.x
    `flows/llm_flows/context/_fencing.py`: `For context: below is a transcript of what
    another agent did, ...`): other agents' speech, no user's request, so the model's side
    of the conversation."""
    first = message.parts[0].text if message.role == "user" and message.parts else None
    if not first or not first.startswith("For context:") or not _RELAYED.match(message.text):
        return message
    return replace(message, role="assistant")


_NEW_TASK = "\nNew task:\n"
"""smolagents' task message (`memory.py`, `TaskStep.to_messages`: `New task:\n<task>`), as
it reads merged after the message before it."""
_RETRY = (
    "\nNow let's retry: take care not to repeat previous errors! If you have retried several "
    "times, try a completely different approach.\n"
)
"""How smolagents ends a failed step's message (`memory.py`, `ActionStep.to_messages`)."""
_CALL_ID = re.compile(r"Call id: ([^\n]+)\n")


def _relayed_result(text: str) -> Part | None:
    """The tool result a relay's text is (`_observed`), or None: a ReAct `Observation:`
    label, or smolagents' `Error:\n<what failed>` and its advice to retry; smolagents
    names the call first where it has one (`Call id: <id>`)."""
    call_id = None
    if (named := _CALL_ID.match(text)) is not None:
        call_id, text = named.group(1).strip(), text[named.end() :]
    if not (_OBSERVATION.match(text) or (text.startswith(_ERROR) and text.endswith(_RETRY))):
        return None
    text, is_error = _unlabelled(text, False)
    return Part(PartType.TOOL_RESULT, text=text, call_id=call_id, is_error=is_error)


def _text_only(message: Message) -> str | None:
    """A user message's text where it is text alone, else None."""
    if message.role != "user" or not message.parts:
        return None
    if any(p.type is not PartType.TEXT for p in message.parts):
        return None
    return message.text


def _observed(message: Message) -> Message:
    """ReAct frameworks relay a tool's result to the model as a user message labelled
    `Observation:`: smolagents sends its tool-response messages with role user
    (`models.py`, `tool_role_conversions`: `Observation:\n<result>`, or a failed step's
    `Error:\n...`), LlamaIndex's ReAct formatter an observation step
    (`agent/react/formatter.py`: `Observation: <result>`). Those are no user's words but a
    result (DESIGN §3: some frameworks send tool results with role user). smolagents merges
    consecutive messages of one role, so its next task may follow the last result in the
    same message: that message is the user's, and `parse_messages` splits it (`_merged`)."""
    if message.role == "tool":
        return _labelled_result(message)
    text = _text_only(message)
    if text is None or _NEW_TASK in text or (result := _relayed_result(text)) is None:
        return message
    return Message("user", (result,), message.finish_reason)


def _labelled_result(message: Message) -> Message:
    """A tool message whose text is smolagents 1.x's labelled relay: its own role
    `tool-response`, the text `Call id: <id>\nObservation:\n<observations>` (or `Call id:
    <id>\nError:\n...` and the advice to retry) naming the step's first call
    (smolagents 1.9 `memory.py`, `ActionStep.to_messages`). The result is what the label
    introduces, for the call it names; other tool messages are as they are."""
    if len(message.parts) != 1:
        return message
    part = message.parts[0]
    text = part.text or ""
    if part.type is not PartType.TOOL_RESULT or part.call_id or not _CALL_ID.match(text):
        return message
    result = _relayed_result(text)
    if result is None:
        return message
    return Message("tool", (replace(result, name=part.name),), message.finish_reason)


def _merged(message: Message) -> tuple[Message, ...]:
    """A user message in which smolagents merged a relayed result and a task (`_observed`),
    as the two messages they were: a result, then the next task; or a task, then the error
    of the step that failed after it (the step asked for nothing the history replays, so
    nothing stood between them). Any other message as it is."""
    text = _text_only(message)
    if text is None:
        return (message,)
    if (at := text.find(_NEW_TASK)) >= 0 and (result := _relayed_result(text[:at])) is not None:
        return (Message("user", (result,)), text_message("user", text[at + 1 :]))
    if not text.startswith(_NEW_TASK[1:]) or not text.endswith(_RETRY):
        return (message,)
    if (at := text.rfind("\n" + _ERROR)) < 0:
        return (message,)
    line = text.rfind("\n", 0, at)
    if line > 0 and _CALL_ID.match(text, line + 1):  # the failed call named first
        at = line
    if (result := _relayed_result(text[at + 1 :])) is None:
        return (message,)
    return (text_message("user", text[:at]), Message("user", (result,)))


def _calls_are_the_models(message: Message) -> Message:
    """Only the model asks for tool calls: a message of no known role holding one is the
    model's (a replayed `AIMessageChunk`, `unknown` to OpenLLMetry's LangChain spans)."""
    if message.role in _KNOWN_ROLES or not any(
        p.type is PartType.TOOL_CALL for p in message.parts
    ):
        return message
    return replace(message, role="assistant")


def _named(parts: list[Part], name: str | None, is_error: bool | None = None) -> list[Part]:
    """A tool message's parts with its tool name (where they name none) and failure."""
    return [
        Part(p.type, p.text, p.call_id, p.name or name, p.arguments,
             p.is_error if is_error is None else is_error)
        for p in parts
    ]  # fmt: skip


def _listed_calls(obj: dict[str, Any]) -> list[Part]:
    """The calls an OpenAI-style message lists beside its content (`tool_calls`)."""
    return [_call_part(c) for c in _as_list(obj.get("tool_calls")) if isinstance(c, dict)]


def _add_listed_calls(parts: list[Part], obj: dict[str, Any]) -> None:
    """`parts` with the calls `obj` lists beside them, less those its parts already hold
    (by id; any, where the parts' calls have none): botocore's Bedrock events list each
    call twice, as a `toolUse` block and in `tool_calls`."""
    if "tool_calls" not in obj:
        return
    held = [p.call_id for p in parts if p.type is PartType.TOOL_CALL]
    if held and None in held:
        return
    parts.extend(c for c in _listed_calls(obj) if c.call_id is None or c.call_id not in held)


def _langchain_message(body: dict[str, Any]) -> Message:
    role = normalize_role(body.get("type"))
    call_id = body.get("tool_call_id")
    parts = list(parse_content(body.get("content"), role, call_id))
    if role == "tool":
        parts = _named(parts, as_str(body.get("name")), body.get("status") == "error")
    parts = [p for p in parts if not (p.type is PartType.TEXT and p.text == "")]
    return Message(role, (*parts, *_listed_calls(body)))


def _as_list(value: JsonValue) -> list[Any]:
    return value if isinstance(value, list) else []


def flat_messages(
    attributes: Mapping[str, AttrValue],
    prefix: str,
    body: Callable[[JsonValue], dict[str, Any] | None],
    missing: str,
    problems: Problems,
) -> tuple[Message, ...] | None:
    """Messages flattened under `prefix.N...` (OpenInference, OpenLLMetry), or None when
    no key is. Each index's keys are rebuilt (`unflatten`) and `body` reads them as an
    OpenAI-style message; where it cannot, `missing` says why, with the position.

    An index holding a `function_call` and nothing else (no role, no content) is no
    message: it is the next call of the assistant message before it. LiteLLM's OTel callback
    numbers its calls, not its choices, under `gen_ai.completion.N.function_call.*`
    (BerriAI/litellm `litellm/integrations/opentelemetry.py`, `_tool_calls_kv_pair`),
    beside a first choice's own `role` and `content` in its older form.
    """
    tree = unflatten(attributes, prefix)
    if tree is None:
        return None
    if not isinstance(tree, list):
        problems.append(f"{prefix}: keys are not indexed by message number")
        return ()
    messages: list[Message] = []
    for i, item in enumerate(tree):
        plain = body(item)
        if plain is None:
            problems.append(f"{prefix}.{i}: {missing}")
            continue
        message = parse_message(plain, f"{prefix}.{i}", problems)
        if message is None:
            continue
        if messages and messages[-1].role == "assistant" and _call_only(item):
            last = messages[-1]
            messages[-1] = Message(last.role, (*last.parts, *message.parts), last.finish_reason)
        else:
            messages.append(message)
    return tuple(messages)


def _call_only(item: JsonValue) -> bool:
    return isinstance(item, dict) and set(item) == {"function_call"}


def parse_messages(value: JsonValue, where: str, problems: Problems) -> tuple[Message, ...]:
    """A list of messages; a single message object counts as a list of one. Where tool
    results follow no message that could have asked for them, the assistant message the
    emitter dropped is restored (`_DROPPED`)."""
    items = value if isinstance(value, list) else [value]
    out: list[Message] = []
    for i, obj in enumerate(items):
        message = _cached_message(obj, where, i, problems)
        if message is not None:
            if out and _orphaned(out[-1], message):
                out.append(_DROPPED)
            out.extend(_merged(message))
    return tuple(out)


_DROPPED = Message("assistant", ())
"""The assistant message a call's input dropped, its content not captured.

A tool result answers an assistant message that asked for it. Some emitters drop that
message when it has no text: OpenLIT's `build_input_messages` (openlit/openlit
`sdk/python/src/openlit/instrumentation/openai/utils.py`) keeps a message only when its
content gave parts and never reads `tool_calls`, so a history reads `user, tool, tool`.
Restored without parts (what a role-only replay says), history matching reads it as the
gap it is (`turnscore.ingest.links`). Only between two messages: a list that opens with
results may be a truncated history, and nothing is invented there."""


def _orphaned(before: Message, message: Message) -> bool:
    """Whether `message` is tool results that `before` cannot have asked for."""
    return before.role != "assistant" and _answers(message) and not _answers(before)


def _answers(message: Message) -> bool:
    return bool(message.parts) and all(p.type is PartType.TOOL_RESULT for p in message.parts)


_MESSAGE_CACHE: dict[bytes, Message] = {}
_MESSAGE_CACHE_SIZE = 2048
"""Every chat span repeats the conversation so far: a turn's history is parsed once, not
once per model call. Bounded; cleared whole when full (sessions arrive together)."""


def _cached_message(obj: JsonValue, where: str, index: int, problems: Problems) -> Message | None:
    """`parse_message` memoized on the object's exact JSON text (key order and number
    types included, so equal keys mean equal input). Messages are immutable; only clean
    parses are kept, so a problem is reported every time, with its own position."""
    if not isinstance(obj, dict):
        return parse_message(obj, f"{where}[{index}]", problems)
    try:
        key = orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):
        return parse_message(obj, f"{where}[{index}]", problems)
    hit = _MESSAGE_CACHE.get(key)
    if hit is not None:
        return hit
    before = len(problems)
    message = parse_message(obj, f"{where}[{index}]", problems)
    if message is not None and len(problems) == before:
        keep(_MESSAGE_CACHE, _MESSAGE_CACHE_SIZE, key, message)
    return message


def keep(memo: dict[K, V], size: int, key: K, value: V) -> None:
    """`memo[key] = value`, a full memo first cleared whole (the spans of a session
    arrive together, so what came before is rarely asked for again)."""
    if len(memo) >= size:
        memo.clear()
    memo[key] = value


_HISTORIES: dict[str, list[tuple[str, tuple[Message, ...]]]] = {}
"""Message arrays parsed cleanly, by their first `_HISTORY_HEAD` characters (one
conversation's inputs share their start), the latest `_HISTORY_DEPTH` each. Bounded;
cleared whole when full.

A model call's input is the conversation so far: the previous call's input plus what
followed. So when a text continues a message array parsed before (its text without the
closing `]`, then `,`), only the new elements are parsed and decoded, and appended to the
earlier messages (`continued_messages`); messages are parsed element by element, so the
result is the whole parse's. Anything else, or new elements with a problem (whose
positions must count from the start), takes the whole parse."""
_HISTORY_HEAD = 64
"""Shorter arrays are not kept: a later one shares this many characters only with a longer."""
_HISTORY_DEPTH = 4
_HISTORY_KEYS = 256


def continued_messages(text: str, where: str) -> tuple[Message, ...] | None:
    """The messages of the JSON text `text` when it continues an array seen before."""
    messages = _continued(text, where)
    if messages is not None:
        remember_history(text, messages)
    return messages


def _continued(text: str, where: str) -> tuple[Message, ...] | None:
    for head, messages in reversed(_HISTORIES.get(text[:_HISTORY_HEAD], ())):
        if head == "[" or not text.startswith(head):
            continue
        rest = text[len(head) :].lstrip()
        if rest.rstrip() == "]":
            return messages
        if not rest.startswith(","):
            continue
        try:
            value = orjson.loads("[" + rest[1:])
        except orjson.JSONDecodeError:
            return None
        new: Problems = []
        more = parse_messages(value, where, new) if isinstance(value, list) else None
        if more is None or new:
            return None
        gap = (_DROPPED,) if messages and more and _orphaned(messages[-1], more[0]) else ()
        return (*messages, *gap, *more)
    return None


def remember_history(text: str, messages: tuple[Message, ...]) -> None:
    """Keep the clean parse `messages` of the JSON array `text` for `continued_messages`."""
    if len(text) <= _HISTORY_HEAD + 2 or not text.rstrip().endswith("]"):
        return
    key = text[:_HISTORY_HEAD]
    entries = _HISTORIES.get(key)
    if entries is None:
        entries = []
        keep(_HISTORIES, _HISTORY_KEYS, key, entries)
    # Kept without the closing `]` (and the spaces around it), which a continuation replaces.
    entries.append((text.rstrip()[:-1].rstrip(), messages))
    del entries[:-_HISTORY_DEPTH]


def whole_messages(
    value: JsonValue, role: str, where: str, problems: Problems, prefixed: bool = False
) -> tuple[Message, ...]:
    """A whole prompt or completion in one value: the deprecated `gen_ai.prompt` /
    `gen_ai.completion`, or a raw `input.value` / `output.value`.

    Accepts a message list, a request (`{messages: [...]}`), a response (`{choices: [...]}`,
    also in the mistralai SDK's stream event `{data: {choices}}`, which OpenInference's
    Mistral AI instrumentation accumulates a stream into: `_response_accumulator.py`;
    Gemini's `{candidates: [{content}]}`),
    a `{text, finish_reason}` completion, or prose (a string that is not such JSON); with
    `prefixed`, prose in role-prefixed lines is a transcript (`prefixed_messages`).
    """
    parsed = value
    if isinstance(value, str):
        ok, parsed = try_json(value)
        if not ok or not isinstance(parsed, list | dict):
            if prefixed and (transcript := prefixed_messages(value, where, problems)) is not None:
                return transcript
            return (Message(role, (Part(PartType.TEXT, text=value),)),) if value else ()
    if isinstance(parsed, dict) and isinstance(parsed.get("messages"), list):
        parsed = parsed["messages"]
    if isinstance(parsed, dict) and isinstance((event := parsed.get("data")), dict) \
            and isinstance(event.get("choices"), list):
        parsed = event
    if isinstance(parsed, dict) and isinstance(parsed.get("choices"), list):
        parsed = [
            # A choice's message names no role when accumulated from deltas that gave none
            # (a stream that only called tools): it is the model's, `role`.
            {"role": role, **c["message"], "finish_reason": c.get("finish_reason")}
            for c in parsed["choices"] if isinstance(c, dict) and isinstance(c.get("message"), dict)
        ]
    if isinstance(parsed, dict) and isinstance(parsed.get("candidates"), list):  # Gemini's
        parsed = [
            {**c["content"], "finish_reason": c.get("finishReason", c.get("finish_reason"))}
            for c in parsed["candidates"]
            if isinstance(c, dict) and isinstance(c.get("content"), dict)
        ]
    if isinstance(parsed, dict) and isinstance(parsed.get("text"), str) and "role" not in parsed:
        finish = as_str(parsed.get("finish_reason"))
        return (Message(role, (Part(PartType.TEXT, text=parsed["text"]),), finish),)
    if isinstance(parsed, list) and all(isinstance(m, dict) and "role" in m for m in parsed):
        return parse_messages(parsed, where, problems)
    return parse_messages({"role": role, "content": parsed}, where, problems)


_PREFIXED_LINE = re.compile(r"([a-z][a-z-]*):(?: (.*))?", re.DOTALL)
"""A transcript line opening a message: a role as the request spelled it (APIs and
LangChain's message types are lower case), then `: ` (`f"{role}: {content}"`), or the
bare colon of a content stripped to nothing."""
_HISTORY_REPR = "[{'role': "


def prefixed_messages(text: str, where: str, problems: Problems) -> tuple[Message, ...] | None:
    """A prompt rendered as `role: content` lines (OpenLIT's `format_content`, one line per
    message joined by newlines), or None when the first line names no role.

    A line that opens no message (`_PREFIXED_LINE`: a known role, lower case, then `: `)
    continues the message before it, so multi-line contents survive, prose dialogue
    (`User: ...`, `assistant:x`) included; a content line that itself starts exactly as
    OpenLIT opens a message (`user: `) cannot be told from a new message. Only text is
    rendered: tool calls and tool-use / tool-result blocks come out empty or as `None`,
    so those messages are dropped, never guessed at, but for an assistant's `None` (a
    reply that only called tools, as OpenLIT 1.26 renders it), kept without parts: a gap
    in the history, not nothing. A message OpenLIT 1.35 to 1.36 could not read (an
    assistant message whose content is None, an SDK object) is rendered as the Python repr
    of the whole request's list (its fallback, `str(messages)`, 1.35 to 1.36): that list is
    read back instead when it is literal, else skipped.
    """
    messages: list[tuple[str, str]] = []
    for line in text.split("\n"):
        match = _PREFIXED_LINE.fullmatch(line)
        if match and match[1] in _ROLES:
            messages.append((match[1], match[2] or ""))
        elif messages:
            messages[-1] = (messages[-1][0], f"{messages[-1][1]}\n{line}")
        else:
            return None
    out: list[Message] = []
    for role, content in messages:
        content = content.strip()
        if content.startswith(_HISTORY_REPR):
            history = _literal_history(content)
            if history is not None:
                return parse_messages(history, where, problems)
            continue  # a repr of objects: no message of its own, and not readable
        # List contents are rendered `text: ..., image_url: ...`.
        content = content.removeprefix("text: ")
        if content == "None" and _ROLES[role] == "assistant":
            # A replayed reply that only called tools (its content None, its calls not
            # rendered): kept as the assistant's turn without parts, which `links`' gap
            # rule reads as the earlier call that asked for tools.
            out.append(Message("assistant", ()))
        elif content and content != "None":
            message = parse_message({"role": role, "content": content}, where, problems)
            if message is not None:
                out.append(message)
    return tuple(out)


def _literal_history(text: str) -> list[Any] | None:
    """A Python repr of a list of message dicts, read back without evaluating code."""
    value = python_literal(text)
    if isinstance(value, list) and value and all(
        isinstance(m, dict) and "role" in m for m in value
    ):
        return value
    return None


def merge_assistant(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Responses API output items (a message, then function calls) as one assistant turn."""
    parts = tuple(p for m in messages if m.role == "assistant" for p in m.parts)
    return (Message("assistant", parts),) if parts else messages


def instructions_text(value: JsonValue) -> str | None:
    """System instructions from a string, a part, or a list of parts."""
    if value is None or is_placeholder(value):
        return None
    if isinstance(value, str):
        return value
    items = value if isinstance(value, list) else [value]
    texts = []
    for item in items:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict):
            text = item.get("content", item.get("text"))
            if isinstance(text, str):
                texts.append(text)
            elif isinstance(item.get("parts"), list):
                texts.append(instructions_text(item["parts"]) or "")
    return "\n".join(texts)


def system_text(messages: tuple[Message, ...] | None) -> str | None:
    """System instructions carried as system-role messages (OpenAI, OpenInference, Strands)."""
    if not messages:
        return None
    texts = [m.text for m in messages if m.role == "system" and m.parts]
    return "\n".join(texts) if texts else None


def parse_tool_defs(value: JsonValue, where: str, problems: Problems) -> tuple[ToolDef, ...]:
    """Tool definitions in any of the shapes of CONVENTIONS.md pitfall 5."""
    items = value if isinstance(value, list) else [value]
    out: list[ToolDef] = []
    for i, item in enumerate(items):
        out.extend(_tool_defs(item, f"{where}[{i}]", problems))
    return tuple(out)


def _tool_defs(obj: JsonValue, where: str, problems: Problems) -> list[ToolDef]:
    if isinstance(obj, str):
        ok, parsed = try_json(obj)
        if ok and isinstance(parsed, list):
            return [d for i, item in enumerate(parsed)
                    for d in _tool_defs(item, f"{where}[{i}]", problems)]
        if ok and isinstance(parsed, dict):
            return _tool_defs(parsed, where, problems)
        return [ToolDef(name=obj)]  # a bare tool name
    if not isinstance(obj, dict):
        problems.append(f"{where}: expected a tool definition object")
        return []
    for key in ("function_declarations", "functionDeclarations"):
        if isinstance(obj.get(key), list):
            return [d for item in obj[key] for d in _tool_defs(item, where, problems)]
    for key in ("function", "toolSpec"):
        if isinstance(obj.get(key), dict):
            return _tool_defs(obj[key], where, problems)
    # A provider's hosted tool is declared by its type alone (Responses API
    # `{"type": "web_search"}`, `{"type": "mcp", "server_label": ...}`): the type names it,
    # as the hosted call's name does (`hosted_parts`).
    name = as_str(obj.get("name")) or _hosted_tool_type(obj)
    if name is None:
        problems.append(f"{where}: tool definition without a name")
        return []
    schema: JsonValue = None
    # google-genai's `FunctionDeclaration.parameters_json_schema`, camel-cased by its JS SDK
    # (`parametersJsonSchema`: Gemini CLI declares its tools so).
    for key in ("parameters", "parameters_json_schema", "parametersJsonSchema", "input_schema",
                "inputSchema", "json_schema", "schema"):
        if obj.get(key) is not None:
            schema = obj[key]
            break
    if isinstance(schema, dict) and set(schema) == {"json"}:
        schema = schema["json"]
    if isinstance(schema, str):
        ok, parsed = try_json(schema)
        if not ok:
            problems.append(f"{where}: parameters of tool {name!r} are not JSON")
        schema = parsed if ok else None
    return [
        ToolDef(
            name=name,
            description=as_str(obj.get("description")),
            parameters=None if schema is None else canonical_json(schema),
        )
    ]


def _hosted_tool_type(obj: dict[str, Any]) -> str | None:
    kind = as_str(obj.get("type"))
    if not kind or kind in ("function", "object") or "parameters" in obj or "properties" in obj:
        return None  # a function without its name, or a bare schema: no hosted tool
    return kind


# --- tool executions: framework wrappers ------------------------------------------------


def execution(
    name: str, call_id: str | None, arguments: JsonValue, result: str | None,
    failed: bool = False,
) -> ToolExecution:
    """A tool span's execution: arguments canonical, a failed result its error too."""
    return ToolExecution(
        name=name,
        call_id=call_id,
        arguments=None if arguments is None else canonical_arguments(arguments),
        result=result,
        error=result if failed else None,
    )


_INPUT_WRAPPER_KEYS = frozenset(
    {"args", "kwargs", "inputs", "input_str", "tags", "metadata", "sanitize_inputs_outputs"}
)


_CREWAI_TOOL = re.compile(r"Tool Name: (\S+)\nTool Arguments: .*?\nTool Description: (.*)", re.S)


def crewai_tool(description: str | None) -> tuple[str, str] | None:
    """A CrewAI tool's LLM-facing description (crewai `tools/structured_tool.py`
    `format_description_for_llm`: `Tool Name: <name>\nTool Arguments: <schema JSON>\nTool
    Description: <authored>`), which instrumentations record as the tool's description:
    the name the model calls the tool by, sanitized as CrewAI sends it (`utilities/
    string_utils.py` `sanitize_tool_name`: `Delegate work to coworker` is called
    `delegate_work_to_coworker`), and the authored description. None for any other text."""
    found = _CREWAI_TOOL.fullmatch(description or "")
    return (found.group(1), found.group(2)) if found else None


def unwrap_tool_input(value: JsonValue) -> tuple[JsonValue, str | None]:
    """A tool span's recorded input as the arguments the model gave, and the call id a
    wrapper carries (else None).

    Frameworks record the Python call, not the arguments: LlamaIndex `{"kwargs": {...}}`,
    smolagents `{"args": [], "sanitize_inputs_outputs": true, "kwargs": {...}}`, LangChain's
    callback (under OpenLLMetry) `{"input_str", "inputs": {...}, "tags", "metadata",
    "kwargs": {"tool_call_id", ...}}`, decorated functions `{"args": [], "kwargs": {...}}`.
    Only a JSON object whose every key is such a wrapper key is unwrapped: `inputs` when it
    is an object, else `kwargs` when no positional `args` were given. A tool whose own
    argument is named `kwargs` alone is indistinguishable from the wrapper, and unwrapped.
    """
    if isinstance(value, str) and not value.lstrip().startswith("{"):
        return value, None  # every wrapper is an object
    parsed = value
    if isinstance(value, str):
        ok, parsed = try_json(value)
        if not ok:
            return value, None
    if not isinstance(parsed, dict) or not parsed or not set(parsed) <= _INPUT_WRAPPER_KEYS:
        return value, None
    kwargs = parsed.get("kwargs")
    call_id = as_str(kwargs.get("tool_call_id")) if isinstance(kwargs, dict) else None
    if isinstance(parsed.get("inputs"), dict):
        return parsed["inputs"], call_id
    if isinstance(kwargs, dict) and not parsed.get("args") and "inputs" not in parsed:
        return kwargs, None
    return value, None


def unwrap_tool_output(value: JsonValue) -> tuple[str | None, str | None, bool]:
    """A tool span's recorded output as (the result the model saw, a call id it carries,
    whether it reports a failure).

    Unwrapped: LlamaIndex's `ToolOutput` (`{"blocks", "raw_output", "is_error", ...}`: the
    raw output), its workflow agents' `ToolCallResult` (`{"tool_name", "tool_kwargs",
    "tool_id", "tool_output": ToolOutput, "return_direct"}`, llama-index-core
    `agent/workflow/workflow_events.py`: the output's, with the call id), a LangChain
    `ToolMessage` (plain or `lc` constructor form, bare or under `{"output": ...}` as
    OpenLLMetry records it: its content, `tool_call_id`, `status`), a Gemini
    `FunctionResponse` dump (`{"id", "name", "response"}`, as OpenInference's Google ADK
    instrumentation records a tool's output: its response, as a `function_response` part
    reads), Strands' ToolResult content (`[{"text": ...}]`, as JSON text too: the text), a
    LangChain `ToolMessage` as `str()` prints it (`printed_tool_message`).
    Anything else is the result as it is.
    """
    if isinstance(value, str) and value.lstrip().startswith("["):
        # Strands' ToolResult content as JSON text (`[{"text": ...}]`): the text read.
        ok, parsed = try_json(value)
        text_blocks = ok and isinstance(parsed, list) and parsed and all(
            _is_text_block(b) for b in parsed)
        return (block_result_text(parsed) if text_blocks else value), None, False
    if isinstance(value, str) and value.startswith("content=") and (
            printed := printed_tool_message(value)) is not None:
        return printed
    if isinstance(value, str) and not value.lstrip().startswith("{"):
        # Every wrapper is an object: a result of several KB is not parsed to learn that.
        return value, None, False
    parsed = value
    if isinstance(value, str):
        ok, parsed = try_json(value)
        if not ok:
            return value, None, False
    if isinstance(parsed, dict) and {"tool_id", "tool_output"} <= parsed.keys():
        output = parsed["tool_output"]
        if isinstance(output, dict) and "raw_output" in output and "blocks" in output:
            result, _, failed = unwrap_tool_output(output)
            return result, as_str(parsed["tool_id"]), failed
    if isinstance(parsed, dict) and "raw_output" in parsed and "blocks" in parsed:
        return block_result_text(parsed["raw_output"]), None, parsed.get("is_error") is True
    if isinstance(parsed, dict) and {"name", "response"} <= parsed.keys() <= _FUNCTION_RESPONSE:
        part = tool_result(parsed.get("id"), parsed["response"], parsed["name"])
        return part.text, part.call_id, part.is_error
    wrapped = parsed.get("output") if isinstance(parsed, dict) and len(parsed) <= 2 else None
    for candidate in (parsed, wrapped):
        message = tool_message(candidate)
        if message is not None and message.parts:
            part = message.parts[0]
            return part.text, part.call_id, part.is_error
    if value is None:
        return None, None, False
    return (value if isinstance(value, str) else block_result_text(value)), None, False


_FUNCTION_RESPONSE = frozenset({"id", "name", "response", "will_continue", "scheduling", "parts"})
"""The fields of google-genai's `FunctionResponse`."""

_PY_STR = r"""('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
_PRINTED_CONTENT = re.compile("content=" + _PY_STR)
_PRINTED_FIELD = re.compile(r" (tool_call_id|status)=" + _PY_STR)


def printed_tool_message(text: str) -> tuple[str, str | None, bool] | None:
    """A LangChain `ToolMessage` as `str()` prints it (pydantic's `__str__`, each field
    `name=repr(value)` joined by spaces: `content='395' name='calculator'
    tool_call_id='call_1'`), as (its text content, its `tool_call_id`, whether its status
    is `error`); None unless it opens with a string `content` and names a `tool_call_id`.

    OpenLIT's LangChain callback records the tool's output so (openlit/openlit
    `sdk/python/src/openlit/instrumentation/langchain/__init__.py`, `on_tool_end`:
    `truncate_content(output)`, which is `str(output)`, on `gen_ai.tool.call.result`)."""
    content = _PRINTED_CONTENT.match(text)
    if content is None:
        return None
    fields = {m[1]: python_literal(m[2]) for m in _PRINTED_FIELD.finditer(text, content.end())}
    text_content, call_id = python_literal(content[1]), fields.get("tool_call_id")
    if not isinstance(text_content, str) or not isinstance(call_id, str):
        return None
    return text_content, call_id, fields.get("status") == "error"


def tool_message(output: JsonValue) -> Message | None:
    """A serialized LangChain ToolMessage (plain or `lc` constructor form), else None."""
    if not isinstance(output, dict):
        return None
    is_plain = output.get("type") == "tool" and isinstance(output.get("data"), dict)
    ident = output.get("id")
    is_lc = output.get("lc") == 1 and isinstance(ident, list) and ident[-1:] == ["ToolMessage"]
    if not (is_plain or is_lc):
        return None
    message = parse_message(output, "ToolMessage", [])
    return message if message is not None and message.role == "tool" else None
