"""AgentOps' own spans: what `agentops.span.kind` says (AgentOps-AI/agentops).

AgentOps exports three kinds of spans (read in agentops 0.4.21):
- its forks of provider instrumentations (`instrumentation/providers/openai/`: the
  `openai.chat.completion` span with OpenLLMetry's flattened prompt and completion, tools
  as `gen_ai.request.functions.N.*`): no span kind of AgentOps' own, read by `openllmetry`;
- its bridges of agent frameworks' own tracing, each span of the framework's given an
  `agentops.span.kind` (`semconv/span_kinds.py`, `AgentOpsSpanKindValues`): the OpenAI
  Agents SDK processor (`instrumentation/agentic/openai_agents/exporter.py`,
  `attributes/common.py`) makes the SDK's agent span `agent` (`agent.name`, `agent.tools`
  a JSON list of names), its function span `tool` (`tool.name`, `tool.parameters` the
  arguments as JSON text, `tool.result`, `tool.status`, no call id), its generation and
  response spans `llm` (the prompt flattened as OpenLLMetry's, read there);
- the spans of its SDK's decorators (`sdk/decorators/utility.py`): `agentops.span.kind` the
  decorator's kind, `operation.name` the function's name, its call as
  `agentops.<kind>.input` (`{"args": [...], "kwargs": {...}}`) and what it returned as
  `agentops.<kind>.output`, JSON text.
This module reads the kinds, the agent's name and tools, and the tool executions.

Its CrewAI bridge (`instrumentation/agentic/crewai/crewai_span_attributes.py`) makes a
task's execution a `workflow.step` span, the task's description its `agentops.entity.input`,
what the task returned its `agentops.entity.output`, the role of the agent that ran it
`crewai.task.agent`; the agent's own span below it names it by `agent.role`. With a
framework active AgentOps uninstruments the model clients (`instrumentation/__init__.py`,
`_uninstrument_providers`), so the task's span is the run's only record of what was asked
and answered: read as the agent's run (the request, the answer, the agent).

A failure of the span the processor mirrors (the SDK's `span.error`: a tool that raised,
its result then the SDK's error text the model is sent) is written as `error.type`,
`error.message` and an exception event with an ERROR status, but the processor sets the
status OK just before (`_handle_span_error` after `set_status(OK)` on the span's end), and
an OK status is final in the OTel SDK: the export says OK. `error.message` is the failure,
read here as the span's error (which wins over the OK status, `decode._status`); the tool
span's `tool.status` says `succeeded` all the same, since the processor looks for the
error on the span's data, where the SDK never puts it (`get_function_span_attributes`).

The processor's `llm` span is the Agents SDK's record of a model call; the call itself is
the provider instrumentation's span when AgentOps instruments the client the SDK calls
(not under the record: the processor never makes its spans current). AgentOps 0.4.21
records the record's input alone for a chat completions model (its output is the SDK's
message dump, which `get_generation_output_attributes` reads nothing from, and the SDK's
usage is not read), so the two share neither parent, response id nor output:
`turnscore.ingest.calls` rule 3 joins a record whose output is missing to the one call of
another convention that started within it and was sent the same input. Where AgentOps
does not instrument the client (`instrument_llm_calls=False`, a model of another provider)
the record is the only report of the call, and stays one.
"""

from __future__ import annotations

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    text_message,
    unwrap_tool_input,
)
from turnscore.ingest.conventions.values import as_str, json_or_text, result_text
from turnscore.ingest.model import SpanKind, ToolDef, ToolExecution

_KINDS = {
    "session": SpanKind.CHAIN,
    "workflow": SpanKind.CHAIN,
    "task": SpanKind.CHAIN,
    "operation": SpanKind.CHAIN,
    "chain": SpanKind.CHAIN,
    "agent": SpanKind.AGENT,
    "tool": SpanKind.TOOL,
    "llm": SpanKind.LLM,
}
"""AgentOps' span kinds (`AgentOpsSpanKindValues`) that are turnscore's; `text`,
`guardrail`, `http` and `unknown` are none of a turn's."""
_STEP = "workflow.step"
"""A CrewAI task's execution, as AgentOps' CrewAI bridge names it (see the docstring)."""

