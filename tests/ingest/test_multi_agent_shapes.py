"""Turn assembly on multi-agent orchestrations and on how a run ends, recorded with the real
OTel SDK (the convention fixtures' `Recorder`).

Strands' `Swarm` and `Graph` (strands-agents/sdk-python `src/strands/multiagent/swarm.py`,
`graph.py`, `src/strands/telemetry/tracer.py`): the orchestration's span
(`start_multiagent_span`: named `invoke_swarm` / `invoke_graph`, the same non-standard
`gen_ai.operation.name`, `gen_ai.agent.name` `swarm` / `graph`, span kind CLIENT) holds the
user's task as its user message (a `gen_ai.user.message` event, or the operation-details
event under the latest opt-in) and no output (`end_swarm_span` is never called). Each node
agent's `invoke_agent` nests below it and gets a prompt the orchestration built from the
task (`_build_node_input`). Also: langgraph-supervisor's workers on the same messages, a
sub-agent run that is the last thing a run does, and a retried call whose failed attempt
had partial output. Each test pins what the turn must be (DESIGN §3), not how assembly
gets there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry.trace import SpanKind

from tests.ingest.test_stack_forms import turns_of
from tests.ingest.test_turn_shapes import (
    A1,
    PARIS,
    PARIS_OUT,
    Q1,
    Q2,
    SUB_ANSWER,
    SUB_TASK,
    a,
    a_calls,
    agent,
    answers,
    asks,
    calls_of,
    chat,
    oi_llm,
    oi_span,
    oi_tool,
    said,
    shape,
    t,
    tool,
    u,
    user,
    weather_run,
)


def _j(value: Any) -> str:
    return json.dumps(value)


# --- Strands, default content form (span events, Bedrock content blocks) -----------------


def s_text(text: str) -> dict[str, Any]:
    return {"text": text}


def s_use(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": cid, "name": name, "input": args}}


def s_result(cid: str, text: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": cid, "status": "success", "content": [{"text": text}]}}


Strands = list[tuple[str, list[dict[str, Any]]]]
"""A Strands message list: (role, content blocks)."""


def _events(s: Any, messages: Strands) -> None:
    """`Tracer._add_event_messages`: one event per message, a tool result as a tool message."""
    for role, blocks in messages:
        name = "gen_ai.tool.message" if any("toolResult" in b for b in blocks) else \
            f"gen_ai.{role}.message"
        s.add_event(name, {"content": _j(blocks)})


@contextmanager
def multiagent(r: Any, instance: str, task: str) -> Iterator[Any]:
    """`Tracer.start_multiagent_span` in the default form."""
    with r.span(f"invoke_{instance}", {
        "gen_ai.operation.name": f"invoke_{instance}", "gen_ai.agent.name": instance,
        "gen_ai.system": "strands-agents",
    }, kind=SpanKind.CLIENT) as s:
        s.add_event("gen_ai.user.message", {"content": task})
        yield s


@contextmanager
def s_agent(r: Any, name: str, prompt: str, answer: str) -> Iterator[Any]:
    """`Tracer.start_agent_span` / `end_agent_span`: the agent's messages as events, its
    result as a `gen_ai.choice` event."""
    with r.span(f"invoke_agent {name}", {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
        "gen_ai.system": "strands-agents", "gen_ai.request.model": "claude",
    }) as s:
        _events(s, [("user", [s_text(prompt)])])
        yield s
        s.add_event("gen_ai.choice", {"message": answer, "finish_reason": "end_turn"})
        s.set_attribute("gen_ai.usage.input_tokens", 999)  # accumulated: repeats the calls'


def s_chat(r: Any, messages: Strands, out: list[dict[str, Any]], finish: str = "end_turn",
           tokens: tuple[int, int] = (100, 10)) -> None:
    """`start_model_invoke_span` / `end_model_invoke_span` in an event loop cycle."""
    with r.span("execute_event_loop_cycle", {
        "gen_ai.operation.name": "execute_event_loop_cycle"}), r.span("chat", {
            "gen_ai.operation.name": "chat", "gen_ai.system": "strands-agents",
            "gen_ai.request.model": "claude", "gen_ai.usage.input_tokens": tokens[0],
            "gen_ai.usage.output_tokens": tokens[1]}) as s:
        _events(s, messages)
        s.add_event("gen_ai.choice", {"message": _j(out), "finish_reason": finish})


def s_tool(r: Any, cid: str, name: str, args: dict[str, Any], result: str) -> None:
    """`start_tool_call_span` / `end_tool_call_span`."""
    with r.span(f"execute_tool {name}", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": cid, "gen_ai.system": "strands-agents"}) as s:
        s.add_event("gen_ai.tool.message", {"role": "tool", "content": _j(args), "id": cid})
        s.add_event("gen_ai.choice", {"message": _j([s_text(result)]), "id": cid})


def s_node(r: Any, name: str, prompt: str, tools: list[tuple[str, str, dict[str, Any], str]],
           answer: str) -> None:
    """A node agent: one model call per tool (each asks for it, the tool runs), then the
    answer."""
    with s_agent(r, name, prompt, answer):
        history: Strands = [("user", [s_text(prompt)])]
        for cid, tname, args, result in tools:
            s_chat(r, history, [s_use(cid, tname, args)], finish="tool_use")
            s_tool(r, cid, tname, args, result)
            history = [*history, ("assistant", [s_use(cid, tname, args)]),
                       ("user", [s_result(cid, result)])]
        s_chat(r, history, [s_text(answer)])


HANDOFF = {"agent_name": "weather", "message": "The user wants the weather in Paris."}
HANDED = "Handing off to weather: The user wants the weather in Paris."
TRIAGE_NOTE = "Handing off to the weather agent."


def swarm_prompt(handoff: str | None) -> str:
    """`Swarm._build_node_input`, wrapped as `_execute_node` sends it."""
    top = f"Handoff Message: {handoff}\n\n" if handoff else ""
    return (f"Context:\n{top}User Request: {Q1}\n\n"
            "Other agents available for collaboration:\nAgent name: weather.\n\n"
            "You have access to swarm coordination tools if you need help from other agents. "
            "If you don't hand off to another agent, the swarm will consider the task "
            "complete.\n\n")


def test_strands_swarm_is_one_turn_answered_by_the_last_node(tmp_path: Path) -> None:
    """A Swarm: the triage node hands off (`handoff_to_agent`), the weather node calls a
    tool and answers. One turn for the user's task, every node's calls, the last node's
    answer."""

    def record(r: Any) -> None:
        with multiagent(r, "swarm", Q1):
            s_node(r, "triage", swarm_prompt(None),
                   [("h1", "handoff_to_agent", HANDOFF, HANDED)], TRIAGE_NOTE)
            s_node(r, "weather", swarm_prompt(HANDOFF["message"]),
                   [("c1", "get_weather", PARIS, _j(PARIS_OUT))], A1)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 4)
    assert [(c.name, c.result, c.status, c.step) for c in turn.calls] == [
        ("handoff_to_agent", HANDED, "ok", 0), ("get_weather", _j(PARIS_OUT), "ok", 2)]
    assert (turn.input_tokens, turn.output_tokens) == (400, 40)  # leaf model calls only


def test_strands_graph_latest_form_is_one_turn(tmp_path: Path) -> None:
    """A Graph (`researcher` -> `writer`) under the latest opt-in (content in the
    operation-details event): the entry node gets the task itself, the next one
    `Original Task: <task>` and the previous node's output (`Graph._build_node_input`)."""
    notes = "Paris: 18 C, cloudy."

    def details(s: Any, key: str, messages: list[dict[str, Any]]) -> None:
        s.add_event("gen_ai.client.inference.operation.details", {key: _j(messages)})

    def node(r: Any, name: str, prompt: list[str], answer: str) -> None:
        msg = {"role": "user", "parts": [{"type": "text", "content": p} for p in prompt]}
        with r.span(f"invoke_agent {name}", {"gen_ai.operation.name": "invoke_agent",
                                               "gen_ai.agent.name": name,
                                               "gen_ai.provider.name": "strands-agents"}) as s:
            details(s, "gen_ai.input.messages", [msg])
            with r.span("chat", {"gen_ai.operation.name": "chat",
                                 "gen_ai.provider.name": "strands-agents",
                                 "gen_ai.usage.input_tokens": 50,
                                 "gen_ai.usage.output_tokens": 5}) as c:
                details(c, "gen_ai.input.messages", [msg])
                details(c, "gen_ai.output.messages", [said(answer)])
            details(s, "gen_ai.output.messages", [said(answer)])

    def record(r: Any) -> None:
        with r.span("invoke_graph", {"gen_ai.operation.name": "invoke_graph",
                                     "gen_ai.agent.name": "graph",
                                     "gen_ai.provider.name": "strands-agents"},
                    kind=SpanKind.CLIENT) as g:
            details(g, "gen_ai.input.messages", [user(Q1)])
            node(r, "researcher", [Q1], notes)
            node(r, "writer", [f"Original Task: {Q1}", "\nInputs from previous nodes:",
                               "\nFrom researcher:", f"  - researcher: {notes}"], A1)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 2)
    assert (turn.input_tokens, turn.calls) == (100, ())


