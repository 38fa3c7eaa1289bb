"""OpenInference (Arize): flattened `llm.*` messages, TOOL spans, `input.value` fallbacks.

Messages are flattened as `llm.input_messages.N.message.{role, content, name,
tool_call_id, contents.K.message_content.{type,text}, tool_calls.M.tool_call.{id,
function.name, function.arguments}}`. Raw request/response JSON in `input.value` /
`output.value` is read only where the flattened messages are absent (Langfuse gets this
precedence backwards), or for what they drop: a tool result's failure, call ids, an
Anthropic request's system prompt and all but the last of a message's tool results, and a
chat request's tools where no `llm.tools` are, else the invocation parameters' (`_from_request`,
`_with_ids`,
`_request_tools`). A message naming a `tool_call_id` is a tool's result, whatever its
role. LangChain TOOL spans serialize a `ToolMessage` as output; its `content` is the
result the model saw and its `tool_call_id` the link to the call.
An AGENT span's agent is `agent.name` (an AG2 chat's: its recipient, `_ag2_recipient`),
else its graph node (`graph.node.name`, `.id`), else
a smolagents run's span name (`_smolagents_run`); a LlamaIndex agent workflow's CHAIN step
names its agent in its input event (`_workflow_step_agent`). An AGENT span's
task is a known key of its JSON input (`_task`), its answer its text output or a known key
of its JSON output (`_agent_answer`: what a `return_direct` run returned). A CrewAI
kickoff's one text input is the user's request (`_kickoff_request`); a CrewAI tool's
`tool.description` is CrewAI's prompt block, which names the tool as the model calls it
(`messages.crewai_tool`), its `tool.name` being the display name. A TOOL span naming
no tool with plain-text input (the OpenAI Agents processor's handoff) is no call's input
and output; a `reasoning` content block is no text.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from msgspec.structs import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.langsmith import graph_agent, run_metadata, run_thread
from turnscore.ingest.conventions.llamaindex import workflow_agent
from turnscore.ingest.conventions.messages import (
    Problems,
    crewai_tool,
    execution,
    flat_messages,
    parse_messages,
    parse_tool_defs,
    system_text,
    text_message,
    unwrap_tool_input,
    unwrap_tool_output,
    whole_messages,
)
from turnscore.ingest.conventions.values import (
    JsonValue,
    as_str,
    try_json,
    unflatten,
)
from turnscore.ingest.model import Message, Part, PartType, SpanKind, ToolDef

_KINDS = {
    "LLM": SpanKind.LLM,
    "AGENT": SpanKind.AGENT,
    "TOOL": SpanKind.TOOL,
    "CHAIN": SpanKind.CHAIN,
}


def decode(view: SpanView, problems: Problems) -> Decoded:
    raw_kind = (as_str(view.get(A.OI_SPAN_KIND)) or "").upper()
    kind = _KINDS.get(raw_kind, SpanKind.OTHER) if raw_kind else None
    if kind is SpanKind.TOOL and view.name.partition(" ")[0] == A.OP_EXECUTE_TASK:
        # A task step, as its name says: OpenInference's OpenLLMetry span processor maps
        # OpenLLMetry's task spans (a LangGraph node, a runnable) to TOOL and drops the
        # traceloop.span.kind that told them apart (openinference-instrumentation-openllmetry
        # `_span_processor.py`, `_SPAN_KIND_MAPPING`); OpenLLMetry names them
        # `execute_task <entity>`, a tool's run `execute_tool <tool>`.
        kind = SpanKind.CHAIN
    metadata = run_metadata(view.get(A.OI_METADATA))
    base = Decoded(
        kind=kind,
        conversation_id=as_str(view.get(A.OI_SESSION_ID)) or run_thread(metadata),
        agent_name=(_ag2_recipient(view) if kind is SpanKind.AGENT else None)
        or as_str(view.get(A.OI_AGENT_NAME))
        or (_graph_node(view) if kind is SpanKind.AGENT else None)
        or graph_agent(view.name, metadata.get)
        or (_smolagents_run(view) if kind is SpanKind.AGENT else None)
        or (_workflow_step_agent(view) if kind is SpanKind.CHAIN else None),
    )
    if kind is SpanKind.TOOL:
        return base.fill(_tool(view, problems))
    inputs = _flat_messages(view, A.OI_INPUT_MESSAGES, problems)
    outputs = _with_finish(_flat_messages(view, A.OI_OUTPUT_MESSAGES, problems, "assistant"),
                           as_str(view.get(A.OI_FINISH_REASON)))
    if kind is SpanKind.LLM:
        inputs = _from_request(view, inputs) if inputs is not None \
            else _raw(view, A.OI_INPUT_VALUE, "user", problems) or _plain_prompt(view)
        outputs = (
            _with_ids(outputs, partial(_response_messages, view)) if outputs is not None
            else _raw(view, A.OI_OUTPUT_VALUE, "assistant", problems)
        )
    elif kind is SpanKind.AGENT:
        inputs = inputs if inputs is not None else _task(view)
        outputs = _last_said(outputs) if outputs is not None else _agent_answer(view)
    elif inputs is None and A.OI_CREW_INPUTS in view.attributes:
        inputs = _kickoff_request(view)
    tools = _tools(view, problems)
    if tools is None and kind is SpanKind.LLM:
        tools = _request_tools(view, problems) or _invocation_tools(view, problems)
    elif tools is None and kind is SpanKind.AGENT:
        tools = _managed_agents(view)
    return base.fill(Decoded(
        input_messages=inputs,
        output_messages=outputs,
        system_instructions=system_text(inputs),
        tool_definitions=tools,
        response_id=_response_id(view) if kind is SpanKind.LLM else None,
    ))


def _ag2_recipient(view: SpanView) -> str | None:
    """The agent an AG2 chat's span runs: the one its sender asks (`ag2.recipient.name`), not
    the sender its `agent.name` names (openinference-instrumentation-ag2 `_wrappers.py`,
    `initiate_chat`): the sender puts the turn's request (a user proxy stands in for the
    user), the recipient answers it."""
    name = as_str(view.get(A.OI_AG2_RECIPIENT_NAME))
    return name if name != "unknown" else None  # the instrumentation's for no recipient


def _graph_node(view: SpanView) -> str | None:
    """The node an AGENT span is in the execution graph, named: `graph.node.name` (the
    spec's human-readable name), else `graph.node.id`, which instrumentations setting no
    `agent.name` fill with the agent's name (openai-agents 1.1 to 1.6, CrewAI, AutoGen
    AgentChat). A span name is no agent's: the OpenAI Agents processor names its root AGENT
    span after the trace ("Agent workflow"). Nor is the id where the span names its agent
    (`gen_ai.agent.name`, read by `decode.build_span`): the Strands span processor sets every
    AGENT span's `graph.node.id` to "strands_agent" beside Strands' own attributes
    (openinference-instrumentation-strands-agents `processor.py`,
    `_set_graph_node_attributes`)."""
    if A.GEN_AI_AGENT_NAME in view.attributes:
        return as_str(view.get(A.OI_GRAPH_NODE_NAME))
    return as_str(view.get(A.OI_GRAPH_NODE_NAME)) or as_str(view.get(A.OI_GRAPH_NODE_ID))


# smolagents' own agent classes: the instrumentation before 0.1.43 names every run span after
# the agent's class, and later ones do for an agent given no name.
_SMOLAGENTS_CLASSES = frozenset({"MultiStepAgent", "ToolCallingAgent", "CodeAgent"})


def _smolagents_run(view: SpanView) -> str | None:
    """The agent a smolagents run span (it carries `smolagents.max_steps`) names: the span is
    `{agent.name}.run`, or `{class}.run` for an agent given no name, which names none
    (openinference-instrumentation-smolagents `_wrappers.py`, `_RunWrapper`; its attributes
    have no `agent.name`). A managed agent's run, nested in its manager's, is named alike."""
    if A.OI_SMOLAGENTS_MAX_STEPS not in view.attributes:
        return None
    name, suffix, rest = view.name.rpartition(A.OI_SMOLAGENTS_RUN_SUFFIX)
    return name if name and suffix and not rest and name not in _SMOLAGENTS_CLASSES else None


def _workflow_step_agent(view: SpanView) -> str | None:
    """The agent a LlamaIndex agent workflow's step runs: the instrumentation records a
    step's arguments as its input, `{"ctx": ..., "ev": repr(event)}`, and the events of
    `setup_agent` and `run_agent_step` name it (`llamaindex.workflow_agent`;
    openinference-instrumentation-llama-index `_handler.py`, `process_input`). Read only
    where the name's key is in the text: most CHAIN inputs are no step's."""
    raw = as_str(view.get(A.OI_INPUT_VALUE))
    if raw is None or A.LI_CURRENT_AGENT_NAME not in raw:
        return None
    ok, value = try_json(raw)
    return workflow_agent(value.get("ev")) if ok and isinstance(value, dict) else None


def _with_finish(
    messages: tuple[Message, ...] | None, finish: str | None
) -> tuple[Message, ...] | None:
    """The span-level `llm.finish_reason` belongs to its single output message."""
    if finish is None or messages is None or len(messages) != 1 or messages[0].finish_reason:
        return messages
    return (Message(messages[0].role, messages[0].parts, finish),)


def _flat_messages(
    view: SpanView, prefix: str, problems: Problems, role: str | None = None
) -> tuple[Message, ...] | None:
    """`role`: the role of a message that names none (an output's is the model's: the
    OpenAI instrumentation leaves it out of a streamed reply that only called tools)."""
    body = _plain_message if role is None else partial(_plain_message, role=role)
    return flat_messages(view.attributes, prefix, body, "no message fields", problems)


def _plain_message(item: JsonValue, role: str | None = None) -> dict[str, Any] | None:
    """The flattened OpenInference message as an OpenAI-style message."""
    body = item.get("message") if isinstance(item, dict) else None
    if not isinstance(body, dict):
        return None
    plain: dict[str, Any] = {"role": role} if role else {}
    plain |= {k: body[k] for k in ("role", "name", "tool_call_id", "content") if k in body}
    if (texts := _indexed_texts(body.get("content"))) is not None:
        plain["content"] = texts
    calls = body.get("tool_calls")
    wrapped = [c.get("tool_call") for c in calls if isinstance(c, dict)] \
        if isinstance(calls, list) else []
    listed = [c for c in wrapped if isinstance(c, dict)]
    contents = body.get("contents")
    if isinstance(contents, list):
        plain["content"] = _content_blocks(contents, listed)
    if listed:
        plain["tool_calls"] = listed
    results = _function_results(item.get("function"))
    if results:
        plain |= {"role": "tool", "content": results}
    elif "tool_call_id" in body and not listed:
        # A message answering a call is the tool's result, whatever role it names: the
        # Anthropic JS instrumentation flattens a `tool_result` block as its user-role
        # message with that block's `tool_call_id` and content (Arize-ai/openinference
        # js/packages/openinference-instrumentation-anthropic `instrumentation.ts`,
        # `getAnthropicInputMessageAttributes`).
        plain["role"] = "tool"
    return plain


def _indexed_texts(content: JsonValue) -> list[dict[str, Any]] | None:
    """`message.content.N`: a message's text blocks, each flattened under its index as a
    string, as text parts (the Claude Agent SDK's instrumentation writes an assistant
    message's text blocks so: openinference-instrumentation-claude-agent-sdk
    `_wrappers.py`); None for any other content."""
    if isinstance(content, dict) and content and all(k.isdigit() for k in content):
        content = [content[k] for k in sorted(content, key=int)]
    if not isinstance(content, list) or not content:
        return None
    if not all(isinstance(t, str) for t in content):
        return None
    return [{"type": "text", "text": t} for t in content]


def _function_results(items: JsonValue) -> list[dict[str, Any]]:
    """A message's `function.N` items: AutoGen AgentChat's tool results (a
    `FunctionExecutionResultMessage`, role `function`), each the JSON of one
    `FunctionExecutionResult` (`{name, content, call_id, is_error}`, Arize-ai/openinference
    `openinference-instrumentation-autogen-agentchat` `_wrappers.py`), as result blocks:
    `is_error` is how the model was told the call failed."""
    if isinstance(items, dict) and all(k.isdigit() for k in items):  # `unflatten` keeps them so
        items = [items[k] for k in sorted(items, key=int)]
    if not isinstance(items, list):
        return []
    blocks = []
    for item in items:
        ok, result = try_json(item) if isinstance(item, str) else (True, item)
        if ok and isinstance(result, dict) and ("call_id" in result or "content" in result):
            blocks.append({**result, "type": "tool_result"})
    return blocks


def _content_blocks(contents: list[Any], listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`contents.N.message_content` blocks. A tool-use part keeps its call beside the
    block (`contents.N.tool_call.*`, the Anthropic instrumentation): it becomes a call
    block, or nothing when `tool_calls` lists the same call (by id) already."""
    listed_ids = {c.get("id") for c in listed}
    blocks: list[dict[str, Any]] = []
    for item in contents:
        if not isinstance(item, dict) or not isinstance(item.get("message_content"), dict):
            continue
        block = item["message_content"]
        call = item.get("tool_call")
        if isinstance(call, dict):
            if (call.get("id") in listed_ids and call.get("id")) or (not call.get("id") and listed):
                continue
            block = {**call, "type": "tool_call"}
        elif block.get("type") in _CALL_BLOCKS and not any(k in block for k in ("name", "id")):
            continue  # a call part naming nothing: the call is in `tool_calls` or nowhere
        elif block.get("type") == _REASONING:
            # The model's reasoning (a Responses reasoning item's summary, openai-agents
            # `_processor.py`) is no text it said: OTel's reasoning part, not a text block.
            block = {"type": _REASONING, "content": block.get("text")}
        blocks.append(block)
    return blocks


