"""The forms issue 13 names, recorded with the real OTel SDK (the convention fixtures'
`Recorder`) in the shapes real stacks export, decoded and assembled: one logical model
call per call however many spans report it, placeholders never content, synthetic spans
never calls, wrapped tool executions joined to their calls, answers through a final-answer
tool, Bedrock-shape tool definitions. `tests/ingest/test_stacks.py` checks the same on real
exports; these pin each rule on its own, including stacks not recorded there (Google ADK).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.outputs import load_module
from turnscore.ingest.assemble import assemble_turns
from turnscore.ingest.conventions.messages import unwrap_tool_input, unwrap_tool_output
from turnscore.ingest.conventions.values import is_placeholder
from turnscore.ingest.decode import decode_spans
from turnscore.ingest.otlp import read_file
from turnscore.ingest.records import RawLog, RawSpan
from turnscore.ingest.turn import Turn

BUILD = Path(__file__).resolve().parent.parent / "fixtures" / "conventions" / "build.py"
REQUEST = "What is 17 * 23 + 4?"
ANSWER = "17 * 23 + 4 = 395."
SYSTEM = "You are terse."
ARGS = {"expression": "17 * 23 + 4"}
CALC = {"name": "calculator", "description": "Evaluate arithmetic.",
        "inputSchema": {"json": {"type": "object", "properties": {"expression": {}}}}}
WEATHER = {"name": "get_weather", "description": "Weather for a city.",
           "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}}}


Recorder = load_module("conventions_build", BUILD).Recorder


def _j(value: Any) -> str:
    return json.dumps(value)


USER_IN = _j([{"role": "user", "content": REQUEST}])


def turns_of(record: Callable[[Any], None], tmp_path: Path) -> list[Turn]:
    recorder = Recorder("stack-forms")
    record(recorder)
    spans: list[RawSpan] = []
    logs: list[RawLog] = []
    for path in recorder.write(tmp_path, "case"):
        for r in read_file(path):
            if isinstance(r, RawSpan):
                spans.append(r)
            elif isinstance(r, RawLog):
                logs.append(r)
    decoded, errors = decode_spans(spans, logs)
    assert errors == []
    result = assemble_turns(decoded)
    assert result.errors == []
    return sorted(result.turns, key=lambda t: t.started_at)


@contextmanager
def root(r: Any, session: str) -> Iterator[None]:
    """A trace of its own, detached from whatever span is current."""
    from opentelemetry import context, trace

    token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
    try:
        with r.span("invoke_agent helper", {"gen_ai.operation.name": "invoke_agent",
                                            "gen_ai.conversation.id": session}):
            yield
    finally:
        context.detach(token)


def _oi_llm(messages_in: list[tuple[str, str]], out: dict[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {"openinference.span.kind": "LLM", "session.id": "s1",
                             "llm.model_name": "claude"}
    for i, (role, content) in enumerate(messages_in):
        attrs[f"llm.input_messages.{i}.message.role"] = role
        attrs[f"llm.input_messages.{i}.message.content"] = content
    attrs.update({f"llm.output_messages.0.message.{k}": v for k, v in out.items()})
    return attrs


def _oi_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An OpenInference output message requesting one tool call."""
    return {"role": "assistant", "tool_calls.0.tool_call.id": call_id,
            "tool_calls.0.tool_call.function.name": name,
            "tool_calls.0.tool_call.function.arguments": _j(arguments)}


_SDK = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic"}


def _sdk(response_id: str, tokens: tuple[int, int]) -> dict[str, Any]:
    return {**_SDK, "gen_ai.response.id": response_id, "gen_ai.usage.input_tokens": tokens[0],
            "gen_ai.usage.output_tokens": tokens[1]}


# --- one logical model call ----------------------------------------------------------


def test_usage_only_sdk_span_under_the_content_span_is_the_same_call(tmp_path: Path) -> None:
    """Item 1: the Anthropic SDK's own span (usage and response id only) nested under
    OpenInference's LLM span: one model call with the parent's content and the child's usage."""

    def record(r: Any) -> None:
        attrs = _oi_llm([("system", SYSTEM), ("user", REQUEST)],
                        {"role": "assistant", "content": ANSWER})
        with r.span("messages.create", attrs), r.span("anthropic.messages.create",
                                                      _sdk("msg_1", (18, 7))):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert turn.system_instructions == SYSTEM
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (1, 18, 7)


