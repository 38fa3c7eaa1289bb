"""OpenLLMetry (Traceloop): legacy flattened prompts, request functions, entity input/output.

Legacy LLM spans (before 0.55) flatten messages as `gen_ai.prompt.N.{role, content,
tool_call_id, tool_calls.M.{id, name, arguments}}` and `gen_ai.completion.N.{role, content,
finish_reason, tool_calls.M.*, function_call.*}`; `content` may itself be a JSON string of
content blocks. BerriAI/litellm's older OTel callback (`litellm/integrations/opentelemetry.py`
`set_attributes`) writes the same keys: a prompt's role, and its content only when it has
one, so a replayed tool-call message is its role alone (kept as an assistant message
without parts: `links`' gap rule chains the calls), the completion's calls as
`gen_ai.completion.N.function_call.{name, arguments}`, without ids. Tools are
`llm.request.functions.N.{name, description, parameters}` (AgentOps' fork of the OpenAI
instrumentation: `gen_ai.request.functions.N.*`). The Cohere instrumentation appends an
answer's tool plan to its completion content, which is no answer (`_without_plan`).
Workflow/task/agent/tool spans
carry `traceloop.entity.input` / `output` JSON; sessions ride in
`traceloop.association.properties.*`. Newer versions use the OTel attributes, which
`otel_genai` reads.

The CrewAI instrumentation makes each task a `task` span holding the task's description,
the kickoff's inputs interpolated (`crewai.task.description`): its user message, the request
its model calls' prompts are built around; its entity output is the task's answer. The
crew's kickoff span (`crewai.workflow`, no span kind) is given its first task's description
(from `crewai.crew.tasks_output`), so a crew's tasks serve one request.

The LlamaIndex instrumentation (`dispatcher_wrapper.py`) makes every step of a workflow
agent a `task` span; the `call_tool` step's is the tool's execution: it names the tool
(`tool.name`) and its arguments (`tool.arguments`), and its entity output is LlamaIndex's
`ToolCallResult` (the call id, and the `ToolOutput` with the result and `is_error`). The
tool's own `FunctionTool.task` span under it is a plain task: one execution per call. The
steps that return an `AgentInput` or `AgentSetup` name the agent (`_workflow_step_agent`).
The Agno instrumentation makes a Team's run a `workflow` span naming the team
(`agno.team.name`): the team is the agent that runs the turn, an agent run (its leader's
model calls are under it, and a member it delegates to runs beside the delegation's tool
span, not under it: a delegated run, `grouping` rule 2).

The Haystack instrumentation's generator span (`haystack.openai.chat`, `llm.request.type`
chat) wraps a component's `run`, not a model call, and records nothing of one
(opentelemetry-instrumentation-haystack `wrap_openai.py`): its prompt is each message's
`.content`, which Haystack 2.9 removed from `ChatMessage` (the attribute is never set), and
its completions enumerate the component's output dict, so `gen_ai.completion.0.content` is
the key `replies`. It is structure: the call is the OpenAI client's span under it, which a
traceloop-sdk application instruments too.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from msgspec.structs import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.llamaindex import workflow_agent
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    flat_messages,
    parse_message,
    parse_messages,
    parse_tool_defs,
    system_text,
    text_message,
    unwrap_tool_input,
    unwrap_tool_output,
)
from turnscore.ingest.conventions.values import (
    JsonValue,
    as_str,
    first_str,
    json_or_text,
    unflatten,
)
from turnscore.ingest.model import Message, PartType, SpanKind, ToolDef, ToolExecution

_KINDS = {
    "workflow": SpanKind.CHAIN,
    "task": SpanKind.CHAIN,
    "agent": SpanKind.AGENT,
    "tool": SpanKind.TOOL,
}
_LLM_TYPES = frozenset({"chat", "completion"})
_SESSION_KEYS = tuple(
    A.TL_ASSOCIATION_PREFIX + p for p in ("session_id", "conversation_id", "thread_id", "chat_id")
)


def decode(view: SpanView, problems: Problems) -> Decoded:
    if view.name.startswith(A.TL_HAYSTACK_GENERATOR_SPAN):
        return Decoded(kind=SpanKind.CHAIN)  # no model call of its own: see the docstring
    tl_kind = _KINDS.get(as_str(view.get(A.TL_SPAN_KIND)) or "")
    inputs = _listed(_flat(view, A.GEN_AI_PROMPT, "user", problems), problems)
    outputs = _flat(view, A.GEN_AI_COMPLETION, "assistant", problems)
    if outputs and as_str(view.get(A.TL_SYSTEM)) == A.TL_COHERE_SYSTEM:
        outputs = tuple(_without_plan(m) for m in outputs)
    if inputs and as_str(view.get(A.TL_SYSTEM)) == A.TL_LANGCHAIN_SYSTEM:
        inputs = _langchain_results(inputs, problems)
    is_llm = (as_str(view.get(A.TL_REQUEST_TYPE)) in _LLM_TYPES) or inputs is not None
    kind = tl_kind or (SpanKind.LLM if is_llm else None)
    if tl_kind is SpanKind.CHAIN and as_str(view.get(A.TL_TOOL_NAME)):
        kind = SpanKind.TOOL  # a LlamaIndex call_tool step
    team = as_str(view.get(A.TL_AGNO_TEAM_NAME)) if tl_kind is SpanKind.CHAIN else None
    if team:
        kind = SpanKind.AGENT
    functions = unflatten(view.attributes, A.TL_REQUEST_FUNCTIONS)
    if functions is None:  # AgentOps' fork of the OpenAI instrumentation
        functions = unflatten(view.attributes, A.AGENTOPS_REQUEST_FUNCTIONS)
    if inputs is None and tl_kind is SpanKind.CHAIN:
        inputs = _crewai_task(view)
    elif inputs is None and tl_kind is None:
        inputs = _crewai_kickoff(view)
    base = Decoded(
        kind=kind,
        input_messages=inputs,
        output_messages=outputs,
        system_instructions=system_text(inputs),
        tool_definitions=None if functions is None
        else parse_tool_defs(functions, A.TL_REQUEST_FUNCTIONS, problems),
        conversation_id=first_str(view.attributes, _SESSION_KEYS),
        agent_name=team or (as_str(view.get(A.TL_ENTITY_NAME)) if kind is SpanKind.AGENT
                            else _workflow_step_agent(view) if tl_kind is SpanKind.CHAIN
                            else None),
    )
    if kind is SpanKind.TOOL:
        return base.fill(Decoded(tool_execution=_tool(view)))
    if tl_kind is None and base.tool_definitions is None:
        return base.fill(Decoded(tool_definitions=_mcp_listed_tools(view, problems)))
    return base


def _mcp_listed_tools(view: SpanView, problems: Problems) -> tuple[ToolDef, ...] | None:
    """The tools an MCP server listed, from the client's `tools/list` request span: the
    MCP instrumentation (opentelemetry-instrumentation-mcp 0.62.4 `instrumentation.py`,
    `patch_mcp_client` > `_handle_mcp_method`) names it `tools/list.mcp`, with no span kind,
    the request's JSON as entity input and the `ListToolsResult`'s (`tools`, each `{name,
    description, inputSchema}`) as entity output. An agent lists its MCP servers' tools each
    run, inside the run's trace (the OpenAI Agents SDK's `MCPUtil.get_all_function_tools`):
    the turn's tools, where a chat completions model call records none."""
    request = json_or_text(view.get(A.TL_ENTITY_INPUT))
    if not isinstance(request, dict) or request.get("method") != A.TL_MCP_LIST_TOOLS:
        return None
    result = json_or_text(view.get(A.TL_ENTITY_OUTPUT))
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list):
        return None
    return parse_tool_defs(tools, A.TL_ENTITY_OUTPUT, problems)