_CALL_BLOCKS = frozenset({"tool_use", "tool_call", "function_call"})
_REASONING = "reasoning"


def _tools(view: SpanView, problems: Problems) -> tuple[ToolDef, ...] | None:
    tree = unflatten(view.attributes, A.OI_TOOLS)
    if tree is None:
        return None
    items = tree if isinstance(tree, list) else []
    tools = [item.get("tool") for item in items if isinstance(item, dict)]
    defined = [_tool_def(t) for t in tools if isinstance(t, dict)]
    return parse_tool_defs([d for d in defined if d is not None], A.OI_TOOLS, problems)


def _managed_agents(view: SpanView) -> tuple[ToolDef, ...] | None:
    """The agents a smolagents agent may call as tools, named and described on its AGENT
    span (`smolagents.managed_agents.N.name`, `.description`); smolagents offers each to the
    model as a tool of that name (`task`, `additional_args`), which the LLM span's
    `llm.tools` leave out. No schema: the span does not record one."""
    tree = unflatten(view.attributes, A.OI_SMOLAGENTS_MANAGED_AGENTS)
    agents = [a for a in tree if isinstance(a, dict)] if isinstance(tree, list) else []
    named = [(as_str(a.get("name")), as_str(a.get("description"))) for a in agents]
    return tuple(ToolDef(name=n, description=d) for n, d in named if n) or None