def test_adk_legacy_generate_content_under_call_llm_with_elided_events(tmp_path: Path) -> None:
    """Items 1 and 3: ADK's legacy `call_llm` carries the Gemini request and response; its
    `generate_content` child has usage and `<elided>` message events: one call, the real
    request, one turn."""
    request = {"model": "gemini-2.0-flash", "config": {"system_instruction": SYSTEM},
               "contents": [{"role": "user", "parts": [{"text": REQUEST}]}]}
    response = {"content": {"role": "model", "parts": [{"text": ANSWER}]},
                "finish_reason": "STOP"}

    def record(r: Any) -> None:
        adk = {"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.session_id": "adk-s"}
        with (
            r.span("invoke_agent helper", {**adk, "gen_ai.operation.name": "invoke_agent"}),
            r.span("call_llm", {**adk, "gcp.vertex.agent.llm_request": _j(request),
                                "gcp.vertex.agent.llm_response": _j(response)}),
            r.span("generate_content gemini-2.0-flash", {
                "gen_ai.operation.name": "generate_content",
                "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 9,
            }),
        ):
            r.log("gen_ai.system.message", {"content": "<elided>"})
            r.log("gen_ai.user.message", {"content": "<elided>"})
            r.log("gen_ai.choice", {"index": 0, "message": {"content": "<elided>"}})

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert turn.system_instructions == SYSTEM
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (1, 30, 9)


_ADK_JS = {"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.session_id": "adk-js"}


def test_adk_js_call_llm_in_camel_case(tmp_path: Path) -> None:
    """ADK for TypeScript (`@google/adk` 2.0) writes `call_llm`'s request and response with
    `JSON.stringify` of the genai objects: `systemInstruction`, `usageMetadata`
    (tests/fixtures/stacks/adk-js)."""
    request = {"model": "gemini-2.5-flash", "config": {"systemInstruction": SYSTEM},
               "contents": [{"role": "user", "parts": [{"text": REQUEST}]}]}
    response = {"content": {"role": "model", "parts": [{"text": ANSWER}]},
                "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 9},
                "finishReason": "STOP"}

    def record(r: Any) -> None:
        with (
            r.span("invoke_agent helper", {**_ADK_JS, "gen_ai.operation.name": "invoke_agent"}),
            r.span("call_llm", {**_ADK_JS, "gcp.vertex.agent.llm_request": _j(request),
                                "gcp.vertex.agent.llm_response": _j(response)}),
        ):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert turn.system_instructions == SYSTEM
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (1, 30, 9)


def test_adk_js_streamed_parallel_calls_replayed_one_message_each(tmp_path: Path) -> None:
    """ADK for TypeScript in SSE mode: the step's `call_llm` records usage alone, and the
    next request replays its two calls as one assistant message each, each followed by its
    result (tests/fixtures/stacks/adk-js-stream, parallel_tools): both are the first
    step's, in the order asked."""
    asked = [("c0", "get_weather", {"city": "Paris"}), ("c1", "calculator", ARGS)]
    results = {"c0": {"temperature": 18}, "c1": {"result": "395"}}
    user = {"role": "user", "parts": [{"text": REQUEST}]}
    replay = [m for i, name, args in asked for m in (
        {"role": "model", "parts": [{"functionCall": {"id": i, "name": name, "args": args}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": i, "name": name,
                                                         "response": results[i]}}]},
    )]
    usage = {"usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 9},
             "finishReason": "STOP", "partial": False}
    answer = {"content": {"role": "model", "parts": [{"text": ANSWER}]}, **usage}

    def call_llm(contents: list[Any], response: Any) -> dict[str, Any]:
        return {**_ADK_JS, "gcp.vertex.agent.llm_request": _j(
            {"model": "gemini-2.5-flash", "contents": contents}),
            "gcp.vertex.agent.llm_response": _j(response)}

    def record(r: Any) -> None:
        with r.span("invoke_agent helper", {**_ADK_JS, "gen_ai.operation.name": "invoke_agent"}):
            with r.span("call_llm", call_llm([user], usage)):
                for i, name, args in asked:
                    with r.span(f"execute_tool {name}", {
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                        "gen_ai.tool.call.id": i,
                        "gcp.vertex.agent.tool_call_args": _j(args),
                        "gcp.vertex.agent.tool_response": _j(results[i]),
                    }):
                        pass
            with r.span("call_llm", call_llm([user, *replay], answer)):
                pass

    [turn] = turns_of(record, tmp_path)
    assert [(c.name, c.call_id, c.step) for c in turn.calls] == [
        ("get_weather", "c0", 0), ("calculator", "c1", 0)]
    assert (turn.final_answer, turn.llm_calls) == (ANSWER, 2)
    assert "unreconciled_calls" not in turn.issues


