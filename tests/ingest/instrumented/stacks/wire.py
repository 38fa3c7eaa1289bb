"""The scripted model server the stack recordings run against, and the wire records it keeps.

One server on 127.0.0.1 speaks these model APIs:
- OpenAI chat completions, `POST /<stack>/<scenario>/v1/chat/completions` (JSON or SSE;
  any path under `/<stack>/<scenario>/` ending in `chat/completions`),
- OpenAI Responses, `POST /<stack>/<scenario>/v1/responses` (JSON, or with `stream` the
  Responses API's server-sent events as `openai/types/responses/` spells them:
  response.created and .in_progress, each output item's output_item.added, its
  content_part.added, output_text.delta and .done, content_part.done (a `message`) or its
  function_call_arguments.delta and .done (a `function_call`, with its `call_id`), and
  output_item.done, then response.completed with the whole response and its usage); the
  request's `instructions` and `input` (a string, or items: messages, `function_call`,
  `function_call_output`), its tools flat (`{"type": "function", "name", ...}`),
- Anthropic messages, `POST /<stack>/<scenario>/v1/messages` (JSON, or with `stream` the
  Messages API's server-sent events: message_start, each content block's start, delta
  (`text_delta`, `input_json_delta`) and stop, message_delta with the stop reason and output
  tokens, message_stop; `tool_use` blocks),
- Gemini, `POST /<stack>/<scenario>/<version>/models/<model>:generateContent` (JSON;
  `functionCall` parts, with ids as the API may give them) and `:streamGenerateContent`
  (`?alt=sse`: the same answer as `data: <GenerateContentResponse>` events, as the API
  streams it: the text in pieces, each `functionCall` whole in a chunk of its own, the
  finish reason and usage on the last chunk),
- Amazon Bedrock Runtime Converse, `POST /<stack>/<scenario>/model/<modelId>/converse`
  (JSON: `toolUse` content blocks, `stopReason`, `usage`) and `.../converse-stream` (the
  same answer as AWS event-stream frames: messageStart, each content block's start (a
  `toolUse`'s id and name), deltas (`text`, or a `toolUse`'s input JSON in pieces) and stop,
  messageStop with the stop reason, metadata with usage; the frames' binary form is
  `event_frame`'s, which botocore's own parser reads),
- Ollama's native chat, `POST /<stack>/<scenario>/api/chat` (JSON when the request says
  `"stream": false`, else, as the API defaults, NDJSON: one `ChatResponse` a line, the text
  in pieces, the tool calls whole in a chunk of their own, then a `done` chunk with the
  done reason, durations and counts). Tool calls are `message.tool_calls[].function` with
  the arguments as an object and no id (the `ollama` client's `Message.ToolCall`); a tool
  result is a `tool` message naming its tool (`tool_name`), answering the calls before it
  in order,
- Cohere's v2 chat, `POST /<stack>/<scenario>/v2/chat` (JSON, or with `stream` the server-sent
  events the `cohere` SDK's `V2ChatStreamResponse` spells: message-start, the tool plan's
  tool-plan-delta, each call's tool-call-start (its id and name), -delta (the arguments
  in pieces) and -end, or the text's content-start, -delta and -end, then message-end with
  the finish reason and usage). A message's content is a string or `text` parts; an
  answer that calls tools gives its `tool_plan` (the model's plan, which Cohere always
  writes before calls) and `tool_calls` with JSON-string arguments; a result is a `tool`
  message naming its call (`tool_call_id`), its content text or `document` parts.

The Azure AI Agents service's REST API (`/<stack>/<scenario>/{assistants,threads}/...`,
`azure_agents_service.py`) runs its runs' model steps through the chat-completions route's
`answer`, so they are wire records of api 'openai' like any other.

Frameworks wrap what the user said (smolagents sends `New task:\\n<request>`), send tool
results as user messages and drop a failed step's tool calls from the history, so the turn
is the newest user message that contains a scenario's request, and the step is how many
requests of that turn the server has answered before (each stack runs one scenario at a
time, so the count is the conversation's own). In a multi-agent scenario the specialist's
requests are steps of the same turn: the framework hands it the conversation (a handoff) or
the triage agent's tool call gives it the request as its task (an agent as a tool), and the
server answers the triage agent's first request with a call of whatever transfer or
delegation tool the framework offers it (`delegation`). A request that offers a
`final_answer` tool (smolagents, BeeAI) gets its text answer as a call of that tool, as a real
model told to answer through it does, under the tool's only required parameter
(smolagents' `answer`, BeeAI's `response`). A request of a DSPy adapter (its newest user
message ends asking for its signature's output fields) gets them as text (`dspy_reply`):
ReAct's tool loop calls one tool a step, so the turn's calls come one per request, then its
`finish` tool, then the extraction's fields with the answer.

Every exchange is kept as `Wire`: the request body as received and the response as answered
(the whole JSON body; for a stream, the completion or message the chunks or events spell
out and whether usage was sent; an Anthropic stream always sends it). The recordings commit
these, and the expectations are derived from them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.ingest.instrumented.scenarios import (
    ALL_SCENARIOS,
    DELEGATE,
    SERVED_MODEL,
    SPECIALIST_AGENT,
    TOOL_FUNCTIONS,
    Call,
    Step,
)
from tests.ingest.instrumented.server import Exchange, ScriptedServer, _completion, _message
from tests.ingest.instrumented.stacks import azure_agents_service as agents_service

FINAL_ANSWER_TOOL = "final_answer"
ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929"
GEMINI_MODEL = "gemini-2.5-flash"
BEDROCK_LATENCY_MS = 120
RESPONSES_CREATED = 1_780_000_000
TASK_PREFIX = "The user asks: "
OLLAMA_CREATED = "2026-06-01T00:00:00.000000Z"
OLLAMA_NANOS = 1_000_000
COHERE_MODEL = "command-a-03-2025"
DSPY_FINISH = "finish"
"""The tool DSPy's ReAct offers to end its loop: a call of it is no tool use of the turn."""
_DSPY_CHAT = "Respond with the corresponding output fields, starting with the field "
_DSPY_JSON = "Respond with a JSON object in the following order of fields: "
_DSPY_MARKER = re.compile(r"\[\[ ## (\w+) ## \]\]")


