"""A model call and another instrumentation's report of it alone in a trace of its own
(`calls` rule 3, a report apart; `links.apart_keys`): OpenInference's LangChain tracer never
makes its spans current, so the OpenAI instrumentation's span of each call it makes is the
root of a trace of its own. Real OTel SDK exports, explicit times."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry import trace

from tests.fixtures.conventions.build import Recorder
from tests.ingest.test_stack_cuts import per_trace
from tests.ingest.test_turn_shapes import A1, PARIS, PARIS_OUT, Q1, answers, asks, said, user
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.store import TurnStore
from turnscore.ingest.turn import Turn

MS = 10**6
HOUR = 3_600 * 10**9
NIGHT = 1_780_000_000 * 10**9  # a fixed instant, so every run is timed alike
WEATHER = ("c1", "get_weather", PARIS)
FIRST = ([user(Q1)], [asks(WEATHER)])
SECOND = ([user(Q1), asks(WEATHER), answers(("c1", PARIS_OUT))], [said(A1)])


def _messages(prefix: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """OpenInference's flattened messages (text and tool calls)."""
    out: dict[str, Any] = {}
    for i, m in enumerate(messages):
        at = f"{prefix}.{i}.message"
        out[f"{at}.role"] = m["role"]
        for part in m["parts"]:
            if part["type"] == "text":
                out[f"{at}.content"] = part["content"]
            elif part["type"] == "tool_call":
                out[f"{at}.tool_calls.0.tool_call.id"] = part["id"]
                out[f"{at}.tool_calls.0.tool_call.function.name"] = part["name"]
                out[f"{at}.tool_calls.0.tool_call.function.arguments"] = json.dumps(
                    part["arguments"])
            else:
                out[f"{at}.tool_call_id"] = part["id"]
                out[f"{at}.content"] = json.dumps(part["response"])
    return out


def _llm(inp: list[dict[str, Any]], out: list[dict[str, Any]], **attrs: Any) -> dict[str, Any]:
    return {"openinference.span.kind": "LLM", "llm.system": "openai", "llm.model_name": "gpt-4o",
            **_messages("llm.input_messages", inp), **_messages("llm.output_messages", out),
            **attrs}


class Run:
    """An agent run as OpenInference's LangChain tracer records it, with the OpenAI
    instrumentation's report of each model call in a trace of its own."""

    def __init__(self, r: Recorder, start: int, session: str = "s1") -> None:
        self.r, self.now, self.session = r, start, session

    def _span(self, name: str, attrs: dict[str, Any], start: int, end: int,
              parent: Any = None) -> Any:
        ctx = trace.set_span_in_context(parent or trace.INVALID_SPAN)
        span = self.r.tracer.start_span(name, context=ctx, attributes=attrs, start_time=start)
        span.end(end_time=end)
        return span

    @contextmanager
    def agent(self) -> Iterator[Any]:
        start = self.now
        root = self.r.tracer.start_span(
            "research_assistant", context=trace.set_span_in_context(trace.INVALID_SPAN),
            attributes={"openinference.span.kind": "AGENT", "session.id": self.session},
            start_time=start)
        yield root
        root.end(end_time=self.now + MS)

    def call(self, root: Any, said: tuple[list[Any], list[Any]], report: bool = True,
             at: int | None = None) -> None:
        """The framework's span of a call (no usage, no response id: a streamed LangChain
        message) and, `at` ns after it started (within it), the client's report of it."""
        start = self.now
        self._span("ChatOpenAI", _llm(*said, **{"session.id": self.session}), start,
                   start + 50 * MS, root)
        if report:
            begins = start + (10 * MS if at is None else at)
            self._span("ChatCompletion", _llm(*said, **{
                "llm.token_count.prompt": 100, "llm.token_count.completion": 10,
                "gen_ai.response.id": f"chatcmpl-{start}"}), begins, begins + 30 * MS)
        self.now = start + 60 * MS

    def tool(self, root: Any) -> None:
        self._span("get_weather", {"openinference.span.kind": "TOOL", "tool.name": "get_weather",
                                   "input.value": json.dumps(PARIS),
                                   "output.value": json.dumps(PARIS_OUT),
                                   "session.id": self.session}, self.now, self.now + MS, root)
        self.now += 2 * MS


