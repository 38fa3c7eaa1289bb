"""The OpenAI Agents SDK (openai/openai-agents-python) through the bridges that bring its
traces to OTel files, recorded with the real OTel SDK (the convention fixtures' `Recorder`)
in the shapes each bridge writes:

- Logfire's `logfire.instrument_openai_agents()` (pydantic/logfire
  `logfire/_internal/integrations/openai_agents.py`, read at 4.41, and the snapshots in
  `tests/otel_integrations/test_openai_agents.py`): one Logfire span per SDK span, named by
  its message template, every span-data field an attribute (dicts and lists as JSON text
  declared in `logfire.json_schema`). `instrument_openai()` adds nothing under them: it
  skips a request made inside the agent's own model span (`is_current_agent_span` in
  `llm_providers/openai.py`).
- OpenInference's `openinference-instrumentation-openai-agents` (Arize-ai/openinference
  `python/.../openai_agents/_processor.py`, 1.x and 2.0).

Each test pins the assembled turn: request, tools with schemas, calls with arguments and
results, handoffs, final answer, agent name.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.test_stack_forms import turns_of
from turnscore.ingest.turn import Turn

Q = "What is the weather in Paris? Then hand off to the reporter."
ANSWER = "Reporter here: it is 18 C and cloudy in Paris."
TRIAGE_SYSTEM = "You triage weather questions."
REPORTER_SYSTEM = "You write the weather report."
PARIS = {"city": "Paris"}
PARIS_OUT = "18 C, cloudy"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
          "additionalProperties": False}
TOOL = {"type": "function", "name": "get_weather", "description": "Weather for a city.",
        "parameters": SCHEMA, "strict": True}
HANDOFF_TOOL = {"type": "function", "name": "transfer_to_reporter",
                "description": "Handoff to the reporter agent.",
                "parameters": {"type": "object", "properties": {}, "required": [],
                               "additionalProperties": False}, "strict": True}


def _j(value: Any) -> str:
    return json.dumps(value)


# --- Logfire `instrument_openai_agents()` -------------------------------------------------


def _logfire(template: str, values: dict[str, Any], message: str | None = None,
             level: int | None = None) -> dict[str, Any]:
    """Attributes as Logfire writes them: dicts and lists JSON text declared in the JSON
    schema, None as 'null', the template as span name and `logfire.msg_template`."""
    attrs: dict[str, Any] = {"logfire.msg_template": template, "logfire.msg": message or template,
                             "logfire.span_type": "span"}
    schema: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict | list):
            attrs[key] = _j(value)
            schema[key] = {"type": "object" if isinstance(value, dict) else "array"}
        elif value is None:
            attrs[key] = "null"
            schema[key] = {"type": "null"}
        else:
            attrs[key] = value
    if schema:
        attrs["logfire.json_schema"] = _j({"type": "object", "properties": schema})
    if level is not None:
        attrs["logfire.level_num"] = level
    return attrs


@contextmanager
def lf_trace(r: Any, name: str = "Agent workflow") -> Iterator[None]:
    with r.span("OpenAI Agents trace: {name}", _logfire("OpenAI Agents trace: {name}", {
            "name": name, "group_id": None, "metadata": None, "tracing": None,
            "agent_trace_id": "trace_0123"}, f"OpenAI Agents trace: {name}")), \
        r.span(f"Task: {name}", _logfire(f"Task: {name}", {
            "type": "custom", "name": name, "sdk_span_type": "task",
            "usage": {"input_tokens": 0, "output_tokens": 0}, "gen_ai.system": "openai"})):
        yield


@contextmanager
def lf_agent(r: Any, name: str, tools: list[str], handoffs: list[str], turn: int = 1
             ) -> Iterator[None]:
    """`Agent run: {name!r}` and, from openai-agents 0.14, `Turn {turn} for agent X`."""
    with r.span("Agent run: {name!r}", _logfire("Agent run: {name!r}", {
            "name": name, "handoffs": handoffs, "tools": tools, "output_type": "str",
            "gen_ai.system": "openai"}, f"Agent run: {name!r}")), \
        r.span(f"Turn {{turn}} for agent {name}", _logfire(f"Turn {{turn}} for agent {name}", {
            "type": "custom", "name": "turn", "sdk_span_type": "turn", "turn": turn,
            "agent_name": name, "usage": {"input_tokens": 0, "output_tokens": 0},
            "gen_ai.system": "openai"})):
        yield


def _call_item(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"arguments": _j(args), "call_id": cid, "name": name, "type": "function_call",
            "id": f"fc_{cid}", "status": "completed"}


def _output_item(cid: str, output: str) -> dict[str, Any]:
    return {"call_id": cid, "output": output, "type": "function_call_output"}


def _message_item(text: str) -> dict[str, Any]:
    return {"id": "msg_1", "content": [{"annotations": [], "text": text, "type": "output_text",
                                       "logprobs": []}],
            "role": "assistant", "status": "completed", "type": "message"}


def _events(instructions: str | None, items: list[dict[str, Any]],
            outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Logfire's `inputs_to_events` + `responses_output_events`: one event per input item
    (per content part), then the output items, all role assistant."""
    names: dict[str, str] = {}
    events: list[dict[str, Any]] = []
    if instructions:
        events.append({"event.name": "gen_ai.system.message", "content": instructions,
                       "role": "system"})

    def one(item: dict[str, Any]) -> list[dict[str, Any]]:
        if item.get("role") and item.get("type") in (None, "message"):
            role = item["role"]
            content = item["content"]
            if isinstance(content, str):
                return [{"event.name": f"gen_ai.{role}.message", "content": content,
                         "role": role}]
            return [{"event.name": f"gen_ai.{role}.message", "content": c["text"], "role": role}
                    for c in content]
        if item["type"] == "function_call":
            names[item["call_id"]] = item["name"]
            return [{"event.name": "gen_ai.assistant.message", "role": "assistant",
                     "tool_calls": [{"id": item["call_id"], "type": "function", "function": {
                         "name": item["name"], "arguments": item["arguments"]}}]}]
        if item["type"] == "function_call_output":
            return [{"event.name": "gen_ai.tool.message", "role": "tool", "id": item["call_id"],
                     "content": item["output"], "name": names.get(item["call_id"], "unknown")}]
        return [{"event.name": "gen_ai.unknown", "role": item.get("role", "unknown"),
                 "content": f"{item['type']}\n\nSee JSON for details", "data": item}]

    for item in items:
        events += one(item)
    for item in outputs:
        events += [{**e, "role": "assistant"} for e in one(item)]
    return events