@dataclass(frozen=True)
class Wire:
    api: str
    """'openai', 'anthropic', 'gemini', 'bedrock' (Converse, streamed or not: the response
    is the Converse answer either way), 'responses' (OpenAI Responses: the whole response
    object, streamed or not; a stream always ends with it and its usage), 'ollama' (the
    whole `ChatResponse`, streamed or not: a stream's last chunk always has the counts) or
    'cohere' (the v2 chat response, streamed or not: message-end always has the usage)."""
    turn: int
    step: int
    request: dict[str, Any]
    response: dict[str, Any]
    usage_sent: bool
    """False for a stream that did not ask for usage: the client never saw the counts."""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict))
    return ""


def locate(scenario: str, messages: list[dict[str, Any]]) -> int:
    """The turn of a request: the newest user message holding a scenario request; else the
    newest message of any role that quotes one (a handoff's history compacted into an
    assistant summary: the OpenAI Agents SDK's `nest_handoff_history`), the request it
    quotes last."""
    requests = [t.request for t in ALL_SCENARIOS[scenario].turns]
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") != "user":
            continue
        text = _text(messages[i].get("content"))
        turn = next((k for k, r in enumerate(requests) if r in text), None)
        if turn is not None:
            return turn
    for message in reversed(messages):
        text = _text(message.get("content"))
        quoted = [(text.rfind(r), k) for k, r in enumerate(requests) if r in text]
        if quoted:
            return max(quoted)[1]
    raise ValueError(f"no scenario request in {scenario} messages")


def _offered(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools a request offers, each as its name, description and schema's dict (chat
    completions' `function`, Converse's `toolSpec`, Gemini's function declarations, or the
    tool itself: Anthropic's, and the Responses API's flat function tools)."""
    tools = body.get("tools") or (body.get("toolConfig") or {}).get("tools") or ()
    offered: list[dict[str, Any]] = []
    for tool in tools:
        if tool.get("type") == "namespace":
            # A Responses API namespace (Codex CLI offers an MCP server's tools as one,
            # `mcp__<server>`): its tools by their qualified names, `mcp__<server>__<tool>`.
            offered += [{**t, "name": f"{tool.get('name')}__{t.get('name')}"}
                        for t in tool.get("tools") or ()]
            continue
        declared = tool.get("functionDeclarations") or tool.get("function_declarations")
        offered += declared or [tool.get("function") or tool.get("toolSpec") or tool]
    return offered


def _offers(body: dict[str, Any], name: str) -> bool:
    return any(tool.get("name") == name for tool in _offered(body))


def final_answer_parameter(body: dict[str, Any]) -> str:
    """The parameter a request's `final_answer` tool takes the answer in: its only required
    one (`answer` if it declares none, or several)."""
    tool = next((t for t in _offered(body) if t.get("name") == FINAL_ANSWER_TOOL), {})
    required = _schema(tool).get("required") or ()
    return required[0] if len(required) == 1 else "answer"


def _schema(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool's parameters' JSON schema, under whichever key its API declares it."""
    schema: dict[str, Any] = {}
    for key in ("parameters", "input_schema", "inputSchema", "parametersJsonSchema",
                "parameters_json_schema"):  # fmt: skip
        schema = tool.get(key) or schema
    return dict(schema.get("json", schema))


def delegation(body: dict[str, Any]) -> dict[str, Any] | None:
    """The framework's transfer or delegation tool a request offers: one that is neither a
    scenario tool nor `final_answer` (a triage agent has no other)."""
    mine = {*TOOL_FUNCTIONS, FINAL_ANSWER_TOOL}
    return next((t for t in _offered(body) if scenario_tool(t.get("name") or "") not in mine),
                None)  # fmt: skip


