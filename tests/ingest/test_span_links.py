"""Traces joined only by an OTel span link (`Span.continues`, `grouping` rule 3): an agent
runtime that passes a message from one agent's run to the next starts a trace per message,
whose root (a messaging span) links to the sender's span. Real OTel SDK exports."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import context, trace
from opentelemetry.trace import Link, SpanContext, SpanKind

from tests.fixtures.conventions.build import Recorder
from tests.ingest.test_stack_cuts import per_trace
from tests.ingest.test_stack_forms import turns_of
from tests.ingest.test_turn_shapes import (
    A1,
    PARIS,
    PARIS_OUT,
    Q1,
    Q2,
    agent,
    answers,
    asks,
    chat,
    said,
    tool,
    user,
)
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.store import TurnStore
from turnscore.ingest.turn import Turn

HANDOFF = ("h1", "transfer_to_weather", {})
WEATHER = ("c1", "get_weather", PARIS)


@contextmanager
def message(r: Any, name: str, links: Sequence[SpanContext], **attrs: Any) -> Iterator[Any]:
    """The root of a trace of its own, linked to the spans that sent its message."""
    token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
    try:
        with r.tracer.start_as_current_span(name, kind=SpanKind.CONSUMER,
                                            links=[Link(c) for c in links],
                                            attributes=attrs) as span:  # fmt: skip
            yield span
    finally:
        context.detach(token)


def sent(r: Any, to: str) -> SpanContext:
    """A `create` span for a message to `to`, as AutoGen core's runtime makes one."""
    with r.span(f"create {to}", {"messaging.operation": "create"}, kind=SpanKind.PRODUCER) as s:
        return s.get_span_context()  # type: ignore[no-any-return]


def blind_chat(r: Any) -> None:
    """A model call whose content was not captured: its usage only."""
    with r.span("chat gpt-4o", {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                                "gen_ai.request.model": "gpt-4o",
                                "gen_ai.usage.input_tokens": 100,
                                "gen_ai.usage.output_tokens": 10}):
        pass


TRANSFERRED = "Transferred to weather, adopting the role of weather."


def handoff(r: Any, request: str = Q1, captured: bool = True, relayed: bool = False) -> None:
    """Triage runs in one trace and hands the request to the weather agent, whose run is
    a trace of its own, linked to the message triage sent. Unless `captured`, the weather
    agent's service records no message content (nothing but the link joins the two). If
    `relayed`, the weather agent is told the transfer's result as a user message (AutoGen
    AgentChat's HandoffMessage)."""
    with message(r, "process triage", [], **{"messaging.operation": "process"}), \
            agent(r, "triage"):  # fmt: skip
        chat(r, [user(request)], [asks(HANDOFF)])
        with tool(r, "transfer_to_weather", "h1", {}, TRANSFERRED):
            pass
        created = sent(r, "weather")
    with message(r, "process weather", [created], **{"messaging.operation": "process"}), \
            agent(r, "weather"):  # fmt: skip
        if not captured:
            blind_chat(r)
            with tool(r, "get_weather", "c1", PARIS, PARIS_OUT):
                pass
            blind_chat(r)
            return
        given = [user(request), *([user(TRANSFERRED)] if relayed else [])]
        chat(r, given, [asks(WEATHER)])
        with tool(r, "get_weather", "c1", PARIS, PARIS_OUT):
            pass
        chat(r, [*given, asks(WEATHER), answers(("c1", PARIS_OUT))], [said(A1)])


def _one_handoff_turn(turns: list[Turn]) -> None:
    [turn] = turns
    assert (turn.request, turn.final_answer, turn.llm_calls, turn.agent_name) == (
        Q1, A1, 3, "triage")
    assert [(c.name, c.status) for c in turn.calls] == [
        ("transfer_to_weather", "ok"), ("get_weather", "ok")]


@pytest.mark.parametrize("relayed", [False, True], ids=["handed", "relayed"])
def test_a_message_passed_to_another_agents_run_continues_the_turn(
    tmp_path: Path, relayed: bool
) -> None:
    """The weather agent's run is the turn's, whether it is handed the request alone or
    also the transfer's result as a user message: a result of a tool its run (the triage's,
    which its trace continues) executed, no new request."""
    _one_handoff_turn(turns_of(lambda r: handoff(r, relayed=relayed), tmp_path))