def run(r: Recorder, start: int = NIGHT, **kw: Any) -> None:
    """One request, one tool call, the answer: two model calls, each reported apart."""
    steps = Run(r, start)
    with steps.agent() as root:
        steps.call(root, FIRST, **kw)
        steps.tool(root)
        steps.call(root, SECOND, **kw)


def _ingest(r: Recorder, tmp_path: Path, cut: bool = False, reverse: bool = False) -> list[Turn]:
    (tmp_path / "export").mkdir(exist_ok=True)
    files = r.write(tmp_path / "export", "run")
    if cut:
        (tmp_path / "cut").mkdir(exist_ok=True)
        files = per_trace(files, tmp_path / "cut")
    for f in reversed(files) if reverse else files:
        ingest_paths([f], tmp_path / "store")
    return sorted(TurnStore(tmp_path / "store", "read").read_all(), key=lambda t: t.started_at)


def _the_turn(turns: list[Turn]) -> None:
    [turn] = turns
    assert (turn.request, turn.final_answer, turn.llm_calls) == (Q1, A1, 2)
    assert (turn.input_tokens, turn.output_tokens) == (200, 20)  # the reports' usage, once
    assert [(c.name, json.loads(c.result or "")) for c in turn.calls] == [
        ("get_weather", PARIS_OUT)]


def test_a_call_reported_apart_is_one_call(tmp_path: Path) -> None:
    r = Recorder("app")
    run(r)
    _the_turn(_ingest(r, tmp_path))


def test_a_report_that_lost_its_output_is_the_call_it_was_sent_for(tmp_path: Path) -> None:
    """OpenInference's Anthropic span of a stream ends before the stream is read: the
    report has the input alone (its usage on the SDK's span below it). Sent the same, and
    started within the call: that call, with the report's usage over the framework's
    (langchain-anthropic's stream counts no input tokens)."""
    r = Recorder("app")
    steps = Run(r, NIGHT)
    with steps.agent() as root:
        steps._span("ChatOpenAI", _llm(*FIRST, **{"session.id": "s1",
                                                  "llm.token_count.prompt": 0,
                                                  "llm.token_count.completion": 10}),
                    NIGHT, NIGHT + 50 * MS, root)
        outer = steps._span("messages.create", {
            "openinference.span.kind": "LLM", "llm.system": "anthropic",
            **_messages("llm.input_messages", FIRST[0])}, NIGHT + 10 * MS, NIGHT + 12 * MS)
        steps._span("anthropic.messages.create", {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
            "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10,
            "gen_ai.response.id": "msg_1"}, NIGHT + 11 * MS, NIGHT + 40 * MS, outer)
    [turn] = _ingest(r, tmp_path)
    assert (turn.request, turn.llm_calls, turn.input_tokens, turn.output_tokens) == (
        Q1, 1, 100, 10)
    assert [c.name for c in turn.calls] == ["get_weather"]  # the framework's output


def test_a_report_with_an_http_clients_span_below_it_is_still_alone(tmp_path: Path) -> None:
    """What is below the report (an HTTP client instrumentation's span of the request) is
    the call's: the report is still a model call reported alone."""
    r = Recorder("app")
    steps = Run(r, NIGHT)
    with steps.agent() as root:
        steps._span("ChatOpenAI", _llm(*FIRST, **{"session.id": "s1"}), NIGHT, NIGHT + 50 * MS,
                    root)
        report = steps._span("ChatCompletion", _llm(*FIRST, **{"llm.token_count.prompt": 100}),
                             NIGHT + 10 * MS, NIGHT + 40 * MS)
        steps._span("POST", {"http.request.method": "POST", "url.full": "http://llm/v1/chat"},
                    NIGHT + 11 * MS, NIGHT + 39 * MS, report)
    [turn] = _ingest(r, tmp_path)
    assert (turn.request, turn.llm_calls, turn.input_tokens) == (Q1, 1, 100)


