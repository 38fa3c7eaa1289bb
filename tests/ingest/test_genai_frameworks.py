"""The OTel project's GenAI framework instrumentations (opentelemetry-python-genai 1.3b0, on
opentelemetry-util-genai) over frameworks that hand the OpenAI client their own message
objects: what the client instrumentation records of them. Recorded with the real OTel SDK in
the current OTel GenAI form (`test_turn_shapes`' helpers); the stacks themselves are
`tests/fixtures/stacks/genai-*`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of
from tests.ingest.test_turn_shapes import agent, asks, chat, said
from turnscore.ingest.conventions.messages import normalize_role

PROMPT = "You are an expert assistant who can solve any task using tool calls."
TASK = "New task:\nWhat is 17 * 23 + 4? Use the calculator."
CALC = ("call_1", "calculator", {"expression": "17 * 23 + 4"})


def _enum(role: str, text: str) -> dict[str, Any]:
    """A message as the OTel OpenAI instrumentation records smolagents' (`str(role)` of a
    `MessageRole(str, Enum)` member: `MessageRole.SYSTEM`)."""
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def test_a_role_recorded_as_an_enum_members_str_is_its_value() -> None:
    assert [normalize_role(f"MessageRole.{m}") for m in
            ("SYSTEM", "USER", "ASSISTANT", "TOOL_CALL", "TOOL_RESPONSE")] == [
        "system", "user", "assistant", "assistant", "tool"]  # fmt: skip
    # Not a role: left as it was (an unknown role stays unknown, not a guess).
    assert normalize_role("Speaker.NARRATOR") == "speaker.narrator"


def test_smolagents_messages_under_the_otel_openai_instrumentation(tmp_path: Path) -> None:
    """smolagents' ToolCallingAgent on OpenAIServerModel, the client instrumented
    (`genai-smolagents-openai`): the system prompt and the relayed `Observation:` are
    read through their enum roles, so the turn has its instructions and the call's
    result."""
    system, task = _enum("MessageRole.SYSTEM", PROMPT), _enum("MessageRole.USER", TASK)
    replay = _enum("MessageRole.ASSISTANT", "Calling tools:\n[{'id': 'call_1', ...}]")
    observed = _enum("MessageRole.USER", "Observation:\n395")

    def record(r: Any) -> None:
        with agent(r, "research_assistant"):
            chat(r, [system, task], [asks(CALC)])
            chat(r, [system, task, replay, observed], [said("17 * 23 + 4 = 395.")])

    [turn] = turns_of(record, tmp_path)
    assert turn.system_instructions == PROMPT
    assert [(c.name, c.call_id, c.result) for c in turn.calls] == [("calculator", "call_1", "395")]
    assert turn.final_answer == "17 * 23 + 4 = 395."
