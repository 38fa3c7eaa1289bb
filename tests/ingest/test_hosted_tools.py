"""Hosted (server-run) tools and tools that end the run, recorded with the real OTel SDK (the
convention fixtures' `Recorder`) and asserted on the assembled turns.

Hosted tools: the model picks a tool the provider runs itself, and the call and its result
come back in the model's own output. Forms:

- OpenAI Responses output items (openai/openai-python `types/responses/`:
  `response_function_web_search.py`, `response_file_search_tool_call.py`,
  `response_code_interpreter_tool_call.py`, `response_output_item.py` `McpCall`,
  `ImageGenerationCall`), here as MLflow's OpenAI autolog records a `Response` in
  `mlflow.spanOutputs`.
- OTel GenAI `server_tool_call` / `server_tool_call_response` parts (semantic-conventions
  `docs/gen-ai/gen-ai-output-messages.json`), and the OTel contrib OpenAI Agents
  instrumentation (`opentelemetry-instrumentation-openai-agents-v2`, its span processor's
  tests), which writes a hosted item as a `tool_call` part and a `tool_call_response` part
  of the item's id in one output message.
- Anthropic's `server_tool_use` block with its `web_search_tool_result` block in the
  assistant's content (anthropic-sdk-python `types/server_tool_use_block.py`,
  `web_search_tool_result_block.py`), as a `gen_ai.choice` event's message.

A tool that ends the run: the last model call requests a tool, the tool's result is what
the user gets and no model call follows (OpenAI Agents `tool_use_behavior=
"stop_on_first_tool"` / `StopAtTools`, LangChain `return_direct=True`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of
from turnscore.ingest.turn import Turn

Q = "What is the weather in Paris today?"
ANSWER = "It is 18 C and cloudy in Paris."
SOURCES = [{"type": "url", "url": "https://weather.example/paris"}]


def _j(value: Any) -> str:
    return json.dumps(value)


def calls_of(turn: Turn) -> list[tuple[str, Any, Any, str, int]]:
    def parsed(text: str | None) -> Any:
        try:
            return json.loads(text) if text is not None else None
        except json.JSONDecodeError:
            return text

    return [(c.name, parsed(c.arguments), parsed(c.result), c.status, c.step)
            for c in turn.calls]


def shape(turn: Turn) -> tuple[str, str | None, str, str | None]:
    return (turn.request, turn.final_answer, turn.status, turn.error)


# --- OpenAI Responses items (MLflow's OpenAI autolog) ------------------------------------


def _message_item(text: str) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


WEB_SEARCH = {"id": "ws_1", "type": "web_search_call", "status": "completed",
              "action": {"type": "search", "query": "Paris weather today",
                         "sources": SOURCES}}
FILE_SEARCH = {"id": "fs_1", "type": "file_search_call", "status": "completed",
               "queries": ["paris climate"],
               "results": [{"file_id": "file-1", "filename": "paris.md", "score": 0.9,
                            "text": "Paris is mild."}]}
CODE = {"id": "ci_1", "type": "code_interpreter_call", "status": "completed",
        "container_id": "cntr_1", "code": "print(18 * 9 / 5 + 32)",
        "outputs": [{"type": "logs", "logs": "64.4\n"}]}
IMAGE = {"id": "ig_1", "type": "image_generation_call", "status": "completed",
         "result": "iVBORw0KGgo="}
MCP = {"id": "mcp_1", "type": "mcp_call", "server_label": "weather", "name": "forecast",
       "arguments": _j({"city": "Paris"}), "output": "18 C, cloudy", "error": None,
       "status": "completed"}


def mlflow_responses(r: Any, outputs: list[dict[str, Any]], tools: list[dict[str, Any]],
                     request: Any = Q) -> None:
    with r.span("Responses", {
        "mlflow.spanType": _j("CHAT_MODEL"),
        "mlflow.spanInputs": _j({"model": "gpt-4.1", "input": request, "tools": tools}),
        "mlflow.spanOutputs": _j({"id": "resp_1", "object": "response", "model": "gpt-4.1",
                                  "status": "completed", "output": outputs}),
        "mlflow.chat.tokenUsage": _j({"input_tokens": 300, "output_tokens": 40}),
    }):
        pass


@contextmanager
def mlflow_agent(r: Any, output: Any = None) -> Iterator[None]:
    attrs = {"mlflow.spanType": _j("AGENT"), "mlflow.spanInputs": _j({"input": Q})}
    if output is not None:
        attrs["mlflow.spanOutputs"] = _j(output)
    with r.span("Agent", attrs):
        yield


def test_responses_hosted_calls_are_calls_and_the_answer_stands(tmp_path: Path) -> None:
    """Every hosted item of one response is a call with the arguments the model gave and
    the result the item carries (its status when it carries none: an image's base64 is no
    result); the message beside them is the answer, and nothing is pending."""

    def record(r: Any) -> None:
        with mlflow_agent(r):
            mlflow_responses(r, [WEB_SEARCH, FILE_SEARCH, CODE, IMAGE, MCP,
                                 _message_item(ANSWER)],
                             [{"type": "web_search"}, {"type": "file_search"},
                              {"type": "code_interpreter"}, {"type": "image_generation"},
                              {"type": "mcp", "server_label": "weather"}])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q, ANSWER, "ok", None)
    assert calls_of(turn) == [
        ("web_search", {"type": "search", "query": "Paris weather today"}, SOURCES, "ok", 0),
        ("file_search", {"queries": ["paris climate"]}, FILE_SEARCH["results"], "ok", 0),
        ("code_interpreter", {"code": CODE["code"]}, CODE["outputs"], "ok", 0),
        ("image_generation", {}, "completed", "ok", 0),
        ("forecast", {"city": "Paris"}, "18 C, cloudy", "ok", 0),
    ]
    assert [c.call_id for c in turn.calls] == ["ws_1", "fs_1", "ci_1", "ig_1", "mcp_1"]
    assert turn.issues == ()
    # Hosted tools are declared by their type alone.
    assert [t.name for t in turn.tools] == [
        "web_search", "file_search", "code_interpreter", "image_generation", "mcp"]


def test_a_failed_hosted_call_is_the_calls_error(tmp_path: Path) -> None:
    """A search that failed and an MCP call whose server raised: calls with an error; the
    model still answered, so the turn is answered."""
    failed_search = {"id": "ws_2", "type": "web_search_call", "status": "failed",
                     "action": {"type": "search", "query": "Paris weather"}}
    failed_mcp = {**MCP, "id": "mcp_2", "output": None, "error": "upstream timeout",
                  "status": "failed"}
    sorry = "I could not look the weather up."

    def record(r: Any) -> None:
        with mlflow_agent(r):
            mlflow_responses(r, [failed_search, failed_mcp, _message_item(sorry)],
                             [{"type": "web_search"}])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q, sorry, "ok", None)
    assert [(c.name, c.status, c.error) for c in turn.calls] == [
        ("web_search", "error", "failed"), ("forecast", "error", "upstream timeout")]


def test_a_hosted_call_beside_a_function_call_leaves_the_function_pending(
        tmp_path: Path) -> None:
    """Only the calls the client must run are pending: a response with a web search (done)
    and a function call whose tool ran, and no later model call, is still waiting for the
    model call that reads the function's result."""
    fn = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "get_weather",
          "arguments": _j({"city": "Paris"}), "status": "completed"}

    def record(r: Any) -> None:
        with mlflow_agent(r):
            mlflow_responses(r, [WEB_SEARCH, fn], [{"type": "web_search"}])
            with r.span("get_weather", {"mlflow.spanType": _j("TOOL"),
                                        "mlflow.spanInputs": _j({"city": "Paris"}),
                                        "mlflow.spanOutputs": _j("18 C")}):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.final_answer, turn.status) == (None, "incomplete")
    assert [(c.name, c.status) for c in turn.calls] == [("web_search", "ok"),
                                                       ("get_weather", "ok")]