def _uncaptured_handoff(r: Any, answered: bool) -> None:
    """As `handoff(relayed=True)` with the transfer's result captured nowhere but in the
    weather agent's user message (AutoGen's Swarm under openai-v2, which records no tool
    span content). If `answered`, the weather agent's thread has an answer before that
    user message."""
    with message(r, "process triage", [], **{"messaging.operation": "process"}), \
            agent(r, "triage"):  # fmt: skip
        chat(r, [user(Q1)], [asks(HANDOFF)])
        with r.span("execute_tool transfer_to_weather",
                    {"gen_ai.operation.name": "execute_tool",
                     "gen_ai.tool.name": "transfer_to_weather", "gen_ai.tool.call.id": "h1"}):
            pass
        created = sent(r, "weather")
    with message(r, "process weather", [created], **{"messaging.operation": "process"}), \
            agent(r, "weather"):  # fmt: skip
        given = [user(Q1), *([said("Sure.")] if answered else []), user(TRANSFERRED)]
        chat(r, given, [asks(WEATHER)])
        with tool(r, "get_weather", "c1", PARIS, PARIS_OUT):
            pass
        chat(r, [*given, asks(WEATHER), answers(("c1", PARIS_OUT))], [said(A1)])


def test_a_result_relayed_as_a_user_message_and_captured_nowhere_else_continues_the_turn(
    tmp_path: Path,
) -> None:
    """The run had not answered since the request (triage only asked for the transfer) and
    ran a tool whose result the export holds nowhere: the user message after the request
    is that result (`assemble._relayed_results`), the transfer's, and the turn goes on."""
    [turn] = turns_of(lambda r: _uncaptured_handoff(r, answered=False), tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (Q1, A1, 3)
    assert [(c.name, c.result) for c in turn.calls] == [
        ("transfer_to_weather", TRANSFERRED),
        ("get_weather", json.dumps(PARIS_OUT, separators=(",", ":")))]


def test_a_user_message_after_an_answer_is_a_new_request(tmp_path: Path) -> None:
    """After an answer, a user message the linked run is handed is the user speaking
    again, whatever tool result the export lacks: it starts a turn."""
    turns = turns_of(lambda r: _uncaptured_handoff(r, answered=True), tmp_path)
    assert [t.request for t in turns] == [Q1, TRANSFERRED]


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_the_linked_traces_find_each_other_across_batches(tmp_path: Path, order: str) -> None:
    """The trace that links and the trace it links to, ingested by separate runs in either
    order, rebuild one turn: the store finds each from the other."""
    r = Recorder("runtime")
    handoff(r, captured=False)
    (tmp_path / "export").mkdir()
    (tmp_path / "cut").mkdir()
    files = per_trace(r.write(tmp_path / "export", "handoff"), tmp_path / "cut")
    assert len(files) == 2
    for f in files if order == "forward" else reversed(files):
        ingest_paths([f], tmp_path / "store")
    [turn] = TurnStore(tmp_path / "store", "read").read_all()
    assert (turn.request, turn.llm_calls, turn.agent_name) == (Q1, 3, "triage")
    assert [(c.name, c.status) for c in turn.calls] == [
        ("transfer_to_weather", "ok"), ("get_weather", "ok")]


def test_runs_linked_to_one_shared_span_stay_apart(tmp_path: Path) -> None:
    """OpenLIT links every LangGraph or CrewAI run to the span that created the agent: not
    a message, and shared by every run of that agent, so no run continues another."""

    def record(r: Any) -> None:
        with message(r, "create_agent weather", []) as created:
            pass
        for request, answer in ((Q1, A1), (Q2, "It is 24 C in Rome.")):
            token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
            try:
                with r.tracer.start_as_current_span(
                        "invoke_workflow", links=[Link(created.get_span_context())]), \
                        agent(r, "weather"):  # fmt: skip
                    chat(r, [user(request)], [said(answer)])
            finally:
                context.detach(token)

    first, second = turns_of(record, tmp_path)
    assert (first.request, second.request) == (Q1, Q2)
    assert first.conversation_id != second.conversation_id


def test_a_message_linked_to_several_runs_continues_none(tmp_path: Path) -> None:
    """A batch consumer links every message it takes: it continues no one run."""

    def record(r: Any) -> None:
        senders = []
        for request in (Q1, Q2):
            with message(r, "process", [], **{"messaging.operation": "process"}), \
                    agent(r, "intake"):  # fmt: skip
                chat(r, [user(request)], [said("queued")])
                senders.append(sent(r, "digest"))
        with message(r, "process digest", senders, **{"messaging.operation": "process"}), \
                agent(r, "digest"):  # fmt: skip
            chat(r, [user("Summarize the queue.")], [said("Two weather questions.")])

    turns = turns_of(record, tmp_path)
    assert [t.request for t in turns] == [Q1, Q2, "Summarize the queue."]
    assert len({t.conversation_id for t in turns}) == 3


def test_a_brokers_consumer_starts_a_job_of_its_own(tmp_path: Path) -> None:
    """A Kafka consumer's span names its `messaging.system`: the job it runs (its model call's
    content not captured here) is no step of the producer's turn."""

    def record(r: Any) -> None:
        with message(r, "chat", []), agent(r, "chat"):
            chat(r, [user(Q1)], [said("Queued.")])
            with r.span("publish reports", {"messaging.system": "kafka"},
                        kind=SpanKind.PRODUCER) as job:  # fmt: skip
                pass
        with message(r, "reports process", [job.get_span_context()],
                     **{"messaging.system": "kafka", "messaging.operation": "process"}), \
                agent(r, "report-writer"):  # fmt: skip
            blind_chat(r)

    first, second = turns_of(record, tmp_path)
    assert (first.request, first.final_answer, first.llm_calls) == (Q1, "Queued.", 1)
    assert (second.request, second.agent_name) == ("", "report-writer")
    assert first.conversation_id != second.conversation_id


def test_a_trace_joins_one_conversation_at_most(tmp_path: Path) -> None:
    """A trace with no id of its own that a link joins to conversation `x`, and whose input
    continues a call of conversation `y`, joins `x` alone: two named conversations never
    become one."""

    def record(r: Any) -> None:
        with r.span("chat", {"gen_ai.conversation.id": "y"}), agent(r, "a"):
            chat(r, [user("hi")], [said("Hello!")])
        with message(r, "process a", [], **{"messaging.operation": "process",
                                           "gen_ai.conversation.id": "x"}), agent(r, "a"):
            chat(r, [user(Q1)], [asks(HANDOFF)])
            created = sent(r, "b")
        with message(r, "process b", [created], **{"messaging.operation": "process"}), \
                agent(r, "b"):  # fmt: skip
            chat(r, [user("hi"), said("Hello!"), user(Q2)], [said("Sunny.")])

    turns = turns_of(record, tmp_path)
    assert [(t.request, t.conversation_id) for t in turns] == [
        ("hi", "y"), (Q1, "x"), (Q2, "x")]


def test_a_linked_trace_naming_its_own_conversation_is_its_own_run(tmp_path: Path) -> None:
    """Only traces that name no conversation are joined by their links (as grouped): a
    user's reply in a session of its own is a request, even if a tool of the linked run
    returned the same text."""

    def record(r: Any) -> None:
        with message(r, "process a", [], **{"messaging.operation": "process"}), agent(r, "a"):
            chat(r, [user("Can you approve the refund?")], [asks(("h1", "approve", {}))])
            with tool(r, "approve", "h1", {}, "yes"):
                pass
            created = sent(r, "b")
        with message(r, "process b", [created], **{"messaging.operation": "process",
                                                   "session.id": "s2"}), agent(r, "b"):
            chat(r, [user("Shall I ship it today?"), user("yes")], [said("Shipping.")])

    turns = turns_of(record, tmp_path)
    assert [t.request for t in turns] == ["Can you approve the refund?", "yes"]


def test_a_long_chain_arriving_late_is_found_in_a_few_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each round of following stored traces also looks up the conversations the traces it
    found were stored in: a chain joined link by link is found whole in a few rounds."""
    import turnscore.ingest.pipeline as pipeline

    def record(r: Any) -> None:
        sender: list[SpanContext] = []
        for i in range(8):
            with message(r, f"process a{i}", sender, **{"messaging.operation": "process"}), \
                    agent(r, f"a{i}"):  # fmt: skip
                blind_chat(r) if i else chat(r, [user(Q1)], [asks(HANDOFF)])
                sender = [sent(r, f"a{i + 1}")]

    r = Recorder("runtime")
    record(r)
    (tmp_path / "export").mkdir()
    (tmp_path / "cut").mkdir()
    files = per_trace(r.write(tmp_path / "export", "chain"), tmp_path / "cut")
    monkeypatch.setattr(pipeline, "MAX_LINK_ROUNDS", 3)
    ingest_paths(files[:-1], tmp_path / "store")
    ingest_paths(files[-1:], tmp_path / "store")
    [turn] = TurnStore(tmp_path / "store", "read").read_all()
    assert (turn.request, turn.llm_calls) == (Q1, 8)