def test_strands_js_loop_cycle_history_is_no_model_call(tmp_path: Path) -> None:
    """Strands for TypeScript with the latest opt-in: a later turn's first
    `execute_agent_loop_cycle` (no operation name) carries the conversation before the
    turn's request as an operation-details event with input messages alone. It is no model
    call, so the `chat` under it keeps its own input: the turn asks the new request
    (tests/fixtures/stacks/strands-js-latest, multi_turn)."""
    details = "gen_ai.client.inference.operation.details"
    before = [{"role": "user", "parts": [{"type": "text", "content": "Hello?"}]},
              {"role": "assistant", "parts": [{"type": "text", "content": "Hi."}]}]
    asked = [*before, {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}]
    said = [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}],
             "finish_reason": "endTurn"}]
    common = {"gen_ai.provider.name": "strands-agents"}

    def record(r: Any) -> None:
        with (
            r.span("invoke_agent helper", {**common, "gen_ai.operation.name": "invoke_agent",
                                           "gen_ai.agent.name": "helper"},
                   events=[(details, {"gen_ai.input.messages": _j(asked[-1:])}),
                           (details, {"gen_ai.output.messages": _j(said)})]),
            r.span("execute_agent_loop_cycle", {"agent_loop.cycle_id": "c-1"},
                   events=[(details, {"gen_ai.input.messages": _j(before)})]),
            r.span("chat", {**common, "gen_ai.operation.name": "chat",
                            "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 9},
                   events=[(details, {"gen_ai.input.messages": _j(asked)}),
                           (details, {"gen_ai.output.messages": _j(said)})]),
        ):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 1)


def test_voltagent_agent_llm_and_tool_spans(tmp_path: Path) -> None:
    """VoltAgent's own spans (tests/fixtures/stacks/voltagent): the agent span's input,
    output, instructions, tools (state snapshot) and summed usage; the `llm:generateText`
    span over the step loop, its input only and its last step's usage (not counted); a
    `tool.execution:<name>` span's call. A failed tool's span: its error message."""
    run = {"user.id": "u", "conversation.id": "conv-1", "operation.id": "op-1",
           "entity.id": "helper", "entity.type": "agent", "entity.name": "helper"}
    snapshot = {"id": "helper", "tools": [
        {"id": "calculator", "name": "calculator", "description": "Evaluate arithmetic.",
         "parameters": {"def": {"type": "object"}, "type": "object"}}]}
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": [{"type": "text", "text": REQUEST}]}]

    def record(r: Any) -> None:
        with r.span("helper", {**run, "input": REQUEST, "output": ANSWER,
                               "voltagent.operation_id": "op-1",
                               "agent.instructions": SYSTEM,
                               "agent.stateSnapshot": _j(snapshot),
                               "usage.prompt_tokens": 148, "usage.completion_tokens": 60}):
            with r.span("llm:generateText", {
                **run, "span.type": "llm", "llm.model": "gpt-4o-mini",
                "llm.messages": _j(messages),
                "llm.usage.prompt_tokens": 107, "llm.usage.completion_tokens": 13,
            }):
                with r.span("tool.execution:calculator", {
                    **run, "span.type": "tool", "tool.name": "calculator",
                    "tool.call.id": "c1", "input": _j(ARGS), "output": "395",
                }):
                    pass
                with r.span("tool.execution:calculator", {
                    **run, "span.type": "tool", "tool.name": "calculator",
                    "tool.call.id": "c2", "input": _j({"expression": "x"}),
                    "error.message": "Unsupported expression: x",
                }, error="Unsupported expression: x"):
                    pass
            with r.span("memory.write", {**run, "span.type": "memory",
                                         "input": _j({"message": "..."})}):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert (turn.system_instructions, turn.agent_name, turn.conversation_id) == (
        SYSTEM, "helper", "conv-1")
    assert [(t.name, t.description) for t in turn.tools] == [
        ("calculator", "Evaluate arithmetic.")]
    assert [(c.name, c.call_id, c.result, c.error) for c in turn.calls] == [
        ("calculator", "c1", "395", None),
        ("calculator", "c2", "Unsupported expression: x", "Unsupported expression: x")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (1, 148, 60)


def test_one_response_id_in_two_traces_is_one_call(tmp_path: Path) -> None:
    """Item 2: OpenLLMetry's span with content and the SDK's own without, each in a trace of
    its own, sharing `gen_ai.response.id`: one turn, usage counted once."""

    def record(r: Any) -> None:
        with r.span("anthropic.chat", {
            "gen_ai.operation.name": "chat", "gen_ai.response.id": "msg_9",
            "gen_ai.input.messages": _j([{"role": "user", "parts": [
                {"type": "text", "content": REQUEST}]}]),
            "gen_ai.output.messages": _j([{"role": "assistant", "parts": [
                {"type": "text", "content": ANSWER}]}]),
            "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 5,
        }):
            pass
        with r.span("anthropic.messages.create", _sdk("msg_9", (12, 5))):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 1)
    assert (turn.input_tokens, turn.output_tokens) == (12, 5)