def test_a_hosted_call_replayed_in_the_next_input_is_counted_once(tmp_path: Path) -> None:
    """The next model call's input replays the hosted item (the Responses API takes it
    back as an input item): one call, answered in its own step."""
    fn = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "get_weather",
          "arguments": _j({"city": "Paris"}), "status": "completed"}
    second = [{"role": "user", "content": Q}, WEB_SEARCH, fn,
              {"type": "function_call_output", "call_id": "call_1", "output": "18 C"}]

    def record(r: Any) -> None:
        with mlflow_agent(r):
            mlflow_responses(r, [WEB_SEARCH, fn], [{"type": "web_search"}])
            with r.span("get_weather", {"mlflow.spanType": _j("TOOL"),
                                        "mlflow.spanInputs": _j({"city": "Paris"}),
                                        "mlflow.spanOutputs": _j("18 C")}):
                pass
            mlflow_responses(r, [_message_item(ANSWER)], [{"type": "web_search"}], second)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q, ANSWER, "ok", None)
    assert [(c.name, c.status, c.step) for c in turn.calls] == [
        ("web_search", "ok", 0), ("get_weather", "ok", 0)]
    assert turn.llm_calls == 2


# --- OTel GenAI parts --------------------------------------------------------------------


def otel_chat(r: Any, out: list[dict[str, Any]]) -> None:
    with r.span("chat gpt-4.1", {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4.1",
        "gen_ai.input.messages": _j([{"role": "user",
                                      "parts": [{"type": "text", "content": Q}]}]),
        "gen_ai.output.messages": _j(out),
        "gen_ai.usage.input_tokens": 200, "gen_ai.usage.output_tokens": 30,
    }):
        pass