def _workflow_step_agent(view: SpanView) -> str | None:
    """The agent a LlamaIndex agent workflow's step ran for: the steps `init_run` and
    `setup_agent` return an event naming it, which the instrumentation records as the task's
    entity output, `model_dump()` JSON (`llamaindex.workflow_agent`). Parsed only where the
    name's key is in the text."""
    raw = as_str(view.get(A.TL_ENTITY_OUTPUT))
    return workflow_agent(json_or_text(raw)) \
        if raw is not None and A.LI_CURRENT_AGENT_NAME in raw else None


_UNKNOWN_ROLE = "unknown"


def _langchain_results(messages: tuple[Message, ...], problems: Problems) -> tuple[Message, ...]:
    """A LangChain prompt's tool results, which the LangChain instrumentation before 0.4x
    names role `unknown` (its `_message_type_to_role` knows `human`, `system` and `ai`
    only: traceloop/openllmetry `opentelemetry-instrumentation-langchain` 0.33
    `callback_handler.py`), and whose replayed calls it drops (an AI message's text alone,
    empty for one that only called tools). An `unknown` message answering such a text-less
    assistant message (directly or after another result) is a tool's result; others (a
    `ChatMessage` with a role of its own, a streamed `AIMessageChunk`) stay as they are."""
    result: list[Message] = []
    answering = False
    for message in messages:
        if message.role == _UNKNOWN_ROLE and answering:
            message = parse_message({"role": "tool", "content": message.text},
                                    "langchain tool result", problems) or message
        elif message.role != _UNKNOWN_ROLE:
            answering = message.role == "assistant" and not message.text.strip()
        result.append(message)
    return tuple(result)