_AGENT_PARAMETERS = ("agent", "coworker", "member")


def _delegate(tool: dict[str, Any], request: str) -> Call:
    """A call of the delegation tool. Each string parameter it declares gets: one of its
    enum's values (the specialist's name, if listed), the specialist's name for a parameter
    naming an agent (ADK's `transfer_to_agent(agent_name)`, CrewAI's coworker tools'
    `coworker`, its role; Agno's `delegate_task_to_member(member_id)`, its id), else a task
    written around the user's request, as a model writes its own (an agent-as-tool's
    `input`, CrewAI's `task` and `context`: the sub-agent's newest user message is not the
    user's, yet `locate` finds the turn in it). A handoff that takes none gets `{}`."""
    schema = _schema(tool)
    arguments = {}
    for name, spec in (schema.get("properties") or {}).items():
        if str(spec.get("type")).lower() != "string":
            continue
        if spec.get("enum"):
            listed = spec["enum"]
            arguments[name] = SPECIALIST_AGENT if SPECIALIST_AGENT in listed else listed[0]
        elif any(word in name.lower() for word in _AGENT_PARAMETERS):
            arguments[name] = SPECIALIST_AGENT
        else:
            arguments[name] = f"{TASK_PREFIX}{request}"
    return Call(tool["name"], arguments)


def _newest_user(body: dict[str, Any]) -> str:
    said = [m for m in body.get("messages") or () if m.get("role") == "user"]
    return _text(said[-1].get("content")) if said else ""


def dspy_outputs(body: dict[str, Any]) -> tuple[str, list[str]] | None:
    """The adapter ('chat' or 'json') and output fields a DSPy request asks for: its newest
    user message ends with the adapter's reminder (`dspy/adapters/chat_adapter.py`'s
    `user_message_output_requirements`: `[[ ## <field> ## ]]` markers, then `completed`;
    `json_adapter.py`'s: the fields' names in backquotes); None for any other request."""
    text = _newest_user(body)
    for form, lead, pattern in (("chat", _DSPY_CHAT, _DSPY_MARKER.pattern),
                                ("json", _DSPY_JSON, r"`(\w+)`")):  # fmt: skip
        if lead in text:
            asked = text.rsplit(lead, 1)[1].split("\n")[0]
            return form, [f for f in re.findall(pattern, asked) if f != "completed"]
    return None


def dspy_fields(text: str) -> dict[str, str]:
    """A DSPy chat-adapter text's fields, each `[[ ## <name> ## ]]` marker's text up to the
    next (a ReAct trajectory's `thought_<i>`, `tool_name_<i>`, `tool_args_<i>` and
    `observation_<i>` are markers of their own, inside the `trajectory` input)."""
    pieces = _DSPY_MARKER.split(text)
    return {pieces[k]: pieces[k + 1].strip() for k in range(1, len(pieces) - 1, 2)}


def dspy_values(body: dict[str, Any], text: str) -> dict[str, Any]:
    """The output fields a DSPy reply gives, as its adapter spells them."""
    form, _ = dspy_outputs(body) or ("chat", [])
    if form == "json":
        return dict(json.loads(text))
    values: dict[str, Any] = dspy_fields(text)
    if "next_tool_args" in values:
        values["next_tool_args"] = json.loads(values["next_tool_args"])
    values.pop("completed", None)
    return values


def dspy_reply(scenario: str, turn: int, body: dict[str, Any]) -> Step:
    """A DSPy request's answer: ReAct's step (`next_thought`, `next_tool_name`,
    `next_tool_args`: the turn's next scripted call, the calls of all its steps one by one,
    as many as the trajectory in the request has not made yet; then `finish`), or any other
    signature's fields (the extraction's `reasoning` and outputs: the turn's answer)."""
    form, fields = dspy_outputs(body) or ("chat", [])
    scripted = ALL_SCENARIOS[scenario].turns[turn]
    answer = scripted.steps[-1].text or ""
    values: dict[str, Any] = {"reasoning": "The trajectory has what the answer needs."}
    if "next_tool_name" in fields:
        calls = [c for s in scripted.steps for c in s.calls]
        made = sum(k.startswith("tool_name_") for k in dspy_fields(_newest_user(body)))
        call = calls[made] if made < len(calls) else Call(DSPY_FINISH, {})
        values = {"next_thought": f"Next I call {call.name}.", "next_tool_name": call.name,
                  "next_tool_args": call.arguments}  # fmt: skip
    said = {f: values.get(f, answer) for f in fields}
    if form == "json":
        return Step(text=json.dumps(said))
    text = "\n\n".join(f"[[ ## {f} ## ]]\n{v if isinstance(v, str) else json.dumps(v)}"
                        for f, v in said.items())  # fmt: skip
    return Step(text=f"{text}\n\n[[ ## completed ## ]]")


