"""Second survey of stacks whose exports could come out empty, doubled or split, recorded
with the real OTel SDK (the convention fixtures' `Recorder`) in the shapes their source
emits (several recorded from a real run of the library, as noted), decoded and assembled.

Fixed (a convention of their own):
- Mastra's 0.x OTel exporter (mastra-ai/mastra `observability/otel-exporter/src/
  span-converter.ts`): tool calls in `gen_ai.tool.input` / `output` were lost
  (`conventions/mastra.py`); the 1.x exporter (`gen-ai-semantics.ts`) is pinned.
- LlamaIndex's own integration (llama-index-observability-otel 0.7, recorded from a
  FunctionAgent run): content only in LLMChat span events, no turn at all before
  (`conventions/llamaindex.py`); streamed calls lose their answer at the source, but for
  the run's StopEvent summary (whole only when short), and tools and tool spans are read.
- DSPy (dspy 3.4.1 + openinference-instrumentation-dspy 0.1.48, recorded from a ReAct run;
  MLflow's autolog from its callback source): ChatAdapter templates split a run into one
  turn per step with the template as request (`conventions/dspy.py`).

Already right, pinned: Pydantic AI's own instrumentation (recorded, `version=6`), Vercel AI
SDK 5/6 (`ai.*`) and 7 (`@ai-sdk/otel`'s GenAI spans), Google GenAI SDK's instrumentation
(recorded, automatic function calling), AgentOps (decorators and its OpenAI instrumentor),
OpenLLMetry-JS 0.27 (the current GenAI keys, as the Python SDK writes them since 0.55).

opentelemetry-instrumentation-botocore's Bedrock Converse events (what ADOT runs; recorded
from stubbed calls) list each call twice in an assistant message (a `toolUse` block and
`tool_calls`): one call, one turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of
from turnscore.ingest.turn import Turn

REQUEST = "What's the weather in Paris?"
ANSWER = "It is 18 degrees C in Paris."
SYSTEM = "Be terse."
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ARGUMENTS = '{"city":"Paris"}'


def _j(value: Any) -> str:
    return json.dumps(value)




def _content_free(turn: Turn, *texts: str) -> None:
    for text in (REQUEST, ANSWER, *texts):
        assert text not in turn.attributes, text


# --- Mastra -----------------------------------------------------------------------------


def test_mastra_0x_exporter_tool_span_is_the_call(tmp_path: Path) -> None:
    """The 0.x exporter: the model generation spans the whole step loop (its completion
    is the final `{text}`), so the `tool.execute` span, arguments and result in
    `gen_ai.tool.input` / `output`, is the only record of the call."""
    user = {"role": "user", "content": [{"type": "text", "text": REQUEST}]}
    mastra_messages = {"messages": [{"role": "system", "content": SYSTEM}, user]}
    weather = _j({"temperature": 18, "conditions": "cloudy"})
    agent = {
        "gen_ai.operation.name": "agent.run", "span.kind": "server",
        "mastra.span.type": "agent_run", "agent.id": "weatherAgent", "agent.max_steps": 5,
        "agent.available_tools": _j(["weatherTool"]),
        "input": _j([{"role": "user", "content": REQUEST}]), "output": _j({"text": ANSWER}),
    }
    generation = {
        "gen_ai.operation.name": "chat", "mastra.span.type": "llm_generation",
        "input": _j(mastra_messages), "gen_ai.prompt": _j(mastra_messages),
        "output": _j({"text": ANSWER, "toolCalls": []}),
        "gen_ai.completion": _j({"text": ANSWER, "toolCalls": []}),
        "gen_ai.request.model": "gpt-4o-mini", "gen_ai.system": "openai.chat",
        "gen_ai.usage.input_tokens": 130, "gen_ai.usage.output_tokens": 22,
    }
    tool = {
        "gen_ai.operation.name": "tool.execute", "mastra.span.type": "tool_call",
        "input": _j({"city": "Paris"}), "gen_ai.tool.input": _j({"city": "Paris"}),
        "output": weather, "gen_ai.tool.output": weather,
        "gen_ai.tool.name": "weatherTool", "gen_ai.tool.success": True,
    }

    def record(r: Any) -> None:
        with (r.span("agent.weatherAgent", agent), r.span("chat gpt-4o-mini", generation),
              r.span("tool.execute weatherTool", tool)):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.system_instructions, turn.model) == (SYSTEM, "gpt-4o-mini")
    assert [t.name for t in turn.tools] == ["weatherTool"]
    [call] = turn.calls
    assert (call.name, call.arguments, call.status) == ("weatherTool", ARGUMENTS, "ok")
    assert json.loads(call.result or "") == {"temperature": 18, "conditions": "cloudy"}
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (1, 130, 22)
    assert turn.issues == ()
    assert "gen_ai.tool.output" not in json.loads(turn.attributes)
    _content_free(turn, "cloudy")


def test_mastra_0x_failed_tool(tmp_path: Path) -> None:
    """`gen_ai.tool.success` false with `error.message`: the call failed."""
    agent = {"mastra.span.type": "agent_run", "gen_ai.operation.name": "agent.run",
             "agent.id": "weatherAgent"}
    generation = {
        "gen_ai.operation.name": "chat", "mastra.span.type": "llm_generation",
        "gen_ai.prompt": _j({"messages": [{"role": "user", "content": REQUEST}]}),
        "gen_ai.completion": _j({"text": "I could not find that city."}),
    }
    tool = {
        "gen_ai.operation.name": "tool.execute", "mastra.span.type": "tool_call",
        "gen_ai.tool.input": _j({"city": "Atlantis"}), "gen_ai.tool.name": "weatherTool",
        "gen_ai.tool.success": False, "error.message": "city not found",
    }

    def record(r: Any) -> None:
        with (r.span("agent.weatherAgent", agent), r.span("chat gpt-4o-mini", generation),
              r.span("tool.execute weatherTool", tool, error="city not found")):
            pass

    [turn] = turns_of(record, tmp_path)
    [call] = turn.calls
    assert (call.name, call.status) == ("weatherTool", "error")
    assert call.error and "city not found" in call.error


def test_mastra_1x_exporter(tmp_path: Path) -> None:
    """The 1.x exporter: standard `invoke_agent` > `chat` (the generation) > step spans
    (`agent_step`, their own input and output under `mastra.model_step.*`) >
    `execute_tool` with a call id; the agent's tools a list of names."""
    agent = {
        "gen_ai.operation.name": "invoke_agent", "mastra.span.type": "agent_run",
        "mastra.agent_run.input": _j([{"role": "user", "content": REQUEST}]),
        "mastra.agent_run.output": _j({"text": ANSWER, "files": []}),
        "gen_ai.agent.id": "weatherAgent", "gen_ai.agent.name": "Weather Agent",
        "gen_ai.conversation.id": "thread-1", "mastra.agent_run.max_steps": 5,
        "gen_ai.tool.definitions": _j(["weatherTool"]), "gen_ai.system_instructions": SYSTEM,
    }
    generation = {
        "gen_ai.operation.name": "chat", "mastra.span.type": "model_generation",
        "gen_ai.input.messages": _j([
            {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
            {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}]),
        "gen_ai.output.messages": _j([
            {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}]),
        "gen_ai.request.model": "gpt-4o-mini", "gen_ai.provider.name": "openai",
        "gen_ai.usage.input_tokens": 130, "gen_ai.usage.output_tokens": 22,
        "gen_ai.agent.name": "Weather Agent",
    }
    step = {
        "gen_ai.operation.name": "agent_step", "mastra.span.type": "model_step",
        "mastra.model_step.output": _j({"text": "", "toolCalls": [
            {"toolCallId": "call_1", "toolName": "weatherTool", "args": {"city": "Paris"}}]}),
    }
    tool = {
        "gen_ai.operation.name": "execute_tool", "mastra.span.type": "tool_call",
        "gen_ai.tool.call.arguments": _j({"city": "Paris"}),
        "gen_ai.tool.call.result": _j({"temperature": 18}),
        "gen_ai.tool.name": "weatherTool", "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.description": "Get weather",
    }

    def record(r: Any) -> None:
        with (r.span("invoke_agent Weather Agent", agent), r.span("chat gpt-4o-mini", generation),
              r.span("step: 0", step), r.span("execute_tool weatherTool", tool)):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.conversation_id, turn.system_instructions) == ("thread-1", SYSTEM)
    assert [t.name for t in turn.tools] == ["weatherTool"]
    assert [(c.name, c.call_id, c.arguments, c.status) for c in turn.calls] == [
        ("weatherTool", "call_1", ARGUMENTS, "ok")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (1, 130, 22)
    assert turn.issues == ()
    assert not any(k.startswith("mastra.model_step.") for k in json.loads(turn.attributes))
    _content_free(turn)


# --- Pydantic AI ------------------------------------------------------------------------


def test_pydantic_ai_agent_and_chat_spans_are_one_turn(tmp_path: Path) -> None:
    """A real `version=6` run: the agent span's `pydantic_ai.all_messages` and the chat
    spans' `gen_ai.input.messages` say the same conversation; one turn, two model calls,
    usage from the chat spans (the agent's `gen_ai.aggregated_usage.*` not added)."""
    user = {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}
    asked = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1",
                                             "name": "get_weather",
                                             "arguments": {"city": "Paris"}}]}
    answered = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                           "name": "get_weather", "result": "18C, cloudy"}]}
    final = {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}
    common = {"gen_ai.agent.name": "weather_agent", "gen_ai.conversation.id": "conv-1",
              "gen_ai.agent.call.id": "call-run-1"}
    definitions = _j([{"type": "function", "name": "get_weather",
                       "description": "Weather for a city.", "parameters": SCHEMA}])
    instructions = _j([{"type": "text", "content": SYSTEM}])

    def chat(messages: list[Any], out: dict[str, Any], tokens: tuple[int, int]) -> dict[str, Any]:
        return {**common, "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o",
                "gen_ai.tool.definitions": definitions, "gen_ai.system_instructions": instructions,
                "gen_ai.input.messages": _j(messages), "gen_ai.output.messages": _j([out]),
                "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1]}

    def record(r: Any) -> None:
        with r.span("invoke_agent weather_agent", {
            **common, "gen_ai.operation.name": "invoke_agent", "model_name": "gpt-4o",
            "agent_name": "weather_agent", "logfire.msg": "weather_agent run",
            "final_result": ANSWER, "gen_ai.aggregated_usage.input_tokens": 112,
            "gen_ai.aggregated_usage.output_tokens": 18, "gen_ai.system_instructions": instructions,
            "pydantic_ai.all_messages": _j([user, asked, answered, final]),
        }):
            with r.span("chat gpt-4o", chat([user], asked, (55, 5))):
                pass
            with r.span("execute_tool get_weather", {
                **common, "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": ARGUMENTS, "gen_ai.tool.call.result": "18C, cloudy",
                "logfire.msg": "running tool: get_weather",
            }):
                pass
            with r.span("chat gpt-4o", chat([user, asked, answered], final, (57, 13))):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.conversation_id, turn.system_instructions) == ("conv-1", SYSTEM)
    assert [(t.name, t.description) for t in turn.tools] == [("get_weather", "Weather for a city.")]
    assert [(c.name, c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", "call_1", ARGUMENTS, "18C, cloudy", "ok")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 112, 18)
    assert turn.issues == ()
    _content_free(turn, "18C, cloudy")


# --- Vercel AI SDK 5/6 ------------------------------------------------------------------


def test_vercel_ai_sdk_5_and_6(tmp_path: Path) -> None:
    """v5/v6 keys: tools with `inputSchema`, `tool-call` parts with `input`, `tool-result`
    parts with `output: {type: "json", value}`, `ai.usage.inputTokens`, and the tool span's
    `ai.toolCall.args` / `result` (v5.0 kept v4's names)."""
    tools = [_j({"type": "function", "name": "weather", "description": "Weather for a city.",
                 "inputSchema": SCHEMA})]
    system = {"role": "system", "content": SYSTEM}
    user = {"role": "user", "content": [{"type": "text", "text": REQUEST}]}
    asked = {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "call_1",
                                               "toolName": "weather", "input": {"city": "Paris"}}]}
    output = {"type": "json", "value": {"temperature": 18}}
    result = {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_1",
                                           "toolName": "weather", "output": output}]}

    def base(operation: str) -> dict[str, Any]:
        return {"operation.name": f"{operation} agent", "ai.operationId": operation,
                "ai.telemetry.functionId": "agent", "ai.model.id": "gpt-4o-mini",
                "ai.model.provider": "openai.responses", "ai.telemetry.metadata.sessionId": "v-1"}

    def record(r: Any) -> None:
        with r.span("ai.generateText", {
            **base("ai.generateText"), "ai.prompt": _j({"system": SYSTEM, "prompt": REQUEST}),
            "ai.response.text": ANSWER, "ai.response.finishReason": "stop",
            "ai.usage.inputTokens": 130, "ai.usage.outputTokens": 22,
        }):
            with r.span("ai.generateText.doGenerate", {
                **base("ai.generateText.doGenerate"), "ai.prompt.messages": _j([system, user]),
                "ai.prompt.tools": tools, "ai.response.finishReason": "tool-calls",
                "ai.response.toolCalls": _j([{"toolCallId": "call_1", "toolName": "weather",
                                              "input": ARGUMENTS}]),
                "ai.usage.inputTokens": 50, "ai.usage.outputTokens": 10,
                "gen_ai.system": "openai.responses", "gen_ai.request.model": "gpt-4o-mini",
            }):
                pass
            with r.span("ai.toolCall", {
                **base("ai.toolCall"), "ai.toolCall.name": "weather", "ai.toolCall.id": "call_1",
                "ai.toolCall.args": ARGUMENTS, "ai.toolCall.result": _j({"temperature": 18}),
            }):
                pass
            with r.span("ai.generateText.doGenerate", {
                **base("ai.generateText.doGenerate"),
                "ai.prompt.messages": _j([system, user, asked, result]), "ai.prompt.tools": tools,
                "ai.response.text": ANSWER, "ai.response.finishReason": "stop",
                "ai.usage.inputTokens": 80, "ai.usage.outputTokens": 12,
            }):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.conversation_id, turn.system_instructions) == ("v-1", SYSTEM)
    assert [(t.name, t.description) for t in turn.tools] == [("weather", "Weather for a city.")]
    assert json.loads(turn.tools[0].parameters or "") == SCHEMA
    assert [(c.name, c.call_id, c.arguments, c.status) for c in turn.calls] == [
        ("weather", "call_1", ARGUMENTS, "ok")]
    assert json.loads(turn.calls[0].result or "") == {"temperature": 18}
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 22)
    assert turn.issues == ()
    _content_free(turn)