def test_a_model_call_span_with_nothing_of_one_is_not_counted(tmp_path: Path) -> None:
    """Item 6: an LLM span with no messages, no output and no usage (LlamaIndex's
    `_prepare_chat_with_tools`, whose output.value holds Python reprs) is no model call
    and its repr is never an answer."""
    reprs = {"messages": ["ChatMessage(role=<MessageRole.USER: 'user'>, blocks=[...])"]}

    def record(r: Any) -> None:
        with r.span("FunctionAgent.run", {"openinference.span.kind": "AGENT", "session.id": "s"}):
            with r.span("OpenAI._prepare_chat_with_tools", {
                "openinference.span.kind": "LLM", "llm.model_name": "gpt",
                "input.value": _j({"chat_history": ["ChatMessage(...)"]}),
                "output.value": _j(reprs),
            }):
                pass
            with r.span("OpenAI.chat", _oi_llm([("user", REQUEST)],
                                               {"role": "assistant", "content": ANSWER})):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.final_answer, turn.llm_calls) == (ANSWER, 1)


# --- tools -------------------------------------------------------------------------------


def test_adk_merged_tools_span_is_structure(tmp_path: Path) -> None:
    """Item 4: ADK's `execute_tool (merged)` around the parallel tool spans is no call."""

    def record(r: Any) -> None:
        calls = [{"id": f"c{i}", "type": "function", "function": {
            "name": "calculator", "arguments": _j({"expression": e})}}
            for i, e in enumerate(("1+1", "2+2"))]
        with root(r, "adk-m"):
            with r.span("chat", {"gen_ai.operation.name": "chat",
                                 "gen_ai.input.messages": USER_IN,
                                 "gen_ai.output.messages": _j([{"role": "assistant",
                                                                "tool_calls": calls}])}):
                pass
            with r.span("execute_tool (merged)", {"gen_ai.operation.name": "execute_tool",
                                                  "gen_ai.tool.name": "(merged tools)"}):
                for i, e in enumerate(("1+1", "2+2")):
                    with r.span("execute_tool calculator", {
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calculator",
                        "gen_ai.tool.call.id": f"c{i}",
                        "gen_ai.tool.call.arguments": _j({"expression": e}),
                        "gen_ai.tool.call.result": str(2 * (i + 1)),
                    }):
                        pass

    [turn] = turns_of(record, tmp_path)
    assert [(c.name, c.call_id, c.result) for c in turn.calls] == [
        ("calculator", "c0", "2"), ("calculator", "c1", "4")]
    assert [t.name for t in turn.tools] == ["calculator"]


