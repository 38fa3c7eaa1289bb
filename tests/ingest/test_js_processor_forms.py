"""Forms of Node SDKs that rewrite or summarise spans before export, recorded with the real
OTel SDK (the convention fixtures' `Recorder`) in the shapes their recordings hold
(`tests/fixtures/stacks/vercel-ai-traceloop*`, `langfuse-js-openai-stream`), each rule on
its own:

- Traceloop's span processor (`@traceloop/node-server-sdk` 0.27) keeps an AI SDK tool
  span's `ai.operationId` but moves its `ai.toolCall.*` keys to `gen_ai.tool.*`: the
  Vercel convention then has no say on the call, the GenAI one has (`conventions.vercel`).
- The same processor writes a streamed tool-call step as one empty text part: that output
  says nothing, and the calls are the ones the next step replays (`linking._has_output`).
- `@langfuse/openai` 5.x records a streamed tool-call output as one id-less call, the last
  name and every call's arguments joined: the next request's calls are the step's
  (`conventions.langfuse._streamed_calls`, `linking._merged`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of

REQUEST = "What's the weather in Paris, and what do the docs say about rate limits?"
ANSWER = "It is 18C in Paris; the docs allow 60 requests per minute."
SYSTEM = "You are a helpful assistant."
WEATHER_ARGS = {"city": "Paris"}
DOCS_ARGS = {"query": "rate limits"}
WEATHER = {"city": "Paris", "temperature": 18}
DOCS = [{"id": "rate-01", "snippet": "60 requests per minute"}]
CALLS = [("call_0", "get_weather", WEATHER_ARGS, WEATHER),
         ("call_1", "search_docs", DOCS_ARGS, DOCS)]


def _j(value: Any) -> str:
    return json.dumps(value)


def _genai_history(with_calls: bool) -> str:
    """`gen_ai.input.messages` as Traceloop writes an AI SDK step's prompt."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
        {"role": "user", "parts": [{"type": "text", "content": REQUEST}]},
    ]
    if with_calls:
        messages.append({"role": "assistant", "parts": [
            {"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a, _ in CALLS]})
        messages.append({"role": "tool", "parts": [
            {"type": "tool_call_response", "id": i, "response": r} for i, _, _, r in CALLS]})
    return _j(messages)


def _traceloop_step(with_calls: bool, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {"ai.operationId": "ai.streamText.doStream", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini", "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": _genai_history(with_calls),
            "gen_ai.output.messages": _j(output)}


def _traceloop_tool(call_id: str, name: str, args: Any, result: Any) -> dict[str, Any]:
    """A tool span after Traceloop's `transformToolCallAttributes` / `transformToolCalls`."""
    return {"ai.operationId": "ai.toolCall", "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.call.arguments": _j(args), "gen_ai.tool.call.result": _j(result),
            "traceloop.span.kind": "tool", "traceloop.entity.name": name,
            "traceloop.entity.input": _j(args), "traceloop.entity.output": _j(result)}


def _record_traceloop(r: Any, first_output: list[dict[str, Any]], ran: list[Any]) -> None:
    """A run: the step asking for the calls, the tool spans in the order `ran`, the answer."""
    with r.span("chat gpt-4o-mini", {"ai.operationId": "ai.streamText",
                                     "ai.telemetry.functionId": "research_assistant"}):
        with r.span("chat gpt-4o-mini", _traceloop_step(False, first_output)):
            pass
        for call_id, name, args, result in ran:
            with r.span(f"execute_tool {name}", _traceloop_tool(call_id, name, args, result)):
                pass
        answer = [{"role": "assistant", "finish_reason": "stop",
                   "parts": [{"type": "text", "content": ANSWER}]}]
        with r.span("chat gpt-4o-mini", _traceloop_step(True, answer)):
            pass


def _calls(turn: Any) -> list[tuple[str | None, str, Any, Any]]:
    return [(c.call_id, c.name, json.loads(c.arguments), json.loads(c.result))
            for c in turn.calls]


def _expected() -> list[tuple[str | None, str, Any, Any]]:
    return [(i, n, a, r) for i, n, a, r in CALLS]


def test_traceloop_rewritten_tool_spans_are_the_calls(tmp_path: Path) -> None:
    """AI SDK's non-streamed step (its calls in its output) beside Traceloop's tool spans:
    each span is the call it ran, not an extra call named for the span."""
    asked = [{"role": "assistant", "finish_reason": "tool_call", "parts": [
        {"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a, _ in CALLS]}]
    turns = turns_of(lambda r: _record_traceloop(r, asked, CALLS), tmp_path)
    assert [(t.request, t.final_answer) for t in turns] == [(REQUEST, ANSWER)]
    assert _calls(turns[0]) == _expected()


def test_an_empty_streamed_output_takes_the_calls_the_next_step_replays(
    tmp_path: Path,
) -> None:
    """Traceloop's streamed tool-call step: one empty text part, no calls. The calls, in the
    order the model asked for them, are the next step's replayed assistant message's, not
    the order the parallel calls happened to run in."""
    said_nothing = [{"role": "assistant", "finish_reason": "tool_call",
                     "parts": [{"type": "text", "content": ""}]}]
    turns = turns_of(lambda r: _record_traceloop(r, said_nothing, CALLS[::-1]), tmp_path)
    assert [(t.request, t.final_answer) for t in turns] == [(REQUEST, ANSWER)]
    assert _calls(turns[0]) == _expected()


def _langfuse(kind: str, value_in: Any, value_out: Any) -> dict[str, Any]:
    return {"langfuse.observation.type": kind, "session.id": "sess-1",
            "langfuse.observation.input": value_in if isinstance(value_in, str) else _j(value_in),
            "langfuse.observation.output": value_out if isinstance(value_out, str)
            else _j(value_out)}


def _openai_history(with_calls: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM},
                                      {"role": "user", "content": REQUEST}]
    if with_calls:
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": _j(a)}}
            for i, n, a, _ in CALLS]})
        messages += [{"role": "tool", "tool_call_id": i, "content": _j(r)}
                     for i, _, _, r in CALLS]
    return {"messages": messages, "tools": [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for _, n, _, _ in CALLS]}


def test_langfuse_js_streamed_calls_joined_into_one_are_the_replayed_calls(
    tmp_path: Path,
) -> None:
    """`getToolCallOutput`'s one call: the last name, both arguments one after the other."""
    joined = {"tool_calls": [{"function": {
        "name": "search_docs", "arguments": '{"city": "Paris"}{"query": "rate limits"}'}}]}

    def record(r: Any) -> None:
        with r.span("research_assistant", _langfuse("agent", REQUEST, ANSWER)):
            with r.span("OpenAI.chat", _langfuse("generation", _openai_history(False), joined)):
                pass
            for _, name, args, result in CALLS:
                with r.span(name, _langfuse("tool", args, result)):
                    pass
            with r.span("OpenAI.chat", _langfuse("generation", _openai_history(True), ANSWER)):
                pass

    turns = turns_of(record, tmp_path)
    assert [(t.request, t.final_answer) for t in turns] == [(REQUEST, ANSWER)]
    assert _calls(turns[0]) == _expected()


def test_langfuse_js_one_streamed_call_takes_its_replayed_id(tmp_path: Path) -> None:
    """One streamed call: no id in the output, the id the next request replays."""
    call_id, name, args, result = CALLS[0]
    streamed = {"tool_calls": [{"function": {"name": name, "arguments": _j(args)}}]}
    replayed = _openai_history(True)
    replayed["messages"] = [m for m in replayed["messages"]
                            if m.get("tool_call_id") in (None, call_id)]
    replayed["messages"][2]["tool_calls"] = replayed["messages"][2]["tool_calls"][:1]

    def record(r: Any) -> None:
        with r.span("research_assistant", _langfuse("agent", REQUEST, ANSWER)):
            with r.span("OpenAI.chat",
                        _langfuse("generation", _openai_history(False), streamed)):
                pass
            with r.span(name, _langfuse("tool", args, result)):
                pass
            with r.span("OpenAI.chat", _langfuse("generation", replayed, ANSWER)):
                pass

    turns = turns_of(record, tmp_path)
    assert _calls(turns[0]) == [(call_id, name, args, result)]