# --- LlamaIndex's own OTel integration --------------------------------------------------


def _li_message(role: str, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A ChatMessage `model_dump()` (llama-index-core 0.14: content blocks)."""
    return {"role": role, "additional_kwargs": extra, "blocks": list(blocks)}


def _li_text(text: str) -> dict[str, Any]:
    return {"block_type": "text", "text": text}


LI_CALL = {"block_type": "tool_call", "tool_call_id": "call_1", "tool_name": "get_weather",
           "tool_kwargs": {"city": "Paris"}}
LI_HISTORY = [_li_message("system", _li_text(SYSTEM)), _li_message("user", _li_text(REQUEST))]
LI_AFTER_TOOL = [*LI_HISTORY, _li_message("assistant", LI_CALL),
                 _li_message("tool", _li_text("18C, cloudy"), tool_call_id="call_1")]
LI_TAGS = {"llamaindex.run_id": "Q5fnOajopj", "llamaindex.step.input_event": "AgentSetup",
           "llamaindex.step.input_summary": f"AgentSetup(input=[ChatMessage(text={REQUEST!r})"}


def _li_chat_events(messages: list[Any], answer: dict[str, Any] | None,
                    usage: tuple[int, int]) -> list[tuple[str, dict[str, Any]]]:
    """LLMChatStartEvent and (unless streamed) LLMChatEndEvent, flattened as the
    integration's `flatten_dict` does: lists of objects as JSON text."""
    model = {"model_dict.model": "gpt-4o-mini", "model_dict.class_name": "OpenAI_LLM",
             "additional_kwargs.tools": _j(["<FunctionTool object at 0x7f90ef3be6d0>"])}
    start = {"messages": _j(messages), "class_name": "LLMChatStartEvent", **model}
    events = [("LLMChatStartEvent", start)]
    if answer is not None:
        events.append(("LLMChatEndEvent", {
            "messages": _j(messages), "response.message.role": "assistant",
            "response.message.blocks": _j([answer]), "response.delta": "",
            "response.additional_kwargs.prompt_tokens": usage[0],
            "response.additional_kwargs.completion_tokens": usage[1],
            "class_name": "LLMChatEndEvent"}))
    return events


def _li_agent(r: Any, streamed: bool) -> None:
    """FunctionAgent.run > run_agent_step > achat > chat (two dispatcher spans for one
    call, each with the events), call_tool > FunctionTool.acall (tags only)."""
    def step(messages: list[Any], answer: dict[str, Any], usage: tuple[int, int]) -> None:
        events = _li_chat_events(messages, None if streamed else answer, usage)
        method = "astream_chat" if streamed else "achat"
        with r.span("BaseWorkflowAgent.run_agent_step", LI_TAGS):
            with r.span("OpenAI._prepare_chat_with_tools", LI_TAGS):
                pass
            with r.span(f"OpenAI.{method}", LI_TAGS, events=events):
                if not streamed:
                    with r.span("OpenAI.chat", LI_TAGS, events=events):
                        pass

    with r.span("FunctionAgent.run", {}, events=[("workflow.output", {
            "output": "StopEvent(result=AgentOutput(response=ChatMessage(role=<MessageRole."
                      "ASSISTANT: 'assistant'>, additional_kwargs={}, blocks=[TextBlock(bl..."})]):
        step(LI_HISTORY, LI_CALL, (50, 10))
        with r.span("BaseWorkflowAgent.call_tool", LI_TAGS), \
                r.span("FunctionTool.acall", LI_TAGS):
            pass
        step(LI_AFTER_TOOL, _li_text(ANSWER), (80, 12))


def test_llamaindex_otel_integration(tmp_path: Path) -> None:
    """A FunctionAgent run (`streaming=False`), recorded from llama-index-core 0.14 with
    llama-index-observability-otel 0.7: no GenAI attributes at all, the content only in the
    LLMChat events. Before `conventions/llamaindex.py` it gave no turn."""
    [turn] = turns_of(lambda r: _li_agent(r, streamed=False), tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.system_instructions, turn.model) == (SYSTEM, "gpt-4o-mini")
    assert [(c.name, c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", "call_1", ARGUMENTS, "18C, cloudy", "ok")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 22)
    assert turn.issues == ()
    _content_free(turn, "18C, cloudy")


def test_llamaindex_streamed_agent_has_no_answer(tmp_path: Path) -> None:
    """Streamed (the FunctionAgent default): the integration drops the end event, which
    comes after the span closed, so each call has its request only. The turn is there,
    its answer recorded as not captured rather than invented."""
    [turn] = turns_of(lambda r: _li_agent(r, streamed=True), tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, None, "incomplete")
    assert turn.system_instructions == SYSTEM
    assert "answer_not_captured" in turn.issues


LI_TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "get_weather(city: str) -> dict\nGet the weather.",
    "parameters": SCHEMA}}]