def _without_plan(message: Message) -> Message:
    """A Cohere completion without its tool plan. Cohere's v2 answer gives the plan before
    its calls apart from the content (`message.tool_plan`), and a client replays it apart
    too, which the prompt attributes never record (their role and content only); the
    instrumentation appends it to the content as its last text block
    (opentelemetry-instrumentation-cohere `span_utils.py`, `set_response_content_attributes`).
    The plan is no answer: without it a call that only asked for tools is one, as its
    replay (an assistant message without content) says."""
    if not any(p.type is PartType.TOOL_CALL for p in message.parts):
        return message
    last = max((i for i, p in enumerate(message.parts) if p.type is PartType.TEXT), default=None)
    if last is None:
        return message
    return replace(message, parts=message.parts[:last] + message.parts[last + 1 :])


def _crewai_task(view: SpanView) -> tuple[Message, ...] | None:
    """A CrewAI task span's `crewai.task.description`: the task as its agent is given it,
    the kickoff's inputs interpolated (the instrumentation records the Task's attributes as
    `Task.execute_sync` starts, after `Crew.kickoff` interpolated them), the user message the
    task's model calls build their prompt around (grouping rule 5). The kickoff's inputs
    themselves are recorded nowhere (opentelemetry-instrumentation-crewai
    `instrumentation.py` `wrap_task_execute`, `crewai_span_attributes.py`)."""
    text = as_str(view.get(A.CREWAI_TASK_DESCRIPTION))
    return _user(text) if text else None