def test_a_swarm_inside_a_graph_is_one_turn_for_the_graph_task(tmp_path: Path) -> None:
    """A Graph node may be a Swarm (`GraphBuilder.add_node` takes any `MultiAgentBase`):
    the swarm's task is the graph's built input; the outermost request is the user's."""
    inner = f"Original Task: {Q1}\nInputs from previous nodes:\nFrom planner:  - Ask weather."

    def record(r: Any) -> None:
        with multiagent(r, "graph", Q1):
            s_node(r, "planner", Q1, [], "Ask weather.")
            with multiagent(r, "swarm", inner):
                s_node(r, "weather", f"Context:\nUser Request: {inner}\n\n",
                       [("c1", "get_weather", PARIS, _j(PARIS_OUT))], A1)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 3)
    assert [(c.name, c.step) for c in turn.calls] == [("get_weather", 1)]


def test_swarm_runs_for_two_user_messages_are_two_turns(tmp_path: Path) -> None:
    """One session span over two Swarm invocations: each orchestration span holds its own
    task, so each run is a turn of its own."""

    def record(r: Any) -> None:
        with r.span("session", {}):
            with multiagent(r, "swarm", Q1):
                s_node(r, "weather", f"Context:\nUser Request: {Q1}\n\n", [], A1)
            with multiagent(r, "swarm", Q2):
                s_node(r, "weather", f"Context:\nUser Request: {Q2}\n\n", [], "Sunny.")

    first, second = turns_of(record, tmp_path)
    assert [shape(x) for x in (first, second)] == [(Q1, A1, "ok", 1), (Q2, "Sunny.", "ok", 1)]