LI_TOOL_STEP = {
    "llamaindex.run_id": "Q5fnOajopj", "llamaindex.step.input_event": "ToolCall",
    "llamaindex.step.input_summary":
        "ToolCall(tool_name='get_weather', tool_kwargs={'city': 'Paris'}, tool_id='call_1')",
}


def _li_summary_of(text: str) -> str:
    """The run's `workflow.output` summary of its StopEvent, cut at 200 characters as
    llama-index-workflows' `summarize_event` cuts it."""
    whole = ("StopEvent(result=AgentOutput(response=ChatMessage(role=<MessageRole.ASSISTANT: "
             f"'assistant'>, additional_kwargs={{}}, blocks=[TextBlock(block_type='text', "
             f"text={text!r})]), structured_response=None, current_agent_name='research_assistant'"
             ", raw=None, tool_calls=[], retry_messages=[]))")
    return whole if len(whole) <= 200 else whole[:197] + "..."


def _dir(tmp_path: Path, name: str) -> Path:
    (tmp_path / name).mkdir()
    return tmp_path / name


def _li_tool_agent(r: Any, answer: str, tool_error: str | None) -> None:
    """As llama-index-observability-otel 0.7 recorded a streamed FunctionAgent (the stack
    `llamaindex-otel-stream`, llama-index-llms-openai 0.8): the start events carry the
    OpenAI tools payload, the end events are dropped, the tool's own span is tagged with
    its step's ToolCall and fails when the tool raised."""
    def step(messages: list[Any]) -> None:
        start = {"messages": _j(messages), "additional_kwargs.tools": _j(LI_TOOLS),
                 "model_dict.model_name": "gpt-4o-mini", "class_name": "LLMChatStartEvent"}
        with r.span("BaseWorkflowAgent.run_agent_step", LI_TAGS), \
                r.span("OpenAI.astream_chat", LI_TAGS, events=[("LLMChatStartEvent", start)]):
            pass

    with r.span("FunctionAgent.run", {}, events=[("workflow.output", {
            "output": _li_summary_of(answer)})]):
        step(LI_HISTORY)
        with r.span("BaseWorkflowAgent.call_tool", LI_TOOL_STEP), \
                r.span("FunctionTool.acall", LI_TOOL_STEP, error=tool_error):
            pass
        result = tool_error or "18C, cloudy"
        step([*LI_HISTORY, _li_message("assistant", {**LI_CALL, "tool_kwargs": ARGUMENTS}),
              _li_message("tool", _li_text(result), tool_call_id="call_1")])


