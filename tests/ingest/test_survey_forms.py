"""Stacks surveyed for issue-free turns, recorded with the real OTel SDK (the convention
fixtures' `Recorder`) in the shapes their source emits, decoded and assembled.

- Langfuse Python SDK v3/v4 (`langfuse.observation.*`, langfuse-python 4.14.3:
  `langfuse/_client/attributes.py`, `langfuse/openai.py`, `langfuse/_client/observe.py`,
  `langfuse/langchain/CallbackHandler.py`): its OpenAI integration under `@observe`
  (chat completions and the Responses API) and its LangChain callback.
- Haystack's OpenTelemetry tracer with content tracing (deepset-ai/haystack
  `haystack/tracing/utils.py`, `haystack/components/agents/agent.py`,
  `haystack/dataclasses/chat_message.py`): the Agent loop's `haystack.agent.step.*` spans
  and Haystack 2's component spans.
- LangSmith's OTel export (langchain-ai/langsmith-sdk
  `python/langsmith/_internal/otel/_otel_exporter.py`): LangGraph runs as `langsmith.span.kind`
  spans with the run's inputs and outputs in `gen_ai.prompt` / `gen_ai.completion`.

Stacks whose exports already come out right are pinned too (Microsoft Agent Framework's
own telemetry, the OpenAI Agents SDK through OpenInference), and LiteLLM's OTel callback,
whose OpenAI keys beside the OTel parts (`tool_calls`, `tool_call_id`) are read with them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of
from turnscore.ingest.turn import Turn

REQUEST = "What's the weather in Paris?"
ANSWER = "It is 18 degrees C in Paris."
SYSTEM = "Be terse."
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OPENAI_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city.", "parameters": SCHEMA}}
ARGUMENTS = '{"city":"Paris"}'


def _j(value: Any) -> str:
    return json.dumps(value)




def _content_free(turn: Turn, *texts: str) -> None:
    for text in (REQUEST, ANSWER, *texts):
        assert text not in turn.attributes, text


# --- Langfuse ---------------------------------------------------------------------------


def _lf(observation: str, inputs: Any = None, output: Any = None, **extra: Any) -> dict[str, Any]:
    """A Langfuse observation: input and output JSON text, or the string itself
    (`_serialize` in `langfuse/_client/attributes.py`)."""
    attributes: dict[str, Any] = {"langfuse.observation.type": observation,
                                  "langfuse.environment": "default"}
    for key, value in (("input", inputs), ("output", output)):
        if value is not None:
            text = value if isinstance(value, str) else _j(value)
            attributes[f"langfuse.observation.{key}"] = text
    attributes.update(extra)
    return attributes


def test_langfuse_openai_integration_under_observe(tmp_path: Path) -> None:
    """`@observe(as_type="agent")` > the OpenAI integration's generations (tools given:
    input `{tools, messages}`) and an `@observe(as_type="tool")` function: one turn with
    the declared tool, the call joined to its execution, usage summed over generations."""
    call = {"id": "call_1", "function": {"arguments": _j({"city": "Paris"}),
                                         "name": "get_weather"}, "type": "function"}
    result = {"temperature": 18, "conditions": "cloudy"}
    first = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": REQUEST}]
    second = [*first, {"role": "assistant", "content": None, "tool_calls": [call]},
              {"role": "tool", "tool_call_id": "call_1", "content": _j(result)}]
    session = {"session.id": "lf-1", "user.id": "u-7"}

    def generation(messages: list[Any], output: Any, tokens: tuple[int, int]) -> dict[str, Any]:
        usage = {"prompt_tokens": tokens[0], "completion_tokens": tokens[1],
                 "total_tokens": sum(tokens)}
        return _lf("generation", {"tools": [OPENAI_TOOL], "messages": messages}, output,
                   **session, **{"langfuse.observation.model.name": "gpt-4o-mini",
                                 "langfuse.observation.usage_details": _j(usage)})

    def record(r: Any) -> None:
        with r.span("weather_agent", _lf("agent", {"args": [REQUEST], "kwargs": {}}, ANSWER,
                                         **session)):
            with r.span("OpenAI-generation", generation(
                    first, {"role": "assistant", "tool_calls": [call], "content": None}, (50, 10))):
                pass
            with r.span("get_weather", _lf("tool", {"args": [], "kwargs": {"city": "Paris"}},
                                           result, **session)):
                pass
            with r.span("OpenAI-generation", generation(
                    second, {"role": "assistant", "content": ANSWER}, (80, 12))):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.conversation_id, turn.model, turn.system_instructions) == (
        "lf-1", "gpt-4o-mini", SYSTEM)
    assert [(t.name, t.description) for t in turn.tools] == [("get_weather", "Weather for a city.")]
    assert json.loads(turn.tools[0].parameters or "") == SCHEMA
    assert [(c.name, c.call_id, c.arguments, c.status) for c in turn.calls] == [
        ("get_weather", "call_1", ARGUMENTS, "ok")]
    assert json.loads(turn.calls[0].result or "") == result
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 22)
    assert turn.issues == ()
    assert "langfuse.observation.input" not in json.loads(turn.attributes)
    _content_free(turn, "cloudy")


def test_langfuse_langchain_callback(tmp_path: Path) -> None:
    """The LangChain callback appends the tool definitions to a generation's input as
    `{"role": "tool", "content": <definition>}`: definitions, not results. Its tool calls
    are LangChain's `{name, args, id}`; a tool observation's output is the ToolMessage."""
    lc_call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_lc",
               "type": "tool_call"}
    tool_message = {"content": "18C, cloudy", "additional_kwargs": {}, "type": "tool",
                    "name": "get_weather", "tool_call_id": "call_lc", "status": "success"}
    asked = {"role": "assistant", "content": "", "tool_calls": [lc_call]}
    definition = {"role": "tool", "content": OPENAI_TOOL}

    def record(r: Any) -> None:
        with r.span("LangGraph", _lf("chain", {"messages": [REQUEST]}, {"messages": []},
                                     **{"session.id": "lc-1"})):
            with r.span("ChatOpenAI", _lf("generation", [
                {"role": "user", "content": REQUEST}, definition,
            ], asked, **{"langfuse.observation.model.name": "gpt-4o"})):
                pass
            with r.span("get_weather", _lf("tool", {"city": "Paris"}, tool_message)):
                pass
            with r.span("ChatOpenAI", _lf("generation", [
                {"role": "user", "content": REQUEST}, asked,
                {"role": "tool", "content": "18C, cloudy", "tool_call_id": "call_lc"}, definition,
            ], {"role": "assistant", "content": ANSWER},
                    **{"langfuse.observation.model.name": "gpt-4o"})):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.conversation_id) == (REQUEST, ANSWER, "lc-1")
    assert [t.name for t in turn.tools] == ["get_weather"]
    assert [(c.name, c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", "call_lc", ARGUMENTS, "18C, cloudy", "ok")]
    assert turn.llm_calls == 2 and turn.issues == ()
    _content_free(turn, "cloudy")


def test_langfuse_failed_langchain_tool_is_the_call_s_error(tmp_path: Path) -> None:
    """A ToolMessage with status `error`: the callback sets level ERROR with its text."""
    failed = {"content": "Error: city not found", "type": "tool", "name": "get_weather",
              "tool_call_id": "call_x", "status": "error"}
    asked = {"role": "assistant", "content": "", "tool_calls": [
        {"name": "get_weather", "args": {"city": "Atlantis"}, "id": "call_x"}]}

    def record(r: Any) -> None:
        with r.span("agent", _lf("chain", {"messages": [REQUEST]}, **{"session.id": "lc-2"})):
            with r.span("ChatOpenAI", _lf("generation", [{"role": "user", "content": REQUEST}],
                                          asked)):
                pass
            with r.span("get_weather", _lf("tool", {"city": "Atlantis"}, failed, **{
                "langfuse.observation.level": "ERROR",
                "langfuse.observation.status_message": "Error: city not found"})):
                pass

    [turn] = turns_of(record, tmp_path)
    [call] = turn.calls
    assert (call.call_id, call.status) == ("call_x", "error")
    assert call.error and "city not found" in call.error
    assert "city not found" not in turn.attributes


def test_langfuse_openai_responses_api(tmp_path: Path) -> None:
    """The Responses API: input `{input: [items], tools}` (instructions folded in as a
    system message), output one item (a `function_call`, then a `message`)."""
    function_call = {"type": "function_call", "call_id": "fc_1", "name": "get_weather",
                     "arguments": _j({"city": "Paris"})}
    tools = [{"type": "function", "name": "get_weather", "description": "Weather.",
              "parameters": SCHEMA}]
    head = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": REQUEST}]

    def record(r: Any) -> None:
        with r.span("OpenAI-generation", _lf("generation", {"input": head, "tools": tools},
                                             function_call, **{"session.id": "r-1"})):
            pass
        with r.span("OpenAI-generation", _lf("generation", {"input": [
            *head, function_call,
            {"type": "function_call_output", "call_id": "fc_1", "output": "18C"},
        ], "tools": tools}, {"type": "message", "role": "assistant", "status": "completed",
                             "content": [{"type": "output_text", "text": ANSWER}]},
                **{"session.id": "r-1"})):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.system_instructions) == (
        REQUEST, ANSWER, SYSTEM)
    assert [t.name for t in turn.tools] == ["get_weather"]
    assert [(c.call_id, c.arguments, c.result) for c in turn.calls] == [
        ("fc_1", ARGUMENTS, "18C")]
    assert turn.llm_calls == 2


# --- Haystack ---------------------------------------------------------------------------

HS_TOOL = {"type": "haystack.tools.tool.Tool", "data": {
    "name": "weather_tool", "description": "Weather for a location.",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    "function": "app.weather", "outputs_to_string": None, "inputs_from_state": None}}
HS_CALL = {"tool_name": "weather_tool", "arguments": {"location": "Paris"}, "id": "call_h"}
HS_RESULT = {"weather": "cloudy", "temperature": 18}


def _hs(role: str, *content: dict[str, Any], **meta: Any) -> dict[str, Any]:
    """`ChatMessage.to_dict()`."""
    return {"role": role, "meta": meta, "name": None, "content": list(content)}


HS_SYSTEM = _hs("system", {"text": SYSTEM})
HS_USER = _hs("user", {"text": REQUEST})
HS_ASKED = _hs("assistant", {"tool_call": HS_CALL}, model="gpt-4o-mini",
               finish_reason="tool_calls", usage={"prompt_tokens": 40, "completion_tokens": 9})
HS_TOOL_MESSAGE = _hs("tool", {"tool_call_result": {
    "result": _j(HS_RESULT), "origin": HS_CALL, "error": False}})
HS_FINAL = _hs("assistant", {"text": ANSWER}, model="gpt-4o-mini", finish_reason="stop",
               usage={"prompt_tokens": 70, "completion_tokens": 12})
HS_FIRST = {"messages": [HS_SYSTEM, HS_USER], "tools": [HS_TOOL]}
HS_SECOND = {"messages": [HS_SYSTEM, HS_USER, HS_ASKED, HS_TOOL_MESSAGE], "tools": [HS_TOOL]}
HS_AGENT = {"haystack.agent.max_steps": 100, "haystack.agent.tools": _j([HS_TOOL]),
            "haystack.agent.exit_conditions": _j(["text"])}


def _assert_haystack_turn(turn: Turn) -> None:
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.system_instructions, turn.model) == (SYSTEM, "gpt-4o-mini")
    assert [(t.name, t.description) for t in turn.tools] == [
        ("weather_tool", "Weather for a location.")]
    [call] = turn.calls
    assert (call.name, call.call_id, call.arguments, call.status) == (
        "weather_tool", "call_h", '{"location":"Paris"}', "ok")
    assert json.loads(call.result or "") == HS_RESULT
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 110, 21)
    assert turn.issues == ()
    _content_free(turn, "cloudy")


def test_haystack_agent_loop(tmp_path: Path) -> None:
    """`haystack.agent.run` > `haystack.agent.step` > `.step.llm` (generator input and
    output as content tags) and one `.step.tool` per call (its arguments and result)."""

    def record(r: Any) -> None:
        with r.span("haystack.agent.run", {**HS_AGENT, "haystack.agent.input": _j(
                {"messages": [HS_USER]}), "haystack.agent.output": _j({"last_message": HS_FINAL})}):
            with r.span("haystack.agent.step", {"haystack.agent.step": 0}):
                with r.span("haystack.agent.step.llm", {
                    "haystack.agent.step.llm.input": _j(HS_FIRST),
                    "haystack.agent.step.llm.output": _j({"replies": [HS_ASKED]}),
                }):
                    pass
                with r.span("haystack.agent.step.tool", {
                    "haystack.tool.name": "weather_tool",
                    "haystack.tool.description": "Weather for a location.",
                    "haystack.agent.step.tool.input": _j({"location": "Paris"}),
                    "haystack.agent.step.tool.output": _j(HS_RESULT),
                }):
                    pass
            with r.span("haystack.agent.step", {"haystack.agent.step": 1}), r.span(
                "haystack.agent.step.llm", {
                    "haystack.agent.step.llm.input": _j(HS_SECOND),
                    "haystack.agent.step.llm.output": _j({"replies": [HS_FINAL]}),
                }):
                pass

    [turn] = turns_of(record, tmp_path)
    _assert_haystack_turn(turn)


def test_haystack_pipeline_components(tmp_path: Path) -> None:
    """Haystack 2: the chat generator and the ToolInvoker as `haystack.component.run`
    spans; the invoker's grouped results reach the next generator input, where they count."""

    def component(name: str, kind: str, inputs: Any, output: Any) -> dict[str, Any]:
        return {"haystack.component.name": name, "haystack.component.type": kind,
                "haystack.component.visits": 1, "haystack.component.input": _j(inputs),
                "haystack.component.output": _j(output)}

    def record(r: Any) -> None:
        with r.span("haystack.pipeline.run", {
            "haystack.pipeline.input_data": _j({"agent": {"messages": [HS_USER]}}),
            "haystack.pipeline.max_runs_per_component": 100,
        }), r.span("haystack.agent.run", HS_AGENT):
            with r.span("haystack.component.run", component(
                    "chat_generator", "OpenAIChatGenerator", HS_FIRST, {"replies": [HS_ASKED]})):
                pass
            with r.span("haystack.component.run", component(
                    "tool_invoker", "ToolInvoker", {"messages": [HS_ASKED], "state": {}},
                    {"tool_messages": [HS_TOOL_MESSAGE], "state": {}})):
                pass
            with r.span("haystack.component.run", component(
                    "chat_generator", "OpenAIChatGenerator", HS_SECOND, {"replies": [HS_FINAL]})):
                pass

    [turn] = turns_of(record, tmp_path)
    _assert_haystack_turn(turn)


