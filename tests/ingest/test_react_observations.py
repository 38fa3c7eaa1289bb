"""A tool's result a ReAct framework sends the model as a user message labelled
`Observation:` is no request.

LlamaIndex's ReAct agent renders an observation step as a user message (llama-index-core
`agent/react/formatter.py`, `ReActChatFormatter.format`: `Observation: <result>`, role
user) after the model's `Thought: ... Action: ...` text; smolagents sends its tool
responses as user messages (`models.py`, `tool_role_conversions`: `Observation:\\n<result>`)
and merges the next task into the last one (`New task:\\n<task>`). Read as requests, they
would split the turn at each tool result. Recorded with the real OTel SDK in the OTel GenAI
form (`test_turn_shapes`' helpers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.ingest.test_stack_forms import turns_of
from tests.ingest.test_turn_shapes import (
    A1,
    A2,
    PARIS,
    PARIS_OUT,
    Q1,
    Q2,
    ROME,
    ROME_OUT,
    _j,
    agent,
    asks,
    chat,
    said,
    shape,
    tool,
    user,
)

SYSTEM = {"role": "system", "parts": [{"type": "text", "content": "Answer with the tools."}]}


def _thought(args: dict[str, Any]) -> dict[str, Any]:
    return said(f"Thought: I need the weather.\nAction: get_weather\nAction Input: {_j(args)}")


def test_a_react_observation_sent_as_a_user_message_is_no_request(tmp_path: Path) -> None:
    """LlamaIndex's ReAct loop: one run, the observation a user message after the model's
    action text; one turn of two model calls, answered by the second."""

    def record(r: Any) -> None:
        with agent(r, "react_agent", **{"gen_ai.input.messages": _j([user(Q1)])}):
            h1 = [SYSTEM, user(Q1)]
            chat(r, h1, [_thought(PARIS)])
            with tool(r, "get_weather", None, PARIS, PARIS_OUT):
                pass
            chat(r, [*h1, _thought(PARIS), user(f"Observation: {_j(PARIS_OUT)}")], [said(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 2)


def test_smolagents_next_task_merged_after_an_observation_is_a_request(
    tmp_path: Path,
) -> None:
    """smolagents over one trace per run: a run's observation is no request, and the next
    run's task, merged after the previous run's last observation, is. Each tool span names
    an id the instrumentation made up (OpenLIT: a uuid4), not the model's: the call is
    still one, joined to its execution by name and arguments."""

    def run(r: Any, request: str, history: list[dict[str, Any]], cid: str, args: Any,
            out: Any, answer: str, opening: dict[str, Any]) -> list[dict[str, Any]]:
        with agent(r, "research_assistant", **{"gen_ai.input.messages": _j([user(request)])}):
            h1 = [*history, opening]
            chat(r, h1, [asks((cid, "get_weather", args))])
            with tool(r, "get_weather", f"uuid-{cid}", args, out):
                pass
            calling = said(f"Calling tools:\n[{{'id': '{cid}', 'name': 'get_weather'}}]")
            h2 = [*h1, calling, user(f"Observation:\n{_j(out)}")]
            chat(r, h2, [said(answer)])
        return [*h2, said(answer)]

    def record(r: Any) -> None:
        first = run(r, Q1, [SYSTEM], "c1", PARIS, PARIS_OUT, A1, user(f"New task:\n{Q1}"))
        # The first run's answer is its last observation (smolagents' final_answer tool):
        # the next task is merged after it.
        merged = user(f"Observation:\n{A1}\nNew task:\n{Q2}")
        run(r, Q2, [*first[:-1], said("Calling tools:\n[final_answer]")], "c2", ROME,
            ROME_OUT, A2, merged)

    turns = turns_of(record, tmp_path)
    assert [shape(t) for t in turns] == [(Q1, A1, "ok", 2), (Q2, A2, "ok", 2)]
    assert [[(c.call_id, c.name, c.result, c.status) for c in t.calls] for t in turns] == [
        [("c1", "get_weather", _j(PARIS_OUT), "ok")],
        [("c2", "get_weather", _j(ROME_OUT), "ok")],
    ]



FAILED = "Unknown city: Atlantis"
RETRY = ("Now let's retry: take care not to repeat previous errors! If you have retried "
         "several times, try a completely different approach.\n")


@pytest.mark.parametrize(("relay", "seen"), [
    pytest.param(f"Call id: c1\nObservation:\n{_j(PARIS_OUT)}", (_j(PARIS_OUT), "ok"),
                 id="observation"),
    pytest.param(f"Call id: c1\nError:\n{FAILED}\nPlease try again\n{RETRY}",
                 (FAILED, "error"), id="error"),
])
def test_a_relay_naming_its_call_answers_that_call(
    relay: str, seen: tuple[str, str], tmp_path: Path
) -> None:
    """smolagents names the call a result or a failure answers where its step has one
    (`Call id: <id>` before the label): the relay answers that call, a failure's first
    line its error, the framework's advice after it no part of it."""

    def record(r: Any) -> None:
        with agent(r, "research_assistant", **{"gen_ai.input.messages": _j([user(Q1)])}):
            h1 = [SYSTEM, user(f"New task:\n{Q1}")]
            chat(r, h1, [asks(("c1", "get_weather", PARIS))])
            h2 = [*h1, said("Calling tools:\n[c1]"), user(relay)]
            chat(r, h2, [said(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 2)
    assert [(c.call_id, c.result, c.status) for c in turn.calls] == [("c1", *seen)]