def _tool_def(tool: dict[str, Any]) -> JsonValue:
    """One `llm.tools.N.tool`: its `json_schema`, the whole definition by the spec; where a
    `name` stands beside it, the schema is the parameters' (the Pydantic AI span processor,
    Arize-ai/openinference `openinference-instrumentation-pydantic-ai`
    `semantic_conventions.py`: `tool.name`, `tool.description`, `tool.json_schema`)."""
    schema = tool.get("json_schema")
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        return schema
    ok, parsed = try_json(schema) if isinstance(schema, str) else (True, schema)
    if ok and isinstance(parsed, dict) and (parsed.get("name") or parsed.get("function")):
        return parsed  # a whole definition after all
    description = tool.get("description")
    if description == f"Tool: {name}" and schema is None:
        # The Strands span processor's stand-in for a tool its agent span names alone
        # (`gen_ai.agent.tools`), not a description: not captured (`processor.py`,
        # `_map_tools`, openinference-instrumentation-strands-agents).
        description = None
    return {"name": name, "description": description, "parameters": parsed if ok else None}


def _raw(view: SpanView, key: str, role: str, problems: Problems) -> tuple[Message, ...] | None:
    """Messages from raw `input.value` / `output.value`, when they hold messages at all.

    Recognised: a message list, a chat request or response, a `{text}` completion, and
    (output only) plain text. Anything else stays in the raw attributes only.
    """
    raw = view.get(key)
    if not isinstance(raw, str) or not raw:
        return None
    ok, parsed = try_json(raw)
    if not ok:
        return whole_messages(raw, role, key, problems) if role == "assistant" else None
    if isinstance(parsed, list):
        is_payload = _message_list(parsed)
    else:
        is_payload = isinstance(parsed, dict) and (
            _message_list(parsed.get("messages"))
            or isinstance(parsed.get("choices"), list)
            or isinstance(parsed.get("text"), str)
        )
    return whole_messages(parsed, role, key, problems) if is_payload else None