# A Crew's `tasks_output` as the instrumentation records it: `str()` of the list of
# TaskOutput models (crewai `tasks/task_output.py`), whose first field is the description.
_FIRST_TASK = re.compile(r"""\[TaskOutput\(description=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


def _crewai_kickoff(view: SpanView) -> tuple[Message, ...] | None:
    """A crew's kickoff span: the request is what its first task was given (the kickoff's
    inputs interpolated), so that every task the crew ran for it (a later task's prompt
    quoting the request) is one turn (grouping rule 5). `crewai.crew.tasks` holds the tasks
    as they were when the kickoff started: templates on the first kickoff, the previous
    kickoff's interpolation after; only the outputs (`crewai.crew.tasks_output`, a Python
    repr, set when the kickoff returns) name what this one ran."""
    raw = as_str(view.get(A.CREWAI_CREW_TASKS_OUTPUT))
    found = _FIRST_TASK.match(raw) if raw else None
    if found is None:
        return None
    try:
        text = ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError):
        return None
    return _user(text) if isinstance(text, str) else None


def _user(text: str) -> tuple[Message, ...] | None:
    return (text_message("user", text),) if text.strip() else None


_NOT_INDEXED = frozenset({A.GEN_AI_PROMPT_NAME})
"""Keys under a flattened prefix that are attributes of their own, not a message's:
OTel GenAI's `gen_ai.prompt.name` (the prompt template's name; Gemini CLI 0.61 sets it to
the prompt id on its `llm_call` spans)."""


def _flat(view: SpanView, prefix: str, role: str, problems: Problems) -> tuple[Message, ...] | None:
    attributes = view.attributes
    if any(k in attributes for k in _NOT_INDEXED):
        attributes = {k: v for k, v in attributes.items() if k not in _NOT_INDEXED}
    return flat_messages(attributes, prefix, lambda item: _plain(item, role),
                         "not a message", problems)


def _listed(
    messages: tuple[Message, ...] | None, problems: Problems
) -> tuple[Message, ...] | None:
    """A prompt that is one user message holding a message list's JSON text is that list:
    AgentOps' OpenAI Agents SDK exporter flattens a generation's input after serializing it,
    so the whole conversation becomes `gen_ai.prompt.0.content` with role `user` (agentops
    0.4.21 `instrumentation/agentic/openai_agents/attributes/common.py`,
    `get_generation_span_attributes`)."""
    if not messages or len(messages) != 1 or messages[0].role != "user":
        return messages
    parts = messages[0].parts
    text = parts[0].text if len(parts) == 1 and parts[0].type is PartType.TEXT else None
    if not text or not text.startswith("[{"):
        return messages
    listed = json_or_text(text)
    if not (isinstance(listed, list)
            and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in listed)):
        return messages
    return parse_messages(listed, A.GEN_AI_PROMPT, problems)


def _plain(item: JsonValue, role: str) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    plain = {k: v for k, v in item.items() if k not in ("tool_calls", "function_call")}
    if not plain.get("role"):
        # An empty role is no role: the Mistral AI instrumentation (0.62) gives a streamed
        # completion the last chunk's delta role, which is unset (opentelemetry-
        # instrumentation-mistralai `__init__.py` `_accumulate_streaming_response`).
        plain["role"] = role
    calls = item.get("tool_calls")
    if isinstance(calls, list):
        plain["tool_calls"] = [c for c in calls if isinstance(c, dict)]
    if isinstance(item.get("function_call"), dict):
        plain["function_call"] = item["function_call"]
    return plain


def _tool(view: SpanView) -> ToolExecution:
    name = (as_str(view.get(A.TL_TOOL_NAME)) or as_str(view.get(A.TL_ENTITY_NAME))
            or view.name.removesuffix(".tool"))  # fmt: skip
    entity_in = json_or_text(view.get(A.TL_TOOL_ARGUMENTS) or view.get(A.TL_ENTITY_INPUT))
    arguments, wrapped_id = unwrap_tool_input(entity_in)
    if isinstance(arguments, dict) and arguments is entity_in:
        # LangChain's older callback records {"input": ...} alone.
        for key in ("inputs", "kwargs", "input"):
            if key in entity_in and entity_in[key] not in (None, {}, []):
                arguments = entity_in[key]
                break
    entity_out = json_or_text(view.get(A.TL_ENTITY_OUTPUT))
    if isinstance(entity_out, dict) and "output" in entity_out and len(entity_out) <= 2:
        entity_out = entity_out["output"]
    result, result_id, failed = unwrap_tool_output(entity_out)
    return execution(name, result_id or wrapped_id, arguments, result, failed)


OPENLLMETRY = Convention(
    "openllmetry",
    decode,
    # A CrewAI crew's span has no span kind: its crewai.crew.* keys are OpenLLMetry's alone.
    # The MCP instrumentation's request spans (`<method>.mcp`) have no span kind, only the
    # entity input and output.
    markers=frozenset({A.TL_SPAN_KIND, A.TL_REQUEST_TYPE, A.CREWAI_CREW_TASKS,
                       A.TL_ENTITY_INPUT}),
    prefixes=(
        A.GEN_AI_PROMPT + ".", A.GEN_AI_COMPLETION + ".", A.TL_REQUEST_FUNCTIONS + ".",
        A.TL_ASSOCIATION_PREFIX, A.AGENTOPS_REQUEST_FUNCTIONS + ".",
    ),
    content_keys=(
        A.GEN_AI_PROMPT, A.GEN_AI_COMPLETION, A.TL_ENTITY_INPUT, A.TL_ENTITY_OUTPUT,
        A.TL_REQUEST_FUNCTIONS, A.TL_TASK_INPUT, A.TL_TASK_OUTPUT, A.TL_TOOL_ARGUMENTS,
        A.AGENTOPS_REQUEST_FUNCTIONS,
        # CrewAI's instrumentation copies the crew's and tasks' texts onto its spans.
        A.CREWAI_CREW_RESULT, A.CREWAI_CREW_TASKS_OUTPUT, A.CREWAI_CREW_TASKS,
        A.CREWAI_TASK_DESCRIPTION, A.CREWAI_TASK_EXPECTED_OUTPUT, A.CREWAI_AGENT_GOAL,
        A.CREWAI_AGENT_BACKSTORY, A.CREWAI_CREW_AGENTS, A.CREWAI_AGENT_TOOLS, A.CREWAI_TASK_TOOLS,
    ),
)  # fmt: skip
