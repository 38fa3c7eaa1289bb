"""OpenAI Codex CLI's own OpenTelemetry export (`[otel]` in `$CODEX_HOME/config.toml`).

The CLI (Rust) exports its `tracing` spans (`trace_exporter`) and its events as OTLP log
records (`exporter`), through the `tracing` bridges of opentelemetry-rust. Each turn is a
trace of its own, rooted at the app server's `turn/start` (`turn.id`), with hundreds of
spans of the CLI's internals; the events name the span current when they were logged, and
their event name is their `event.name` field (the record's `eventName` is the logging
call's code location: `otlp_shared.event_name_of`). Recorded from 0.171.0
(`tests/fixtures/stacks/codex-cli-otel`); events and fields: openai/codex `codex-rs/otel`
(`src/events/session_telemetry.rs`, `src/tool_result.rs`, `README.md`).

What a turn needs, and where it is:
- the request: the `codex.user_prompt` record (`prompt`, with `log_user_prompt`), logged
  under `run_hooks_and_record_inputs`, a span of the turn's `run_turn`;
- each tool call: the `codex.tool_result` record (`call_id`, `tool_name` as the model
  called it, `arguments` as it sent them, `output` as the model was sent it, `success`),
  logged under the dispatch of that call (`dispatch_tool_call_with_state`);
- each model call: the `handle_responses` span that read the response's
  `response.completed` event, the only one carrying its usage (`gen_ai.usage.*` with
  Codex's `codex.usage.total_tokens`); the `codex.sse_event` records of that event carry
  the usage too, but no trace or span id (they are logged outside any span), so nothing
  ties them to a turn.
- the conversation: each record's `conversation.id` (the thread, the same for a session's
  turns, `codex exec resume` included).
Codex logs no model output text and neither the request's instructions nor its tools
(`codex.sse_event` records name each event's kind only): a turn has no final answer, and
its tools are inferred from the calls. `otel.log_agent_responses` (in 0.171: the binary
names it) logs a `codex.agent_response` record only for an assistant message the response
marks `phase: final_answer` (`src/agent_response.rs`), which the recordings' scripted
Responses API does not send: no recording holds one, so none is read here yet.

So the span a record was logged under says what the record tells: the prompt's span is
the turn's run (AGENT: its request; assembly takes a model call's request from the turn's
agent span when no call records its input, `assemble._request`), a tool result's span the
call's execution (TOOL), and the usage span the model call (LLM: usage only, no content).
The openinference-instrumentation-codex interceptor (0.5.2, `native_otlp_interceptor.py`)
reads the same records the same way, keyed by the trace of the spans carrying `turn.id`.
"""

from __future__ import annotations

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import ContentEvent, Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import Problems, execution, text_message
from turnscore.ingest.conventions.values import as_int, as_str
from turnscore.ingest.model import SpanKind

AGENT = "codex"
"""The agent's name: the CLI names none (its records' `agent_name` is a path, `/root`)."""


def decode(view: SpanView, problems: Problems) -> Decoded:
    prompt = _last(view, A.CODEX_EV_USER_PROMPT)
    if prompt is not None:
        return _run(prompt)
    result = _last(view, A.CODEX_EV_TOOL_RESULT)
    if result is not None:
        return _tool(result)
    if view.get(A.CODEX_USAGE_TOTAL) is not None:
        return _model_call(view)
    return Decoded()


def _run(record: ContentEvent) -> Decoded:
    """The turn's run, from the span its prompt was logged under: the request, the thread."""
    prompt = as_str(record.fields.get(A.CODEX_PROMPT))
    return Decoded(
        kind=SpanKind.AGENT,
        input_messages=(text_message("user", prompt),) if prompt is not None else None,
        conversation_id=as_str(record.fields.get(A.CODEX_CONVERSATION_ID)),
        agent_name=AGENT,
    )


def _tool(record: ContentEvent) -> Decoded:
    """A call's execution, from the span its `tool_result` was logged under. `success` is
    text (`"true"` / `"false"`); the output is what the model was sent, a failure's too."""
    fields = record.fields
    failed = fields.get(A.CODEX_SUCCESS) in (False, "false")
    return Decoded(
        kind=SpanKind.TOOL,
        tool_execution=execution(
            as_str(fields.get(A.CODEX_TOOL_NAME)) or "",
            as_str(fields.get(A.CODEX_CALL_ID)),
            as_str(fields.get(A.CODEX_ARGUMENTS)),
            as_str(fields.get(A.CODEX_OUTPUT)),
            failed=failed,
        ),
        conversation_id=as_str(fields.get(A.CODEX_CONVERSATION_ID)),
    )


def _model_call(view: SpanView) -> Decoded:
    """A response's completion, read: its usage (no content: Codex records none)."""
    return Decoded(
        kind=SpanKind.LLM,
        input_tokens=as_int(view.get(A.GEN_AI_USAGE_INPUT_TOKENS)),
        output_tokens=as_int(view.get(A.GEN_AI_USAGE_OUTPUT_TOKENS)),
        model=as_str(view.get(A.CODEX_MODEL)),
    )


def _last(view: SpanView, name: str) -> ContentEvent | None:
    found = [e for e in view.events if e.name == name]
    return found[-1] if found else None


CODEX_CLI = Convention(
    "codex_cli", decode, markers=frozenset({A.CODEX_USAGE_TOTAL}),
    events=frozenset({A.CODEX_EV_USER_PROMPT, A.CODEX_EV_TOOL_RESULT}),
)  # fmt: skip