@pytest.mark.parametrize(
    ("recorded", "arguments", "call_id"),
    [
        ({"kwargs": ARGS}, ARGS, None),  # LlamaIndex FunctionTool.acall
        ({"args": [], "sanitize_inputs_outputs": True, "kwargs": ARGS}, ARGS, None),  # smolagents
        ({"input_str": str(ARGS), "inputs": ARGS, "tags": [], "metadata": {},
          "kwargs": {"tool_call_id": "call_1", "color": "green"}}, ARGS, "call_1"),  # LangChain
        ({"args": [1], "kwargs": {}}, {"args": [1], "kwargs": {}}, None),  # positional: kept
        ({"kwargs": ARGS, "other": 1}, {"kwargs": ARGS, "other": 1}, None),  # not a wrapper
        (ARGS, ARGS, None),
    ],
)
def test_tool_input_wrappers_unwrap(recorded: Any, arguments: Any, call_id: str | None) -> None:
    assert unwrap_tool_input(_j(recorded)) in ((arguments, call_id), (_j(arguments), call_id))


def test_tool_output_wrappers_unwrap() -> None:
    llama = {"blocks": [{"text": "395"}], "tool_name": "calculator", "raw_output": "395",
             "is_error": False}
    assert unwrap_tool_output(_j(llama)) == ("395", None, False)
    failed = {**llama, "raw_output": "Unknown city", "is_error": True}
    assert unwrap_tool_output(_j(failed)) == ("Unknown city", None, True)
    message = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages",
               "ToolMessage"], "kwargs": {"content": "395", "tool_call_id": "call_1",
                                          "status": "error", "type": "tool"}}
    assert unwrap_tool_output(_j({"output": message, "kwargs": {}})) == ("395", "call_1", True)
    assert unwrap_tool_output("plain text") == ("plain text", None, False)
    assert unwrap_tool_output(_j({"a": 1})) == ('{"a": 1}', None, False)
    # Strands' ToolResult content, as JSON text: the text the model read; any other list
    # is the result as it is.
    assert unwrap_tool_output(_j([{"text": "18C, "}, {"text": "cloudy"}])) == (
        "18C, cloudy", None, False)
    assert unwrap_tool_output(_j([{"city": "Paris"}])) == ('[{"city": "Paris"}]', None, False)
    assert unwrap_tool_output("[not json") == ("[not json", None, False)


