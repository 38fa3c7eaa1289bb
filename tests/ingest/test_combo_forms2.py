"""Forms that show only when two instrumentations record one stack at once, recorded with the
real OTel SDK (the convention fixtures' `Recorder`) in the shapes the recorded stacks
exported (`tests/fixtures/stacks/<stack>`), decoded and assembled.

- Pydantic AI's own `chat` span over a client instrumentation's span of the same call
  (`pydantic-ai-otel-openllmetry`: OpenLLMetry's `openai.chat`; `pydantic-ai-openinference-
  openai`: OpenInference's `ChatCompletion`): a failed tool's result as the framework
  recorded it (the `ToolFailed` text) against what its OpenAI model sent (`{"error": ...}`),
  which only the client's span holds. Before: the framework's text, not what the model saw.
- LangGraph.js under OpenInference's LangChain.js and OpenAI JS instrumentations
  (`langgraph-js-openinference-openai`): the LangChain LLM span's flattened history has
  no call ids (its `input.value` has them), so the client's report of each later call
  (a root of its own) said something else and was counted as a call of its own; streamed,
  the client's record joins parallel tool calls into one, so it says something else still.
- LangGraph.js under OpenLLMetry's LangChain.js and OpenAI JS instrumentations
  (`langgraph-js-openllmetry-openai`): both reports of every call are roots of traces of
  their own; the handler's keeps text only. Before: an empty turn split off each turn's
  first call, and each later call counted twice.
- LangChain v1's `create_agent` under OpenInference's and OpenLLMetry's LangChain
  instrumentations at once (`langchain-v1-openinference-openllmetry`): each handler's
  span tree of the graph, so two tool spans of each run and, streamed, two model-call
  spans of each call that are neither nested nor siblings. Before: every call listed
  twice, every streamed model call counted twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of


def _j(value: Any) -> str:
    return json.dumps(value)


def _genai(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


REQUEST = "What's the weather in Atlantis?"
ANSWER = "I could not find Atlantis."
FAILED = "ValueError: Unknown city: Atlantis"
SYSTEM = _genai("system", "You are a helpful assistant.")
ASKED = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1",
                                         "name": "get_weather",
                                         "arguments": {"city": "Atlantis"}}]}


def _told(result: str) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                       "response": result}]}


def _chat(inputs: list[Any], output: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.input.messages": _j(inputs), "gen_ai.output.messages": _j([output]),
            **more}


def test_nested_client_span_gives_the_result_the_model_was_sent(tmp_path: Path) -> None:
    """Pydantic AI (2.78, GenAI conventions) sends a `ToolFailed` tool return to an OpenAI
    chat model wrapped as `{"error": ...}`; its own `chat` span's input records the failure
    text alone, OpenLLMetry's `openai.chat` under it (0.62) the wire's tool message. The
    call's result is the wire's text, its failure the execution span's."""
    wrapped = _j({"error": FAILED})

    def record(r: Any) -> None:
        with r.span("invoke_agent research_assistant", {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "research_assistant"}):
            with r.span("chat gpt-4o-mini", _chat([SYSTEM, _genai("user", REQUEST)], ASKED,
                                                  **{"gen_ai.provider.name": "openai"})), \
                    r.span("openai.chat", _chat(
                        [SYSTEM, _genai("user", REQUEST)], ASKED,
                        **{"gen_ai.system": "openai", "gen_ai.response.id": "chatcmpl-0",
                           "gen_ai.usage.input_tokens": 40,
                           "gen_ai.usage.output_tokens": 8})):
                pass
            with r.span("execute_tool get_weather", {
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                    "gen_ai.tool.call.id": "call_1",
                    "gen_ai.tool.call.arguments": _j({"city": "Atlantis"})}) as tool:
                from opentelemetry.trace import Status, StatusCode

                tool.set_status(Status(StatusCode.ERROR, FAILED))
            history = [SYSTEM, _genai("user", REQUEST), ASKED]
            with r.span("chat gpt-4o-mini", _chat([*history, _told(FAILED)],
                                                  _genai("assistant", ANSWER),
                                                  **{"gen_ai.provider.name": "openai"})), \
                    r.span("openai.chat", _chat(
                        [*history, _told(wrapped)], _genai("assistant", ANSWER),
                        **{"gen_ai.system": "openai", "gen_ai.response.id": "chatcmpl-1",
                           "gen_ai.usage.input_tokens": 60,
                           "gen_ai.usage.output_tokens": 9})):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 2)
    assert [(c.call_id, c.result, c.status) for c in turn.calls] == [
        ("call_1", wrapped, "error")]