# Every kind a decorator may be given, and the SDK's older `entity`: each writes its
# function's call and return value as `agentops.<kind>.input` / `.output`.
_DECORATED = ("session", "workflow", "task", "operation", "agent", "tool", "llm", "chain",
              "text", "guardrail", "http", "unknown", "entity")  # fmt: skip


def decode(view: SpanView, problems: Problems) -> Decoded:
    span_kind = as_str(view.get(A.AGENTOPS_SPAN_KIND)) or ""
    kind = _KINDS.get(span_kind)
    error = _failure(view)
    if kind is SpanKind.TOOL:
        return Decoded(kind=kind, tool_execution=_tool(view, error), error=error)
    if kind is SpanKind.AGENT:
        return Decoded(
            kind=kind, error=error, tool_definitions=_tool_names(view),
            agent_name=as_str(view.get(A.AGENTOPS_AGENT_NAME))
            or as_str(view.get(A.AGENTOPS_AGENT_ROLE))
            or as_str(view.get(A.AGENTOPS_OPERATION_NAME)),
        )  # fmt: skip
    if span_kind == _STEP and (asked := as_str(view.get(A.AGENTOPS_ENTITY_INPUT))):
        answered = as_str(view.get(A.AGENTOPS_ENTITY_OUTPUT))
        return Decoded(
            kind=SpanKind.AGENT, error=error,
            input_messages=(text_message("user", asked),),
            output_messages=(text_message("assistant", answered),) if answered else None,
            agent_name=as_str(view.get(A.CREWAI_TASK_AGENT)),
        )  # fmt: skip
    return Decoded(kind=kind, error=error)


def _failure(view: SpanView) -> str | None:
    """The failure the processor wrote beside an OK status (see the module docstring):
    `error.message`, which it writes only with `error.type`."""
    if view.get(A.ERROR_TYPE) is None:
        return None
    return as_str(view.get(A.AGENTOPS_ERROR_MESSAGE)) or as_str(view.get(A.ERROR_TYPE))


def _tool(view: SpanView, error: str | None) -> ToolExecution:
    """The Agents SDK's function span (`tool.*`), or a decorated tool (`agentops.tool.*`,
    named by `operation.name`, its arguments the call's keyword arguments)."""
    name = (as_str(view.get(A.AGENTOPS_TOOL_NAME)) or as_str(view.get(A.AGENTOPS_OPERATION_NAME))
            or view.name.removesuffix(".tool"))  # fmt: skip
    raw_arguments = view.get(A.AGENTOPS_TOOL_PARAMETERS)
    if raw_arguments is None:
        raw_arguments = view.get(f"{A.AGENTOPS_PREFIX}tool.input")
    arguments, call_id = unwrap_tool_input(json_or_text(raw_arguments))
    output = view.get(A.AGENTOPS_TOOL_RESULT)
    if output is None:
        output = view.get(f"{A.AGENTOPS_PREFIX}tool.output")
    result = None if output is None else result_text(json_or_text(output))
    failed = error is not None or as_str(view.get(A.AGENTOPS_TOOL_STATUS)) == "failed"
    return execution(name, call_id, arguments, result, failed)


def _tool_names(view: SpanView) -> tuple[ToolDef, ...] | None:
    """The agent's tools, names only (`agent.tools`, a JSON list)."""
    names = json_or_text(view.get(A.AGENTOPS_AGENT_TOOLS))
    if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
        return tuple(ToolDef(name=n) for n in names)
    return None


AGENTOPS = Convention(
    "agentops",
    decode,
    markers=frozenset({A.AGENTOPS_SPAN_KIND}),
    content_keys=(
        A.AGENTOPS_TOOL_PARAMETERS, A.AGENTOPS_TOOL_RESULT, A.AGENTOPS_WORKFLOW_INPUT,
        A.AGENTOPS_WORKFLOW_OUTPUT, A.AGENTOPS_WORKFLOW_FINAL_OUTPUT, A.AGENTOPS_ENTITY_INPUT,
        A.AGENTOPS_ENTITY_OUTPUT,
        *(f"{A.AGENTOPS_PREFIX}{k}.{io}" for k in _DECORATED for io in ("input", "output")),
    ),
)  # fmt: skip