def _response_id(view: SpanView) -> str | None:
    """The provider's response id, which OpenInference keeps only inside `output.value`:
    the response itself (OpenAI's `chatcmpl-...`, Anthropic's `msg_...`) or LangChain's
    `LLMResult` (`llm_output.id`, Arize-ai/openinference `openinference-instrumentation-
    langchain` `_tracer.py` dumps the run's outputs). It is how another instrumentation's
    span of the same call, in a trace of its own, is found to be that call
    (`turnscore.ingest.calls`): OpenLLMetry's OpenAI instrumentation under OpenInference's
    LangChain one starts its spans outside LangChain's context."""
    raw = view.get(A.OI_OUTPUT_VALUE)
    if not isinstance(raw, str) or '"id"' not in raw:
        return None
    ok, parsed = try_json(raw)
    if not ok or not isinstance(parsed, dict):
        return None
    result = parsed.get("llm_output")
    if isinstance(result, dict):
        return as_str(result.get("id"))
    is_response = "choices" in parsed or parsed.get("type") == "message" or "output" in parsed
    return as_str(parsed.get("id")) if is_response else None


def _request_messages(parsed: JsonValue) -> tuple[Message, ...]:
    """The messages of a raw request in `input.value`, parsed: the request (`{messages:
    [...]}`, the OpenAI, Anthropic, Groq and Mistral AI instrumentations) or the message
    list itself (the Bedrock instrumentation's Converse `messages`, `_converse_attributes.py`)."""
    messages = parsed.get("messages") if isinstance(parsed, dict) else parsed
    if isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], list):
        # LangChain's chat model start: a batch of prompts (`BaseMessage[][]`), here one.
        messages = messages[0]
    if _serialized_messages(messages):
        return parse_messages(messages, A.OI_INPUT_VALUE, [])
    if not _message_list(messages):
        return ()
    return whole_messages(messages, "user", A.OI_INPUT_VALUE, [])


