"""Judgment Labs' tracer (JudgmentLabs/judgeval, `src/judgeval/`; read in judgeval 1.6.0).

`Tracer.init` makes a tracer provider of its own; its spans carry `judgment.*` attributes
(`judgment_attribute_keys.AttributeKeys`):
- `judgment.span_kind`: what the span is, `@Tracer.observe(span_type=...)`'s (`agent`,
  `tool`, `llm`, `function`, `span`), `llm` for a wrapped client's call;
- an observed function's arguments by name and its return value, each serialized
  (`utils/serialize.safe_serialize`: JSON text, a string as itself), as `judgment.input`
  and `judgment.output` (`trace/base_tracer.py`, `observe`); the span is named for the
  function (or its `span_name`); an exception is recorded (ERROR status, exception
  event); no call id;
- `judgment.session_id`, propagated to every span below the one `Tracer.set_session_id`
  was called in (baggage: `trace/processors/judgment_baggage_processor.py`);
- a wrapped OpenAI client's chat completion (`instrumentation/llm/llm_openai/
  chat_completions.py`) is an `OPENAI_API_CALL` span: the request's keyword arguments as
  JSON under the deprecated `gen_ai.prompt` (`{"model", "messages", "tools", ...}`: the
  messages are read by `otel_genai`, the tools here), the response under
  `gen_ai.completion` (the `ChatCompletion` as JSON, or a stream's text alone: a streamed
  response's tool calls are written nowhere on its span, only in the next request);
  `judgment.llm.model`; usage as `judgment.usage.non_cached_input_tokens` (the prompt's
  tokens less those read from cache, `llm_openai/utils.openai_tokens_converter`),
  `judgment.usage.cache_read_input_tokens` and `judgment.usage.output_tokens`, read here as
  the call's input (their sum) and output tokens.
Its span processor (`trace/processors/judgment_span_processor.py`) emits a live span
before it ends, each emission numbered `judgment.update_id`: an observed span is exported
once when its input is recorded (no output, its end its start) and again when it ends.
"""

from __future__ import annotations

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import Problems, execution, parse_tool_defs
from turnscore.ingest.conventions.values import as_int, as_str, json_or_text
from turnscore.ingest.model import SpanKind, ToolDef, ToolExecution

_KINDS = {"llm": SpanKind.LLM, "tool": SpanKind.TOOL, "agent": SpanKind.AGENT}
"""Judgment's span kinds that are turnscore's; `function` and `span` are any code."""
_TOOLS = "tools"


def decode(view: SpanView, problems: Problems) -> Decoded:
    kind = _KINDS.get(as_str(view.get(A.JUDGMENT_SPAN_KIND)) or "")
    session = as_str(view.get(A.JUDGMENT_SESSION_ID))
    if kind is SpanKind.TOOL:
        return Decoded(kind=kind, tool_execution=_tool(view), conversation_id=session)
    if kind is SpanKind.AGENT:
        return Decoded(kind=kind, conversation_id=session, agent_name=_agent(view))
    if kind is SpanKind.LLM:
        input_tokens, output_tokens = _usage(view)
        return Decoded(
            kind=kind, conversation_id=session, tool_definitions=_tools(view, problems),
            model=as_str(view.get(A.JUDGMENT_LLM_MODEL)),
            input_tokens=input_tokens, output_tokens=output_tokens,
        )  # fmt: skip
    return Decoded(conversation_id=session)


def _tool(view: SpanView) -> ToolExecution:
    output = view.get(A.JUDGMENT_OUTPUT)
    return execution(view.name, None, json_or_text(view.get(A.JUDGMENT_INPUT)),
                     None if output is None else as_str(output))  # fmt: skip


def _agent(view: SpanView) -> str:
    """A class-based agent's instance or class name, else the observed function's."""
    return (as_str(view.get(A.JUDGMENT_AGENT_INSTANCE_NAME))
            or as_str(view.get(A.JUDGMENT_AGENT_CLASS_NAME)) or view.name)  # fmt: skip


def _tools(view: SpanView, problems: Problems) -> tuple[ToolDef, ...] | None:
    """The request's tools, from its keyword arguments (`gen_ai.prompt`)."""
    request = json_or_text(view.get(A.GEN_AI_PROMPT))
    tools = request.get(_TOOLS) if isinstance(request, dict) else None
    return parse_tool_defs(tools, A.GEN_AI_PROMPT, problems) if tools else None


def _usage(view: SpanView) -> tuple[int | None, int | None]:
    non_cached = as_int(view.get(A.JUDGMENT_NON_CACHED_INPUT_TOKENS))
    cached = as_int(view.get(A.JUDGMENT_CACHE_READ_INPUT_TOKENS)) or 0
    return (None if non_cached is None else non_cached + cached,
            as_int(view.get(A.JUDGMENT_OUTPUT_TOKENS)))  # fmt: skip


JUDGEVAL = Convention(
    "judgeval",
    decode,
    markers=frozenset({A.JUDGMENT_SPAN_KIND, A.JUDGMENT_SESSION_ID}),
    content_keys=(A.JUDGMENT_INPUT, A.JUDGMENT_OUTPUT),
)