def test_llamaindex_tools_are_the_llm_s_payload(tmp_path: Path) -> None:
    """The tools offered are the start event's `additional_kwargs.tools` (the OpenAI LLM's
    own payload); an LLM that passes tool objects leaves reprs, no tool (`_li_agent`)."""
    [turn] = turns_of(lambda r: _li_tool_agent(r, ANSWER, None), _dir(tmp_path, "payload"))
    assert [(t.name, t.description, t.parameters) for t in turn.tools] == [
        ("get_weather", "get_weather(city: str) -> dict\nGet the weather.",
         json.dumps(SCHEMA, sort_keys=True, separators=(",", ":")))]
    assert turn.tools_source == "declared"
    [turn] = turns_of(lambda r: _li_agent(r, streamed=False), _dir(tmp_path, "reprs"))
    assert (turn.tools_source, [t.name for t in turn.tools]) == ("inferred", ["get_weather"])


def test_llamaindex_failed_tool_span_is_the_call_s_error(tmp_path: Path) -> None:
    """The tool's own span, named by its step's ToolCall summary, is the execution: its
    status is the only record that the tool failed (the model sees the error's text)."""
    [turn] = turns_of(lambda r: _li_tool_agent(r, ANSWER, "Unknown city: Paris"), tmp_path)
    assert [(c.name, c.call_id, c.arguments, c.result, c.status, c.error)
            for c in turn.calls] == [("get_weather", "call_1", ARGUMENTS, "Unknown city: Paris",
                                      "error", "Unknown city: Paris")]
    assert "unreconciled_calls" not in turn.issues