def _serialized_messages(value: JsonValue) -> bool:
    """A non-empty list of LangChain's serialized messages (`{"lc": 1, "type":
    "constructor", "id": [..., "AIMessage"], "kwargs": {...}}`): the LangChain.js
    instrumentation's `input.value` of a chat model's run, whose flattened messages keep
    no call ids (Arize-ai/openinference js/packages/openinference-instrumentation-langchain
    `utils.ts`, `formatInputMessages`: a tool call's name and arguments, a tool message's
    content), while the serialized ones keep the AIMessage's `tool_calls[].id` and the
    ToolMessage's `tool_call_id`."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(m, dict) and m.get("lc") == 1 and isinstance(m.get("kwargs"), dict)
        for m in value
    )


def _response_messages(view: SpanView) -> tuple[Message, ...]:
    """The messages of the raw response in `output.value`: a provider's response, or
    LangChain's `LLMResult` (`generations`, each generation's serialized `message`), which
    the LangChain.js instrumentation dumps whole while flattening its tool calls without ids
    (Arize-ai/openinference js/packages/openinference-instrumentation-langchain `utils.ts`,
    `formatIO` and `formatOutputMessages`)."""
    raw = view.get(A.OI_OUTPUT_VALUE)
    if not isinstance(raw, str):
        return ()
    if raw.startswith('{"generations"'):
        ok, parsed = try_json(raw)
        groups = parsed.get("generations") if ok and isinstance(parsed, dict) else None
        said = [g.get("message") for group in groups if isinstance(group, list)
                for g in group if isinstance(g, dict)] if isinstance(groups, list) else []
        return parse_messages([m for m in said if isinstance(m, dict)], A.OI_OUTPUT_VALUE, [])
    return whole_messages(raw, "assistant", A.OI_OUTPUT_VALUE, [])


def _from_request(view: SpanView, inputs: tuple[Message, ...]) -> tuple[Message, ...]:
    """What the flattened messages drop that the raw request in `input.value` keeps: a tool
    result's failure (the Anthropic instrumentation drops `is_error`; the Bedrock one a
    `toolResult`'s `status: error`, `_converse_attributes.py` `get_message_objects`), by
    call id, and the call ids themselves (`_with_ids`)."""
    raw = view.get(A.OI_INPUT_VALUE)
    cached: list[JsonValue] = []  # the request's JSON, parsed once if anything needs it

    def body() -> JsonValue:
        if not cached:
            ok, value = try_json(raw) if isinstance(raw, str) else (False, None)
            cached.append(value if ok else None)
        return cached[0]

    messages: list[tuple[Message, ...]] = []

    def request() -> tuple[Message, ...]:
        if not messages:
            messages.append(_request_messages(body()))
        return messages[0]

    inputs = _with_ids(inputs, request)
    if isinstance(raw, str) and '"tool_result"' in raw:
        inputs = _unfolded_results(inputs, request())
    if isinstance(raw, str) and '"system"' in raw and system_text(inputs) is None:
        inputs = _request_system(body()) + inputs
    if not isinstance(raw, str) or not any(m in raw for m in _FAILURE_MARKS):
        return inputs
    failed = {
        p.call_id for m in request()
        for p in m.parts if p.type is PartType.TOOL_RESULT and p.is_error and p.call_id
    }
    if not failed:
        return inputs
    return tuple(
        Message(m.role, tuple(
            replace(p, is_error=True) if p.type is PartType.TOOL_RESULT and p.call_id in failed
            else p for p in m.parts), m.finish_reason)
        for m in inputs
    )


_FAILURE_MARKS = ('"is_error"', '"error"')  # Anthropic's flag; Bedrock's `"status": "error"`


def _unfolded_results(
    inputs: tuple[Message, ...], request: tuple[Message, ...]
) -> tuple[Message, ...]:
    """The flattened messages with each one that holds fewer tool results than the raw
    request's message at its place replaced by that one: the Anthropic JS instrumentation
    writes a `tool_result` block's id and content over its message's (`message.tool_call_id`,
    `message.content`), so of parallel results only the last is flattened. The two lists
    are the same messages in order, or nothing is replaced."""
    if len(inputs) != len(request):
        return inputs

    def results(m: Message) -> int:
        return sum(p.type is PartType.TOOL_RESULT for p in m.parts)

    return tuple(
        theirs if results(theirs) > results(ours) else ours
        for ours, theirs in zip(inputs, request, strict=True)
    )


def _request_system(parsed: JsonValue) -> tuple[Message, ...]:
    """The system prompt of a raw Anthropic Messages request (its top-level `system`, text
    or text blocks), which the Anthropic JS instrumentation flattens into no message (only
    `messages` are; the prompt stays in `input.value` and `llm.invocation_parameters`)."""
    system = parsed.get("system") if isinstance(parsed, dict) else None
    if isinstance(system, list):
        texts = [b.get("text") for b in system if isinstance(b, dict)]
        system = "\n".join(t for t in texts if isinstance(t, str)) or None
    return (text_message("system", system),) if isinstance(system, str) and system else ()


def _with_ids(
    messages: tuple[Message, ...], raw: Callable[[], tuple[Message, ...]]
) -> tuple[Message, ...]:
    """Call ids the flattened messages leave out, from the raw request or response (`raw`,
    read only when some call or result lacks an id):
    the Mistral AI instrumentation flattens a tool call's name and arguments and a tool
    message's name and content, never an id (openinference-instrumentation-mistralai
    `_request_attributes_extractor.py`, `_response_attributes_extractor.py`), nor does the
    google-genai instrumentation an output call's (`_get_attributes_from_function_call`),
    while `input.value` / `output.value` hold the whole request and response. The flattened
    messages are the raw ones in order, so the n-th call (result) part is the n-th raw one
    and, lacking an id, takes its id, when both list the same tools in the same order
    (results: the same texts); otherwise nothing is filled."""
    if all(
        p.call_id for m in messages for p in m.parts
        if p.type in (PartType.TOOL_CALL, PartType.TOOL_RESULT)
    ):
        return messages
    found = raw()
    ids: dict[PartType, list[str | None]] = {}
    for kind, same in ((PartType.TOOL_CALL, _same_call), (PartType.TOOL_RESULT, _same_result)):
        ours = [p for m in messages for p in m.parts if p.type is kind]
        theirs = [p for m in found for p in m.parts if p.type is kind]
        if len(ours) == len(theirs) and all(map(same, ours, theirs)):
            ids[kind] = [p.call_id for p in theirs]
    if not ids:
        return messages
    taken = {kind: iter(ids.get(kind, [])) for kind in (PartType.TOOL_CALL, PartType.TOOL_RESULT)}
    return tuple(
        Message(m.role, tuple(
            _given_id(p, next(taken[p.type], None) if p.type in ids else None)
            for p in m.parts), m.finish_reason)
        for m in messages
    )


def _same_call(ours: Part, theirs: Part) -> bool:
    return ours.name == theirs.name and ours.arguments == theirs.arguments


def _same_result(ours: Part, theirs: Part) -> bool:
    return ours.text == theirs.text


def _given_id(part: Part, call_id: str | None) -> Part:
    return part if part.call_id or not call_id else replace(part, call_id=call_id)


def _request_tools(view: SpanView, problems: Problems) -> tuple[ToolDef, ...] | None:
    """The tools of a raw chat request in `input.value`, for an LLM span with no `llm.tools`:
    the Mistral AI instrumentation pops `tools` from what it flattens and records them
    nowhere else (openinference-instrumentation-mistralai `_request_attributes_extractor.py`
    `_get_attributes_from_chat_completion_create_param`). A Gemini request (its `contents`)
    is the Vertex AI instrumentation's, which flattens no tools and records the request as
    proto-plus's `to_dict` (openinference-instrumentation-vertexai `_wrapper.py`): its
    declarations are read in the proto3 JSON form the API is sent (`_proto_json`)."""
    found = _listed_tools(view, A.OI_INPUT_VALUE)
    if found is None:
        return None
    tools, parsed = found
    if _message_list(parsed.get("messages")):
        return parse_tool_defs(tools, A.OI_INPUT_VALUE, problems)
    if isinstance(parsed.get("contents"), list):
        return parse_tool_defs(_proto_json(tools), A.OI_INPUT_VALUE, problems)
    return None


def _invocation_tools(view: SpanView, problems: Problems) -> tuple[ToolDef, ...] | None:
    """The tools among an LLM span's invocation parameters, for a span with no `llm.tools`
    and no raw request naming them: the LangChain instrumentation before `llm.tools` (0.1.29,
    LangGraph 0.2 era) records the chat model's `invocation_params` whole, the tools
    `bind_tools` gave it among them in the provider's form, and nothing else of them
    (openinference-instrumentation-langchain 0.1.29 `_tracer.py`, `_invocation_parameters`;
    its `_tools` reads TOOL runs only)."""
    found = _listed_tools(view, A.OI_INVOCATION_PARAMETERS)
    return None if found is None else parse_tool_defs(found[0], A.OI_INVOCATION_PARAMETERS,
                                                      problems)


def _listed_tools(view: SpanView, key: str) -> tuple[list[JsonValue], dict[str, JsonValue]] | None:
    """The `tools` (a list, not empty) of the JSON object in attribute `key`, and the object."""
    raw = view.get(key)
    if not isinstance(raw, str) or '"tools"' not in raw:
        return None
    ok, parsed = try_json(raw)
    tools = parsed.get("tools") if ok and isinstance(parsed, dict) else None
    if not isinstance(tools, list) or not tools:
        return None
    assert isinstance(parsed, dict)
    return tools, parsed


_PROTO_MAPS = frozenset({"properties", "defs"})
"""A Gemini Schema's map fields: their keys are names of the user's, not field names."""
_PROTO_VALUES = frozenset({"default", "example", "args", "response"})
"""Gemini's `google.protobuf` Value and Struct fields: data, kept as they are."""