def _response(rid: str, instructions: str | None, outputs: list[dict[str, Any]],
              tools: list[dict[str, Any]], tokens: tuple[int, int],
              conversation: str | None = None) -> dict[str, Any]:
    """An OpenAI `Response`, dumped whole as Logfire dumps it (abridged to what matters)."""
    return {"id": rid, "created_at": 1741608000.0, "instructions": instructions,
            "conversation": {"id": conversation} if conversation else None,
            "model": "gpt-4o-2024-08-06", "object": "response", "output": outputs,
            "parallel_tool_calls": True, "temperature": 1.0, "tool_choice": "auto",
            "tools": tools, "top_p": 1.0, "status": "completed",
            "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1],
                      "total_tokens": sum(tokens),
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


RESPONSES = "Responses API with {gen_ai.request.model!r}"


def lf_responses(r: Any, rid: str, instructions: str | None, items: list[dict[str, Any]],
                 outputs: list[dict[str, Any]], tools: list[dict[str, Any]],
                 tokens: tuple[int, int] = (100, 10), conversation: str | None = None) -> None:
    """The SDK's response span as Logfire writes it (`attributes_from_span_data` for a
    `ResponseSpanData`, plus `get_magic_response_attributes`)."""
    with r.span(RESPONSES, _logfire(RESPONSES, {
        "gen_ai.request.model": "gpt-4o", "model_settings": {"temperature": None},
        "response_id": rid, "usage": {"requests": 1, "input_tokens": tokens[0],
                                      "output_tokens": tokens[1]},
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "response": _response(rid, instructions, outputs, tools, tokens, conversation),
        "gen_ai.system": "openai", "gen_ai.operation.name": "chat",
        "raw_input": items, "events": _events(instructions, items, outputs),
        "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1],
    }, "Responses API with 'gpt-4o'")):
        pass


def lf_function(r: Any, name: str, args: dict[str, Any], output: Any,
                error: dict[str, Any] | None = None) -> None:
    values: dict[str, Any] = {"name": name, "input": _j(args), "mcp_data": None,
                              "gen_ai.system": "openai", "output": output}
    events: list[tuple[str, dict[str, Any]]] = []
    if error is not None:
        values["error"] = error
        events = [("exception", {"exception.type": "RuntimeError",
                                 "exception.message": error["data"]["error"],
                                 "exception.escaped": "False"})]
    with r.span("Function: {name}", _logfire("Function: {name}", values, f"Function: {name}",
                                             17 if error else None), events):
        pass


def lf_handoff(r: Any, source: str, target: str) -> None:
    template = "Handoff: {from_agent} → {to_agent}"
    with r.span(template, _logfire(template, {"from_agent": source, "to_agent": target,
                                              "gen_ai.system": "openai"})):
        pass


def lf_guardrail(r: Any, name: str, triggered: bool) -> None:
    template = "Guardrail {name!r} {triggered=}"
    with r.span(template, _logfire(template, {"name": name, "triggered": triggered,
                                              "gen_ai.system": "openai"})):
        pass


USER = {"content": Q, "role": "user"}
CALL = _call_item("call_w", "get_weather", PARIS)
HANDOFF = _call_item("call_h", "transfer_to_reporter", {})
HANDED = [USER, CALL, HANDOFF, _output_item("call_w", PARIS_OUT),
          _output_item("call_h", _j({"assistant": "reporter"}))]


def lf_handoff_run(r: Any) -> None:
    """`test_responses` in Logfire's tests, with a tool taking arguments: triage calls
    get_weather and the handoff in one response; the reporter answers."""
    with lf_trace(r):
        with lf_agent(r, "triage", ["get_weather"], ["reporter"]):
            lf_responses(r, "resp_1", TRIAGE_SYSTEM, [USER], [CALL, HANDOFF],
                         [TOOL, HANDOFF_TOOL], (60, 30))
            lf_function(r, "get_weather", PARIS, PARIS_OUT)
            lf_handoff(r, "triage", "reporter")
        with lf_agent(r, "reporter", [], [], turn=2):
            lf_responses(r, "resp_2", REPORTER_SYSTEM, HANDED, [_message_item(ANSWER)], [],
                         (90, 12))


def _handoff_turn(turn: Turn, agent: str | None = "triage") -> None:
    assert (turn.request, turn.final_answer, turn.status) == (Q, ANSWER, "ok")
    assert [(c.name, c.call_id, json.loads(c.arguments or "null"), c.result, c.status, c.step)
            for c in turn.calls] == [
        ("get_weather", "call_w", PARIS, PARIS_OUT, "ok", 0),
        ("transfer_to_reporter", "call_h", {}, _j({"assistant": "reporter"}), "ok", 0)]
    tools = {t.name: t for t in turn.tools}
    assert set(tools) == {"get_weather", "transfer_to_reporter"}
    assert json.loads(tools["get_weather"].parameters or "null") == SCHEMA
    assert tools["get_weather"].description == "Weather for a city."
    assert turn.llm_calls == 2
    assert turn.agent_name == agent
    assert turn.system_instructions == TRIAGE_SYSTEM


def test_logfire_responses_handoff_run(tmp_path: Path) -> None:
    [turn] = turns_of(lf_handoff_run, tmp_path)
    _handoff_turn(turn)
    assert (turn.input_tokens, turn.output_tokens) == (150, 42)
    assert "pydantic-ai" not in turn.convention.split(",")
    attributes = json.loads(turn.attributes)
    assert not {"raw_input", "events", "response"} & set(attributes)
    assert Q not in turn.attributes and ANSWER not in turn.attributes


def test_logfire_hosted_web_search_is_a_call(tmp_path: Path) -> None:
    """A `web_search_call` output item (the provider ran it) beside the answer: one
    finished call with the query as its arguments, and the turn is answered."""
    search = {"id": "ws_1", "type": "web_search_call", "status": "completed",
              "action": {"type": "search", "query": "Paris weather today"}}

    def record(r: Any) -> None:
        with lf_trace(r), lf_agent(r, "triage", [], []):
            lf_responses(r, "resp_1", TRIAGE_SYSTEM, [USER], [search, _message_item(ANSWER)],
                         [{"type": "web_search"}])

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (Q, ANSWER, "ok")
    [call] = turn.calls
    assert (call.name, call.status) == ("web_search", "ok")
    assert "Paris weather today" in (call.arguments or "")


def test_logfire_chat_completions_model(tmp_path: Path) -> None:
    """`OpenAIChatCompletionsModel` (and LiteLLM): `Chat completion with ...` spans carry
    the chat messages sent (`input`) and the message returned (`output`); `request_data`
    joins both for Logfire's UI and is no request. No tool schemas reach the span: the
    agent span's tool names are the turn's tools."""
    call = {"id": "call_w", "type": "function",
            "function": {"name": "get_weather", "arguments": _j(PARIS)}}

    def message(content: str | None, calls: list[dict[str, Any]] | None) -> dict[str, Any]:
        return {"content": content, "refusal": None, "role": "assistant", "annotations": [],
                "audio": None, "function_call": None, "tool_calls": calls}

    def generation(r: Any, inputs: list[dict[str, Any]], output: dict[str, Any],
                   tokens: tuple[int, int]) -> None:
        template = "Chat completion with {gen_ai.request.model!r}"
        attrs = _logfire(template, {
            "input": inputs, "output": [output], "model_config": {"temperature": None},
            "usage": {"requests": 1, "input_tokens": tokens[0], "output_tokens": tokens[1]},
            "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
            "gen_ai.response.model": "gpt-4o", "gen_ai.usage.input_tokens": tokens[0],
            "gen_ai.usage.output_tokens": tokens[1],
            "request_data": {"messages": [*inputs, output], "model": "gpt-4o"},
        }, "Chat completion with 'gpt-4o'")
        attrs["logfire.tags"] = ("LLM",)
        with r.span(template, attrs):
            pass

    first = [{"content": TRIAGE_SYSTEM, "role": "system"}, {"role": "user", "content": Q}]
    second = [*first, {"role": "assistant", "tool_calls": [call]},
              {"role": "tool", "tool_call_id": "call_w", "content": PARIS_OUT}]

    def record(r: Any) -> None:
        with lf_trace(r), lf_agent(r, "triage", ["get_weather"], []):
            generation(r, first, message(None, [call]), (40, 9))
            lf_function(r, "get_weather", PARIS, PARIS_OUT)
            generation(r, second, message(ANSWER, None), (60, 12))

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status, turn.llm_calls) == (Q, ANSWER, "ok", 2)
    assert [(c.name, c.call_id, c.result, c.status) for c in turn.calls] == [
        ("get_weather", "call_w", PARIS_OUT, "ok")]
    assert json.loads(turn.calls[0].arguments or "null") == PARIS
    assert [(t.name, t.parameters) for t in turn.tools] == [("get_weather", None)]
    assert (turn.system_instructions, turn.agent_name) == (TRIAGE_SYSTEM, "triage")
    assert (turn.input_tokens, turn.output_tokens) == (100, 21)
    assert "pydantic-ai" not in turn.convention.split(",")