def test_llamaindex_streamed_answer_from_the_run_s_summary(tmp_path: Path) -> None:
    """Streamed, the last call's answer is only in the run's StopEvent summary: taken when
    its text literal is whole, never a cut one."""
    [turn] = turns_of(lambda r: _li_tool_agent(r, ANSWER, None), _dir(tmp_path, "whole"))
    assert (turn.final_answer, turn.status) == (ANSWER, "ok")
    long = "It is 18 degrees C and cloudy in Paris, with a light wind from the west. " * 2
    [turn] = turns_of(lambda r: _li_tool_agent(r, long, None), _dir(tmp_path, "cut"))
    assert (turn.final_answer, turn.status) == (None, "incomplete")


# --- ADOT / opentelemetry-instrumentation-botocore: Bedrock Converse ---------------------


@contextmanager
def _detached() -> Iterator[None]:
    """A trace of its own, as a raw client call outside any agent span is."""
    from opentelemetry import context, trace

    token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
    try:
        yield
    finally:
        context.detach(token)


def test_botocore_bedrock_converse_is_one_turn(tmp_path: Path) -> None:
    """Recorded from opentelemetry-instrumentation-botocore 0.66b2 (what ADOT's Python
    distro runs) on two stubbed Converse calls, content capture on: one parentless trace
    per call, content as the older per-message log events with Bedrock blocks; the tool
    result is emitted twice (`gen_ai.tool.message` and the toolResult user message)."""
    model = "anthropic.claude-3-5-sonnet-20240620-v1:0"
    system = {"gen_ai.system": "aws.bedrock"}
    call = [{"type": "function", "id": "tooluse_1",
             "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]
    use = [{"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather",
                        "input": {"city": "Paris"}}}]
    result = [{"json": {"temperature": 18}}]

    def chat(tokens: tuple[int, int], finish: str) -> dict[str, Any]:
        return {"rpc.system": "aws-api", "rpc.service": "Bedrock Runtime", "rpc.method": "Converse",
                "gen_ai.system": "aws.bedrock", "gen_ai.request.model": model,
                "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": tokens[0],
                "gen_ai.usage.output_tokens": tokens[1], "gen_ai.response.finish_reasons": [finish]}

    def request(r: Any) -> None:
        r.log("gen_ai.system.message", {"content": [{"text": SYSTEM}]}, system)
        r.log("gen_ai.user.message", {"content": [{"text": REQUEST}]}, system)

    def record(r: Any) -> None:
        with _detached(), r.span(f"chat {model}", chat((50, 10), "tool_use")):
            request(r)
            r.log("gen_ai.choice", {"finish_reason": "tool_use", "index": 0,
                                    "message": {"role": "assistant", "tool_calls": call}}, system)
        with _detached(), r.span(f"chat {model}", chat((80, 12), "end_turn")):
            request(r)
            r.log("gen_ai.assistant.message", {"content": use, "tool_calls": call}, system)
            r.log("gen_ai.tool.message", {"id": "tooluse_1", "content": result}, system)
            r.log("gen_ai.user.message", {"content": [{"toolResult": {
                "toolUseId": "tooluse_1", "content": result, "status": "success"}}]}, system)
            r.log("gen_ai.choice", {"finish_reason": "end_turn", "index": 0, "message": {
                "role": "assistant", "content": [{"text": ANSWER}]}}, system)

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert [(c.name, c.call_id, c.arguments, c.status) for c in turn.calls] == [
        ("get_weather", "tooluse_1", ARGUMENTS, "ok")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 22)


# --- Google GenAI SDK's own instrumentation ---------------------------------------------


def test_google_genai_automatic_function_calling(tmp_path: Path) -> None:
    """Recorded from opentelemetry-instrumentation-google-genai 1.3b0 (on
    opentelemetry-util-genai; google-genai 2.34, content `SPAN_ONLY`) with automatic
    function calling over two stubbed responses: one `generate_content` span for the whole
    loop (the request, the final answer, the last response's usage only) and an
    `execute_tool` child without a call id. Standard keys: already one right turn."""
    def record(r: Any) -> None:
        with r.span("generate_content gemini-2.5-flash", {
            "gen_ai.operation.name": "generate_content", "gen_ai.provider.name": "gemini",
            "gen_ai.request.model": "gemini-2.5-flash", "gen_ai.response.model": "gemini-2.5-flash",
            "gen_ai.response.finish_reasons": ["stop"], "gen_ai.response.id": "r2",
            "gen_ai.usage.input_tokens": 80, "gen_ai.usage.output_tokens": 12,
            "gen_ai.input.messages": _j([{"role": "user", "parts": [
                {"content": REQUEST, "type": "text"}], "name": None}]),
            "gen_ai.output.messages": _j([{"role": "assistant", "parts": [
                {"content": ANSWER, "type": "text"}], "finish_reason": "stop", "name": None}]),
            "gen_ai.system_instructions": _j([{"content": SYSTEM, "type": "text"}]),
            "gen_ai.tool.definitions": _j([{"name": "get_weather", "type": "function",
                                            "description": "Weather for a city.",
                                            "parameters": None}]),
        }), r.span("execute_tool get_weather", {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.description": "Weather for a city.",
            "gen_ai.tool.call.arguments": ARGUMENTS, "gen_ai.tool.call.result": "18C, cloudy",
        }):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.system_instructions, turn.model) == (SYSTEM, "gemini-2.5-flash")
    assert [(t.name, t.description) for t in turn.tools] == [("get_weather", "Weather for a city.")]
    assert [(c.name, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", ARGUMENTS, "18C, cloudy", "ok")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (1, 80, 12)
    assert turn.issues == ()


# --- AgentOps ---------------------------------------------------------------------------


def test_agentops_decorators_and_llm_spans(tmp_path: Path) -> None:
    """AgentOps' SDK (AgentOps-AI/agentops `agentops/sdk/decorators/utility.py`): `@agent`
    and `@tool` spans named `{name}.{kind}` with `agentops.span.kind` and the call's
    `{"args", "kwargs"}` / return value as JSON in `agentops.entity.input` / `output`;
    its OpenAI instrumentor (forked from OpenLLMetry) writes the flattened
    `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`. The model calls carry the whole
    exchange, so the turn is already right without reading the tool span."""
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}

    def llm(prompts: list[dict[str, Any]], completion: dict[str, Any],
            tokens: tuple[int, int]) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "gen_ai.system": "OpenAI", "llm.request.type": "chat",
            "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini",
            "gen_ai.usage.prompt_tokens": tokens[0], "gen_ai.usage.completion_tokens": tokens[1],
            "llm.request.functions.0.name": "get_weather",
            "llm.request.functions.0.description": "Weather for a city.",
            "llm.request.functions.0.parameters": _j(schema)}
        for i, prompt in enumerate(prompts):
            attributes.update({f"gen_ai.prompt.{i}.{k}": v for k, v in prompt.items()})
        attributes.update({f"gen_ai.completion.0.{k}": v for k, v in completion.items()})
        return attributes

    asked = {"role": "assistant", "finish_reason": "tool_calls", "tool_calls.0.id": "call_1",
             "tool_calls.0.name": "get_weather", "tool_calls.0.arguments": ARGUMENTS}
    openai_call = {"id": "call_1", "type": "function",
                   "function": {"name": "get_weather", "arguments": ARGUMENTS}}
    history = [{"role": "user", "content": REQUEST},
               {"role": "assistant", "tool_calls": _j([openai_call])},
               {"role": "tool", "content": "18C, cloudy", "tool_call_id": "call_1"}]

    def record(r: Any) -> None:
        with r.span("weather_agent.agent", {
            "agentops.span.kind": "agent", "agentops.operation.name": "weather_agent",
            "agentops.entity.input": _j({"args": [REQUEST], "kwargs": {}}),
            "agentops.entity.output": _j(ANSWER),
        }):
            with r.span("openai.chat.completion", llm(history[:1], asked, (50, 10))):
                pass
            with r.span("get_weather.tool", {
                "agentops.span.kind": "tool", "agentops.operation.name": "get_weather",
                "agentops.entity.input": _j({"args": [], "kwargs": {"city": "Paris"}}),
                "agentops.entity.output": _j("18C, cloudy"),
            }):
                pass
            with r.span("openai.chat.completion", llm(history, {
                    "role": "assistant", "content": ANSWER, "finish_reason": "stop"}, (80, 12))):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert [(t.name, t.description) for t in turn.tools] == [("get_weather", "Weather for a city.")]
    assert [(c.name, c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", "call_1", ARGUMENTS, "18C, cloudy", "ok")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 22)
    assert turn.issues == ()
    _content_free(turn, "18C, cloudy")


# --- Vercel AI SDK 7: @ai-sdk/otel ------------------------------------------------------


def test_vercel_ai_sdk_7_open_telemetry_integration(tmp_path: Path) -> None:
    """AI SDK 7 moved telemetry to `@ai-sdk/otel` (1.0.185, `dist/index.js`): its
    `LegacyOpenTelemetry` keeps the `ai.*` spans above; its `OpenTelemetry` writes the GenAI
    conventions and no `ai.operationId`: `invoke_agent {functionId}` (the run's request,
    answer and total usage) > `step N` (`agent_step`) > `chat {model}` and
    `execute_tool {name}`. One turn, usage from the model calls, not doubled by the root."""
    user = {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}
    asked = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1",
                                             "name": "weather", "arguments": {"city": "Paris"}}]}
    answered = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                           "response": {"temperature": 18}}]}
    final = {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}],
             "finish_reason": "stop"}
    definitions = _j([{"type": "function", "name": "weather",
                       "description": "Weather for a city.", "parameters": SCHEMA}])
    instructions = _j([{"type": "text", "content": SYSTEM}])
    model = {"gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini"}

    def chat(messages: list[Any], out: dict[str, Any], tokens: tuple[int, int]) -> dict[str, Any]:
        return {**model, "gen_ai.operation.name": "chat",
                "gen_ai.system_instructions": instructions, "gen_ai.input.messages": _j(messages),
                "gen_ai.tool.definitions": definitions,
                "gen_ai.output.messages": _j([out]), "gen_ai.response.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1]}

    def record(r: Any) -> None:
        with r.span("invoke_agent weather-agent", {
            **model, "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather-agent",
            "gen_ai.output.type": "text", "gen_ai.system_instructions": instructions,
            "gen_ai.input.messages": _j([user]), "gen_ai.output.messages": _j([final]),
            "gen_ai.usage.input_tokens": 130, "gen_ai.usage.output_tokens": 22,
        }):
            with r.span("step 1", {"gen_ai.operation.name": "agent_step"}):
                with r.span("chat gpt-4o-mini", chat([user], asked, (50, 10))):
                    pass
                with r.span("execute_tool weather", {
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather",
                    "gen_ai.tool.call.id": "call_1", "gen_ai.tool.type": "function",
                    "gen_ai.tool.call.arguments": ARGUMENTS,
                    "gen_ai.tool.call.result": _j({"temperature": 18}),
                }):
                    pass
            with r.span("step 2", {"gen_ai.operation.name": "agent_step"}), \
                    r.span("chat gpt-4o-mini", chat([user, asked, answered], final, (80, 12))):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.system_instructions, turn.model) == (SYSTEM, "gpt-4o-mini")
    assert [(t.name, t.description) for t in turn.tools] == [("weather", "Weather for a city.")]
    assert [(c.name, c.call_id, c.arguments, c.status) for c in turn.calls] == [
        ("weather", "call_1", ARGUMENTS, "ok")]
    assert json.loads(turn.calls[0].result or "") == {"temperature": 18}
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 22)
    assert turn.issues == ()
    _content_free(turn)