def test_a_node_prompt_not_built_from_the_request_stays_its_own(tmp_path: Path) -> None:
    """An agent span whose user message the call's does not contain says nothing of the
    call's request: an agent span over two user messages of a chat loop (the first one
    recorded) keeps them two turns."""

    def record(r: Any) -> None:
        with agent(r, "helper", **{"gen_ai.input.messages": _j([user(Q1)])}):
            h = weather_run(r)
            chat(r, [*h, user(Q2)], [said("Sunny.")])

    first, second = turns_of(record, tmp_path)
    assert [x.request for x in (first, second)] == [Q1, Q2]


def test_a_later_turn_quoting_the_first_turn_stays_its_own(tmp_path: Path) -> None:
    """A chat loop's agent span holds the session's first message; a later message that
    quotes it ("Hello" in "Hello again, ...") continues the conversation, where the first
    message is a turn of its own: the later call was not built from it."""
    first_q, later_q = "Hello", "Hello again, what is 2+2?"

    def record(r: Any) -> None:
        with agent(r, "helper", **{"gen_ai.input.messages": _j([user(first_q)])}):
            chat(r, [user(first_q)], [said("Hi! How can I help?")])
            chat(r, [user(first_q), said("Hi! How can I help?"), user(later_q)], [said("4")])

    first, second = turns_of(record, tmp_path)
    assert [(x.request, x.final_answer) for x in (first, second)] == [
        (first_q, "Hi! How can I help?"), (later_q, "4")]


