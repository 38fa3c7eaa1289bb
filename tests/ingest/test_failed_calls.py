"""A failed tool call's result where no model input told it (`linking._failure_text`),
recorded with the real OTel SDK (the convention fixtures' `Recorder`), decoded and
assembled: where the run went on after the failure, the failed tool span's error text is
the call's result, as the failed tool returned it; what a model input told wins; a run
that stopped at the failure told the model nothing; a bare `error.type` names no outcome.
`tests/ingest/test_stacks.py` checks the same on a real export
(`claude-agent-sdk-openinference`, `tool_error`)."""

from __future__ import annotations

import json
from typing import Any

from tests.ingest.test_stack_forms import _oi_call, _oi_llm, turns_of

REQUEST = "What's the weather in Atlantis?"
ANSWER = "Sorry, the weather tool does not know Atlantis."
FAILURE = "ValueError: Unknown city: Atlantis"
ARGS = {"city": "Atlantis"}


def _agent(output: list[dict[str, Any]]) -> dict[str, Any]:
    """OpenInference's Claude Agent SDK AGENT span: the prompt, the run's messages, its
    answer (`_wrappers.py`): no model call span, no model input."""
    attrs: dict[str, Any] = {"openinference.span.kind": "AGENT", "session.id": "s1",
                             "input.value": REQUEST, "output.value": ANSWER}
    for i, message in enumerate(output):
        attrs.update({f"llm.output_messages.{i}.message.{k}": v for k, v in message.items()})
    return attrs


def _tool(call_id: str) -> dict[str, Any]:
    return {"openinference.span.kind": "TOOL", "tool.id": call_id, "tool.name": "get_weather",
            "tool.parameters": json.dumps(ARGS), "input.value": json.dumps(ARGS)}


def test_a_failed_span_s_error_is_the_result_no_model_input_told(tmp_path: Any) -> None:
    """The PostToolUseFailure hook ends the TOOL span with the is_error tool_result's text
    (status message and exception event), and no span records a model input."""

    def record(r: Any) -> None:
        calls = [_oi_call("toolu_1", "get_weather", ARGS), {"role": "assistant", "content": ANSWER}]
        exception = ("exception", {"exception.type": "Exception", "exception.message": FAILURE})
        with (r.span("ClaudeSDKClient.receive_response", _agent(calls)),
              r.span("get_weather", _tool("toolu_1"), [exception], error=FAILURE)):
            pass

    [turn] = turns_of(record, tmp_path)
    [call] = turn.calls
    assert (call.call_id, call.result, call.error, call.status) == (
        "toolu_1", FAILURE, FAILURE, "error")
    assert turn.final_answer == ANSWER


def test_what_the_model_was_told_wins_over_the_span_s_error(tmp_path: Any) -> None:
    told = "Error: ValueError('Unknown city: Atlantis')\n Please fix your mistakes."

    def record(r: Any) -> None:
        with r.span("agent", {"openinference.span.kind": "AGENT", "session.id": "s1"}):
            with r.span("chat", _oi_llm([("user", REQUEST)],
                                        _oi_call("call_1", "get_weather", ARGS))):
                pass
            with r.span("get_weather", _tool("call_1"), error=FAILURE):
                pass
            attrs = _oi_llm([("user", REQUEST)], {"role": "assistant", "content": ANSWER})
            attrs.update({"llm.input_messages.1.message.role": "tool",
                          "llm.input_messages.1.message.tool_call_id": "call_1",
                          "llm.input_messages.1.message.content": told})
            with r.span("chat", attrs):
                pass

    [turn] = turns_of(record, tmp_path)
    [call] = turn.calls
    assert (call.result, call.error, call.status) == (told, FAILURE, "error")


def test_a_bare_error_type_is_no_result(tmp_path: Any) -> None:
    """An `execute_tool` span that failed with `error.type` alone (the mcp SDK's server
    span sets `tool_error`): the call failed, its result was not captured."""

    def record(r: Any) -> None:
        calls = [_oi_call("toolu_1", "get_weather", ARGS), {"role": "assistant", "content": ANSWER}]
        with (r.span("ClaudeSDKClient.receive_response", _agent(calls)),
              r.span("execute_tool get_weather", {
                  "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                  "gen_ai.tool.call.id": "toolu_1", "error.type": "tool_error"})):
            pass

    [turn] = turns_of(record, tmp_path)
    [call] = turn.calls
    assert (call.result, call.error, call.status) == (None, "tool_error", "error")


def test_a_run_that_stopped_at_the_failure_told_no_result(tmp_path: Any) -> None:
    """The exception escaped the tool and failed the run (pydantic-ai's uncaught
    ValueError): no model call after it, so no model was told anything."""

    def record(r: Any) -> None:
        with r.span("agent", {"openinference.span.kind": "AGENT", "session.id": "s1"},
                    error=FAILURE):
            with r.span("chat", _oi_llm([("user", REQUEST)],
                                        _oi_call("call_1", "get_weather", ARGS))):
                pass
            with r.span("get_weather", _tool("call_1"), error=FAILURE):
                pass

    [turn] = turns_of(record, tmp_path)
    [call] = turn.calls
    assert (call.result, call.error, call.status) == (None, FAILURE, "error")
    assert turn.status == "error" and turn.final_answer is None
