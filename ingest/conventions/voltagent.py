"""VoltAgent's own observability (`@voltagent/core` 2.x): spans typed by `span.type`, under
an agent span marked by `entity.type`; no GenAI attributes.

VoltAgent traces each agent operation with its own tracer provider (`VoltAgentObservability`,
`src/observability/node/volt-agent-observability.ts`), which takes an app's own span
processors (`spanProcessors`), so an OTLP exporter gets these spans; every span carries the
run's `entity.*`, `user.id`, `conversation.id` and `operation.id` (`src/agent/open-telemetry/
trace-context.ts`). What they say (`src/agent/agent.ts`):
- the agent span (named after the agent, no `span.type`): what the app passed
  (`input`, a string or messages), the answer (`output`, its text), the instructions
  (`agent.instructions`), the run's usage summed over its steps (`usage.prompt_tokens`,
  `usage.completion_tokens`), the model (`ai.model.name`), and a snapshot of the agent
  (`agent.stateSnapshot`) whose `tools` list each tool's name and description (its
  `parameters` are zod's internal definition, not JSON Schema: not read);
- `llm:<operation>` spans (`span.type` `llm`): one per `generateText` / `streamText`, over
  the whole step loop, with the messages it started from (`llm.messages`, AI SDK model
  messages, history and system prompt included) and no output; its `llm.usage.*` is the
  AI SDK result's `usage`, the last step's alone (`createLLMSpanFinalizer` is given
  `response.usage`), so it is not read: the agent span's totals count;
- `tool.execution:<name>` spans (`span.type` `tool`): `tool.name`, `tool.call.id`, the
  arguments (`input`) and the result (`output`); a failed tool's `error.message` and an
  error status instead of an output;
- `memory.*` and other typed spans: structure.
"""

from __future__ import annotations

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    parse_messages,
    system_text,
    text_message,
)
from turnscore.ingest.conventions.values import as_int, as_str, json_or_text, result_text
from turnscore.ingest.model import Message, SpanKind, ToolDef, ToolExecution
from turnscore.ingest.records import AttrValue

_AGENT = "agent"
_LLM = "llm"
_TOOL = "tool"


def decode(view: SpanView, problems: Problems) -> Decoded:
    span_type = as_str(view.get(A.VA_SPAN_TYPE))
    conversation = as_str(view.get(A.VA_CONVERSATION_ID))
    if span_type == _TOOL:
        return Decoded(kind=SpanKind.TOOL, conversation_id=conversation,
                       tool_execution=_tool(view))  # fmt: skip
    if span_type == _LLM:
        messages = _messages(view.get(A.VA_LLM_MESSAGES), view.name, problems)
        return Decoded(
            kind=SpanKind.LLM, conversation_id=conversation, input_messages=messages,
            system_instructions=system_text(messages), model=as_str(view.get(A.VA_LLM_MODEL)),
        )  # fmt: skip
    if span_type is not None:
        return Decoded(kind=SpanKind.CHAIN, conversation_id=conversation)
    output = as_str(view.get(A.VA_OUTPUT))
    return Decoded(
        kind=SpanKind.AGENT,
        conversation_id=conversation,
        agent_name=as_str(view.get(A.VA_ENTITY_NAME)),
        input_messages=_messages(view.get(A.VA_INPUT), view.name, problems),
        output_messages=None if output is None else (text_message("assistant", output),),
        system_instructions=as_str(view.get(A.VA_INSTRUCTIONS)),
        tool_definitions=_tools(view, problems),
        model=as_str(view.get(A.VA_MODEL_NAME)),
        input_tokens=as_int(view.get(A.VA_USAGE_PROMPT_TOKENS)),
        output_tokens=as_int(view.get(A.VA_USAGE_COMPLETION_TOKENS)),
    )


def _messages(value: AttrValue, where: str, problems: Problems) -> tuple[Message, ...] | None:
    """Messages as JSON text, or a plain string as one user message (what the app passed)."""
    parsed = json_or_text(value)
    if isinstance(parsed, str):
        return (text_message("user", parsed),) if parsed else None
    if isinstance(parsed, list | dict):
        return parse_messages(parsed, where, problems) or None
    return None


def _tool(view: SpanView) -> ToolExecution:
    """The tool's run: its output, or for a failed one its error message."""
    name = as_str(view.get(A.VA_TOOL_NAME)) or view.name.removeprefix("tool.execution:")
    failed = view.get(A.VA_ERROR_MESSAGE) is not None
    output = view.get(A.VA_OUTPUT)
    result = as_str(view.get(A.VA_ERROR_MESSAGE)) if failed and output is None \
        else None if output is None else result_text(json_or_text(output))
    return execution(name, as_str(view.get(A.VA_TOOL_CALL_ID)),
                     json_or_text(view.get(A.VA_INPUT)), result, failed=failed)  # fmt: skip


def _tools(view: SpanView, problems: Problems) -> tuple[ToolDef, ...] | None:
    """The agent's tools from its state snapshot: names and descriptions."""
    snapshot = view.load(A.VA_STATE_SNAPSHOT, problems) \
        if A.VA_STATE_SNAPSHOT in view.attributes else None
    tools = snapshot.get("tools") if isinstance(snapshot, dict) else None
    if not isinstance(tools, list):
        return None
    return tuple(
        ToolDef(name=t["name"], description=as_str(t.get("description")))
        for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
    ) or None


def _speaks(view: SpanView) -> bool:
    """An agent's span: `entity.type` with the run's `operation.id` beside it."""
    return as_str(view.get(A.VA_ENTITY_TYPE)) == _AGENT and A.VA_OPERATION_ID in view.attributes


VOLTAGENT = Convention(
    "voltagent", decode, markers=frozenset({A.VA_ENTITY_TYPE}), accepts=_speaks,
    content_keys=(A.VA_INPUT, A.VA_OUTPUT, A.VA_INSTRUCTIONS, A.VA_LLM_MESSAGES,
                  A.VA_AGENT_MESSAGES, A.VA_AGENT_MESSAGES_UI, A.VA_STATE_SNAPSHOT),
)  # fmt: skip
