"""Older releases still common in production, each in the shape its real export has (the
stacks `<stack>-<version>` of `tests/ingest/instrumented/stacks/record.py` recorded them):
spans made with the real OTel SDK (`Recorder`), decoded and assembled into turns. One test
per rule an old release needed, each failing without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.ingest.test_stack_forms import turns_of

REQUEST = "What is 17 * 23 + 4?"
ANSWER = "17 * 23 + 4 = 395."
SYSTEM = "You are terse."
ARGS = {"expression": "17 * 23 + 4"}
SCHEMA = {"type": "object", "properties": {"expression": {"type": "string"}},
          "required": ["expression"]}
DESCRIPTION = "Evaluate arithmetic."
CALC = {"type": "function", "function": {"name": "calculator", "description": DESCRIPTION,
                                         "parameters": SCHEMA}}


def _j(value: Any) -> str:
    return json.dumps(value)


def _openai_call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": "calculator", "arguments": _j(ARGS)}}


# --- Pydantic AI 0.x: message events as JSON arrays on its spans -----------------------


def _pydantic_events(*events: tuple[str, dict[str, Any]]) -> str:
    """Events as Pydantic AI 0.4 writes them in its default `event_mode='attributes'`:
    each `{**body, **attributes}` with its `event.name` (`InstrumentedModel.event_to_dict`)."""
    return _j([{**body, "gen_ai.system": "openai", "event.name": name} for name, body in events])


SYSTEM_EV = ("gen_ai.system.message", {"role": "system", "content": SYSTEM})
USER_EV = ("gen_ai.user.message", {"role": "user", "content": REQUEST})
CALLED_EV = ("gen_ai.assistant.message", {"role": "assistant",
                                          "tool_calls": [_openai_call("call_1")]})
RESULT_EV = ("gen_ai.tool.message", {"role": "tool", "id": "call_1", "name": "calculator",
                                     "content": "395"})


def _pydantic_chat(*events: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    params = {"function_tools": [{"name": "calculator", "description": DESCRIPTION,
                                  "parameters_json_schema": SCHEMA}]}
    return {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o", "model_request_parameters": _j(params),
            "events": _pydantic_events(*events),
            "logfire.json_schema": _j({"type": "object", "properties": {
                "events": {"type": "array"}, "model_request_parameters": {"type": "object"}}})}


def test_pydantic_ai_0x_message_events_in_span_attributes(tmp_path: Any) -> None:
    """Pydantic AI 0.x's default event mode puts the older per-message events, as one JSON
    array, on each chat span (`events`) and the run's whole conversation on the agent-run
    span (`all_messages_events`): the turn's request, system prompt and answer are there."""

    def record(r: Any) -> None:
        run = {"agent_name": "assistant", "model_name": "gpt-4o", "final_result": ANSWER,
               "all_messages_events": _pydantic_events(
                   SYSTEM_EV, USER_EV, CALLED_EV, RESULT_EV,
                   ("gen_ai.assistant.message", {"role": "assistant", "content": ANSWER})),
               "logfire.json_schema": _j({"type": "object", "properties": {
                   "all_messages_events": {"type": "array"}, "final_result": {"type": "object"}}}),
               "logfire.msg": "assistant run"}
        with r.span("agent run", run):
            with r.span("chat gpt-4o", _pydantic_chat(
                    SYSTEM_EV, USER_EV,
                    ("gen_ai.choice", {"index": 0, "message": CALLED_EV[1]}))):
                pass
            with r.span("running tools", {"tools": ("calculator",)}), \
                    r.span("running tool", {"gen_ai.tool.name": "calculator",
                                            "gen_ai.tool.call.id": "call_1",
                                            "tool_arguments": _j(ARGS), "tool_response": "395",
                                            "logfire.msg": "running tool: calculator"}):
                pass
            with r.span("chat gpt-4o", _pydantic_chat(
                    SYSTEM_EV, USER_EV, CALLED_EV, RESULT_EV,
                    ("gen_ai.choice", {"index": 0, "message": {"role": "assistant",
                                                               "content": ANSWER}}))):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.system_instructions, turn.final_answer) == (REQUEST, SYSTEM, ANSWER)
    assert (turn.llm_calls, turn.agent_name) == (2, "assistant")
    [call] = turn.calls
    assert (call.call_id, call.name, call.result) == ("call_1", "calculator", "395")
    assert "all_messages_events" not in json.loads(turn.attributes)


# --- OpenInference's LangChain instrumentation before llm.tools --------------------------