def _proto_json(value: JsonValue) -> JsonValue:
    """A proto-plus `to_dict` value (snake_case field names, a Python keyword's field with a
    trailing `_` such as `type_`, every scalar, list and map at its default) in proto3's JSON
    form: lowerCamelCase names, defaults omitted. Enums stay as they came (to_dict's ints are
    what the Vertex SDK's REST transport sends, `enum-encoding=int`)."""
    if isinstance(value, list):
        return [_proto_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, JsonValue] = {}
    for key, item in value.items():
        if key not in _PROTO_VALUES and item in (None, "", "0", False, 0, [], {}):
            continue
        if key in _PROTO_MAPS and isinstance(item, dict):
            item = {name: _proto_json(schema) for name, schema in item.items()}
        elif key not in _PROTO_VALUES:
            item = _proto_json(item)
        head, *rest = key.removesuffix("_").split("_")
        out[head + "".join(w.title() for w in rest)] = item
    return out


_TASK_KEYS = ("task", "input", "query", "question", "prompt", "message")
_PLAIN_TEXT = "text/plain"


def _task(view: SpanView) -> tuple[Message, ...] | None:
    """An agent span's `input.value` recording the call that started the run (smolagents
    `{"task": ..., "stream": ...}`, a query engine's `{"query": ...}`): the first of
    `_TASK_KEYS` holding text is the user's message; text the span declares plain
    (`input.mime_type` `text/plain`: the Claude Agent SDK's prompt, `query(prompt=...)` or
    `ClaudeSDKClient.query`, openinference-instrumentation-claude-agent-sdk `_wrappers.py`
    `_format_prompt_attributes`) is the message itself. Anything else is no message."""
    raw = view.get(A.OI_INPUT_VALUE)
    if as_str(view.get(A.OI_INPUT_MIME_TYPE)) == _PLAIN_TEXT:
        return _plain_prompt(view)
    ok, parsed = try_json(raw) if isinstance(raw, str) else (False, None)
    if not ok or not isinstance(parsed, dict):
        return None
    text = next((parsed[k] for k in _TASK_KEYS if isinstance(parsed.get(k), str)), None)
    if not text or not text.strip():
        return None
    return (text_message("user", text),)


