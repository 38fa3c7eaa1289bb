"""LangSmith's OTel export of LangChain / LangGraph runs (`LANGSMITH_OTEL_ENABLED`).

One span per run (langchain-ai/langsmith-sdk `python/langsmith/_internal/otel/
_otel_exporter.py`): `langsmith.span.kind` is the run type, `gen_ai.operation.name` its
mapping (`llm` and `prompt` both to `chat`, `tool` to `execute_tool`, others as they are),
and the run's inputs and outputs are the JSON of `gen_ai.prompt` / `gen_ai.completion`.
What `otel_genai` reads from those is right for chain runs (LangGraph state, `{messages}`)
and wrong for the rest, which this module decodes first:
- a model call traced by `wrap_openai`: inputs the request's keyword arguments
  (`{messages, model, tools}`), outputs the response (read by `otel_genai`);
- a chat model run: inputs `{messages: [[<serialized messages>]]}` (one list per prompt),
  outputs `{generations: [[{text, message}]]}` with the AIMessage (its `tool_calls` are
  LangChain's `{name, args, id}`); a text model run: `{prompts: [...]}`;
- a tool run: inputs the arguments, or `{input: <input_str>}` (the arguments as Python's
  repr of a dict when the tool took one), outputs `{output: <ToolMessage or content>}`;
- a `prompt`, `parser`, `retriever` or `embedding` run is no model call.
The session is LangGraph's `thread_id` (or `session_id`, `conversation_id`) in the run's
metadata; `langsmith.trace.session_id` is the tracing project, not a conversation. The
model is the one the response names (the generation's `model_name`, as `gen_ai.response.model`
is preferred elsewhere), else the request's. The agent is named by the run's metadata
(`graph_agent`): langchain's `create_agent` stamps `lc_agent_name`; a LangGraph graph the
application invoked is the run with LangGraph's `ls_integration` and no `langgraph_node`
(recorded: langsmith 0.15 over LangGraph 1.2's `create_react_agent`, whose node runs are
named `agent` and `tools`, the graph by its `name`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    execution,
    parse_messages,
    parse_tool_defs,
    system_text,
    text_message,
    unwrap_tool_output,
)
from turnscore.ingest.conventions.values import (
    JsonValue,
    as_str,
    first_str,
    json_or_text,
    python_literal,
)
from turnscore.ingest.model import Message, Part, PartType, SpanKind, ToolExecution

_KINDS = {
    "llm": SpanKind.LLM,
    "tool": SpanKind.TOOL,
    "chain": SpanKind.CHAIN,
}
_SESSION_KEYS = tuple(
    f"{A.LS_METADATA_PREFIX}{k}" for k in ("thread_id", "session_id", "conversation_id")
)


def decode(view: SpanView, problems: Problems) -> Decoded:
    run_type = as_str(view.get(A.LS_SPAN_KIND)) or ""
    kind = _KINDS.get(run_type, SpanKind.OTHER)
    base = Decoded(
        kind=kind,
        conversation_id=first_str(view.attributes, _SESSION_KEYS),
        agent_name=graph_agent(as_str(view.get(A.LS_TRACE_NAME)) or view.name,
                               lambda key: view.get(A.LS_METADATA_PREFIX + key)),
    )
    inputs = json_or_text(view.get(A.GEN_AI_PROMPT))
    outputs = json_or_text(view.get(A.GEN_AI_COMPLETION))
    if kind is SpanKind.TOOL:
        return base.fill(Decoded(tool_execution=_tool(view, inputs, outputs)))
    if kind is not SpanKind.LLM:
        return base
    messages = _prompt(inputs, problems)
    tools = inputs.get("tools") if isinstance(inputs, dict) else None
    generation = _first_generation(outputs)
    return base.fill(Decoded(
        model=_response_model(generation),
        input_messages=messages,
        output_messages=_generations(generation, problems),
        system_instructions=system_text(messages),
        tool_definitions=parse_tool_defs(tools, A.GEN_AI_PROMPT, problems)
        if isinstance(tools, list) else None,
    ))


def _prompt(inputs: JsonValue, problems: Problems) -> tuple[Message, ...] | None:
    if not isinstance(inputs, dict):
        return None
    batch = inputs.get("messages", inputs.get("prompts"))
    if not isinstance(batch, list) or not batch:
        return None
    first = batch[0]  # one prompt per call in an agent; a batch's others are other calls
    if isinstance(first, str):
        return (text_message("user", first),)
    items = first if isinstance(first, list) else batch
    return parse_messages(items, A.GEN_AI_PROMPT, problems)


def run_metadata(raw: Any) -> dict[str, Any]:
    """A LangChain run's metadata written whole as one JSON attribute (`metadata`:
    OpenInference's LangChain instrumentation, MLflow's LangChain tracer, on every span);
    {} if none."""
    metadata = json_or_text(raw)
    return metadata if isinstance(metadata, dict) else {}


_THREAD_KEYS = ("session_id", "thread_id", "conversation_id")


def run_thread(metadata: dict[str, Any]) -> str | None:
    """The conversation a run's metadata names: the keys LangSmith groups threads by
    (LangGraph's checkpointer sets `thread_id`). MLflow's own session
    (`mlflow.trace.session`) is trace metadata, and its OTLP processor exports only the
    trace's tags (mlflow 3.17 `tracing/processor/otel.py`)."""
    return next((as_str(metadata[k]) for k in _THREAD_KEYS if metadata.get(k)), None)


def graph_agent(name: str | None, meta: Callable[[str], Any]) -> str | None:
    """The agent a LangChain run stands for, from its metadata (`meta(key)`, JSON text or
    the value): `create_agent`'s `lc_agent_name`, else the run of a LangGraph graph the
    application invoked, by its name (a run inside one has a `langgraph_node`, inherited
    by everything under that node), unless the graph was left unnamed."""
    if agent := as_str(json_or_text(meta(A.LC_META_AGENT_NAME))):
        return agent
    if (json_or_text(meta(A.LC_META_INTEGRATION)) != A.LANGGRAPH_INTEGRATION
            or meta(A.LC_META_LANGGRAPH_NODE) is not None or name == A.LANGGRAPH_DEFAULT_NAME):
        return None
    return name


def _first_generation(outputs: JsonValue) -> dict[str, Any] | None:
    """A model run's first generation (of its first prompt); None when it has no
    `generations`, `{}` when they are empty."""
    if not isinstance(outputs, dict) or not isinstance(outputs.get("generations"), list):
        return None
    batch: list[Any] = outputs["generations"]
    first = batch[0] if batch and isinstance(batch[0], list) else batch
    return first[0] if first and isinstance(first[0], dict) else {}


def _response_model(generation: dict[str, Any] | None) -> str | None:
    """The model the response named: LangChain's `generation_info`, or the AIMessage's
    `response_metadata` (its serialized `kwargs`, or flat)."""
    if not generation:
        return None
    message = generation.get("message")
    if isinstance(message, dict) and isinstance(message.get("kwargs"), dict):
        message = message["kwargs"]
    for info in (generation.get("generation_info"),
                 message.get("response_metadata") if isinstance(message, dict) else None):
        if isinstance(info, dict) and (model := as_str(info.get("model_name"))):
            return model
    return None


def _generations(
    generation: dict[str, Any] | None, problems: Problems
) -> tuple[Message, ...] | None:
    if generation is None:
        return None
    if not generation:
        return ()
    info = generation.get("generation_info")
    finish = as_str(info.get("finish_reason")) if isinstance(info, dict) else None
    if isinstance(generation.get("message"), dict):
        [message] = parse_messages(generation["message"], A.GEN_AI_COMPLETION, problems) or [
            Message("assistant", ())]
        return (Message("assistant", message.parts, finish or message.finish_reason),)
    text = as_str(generation.get("text")) or ""
    return (Message("assistant", (Part(PartType.TEXT, text=text),) if text else (), finish),)


def _tool(view: SpanView, inputs: JsonValue, outputs: JsonValue) -> ToolExecution:
    name = as_str(view.get(A.LS_TRACE_NAME)) or view.name
    arguments = inputs
    if isinstance(inputs, dict) and set(inputs) == {"input"}:
        arguments = _input_str(inputs["input"])
    if isinstance(outputs, dict) and set(outputs) == {"output"}:
        outputs = outputs["output"]
    result, call_id, failed = unwrap_tool_output(outputs)
    return execution(name, call_id, arguments, result, failed)


def _input_str(text: JsonValue) -> JsonValue:
    """LangChain's `input_str`: JSON, Python's repr of a dict (a literal, read as one), or
    the single string argument."""
    if not isinstance(text, str) or not text.startswith("{"):
        return text
    parsed = json_or_text(text)
    if parsed is not text:
        return parsed
    literal = python_literal(text)
    return literal if isinstance(literal, dict) else text


LANGSMITH = Convention(
    "langsmith",
    decode,
    markers=frozenset({A.LS_SPAN_KIND}),
)