@contextmanager
def otel_agent(r: Any, output: str | None = None) -> Iterator[None]:
    attrs: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent",
                             "gen_ai.agent.name": "helper"}
    if output is not None:
        attrs["gen_ai.output.messages"] = _j([{"role": "assistant", "parts": [
            {"type": "text", "content": output}], "finish_reason": "stop"}])
    with r.span("invoke_agent helper", attrs):
        yield


def test_otel_server_tool_call_parts(tmp_path: Path) -> None:
    """The semantic conventions' own parts for a server-run tool: the call's arguments in
    its provider object, the result in the response's."""
    out = [{"role": "assistant", "finish_reason": "stop", "parts": [
        {"type": "server_tool_call", "id": "stc_1", "name": "web_search",
         "server_tool_call": {"type": "web_search", "query": "Paris weather today"}},
        {"type": "server_tool_call_response", "id": "stc_1",
         "server_tool_call_response": {"type": "web_search", "response": {"sources": SOURCES}}},
        {"type": "text", "content": ANSWER}]}]

    def record(r: Any) -> None:
        with otel_agent(r):
            otel_chat(r, out)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q, ANSWER, "ok", None)
    assert calls_of(turn) == [
        ("web_search", {"query": "Paris weather today"}, {"sources": SOURCES}, "ok", 0)]


def test_otel_contrib_openai_agents_hosted_item_as_call_and_response(tmp_path: Path) -> None:
    """The contrib OpenAI Agents instrumentation: a hosted item is a `tool_call` part and a
    `tool_call_response` part of the item's id, in the one output message."""
    out = [{"role": "assistant", "parts": [
        {"type": "text", "content": ANSWER},
        {"type": "tool_call", "id": "ci_1", "name": "code_interpreter",
         "arguments": {"code": CODE["code"], "container_id": "cntr_1"}},
        {"type": "tool_call_response", "id": "ci_1", "name": "code_interpreter",
         "response": {"status": "completed", "outputs": CODE["outputs"]}}]}]

    def record(r: Any) -> None:
        with otel_agent(r):
            otel_chat(r, out)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q, ANSWER, "ok", None)
    assert calls_of(turn) == [
        ("code_interpreter", {"code": CODE["code"], "container_id": "cntr_1"},
         {"status": "completed", "outputs": CODE["outputs"]}, "ok", 0)]


# --- Anthropic server tools ----------------------------------------------------------------