def test_logfire_tool_failure_is_the_calls_error_not_the_turns(tmp_path: Path) -> None:
    """A tool raising: the SDK sends the model an error text and records a span error
    `{message, data}`, which Logfire writes as `error` with level error (no error status)
    and the exception as an event. The call failed; the run went on to its answer."""
    failed = "An error occurred while running the tool. Please try again. Error: no station"
    items = [USER, CALL, _output_item("call_w", failed)]
    sorry = "I could not get the weather for Paris."

    def record(r: Any) -> None:
        with lf_trace(r), lf_agent(r, "triage", ["get_weather"], []):
            lf_responses(r, "resp_1", TRIAGE_SYSTEM, [USER], [CALL], [TOOL])
            lf_function(r, "get_weather", PARIS, failed, error={
                "message": "Error running tool (non-fatal)",
                "data": {"tool_name": "get_weather", "error": "no station"}})
            lf_responses(r, "resp_2", TRIAGE_SYSTEM, items, [_message_item(sorry)], [TOOL])

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (Q, sorry, "ok")
    [call] = turn.calls
    assert (call.name, call.result, call.status) == ("get_weather", failed, "error")
    assert call.error is not None and "no station" in call.error


def test_logfire_input_guardrail_tripwire_fails_the_turn(tmp_path: Path) -> None:
    """An input guardrail trips: the SDK records the error on the turn span (0.14+) and
    raises; the model call running beside the guardrail may be cut off without output."""

    def record(r: Any) -> None:
        with lf_trace(r), r.span("Agent run: {name!r}", _logfire("Agent run: {name!r}", {
                "name": "triage", "handoffs": [], "tools": ["get_weather"],
                "output_type": "str"})):
            template = "Turn {turn} for agent triage"
            with r.span(template, _logfire(template, {
                    "type": "custom", "name": "turn", "sdk_span_type": "turn", "turn": 1,
                    "agent_name": "triage", "error": {
                        "message": "Guardrail tripwire triggered",
                        "data": {"guardrail": "no_zero"}}}, level=17)):
                lf_guardrail(r, "no_zero", True)
                with r.span(RESPONSES, _logfire(RESPONSES, {
                        "gen_ai.request.model": "gpt-4o", "response_id": None, "usage": None,
                        "gen_ai.system": "openai", "raw_input": [USER],
                        "events": _events(None, [USER], [])})):
                    pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (Q, None)
    assert turn.status == "error"
    assert turn.error is not None and "Guardrail tripwire triggered" in turn.error


