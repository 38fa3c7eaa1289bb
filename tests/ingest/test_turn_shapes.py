"""Turn assembly on agent shapes real stacks produce, recorded with the real OTel SDK (the
convention fixtures' `Recorder`) in the current OTel GenAI form (`invoke_agent`, `chat`
with `gen_ai.input.messages` / `gen_ai.output.messages`, `execute_tool` with
`gen_ai.tool.call.*`) and, where the shape differs there, in OpenInference's: handoffs,
agents used as tools, retried model calls, parallel calls, several turns in one trace or
one turn per trace, a run stopped on a pending call, streamed output. Each test pins what
the turn must be (DESIGN §3: one user message and everything done for it, up to its final
answer), not how assembly gets there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of
from turnscore.ingest.turn import Turn

Q1 = "What is the weather in Paris?"
Q2 = "And in Rome?"
A1 = "It is 18 C and cloudy in Paris."
A2 = "It is 24 C and sunny in Rome."
PARIS = {"city": "Paris"}
ROME = {"city": "Rome"}
PARIS_OUT = {"temperature": 18, "conditions": "cloudy"}
ROME_OUT = {"temperature": 24, "conditions": "sunny"}
WEATHER_DEF = {"type": "function", "name": "get_weather", "description": "Weather for a city.",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}


def _j(value: Any) -> str:
    return json.dumps(value)


def _c(value: Any) -> str:
    """JSON as a result or arguments read back: compact."""
    return json.dumps(value, separators=(",", ":"))


# --- OTel GenAI messages (gen_ai.input.messages / gen_ai.output.messages) ----------------


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": text}],
            "finish_reason": "stop"}


def asks(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "finish_reason": "tool_call",
            "parts": [{"type": "tool_call", "id": cid, "name": name, "arguments": args}
                      for cid, name, args in calls]}


def answers(*results: tuple[str, Any]) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": cid, "response": res}
                                      for cid, res in results]}


@contextmanager
def agent(r: Any, name: str, **attrs: Any) -> Iterator[Any]:
    with r.span(f"invoke_agent {name}", {"gen_ai.operation.name": "invoke_agent",
                                         "gen_ai.agent.name": name, **attrs}) as s:
        yield s


def chat(r: Any, inp: list[dict[str, Any]], out: list[dict[str, Any]] | None,
         tokens: tuple[int, int] = (100, 10), error: str | None = None, **attrs: Any) -> None:
    a: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                         "gen_ai.request.model": "gpt-4o", "gen_ai.input.messages": _j(inp),
                         "gen_ai.tool.definitions": _j([WEATHER_DEF]), **attrs}
    if out is not None:
        a["gen_ai.output.messages"] = _j(out)
        a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"] = tokens
    with r.span("chat gpt-4o", a, error=error):
        pass


@contextmanager
def tool(r: Any, name: str, cid: str | None, args: dict[str, Any], result: Any
         ) -> Iterator[Any]:
    a: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                         "gen_ai.tool.call.arguments": _j(args),
                         "gen_ai.tool.call.result": _j(result)}
    if cid is not None:
        a["gen_ai.tool.call.id"] = cid
    with r.span(f"execute_tool {name}", a) as s:
        yield s


def calls_of(turn: Turn) -> list[tuple[str, str | None, str | None, str, int]]:
    return [(c.name, c.arguments, c.result, c.status, c.step) for c in turn.calls]


def shape(turn: Turn) -> tuple[str, str | None, str, int]:
    return (turn.request, turn.final_answer, turn.status, turn.llm_calls)


def weather_run(r: Any, request: str = Q1, cid: str = "c1", args: dict[str, Any] = PARIS,
                out: Any = PARIS_OUT, answer: str = A1,
                history: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One turn: ask, call get_weather, answer. Returns the history after it."""
    h1 = [*(history or []), user(request)]
    chat(r, h1, [asks((cid, "get_weather", args))])
    with tool(r, "get_weather", cid, args, out):
        pass
    h2 = [*h1, asks((cid, "get_weather", args)), answers((cid, out))]
    chat(r, h2, [said(answer)])
    return [*h2, said(answer)]


# --- handoff ---------------------------------------------------------------------------


