"""A tool's result a framework relays to the next agent as a user message is no request.

AutoGen AgentChat's Swarm (autogen-agentchat 0.7 `agents/_assistant_agent.py`): the agent a
handoff transfers to is given the transfer tool's result as a user-role `HandoffMessage`
after the user's request, in the same run (OpenInference's AutoGen instrumentation: one
trace, the transfer a TOOL span). A user who says a tool's output again, as a request of
their own, after an answer or in a run of their own, still starts a turn. Recorded with the
real OTel SDK in OpenInference's form (`test_turn_shapes`' helpers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of
from tests.ingest.test_turn_shapes import (
    A1,
    A2,
    PARIS,
    PARIS_OUT,
    Q1,
    _j,
    a,
    a_calls,
    oi_llm,
    oi_span,
    shape,
    t,
    u,
)

RELAY = "Transferred to weather_specialist, adopting the role of weather_specialist immediately."
HANDOFF = ("h1", "transfer_to_weather_specialist", {})
WEATHER = ("c1", "get_weather", PARIS)


def _transfer(r: Any, result: str = RELAY) -> None:
    with oi_span(r, "TOOL", "triage.transfer_to_weather_specialist",
                 **{"tool.name": "transfer_to_weather_specialist", "input.value": "{}",
                    "input.mime_type": "application/json", "output.value": result,
                    "output.mime_type": "text/plain"}):
        pass


def _weather(r: Any) -> None:
    with oi_span(r, "TOOL", "weather.get_weather",
                 **{"tool.name": "get_weather", "input.value": _j(PARIS),
                    "input.mime_type": "application/json", "output.value": _j(PARIS_OUT)}):
        pass


def test_a_handoff_result_relayed_as_a_user_message_is_no_request(tmp_path: Path) -> None:
    """The swarm's one trace: the specialist's input is the request, then the transfer
    tool's result as a user message; its two calls finish the user's turn."""

    def record(r: Any) -> None:
        with oi_span(r, "CHAIN", "Swarm.run_stream"):
            with oi_span(r, "AGENT", "triage.on_messages_stream"):
                oi_llm(r, [u(Q1)], [a_calls(HANDOFF)])
                _transfer(r)
            with oi_span(r, "AGENT", "weather.on_messages_stream"):
                handed = [u(Q1), u(RELAY)]
                oi_llm(r, handed, [a_calls(WEATHER)])
                _weather(r)
                oi_llm(r, [*handed, a_calls(WEATHER), t("c1", PARIS_OUT)], [a(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 3)
    assert [(c.name, c.result) for c in turn.calls] == [
        ("transfer_to_weather_specialist", RELAY), ("get_weather", _j(PARIS_OUT))]


def test_a_relay_after_the_handoffs_context_is_no_request(tmp_path: Path) -> None:
    """AgentChat puts the triage's other calls and their results (the handoff's context)
    before the relayed message: the run has not answered since the request."""
    lookup = ("c0", "get_weather", PARIS)

    def record(r: Any) -> None:
        with oi_span(r, "CHAIN", "Swarm.run_stream"):
            with oi_span(r, "AGENT", "triage.on_messages_stream"):
                oi_llm(r, [u(Q1)], [a_calls(lookup, HANDOFF)])
                _weather(r)
                _transfer(r)
            with oi_span(r, "AGENT", "weather.on_messages_stream"):
                oi_llm(r, [u(Q1), a_calls(lookup), t("c0", PARIS_OUT), u(RELAY)], [a(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 2)


def test_a_user_repeating_a_tools_output_in_another_run_asks_anew(tmp_path: Path) -> None:
    """The second run (a trace of its own, the history replayed) is given, as its request,
    the very text the first run's tool returned: a request, the user's own."""
    from opentelemetry import context, trace

    def run(r: Any, history: list[dict[str, Any]], request: str, answer: str,
            transfer: bool) -> list[dict[str, Any]]:
        token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
        try:
            with (oi_span(r, "CHAIN", "Swarm.run_stream"),
                  oi_span(r, "AGENT", "triage.on_messages_stream")):
                asked = [*history, u(request)]
                if transfer:
                    oi_llm(r, asked, [a_calls(HANDOFF)])
                    _transfer(r)
                    asked = [*asked, a_calls(HANDOFF), t("h1", RELAY)]
                oi_llm(r, asked, [a(answer)])
                return [*asked, a(answer)]
        finally:
            context.detach(token)

    def record(r: Any) -> None:
        history = run(r, [], Q1, A1, transfer=True)
        run(r, history, RELAY, A2, transfer=False)

    first, second = turns_of(record, tmp_path)
    assert [x.request for x in (first, second)] == [Q1, RELAY]
    assert (first.final_answer, second.final_answer) == (A1, A2)
    assert first.conversation_id == second.conversation_id


def test_a_user_repeating_a_tools_output_after_an_answer_asks_anew(tmp_path: Path) -> None:
    """One session trace, two runs: the second request is the first run's tool result,
    said after the first run answered."""

    def record(r: Any) -> None:
        with oi_span(r, "CHAIN", "session"):
            with oi_span(r, "AGENT", "triage.on_messages_stream"):
                oi_llm(r, [u(Q1)], [a_calls(HANDOFF)])
                _transfer(r)
                done = [u(Q1), a_calls(HANDOFF), t("h1", RELAY)]
                oi_llm(r, done, [a(A1)])
            with oi_span(r, "AGENT", "triage.on_messages_stream"):
                oi_llm(r, [*done, a(A1), u(RELAY)], [a(A2)])

    first, second = turns_of(record, tmp_path)
    assert [shape(x) for x in (first, second)] == [(Q1, A1, "ok", 2), (RELAY, A2, "ok", 1)]