MCP_PREFIX = "mcp__"
GEMINI_CLI_MCP_PREFIX = "mcp_tools_"
"""How Claude Code names a tool an MCP server gives it: `mcp__<server>__<tool>`."""
OPENCODE_MCP_PREFIX = "tools_"
"""How OpenCode names a tool of the scenario's MCP server `tools`: `<server>_<tool>`."""


def scenario_tool(name: str) -> str:
    """The tool a name offered to the model stands for: the name, or the tool an MCP
    server's prefix names (`mcp__<server>__<tool>`, the Claude Agent SDK's `@tool`s;
    `mcp_<server>_<tool>`, Gemini CLI's, and `<server>_<tool>`, OpenCode's, for the
    scenario's server `tools`)."""
    if name.startswith(MCP_PREFIX) and "__" in name[len(MCP_PREFIX) :]:
        return name[len(MCP_PREFIX) :].split("__", 1)[1]
    for prefix in (GEMINI_CLI_MCP_PREFIX, OPENCODE_MCP_PREFIX):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def _namespaced(body: dict[str, Any], name: str) -> dict[str, str]:
    """A Responses `function_call`'s name, and its `namespace` where the request offered
    the tool inside one (`_offered`: `<namespace>__<tool>`)."""
    for tool in body.get("tools") or ():
        space = tool.get("name") or ""
        if tool.get("type") == "namespace" and name.startswith(space + "__"):
            return {"name": name[len(space) + 2 :], "namespace": space}
    return {"name": name}


def _as_offered(body: dict[str, Any], planned: Step) -> Step:
    """The scripted calls under the names the request offers them as: a tool offered only
    under an MCP server's prefix is called by that name, as the model would call it."""
    names = {scenario_tool(t.get("name") or ""): t.get("name") for t in _offered(body)}
    renamed = [names.get(c.name, c.name) if not _offers(body, c.name) else c.name
               for c in planned.calls]  # fmt: skip
    if renamed == [c.name for c in planned.calls]:
        return planned
    calls = tuple(Call(n, c.arguments) for n, c in zip(renamed, planned.calls, strict=True))
    return Step(calls, planned.text)


def _scripted(scenario: str, turn: int, step: int, body: dict[str, Any]) -> Step:
    if dspy_outputs(body) is not None:
        return dspy_reply(scenario, turn, body)
    scripted = ALL_SCENARIOS[scenario].turns[turn]
    planned = _as_offered(body, scripted.steps[min(step, len(scripted.steps) - 1)])
    if any(c.name == DELEGATE for c in planned.calls):
        tool = delegation(body)
        if tool is None:
            raise ValueError(f"{scenario}: the triage request offers no delegation tool")
        return Step((_delegate(tool, scripted.request),))
    if planned.calls or not _offers(body, FINAL_ANSWER_TOOL):
        return planned
    return Step((Call(FINAL_ANSWER_TOOL, {final_answer_parameter(body): planned.text}),))


def _usage(history: Any, message: dict[str, Any]) -> tuple[int, int]:
    """Fake but deterministic token counts, as in the corpus: len(json) / 4."""
    return len(json.dumps(history)) // 4, len(json.dumps(message)) // 4


def cohere_plan(calls: tuple[Call, ...]) -> str:
    """The tool plan a Cohere answer that calls tools gives: what it is about to call."""
    return f"I will use {' and '.join(c.name for c in calls)}."


def gemini_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Gemini `contents` as role/content messages (`model` is the assistant)."""
    return [
        {"role": "assistant" if c.get("role") == "model" else "user",
         "content": "".join(p.get("text") or "" for p in c.get("parts") or ())}
        for c in body.get("contents") or ()
    ]  # fmt: skip


def responses_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Responses `input` as role/content messages: a string is the user's message; an item
    with a role is a message (its content a string or input_text/output_text parts); a
    `function_call_output` is a tool message; other items (a `function_call`) say nothing.
    `instructions` are not a message of the conversation."""
    items = body.get("input")
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    messages = []
    for item in items or ():
        if item.get("role"):
            messages.append({"role": item["role"], "content": item.get("content")})
        elif item.get("type") == "function_call_output":
            messages.append({"role": "tool", "content": item.get("output")})
    return messages


