"""Claude Code's own telemetry (`conventions/claude_code.py`) in the forms the CLI exports,
recorded with the real OTel SDK (the convention fixtures' `Recorder`), decoded and
assembled: a call's arguments are only in the interaction's records (`tool_result`'s
`tool_input`, a raw `api_response_body`'s `tool_use`), by call id, never on the call's tool
span; the interaction lists them as its run's calls and assembly gives them to the tool
span of the same call id (`assemble._run_arguments`). `tests/ingest/test_stacks.py` checks
the same on the CLI's real exports (`claude-code-otel`, `claude-code-otel-raw`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.ingest.test_stack_forms import turns_of

REQUEST = "What's the weather in Paris?"
ANSWER = "It is 18 degrees and cloudy in Paris."
CALL_ID = "toolu_01"
ARGS = {"city": "Paris", "unit": "celsius"}
RESULT = '{"temperature": 18, "conditions": "cloudy"}'
_COMMON = {"session.id": "s1", "gen_ai.conversation.id": "s1"}


def _chat(usage: tuple[int, int]) -> dict[str, Any]:
    """An `llm_request` span: usage and no content, as the CLI writes it."""
    return {**_COMMON, "span.type": "llm_request", "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.usage.input_tokens": usage[0],
            "gen_ai.usage.output_tokens": usage[1]}  # fmt: skip


def _tool_result(tool_input: dict[str, Any] | None, error: str | None = None) -> dict[str, Any]:
    """The interaction's `tool_result` record of an MCP tool's call (its input only with
    `OTEL_LOG_TOOL_DETAILS`)."""
    said: dict[str, Any] = {
        **_COMMON, "tool_name": "mcp_tool", "tool_use_id": CALL_ID,
        "success": "false" if error else "true",
        "tool_parameters": json.dumps({"mcp_server_name": "tools",
                                       "mcp_tool_name": "get_weather"}),
    }  # fmt: skip
    if tool_input is not None:
        said["tool_input"] = json.dumps(tool_input)
    if error is not None:
        said["error"] = error
    return said


def _response_body(content: list[dict[str, Any]]) -> dict[str, Any]:
    body = {"id": "msg_1", "type": "message", "role": "assistant", "content": content}
    return {**_COMMON, "body": json.dumps(body)}


def _record(tool_input: dict[str, Any] | None, raw: bool, error: str | None = None) -> Any:
    def record(r: Any) -> None:
        with r.span("claude_code.interaction", {
            **_COMMON, "span.type": "interaction", "gen_ai.operation.name": "invoke_agent",
            "user_prompt": REQUEST,
        }):  # fmt: skip
            with r.span("claude_code.llm_request", _chat((350, 30))):
                pass
            if raw:
                r.log("api_response_body", "claude_code.api_response_body", _response_body([
                    {"type": "tool_use", "id": CALL_ID, "name": "mcp__tools__get_weather",
                     "input": ARGS}]))  # fmt: skip
            output = [] if error else [("tool.output", {"output": RESULT})]
            tool = {**_COMMON, "span.type": "tool", "tool_name": "mcp__tools__get_weather",
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                    "tool_use_id": CALL_ID, "gen_ai.tool.call.id": CALL_ID}  # fmt: skip
            run = {**_COMMON, "span.type": "tool.execution", "tool_use_id": CALL_ID,
                   "gen_ai.tool.call.id": CALL_ID, "success": error is None,
                   **({"error": error} if error else {})}  # fmt: skip
            with (r.span("claude_code.tool", tool, output),
                  r.span("claude_code.tool.execution", run, error=error)):
                pass
            r.log("tool_result", "claude_code.tool_result", _tool_result(tool_input, error))
            with r.span("claude_code.llm_request", _chat((450, 15))):
                pass
            if raw:
                r.log("api_response_body", "claude_code.api_response_body",
                      _response_body([{"type": "text", "text": ANSWER}]))
            r.log("assistant_response", "claude_code.assistant_response",
                  {**_COMMON, "response": ANSWER})

    return record


@pytest.mark.parametrize(("tool_input", "raw"), [(ARGS, False), (ARGS, True), (None, True)])
def test_the_interaction_records_give_the_call_its_arguments(
    tool_input: dict[str, Any] | None, raw: bool, tmp_path: Any
) -> None:
    """From the `tool_result` record's input, else the raw response body's `tool_use`."""
    [turn] = turns_of(_record(tool_input, raw), tmp_path)
    [call] = turn.calls
    assert (call.call_id, call.name) == (CALL_ID, "mcp__tools__get_weather")
    assert call.arguments is not None and json.loads(call.arguments) == ARGS
    assert (call.result, call.status) == (RESULT, "ok")
    assert turn.final_answer == ANSWER and turn.status == "ok"
    assert "call_content_not_captured" not in turn.issues


def test_without_the_input_the_arguments_stay_not_captured(tmp_path: Any) -> None:
    """No `OTEL_LOG_TOOL_DETAILS`, no raw bodies: the record says the call ran, not with
    what; its arguments are not captured, never `{}`."""
    [turn] = turns_of(_record(None, False), tmp_path)
    [call] = turn.calls
    assert call.arguments is None and call.result == RESULT
    assert turn.final_answer == ANSWER and turn.status == "ok"
    assert "call_content_not_captured" in turn.issues


def test_a_failed_call_keeps_its_arguments_and_its_error(tmp_path: Any) -> None:
    failure = "ValueError: Unknown city: Paris"
    [turn] = turns_of(_record(ARGS, False, error=failure), tmp_path)
    [call] = turn.calls
    assert call.arguments is not None and json.loads(call.arguments) == ARGS
    assert (call.result, call.error, call.status) == (failure, failure, "error")
    assert turn.final_answer == ANSWER


def test_a_request_only_the_interaction_records_is_captured(tmp_path: Any) -> None:
    """The model calls record no input; the turn's request is the interaction's prompt,
    so the turn does not say its request was not captured (its model calls' content was
    not: `model_call_without_content`)."""
    [turn] = turns_of(_record(ARGS, False), tmp_path)
    assert turn.request == REQUEST
    assert turn.issues == ("model_call_without_content",)


def test_a_call_no_record_ends_leaves_the_answer(tmp_path: Any) -> None:
    """A raw response body's `tool_use` that no `tool_result` record answers (a call the
    CLI did not run: denied, or its input rejected) is not listed as a call the run left
    open: the run's answer stays the turn's."""

    def record(r: Any) -> None:
        with r.span("claude_code.interaction", {
            **_COMMON, "span.type": "interaction", "gen_ai.operation.name": "invoke_agent",
            "user_prompt": REQUEST,
        }):  # fmt: skip
            with r.span("claude_code.llm_request", _chat((350, 30))):
                pass
            r.log("api_response_body", "claude_code.api_response_body", _response_body([
                {"type": "tool_use", "id": CALL_ID, "name": "Bash", "input": {"cmd": "ls"}}]))
            with r.span("claude_code.llm_request", _chat((450, 15))):
                pass
            r.log("assistant_response", "claude_code.assistant_response",
                  {**_COMMON, "response": ANSWER})

    [turn] = turns_of(record, tmp_path)
    assert (turn.final_answer, turn.status, turn.calls) == (ANSWER, "ok", ())
