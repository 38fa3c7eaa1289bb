"""Codex CLI's own telemetry (`conventions/codex_cli.py`) in the form the CLI exports,
recorded with the real OTel SDK (the convention fixtures' `Recorder`), decoded and
assembled: its records name their event in `event.name`, their `eventName` the logging
call's code location (`otlp_shared.event_name_of`); the prompt and each tool result are
records under spans deep in the turn's trace, the usage is on the span that read the
response's completion. `tests/ingest/test_stacks.py` checks the same on the CLI's real
exports (`codex-cli-otel`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.ingest.test_stack_forms import turns_of
from turnscore.ingest.otlp_shared import event_name_of

CONVERSATION = "01a25065-337b-72a1-8431-850cf011d525"
CALL_ID = "call_0a84047cbcd20"
ARGS = {"expression": "17 * 23 + 4"}
RESULT = 'Wall time: 0.0353 seconds\nOutput:\n{"result":395}'
_COMMON = {"conversation.id": CONVERSATION, "app.version": "0.171.0", "model": "gpt-4o-mini"}


def _log(r: Any, name: str, line: int, fields: dict[str, Any]) -> None:
    """A record as the CLI's tracing bridge exports it: `eventName` the code location of
    the logging call, the event's name its `event.name` field."""
    r.log(f"event otel/src/events/session_telemetry.rs:{line}", None,
          {"event.name": name, **fields, **_COMMON})


@contextmanager
def _trace() -> Iterator[None]:
    """A trace of its own: nothing current, as each `turn/start` is a root."""
    from opentelemetry import context, trace

    token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
    try:
        yield
    finally:
        context.detach(token)


def _usage(tokens: tuple[int, int]) -> dict[str, Any]:
    return {"codex.request.reasoning_effort": "default",
            "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1],
            "codex.usage.total_tokens": sum(tokens)}  # fmt: skip


def _sampling(r: Any, tokens: tuple[int, int], call: dict[str, Any] | None = None) -> None:
    """One model call: its stream read by `handle_responses` spans, the one that read an
    output item dispatching the call it asks for, the one that read the completion
    carrying the usage."""
    with r.span("try_run_sampling_request", {"model": "gpt-4o-mini"}), \
            r.span("receiving_stream", {}):
        if call is not None:
            with (r.span("handle_responses", {"from": "output_item_done"}),
                  r.span("mcp__toolscalculator", {"call_id": CALL_ID, **_COMMON,
                                                  "codex.tool.phase": "dispatch"}),
                  r.span("dispatch_tool_call_with_state", {})):
                _log(r, "codex.tool_result", 54, call)
                with r.span("mcp.tools.call", {"tool.name": "calculator",
                                               "tool.call_id": CALL_ID}):
                    pass
        with r.span("handle_responses", _usage(tokens)):
            pass


def _tool_result(success: bool, output: str) -> dict[str, Any]:
    return {"tool_name": "calculator", "tool_namespace": "mcp__tools", "call_id": CALL_ID,
            "success": "true" if success else "false", "arguments": json.dumps(ARGS),
            "output": output, "duration_ms": "35"}  # fmt: skip


def _turn(r: Any, prompt: str, call: dict[str, Any] | None) -> None:
    """One turn: a trace of its own, as each `turn/start` is."""
    with _trace(), r.span("turn/start", {"turn.id": prompt}), \
            r.span("run_turn", {"turn.id": prompt, **_COMMON}):
        with r.span("run_hooks_and_record_inputs", {}):
            _log(r, "codex.user_prompt", 1234, {"prompt": prompt,
                                                "prompt_length": str(len(prompt))})
        _log(r, "codex.api_request", 837, {"duration_ms": "16", "attempt": 0})
        if call is None:
            _sampling(r, (400, 20))
            return
        _sampling(r, (5274, 52), call)
        _sampling(r, (5372, 48))


PROMPT = "What is 17 * 23 + 4? Use the calculator."