class StackServer(ScriptedServer):
    """`ScriptedServer`'s lifecycle and OpenAI route, with this module's turn finding,
    wire records and the Anthropic and Gemini routes."""

    def __init__(self) -> None:
        self.wire: dict[tuple[str, str], list[Wire]] = {}
        self.agents = agents_service.AgentsService(self)
        """The Azure AI Agents service, whose runs' model steps are `answer`'s."""
        super().__init__()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _handler(self, super()._handler_class())

    def base_url(self, stack: str, scenario: str) -> str:
        """Without `/v1`: OpenAI clients add it to their base URL, Anthropic's adds it itself."""
        return super().base_url(stack, scenario).removesuffix("/v1")

    def wire_of(self, stack: str, scenario: str) -> list[Wire]:
        with self._lock:
            return list(self.wire.get((stack, scenario), ()))

    def _locate(self, stack: str, scenario: str, messages: list[dict[str, Any]]) -> tuple[int, int]:
        turn = locate(scenario, messages)
        with self._lock:
            step = sum(w.turn == turn for w in self.wire.get((stack, scenario), ()))
        return turn, step

    def _keep(self, stack: str, scenario: str, wire: Wire) -> None:
        with self._lock:
            self.wire.setdefault((stack, scenario), []).append(wire)

    def answer(self, stack: str, scenario: str, body: dict[str, Any]) -> Exchange:
        """The OpenAI chat-completions route (`ScriptedServer`'s handler serves it)."""
        turn, step = self._locate(stack, scenario, body["messages"])
        planned = _scripted(scenario, turn, step, body)
        message = _message(planned, _prefix(stack, scenario, turn, step))
        prompt, completion = _usage(body["messages"], message)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion,
                 "total_tokens": prompt + completion}  # fmt: skip
        exchange = Exchange(stack, scenario, turn, step, body, message, usage)
        sent = not body.get("stream") or bool(
            (body.get("stream_options") or {}).get("include_usage")
        )
        self._keep(stack, scenario, Wire("openai", turn, step, body, _completion(exchange), sent))
        return exchange

    def anthropic(self, stack: str, scenario: str, body: dict[str, Any]) -> dict[str, Any]:
        turn, step = self._locate(stack, scenario, body["messages"])
        planned = _scripted(scenario, turn, step, body)
        prefix = _prefix(stack, scenario, turn, step)
        content: list[dict[str, Any]] = []
        if planned.text is not None:
            content.append({"type": "text", "text": planned.text})
        content += [
            {"type": "tool_use", "id": f"toolu_{prefix}{k}", "name": c.name, "input": c.arguments}
            for k, c in enumerate(planned.calls)
        ]
        prompt, completion = _usage(body["messages"], {"content": content})
        response = {
            "id": f"msg_{prefix}",
            "type": "message",
            "role": "assistant",
            "model": ANTHROPIC_MODEL,
            "content": content,
            "stop_reason": "tool_use" if planned.calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": completion},
        }
        self._keep(stack, scenario, Wire("anthropic", turn, step, body, response, True))
        return response

    def gemini(self, stack: str, scenario: str, body: dict[str, Any]) -> dict[str, Any]:
        turn, step = self._locate(stack, scenario, gemini_messages(body))
        planned = _scripted(scenario, turn, step, body)
        prefix = _prefix(stack, scenario, turn, step)
        parts: list[dict[str, Any]] = []
        if planned.text is not None:
            parts.append({"text": planned.text})
        parts += [
            {"functionCall": {"id": f"call_{prefix}{k}", "name": c.name, "args": c.arguments}}
            for k, c in enumerate(planned.calls)
        ]
        prompt, completion = _usage(body.get("contents"), {"parts": parts})
        response = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": prompt,
                "candidatesTokenCount": completion,
                "totalTokenCount": prompt + completion,
            },
            "modelVersion": GEMINI_MODEL,
            "responseId": f"resp_{prefix}",
        }
        self._keep(stack, scenario, Wire("gemini", turn, step, body, response, True))
        return response

    def bedrock(self, stack: str, scenario: str, body: dict[str, Any]) -> dict[str, Any]:
        """A Converse answer; Bedrock's content blocks carry their own `text` key, so `locate`
        reads the messages as they come."""
        turn, step = self._locate(stack, scenario, body["messages"])
        planned = _scripted(scenario, turn, step, body)
        prefix = _prefix(stack, scenario, turn, step)
        content: list[dict[str, Any]] = []
        if planned.text is not None:
            content.append({"text": planned.text})
        content += [
            {"toolUse": {"toolUseId": f"tooluse_{prefix}{k}", "name": c.name,
                         "input": c.arguments}}
            for k, c in enumerate(planned.calls)
        ]  # fmt: skip
        prompt, completion = _usage(body["messages"], {"content": content})
        response = {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use" if planned.calls else "end_turn",
            "usage": {"inputTokens": prompt, "outputTokens": completion,
                      "totalTokens": prompt + completion},
            "metrics": {"latencyMs": BEDROCK_LATENCY_MS},
        }  # fmt: skip
        self._keep(stack, scenario, Wire("bedrock", turn, step, body, response, True))
        return response

    def ollama(self, stack: str, scenario: str, body: dict[str, Any]) -> dict[str, Any]:
        """An Ollama `ChatResponse`: the model the request named, the assistant message (its
        content empty when it only calls tools, as Ollama's is), `done_reason` "stop" either
        way, fixed durations and the token counts."""
        turn, step = self._locate(stack, scenario, body["messages"])
        planned = _scripted(scenario, turn, step, body)
        message: dict[str, Any] = {"role": "assistant", "content": planned.text or ""}
        if planned.calls:
            message["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments}}
                                     for c in planned.calls]  # fmt: skip
        prompt, completion = _usage(body["messages"], message)
        response = {
            "model": body.get("model"), "created_at": OLLAMA_CREATED, "message": message,
            "done": True, "done_reason": "stop", "total_duration": 4 * OLLAMA_NANOS,
            "load_duration": OLLAMA_NANOS, "prompt_eval_count": prompt,
            "prompt_eval_duration": OLLAMA_NANOS, "eval_count": completion,
            "eval_duration": 2 * OLLAMA_NANOS,
        }  # fmt: skip
        self._keep(stack, scenario, Wire("ollama", turn, step, body, response, True))
        return response

    def cohere(self, stack: str, scenario: str, body: dict[str, Any]) -> dict[str, Any]:
        """A Cohere v2 chat response: the text as a `text` part, or the tool plan and calls;
        `finish_reason` TOOL_CALL or COMPLETE; usage as billed units and tokens."""
        turn, step = self._locate(stack, scenario, body["messages"])
        planned = _scripted(scenario, turn, step, body)
        prefix = _prefix(stack, scenario, turn, step)
        message: dict[str, Any] = {"role": "assistant"}
        if planned.text is not None:
            message["content"] = [{"type": "text", "text": planned.text}]
        if planned.calls:
            message["tool_plan"] = cohere_plan(planned.calls)
            message["tool_calls"] = [
                {"id": f"{c.name}_{prefix}{k}", "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for k, c in enumerate(planned.calls)
            ]  # fmt: skip
        prompt, completion = _usage(body["messages"], message)
        counts = {"input_tokens": prompt, "output_tokens": completion}
        response = {
            "id": f"{prefix[:8]}-{prefix[8:]}", "message": message,
            "finish_reason": "TOOL_CALL" if planned.calls else "COMPLETE",
            "usage": {"billed_units": counts, "tokens": counts},
        }  # fmt: skip
        self._keep(stack, scenario, Wire("cohere", turn, step, body, response, True))
        return response

    def responses(self, stack: str, scenario: str, body: dict[str, Any]) -> dict[str, Any]:
        """A Responses answer: a `message` item with the text, then a `function_call` item
        per call (its `call_id` is what the next request's `function_call_output` names);
        the request's settings echoed as the API echoes them."""
        turn, step = self._locate(stack, scenario, responses_messages(body))
        planned = _scripted(scenario, turn, step, body)
        prefix = _prefix(stack, scenario, turn, step)
        output: list[dict[str, Any]] = []
        if planned.text is not None:
            output.append({"type": "message", "id": f"msg_{prefix}", "status": "completed",
                           "role": "assistant",
                           "content": [{"type": "output_text", "text": planned.text,
                                        "annotations": [], "logprobs": []}]})  # fmt: skip
        output += [
            {"type": "function_call", "id": f"fc_{prefix}{k}", "call_id": f"call_{prefix}{k}",
             **_namespaced(body, c.name), "arguments": json.dumps(c.arguments),
             "status": "completed"}
            for k, c in enumerate(planned.calls)
        ]  # fmt: skip
        prompt, completion = _usage(body.get("input"), output)
        response = {
            "id": f"resp_{prefix}",
            "object": "response",
            "created_at": RESPONSES_CREATED,
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": SERVED_MODEL,
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None},
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "top_p": body.get("top_p", 1.0),
            "truncation": "disabled",
            "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": completion,
                      "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": prompt + completion},
            "user": None,
            "metadata": body.get("metadata") or {},
        }  # fmt: skip
        self._keep(stack, scenario, Wire("responses", turn, step, body, response, True))
        return response