def test_openinference_langchain_tools_in_invocation_parameters(tmp_path: Any) -> None:
    """OpenInference's LangChain instrumentation 0.1.29 records a chat model's tools only in
    `llm.invocation_parameters` (LangChain's `invocation_params`, as `bind_tools` gave
    them): the turn's tools are defined there, with description and schema."""
    params = {"model": "gpt-4o", "stream": False, "_type": "openai-chat", "tools": [CALC]}
    llm = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o",
           "llm.invocation_parameters": _j(params),
           "llm.input_messages.0.message.role": "system",
           "llm.input_messages.0.message.content": SYSTEM,
           "llm.input_messages.1.message.role": "user",
           "llm.input_messages.1.message.content": REQUEST,
           "llm.output_messages.0.message.role": "assistant",
           "llm.output_messages.0.message.content": ANSWER}
    graph = {"openinference.span.kind": "CHAIN", "session.id": "s1",
             "input.value": _j({"messages": [REQUEST]})}

    def record(r: Any) -> None:
        with r.span("LangGraph", graph), r.span("ChatOpenAI", llm):
            pass

    [turn] = turns_of(record, tmp_path)
    [tool] = turn.tools
    assert (tool.name, tool.description) == ("calculator", DESCRIPTION)
    assert json.loads(tool.parameters or "null") == SCHEMA


# --- Logfire 2.x: a streamed reply accumulated by the OpenAI SDK -------------------------


def _logfire(template: str, values: dict[str, Any], span_type: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {"logfire.msg_template": template, "logfire.msg": template,
                             "logfire.span_type": span_type, "logfire.tags": ("LLM",)}
    schema = {}
    for key, value in values.items():
        attrs[key] = _j(value) if isinstance(value, dict | list) else value
        schema[key] = {"type": "object"} if isinstance(value, dict) else {}
    attrs["logfire.json_schema"] = _j({"type": "object", "properties": schema})
    return attrs


def test_logfire_2x_streamed_reply_with_its_role_repeated(tmp_path: Any) -> None:
    """Logfire 2.x records a streamed reply as the OpenAI SDK accumulated it, which appends
    every string field of each chunk's delta: a server that says `role` in every chunk
    leaves `assistantassistant...`, still the assistant's answer."""
    request = {"messages": [{"role": "system", "content": SYSTEM},
                            {"role": "user", "content": REQUEST}],
               "model": "gpt-4o", "stream": True, "tools": [CALC]}
    reply = {"content": ANSWER, "refusal": None, "role": "assistant" * 6, "audio": None,
             "function_call": None, "tool_calls": None, "parsed": None}
    usage = {"completion_tokens": 7, "prompt_tokens": 30, "total_tokens": 37}

    def record(r: Any) -> None:
        chat = "Chat Completion with {request_data[model]!r}"
        stream = "streaming response from {request_data[model]!r} took {duration:.2f}s"
        with r.span(chat, _logfire(chat, {"request_data": request, "async": False}, "span")):
            pass
        with r.span(stream, _logfire(stream, {
                "request_data": request, "async": False, "duration": 0.1,
                "response_data": {"message": reply, "usage": usage}}, "log")):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)


# --- OpenLLMetry's LangChain instrumentation 0.33: tool results named `unknown` ----------


def test_openllmetry_langchain_033_tool_result_with_role_unknown(tmp_path: Any) -> None:
    """OpenLLMetry's LangChain instrumentation 0.33 names a ToolMessage's role `unknown` and
    drops the calls an AI message replays: the message answering a text-less assistant
    message is the tool's result, the one the model saw when the tool failed (its tool span
    then records no output)."""
    error = "Error: ValueError('Unknown city')\n Please fix your mistakes."

    def chat(prompt: list[tuple[str, str]], completion: dict[str, Any]) -> dict[str, Any]:
        attrs: dict[str, Any] = {"llm.request.type": "chat", "gen_ai.system": "Langchain",
                                 "gen_ai.request.model": "gpt-4o",
                                 "traceloop.workflow.name": "LangGraph"}
        for i, (role, content) in enumerate(prompt):
            attrs[f"gen_ai.prompt.{i}.role"] = role
            attrs[f"gen_ai.prompt.{i}.content"] = content
        attrs.update({f"gen_ai.completion.0.{k}": v for k, v in completion.items()})
        return attrs

    said = [("system", SYSTEM), ("user", REQUEST)]

    def record(r: Any) -> None:
        with r.span("LangGraph.workflow", {"traceloop.span.kind": "workflow",
                                           "traceloop.entity.name": "LangGraph"}):
            with r.span("agent.task", {"traceloop.span.kind": "task"}), \
                    r.span("ChatOpenAI.chat", chat(said, {
                        "role": "unknown", "content": "", "finish_reason": "tool_calls",
                        "tool_calls.0.id": "call_1", "tool_calls.0.name": "calculator",
                        "tool_calls.0.arguments": _j(ARGS)})):
                pass
            with r.span("tools.task", {"traceloop.span.kind": "task"}), \
                    r.span("calculator.tool", {
                        "traceloop.span.kind": "tool", "traceloop.entity.name": "calculator",
                        "traceloop.entity.input": _j({"input_str": str(ARGS)})}):
                pass
            with r.span("agent.task", {"traceloop.span.kind": "task"}), \
                    r.span("ChatOpenAI.chat", chat(
                        [*said, ("assistant", ""), ("unknown", error)],
                        {"role": "assistant", "content": ANSWER})):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)
    [call] = turn.calls
    assert (call.call_id, call.name, call.result) == ("call_1", "calculator", error)