# --- DSPy -------------------------------------------------------------------------------

DSPY_STEP_OUTPUTS = ("next_thought", "next_tool_name", "next_tool_args")


def _dspy_system(outputs: tuple[str, ...]) -> str:
    """ChatAdapter's system message (abridged): the fields, then the objective."""
    return ("Your input fields are:\n1. `question` (str): \n2. `trajectory` (str):\n"
            "Your output fields are:\n" + "".join(
                f"{i}. `{name}` (str): \n" for i, name in enumerate(outputs, 1))
            + "All interactions will be structured in the following way, with the "
              "appropriate values filled in.\n\nIn adhering to this structure, your objective "
              "is: \n        Given the fields `question`, produce the fields `answer`.")


def _dspy_user(trajectory: list[tuple[str, str, dict[str, Any], str]],
               outputs: tuple[str, ...]) -> str:
    """ChatAdapter's user message: input fields as sections (ReAct's trajectory nested as
    its own sections), then the instruction naming the output sections."""
    steps = "\n\n".join(
        f"[[ ## thought_{i} ## ]]\n{thought}\n\n[[ ## tool_name_{i} ## ]]\n{tool}\n\n"
        f"[[ ## tool_args_{i} ## ]]\n{json.dumps(args)}\n\n[[ ## observation_{i} ## ]]\n{seen}"
        for i, (thought, tool, args, seen) in enumerate(trajectory))
    ask = ", then ".join(f"`[[ ## {name} ## ]]`" for name in outputs)
    return (f"[[ ## question ## ]]\n{REQUEST}\n\n[[ ## trajectory ## ]]\n{steps}\n\n"
            f"Respond with the corresponding output fields, starting with the field {ask}, "
            "and then ending with the marker for `[[ ## completed ## ]]`.")