def anthropic_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """A Messages API answer as the stream of events that spells it (name, data)."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**usage, "output_tokens": 0}}  # fmt: skip
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            text = block["text"]
            half = len(text) // 2
            deltas = [{"type": "text_delta", "text": t} for t in (text[:half], text[half:])]
        else:
            # The API opens a tool_use block with empty input and streams the JSON in pieces.
            opened = {**block, "input": {}}
            arguments = json.dumps(block["input"])
            half = len(arguments) // 2
            deltas = [{"type": "input_json_delta", "partial_json": j}
                      for j in (arguments[:half], arguments[half:])]  # fmt: skip
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": opened}  # fmt: skip
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": delta}  # fmt: skip
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"],
                                      "stop_sequence": message.get("stop_sequence")},
                            "usage": {"output_tokens": usage["output_tokens"]}}  # fmt: skip
    yield "message_stop", {"type": "message_stop"}


def responses_events(response: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """A Responses answer as the stream of events that spells it (name, data), numbered as
    the API numbers them (`sequence_number`)."""
    counter = itertools.count()

    def event(kind: str, **data: Any) -> tuple[str, dict[str, Any]]:
        return kind, {"type": kind, "sequence_number": next(counter), **data}

    opened = {**response, "status": "in_progress", "output": [], "usage": None}
    yield event("response.created", response=opened)
    yield event("response.in_progress", response=opened)
    for index, item in enumerate(response["output"]):
        where = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            yield event("response.output_item.added", output_index=index,
                        item={**item, "status": "in_progress", "content": []})  # fmt: skip
            part = item["content"][0]
            yield event("response.content_part.added", **where, content_index=0,
                        part={**part, "text": ""})  # fmt: skip
            text = part["text"]
            half = len(text) // 2
            for piece in (text[:half], text[half:]):
                yield event("response.output_text.delta", **where, content_index=0,
                            delta=piece, logprobs=[])  # fmt: skip
            yield event("response.output_text.done", **where, content_index=0, text=text,
                        logprobs=[])  # fmt: skip
            yield event("response.content_part.done", **where, content_index=0, part=part)
        else:
            yield event("response.output_item.added", output_index=index,
                        item={**item, "status": "in_progress", "arguments": ""})  # fmt: skip
            arguments = item["arguments"]
            half = len(arguments) // 2
            for piece in (arguments[:half], arguments[half:]):
                yield event("response.function_call_arguments.delta", **where, delta=piece)
            yield event("response.function_call_arguments.done", **where, arguments=arguments)
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=response)


def bedrock_events(answer: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """A Converse answer as the ConverseStream events that spell it (event type, payload)."""
    message = answer["output"]["message"]
    yield "messageStart", {"role": message["role"]}
    for index, block in enumerate(message["content"]):
        if "text" in block:
            text = block["text"]
            half = len(text) // 2
            deltas: list[dict[str, Any]] = [{"text": t} for t in (text[:half], text[half:])]
        else:
            use = block["toolUse"]
            yield "contentBlockStart", {
                "start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}},
                "contentBlockIndex": index,
            }
            arguments = json.dumps(use["input"])
            half = len(arguments) // 2
            deltas = [{"toolUse": {"input": j}} for j in (arguments[:half], arguments[half:])]
        for delta in deltas:
            yield "contentBlockDelta", {"delta": delta, "contentBlockIndex": index}
        yield "contentBlockStop", {"contentBlockIndex": index}
    yield "messageStop", {"stopReason": answer["stopReason"]}
    yield "metadata", {"usage": answer["usage"], "metrics": answer["metrics"]}


def gemini_chunks(answer: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A generateContent answer as the streamGenerateContent chunks that spell it."""
    candidate = answer["candidates"][0]
    pieces: list[dict[str, Any]] = []
    for part in candidate["content"]["parts"]:
        if "text" in part:
            half = len(part["text"]) // 2
            pieces += [{"text": part["text"][:half]}, {"text": part["text"][half:]}]
        else:
            pieces.append(part)
    same = {k: answer[k] for k in ("modelVersion", "responseId")}
    for k, piece in enumerate(pieces):
        chunk = {"content": {"role": "model", "parts": [piece]}, "index": 0}
        if k < len(pieces) - 1:
            yield {"candidates": [chunk], **same}
        else:
            yield {"candidates": [chunk | {"finishReason": candidate["finishReason"]}],
                   "usageMetadata": answer["usageMetadata"], **same}  # fmt: skip