def _plain_prompt(view: SpanView) -> tuple[Message, ...] | None:
    """`input.value` the span declares plain text (`input.mime_type` `text/plain`, the
    spec's one non-JSON form: Arize-ai/openinference `spec/semantic_conventions.md`) is the
    user's message itself: the Claude Agent SDK's prompt on its agent span; the turn's
    prompt on the LLM span openinference-instrumentation-codex makes of a Codex CLI turn
    (`native_otlp_interceptor.py`, `codex.turn`: the `codex.user_prompt` record's text, no
    flattened messages). None when it is not declared so, or holds no text."""
    raw = view.get(A.OI_INPUT_VALUE)
    if as_str(view.get(A.OI_INPUT_MIME_TYPE)) != _PLAIN_TEXT or not isinstance(raw, str):
        return None
    return (text_message("user", raw),) if raw.strip() else None


def _last_said(outputs: tuple[Message, ...]) -> tuple[Message, ...]:
    """An agent span's output messages, when several, are its run's assistant messages in
    order (the Claude Agent SDK's instrumentation records each `AssistantMessage`, one a
    content block: `_wrappers.py`, `llm.output_messages`): the run's output is the last; the
    calls before it are its TOOL spans' and its model calls'."""
    return outputs[-1:] if len(outputs) > 1 else outputs


def _kickoff_request(view: SpanView) -> tuple[Message, ...] | None:
    """A CrewAI kickoff's inputs (`input.value`, as `crew_inputs`) are the values the crew's
    task descriptions interpolate (crewai `Crew.kickoff(inputs=...)`): the only one holding
    text is what the user asked, each task's prompt built from it (grouping rule 5: one
    turn, however many tasks run). Several text inputs are parameters of one template: which
    is the request is not said, so none is."""
    raw = view.get(A.OI_INPUT_VALUE)
    ok, parsed = try_json(raw) if isinstance(raw, str) else (False, None)
    if not ok or not isinstance(parsed, dict):
        return None
    texts = [v for v in parsed.values() if isinstance(v, str) and v.strip()]
    if len(texts) != 1:
        return None
    return (text_message("user", texts[0]),)


_ANSWER_KEYS = ("output", "raw")