# --- Strands 1.0: the system prompt as a plain attribute of the agent span ---------------


def test_strands_10_system_prompt_on_the_agent_span(tmp_path: Any) -> None:
    """Strands 1.0 records the agent's system prompt as `system_prompt` on its invoke_agent
    span (every plain keyword of `start_agent_span`), before `gen_ai.system_instructions`;
    its chat spans' message events leave it out."""
    user = ("gen_ai.user.message", {"content": _j([{"text": REQUEST}])})
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.system": "strands-agents",
             "gen_ai.agent.name": "assistant", "gen_ai.agent.tools": _j(["calculator"]),
             "system_prompt": SYSTEM}

    def record(r: Any) -> None:
        with r.span("invoke_agent assistant", agent, events=[user]), \
                r.span("execute_event_loop_cycle", {}), \
                r.span("chat", {"gen_ai.operation.name": "chat",
                                "gen_ai.system": "strands-agents"}, events=[
                    user, ("gen_ai.choice", {"finish_reason": "end_turn",
                                             "message": _j([{"text": ANSWER}])})]):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)
    assert turn.system_instructions == SYSTEM
    assert "system_prompt" not in json.loads(turn.attributes)


# --- smolagents 1.x: a tool-response message naming its call ----------------------------


def test_smolagents_1x_tool_response_names_its_call(tmp_path: Any) -> None:
    """smolagents 1.9 relays a step's result as its own role `tool-response`, the text
    `Call id: <id>\\nObservation:\\n<result>`: the result is what the label introduces, for
    the call it names (the model's call seen only in the replayed `Calling tools:` text)."""
    calling = "Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': " \
              "{'name': 'calculator', 'arguments': {'expression': '17 * 23 + 4'}}}]"

    def llm(said: list[tuple[str, str]], out: dict[str, Any]) -> dict[str, Any]:
        attrs: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o"}
        for i, (role, content) in enumerate(said):
            attrs[f"llm.input_messages.{i}.message.role"] = role
            attrs[f"llm.input_messages.{i}.message.content"] = content
        attrs.update({f"llm.output_messages.0.message.{k}": v for k, v in out.items()})
        return attrs

    asked = [("system", SYSTEM), ("user", f"New task:\n{REQUEST}")]
    call = {"role": "assistant", "tool_calls.0.tool_call.id": "call_1",
            "tool_calls.0.tool_call.function.name": "calculator",
            "tool_calls.0.tool_call.function.arguments": _j(ARGS)}
    answer = {"role": "assistant", "tool_calls.0.tool_call.id": "call_2",
              "tool_calls.0.tool_call.function.name": "final_answer",
              "tool_calls.0.tool_call.function.arguments": _j({"answer": ANSWER})}

    def record(r: Any) -> None:
        with r.span("ToolCallingAgent.run", {"openinference.span.kind": "AGENT",
                                             "input.value": _j({"task": REQUEST})}):
            with r.span("Step 1", {"openinference.span.kind": "CHAIN"}), \
                    r.span("OpenAIServerModel.__call__", llm(asked, call)):
                pass
            with r.span("Step 2", {"openinference.span.kind": "CHAIN"}), \
                    r.span("OpenAIServerModel.__call__", llm(
                        [*asked, ("assistant", calling),
                         ("tool-response", "Call id: call_1\nObservation:\n395")], answer)):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)
    [call_made] = [c for c in turn.calls if c.name == "calculator"]
    assert (call_made.call_id, call_made.result) == ("call_1", "395")


# --- OpenLIT 1.26: a stand-in completion and `None` in its transcript --------------------


def test_openlit_126_tool_requests_are_not_captured(tmp_path: Any) -> None:
    """OpenLIT 1.26 records any completion of a request that sent tools as `Function called
    with tools` (a stand-in, no answer) and renders a replayed reply that only called tools
    as `assistant: None` in its prompt transcript: that is the gap the earlier call left, so
    the raw client's two calls (each a trace of its own) are one turn, with no answer
    captured."""
    base = {"telemetry.sdk.name": "openlit", "gen_ai.system": "openai",
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 5}
    asked = f"system: {SYSTEM}\nuser: {REQUEST}"

    def call(r: Any, prompt: str) -> None:
        with _detached(), r.span("openai.chat.completions", base, events=[
                ("gen_ai.content.prompt", {"gen_ai.prompt": prompt}),
                ("gen_ai.content.completion",
                 {"gen_ai.completion": "Function called with tools"})]):
            pass

    def record(r: Any) -> None:
        call(r, asked)
        call(r, f"{asked}\nassistant: None\ntool: 395")

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, None, 2)


@contextmanager
def _detached() -> Iterator[None]:
    """What follows starts a trace of its own (a raw client call made outside any span)."""
    from opentelemetry import context, trace

    token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
    try:
        yield
    finally:
        context.detach(token)