def ollama_chunks(answer: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """An Ollama chat answer as the NDJSON chunks that spell it: the text in two pieces, the
    tool calls whole in one chunk, then the `done` chunk (empty content) with the rest."""
    message = answer["message"]
    same = {"model": answer["model"], "created_at": answer["created_at"]}
    text = message["content"]
    half = len(text) // 2
    for piece in (text[:half], text[half:]) if text else ():
        yield {**same, "message": {"role": "assistant", "content": piece}, "done": False}
    if message.get("tool_calls"):
        yield {**same, "message": {"role": "assistant", "content": "",
                                   "tool_calls": message["tool_calls"]}, "done": False}  # fmt: skip
    yield {**answer, "message": {"role": "assistant", "content": ""}}


def cohere_events(answer: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """A Cohere v2 chat answer as the stream events that spell it (name, data)."""
    message = answer["message"]

    def event(kind: str, **data: Any) -> tuple[str, dict[str, Any]]:
        return kind, {"type": kind, **data}

    def halves(text: str) -> tuple[str, str]:
        return text[: len(text) // 2], text[len(text) // 2 :]

    yield event("message-start", id=answer["id"], delta={"message": {
        "role": "assistant", "content": [], "tool_plan": "", "tool_calls": [],
        "citations": []}})  # fmt: skip
    for piece in halves(message.get("tool_plan") or "") if message.get("tool_plan") else ():
        yield event("tool-plan-delta", delta={"message": {"tool_plan": piece}})
    for index, call in enumerate(message.get("tool_calls") or ()):
        opened = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
        yield event("tool-call-start", index=index, delta={"message": {"tool_calls": opened}})
        for piece in halves(call["function"]["arguments"]):
            yield event("tool-call-delta", index=index,
                        delta={"message": {"tool_calls": {"function": {"arguments": piece}}}})
        yield event("tool-call-end", index=index)
    for index, part in enumerate(message.get("content") or ()):
        yield event("content-start", index=index,
                    delta={"message": {"content": {"type": "text", "text": ""}}})
        for piece in halves(part["text"]):
            yield event("content-delta", index=index,
                        delta={"message": {"content": {"text": piece}}})
        yield event("content-end", index=index)
    yield event("message-end", delta={"finish_reason": answer["finish_reason"],
                                      "usage": answer["usage"]})


def event_frame(event_type: str, payload: dict[str, Any]) -> bytes:
    """One AWS event-stream message: a prelude (total and headers lengths, big-endian, and
    their CRC32), string headers (name length byte, name, type 7, value length, value), the
    JSON payload, and the CRC32 of everything before it."""
    headers = b""
    for name, value in ((":event-type", event_type), (":content-type", "application/json"),
                        (":message-type", "event")):  # fmt: skip
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return head + struct.pack(">I", zlib.crc32(head))


def _prefix(stack: str, scenario: str, turn: int, step: int) -> str:
    return hashlib.sha256(f"{stack}/{scenario}/{turn}/{step}".encode()).hexdigest()[:12]


def _handler(
    server: StackServer, openai: type[BaseHTTPRequestHandler]
) -> type[BaseHTTPRequestHandler]:
    class Handler(openai):  # type: ignore[misc, valid-type]
        def do_POST(self) -> None:
            parts = self.path.split("?")[0].strip("/").split("/")
            route = parts[2:]
            if route[:1] and route[0] in agents_service.COLLECTIONS:
                self._agents("POST")
                return
            gemini = len(route) == 3 and route[1] == "models"
            gemini = gemini and route[2].endswith((":generateContent", ":streamGenerateContent"))
            bedrock = len(route) == 3 and route[0] == "model"
            bedrock = bedrock and route[2] in ("converse", "converse-stream")
            responses = route[-1:] == ["responses"]
            ollama = route == ["api", "chat"]
            cohere = route == ["v2", "chat"]
            if (not gemini and not bedrock and not responses and not ollama and not cohere
                    and route != ["v1", "messages"]):  # fmt: skip
                if route[-2:] == ["chat", "completions"]:
                    # Clients of OpenAI-compatible APIs put it under their own prefixes
                    # (Groq's /openai/v1, Azure's /openai/deployments/<name>, a query).
                    self.path = f"/{parts[0]}/{parts[1]}/v1/chat/completions"
                super().do_POST()
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if cohere and body.get("stream"):
                self._events(server.cohere(parts[0], parts[1], body), cohere_events)
            elif cohere:
                self._json(server.cohere(parts[0], parts[1], body))
            elif ollama and body.get("stream", True):
                self._lines(ollama_chunks(server.ollama(parts[0], parts[1], body)))
            elif ollama:
                self._json(server.ollama(parts[0], parts[1], body))
            elif responses and body.get("stream"):
                self._events(server.responses(parts[0], parts[1], body), responses_events)
            elif responses:
                self._json(server.responses(parts[0], parts[1], body))
            elif bedrock and route[2] == "converse-stream":
                self._frames(server.bedrock(parts[0], parts[1], body))
            elif bedrock:
                self._json(server.bedrock(parts[0], parts[1], body))
            elif gemini and route[2].endswith(":streamGenerateContent"):
                self._data(gemini_chunks(server.gemini(parts[0], parts[1], body)))
            elif gemini:
                self._json(server.gemini(parts[0], parts[1], body))
            elif body.get("stream"):
                self._events(server.anthropic(parts[0], parts[1], body), anthropic_events)
            else:
                self._json(server.anthropic(parts[0], parts[1], body))

        def do_GET(self) -> None:
            self._agents("GET")

        def do_DELETE(self) -> None:
            self._agents("DELETE")

        def _agents(self, method: str) -> None:
            """The Azure AI Agents service's routes (`azure_agents_service`)."""
            path, _, query = self.path.partition("?")
            parts = path.strip("/").split("/")
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            status, answer = server.agents.handle(parts[0], parts[1], method, parts[2:],
                                                  query, body)  # fmt: skip
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _json(self, body: dict[str, Any]) -> None:
            self._send(json.dumps(body).encode())

        def _events(
            self,
            answer: dict[str, Any],
            spell: Callable[[dict[str, Any]], Iterator[tuple[str, dict[str, Any]]]],
        ) -> None:
            # Ended by closing the connection, as the OpenAI route's stream is.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for name, data in spell(answer):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

        def _data(self, chunks: Iterator[dict[str, Any]]) -> None:
            # Server-sent events without names, as Gemini's `alt=sse` streams them.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())

        def _lines(self, chunks: Iterator[dict[str, Any]]) -> None:
            # Newline-delimited JSON, as Ollama streams; ended by closing the connection.
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(json.dumps(chunk).encode() + b"\n")

        def _frames(self, answer: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.amazon.eventstream")
            self.end_headers()
            for name, payload in bedrock_events(answer):
                self.wfile.write(event_frame(name, payload))

    return Handler