@pytest.mark.parametrize("success", [True, False])
def test_a_turn_is_its_prompt_and_the_calls_it_made(success: bool, tmp_path: Any) -> None:
    """The prompt record's span is the turn's run, the tool_result record's span the call
    (its arguments and output as the model was sent it, a failure flagged), each usage
    span a model call: one turn, whose request is the prompt."""
    output = RESULT if success else "Wall time: 0.0069 seconds\nOutput:\nError: no"
    [turn] = turns_of(lambda r: _turn(r, PROMPT, _tool_result(success, output)), tmp_path)
    assert turn.request == PROMPT
    [call] = turn.calls
    assert (call.call_id, call.name) == (CALL_ID, "calculator")
    assert call.arguments is not None and json.loads(call.arguments) == ARGS
    assert call.result == output
    assert call.status == ("ok" if success else "error")
    assert turn.llm_calls == 2
    assert (turn.input_tokens, turn.output_tokens) == (5274 + 5372, 52 + 48)
    assert turn.conversation_id == CONVERSATION and turn.agent_name == "codex"
    assert "request_not_captured" not in turn.issues


def test_a_session_s_turns_are_one_conversation(tmp_path: Any) -> None:
    """Each turn a trace of its own (`codex exec resume` a new process), the thread's id on
    every record: the turns of one conversation, each with its request."""

    def record(r: Any) -> None:
        _turn(r, PROMPT, _tool_result(True, RESULT))
        _turn(r, "Say hello in French.", None)

    first, second = turns_of(record, tmp_path)
    assert (first.request, second.request) == (PROMPT, "Say hello in French.")
    assert len(first.calls) == 1 and second.calls == ()
    assert first.conversation_id == second.conversation_id == CONVERSATION
    assert (first.turn_index, second.turn_index) == (0, 1)


@pytest.mark.parametrize(("given", "attribute", "name"), [
    # Rust's tracing names an event for its callsite; the bridge exports that as eventName.
    ("event otel/src/events/session_telemetry.rs:1234", "codex.user_prompt",
     "codex.user_prompt"),
    ("event src/main.rs:12", None, ""),
    ("app/handlers/chat.py:88:4", "chat.reply", "chat.reply"),
    # An eventName that names an event is the name, whatever the attribute says.
    ("gen_ai.choice", "other", "gen_ai.choice"),
    ("", "gen_ai.user.message", "gen_ai.user.message"),
    ("user_prompt", None, "user_prompt"),
])  # fmt: skip
def test_a_code_location_is_not_an_event_name(
    given: str, attribute: str | None, name: str
) -> None:
    fields = {} if attribute is None else {"event.name": attribute}
    assert event_name_of(given, fields) == name


def _interceptor_turn(r: Any, prompt: str, turn_id: str) -> None:
    """OpenInference's interceptor of the same telemetry (openinference-instrumentation-codex
    0.5.2, `codex-otlp-interceptor`): a turn is one LLM span, its prompt the declared plain
    text `input.value`, its output a placeholder (Codex logs none), a TOOL span a call."""
    turn = {
        "openinference.span.kind": "LLM", "codex.turn.id": turn_id, "session.id": CONVERSATION,
        "input.value": prompt, "input.mime_type": "text/plain",
        "output.value": json.dumps({"output_captured": False, "status": "completed",
                                    "turn_id": turn_id}),
        "output.mime_type": "application/json", "llm.model_name": "gpt-4o-mini",
        "llm.token_count.prompt": 10646, "llm.token_count.completion": 100,
    }  # fmt: skip
    tool = {
        "openinference.span.kind": "TOOL", "tool.name": "calculator", "tool.id": CALL_ID,
        "tool.parameters": json.dumps(ARGS), "input.value": json.dumps(ARGS),
        "input.mime_type": "application/json", "output.value": RESULT,
        "output.mime_type": "text/plain",
    }  # fmt: skip
    with _trace(), r.span("codex.turn", turn), r.span("codex.tool.calculator.result", tool):
        pass


def test_the_interceptor_s_turn_span_is_asked_its_plain_text_input(tmp_path: Any) -> None:
    """An LLM span's `input.value` declared `text/plain` is the user's message: the turn's
    request; the placeholder output is no answer."""

    def record(r: Any) -> None:
        _interceptor_turn(r, PROMPT, "t1")
        _interceptor_turn(r, "Say hello in French.", "t2")

    first, second = turns_of(record, tmp_path)
    assert (first.request, second.request) == (PROMPT, "Say hello in French.")
    [call] = first.calls
    assert (call.call_id, call.name, call.result) == (CALL_ID, "calculator", RESULT)
    assert call.arguments is not None and json.loads(call.arguments) == ARGS
    assert (first.input_tokens, first.output_tokens) == (10646, 100)
    assert first.final_answer is None and first.conversation_id == CONVERSATION