def test_logfire_handoff_with_nested_history(tmp_path: Path) -> None:
    """`RunConfig(nest_handoff_history=True)` (`src/agents/handoffs/history.py`): the next
    agent's input is one assistant message summarizing the transcript. Its span's `events`
    would read that message as part of the answer; the raw input and the response do not."""
    summary = ("For context, here is the conversation so far between the user and the "
               "previous agent:\n<CONVERSATION HISTORY>\n"
               f"1. user: {Q}\n2. function_call: {{...}}\n</CONVERSATION HISTORY>")

    def record(r: Any) -> None:
        with lf_trace(r):
            with lf_agent(r, "triage", [], ["reporter"]):
                lf_responses(r, "resp_1", TRIAGE_SYSTEM, [USER], [HANDOFF], [HANDOFF_TOOL])
                lf_handoff(r, "triage", "reporter")
            with lf_agent(r, "reporter", [], [], turn=2):
                lf_responses(r, "resp_2", REPORTER_SYSTEM,
                             [{"role": "assistant", "content": summary}],
                             [_message_item(ANSWER)], [])

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status, turn.llm_calls) == (
        Q, ANSWER, "ok", 2)
    assert [c.name for c in turn.calls] == ["transfer_to_reporter"]


def test_logfire_two_runs_in_one_trace_are_two_turns_of_the_group(tmp_path: Path) -> None:
    """`with trace("chat", group_id=...)` around two `Runner.run` calls, the second given
    `result.to_input_list()` plus the next question (Logfire's `test_responses_simple`):
    two turns of the conversation the group id names; reasoning items (o-series models)
    in the output and carried back in the input are no message."""
    q2 = "And in Rome?"
    a1, a2 = "18 C in Paris.", "24 C in Rome."
    reasoning = {"id": "rs_1", "summary": [{"text": "Look it up.", "type": "summary_text"}],
                 "type": "reasoning", "encrypted_content": None}

    def record(r: Any) -> None:
        with r.span("OpenAI Agents trace: {name}", _logfire("OpenAI Agents trace: {name}", {
                "name": "chat", "group_id": "thread-7", "metadata": None, "tracing": None,
                "agent_trace_id": "trace_1"})):
            with lf_agent(r, "triage", [], []):
                lf_responses(r, "resp_1", TRIAGE_SYSTEM, [USER],
                             [reasoning, _message_item(a1)], [])
            second = [USER, reasoning, _message_item(a1), {"role": "user", "content": q2}]
            with lf_agent(r, "triage", [], []):
                lf_responses(r, "resp_2", TRIAGE_SYSTEM, second, [_message_item(a2)], [])

    turns = turns_of(record, tmp_path)
    assert [(t.request, t.final_answer, t.status, t.turn_index) for t in turns] == [
        (Q, a1, "ok", 0), (q2, a2, "ok", 1)]
    assert {t.conversation_id for t in turns} == {"thread-7"}