# --- LangSmith --------------------------------------------------------------------------


def _lc(cls: str, **kwargs: Any) -> dict[str, Any]:
    """A LangChain message as `dumpd` serializes it."""
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls],
            "kwargs": kwargs}


LS_OPERATIONS = {"llm": "chat", "prompt": "chat", "tool": "execute_tool", "chain": "chain"}


def _ls(run_type: str, name: str, inputs: Any, outputs: Any, **extra: Any) -> dict[str, Any]:
    return {"langsmith.span.kind": run_type, "langsmith.trace.name": name,
            "langsmith.trace.session_id": "project-uuid", "langsmith.metadata.thread_id": "th-1",
            "gen_ai.operation.name": LS_OPERATIONS[run_type], "gen_ai.system": "langchain",
            "gen_ai.prompt": _j(inputs), "gen_ai.completion": _j(outputs), **extra}


def test_langsmith_otel_langgraph_run(tmp_path: Path) -> None:
    """Chat model runs (`{messages: [[...]]}` in, `{generations: [[...]]}` out), a tool run
    (`{input: <repr of the arguments>}` in, `{output: <ToolMessage>}` out) and a prompt run,
    which LangSmith maps to `chat` too but is no model call. The session is the thread,
    not LangSmith's tracing project."""
    human = _lc("HumanMessage", content=REQUEST, type="human")
    system = _lc("SystemMessage", content=SYSTEM, type="system")
    asked = _lc("AIMessage", content="", type="ai", tool_calls=[
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_ls", "type": "tool_call"}])
    result = _lc("ToolMessage", content="18C, cloudy", type="tool", tool_call_id="call_ls",
                 name="get_weather", status="success")
    final = _lc("AIMessage", content=ANSWER, type="ai")

    def generations(message: dict[str, Any], finish: str) -> dict[str, Any]:
        return {"generations": [[{"text": message["kwargs"]["content"], "message": message,
                                  "generation_info": {"finish_reason": finish},
                                  "type": "ChatGeneration"}]], "type": "LLMResult"}

    def model(prompt: list[Any], output: dict[str, Any], tokens: tuple[int, int]) -> Any:
        return _ls("llm", "ChatOpenAI", {"messages": [prompt]}, output, **{
            "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": tokens[0],
            "gen_ai.usage.output_tokens": tokens[1]})

    def record(r: Any) -> None:
        with r.span("LangGraph", _ls("chain", "LangGraph", {"messages": [human]},
                                     {"messages": [human, asked, result, final]})):
            with r.span("agent", _ls("chain", "agent", {"messages": [human]},
                                     {"messages": [asked]})):
                with r.span("ChatPromptTemplate", _ls("prompt", "ChatPromptTemplate",
                                                      {"question": REQUEST}, {"text": SYSTEM})):
                    pass
                with r.span("ChatOpenAI", model([system, human],
                                                generations(asked, "tool_calls"), (50, 10))):
                    pass
            with r.span("tools", _ls("chain", "tools", {"messages": [human, asked]},
                                     {"messages": [result]})), r.span(
                    "get_weather", _ls("tool", "get_weather", {"input": "{'city': 'Paris'}"},
                                       {"output": result})):
                pass
            with r.span("agent", _ls("chain", "agent", {"messages": [human, asked, result]},
                                     {"messages": [final]})), r.span(
                    "ChatOpenAI", model([system, human, asked, result],
                                        generations(final, "stop"), (80, 12))):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.conversation_id, turn.system_instructions) == ("th-1", SYSTEM)
    assert [(c.name, c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", "call_ls", ARGUMENTS, "18C, cloudy", "ok")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 22)
    assert turn.issues == ()
    _content_free(turn, "cloudy")


# --- already right: pinned ---------------------------------------------------------------


def test_microsoft_agent_framework_telemetry(tmp_path: Path) -> None:
    """microsoft/agent-framework `python/packages/core/agent_framework/observability.py`:
    `invoke_agent` > `chat` (OTel parts, `tool_call_response` carrying `response`) and
    `execute_tool` with the call's id, arguments and result."""
    call = {"type": "tool_call", "id": "call_m", "name": "get_weather",
            "arguments": {"city": "Paris"}}
    first = [{"role": "user", "parts": [{"type": "text", "content": REQUEST}]}]
    second = [*first, {"role": "assistant", "parts": [call]},
              {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_m",
                                          "response": "18C, cloudy"}]}]
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.system_instructions": _j([{"type": "text", "content": SYSTEM}]),
            "gen_ai.tool.definitions": _j([{"type": "function", "name": "get_weather",
                                            "description": "Weather for a city.",
                                            "parameters": SCHEMA}])}

    def record(r: Any) -> None:
        with r.span("invoke_agent weather", {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather",
            "gen_ai.agent.id": "a-1", "gen_ai.conversation.id": "maf-1",
        }):
            with r.span("chat gpt-4o-mini", {**chat, "gen_ai.input.messages": _j(first),
                                             "gen_ai.output.messages": _j([{
                                                 "role": "assistant", "parts": [call],
                                                 "finish_reason": "tool_call"}])}):
                pass
            with r.span("execute_tool get_weather", {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call_m", "gen_ai.tool.type": "function",
                "gen_ai.tool.call.arguments": _j({"city": "Paris"}),
                "gen_ai.tool.call.result": "18C, cloudy",
            }):
                pass
            with r.span("chat gpt-4o-mini", {**chat, "gen_ai.input.messages": _j(second),
                                             "gen_ai.output.messages": _j([{
                                                 "role": "assistant", "parts": [
                                                     {"type": "text", "content": ANSWER}],
                                                 "finish_reason": "stop"}])}):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.conversation_id) == (REQUEST, ANSWER, "maf-1")
    assert (turn.agent_name, turn.system_instructions) == ("weather", SYSTEM)
    assert [t.name for t in turn.tools] == ["get_weather"]
    assert [(c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("call_m", ARGUMENTS, "18C, cloudy", "ok")]
    assert turn.llm_calls == 2 and turn.issues == ()
    _content_free(turn, "cloudy")


def test_openai_agents_sdk_through_openinference(tmp_path: Path) -> None:
    """openinference-instrumentation-openai-agents: AGENT > LLM (Responses API, flattened
    messages) and a TOOL span without call id (arguments in `input.value`)."""

    def oi_llm(messages: list[dict[str, Any]], output: dict[str, Any]) -> dict[str, Any]:
        attrs: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o",
                                 "llm.tools.0.tool.json_schema": _j(OPENAI_TOOL)}
        for i, message in enumerate(messages):
            attrs.update({f"llm.input_messages.{i}.message.{k}": v for k, v in message.items()})
        attrs.update({f"llm.output_messages.0.message.{k}": v for k, v in output.items()})
        return attrs

    asked = {"role": "assistant", "tool_calls.0.tool_call.id": "call_oa",
             "tool_calls.0.tool_call.function.name": "get_weather",
             "tool_calls.0.tool_call.function.arguments": _j({"city": "Paris"})}
    head = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": REQUEST}]

    def record(r: Any) -> None:
        with r.span("Weather agent", {"openinference.span.kind": "AGENT",
                                      "graph.node.id": "Weather agent"}):
            with r.span("response", oi_llm(head, asked)):
                pass
            with r.span("get_weather", {"openinference.span.kind": "TOOL",
                                        "tool.name": "get_weather",
                                        "input.value": _j({"city": "Paris"}),
                                        "output.value": "18C, cloudy"}):
                pass
            with r.span("response", oi_llm(
                    [*head, asked, {"role": "tool", "tool_call_id": "call_oa",
                                    "content": "18C, cloudy"}],
                    {"role": "assistant", "content": ANSWER})):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.system_instructions) == (
        REQUEST, ANSWER, SYSTEM)
    assert [(c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("call_oa", ARGUMENTS, "18C, cloudy", "ok")]
    assert turn.llm_calls == 2 and turn.issues == ()


# --- known gaps -------------------------------------------------------------------------


def test_litellm_otel_callback_calls_beside_parts(tmp_path: Path) -> None:
    """BerriAI/litellm `litellm/integrations/opentelemetry.py`
    (`_transform_messages_to_otel_semantic_conventions`): an assistant message
    `{role, parts: [], tool_calls: [...]}` and a tool message `{role: tool, parts: [text],
    tool_call_id}`."""
    call = {"id": "call_l", "type": "function",
            "function": {"name": "get_weather", "arguments": _j({"city": "Paris"})}}
    first = [{"role": "user", "parts": [{"type": "text", "content": REQUEST}]}]
    second = [*first, {"role": "assistant", "parts": [], "tool_calls": [call]},
              {"role": "tool", "parts": [{"type": "text", "content": "18C, cloudy"}],
               "tool_call_id": "call_l"}]
    common = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
              "llm.request.type": "acompletion", "litellm.call_id": "l-1",
              "gen_ai.request.model": "gpt-4o-mini",
              "llm.request.functions.0.name": "get_weather",
              "llm.request.functions.0.parameters": _j(SCHEMA)}

    def record(r: Any) -> None:
        with r.span("litellm_request", {**common, "gen_ai.input.messages": _j(first),
                                        "gen_ai.output.messages": _j([{
                                            "role": "assistant", "parts": [],
                                            "tool_calls": [call],
                                            "finish_reason": "tool_calls"}]),
                                        "gen_ai.completion.0.function_call.name": "get_weather",
                                        "gen_ai.completion.0.function_call.arguments":
                                            _j({"city": "Paris"})}):
            pass
        with r.span("litellm_request", {**common, "gen_ai.input.messages": _j(second),
                                        "gen_ai.output.messages": _j([{
                                            "role": "assistant",
                                            "parts": [{"type": "text", "content": ANSWER}],
                                            "finish_reason": "stop"}])}):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)
    assert [(c.call_id, c.arguments, c.result) for c in turn.calls] == [
        ("call_l", ARGUMENTS, "18C, cloudy")]