@contextmanager
def apart() -> Iterator[None]:
    """Spans started here are roots of traces of their own, though another span is open:
    an instrumentation that starts its spans with no parent context."""
    from opentelemetry import context, trace

    token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
    try:
        yield
    finally:
        context.detach(token)


@contextmanager
def under(parent: Any) -> Iterator[None]:
    """Spans started here are children of `parent`, whatever span is current: a handler
    that keeps its own run tree."""
    from opentelemetry import context, trace

    token = context.attach(trace.set_span_in_context(parent))
    try:
        yield
    finally:
        context.detach(token)


CALC = {"expression": "17 * 23 + 4"}
CALC_REQUEST = "What is 17 * 23 + 4? Use the calculator."
CALC_ANSWER = "17 * 23 + 4 = 395."


def _lc(kind: str, **kwargs: Any) -> dict[str, Any]:
    """A LangChain message as LangChain.js serializes it."""
    return {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", kind],
            "kwargs": kwargs}


def _oi_messages(prefix: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for i, m in enumerate(messages):
        for key, value in m.items():
            if key == "tool_calls":
                for k, call in enumerate(value):
                    for field, v in call.items():
                        attrs[f"{prefix}.{i}.message.tool_calls.{k}.tool_call.{field}"] = v
            else:
                attrs[f"{prefix}.{i}.message.{key}"] = value
    return attrs


def _chat_parts(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "parts": list(parts)}


def test_langchain_js_llm_span_gives_the_ids_its_serialized_input_keeps(
    tmp_path: Path,
) -> None:
    """OpenInference's LangChain.js instrumentation (4.1) flattens a chat model run's
    history without call ids (`utils.ts`, `formatInputMessages`), while `input.value` keeps
    the serialized messages (`{"messages": [[...]]}`: LangChain's batch of one prompt)
    with the AIMessage's `tool_calls[].id` and the ToolMessage's `tool_call_id`; its OpenAI
    instrumentation's span of each call (4.2) is a root of its own, with the ids. The
    second call's two reports say the same once the ids are read, so each call is counted
    once: before, the second call's report was a model call of its own (3 calls, usage
    counted twice)."""
    asked = {"id": "call_1", "type": "function",
             "function": {"name": "calculator", "arguments": _j(CALC)}}
    history = [_lc("SystemMessage", content="Be terse."),
               _lc("HumanMessage", content=CALC_REQUEST),
               _lc("AIMessage", content="", tool_calls=[
                   {"name": "calculator", "args": CALC, "type": "tool_call", "id": "call_1"}],
                   additional_kwargs={"tool_calls": [asked]}),
               _lc("ToolMessage", content="395", tool_call_id="call_1", name="calculator")]
    flat_calls = [{"function.name": "calculator", "function.arguments": _j(CALC)}]

    def framework(inputs: list[dict[str, Any]], said: dict[str, Any], serialized: Any,
                  tokens: tuple[int, int]) -> dict[str, Any]:
        return {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                **_oi_messages("llm.input_messages", inputs),
                **_oi_messages("llm.output_messages", [said]),
                "input.value": _j({"messages": [serialized]}),
                "llm.token_count.prompt": tokens[0], "llm.token_count.completion": tokens[1]}

    def client(i: int, inputs: list[dict[str, Any]], said: dict[str, Any],
               tokens: tuple[int, int]) -> dict[str, Any]:
        return {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                **_oi_messages("llm.input_messages", inputs),
                **_oi_messages("llm.output_messages", [said]),
                "output.value": _j({"id": f"chatcmpl-{i}", "object": "chat.completion",
                                    "choices": []}),
                "llm.token_count.prompt": tokens[0], "llm.token_count.completion": tokens[1]}

    system = {"role": "system", "content": "Be terse."}
    user = {"role": "user", "content": CALC_REQUEST}
    call_flat = {"role": "assistant", "tool_calls": flat_calls}
    call_ids = {"role": "assistant", "tool_calls": [{"id": "call_1", **flat_calls[0]}]}
    result_flat = {"role": "tool", "content": "395"}
    result_ids = {"role": "tool", "content": "395", "tool_call_id": "call_1"}
    answer = {"role": "assistant", "content": CALC_ANSWER}

    def record(r: Any) -> None:
        with r.span("research_assistant", {"openinference.span.kind": "CHAIN"}):
            with r.span("ChatOpenAI", framework([system, user], call_ids, history[:2],
                                                (41, 47))), apart(), \
                    r.span("OpenAI Chat Completions", client(0, [system, user], call_ids,
                                                             (41, 47))):
                pass
            with r.span("calculator", {"openinference.span.kind": "TOOL",
                                       "tool.name": "calculator", "input.value": _j(CALC),
                                       "output.value": "395"}):
                pass
            with r.span("ChatOpenAI", framework([system, user, call_flat, result_flat],
                                                answer, history, (120, 13))), apart(), \
                    r.span("OpenAI Chat Completions", client(
                        1, [system, user, call_ids, result_ids], answer, (120, 13))):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (CALC_REQUEST, CALC_ANSWER)
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 161, 60)
    assert [(c.call_id, c.name, c.result) for c in turn.calls] == [
        ("call_1", "calculator", "395")]