def test_logfire_server_side_conversation_threads_runs(tmp_path: Path) -> None:
    """`Runner.run(..., conversation_id="conv_1")` twice, each run a trace of its own: the
    input holds only the new message (the server keeps the history) and the `Response`
    names its conversation, which threads the two turns."""
    q2 = "And in Rome?"
    a1, a2 = "18 C in Paris.", "24 C in Rome."

    def record(r: Any) -> None:
        from opentelemetry import context, trace

        for question, answer in ((Q, a1), (q2, a2)):
            token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
            try:
                with lf_trace(r), lf_agent(r, "triage", [], []):
                    lf_responses(r, "resp", TRIAGE_SYSTEM, [{"role": "user", "content": question}],
                                 [_message_item(answer)], [], conversation="conv_1")
            finally:
                context.detach(token)

    turns = turns_of(record, tmp_path)
    assert [(t.request, t.final_answer, t.turn_index, t.conversation_id) for t in turns] == [
        (Q, a1, 0, "conv_1"), (q2, a2, 1, "conv_1")]


def test_logfire_structured_tool_output(tmp_path: Path) -> None:
    """A tool returning a dict: Logfire writes the function span's `output` as JSON text
    (declared an object); an int stays an int attribute."""
    out = {"temperature": 18, "conditions": "cloudy"}
    items = [USER, CALL, _output_item("call_w", str(out))]

    def record(r: Any) -> None:
        with lf_trace(r), lf_agent(r, "triage", ["get_weather"], []):
            lf_responses(r, "resp_1", TRIAGE_SYSTEM, [USER], [CALL], [TOOL])
            lf_function(r, "get_weather", PARIS, out)
            lf_responses(r, "resp_2", TRIAGE_SYSTEM, items, [_message_item(ANSWER)], [TOOL])

    [turn] = turns_of(record, tmp_path)
    [call] = turn.calls
    assert call.status == "ok"
    assert call.result in (str(out), json.dumps(out, separators=(",", ":")))
    assert turn.final_answer == ANSWER


# --- OpenInference `openinference-instrumentation-openai-agents` -----------------------------
# Arize-ai/openinference `python/instrumentation/openinference-instrumentation-openai-agents/
# src/openinference/instrumentation/openai_agents/_processor.py`: 2.0 (Aug 2026) sets
# `agent.name`, scopes `llm.system` to LLM spans, reads tool schemas onto function spans
# and records a handoff's agents as its input and output; 1.1 to 1.6 name the agent only in
# `graph.node.id`; before 1.1 only the span name does.


def _oi_input(items: list[dict[str, Any]], instructions: str | None) -> dict[str, Any]:
    """`_get_attributes_from_input` (items from index 1, the instructions at 0; an item it
    skips, such as reasoning, leaves its index unused) and `input.value`."""
    p = "llm.input_messages"
    out: dict[str, Any] = {"input.value": _j(items), "input.mime_type": "application/json"}
    if instructions:
        out[f"{p}.0.message.role"], out[f"{p}.0.message.content"] = "system", instructions
    for i, item in enumerate(items, 1):
        m = f"{p}.{i}.message."
        kind = item.get("type")
        if kind in (None, "message") and "role" in item:
            out[m + "role"] = item["role"]
            if isinstance(item["content"], str):
                out[m + "content"] = item["content"]
            else:
                for k, c in enumerate(item["content"]):
                    out[f"{m}contents.{k}.message_content.type"] = "text"
                    out[f"{m}contents.{k}.message_content.text"] = c["text"]
        elif kind == "function_call":
            out[m + "role"] = "assistant"
            out[m + "tool_calls.0.tool_call.id"] = item["call_id"]
            out[m + "tool_calls.0.tool_call.function.name"] = item["name"]
            if item["arguments"] != "{}":
                out[m + "tool_calls.0.tool_call.function.arguments"] = item["arguments"]
        elif kind == "function_call_output":
            out[m + "role"] = "tool"
            out[m + "tool_call_id"] = item["call_id"]
            out[m + "content"] = item["output"]
    return out


def _oi_output(outputs: list[dict[str, Any]]) -> dict[str, Any]:
    """`_get_attributes_from_response_output`: a message takes an index of its own, the
    function calls after it share the next one."""
    p = "llm.output_messages"
    out: dict[str, Any] = {}
    msg, call = 0, 0
    for item in outputs:
        if item["type"] == "message":
            m = f"{p}.{msg}.message."
            out[m + "role"] = "assistant"
            for k, c in enumerate(item["content"]):
                out[f"{m}contents.{k}.message_content.type"] = "text"
                out[f"{m}contents.{k}.message_content.text"] = c["text"]
            out[m + "content"] = "\n".join(c["text"] for c in item["content"])
            msg += 1
        elif item["type"] == "reasoning":
            m = f"{p}.{msg}.message."
            out[m + "role"] = "assistant"
            out[m + "contents.0.message_content.type"] = "reasoning"
            out[m + "contents.0.message_content.text"] = "\n\n".join(
                x["text"] for x in item["summary"])
            out[m + "contents.0.message_content.id"] = item["id"]
            msg += 1
        elif item["type"] == "function_call":
            m = f"{p}.{msg}.message."
            out[m + "role"] = "assistant"
            c = f"{m}tool_calls.{call}.tool_call."
            out[c + "id"], out[c + "function.name"] = item["call_id"], item["name"]
            if item["arguments"] != "{}":
                out[c + "function.arguments"] = item["arguments"]
            call += 1
    return out


_RESPONSE_IDS = itertools.count(1)
"""Every response has an id of its own, as the API gives: one id on two model calls would
make them one call (`turnscore.ingest.calls`, rule 3)."""