def test_wrapped_executions_without_ids_join_their_calls(tmp_path: Path) -> None:
    """Item 5: TOOL spans with no call id and wrapped arguments join the requested calls
    (by name and unwrapped arguments), each call once, with its result."""

    def record(r: Any) -> None:
        with r.span("FunctionAgent.run", {"openinference.span.kind": "AGENT", "session.id": "s"}):
            asks = _oi_call("call_a", "calculator", ARGS)
            with r.span("OpenAI.chat", _oi_llm([("user", REQUEST)], asks)):
                pass
            with r.span("FunctionTool.acall", {
                "openinference.span.kind": "TOOL", "tool.name": "calculator",
                "input.value": _j({"kwargs": ARGS}),
                "output.value": _j({"blocks": [{"text": "395"}], "raw_output": "395"}),
            }):
                pass
            with r.span("OpenAI.chat", _oi_llm([("user", REQUEST)],
                                               {"role": "assistant", "content": ANSWER})):
                pass

    [turn] = turns_of(record, tmp_path)
    assert [(c.name, c.call_id, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("calculator", "call_a", json.dumps(ARGS, separators=(",", ":")), "395", "ok")]


def _two_calls() -> dict[str, Any]:
    calls = [("call_w", "get_weather", {"city": "Paris"}), ("call_c", "calculator", ARGS)]
    out: dict[str, Any] = {"role": "assistant"}
    for i, (cid, name, args) in enumerate(calls):
        out.update({f"tool_calls.{i}.tool_call.id": cid,
                    f"tool_calls.{i}.tool_call.function.name": name,
                    f"tool_calls.{i}.tool_call.function.arguments": _j(args)})
    return out


def test_results_rendered_as_text_in_framework_roles_are_what_the_model_saw(
    tmp_path: Path,
) -> None:
    """smolagents' form: the calls come back to the model as a `tool-call` message and the
    results as one `tool-response` message, `Observation:` and one line per parallel call
    (Python reprs), while the TOOL spans' outputs are JSON: a call's result is the line the
    model read."""
    weather, sums = "{'city': 'Paris', 'temperature': 18}", "395"
    seen = [("user", REQUEST), ("tool-call", "Calling tools:\n[...]"),
            ("tool-response", f"Observation:\n{weather}\n{sums}")]

    def record(r: Any) -> None:
        with r.span("agent.run", {"openinference.span.kind": "AGENT", "session.id": "s"}):
            with r.span("OpenAIModel.generate", _oi_llm([("user", REQUEST)], _two_calls())):
                pass
            for name, args, output in (("get_weather", {"city": "Paris"}, _j({"city": "Paris"})),
                                       ("calculator", ARGS, "395")):
                with r.span("SimpleTool", {"openinference.span.kind": "TOOL", "tool.name": name,
                                           "input.value": _j({"kwargs": args}),
                                           "output.value": output}):
                    pass
            with r.span("OpenAIModel.generate",
                        _oi_llm(seen, {"role": "assistant", "content": ANSWER})):
                pass

    [turn] = turns_of(record, tmp_path)
    assert [(c.call_id, c.result, c.status) for c in turn.calls] == [
        ("call_w", weather, "ok"), ("call_c", sums, "ok")]
    assert turn.llm_calls == 2


def test_an_error_rendered_as_text_is_the_call_s_failure(tmp_path: Path) -> None:
    """`Error:` then what failed, then the framework's advice to the model: the call failed,
    and its result is what failed."""
    failed = "Error executing tool 'get_weather': ValueError: Unknown city: Atlantis"
    asks = _oi_call("call_w", "get_weather", {"city": "Atlantis"})
    seen = [("user", REQUEST), ("tool-response", f"Error:\n{failed}\nPlease try again.\n")]

    def record(r: Any) -> None:
        with r.span("agent.run", {"openinference.span.kind": "AGENT", "session.id": "s"}):
            with r.span("OpenAIModel.generate", _oi_llm([("user", REQUEST)], asks)):
                pass
            with r.span("OpenAIModel.generate",
                        _oi_llm(seen, {"role": "assistant", "content": "Sorry."})):
                pass

    [turn] = turns_of(record, tmp_path)
    assert [(c.call_id, c.result, c.status) for c in turn.calls] == [
        ("call_w", failed, "error")]


def test_openinference_tool_use_content_part_is_not_a_second_call(tmp_path: Path) -> None:
    """Item 7: `message.contents.N` with `message_content.type=tool_use` and the call
    beside it in `contents.N.tool_call.*`, plus the same call in `message.tool_calls.N`."""

    def record(r: Any) -> None:
        out = {"role": "assistant",
               "tool_calls.0.tool_call.id": "toolu_1",
               "tool_calls.0.tool_call.function.name": "calculator",
               "tool_calls.0.tool_call.function.arguments": _j(ARGS),
               "contents.0.message_content.type": "tool_use",
               "contents.0.tool_call.id": "toolu_1",
               "contents.0.tool_call.function.name": "calculator",
               "contents.0.tool_call.function.arguments": _j(ARGS)}
        with r.span("messages.create", _oi_llm([("user", REQUEST)], out)):
            pass

    [turn] = turns_of(record, tmp_path)
    assert [(c.name, c.call_id) for c in turn.calls] == [("calculator", "toolu_1")]


def test_final_answer_tool_gives_the_answer(tmp_path: Path) -> None:
    """Item 8: smolagents answers through a `final_answer` call: its argument is the
    answer, the turn is ok, and the call is not one of the turn's calls."""

    def record(r: Any) -> None:
        with r.span("agent.run", {"openinference.span.kind": "AGENT", "session.id": "s",
                                  "output.value": ANSWER}):
            asks = _oi_call("call_f", "final_answer", {"answer": ANSWER})
            with r.span("OpenAIModel.generate", _oi_llm([("user", REQUEST)], asks)):
                pass
            with r.span("FinalAnswerTool", {
                "openinference.span.kind": "TOOL", "tool.name": "final_answer",
                "input.value": _j({"args": [], "sanitize_inputs_outputs": True,
                                   "kwargs": {"answer": ANSWER}}),
                "output.value": ANSWER,
            }):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.final_answer, turn.status, turn.calls) == (ANSWER, "ok", ())