def test_two_root_reports_of_one_call_are_one_call(tmp_path: Path) -> None:
    """OpenLLMetry's LangChain.js handler (0.27, `callback_handler.ts`) starts each span
    as a root and keeps text parts only (a call asking for tools says nothing; the history
    it replays has no calls and no ids); its OpenAI instrumentation's span of the call,
    started within it, is a root too, with the wire's messages and response id. Both
    reports are lone traces: each pair is one call. Before: the first call's handler
    report made an empty turn of its own and every later call was counted twice."""
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini"}
    system = _genai("system", "Be terse.")
    user = _genai("user", CALC_REQUEST)
    ask = {"type": "tool_call", "id": "call_1", "name": "calculator", "arguments": CALC}
    told = {"type": "tool_call_response", "id": "call_1", "response": "395"}

    def handler(inputs: list[Any], said: list[Any], tokens: tuple[int, int]) -> dict[str, Any]:
        return {**chat, "gen_ai.input.messages": _j(inputs),
                "gen_ai.output.messages": _j(said), "gen_ai.usage.input_tokens": tokens[0],
                "gen_ai.usage.output_tokens": tokens[1]}

    def client(i: int, inputs: list[Any], said: list[Any],
               tokens: tuple[int, int]) -> dict[str, Any]:
        return {**handler(inputs, said, tokens), "gen_ai.response.id": f"chatcmpl-{i}"}

    def record(r: Any) -> None:
        with apart(), r.span("chat gpt-4o-mini", handler(
                [system, user], [_genai("assistant", "")], (41, 47))), apart(), \
                r.span("chat gpt-4o-mini", client(
                    0, [system, user], [_chat_parts("assistant", ask)], (41, 47))):
            pass
        with apart(), r.span("execute_tool DynamicStructuredTool", {
                "gen_ai.operation.name": "execute_tool", "traceloop.span.kind": "tool"}):
            pass
        with apart(), r.span("chat gpt-4o-mini", handler(
                [system, user, _genai("assistant", ""), {"role": "tool", "parts": [
                    {"type": "text", "content": "395"}]}],
                [_genai("assistant", CALC_ANSWER)], (120, 13))), apart(), \
                r.span("chat gpt-4o-mini", client(
                    1, [system, user, _chat_parts("assistant", ask),
                        _chat_parts("tool", told)],
                    [_genai("assistant", CALC_ANSWER)], (120, 13))):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (CALC_REQUEST, CALC_ANSWER, "ok")
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 161, 60)
    assert [(c.call_id, c.name, c.result) for c in turn.calls] == [
        ("call_1", "calculator", "395")]