def test_a_nested_report_merged_by_response_id_leaves_no_step_behind(tmp_path: Path) -> None:
    """The framework's span and the client's carry one response id; the client's is an
    instrumentation's span over the SDK's own: rule 2 makes them one, rule 3 merges that
    with the framework's, and the enclosing span goes with it (else it would be a call)."""
    r = Recorder("app")
    steps = Run(r, NIGHT)
    with steps.agent() as root:
        steps._span("ChatOpenAI", _llm([user(Q1)], [said(A1)], **{
            "session.id": "s1", "gen_ai.response.id": "msg_1"}), NIGHT, NIGHT + 50 * MS, root)
        outer = steps._span("messages.create", _llm([user(Q1)], [said(A1)], **{
            "llm.token_count.prompt": 100}), NIGHT + 10 * MS, NIGHT + 40 * MS)
        steps._span("anthropic.messages.create", {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
            "gen_ai.usage.input_tokens": 100, "gen_ai.response.id": "msg_1"},
            NIGHT + 11 * MS, NIGHT + 39 * MS, outer)
    [turn] = _ingest(r, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls, turn.input_tokens) == (
        Q1, A1, 1, 100)


def test_a_call_that_lost_its_output_takes_no_other_calls_answer(tmp_path: Path) -> None:
    """The agent's call failed (input, no output, no report of its own) while a raw client
    of the same service sent the same and was answered: another call, its own turn."""
    r = Recorder("app")
    steps = Run(r, NIGHT)
    with steps.agent() as root:
        steps._span("ChatOpenAI", _llm([user(Q1)], [], **{"session.id": "s1"}), NIGHT,
                    NIGHT + 30_000 * MS, root)
    steps._span("ChatCompletion", _llm([user(Q1)], [said(A1)], **{
        "llm.token_count.prompt": 100}), NIGHT + 2_000 * MS, NIGHT + 3_000 * MS)
    turns = _ingest(r, tmp_path)
    assert [(t.final_answer, t.input_tokens) for t in turns] == [(None, None), (A1, 100)]