def test_bedrock_shape_definitions_on_the_agent_keep_uncalled_tools(tmp_path: Path) -> None:
    """Item 9: `gen_ai.tool.definitions` on the agent span in Bedrock shape keeps the
    description and schema of a tool no call used."""

    def record(r: Any) -> None:
        with r.span("invoke_agent Strands Agents", {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "st",
            "gen_ai.tool.definitions": _j([CALC, WEATHER]),
        }), r.span("chat", {"gen_ai.operation.name": "chat",
                             "gen_ai.input.messages": USER_IN,
                             "gen_ai.output.messages": _j([{"role": "assistant",
                                                            "content": ANSWER}])}):
            pass

    [turn] = turns_of(record, tmp_path)
    weather = next(t for t in turn.tools if t.name == "get_weather")
    assert weather.description == "Weather for a city."
    assert json.loads(weather.parameters or "null") == WEATHER["inputSchema"]["json"]


# --- placeholders --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["<elided>", " [REDACTED] ", "<redacted>",
                                  "[Scrubbed due to 'auth']", "[Scrubbed due to 'API key']"])
def test_placeholders(text: str) -> None:
    assert is_placeholder(text)


@pytest.mark.parametrize("text", ["", "elided", "The answer is [REDACTED] today.", "<b>",
                                  "[Scrubbed due to 'auth'] and more", "[Scrubbed due to auth]"])
def test_not_placeholders(text: str) -> None:
    assert not is_placeholder(text)


def test_an_elided_user_message_is_no_request(tmp_path: Path) -> None:
    """Item 3: ADK sends `<elided>` user and system message events when capture is off for
    them: the request stays the captured one and the turn is not split."""

    def record(r: Any) -> None:
        with root(r, "adk-e"):
            with r.span("generate_content", {"gen_ai.operation.name": "generate_content",
                                             "gen_ai.usage.input_tokens": 3}):
                r.log("gen_ai.user.message", {"content": REQUEST})
                r.log("gen_ai.choice", {"index": 0, "message": {"content": "Thinking."},
                                        "finish_reason": "stop"})
            with r.span("generate_content", {"gen_ai.operation.name": "generate_content",
                                             "gen_ai.usage.input_tokens": 5}):
                r.log("gen_ai.system.message", {"content": "<elided>"})
                r.log("gen_ai.user.message", {"content": "<elided>"})
                r.log("gen_ai.choice", {"index": 0, "message": {"content": ANSWER},
                                        "finish_reason": "stop"})

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 2)
    assert turn.system_instructions is None


# --- what assembly could not trust (`turns.issues`) ------------------------------------------


def test_a_usage_only_model_call_is_flagged(tmp_path: Path) -> None:
    """A model call whose spans carry usage and no messages (the SDK's span arriving alone)
    still counts, and the turn says its content was not captured."""

    def record(r: Any) -> None:
        with r.span("anthropic.messages.create", _sdk("msg_2", (4, 2))):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == ("", None, 1)
    assert turn.issues == ("request_not_captured", "answer_not_captured",
                           "model_call_without_content")


def test_a_clean_turn_has_no_issues(tmp_path: Path) -> None:
    def record(r: Any) -> None:
        with r.span("messages.create", _oi_llm([("user", REQUEST)],
                                               {"role": "assistant", "content": ANSWER})):
            pass

    [turn] = turns_of(record, tmp_path)
    assert turn.issues == ()


def test_an_execution_left_beside_an_unanswered_call_is_flagged(tmp_path: Path) -> None:
    """A requested call and an execution of the same tool that no rule can join (other
    arguments, other id) may be one call counted twice: the turn says so."""

    def record(r: Any) -> None:
        with root(r, "un"):
            with r.span("chat", {"gen_ai.operation.name": "chat",
                                 "gen_ai.input.messages": USER_IN,
                                 "gen_ai.output.messages": _j([{"role": "assistant", "tool_calls": [
                                     {"id": "c1", "type": "function", "function": {
                                         "name": "calculator", "arguments": _j(ARGS)}}]}])}):
                pass
            with r.span("execute_tool calculator", {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calculator",
                "gen_ai.tool.call.id": "other", "gen_ai.tool.call.arguments": _j({"x": 1}),
                "gen_ai.tool.call.result": "1",
            }):
                pass

    [turn] = turns_of(record, tmp_path)
    assert len(turn.calls) == 2
    assert "unreconciled_calls" in turn.issues