def test_two_runs_of_one_handler_at_once_stay_two(tmp_path: Path) -> None:
    """The handler's report alone, twice at once (two runs of one prompt, the second
    started within the first): neither names a response, so neither is the other's
    report, and each run keeps its turn."""
    said = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.input.messages": _j([_genai("user", "Say hello in French.")]),
            "gen_ai.output.messages": _j([_genai("assistant", "Bonjour !")]),
            "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 4}

    def record(r: Any) -> None:
        with apart(), r.span("chat gpt-4o-mini", said), apart(), \
                r.span("chat gpt-4o-mini", said):
            pass

    turns = turns_of(record, tmp_path)
    assert [(t.request, t.final_answer, t.llm_calls) for t in turns] == [
        ("Say hello in French.", "Bonjour !", 1)] * 2


def test_two_langchain_handlers_report_one_run_once(tmp_path: Path) -> None:
    """OpenInference's and OpenLLMetry's LangChain instrumentations at once (0.1.x and
    0.62 on langchain 1.x's `create_agent`): each handler makes its own span of each graph
    node, so a model call is a `ChatOpenAI` LLM span under OpenInference's `model` chain
    and a `ChatOpenAI.chat` span under OpenLLMetry's `execute_task model` (neither the
    other's parent or sibling; streamed, neither names the response), and a tool run a
    TOOL span and an `execute_tool` span. Each call and each run once: before, every call
    of the turn was listed twice and a streamed turn counted each model call twice."""
    oi = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
          "session.id": "s1"}
    system = {"role": "system", "content": "Be terse."}
    user = {"role": "user", "content": CALC_REQUEST}
    asked = {"role": "assistant", "tool_calls": [
        {"id": "call_1", "function.name": "calculator", "function.arguments": _j(CALC)}]}
    told = {"role": "tool", "content": "395", "tool_call_id": "call_1"}
    answer = {"role": "assistant", "content": CALC_ANSWER}
    ask = {"type": "tool_call", "id": "call_1", "name": "calculator", "arguments": CALC}

    def llmetry(inputs: list[Any], said: list[Any]) -> dict[str, Any]:
        return {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.conversation.id": "s1", "gen_ai.input.messages": _j(inputs),
                "gen_ai.output.messages": _j(said)}

    @contextmanager
    def step(r: Any, top: Any, node: str) -> Iterator[tuple[Any, Any]]:
        """Each handler's span of one graph node, side by side under the run's span."""
        with under(top), r.span(node, {"openinference.span.kind": "CHAIN"}) as mine, \
                under(top), r.span(f"execute_task {node}",
                                   {"gen_ai.operation.name": "execute_task"}) as theirs:
            yield mine, theirs

    def chat(r: Any, top: Any, inputs: list[Any], said: list[Any], inputs_genai: list[Any],
             said_genai: list[Any]) -> None:
        with step(r, top, "model") as (mine, theirs), under(mine), r.span("ChatOpenAI", {
                **oi, **_oi_messages("llm.input_messages", inputs),
                **_oi_messages("llm.output_messages", said)}), \
                under(theirs), r.span("ChatOpenAI.chat", llmetry(inputs_genai, said_genai)):
            pass

    def record(r: Any) -> None:
        with r.span("invoke_agent research_assistant", {
                "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "s1",
                "gen_ai.agent.name": "research_assistant"}) as top:
            chat(r, top, [system, user], [asked], [_genai("user", CALC_REQUEST)],
                 [_chat_parts("assistant", ask)])
            with step(r, top, "tools") as (mine, theirs), under(mine), r.span("calculator", {
                    "openinference.span.kind": "TOOL", "tool.name": "calculator",
                    "input.value": _j(CALC), "output.value": "395"}), \
                    under(theirs), r.span("execute_tool calculator", {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "calculator", "gen_ai.tool.call.id": "call_1",
                        "gen_ai.tool.call.arguments": _j(CALC),
                        "gen_ai.tool.call.result": "395"}):
                pass
            chat(r, top, [system, user, asked, told], [answer],
                 [_genai("user", CALC_REQUEST), _chat_parts("assistant", ask),
                  _chat_parts("tool", {"type": "tool_call_response", "id": "call_1",
                                       "response": "395"})],
                 [_genai("assistant", CALC_ANSWER)])

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (CALC_REQUEST, CALC_ANSWER, 2)
    assert [(c.call_id, c.name, c.arguments, c.result) for c in turn.calls] == [
        ("call_1", "calculator", '{"expression":"17 * 23 + 4"}', "395")]