def _agent_answer(view: SpanView) -> tuple[Message, ...] | None:
    """What an agent span's `output.value` says the run returned: its text, where the
    instrumentation unwrapped the return value (smolagents' `agent.run`, LangChain's
    single-key chain outputs, openinference-instrumentation-langchain `_convert_io`), or the
    text under the first of `_ANSWER_KEYS` of a returned object (an `AgentExecutor`'s
    `{"output": ..., "intermediate_steps": ...}`, or any version before that unwrapping;
    a CrewAI task's `TaskOutput`, its answer in `raw`, crewai `tasks/task_output.py`).
    Other JSON (a graph's state, a list, null) is no answer. A run whose tool returned directly
    ends on this output (`return_direct`), with no model call to say it."""
    raw = view.get(A.OI_OUTPUT_VALUE)
    if not isinstance(raw, str) or not raw.strip():
        return None
    ok, parsed = try_json(raw)
    if ok and isinstance(parsed, dict):
        parsed = next((parsed[k] for k in _ANSWER_KEYS if isinstance(parsed.get(k), str)), None)
    elif not ok or isinstance(parsed, int | float):
        parsed = raw  # prose, or a number the run returned as text
    if not isinstance(parsed, str) or not parsed.strip():
        return None
    return (text_message("assistant", parsed),)


def _message_list(value: JsonValue) -> bool:
    """A non-empty list of message objects (LlamaIndex puts Python reprs of its
    ChatMessage objects in `output.value` of spans that are not model calls)."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(m, dict) and "role" in m for m in value
    )


def _tool(view: SpanView, problems: Problems) -> Decoded:
    name = as_str(view.get(A.OI_TOOL_NAME)) or view.name
    description = view.get(A.OI_TOOL_DESCRIPTION)
    if crewai := crewai_tool(as_str(description)):
        # CrewAI's tool: its `tool.name` is the display name, not the one the model called.
        name, description = crewai
    call_id = as_str(view.get(A.OI_TOOL_CALL_ID)) or as_str(view.get(A.OI_TOOL_ID))
    if _no_tool_io(view):
        return Decoded(tool_execution=execution(name, call_id, None, None))
    arguments, wrapped_id = unwrap_tool_input(view.get(A.OI_INPUT_VALUE))
    raw_output = view.get(A.OI_OUTPUT_VALUE)
    result, result_id, failed = unwrap_tool_output(raw_output)
    schema = view.get(A.OI_TOOL_PARAMETERS)
    if schema is not None and schema in (view.get(A.OI_INPUT_VALUE),
                                         view.get(A.GEN_AI_TOOL_CALL_ARGUMENTS)):
        # The call's arguments where the tool's parameter schema belongs: AutoGen
        # AgentChat's instrumentation sets both keys to them (`_wrappers.py`), the Pydantic
        # AI span processor copies `gen_ai.tool.call.arguments` (`semantic_conventions.py`).
        schema = None
    definition = parse_tool_defs(
        {"name": name, "description": description, "parameters": schema},
        A.OI_TOOL_PARAMETERS, problems,
    )
    return Decoded(
        tool_execution=execution(name, call_id or result_id or wrapped_id, arguments, result,
                                 failed),
        tool_definitions=definition if schema is not None or description else None,
    )


def _no_tool_io(view: SpanView) -> bool:
    """A TOOL span naming no tool (`tool.name`) whose input is neither declared JSON
    (`input.mime_type`) nor JSON: a framework step reported as a tool, its input and output
    the span's own, no call's arguments and result. openai-agents 2.0 reports a handoff so,
    the agent handing off as input and the agent taking over as output (`_processor.py`);
    tools that take text say which tool they are."""
    if as_str(view.get(A.OI_TOOL_NAME)) or view.get(A.OI_INPUT_MIME_TYPE) == _JSON_MIME:
        return False
    raw = view.get(A.OI_INPUT_VALUE)
    return not isinstance(raw, str) or not isinstance(try_json(raw)[1], dict | list)


_JSON_MIME = "application/json"


OPENINFERENCE = Convention(
    "openinference",
    decode,
    markers=frozenset({A.OI_SPAN_KIND}),
    prefixes=(A.OI_INPUT_MESSAGES + ".",),
    content_keys=(
        A.OI_INPUT_VALUE, A.OI_OUTPUT_VALUE, A.OI_INPUT_MESSAGES, A.OI_OUTPUT_MESSAGES,
        A.OI_TOOLS, A.OI_PROMPTS, A.OI_PROMPT_TEMPLATE, A.OI_RETRIEVAL_DOCUMENTS,
        A.OI_RERANKER_INPUT_DOCUMENTS, A.OI_RERANKER_OUTPUT_DOCUMENTS, A.OI_RERANKER_QUERY,
        A.OI_EMBEDDING_EMBEDDINGS, A.OI_CREW_INPUTS, A.OI_CREW_TASKS, A.OI_CREW_AGENTS,
        A.OI_SMOLAGENTS_MANAGED_AGENTS,
    ),
)  # fmt: skip
