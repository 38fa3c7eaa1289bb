"""Mastra's OTel exporter (`@mastra/otel-exporter`): spans typed by `mastra.span.type`.

Mastra traces its own runs (AI tracing) and converts each span for export; the standard
parts are `otel_genai`'s. What only Mastra's spans say, read here:
- the span type (`agent_run`, `model_generation`, `model_step`, `model_chunk`,
  `model_inference`, `tool_call`, `mcp_tool_call`, `workflow_*`, ...): its kind, since the
  0.x exporter's operation names (`agent.run`, `tool.execute`, `llm_step`) are not the
  standard ones;
- 0.x tool spans (`span-converter.ts`): the arguments and result in `gen_ai.tool.input` /
  `gen_ai.tool.output`, JSON text, no call id; the model generation spans the whole
  step loop, so this span is the only record of the call;
- 0.x content on every span (`span-converter.ts`, "for Laminar compatibility"): the span's
  own input and output again under the bare keys `input` / `output`, declared as content
  here (not decoded: the typed keys above and `gen_ai.prompt` / `completion` say the same);
- the tools an agent could use: names only, as a JSON list in `agent.available_tools`
  (0.x) or, in the same form, in `gen_ai.tool.definitions` (1.x,
  `gen-ai-semantics.ts`, where the standard key holds a list of names, not definitions);
- the agent's id (0.x `agent.id`) as its name where no `gen_ai.agent.name` is given.
The 1.x exporter's model-call span carries `gen_ai.input.messages` / `output.messages`
(Mastra messages converted: `gen-ai-messages.ts`), its tool spans `gen_ai.tool.call.*`,
its agent span `gen_ai.system_instructions` as a plain string: all standard. Which span
is the call (`isModelCallSpan`): `model_generation`, or, where core and observability both
have the `model-inference-span` feature (core 1.71, observability 1.17, exporter 1.4:
`tests/fixtures/stacks/mastra*`), `model_inference` below `model_step`; that one records
the output only (observability's `startInference` is given no step payload), so the run's
request is read from the agent span's own input (`mastra.agent_run.input`, what the app
passed the agent). The step and workflow spans' own input and output (`mastra.<type>.input`
/ `.output`) are content and not decoded: the step's is a summary (a tool result as
`[tool-result: <name>]`), and the model-call spans carry the calls and answers.
"""

from __future__ import annotations

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    parse_messages,
    text_message,
)
from turnscore.ingest.conventions.values import as_str, json_or_text, result_text
from turnscore.ingest.model import Message, SpanKind, ToolDef, ToolExecution

_KINDS = {
    "agent_run": SpanKind.AGENT,
    "tool_call": SpanKind.TOOL,
    "mcp_tool_call": SpanKind.TOOL,
    "provider_tool_call": SpanKind.TOOL,
    "workflow_run": SpanKind.CHAIN,
    "workflow_step": SpanKind.CHAIN,
}
# Model spans are left to `otel_genai`: which of generation, step and inference is the
# call depends on the exporter's version, and it marks that one `chat` with the messages.
_TOOL_TYPES = frozenset({"tool_call", "mcp_tool_call", "provider_tool_call"})

# Span types whose own input and output the 1.x exporter writes as `mastra.<type>.input`.
_CONTENT_TYPES = (
    "agent_run", "model_generation", "model_step", "model_chunk", "model_inference",
    "workflow_run", "workflow_step", "workflow_conditional", "workflow_conditional_eval",
    "workflow_parallel", "workflow_loop", "workflow_sleep", "workflow_wait_event",
    "processor_run", "generic", "rag_ingestion", "rag_embedding", "rag_vector_operation",
    "rag_action", "graph_action", "scorer_run",
)


def decode(view: SpanView, problems: Problems) -> Decoded:
    span_type = as_str(view.get(A.MASTRA_SPAN_TYPE)) or ""
    kind = _KINDS.get(span_type)
    if span_type in _TOOL_TYPES:
        return Decoded(kind=kind, tool_execution=_tool(view))
    if span_type != "agent_run":
        return Decoded(kind=kind)
    return Decoded(
        kind=kind,
        input_messages=_run_input(view, problems),
        agent_name=as_str(view.get(A.GEN_AI_AGENT_NAME)) or as_str(view.get(A.MASTRA_AGENT_ID)),
        tool_definitions=_tool_names(view, problems),
    )


def _run_input(view: SpanView, problems: Problems) -> tuple[Message, ...] | None:
    """What the app passed to `agent.generate` / `stream` (`mastra.agent_run.input`): the
    messages, or a string as one user message. With the model-inference span (observability
    1.17 beside core 1.71) the `chat` span has no input of its own (`startInference` is
    given no step payload), so this is the run's one record of the user's request."""
    value = json_or_text(view.get(A.MASTRA_AGENT_RUN_INPUT))
    if isinstance(value, str):
        return (text_message("user", value),) if value else None
    if isinstance(value, list | dict):
        return parse_messages(value, view.name, problems) or None
    return None


def _tool(view: SpanView) -> ToolExecution | None:
    """A tool span in the 0.x form; None when the standard `gen_ai.tool.call.*` keys
    (1.x) carry it, so `otel_genai` reads them."""
    arguments = view.get(A.MASTRA_TOOL_INPUT)
    output = view.get(A.MASTRA_TOOL_OUTPUT)
    if arguments is None and output is None:
        return None
    result = json_or_text(output)
    failed = view.get(A.MASTRA_TOOL_SUCCESS) is False
    return execution(
        as_str(view.get(A.GEN_AI_TOOL_NAME)) or view.name.removeprefix("tool.execute "),
        None, json_or_text(arguments),
        as_str(view.get(A.MASTRA_ERROR_MESSAGE)) if failed and result is None
        else None if result is None else result_text(result),
        failed=failed,
    )


def _tool_names(view: SpanView, problems: Problems) -> tuple[ToolDef, ...] | None:
    """The agent's tools when given as a list of names (both exporters); a list of
    definitions under `gen_ai.tool.definitions` is `otel_genai`'s."""
    for key in (A.MASTRA_AVAILABLE_TOOLS, A.GEN_AI_TOOL_DEFINITIONS):
        names = json_or_text(view.get(key))
        if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
            return tuple(ToolDef(name=n) for n in names)
    return None


MASTRA = Convention(
    "mastra", decode, markers=frozenset({A.MASTRA_SPAN_TYPE}),
    content_keys=(
        A.MASTRA_TOOL_INPUT, A.MASTRA_TOOL_OUTPUT, A.MASTRA_INPUT, A.MASTRA_OUTPUT,
        *(f"{A.MASTRA_PREFIX}{t}.{io}" for t in _CONTENT_TYPES for io in ("input", "output")),
    ),
)  # fmt: skip