def oi_response(r: Any, instructions: str | None, items: list[dict[str, Any]],
                outputs: list[dict[str, Any]], tools: list[dict[str, Any]],
                tokens: tuple[int, int] = (100, 10), legacy: bool = False) -> None:
    attrs: dict[str, Any] = {
        "openinference.span.kind": "LLM", "llm.system": "openai",
        "output.mime_type": "application/json",
        "output.value": _j(_response(f"resp_{next(_RESPONSE_IDS)}", instructions, outputs,
                                     tools, tokens)),
        "llm.token_count.completion": tokens[1], "llm.token_count.prompt": tokens[0],
        "llm.token_count.total": sum(tokens), "llm.model_name": "gpt-4o-2024-08-06",
        "llm.invocation_parameters": _j({"model": "gpt-4o-2024-08-06"}),
        **{f"llm.tools.{i}.tool.json_schema": _j({"type": "function", "function": {
            k: t[k] for k in ("name", "description", "parameters", "strict")}})
           for i, t in enumerate(tools)},
        **_oi_output(outputs), **_oi_input(items, instructions),
    }
    with r.span("response", attrs):
        pass


def _kind(kind: str, legacy: bool) -> dict[str, Any]:
    """1.x put `llm.system` on every span."""
    return {"openinference.span.kind": kind, **({"llm.system": "openai"} if legacy else {})}


@contextmanager
def oi_agent(r: Any, name: str, version: str, parent: str | None = None) -> Iterator[None]:
    attrs = _kind("AGENT", version != "2")
    if version in ("1", "2"):
        attrs["graph.node.id"] = name
        if parent:
            attrs["graph.node.parent_id"] = parent
    if version == "2":
        attrs["agent.name"] = name
    with r.span(name, attrs):
        yield


def oi_function(r: Any, name: str, args: dict[str, Any], output: str, version: str,
                error: str | None = None) -> None:
    attrs = {**_kind("TOOL", version != "2"), "tool.name": name, "input.value": _j(args),
             "input.mime_type": "application/json", "output.value": output}
    if version == "2":
        attrs["tool.description"] = "Weather for a city."
        attrs["tool.parameters"] = _j(SCHEMA)
    with r.span(name, attrs, error=error):
        pass


def oi_handoff(r: Any, source: str, target: str, version: str) -> None:
    attrs = _kind("TOOL", version != "2")
    if version == "2":
        attrs["input.value"], attrs["output.value"] = source, target
    with r.span(f"handoff to {target}", attrs):
        pass


def oi_handoff_run(version: str) -> Any:
    def record(r: Any) -> None:
        with r.span("Agent workflow", _kind("AGENT", version != "2")):
            with oi_agent(r, "triage", version):
                oi_response(r, TRIAGE_SYSTEM, [USER], [CALL, HANDOFF], [TOOL, HANDOFF_TOOL],
                            (60, 30))
                oi_function(r, "get_weather", PARIS, PARIS_OUT, version)
                oi_handoff(r, "triage", "reporter", version)
            with oi_agent(r, "reporter", version, parent="triage"):
                oi_response(r, REPORTER_SYSTEM, HANDED, [_message_item(ANSWER)], [], (90, 12))
    return record


@pytest.mark.parametrize("version", ["0", "1", "2"])
def test_openinference_responses_handoff_run(tmp_path: Path, version: str) -> None:
    """The run of `test_logfire_responses_handoff_run` through each processor version: the
    agent named by `agent.name` (2.0) or `graph.node.id` (1.x), not by the root AGENT span
    named after the trace (nor at all before 1.1); the handoff's TOOL span (2.0: the two
    agents as input and output) no call of its own."""
    [turn] = turns_of(oi_handoff_run(version), tmp_path)
    _handoff_turn(turn, agent=None if version == "0" else "triage")
    assert (turn.input_tokens, turn.output_tokens) == (150, 42)
    assert "openinference" in turn.convention


REASONING = {"id": "rs_1", "summary": [{"text": "Look the weather up.", "type": "summary_text"}],
             "type": "reasoning", "encrypted_content": None}


def test_openinference_reasoning_is_no_answer_text(tmp_path: Path) -> None:
    """A reasoning model: the processor writes a reasoning item as an output message of its
    own whose content block is of type `reasoning` (the summary as its text), and skips it
    in the next input, leaving its index unused. The summary is not the answer."""

    def record(r: Any) -> None:
        with r.span("Agent workflow", _kind("AGENT", False)), oi_agent(r, "triage", "2"):
            oi_response(r, TRIAGE_SYSTEM, [USER], [REASONING, CALL], [TOOL])
            oi_function(r, "get_weather", PARIS, PARIS_OUT, "2")
            items = [USER, REASONING, CALL, _output_item("call_w", PARIS_OUT)]
            oi_response(r, TRIAGE_SYSTEM, items, [REASONING, _message_item(ANSWER)], [TOOL])

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status, turn.llm_calls) == (Q, ANSWER, "ok", 2)
    assert [(c.name, c.call_id, c.result) for c in turn.calls] == [
        ("get_weather", "call_w", PARIS_OUT)]