def _dspy_completion(**fields: Any) -> str:
    return "\n\n".join(f"[[ ## {k} ## ]]\n{v if isinstance(v, str) else json.dumps(v)}"
                       for k, v in fields.items())


DSPY_TRAJECTORY = [("I should look up the weather.", "get_weather", {"city": "Paris"},
                    "18C, cloudy"), ("I have it.", "finish", {}, "Completed.")]
DSPY_CALLS = [  # (outputs asked for, steps already taken, completion)
    (DSPY_STEP_OUTPUTS, 0, _dspy_completion(
        next_thought="I should look up the weather.", next_tool_name="get_weather",
        next_tool_args={"city": "Paris"})),
    (DSPY_STEP_OUTPUTS, 1, _dspy_completion(
        next_thought="I have it.", next_tool_name="finish", next_tool_args={})),
    (("reasoning", "answer"), 2, _dspy_completion(reasoning="The tool said 18C.",
                                                   answer=ANSWER)),
]


def test_dspy_react_under_openinference(tmp_path: Path) -> None:
    """Recorded from dspy 3.4.1 with openinference-instrumentation-dspy 0.1.48
    (`dspy.ReAct("question -> answer", tools=[get_weather])` over a DummyLM): three model
    calls whose user message is ChatAdapter's template with the trajectory so far, tool
    spans `{tool}.__call__`. Before `conventions/dspy.py`: three turns, each request the
    template, each answer `[[ ## ... ## ]]` sections, the tool named `get_weather.__call__`."""
    def lm(outputs: tuple[str, ...], steps: int, completion: str) -> dict[str, Any]:
        messages = [{"role": "system", "content": _dspy_system(outputs)},
                    {"role": "user", "content": _dspy_user(DSPY_TRAJECTORY[:steps], outputs)}]
        return {"openinference.span.kind": "LLM", "llm.model_name": "openai/gpt-4o-mini",
                "input.mime_type": "application/json", "output.mime_type": "application/json",
                "input.value": _j({"prompt": None, "messages": messages, "kwargs": {}}),
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": messages[0]["content"],
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": messages[1]["content"],
                "output.value": _j([completion]),
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": completion}

    def chain(value: Any, output: Any) -> dict[str, Any]:
        return {"openinference.span.kind": "CHAIN", "input.value": _j(value),
                "output.value": _j(output), "input.mime_type": "application/json"}

    def tool(args: dict[str, Any], result: str) -> dict[str, Any]:
        return {"openinference.span.kind": "TOOL", "input.value": _j({"kwargs": args}),
                "output.value": _j(result), "input.mime_type": "application/json"}

    question = {"question": REQUEST, "trajectory": ""}

    def record(r: Any) -> None:
        with r.span("ReAct.forward", chain({"input_args": {"question": REQUEST}},
                                           {"answer": ANSWER})):
            for (outputs, steps, completion), step in zip(DSPY_CALLS, [0, 1, None], strict=True):
                with r.span("Predict.forward", chain(question, {})), \
                        r.span("ChatAdapter.__call__", chain({}, [{}])), \
                        r.span("DummyLM.__call__", lm(outputs, steps, completion)):
                    pass
                if step is not None:
                    _, name, args, seen = DSPY_TRAJECTORY[step]
                    with r.span(f"{name}.__call__", tool(args, seen)):
                        pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert [(c.name, c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", "get_weather_0", ARGUMENTS, "18C, cloudy", "ok")]
    # ReAct's own `finish` (how its loop ends) is neither a call nor a tool of the agent.
    assert [t.name for t in turn.tools] == ["get_weather"]
    assert turn.llm_calls == 3
    assert turn.system_instructions and "Your input fields are" in turn.system_instructions
    assert turn.issues == ()
    _content_free(turn, "18C, cloudy")


def test_dspy_predict_under_mlflow(tmp_path: Path) -> None:
    """MLflow's DSPy autolog (mlflow `mlflow/dspy/callback.py`: the LM call's arguments as
    `mlflow.spanInputs`, its completions as `spanOutputs`, span type CHAT_MODEL; every
    value JSON-encoded): a `ChainOfThought` program's one call is a turn whose request is
    the question and whose answer is the `answer` field, not the template."""
    outputs = ("reasoning", "answer")
    messages = [{"role": "system", "content": _dspy_system(outputs)},
                {"role": "user", "content": _dspy_user([], outputs)}]
    completion = _dspy_completion(reasoning="Paris is mild.", answer=ANSWER)

    def record(r: Any) -> None:
        with r.span("ChainOfThought.forward", {
            "mlflow.spanType": _j("CHAIN"), "mlflow.spanInputs": _j({"question": REQUEST}),
            "mlflow.spanOutputs": _j({"reasoning": "Paris is mild.", "answer": ANSWER}),
        }), r.span("LM.__call__", {
            "mlflow.spanType": _j("CHAT_MODEL"),
            "mlflow.spanInputs": _j({"prompt": None, "messages": messages}),
            "mlflow.spanOutputs": _j([completion]),
            "mlflow.chat.tokenUsage": _j({"input_tokens": 120, "output_tokens": 30,
                                          "total_tokens": 150}),
        }):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert turn.calls == ()
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (1, 120, 30)


# --- OpenLLMetry-JS (Traceloop JS SDK) --------------------------------------------------


def test_openllmetry_js_openai(tmp_path: Path) -> None:
    """@traceloop/instrumentation-openai 0.27.0 (`dist/index.js`, `buildOpenAIInputMessages`,
    `buildOpenAIOutputMessage`) writes the current GenAI keys, as the Python SDK does since
    0.55 (older releases of both: the flattened `gen_ai.prompt.N.*`): `chat {model}` spans
    with parts (arguments parsed into objects, a tool message's result as
    `tool_call_response.response`) and the tools in OpenAI's nested form, under the SDK's
    `withWorkflow` span. Already one right turn."""
    tools = _j([{"type": "function", "function": {"name": "get_weather",
                                                  "description": "Weather for a city.",
                                                  "parameters": SCHEMA}}])
    system = {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]}
    user = {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}
    asked = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1",
                                             "name": "get_weather",
                                             "arguments": {"city": "Paris"}}]}
    answered = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                           "response": "18C, cloudy"}]}

    def chat(messages: list[Any], out: dict[str, Any], finish: str,
             tokens: tuple[int, int]) -> dict[str, Any]:
        return {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini",
                "gen_ai.input.messages": _j(messages), "gen_ai.tool.definitions": tools,
                "gen_ai.output.messages": _j([{**out, "finish_reason": finish}]),
                "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1],
                "traceloop.association.properties.session_id": "js-1"}

    def record(r: Any) -> None:
        with r.span("weather.workflow", {
            "traceloop.span.kind": "workflow", "traceloop.entity.name": "weather",
            "traceloop.workflow.name": "weather",
            "traceloop.association.properties.session_id": "js-1",
        }):
            with r.span("chat gpt-4o-mini", chat([system, user], asked, "tool_call", (50, 10))):
                pass
            with r.span("chat gpt-4o-mini", chat([system, user, asked, answered], {
                    "role": "assistant", "parts": [{"type": "text", "content": ANSWER}]},
                    "stop", (80, 12))):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert turn.system_instructions == SYSTEM
    assert [(t.name, t.description) for t in turn.tools] == [("get_weather", "Weather for a city.")]
    assert [(c.name, c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", "call_1", ARGUMENTS, "18C, cloudy", "ok")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 22)
    assert turn.issues == ()