def test_handoff_inside_one_turn_is_one_turn_answered_by_the_second_agent(tmp_path: Path) -> None:
    """OpenAI Agents SDK / Swarm: the triage agent's model call requests the handoff tool,
    the specialist runs next (a sibling agent span in the same trace) with the history
    carried over and answers."""

    def record(r: Any) -> None:
        with r.span("workflow", {"gen_ai.operation.name": "invoke_workflow"}):
            with agent(r, "triage"):
                chat(r, [user(Q1)], [asks(("h1", "transfer_to_weather", {}))])
                with tool(r, "transfer_to_weather", "h1", {}, {"assistant": "weather"}):
                    pass
            with agent(r, "weather"):
                handed = [user(Q1), asks(("h1", "transfer_to_weather", {})),
                          answers(("h1", {"assistant": "weather"}))]
                chat(r, handed, [asks(("c1", "get_weather", PARIS))])
                with tool(r, "get_weather", "c1", PARIS, PARIS_OUT):
                    pass
                chat(r, [*handed, asks(("c1", "get_weather", PARIS)),
                         answers(("c1", PARIS_OUT))], [said(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 3)
    assert [(c.name, c.status, c.step) for c in turn.calls] == [
        ("transfer_to_weather", "ok", 0), ("get_weather", "ok", 1)]


# --- OpenInference ------------------------------------------------------------------------


def oi_messages(prefix: str, messages: list[dict[str, Any]], start: int = 0) -> dict[str, Any]:
    """OpenInference's flattened `llm.input_messages.N.*` / `llm.output_messages.N.*` from
    chat-completions style messages (`tool_calls`, `tool_call_id`)."""
    out: dict[str, Any] = {}
    for i, m in enumerate(messages, start):
        p = f"{prefix}.{i}.message."
        out[p + "role"] = m["role"]
        if m.get("content") is not None:
            out[p + "content"] = m["content"]
        if "tool_call_id" in m:
            out[p + "tool_call_id"] = m["tool_call_id"]
        for k, (cid, name, args) in enumerate(m.get("tool_calls", ())):
            q = f"{p}tool_calls.{k}.tool_call."
            out[q + "id"] = cid
            out[q + "function.name"] = name
            if args:
                out[q + "function.arguments"] = _j(args)
    return out


def oi_llm(r: Any, inp: list[dict[str, Any]], out: list[dict[str, Any]],
           tokens: tuple[int, int] = (100, 10), error: str | None = None) -> None:
    attrs = {"openinference.span.kind": "LLM", "llm.system": "openai", "llm.model_name": "gpt-4o",
             **oi_messages("llm.input_messages", inp, start=1),
             **oi_messages("llm.output_messages", out)}
    if out:
        attrs["llm.token_count.prompt"], attrs["llm.token_count.completion"] = tokens
    with r.span("response", attrs, error=error):
        pass


@contextmanager
def oi_span(r: Any, kind: str, name: str, **attrs: Any) -> Iterator[Any]:
    with r.span(name, {"openinference.span.kind": kind, "llm.system": "openai", **attrs}) as s:
        yield s


def oi_tool(r: Any, name: str, args: dict[str, Any], result: Any) -> None:
    with oi_span(r, "TOOL", name, **{"tool.name": name, "input.value": _j(args),
                                     "input.mime_type": "application/json",
                                     "output.value": _j(result)}):
        pass


def u(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def a(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def a_calls(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "tool_calls": list(calls)}


def t(cid: str, result: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": _j(result)}


def test_openinference_handoff_is_one_turn_and_one_handoff_call(tmp_path: Path) -> None:
    """openinference-instrumentation-openai-agents (`_processor.py`): the trace is an AGENT
    span, each agent an AGENT span below it, model calls LLM, function calls TOOL spans
    with `tool.name` and no call id, and the handoff a TOOL span named `handoff to <agent>`
    that carries nothing else."""
    handoff = ("h1", "transfer_to_weather", {})
    weather = ("c1", "get_weather", PARIS)

    def record(r: Any) -> None:
        with oi_span(r, "AGENT", "Agent workflow"):
            with oi_span(r, "AGENT", "Triage"):
                oi_llm(r, [u(Q1)], [a_calls(handoff)])
                with oi_span(r, "TOOL", "handoff to Weather"):
                    pass
            with oi_span(r, "AGENT", "Weather"):
                handed = [u(Q1), a_calls(handoff), t("h1", {"assistant": "Weather"})]
                oi_llm(r, handed, [a_calls(weather)])
                oi_tool(r, "get_weather", PARIS, PARIS_OUT)
                oi_llm(r, [*handed, a_calls(weather), t("c1", PARIS_OUT)], [a(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 3)
    assert [(c.name, c.status, c.step) for c in turn.calls] == [
        ("transfer_to_weather", "ok", 0), ("get_weather", "ok", 1)]


def test_handoff_with_the_history_summarized_is_one_turn(tmp_path: Path) -> None:
    """OpenAI Agents SDK `nest_handoff_history` (`src/agents/handoffs/history.py`): the next
    agent gets the transcript as one assistant message, no user message of its own."""
    summary = ("For context, here is the conversation so far:\n<CONVERSATION HISTORY>\n"
               f"1. [user] {Q1}\n2. [tool_call] transfer_to_weather({{}})\n"
               "</CONVERSATION HISTORY>")

    def record(r: Any) -> None:
        with r.span("workflow", {"gen_ai.operation.name": "invoke_workflow"}):
            with agent(r, "triage"):
                chat(r, [user(Q1)], [asks(("h1", "transfer_to_weather", {}))])
            with agent(r, "weather"):
                chat(r, [said(summary)], [said(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 2)
    assert [(c.name, c.status) for c in turn.calls] == [("transfer_to_weather", "no_result")]


def test_swarm_handoff_over_raw_client_traces_is_one_turn(tmp_path: Path) -> None:
    """OpenAI Swarm has no spans of its own: the client instrumentation gives one parentless
    trace per model call. The handoff function's result switches the agent, so the next
    call carries the specialist's system instructions over the same history."""
    from opentelemetry import context, trace

    handoff = ("h1", "transfer_to_weather", {})
    weather = ("c1", "get_weather", PARIS)
    handed = [user(Q1), asks(handoff), answers(("h1", {"assistant": "weather"}))]
    steps = [
        ("You triage.", [user(Q1)], [asks(handoff)]),
        ("You report weather.", handed, [asks(weather)]),
        ("You report weather.", [*handed, asks(weather), answers(("c1", PARIS_OUT))], [said(A1)]),
    ]

    def record(r: Any) -> None:
        for system, inp, out in steps:
            token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
            try:
                chat(r, inp, out, **{"gen_ai.system_instructions": _j(
                    [{"type": "text", "content": system}])})
            finally:
                context.detach(token)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 3)
    assert [(c.name, c.status, c.step) for c in turn.calls] == [
        ("transfer_to_weather", "ok", 0), ("get_weather", "ok", 1)]


# --- agent as tool ----------------------------------------------------------------------


SUB_TASK = "Weather report for Paris"
SUB_ANSWER = "Paris: 18 C, cloudy."


def test_agent_as_tool_is_one_call_answered_by_the_sub_agent(tmp_path: Path) -> None:
    """OpenAI Agents SDK `Agent.as_tool`, Strands agents-as-tools: the tool's execution
    span holds a whole `invoke_agent` with its own user message (the tool input), model
    calls and tool calls."""
    ask = ("c1", "weather_agent", {"input": SUB_TASK})

    def record(r: Any) -> None:
        with agent(r, "orchestrator"):
            chat(r, [user(Q1)], [asks(ask)])
            with tool(r, "weather_agent", "c1", {"input": SUB_TASK}, SUB_ANSWER), \
                    agent(r, "weather"):
                weather_run(r, request=SUB_TASK, cid="s1", answer=SUB_ANSWER)
            chat(r, [user(Q1), asks(ask), answers(("c1", SUB_ANSWER))], [said(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 4)
    assert calls_of(turn) == [("weather_agent", _c({"input": SUB_TASK}),
                               SUB_ANSWER, "ok", 0)]
    assert (turn.input_tokens, turn.agent_name) == (400, "orchestrator")


def test_delegated_run_without_a_tool_span_is_not_a_turn(tmp_path: Path) -> None:
    """smolagents' managed agent under OpenInference: the manager's step runs the managed
    agent's `run` (an AGENT span, no TOOL span between) on a task of the manager's, its
    own user message: one turn, the manager's answer; the sub-agent's model calls count."""

    def record(r: Any) -> None:
        with oi_span(r, "AGENT", "manager"):
            with oi_span(r, "CHAIN", "Step 1"):
                oi_llm(r, [u(Q1)], [a(f"weather_agent(task='{SUB_TASK}')")])
                with oi_span(r, "AGENT", "weather_agent"):
                    sub = [u(SUB_TASK), a_calls(("s1", "get_weather", PARIS))]
                    oi_llm(r, sub[:1], sub[1:])
                    oi_tool(r, "get_weather", PARIS, PARIS_OUT)
                    oi_llm(r, [*sub, t("s1", PARIS_OUT)], [a(SUB_ANSWER)])
            with oi_span(r, "CHAIN", "Step 2"):
                oi_llm(r, [u(Q1), a(f"weather_agent(task='{SUB_TASK}')"),
                           {"role": "tool", "content": SUB_ANSWER}], [a(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 4)
    assert turn.calls == ()  # the sub-agent's get_weather is its own, as behind a tool


def test_an_agent_handed_the_same_message_runs_the_same_turn(tmp_path: Path) -> None:
    """ADK's `transfer_to_agent`: the sub-agent's `invoke_agent` nests under the agent that
    transferred and continues from the same user message: its calls are the turn's steps."""
    transfer = ("t1", "transfer_to_agent", {"agent_name": "weather"})

    def record(r: Any) -> None:
        with agent(r, "root"):
            chat(r, [user(Q1)], [asks(transfer)])
            with tool(r, "transfer_to_agent", "t1", {"agent_name": "weather"}, {}):
                pass
            with agent(r, "weather"):
                weather_run(r)  # ADK's sub-agent reads the session's user message

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 3)
    assert [(c.name, c.step) for c in turn.calls] == [("transfer_to_agent", 0), ("get_weather", 1)]


# --- retry ------------------------------------------------------------------------------


def test_a_model_call_retried_after_an_error_is_one_step(tmp_path: Path) -> None:
    """The client's first attempt fails (rate limit) with the input recorded and no output;
    the retry with the same input succeeds."""

    def record(r: Any) -> None:
        with agent(r, "helper"):
            chat(r, [user(Q1)], None, error="429 rate limited")
            weather_run(r)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 3)  # the attempt was a request: it counts
    assert calls_of(turn) == [("get_weather", '{"city":"Paris"}', _c(PARIS_OUT), "ok", 0)]
    assert (turn.error, turn.issues) == (None, ())


def test_a_model_call_failing_for_good_fails_the_turn(tmp_path: Path) -> None:
    def record(r: Any) -> None:
        with agent(r, "helper"):
            chat(r, [user(Q1)], None, error="429 rate limited")
            chat(r, [user(Q1)], None, error="429 rate limited")

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status, turn.error) == (
        Q1, None, "error", "429 rate limited")


# --- parallel calls ---------------------------------------------------------------------


def test_parallel_calls_overlapping_results_in_reverse_order(tmp_path: Path) -> None:
    both = asks(("c1", "get_weather", PARIS), ("c2", "get_weather", ROME))

    def record(r: Any) -> None:
        with agent(r, "helper"):
            chat(r, [user(Q1)], [both])
            with tool(r, "get_weather", "c1", PARIS, PARIS_OUT), \
                    tool(r, "get_weather", "c2", ROME, ROME_OUT):
                pass
            chat(r, [user(Q1), both, answers(("c2", ROME_OUT)), answers(("c1", PARIS_OUT))],
                 [said(A1 + " " + A2)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1 + " " + A2, "ok", 2)
    assert calls_of(turn) == [
        ("get_weather", '{"city":"Paris"}', _c(PARIS_OUT), "ok", 0),
        ("get_weather", '{"city":"Rome"}', _c(ROME_OUT), "ok", 0),
    ]


def test_openinference_parallel_calls_without_ids_on_the_tool_spans(tmp_path: Path) -> None:
    both = a_calls(("c1", "get_weather", PARIS), ("c2", "get_weather", ROME))

    def record(r: Any) -> None:
        with oi_span(r, "AGENT", "helper"):
            oi_llm(r, [u(Q1)], [both])
            oi_tool(r, "get_weather", ROME, ROME_OUT)
            oi_tool(r, "get_weather", PARIS, PARIS_OUT)
            oi_llm(r, [u(Q1), both, t("c2", ROME_OUT), t("c1", PARIS_OUT)], [a(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 2)
    assert calls_of(turn) == [
        ("get_weather", '{"city":"Paris"}', _j(PARIS_OUT), "ok", 0),
        ("get_weather", '{"city":"Rome"}', _j(ROME_OUT), "ok", 0),
    ]
    assert all(c.started_at is not None for c in turn.calls)  # each joined its execution


# --- several turns ----------------------------------------------------------------------


def test_two_user_messages_in_one_session_trace_are_two_turns(tmp_path: Path) -> None:
    def record(r: Any) -> None:
        with r.span("chat session", {}):
            with agent(r, "helper"):
                h = weather_run(r)
            with agent(r, "helper"):
                weather_run(r, request=Q2, cid="c2", args=ROME, out=ROME_OUT, answer=A2,
                            history=h)

    first, second = turns_of(record, tmp_path)
    assert [shape(x) for x in (first, second)] == [(Q1, A1, "ok", 2), (Q2, A2, "ok", 2)]
    assert calls_of(first) == [("get_weather", '{"city":"Paris"}', _c(PARIS_OUT), "ok", 0)]
    assert calls_of(second) == [("get_weather", '{"city":"Rome"}', _c(ROME_OUT), "ok", 0)]
    assert (first.turn_index, second.turn_index) == (0, 1)
    assert first.conversation_id == second.conversation_id


def test_turns_in_traces_of_their_own_chain_by_history(tmp_path: Path) -> None:
    """No conversation id, one trace per turn, the history replayed in the input; the call
    ids restart each run (`call_1`, as smolagents and some proxies number them)."""
    from opentelemetry import context, trace

    def record(r: Any) -> None:
        h: list[dict[str, Any]] = []
        for q, args, out, answer in ((Q1, PARIS, PARIS_OUT, A1), (Q2, ROME, ROME_OUT, A2)):
            token = context.attach(trace.set_span_in_context(trace.INVALID_SPAN))
            try:
                with agent(r, "helper"):
                    h = weather_run(r, request=q, cid="call_1", args=args, out=out,
                                    answer=answer, history=h)
            finally:
                context.detach(token)

    first, second = turns_of(record, tmp_path)
    assert [shape(x) for x in (first, second)] == [(Q1, A1, "ok", 2), (Q2, A2, "ok", 2)]
    assert first.conversation_id == second.conversation_id
    assert (first.turn_index, second.turn_index) == (0, 1)
    assert calls_of(first) == [("get_weather", '{"city":"Paris"}', _c(PARIS_OUT), "ok", 0)]
    assert calls_of(second) == [("get_weather", '{"city":"Rome"}', _c(ROME_OUT), "ok", 0)]


# --- a run stopped before its answer ----------------------------------------------------


def test_a_run_stopped_on_a_call_never_executed_failed(tmp_path: Path) -> None:
    """A step limit hit: the last model call asks for a tool, no tool runs, the agent span
    ends. Every span arrived and the run gave no answer: the turn failed (`incomplete`
    means spans missing), the call without result, and the error says the run ended there."""

    def record(r: Any) -> None:
        with agent(r, "helper"):
            weather_run_steps = [user(Q1), asks(("c1", "get_weather", PARIS))]
            chat(r, weather_run_steps[:1], weather_run_steps[1:])
            with tool(r, "get_weather", "c1", PARIS, PARIS_OUT):
                pass
            chat(r, [*weather_run_steps, answers(("c1", PARIS_OUT))],
                 [asks(("c2", "get_weather", ROME))])

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (Q1, None, "error")
    assert turn.error == "the run ended on a model call that requested tools (a step limit?)"
    assert [(c.name, c.status, c.step) for c in turn.calls] == [
        ("get_weather", "ok", 0), ("get_weather", "no_result", 1)]
    assert turn.issues == ()  # nothing went uncaptured: the run stopped


# --- streaming --------------------------------------------------------------------------


def test_streamed_output_over_several_choice_events(tmp_path: Path) -> None:
    """Usage set when the stream ends, the text in several `gen_ai.choice` events of one
    choice: one call, its text joined."""

    def record(r: Any) -> None:
        with agent(r, "helper"):
            attrs = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                     "gen_ai.request.model": "gpt-4o", "gen_ai.input.messages": _j([user(Q1)])}
            with r.span("chat gpt-4o", attrs) as s:
                for chunk in ("It is 18 C", " and cloudy in Paris."):
                    s.add_event("gen_ai.choice", {"index": 0, "message": _j({"content": chunk})})
                s.set_attribute("gen_ai.usage.input_tokens", 100)
                s.set_attribute("gen_ai.usage.output_tokens", 10)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 1)
    assert (turn.input_tokens, turn.output_tokens) == (100, 10)
