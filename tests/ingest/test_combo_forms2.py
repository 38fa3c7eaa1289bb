"""Forms that show only when two instrumentations record one stack at once, recorded with the
real OTel SDK (the convention fixtures' `Recorder`) in the shapes the recorded stacks
exported (`tests/fixtures/stacks/<stack>`), decoded and assembled.

- Pydantic AI's own `chat` span over a client instrumentation's span of the same call
  (`pydantic-ai-otel-openllmetry`: OpenLLMetry's `openai.chat`; `pydantic-ai-openinference-
  openai`: OpenInference's `ChatCompletion`): a failed tool's result as the framework
  recorded it (the `ToolFailed` text) against what its OpenAI model sent (`{"error": ...}`),
  which only the client's span holds. Before: the framework's text, not what the model saw.
"""

from __future__ import annotations

import json
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