def test_of_a_retrys_attempts_the_one_that_counted_usage_is_the_call(tmp_path: Path) -> None:
    """Two attempts under one streamed framework call, each a report that lost its output:
    the first failed (no usage), the second counted the call's usage; it is the call's."""
    for cut, reverse in ((False, False), (True, False), (True, True)):
        r = Recorder("app")
        steps = Run(r, NIGHT)
        with steps.agent() as root:
            steps._span("ChatOpenAI", _llm(*FIRST, **{"session.id": "s1"}), NIGHT,
                        NIGHT + 200 * MS, root)
            for at, ok in ((10, False), (100, True)):
                outer = steps._span("messages.create", {
                    "openinference.span.kind": "LLM", "llm.system": "anthropic",
                    **_messages("llm.input_messages", FIRST[0])}, NIGHT + at * MS,
                    NIGHT + (at + 2) * MS)
                attrs: dict[str, Any] = {"gen_ai.operation.name": "chat",
                                         "gen_ai.provider.name": "anthropic"}
                attrs |= ({"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10}
                          if ok else {"error.type": "overloaded_error"})
                steps._span("anthropic.messages.create", attrs, NIGHT + (at + 1) * MS,
                            NIGHT + (at + 50) * MS, outer)
        turns = _ingest(r, _fresh(tmp_path / f"{cut}-{reverse}"), cut=cut, reverse=reverse)
        [agent] = [t for t in turns if t.conversation_id == "s1"]
        assert (agent.llm_calls, agent.input_tokens) == (1, 100)


def test_one_response_id_keeps_the_calls_place_in_the_run(tmp_path: Path) -> None:
    """The framework's spans and the client's reports apart share response ids: the run's
    span keeps its identity (its place in the run), however rich the report is."""
    r = Recorder("app")
    steps = Run(r, NIGHT)
    with steps.agent() as root:
        for step in (FIRST, SECOND):
            start = steps.now
            steps._span("ChatOpenAI", _llm(*step, **{"session.id": "s1",
                                                    "gen_ai.response.id": f"msg_{start}"}),
                        start, start + 50 * MS, root)
            outer = steps._span("ChatCompletion", _llm(*step), start + 10 * MS, start + 40 * MS)
            steps._span("openai.chat", {
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10,
                "gen_ai.response.id": f"msg_{start}"}, start + 11 * MS, start + 39 * MS, outer)
            steps.now = start + 60 * MS
            if step is FIRST:
                steps.tool(root)
    _the_turn(_ingest(r, tmp_path))


def test_either_side_finds_the_other_across_batches(tmp_path: Path) -> None:
    """One trace per batch, in start order and reversed: the store finds the report from
    the call and the call from the report."""
    for reverse in (False, True):
        r = Recorder("app")
        run(r)
        folder = tmp_path / str(reverse)
        folder.mkdir()
        _the_turn(_ingest(r, folder, cut=True, reverse=reverse))


def test_a_report_that_did_not_start_within_the_call_is_a_call_of_its_own(
    tmp_path: Path
) -> None:
    """Alike, but started after the framework's call ended: other calls (a raw client
    asking the same), their own turn."""
    r = Recorder("app")
    run(r, at=55 * MS)
    agents, raw = _ingest(r, tmp_path)
    assert (agents.request, agents.llm_calls, agents.input_tokens) == (Q1, 2, None)
    assert (raw.request, raw.llm_calls, raw.input_tokens) == (Q1, 2, 200)


def test_two_raw_clients_alike_stay_two_calls(tmp_path: Path) -> None:
    """Two lone traces saying the same at the same time: neither reports the other."""
    r = Recorder("app")
    steps = Run(r, NIGHT)
    for _ in range(2):
        steps._span("ChatCompletion", _llm(*FIRST, **{"llm.token_count.prompt": 100}), NIGHT,
                    NIGHT + 30 * MS)
    turns = _ingest(r, tmp_path)
    assert [t.llm_calls for t in turns] == [1, 1]


def test_a_report_with_another_response_id_is_not_merged_by_content(tmp_path: Path) -> None:
    """Where both reports carry a response id and the ids differ, they are two calls."""
    r = Recorder("app")
    steps = Run(r, NIGHT)
    with steps.agent() as root:
        steps._span("ChatOpenAI", _llm(*FIRST, **{"gen_ai.response.id": "chatcmpl-a"}), NIGHT,
                    NIGHT + 50 * MS, root)
        steps._span("ChatCompletion", _llm(*FIRST, **{"gen_ai.response.id": "chatcmpl-b"}),
                    NIGHT + 10 * MS, NIGHT + 40 * MS)
    assert sum(t.llm_calls for t in _ingest(r, tmp_path)) == 2


def test_a_prompt_sent_all_day_does_not_reopen_every_earlier_run(tmp_path: Path) -> None:
    """Runs that say the same word for word (a greeting, an evaluation's fixed prompt), a
    minute apart, a session and a batch each: each run's report finds that run's call
    only, not every earlier run's (the ten seconds in the key)."""
    for n in range(6):
        r = Recorder("app")
        steps = Run(r, NIGHT + n * 60 * 10**9, session=f"s{n}")
        with steps.agent() as root:
            steps.call(root, ([user(Q1)], [said(A1)]))
        batch = ingest_paths(r.write(_fresh(tmp_path / f"n{n}"), "run"), tmp_path / "store")
        assert len(batch.rebuilt_traces) == 2  # the run and its report, none older
    turns = TurnStore(tmp_path / "store", "read").read_all()
    assert [(t.llm_calls, t.input_tokens) for t in turns] == [(1, 100)] * 6


def test_overlapping_runs_of_one_prompt_keep_each_its_report(tmp_path: Path) -> None:
    """Two sessions' calls of one prompt overlap (0-50 ms and 40-90 ms); the first's report
    (at 45 ms) fits both, the second's (at 85 ms) only the second: each report goes to the
    call that fits and ends first, so each run keeps its own, whole or cut by trace."""
    def record() -> Recorder:
        r = Recorder("app")
        for session, start in (("sA", NIGHT), ("sB", NIGHT + 40 * MS)):
            steps = Run(r, start, session=session)
            with steps.agent() as root:
                steps.call(root, ([user(Q1)], [said(A1)]), at=45 * MS)
        return r

    for cut, reverse in ((False, False), (True, False), (True, True)):
        folder = _fresh(tmp_path / f"{cut}-{reverse}")
        turns = _ingest(record(), folder, cut=cut, reverse=reverse)
        assert [(t.conversation_id, t.llm_calls, t.input_tokens) for t in turns] == [
            ("sA", 1, 100), ("sB", 1, 100)]


def test_a_call_alike_from_another_service_is_its_own(tmp_path: Path) -> None:
    """A raw client of another service asks the same while the agent's call (reported by
    no client of its own) runs: another call, its own turn."""
    agent_side, probe = Recorder("agent"), Recorder("probe")
    steps = Run(agent_side, NIGHT)
    with steps.agent() as root:
        steps.call(root, ([user(Q1)], [said(A1)]), report=False)
    Run(probe, NIGHT)._span("ChatCompletion", _llm([user(Q1)], [said(A1)], **{
        "llm.token_count.prompt": 7}), NIGHT + 10 * MS, NIGHT + 20 * MS)
    (tmp_path / "export").mkdir()
    files = [*agent_side.write(tmp_path / "export", "agent"), *probe.write(tmp_path / "export",
                                                                          "probe")]
    ingest_paths(files, tmp_path / "store")
    turns = sorted(TurnStore(tmp_path / "store", "read").read_all(), key=lambda t: t.started_at)
    assert [(t.service_name, t.llm_calls, t.input_tokens) for t in turns] == [
        ("agent", 1, None), ("probe", 1, 7)]


def test_a_report_late_in_a_long_call_is_joined_neither_whole_nor_cut(tmp_path: Path) -> None:
    """The keys name a call's first ten minutes: a report that started later in a longer
    call is not joined to it, in one batch as across batches (never one without the
    other)."""
    for cut in (False, True):
        r = Recorder("app")
        steps = Run(r, NIGHT)
        with steps.agent() as root:
            steps._span("ChatOpenAI", _llm([user(Q1)], [said(A1)], **{"session.id": "s1"}),
                        NIGHT, NIGHT + 12 * 60 * 10**9, root)
            steps._span("ChatCompletion", _llm([user(Q1)], [said(A1)], **{
                "llm.token_count.prompt": 100}), NIGHT + 11 * 60 * 10**9,
                NIGHT + 11 * 60 * 10**9 + 30 * MS)
        turns = _ingest(r, _fresh(tmp_path / str(cut)), cut=cut)
        assert [(t.llm_calls, t.input_tokens) for t in turns] == [(1, None), (1, 100)]


def _fresh(folder: Path) -> Path:
    folder.mkdir()
    return folder


def test_the_reports_are_roots_of_traces_of_their_own() -> None:
    """What the rule is for: the recorder's reports start outside the run's context."""
    r = Recorder("app")
    run(r)
    spans = r.spans.get_finished_spans()
    reports = [s for s in spans if s.name == "ChatCompletion"]
    assert len(reports) == 2 and all(s.parent is None for s in reports)
    assert len({s.context.trace_id for s in spans}) == 3  # type: ignore[union-attr]