def test_langgraph_supervisor_hands_the_same_messages_to_the_worker(tmp_path: Path) -> None:
    """langgraph-supervisor (`create_supervisor`): the supervisor calls `transfer_to_<agent>`,
    the worker runs on the same message state (the user's message, the transfer and its
    `Successfully transferred` result), then control returns to the supervisor, which
    answers. OpenInference's LangChain tracer: a CHAIN per graph node, LLM and TOOL spans."""
    transfer = ("h1", "transfer_to_weather_expert", {})
    back = ("h2", "transfer_back_to_supervisor", {})
    weather = ("c1", "get_weather", PARIS)

    def record(r: Any) -> None:
        with oi_span(r, "CHAIN", "LangGraph"):
            with oi_span(r, "CHAIN", "supervisor"):
                oi_llm(r, [u(Q1)], [a_calls(transfer)])
                oi_tool(r, "transfer_to_weather_expert", {}, "Successfully transferred")
            handed = [u(Q1), a_calls(transfer), t("h1", "Successfully transferred")]
            with oi_span(r, "CHAIN", "weather_expert"):
                oi_llm(r, handed, [a_calls(weather)])
                oi_tool(r, "get_weather", PARIS, PARIS_OUT)
                done = [*handed, a_calls(weather), t("c1", PARIS_OUT)]
                oi_llm(r, done, [a(A1)])
            with oi_span(r, "CHAIN", "supervisor"):
                oi_llm(r, [*done, a(A1), a_calls(back), t("h2", "Successfully transferred")],
                       [a(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 4)
    assert [c.name for c in turn.calls] == ["transfer_to_weather_expert", "get_weather"]


# --- a sub-agent run that is the last thing a run does -----------------------------------


def test_an_agent_tool_that_ends_the_run_gives_the_answer(tmp_path: Path) -> None:
    """The orchestrator's last model call asks for an agent tool and the run returns its
    output (OpenAI Agents `tool_use_behavior="stop_on_first_tool"`, LangChain
    `return_direct`): no model call follows, the user got the sub-agent's answer."""
    ask = ("c1", "weather_agent", {"input": SUB_TASK})

    def record(r: Any) -> None:
        with agent(r, "orchestrator"):
            chat(r, [user(Q1)], [asks(ask)])
            with tool(r, "weather_agent", "c1", {"input": SUB_TASK}, SUB_ANSWER), \
                    agent(r, "weather"):
                weather_run(r, request=SUB_TASK, cid="s1", answer=SUB_ANSWER)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, SUB_ANSWER, "ok", 3)
    assert [(c.name, c.result, c.status) for c in turn.calls] == [
        ("weather_agent", _j(SUB_ANSWER), "ok")]
    assert (turn.error, turn.issues) == (None, ())


def test_a_delegated_run_last_in_the_run_gives_the_answer(tmp_path: Path) -> None:
    """smolagents under OpenInference: the manager's step runs the managed agent (no TOOL
    span between) and the run ends there: the manager's step text is the delegation, the
    managed agent's answer is the last model output."""
    delegation = f"weather_agent(task='{SUB_TASK}')"

    def record(r: Any) -> None:
        with oi_span(r, "AGENT", "manager"), oi_span(r, "CHAIN", "Step 1"):
            oi_llm(r, [u(Q1)], [a(delegation)])
            with oi_span(r, "AGENT", "weather_agent"):
                oi_llm(r, [u(SUB_TASK)], [a(SUB_ANSWER)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, SUB_ANSWER, "ok", 2)


def test_a_check_run_after_the_answer_does_not_replace_it(tmp_path: Path) -> None:
    """An agent run after the outer agent answered (an output guardrail's agent) whose
    outermost agent span recorded the outer answer as the run's output: that is the
    answer the user got."""

    def record(r: Any) -> None:
        with agent(r, "helper", **{"gen_ai.output.messages": _j([said(A1)])}):
            weather_run(r)
            with r.span("guardrail", {}), agent(r, "checker"):
                chat(r, [user(f"Is this safe? {A1}")], [said("safe")])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 3)


def test_a_sub_agent_answer_of_a_run_whose_root_never_arrived_is_no_answer(
        tmp_path: Path) -> None:
    """The run's parent span never arrived (a crash in the workflow above the agent): the
    sub-agent answered its tool, nothing says the run ended there and the user got it."""
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    lost = SpanContext(trace_id=0x5EED, span_id=0xDEAD, is_remote=True,
                       trace_flags=TraceFlags(TraceFlags.SAMPLED))
    ask = ("c1", "weather_agent", {"input": SUB_TASK})

    def record(r: Any) -> None:
        from opentelemetry import context

        token = context.attach(trace.set_span_in_context(NonRecordingSpan(lost)))
        try:
            with agent(r, "orchestrator"):
                chat(r, [user(Q1)], [asks(ask)])
                with tool(r, "weather_agent", "c1", {"input": SUB_TASK}, SUB_ANSWER), \
                        agent(r, "weather"):
                    weather_run(r, request=SUB_TASK, cid="s1", answer=SUB_ANSWER)
        finally:
            context.detach(token)

    [turn] = turns_of(record, tmp_path)
    assert (turn.final_answer, turn.status) == (None, "incomplete")


# --- a retried call whose failed attempt had partial output ----------------------------


def test_a_stream_cut_after_a_tool_call_and_retried_counts_the_call_once(
        tmp_path: Path) -> None:
    """The first attempt's stream broke after the tool call (status error, the partial
    output recorded); the client sent the same input again and the retry asked for the
    same tool under a new id, which ran. One call, not a second one without result."""

    def record(r: Any) -> None:
        with agent(r, "helper"):
            chat(r, [user(Q1)], [asks(("c0", "get_weather", PARIS))], error="stream cut")
            weather_run(r)

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 3)  # the attempt was a request: it counts
    assert calls_of(turn) == [("get_weather", '{"city":"Paris"}',
                               json.dumps(PARIS_OUT, separators=(",", ":")), "ok", 0)]
    assert (turn.error, turn.issues) == (None, ())


def test_a_failed_call_whose_output_the_run_used_stays_a_step(tmp_path: Path) -> None:
    """A call marked failed whose tool call ran and whose result the next call got: the
    conversation went on from it, it is a step."""

    def record(r: Any) -> None:
        with agent(r, "helper"):
            chat(r, [user(Q1)], [asks(("c1", "get_weather", PARIS))], error="late error")
            with tool(r, "get_weather", "c1", PARIS, PARIS_OUT):
                pass
            chat(r, [user(Q1), asks(("c1", "get_weather", PARIS)), answers(("c1", PARIS_OUT))],
                 [said(A1)])

    [turn] = turns_of(record, tmp_path)
    assert shape(turn) == (Q1, A1, "ok", 2)
    # Requested by the step and answered in the next call's input (compact JSON there),
    # not an execution no step asked for (the tool span's own text).
    assert calls_of(turn) == [("get_weather", '{"city":"Paris"}',
                               json.dumps(PARIS_OUT, separators=(",", ":")), "ok", 0)]