def _oi_chat(prefix: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """`_get_attributes_from_chat_completions_message_dicts`: the tool-call index runs on
    across the messages of one list instead of restarting at each."""
    out: dict[str, Any] = {}
    call = 0
    for i, m in enumerate(messages):
        p = f"{prefix}.{i}.message."
        out[p + "role"] = m["role"]
        if m.get("content"):
            out[p + "content"] = m["content"]
        if "tool_call_id" in m:
            out[p + "tool_call_id"] = m["tool_call_id"]
        for tc in m.get("tool_calls") or ():
            q = f"{p}tool_calls.{call}.tool_call."
            out[q + "id"], out[q + "function.name"] = tc["id"], tc["function"]["name"]
            if tc["function"]["arguments"] != "{}":
                out[q + "function.arguments"] = tc["function"]["arguments"]
            call += 1
    return out


def oi_generation(r: Any, inputs: list[dict[str, Any]], output: dict[str, Any],
                  tokens: tuple[int, int], version: str) -> None:
    attrs = {**_kind("LLM", True), "llm.model_name": "gpt-4o",
             "llm.invocation_parameters": _j({"temperature": 0.2}),
             "input.value": _j(inputs), "input.mime_type": "application/json",
             "output.value": _j([output]), "output.mime_type": "application/json",
             **_oi_chat("llm.input_messages", inputs), **_oi_chat("llm.output_messages", [output]),
             "llm.token_count.prompt": tokens[0], "llm.token_count.completion": tokens[1]}
    with r.span("generation", attrs):
        pass


@pytest.mark.parametrize("version", ["1", "2"])
def test_openinference_chat_completions_model_two_rounds(tmp_path: Path, version: str) -> None:
    """`OpenAIChatCompletionsModel`: LLM spans from the generation span data (chat messages,
    no tool definitions). Two rounds of calls, so the second assistant message's call sits
    at tool-call index 1. Tool schemas only from 2.0's function spans (`tool.parameters`)."""
    rome = {"city": "Rome"}

    def call(cid: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"id": cid, "type": "function",
                "function": {"name": "get_weather", "arguments": _j(args)}}

    def asks(c: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [c]}

    h1 = [{"role": "system", "content": TRIAGE_SYSTEM}, {"role": "user", "content": Q}]
    h2 = [*h1, asks(call("c1", PARIS)),
          {"role": "tool", "tool_call_id": "c1", "content": PARIS_OUT}]
    h3 = [*h2, asks(call("c2", rome)), {"role": "tool", "tool_call_id": "c2", "content": "24 C"}]

    def record(r: Any) -> None:
        with r.span("Agent workflow", _kind("AGENT", version != "2")), \
                oi_agent(r, "triage", version):
            oi_generation(r, h1, asks(call("c1", PARIS)), (40, 9), version)
            oi_function(r, "get_weather", PARIS, PARIS_OUT, version)
            oi_generation(r, h2, asks(call("c2", rome)), (60, 9), version)
            oi_function(r, "get_weather", rome, "24 C", version)
            oi_generation(r, h3, {"role": "assistant", "content": ANSWER}, (80, 12), version)

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status, turn.llm_calls) == (Q, ANSWER, "ok", 3)
    assert [(c.name, c.call_id, json.loads(c.arguments or "null"), c.result, c.step)
            for c in turn.calls] == [("get_weather", "c1", PARIS, PARIS_OUT, 0),
                                     ("get_weather", "c2", rome, "24 C", 1)]
    [tool] = turn.tools
    if version == "2":
        assert (tool.description, json.loads(tool.parameters or "null")) == (
            "Weather for a city.", SCHEMA)
    assert (turn.agent_name, turn.system_instructions) == ("triage", TRIAGE_SYSTEM)


def test_openinference_tool_failure(tmp_path: Path) -> None:
    """A tool raising: the function span's status is ERROR with the SDK's span error as
    description; the model gets the error text and answers."""
    failed = "An error occurred while running the tool. Please try again. Error: no station"
    sorry = "I could not get the weather for Paris."

    def record(r: Any) -> None:
        with r.span("Agent workflow", _kind("AGENT", False)), oi_agent(r, "triage", "2"):
            oi_response(r, TRIAGE_SYSTEM, [USER], [CALL], [TOOL])
            oi_function(r, "get_weather", PARIS, failed, "2", error=(
                "Error running tool (non-fatal): {'tool_name': 'get_weather', "
                "'error': 'no station'}"))
            oi_response(r, TRIAGE_SYSTEM, [USER, CALL, _output_item("call_w", failed)],
                        [_message_item(sorry)], [TOOL])

    [turn] = turns_of(record, tmp_path)
    assert (turn.final_answer, turn.status) == (sorry, "ok")
    [call] = turn.calls
    assert (call.name, call.result, call.status) == ("get_weather", failed, "error")


def test_openinference_guardrail_tripwire_fails_the_turn(tmp_path: Path) -> None:
    """SDK 0.14+: a tripwire fails the run's `turn` span (CHAIN) while every AGENT span ends
    OK, and the model call it cut short has no output: the turn failed, with the reason."""
    tripped = "Guardrail InputGuardrail triggered tripwire"

    def record(r: Any) -> None:
        with (
            r.span("Agent workflow", _kind("AGENT", False)),
            oi_agent(r, "triage", "2"),
            r.span("turn", _kind("CHAIN", False), error=tripped),
        ):
            oi_response(r, TRIAGE_SYSTEM, [USER], [], [TOOL])

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (USER["content"], None, "error")
    assert turn.error == tripped


# --- Logfire `instrument_claude_agent_sdk()` ---------------------------------------------------
# pydantic/logfire `logfire/_internal/integrations/claude_agent_sdk.py` and the snapshot of
# `test_tool_use_conversation_cassette`: OTel GenAI attributes (JSON text, declared in
# `logfire.json_schema`) on `invoke_agent` > `chat` / `execute_tool <name>` siblings; usage
# per chat span only as `gen_ai.usage.partial.*` (the message's, not the call's), the
# totals on `invoke_agent`.