def test_anthropic_server_tool_use_and_its_result_block(tmp_path: Path) -> None:
    """Anthropic's web search: a `server_tool_use` block, then its `web_search_tool_result`
    (an error result is the call's failure), then the text, all in the assistant's content."""
    results = [{"type": "web_search_result", "url": "https://weather.example/paris",
                "title": "Paris weather", "encrypted_content": "EqgfCioI", "page_age": None}]
    content = [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
         "input": {"query": "Paris weather today"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": results},
        {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search",
         "input": {"query": "Paris forecast"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2",
         "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
        {"type": "text", "text": ANSWER}]

    def record(r: Any) -> None:
        with otel_agent(r), r.span("chat claude-sonnet-4-5", {
                "gen_ai.operation.name": "chat", "gen_ai.system": "anthropic",
                "gen_ai.request.model": "claude-sonnet-4-5",
                "gen_ai.usage.input_tokens": 900, "gen_ai.usage.output_tokens": 60}):
            r.log("gen_ai.user.message", {"content": Q}, {"gen_ai.system": "anthropic"})
            r.log("gen_ai.choice", {"index": 0, "finish_reason": "end_turn",
                                    "message": {"role": "assistant", "content": content}},
                  {"gen_ai.system": "anthropic"})

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q, ANSWER, "ok", None)
    assert [(n, a, s) for n, a, _, s, _ in calls_of(turn)] == [
        ("web_search", {"query": "Paris weather today"}, "ok"),
        ("web_search", {"query": "Paris forecast"}, "error")]
    assert calls_of(turn)[0][2] == results


# --- a tool that ends the run ----------------------------------------------------------------


LOOKUP = "Paris: 18 C, cloudy (station LFPG)."


def _ask_tool(r: Any) -> None:
    otel_chat(r, [{"role": "assistant", "finish_reason": "tool_call", "parts": [
        {"type": "tool_call", "id": "c1", "name": "lookup_weather",
         "arguments": {"city": "Paris"}}]}])


def _run_tool(r: Any, result: str = LOOKUP) -> None:
    with r.span("execute_tool lookup_weather", {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_weather",
            "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": _j({"city": "Paris"}),
            "gen_ai.tool.call.result": result}):
        pass


def test_a_tool_whose_result_ends_the_run_is_the_answer(tmp_path: Path) -> None:
    """`stop_on_first_tool` / `return_direct`: the run's agent span ended OK with the tool's
    result as its output, and no model call follows: the result is the answer."""

    def record(r: Any) -> None:
        with otel_agent(r, output=LOOKUP):
            _ask_tool(r)
            _run_tool(r)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q, LOOKUP, "ok", None)
    assert calls_of(turn) == [("lookup_weather", {"city": "Paris"}, LOOKUP, "ok", 0)]
    assert turn.issues == ()


def test_a_structured_result_returned_directly_matches_as_json(tmp_path: Path) -> None:
    """The tool returned an object: its result and the agent's output are the same JSON,
    spelled differently."""
    result = {"city": "Paris", "temperature": 18}

    def record(r: Any) -> None:
        with otel_agent(r, output=json.dumps(result, indent=2)):
            _ask_tool(r)
            _run_tool(r, _j(result))

    [turn] = turns_of(record, tmp_path)
    assert turn.status == "ok"
    assert json.loads(turn.final_answer or "null") == result


def test_a_model_call_that_arrives_late_keeps_the_turn_incomplete(tmp_path: Path) -> None:
    """The tool ran and the run's agent span arrived with the answer of a model call not
    here yet (its output is no tool result), or with no output at all: the turn waits for
    that call."""
    for output in ("It is 18 C and cloudy in Paris, says the station.", None):

        def record(r: Any, output: str | None = output) -> None:
            with otel_agent(r, output=output):
                _ask_tool(r)
                _run_tool(r)

        [turn] = turns_of(record, tmp_path)
        assert (turn.final_answer, turn.status) == (None, "incomplete")
        assert calls_of(turn) == [("lookup_weather", {"city": "Paris"}, LOOKUP, "ok", 0)]


def test_a_failed_run_is_no_direct_return(tmp_path: Path) -> None:
    """The agent span failed after the tool ran: its output is no answer the user got."""

    def record(r: Any) -> None:
        with r.span("invoke_agent helper", {
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper",
                "gen_ai.output.messages": _j([{"role": "assistant", "parts": [
                    {"type": "text", "content": LOOKUP}]}])}, error="crashed"):
            _ask_tool(r)
            _run_tool(r)

    [turn] = turns_of(record, tmp_path)
    assert (turn.final_answer, turn.status, turn.error) == (None, "error", "crashed")

