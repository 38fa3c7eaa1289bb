"""AgentOps' own spans (`conventions.agentops`), recorded with the real OTel SDK in the form
agentops 0.4.21 exports an OpenAI Agents SDK run: its processor's spans of the SDK's trace
(`agentops.span.kind` agent / llm / tool, `instrumentation/agentic/openai_agents/`) beside
its OpenAI instrumentation's `openai.chat.completion` under the session span
(`instrumentation/providers/openai/`), and a decorated tool of its SDK (`sdk/decorators/`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from tests.ingest.test_stack_forms import turns_of
from turnscore.ingest.conventions import agentops
from turnscore.ingest.conventions.base import SpanView
from turnscore.ingest.model import SpanKind

SYSTEM = "You are a helpful assistant."
Q1 = "What's the weather in Atlantis?"
ARGS = {"city": "Atlantis"}
FAILED = "An error occurred while running the tool. Please try again."
A1 = "Sorry, the weather service failed for Atlantis."
WEATHER = {"name": "get_weather", "description": "Weather for a city.",
           "parameters": json.dumps({"type": "object", "properties": {"city": {"type": "string"}}})}


def _prompt(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The OpenAI instrumentation's flattened prompt (OpenLLMetry's legacy keys)."""
    out: dict[str, Any] = {}
    for i, m in enumerate(messages):
        out[f"gen_ai.prompt.{i}.role"] = m["role"]
        if m.get("content") is not None:
            out[f"gen_ai.prompt.{i}.content"] = m["content"]
        if "tool_call_id" in m:
            out[f"gen_ai.prompt.{i}.tool_call_id"] = m["tool_call_id"]
        for k, c in enumerate(m.get("tool_calls", ())):
            out[f"gen_ai.prompt.{i}.tool_calls.{k}.id"] = c["id"]
            out[f"gen_ai.prompt.{i}.tool_calls.{k}.name"] = c["function"]["name"]
            out[f"gen_ai.prompt.{i}.tool_calls.{k}.arguments"] = c["function"]["arguments"]
    return out


def _completion(answer: str | None, call: dict[str, Any] | None, n: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "gen_ai.request.type": "chat", "gen_ai.system": "OpenAI",
        "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.id": f"chatcmpl-{n}",
        "gen_ai.usage.prompt_tokens": 40 + n, "gen_ai.usage.completion_tokens": 10,
        "gen_ai.completion.0.role": "assistant",
        **{f"gen_ai.request.functions.0.{k}": v for k, v in WEATHER.items()},
    }
    if answer is not None:
        out["gen_ai.completion.0.content"] = answer
    if call is not None:
        out["gen_ai.completion.0.tool_calls.0.id"] = call["id"]
        out["gen_ai.completion.0.tool_calls.0.name"] = call["function"]["name"]
        out["gen_ai.completion.0.tool_calls.0.arguments"] = call["function"]["arguments"]
    return out


@contextmanager
def _kind(r: Any, name: str, kind: str, **attrs: Any) -> Iterator[Any]:
    with r.span(name, {"agentops.span.kind": kind, **attrs}) as s:
        yield s


def _run(r: Any, instrumented: bool) -> None:
    """One run: a call asking for get_weather, the tool failing (recorded OK), an answer."""
    call = {"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps(ARGS)}}
    first = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": Q1}]
    second = [*first, {"role": "assistant", "tool_calls": [call]},
              {"role": "tool", "tool_call_id": "call_1", "content": FAILED}]
    agent = {"agent.name": "assistant", "agent.tools": '["get_weather"]'}
    # `@agentops.session`'s record of its function's call: content, none of the turn's texts.
    called = json.dumps({"args": [], "kwargs": {"notes": "the user's earlier chat, verbatim"}})
    with (_kind(r, "demo.session", "session", **{"operation.name": "demo",
                                                 "agentops.session.input": called}) as session,
          r.span("Agent workflow", {"workflow.name": "Agent workflow"}),
          _kind(r, "assistant", "agent", **agent)):
        for n, (sent, answer, asked) in enumerate(((first, None, call), (second, A1, None))):
            with r.span("turn", {}):
                with _kind(r, "generation", "llm", **{
                        "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": json.dumps(sent),
                        "gen_ai.request.model": "gpt-4o-mini"}):
                    if instrumented:  # not under the generation: the session's child
                        at = trace.set_span_in_context(session)
                        r.tracer.start_span("openai.chat.completion", context=at, attributes={
                            **_prompt(sent), **_completion(answer, asked, n)}).end()
                if asked is not None:
                    _failed_tool(r)


def _failed_tool(r: Any) -> None:
    """The processor's function span of a tool that raised: error attributes and an
    exception event, but the OK status it set first (final in the OTel SDK)."""
    with _kind(r, "get_weather", "tool", **{
            "tool.name": "get_weather", "tool.parameters": json.dumps(ARGS),
            "tool.result": FAILED, "tool.status": "succeeded"}) as s:
        s.set_status(Status(StatusCode.OK))
        s.record_exception(Exception("Error running tool (non-fatal)"))
        s.set_attribute("error.type", "AgentError")
        s.set_attribute("error.message", "Error running tool (non-fatal)")
        s.set_status(Status(StatusCode.ERROR))  # ignored: OK was set


def test_a_generation_and_the_clients_span_of_it_are_one_call(tmp_path: Path) -> None:
    [turn] = turns_of(lambda r: _run(r, instrumented=True), tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (Q1, A1, 2)
    assert (turn.input_tokens, turn.output_tokens) == (81, 20)
    assert turn.agent_name == "assistant"
    [call] = turn.calls
    assert (call.name, call.call_id, call.result, call.status) == (
        "get_weather", "call_1", FAILED, "error")
    attributes = json.loads(turn.attributes)
    assert "agentops.session.input" not in attributes
    assert attributes["operation.name"] == "demo"


def test_agentops_content_is_its_own() -> None:
    """Declared by AgentOps, not left to OpenInference, whose TOOL spans share `tool.*`."""
    assert {"tool.parameters", "tool.result", "agentops.tool.input", "agentops.session.input",
            "workflow.input"} <= set(agentops.AGENTOPS.content_keys)


def test_a_generation_alone_is_the_call(tmp_path: Path) -> None:
    """Without AgentOps' OpenAI instrumentation (`instrument_llm_calls=False`) the
    processor's record is the only report of each call: both stay calls."""
    [turn] = turns_of(lambda r: _run(r, instrumented=False), tmp_path)
    assert (turn.request, turn.llm_calls, turn.agent_name) == (Q1, 2, "assistant")


def test_a_decorated_tool_is_an_execution() -> None:
    """`@agentops.tool`: its call's keyword arguments and what it returned, JSON text."""
    view = SpanView("s1", "get_weather.tool", {
        "agentops.span.kind": "tool", "operation.name": "get_weather",
        "agentops.tool.input": json.dumps({"args": [], "kwargs": ARGS}),
        "agentops.tool.output": json.dumps({"temperature": 18})})
    decoded = agentops.decode(view, [])
    assert decoded.kind is SpanKind.TOOL
    assert decoded.tool_execution is not None
    assert (decoded.tool_execution.name, decoded.tool_execution.arguments,
            decoded.tool_execution.result, decoded.tool_execution.error) == (
        "get_weather", '{"city":"Atlantis"}', '{"temperature":18}', None)