# --- no message content in `turns.attributes` (issue 17 item 6) ----------------------------


def test_vercel_run_content_stays_out_of_attributes(tmp_path: Path) -> None:
    def record(r: Any) -> None:
        with r.span("ai.generateText", {
            "ai.operationId": "ai.generateText", "ai.telemetry.metadata.sessionId": "v1",
            "ai.prompt": _j({"prompt": REQUEST}), "ai.response.text": ANSWER,
            "ai.model.id": "gpt-4o-mini",
        }), r.span("ai.generateText.doGenerate", {
            "ai.operationId": "ai.generateText.doGenerate",
            "ai.prompt.messages": _j([{"role": "user", "content": [
                {"type": "text", "text": REQUEST}]}]),
            "ai.response.text": ANSWER,
        }):
            pass

    [turn] = turns_of(record, tmp_path)
    attributes = json.loads(turn.attributes)
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)
    assert "ai.prompt" not in attributes and "ai.response.text" not in attributes
    assert attributes["ai.model.id"] == "gpt-4o-mini"
    assert REQUEST not in turn.attributes and ANSWER not in turn.attributes


def test_crewai_results_and_undeclared_echoes_stay_out_of_attributes(tmp_path: Path) -> None:
    """CrewAI under OpenLLMetry declares its content keys; a key no convention declares is
    dropped when its value holds the request, the answer or a tool result (the last line),
    and kept otherwise."""

    def record(r: Any) -> None:
        with r.span("crew.kickoff", {
            "traceloop.span.kind": "workflow", "traceloop.association.properties.session_id": "c",
            "crewai.crew.result": ANSWER, "crewai.crew.tasks_output": _j([{"raw": ANSWER}]),
            "myapp.echo": f"user asked: {REQUEST}", "myapp.nested": _j({"a": [ANSWER]}),
            "myapp.region": "eu-west-1",
        }), r.span("openai.chat", {
            "llm.request.type": "chat",
            "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": REQUEST,
            "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": ANSWER,
        }):
            pass

    [turn] = turns_of(record, tmp_path)
    attributes = json.loads(turn.attributes)
    assert attributes["myapp.region"] == "eu-west-1"
    for key in ("crewai.crew.result", "crewai.crew.tasks_output", "myapp.echo", "myapp.nested"):
        assert key not in attributes, key
    assert REQUEST not in turn.attributes and ANSWER not in turn.attributes


def test_content_lists_are_derived_from_the_conventions() -> None:
    from turnscore.ingest import assemble
    from turnscore.ingest.decode import CONTENT_KEYS, CONVENTIONS

    declared = {k for c in CONVENTIONS for k in c.content_keys}
    assert declared == set(CONTENT_KEYS) == set(assemble._CONTENT_SET)
    assert {"ai.prompt", "ai.response.text", "crewai.crew.result"} <= declared


def test_an_execution_without_id_in_an_unknown_form_joins_by_order(tmp_path: Path) -> None:
    """The last linking rule: same tool, no call id, arguments in a form no unwrapping
    reads: joined in order, not kept as a second call."""

    def record(r: Any) -> None:
        with r.span("agent", {"openinference.span.kind": "AGENT", "session.id": "o"}):
            asks = _oi_call("call_o", "calculator", ARGS)
            with r.span("chat", _oi_llm([("user", REQUEST)], asks)):
                pass
            with r.span("calculator", {"openinference.span.kind": "TOOL",
                                       "tool.name": "calculator",
                                       "input.value": _j({"call": {"expr": "17 * 23 + 4"}}),
                                       "output.value": "395"}):
                pass

    [turn] = turns_of(record, tmp_path)
    assert [(c.call_id, c.result) for c in turn.calls] == [("call_o", "395")]
    assert turn.issues == ()  # pending a later model call: not an answer missing