def test_logfire_claude_agent_sdk_tool_use(tmp_path: Path) -> None:
    listing = {"stdout": "README.md\nsrc", "stderr": "", "interrupted": False,
               "isImage": False, "noOutputExpected": False}
    args = {"command": "ls", "description": "List files in current directory"}
    user = {"role": "user", "parts": [{"type": "text", "content": "List the files"}]}
    asks = {"role": "assistant", "parts": [
        {"type": "reasoning", "content": "Let me list the files."},
        {"type": "tool_call", "id": "toolu_1", "name": "Bash", "arguments": args}]}
    result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "toolu_1",
                                         "name": "Bash", "response": listing}]}
    answer = "There are two entries: README.md and src."
    system = [{"type": "text", "content": "Be helpful"}]
    common = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
              "gen_ai.system": "anthropic", "gen_ai.system_instructions": system,
              "gen_ai.request.model": "claude-sonnet-4-6",
              "gen_ai.response.model": "claude-sonnet-4-6"}

    def record(r: Any) -> None:
        with r.span("invoke_agent", _logfire("invoke_agent", {
                "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "anthropic",
                "gen_ai.system": "anthropic", "gen_ai.system_instructions": system,
                "gen_ai.input.messages": [user], "gen_ai.usage.input_tokens": 18872,
                "gen_ai.usage.output_tokens": 415, "gen_ai.conversation.id": "sess-1",
                "num_turns": 2, "gen_ai.request.model": "claude-sonnet-4-6"})):
            with r.span("chat claude-sonnet-4-6", _logfire("chat", {
                    **common, "gen_ai.input.messages": [user], "gen_ai.output.messages": [asks],
                    "gen_ai.usage.partial.input_tokens": 9343,
                    "gen_ai.usage.partial.output_tokens": 0}, "chat claude-sonnet-4-6")):
                pass
            with r.span("execute_tool Bash", _logfire("execute_tool Bash", {
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Bash",
                    "gen_ai.tool.call.id": "toolu_1", "gen_ai.tool.call.arguments": args,
                    "gen_ai.tool.call.result": listing})):
                pass
            with r.span("chat claude-sonnet-4-6", _logfire("chat", {
                    **common, "gen_ai.input.messages": [user, asks, result],
                    "gen_ai.output.messages": [{"role": "assistant", "parts": [
                        {"type": "text", "content": answer}]}],
                    "gen_ai.usage.partial.input_tokens": 9529,
                    "gen_ai.usage.partial.output_tokens": 1}, "chat claude-sonnet-4-6")):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status, turn.llm_calls) == (
        "List the files", answer, "ok", 2)
    [call] = turn.calls
    assert (call.name, call.call_id, json.loads(call.arguments or "null"), call.status) == (
        "Bash", "toolu_1", args, "ok")
    assert json.loads(call.result or "null") == listing
    assert (turn.system_instructions, turn.conversation_id) == ("Be helpful", "sess-1")
    assert turn.tools_source == "inferred"  # Claude Code's tools are declared nowhere
    # The chat spans' usage is partial: the run's totals are on its agent span.
    assert (turn.input_tokens, turn.output_tokens) == (18872, 415)


def test_logfire_agent_as_tool_is_one_call(tmp_path: Path) -> None:
    """`Agent.as_tool()`: the tool's function span holds the sub-agent's whole run, whose
    first model call carries the tool input as its user message. One turn, one call
    answered by the sub-agent; its model calls and tool count in the turn's steps."""
    task, report = "Weather report for Paris", "Paris: 18 C, cloudy."
    ask = _call_item("call_a", "weather_agent", {"input": task})
    as_tool = {"type": "function", "name": "weather_agent", "description": "Weather agent.",
               "parameters": {"type": "object", "properties": {"input": {"type": "string"}}},
               "strict": True}
    sub_user = {"role": "user", "content": task}

    def record(r: Any) -> None:
        with lf_trace(r), lf_agent(r, "orchestrator", ["weather_agent"], []):
            lf_responses(r, "resp_1", TRIAGE_SYSTEM, [USER], [ask], [as_tool])
            with r.span("Function: {name}", _logfire("Function: {name}", {
                    "name": "weather_agent", "input": _j({"input": task}), "mcp_data": None,
                    "output": report})), lf_agent(r, "weather", ["get_weather"], []):
                lf_responses(r, "resp_s1", REPORTER_SYSTEM, [sub_user], [CALL], [TOOL])
                lf_function(r, "get_weather", PARIS, PARIS_OUT)
                lf_responses(r, "resp_s2", REPORTER_SYSTEM,
                             [sub_user, CALL, _output_item("call_w", PARIS_OUT)],
                             [_message_item(report)], [TOOL])
            lf_responses(r, "resp_2", TRIAGE_SYSTEM, [USER, ask, _output_item("call_a", report)],
                         [_message_item(ANSWER)], [as_tool])

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status, turn.agent_name) == (
        Q, ANSWER, "ok", "orchestrator")
    assert [(c.name, c.call_id, c.result) for c in turn.calls] == [
        ("weather_agent", "call_a", report)]
    assert turn.system_instructions == TRIAGE_SYSTEM