def test_client_report_of_a_stream_that_says_something_else_is_still_the_call(
    tmp_path: Path,
) -> None:
    """OpenInference's OpenAI JS instrumentation (4.2.7) accumulates a stream's tool call
    deltas without their index: two parallel calls are recorded as one, ids, names and
    arguments concatenated. Its report of the call (a root of its own, no response id: a
    stream) says something else than the LangChain span of the call, and was sent the
    same: it is that call's report, not a call of its own. Before: an incomplete second
    turn with a call of a tool named `get_weathersearch_docs`."""
    request = "What's the weather in Paris, and what do the docs say about rate limits?"
    weather, docs = {"city": "Paris"}, {"query": "rate limits"}
    asked = {"role": "assistant", "tool_calls": [
        {"id": "call_a", "function.name": "get_weather", "function.arguments": _j(weather)},
        {"id": "call_b", "function.name": "search_docs", "function.arguments": _j(docs)}]}
    joined = {"role": "assistant", "tool_calls": [
        {"id": "call_acall_b", "function.name": "get_weathersearch_docs",
         "function.arguments": _j(weather) + _j(docs)}]}
    user = {"role": "user", "content": request}
    told = [{"role": "tool", "content": "18C", "tool_call_id": "call_a"},
            {"role": "tool", "content": "60 per minute", "tool_call_id": "call_b"}]
    answer = {"role": "assistant", "content": "18C; 60 requests per minute."}

    def llm(inputs: list[dict[str, Any]], said: dict[str, Any]) -> dict[str, Any]:
        return {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                **_oi_messages("llm.input_messages", inputs),
                **_oi_messages("llm.output_messages", [said])}

    def record(r: Any) -> None:
        with r.span("research_assistant", {"openinference.span.kind": "CHAIN"}):
            with r.span("ChatOpenAI", llm([user], asked)), apart(), \
                    r.span("OpenAI Chat Completions", llm([user], joined)):
                pass
            for name, args, result in (("get_weather", weather, "18C"),
                                       ("search_docs", docs, "60 per minute")):
                with r.span(name, {"openinference.span.kind": "TOOL", "tool.name": name,
                                   "input.value": _j(args), "output.value": result}):
                    pass
            with r.span("ChatOpenAI", llm([user, asked, *told], answer)), apart(), \
                    r.span("OpenAI Chat Completions", llm([user, asked, *told], answer)):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (
        request, answer["content"], 2)
    assert [(c.call_id, c.name, c.result) for c in turn.calls] == [
        ("call_a", "get_weather", "18C"), ("call_b", "search_docs", "60 per minute")]
