"""Turn assembly over hand-built decoded spans: one test per shape DESIGN §3 names."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from msgspec.structs import replace

from turnscore.ingest.assemble import AssemblyResult, assemble_turns
from turnscore.ingest.model import (
    Message,
    Part,
    PartType,
    Span,
    SpanAttributes,
    SpanKind,
    ToolDef,
    ToolExecution,
)
from turnscore.ingest.turn import Tool, Turn

T0 = 1_764_000_000_000_000_000
SYSTEM = "You are terse."
CALC = ToolDef(
    "calculator", "Evaluate arithmetic.", '{"properties":{"expression":{"type":"string"}}}'
)
WEATHER = ToolDef("get_weather", "Weather for a city.", '{"properties":{"city":{"type":"string"}}}')


def text(s: str) -> Part:
    return Part(PartType.TEXT, text=s)


def call(cid: str | None, name: str, args: dict[str, object]) -> Part:
    return Part(
        PartType.TOOL_CALL,
        call_id=cid,
        name=name,
        arguments=orjson.dumps(args, option=orjson.OPT_SORT_KEYS).decode(),
    )


def result(cid: str | None, body: str, *, is_error: bool = False, name: str | None = None) -> Part:
    return Part(PartType.TOOL_RESULT, text=body, call_id=cid, is_error=is_error, name=name)


def user(s: str) -> Message:
    return Message("user", (text(s),))


def asst(*parts: Part) -> Message:
    return Message("assistant", parts)


def tool_msg(*parts: Part, role: str = "tool") -> Message:
    return Message(role, parts)


def span(
    trace: str,
    sid: str,
    parent: str | None,
    kind: SpanKind,
    start_ms: int,
    end_ms: int,
    *,
    name: str = "",
    **kw: Any,
) -> Span:
    base = Span(
        trace_id=trace,
        span_id=sid,
        parent_span_id=parent,
        name=name or kind.value,
        kind=kind,
        start_unix_nano=T0 + start_ms * 1_000_000,
        end_unix_nano=T0 + end_ms * 1_000_000,
        status="unset",
        error=None,
        convention="otel-genai",
        source=f"{trace}.json",
    )
    return replace(base, **kw)


def chat(
    trace: str,
    sid: str,
    parent: str | None,
    start: int,
    inp: list[Message],
    out: list[Message],
    **kw: Any,
) -> Span:
    kw.setdefault("tool_definitions", (CALC, WEATHER))
    kw.setdefault("input_tokens", 100)
    kw.setdefault("output_tokens", 10)
    kw.setdefault("system_instructions", SYSTEM)
    kw.setdefault("model", "gpt-4o-mini-2024-07-18")
    return span(
        trace,
        sid,
        parent,
        SpanKind.LLM,
        start,
        start + 5,
        input_messages=tuple(inp),
        output_messages=tuple(out),
        **kw,
    )


def tool(
    trace: str,
    sid: str,
    parent: str | None,
    start: int,
    name: str,
    cid: str | None,
    args: dict[str, object] | None,
    res: str | None = None,
    err: str | None = None,
    **kw: Any,
) -> Span:
    ex = ToolExecution(
        name=name,
        call_id=cid,
        arguments=None
        if args is None
        else orjson.dumps(args, option=orjson.OPT_SORT_KEYS).decode(),
        result=res,
        error=err,
    )
    status = "error" if err else "unset"
    return span(
        trace,
        sid,
        parent,
        SpanKind.TOOL,
        start,
        start + 2,
        name=f"execute_tool {name}",
        tool_execution=ex,
        status=status,
        error=err,
        **kw,
    )


def only(res: AssemblyResult) -> Turn:
    assert len(res.turns) == 1, [t.request for t in res.turns]
    return res.turns[0]


# --- raw-client: one parentless trace per model call -------------------------------

Q1, Q2 = "What is 17 * 23 + 4?", "Now compute 2 ** 10."
C1 = call("c1", "calculator", {"expression": "17 * 23 + 4"})
C2 = call("c2", "calculator", {"expression": "2 ** 10"})


def raw_multi_turn(
    prefix: str = "t", ids: tuple[str, str] = ("c1", "c2"), at: int = 0
) -> list[Span]:
    c1 = replace(C1, call_id=ids[0])
    c2 = replace(C2, call_id=ids[1])
    h1 = [user(Q1)]
    h2 = [*h1, asst(c1), tool_msg(result(ids[0], "395"))]
    h3 = [*h2, asst(text("395.")), user(Q2)]
    h4 = [*h3, asst(c2), tool_msg(result(ids[1], "1024"))]
    return [
        chat(f"{prefix}1", "a", None, at + 0, h1, [asst(c1)]),
        chat(f"{prefix}2", "b", None, at + 10, h2, [asst(text("395."))]),
        chat(f"{prefix}3", "c", None, at + 100, h3, [asst(c2)]),
        chat(f"{prefix}4", "d", None, at + 110, h4, [asst(text("1024."))]),
    ]


def test_raw_client_traces_chain_into_one_conversation_by_history() -> None:
    res = assemble_turns(raw_multi_turn())
    assert [t.request for t in res.turns] == [Q1, Q2]
    t1, t2 = res.turns
    assert t1.conversation_id == t2.conversation_id == "t1"
    assert (t1.turn_index, t2.turn_index) == (0, 1)
    assert [c.result for c in t1.calls] == ["395"]
    assert [c.result for c in t2.calls] == ["1024"]
    assert (t1.final_answer, t2.final_answer) == ("395.", "1024.")
    assert (t1.llm_calls, t1.input_tokens, t1.output_tokens) == (2, 200, 20)
    assert t1.status == t2.status == "ok"
    assert t1.tools_source == "declared"
    assert [t.name for t in t1.tools] == ["calculator", "get_weather"]
    assert t1.system_instructions == SYSTEM
    assert res.trace_conversations == {"t1": "t1", "t2": "t1", "t3": "t1", "t4": "t1"}


def test_two_runs_of_the_same_script_stay_two_conversations() -> None:
    spans = raw_multi_turn("x", ("x1", "x2")) + raw_multi_turn("y", ("y1", "y2"), at=5)
    res = assemble_turns(spans)
    by_conv: dict[str, list[str]] = {}
    for t in res.turns:
        by_conv.setdefault(t.conversation_id, []).append(t.request)
    assert by_conv == {"x1": [Q1, Q2], "y1": [Q1, Q2]}
    assert {c.call_id for t in res.turns if t.conversation_id == "y1" for c in t.calls} == {
        "y1",
        "y2",
    }


def test_conversation_id_groups_raw_traces_without_history() -> None:
    a = chat("r1", "a", None, 0, [user(Q1)], [asst(text("395."))], conversation_id="s")
    b = chat("r2", "b", None, 50, [user(Q2)], [asst(text("1024."))], conversation_id="s")
    res = assemble_turns([b, a])
    assert [(t.conversation_id, t.turn_index, t.request) for t in res.turns] == [
        ("s", 0, Q1),
        ("s", 1, Q2),
    ]


# --- agent frameworks ----------------------------------------------------------------


def agent_trace(
    trace: str,
    at: int,
    history: list[Message],
    q: str,
    cid: str,
    args: dict[str, object],
    res: str,
    answer: str,
    *,
    conv: str | None = "sess",
) -> list[Span]:
    c = call(cid, "calculator", args)
    h1 = [*history, user(q)]
    h2 = [*h1, asst(c), tool_msg(result(cid, res))]
    return [
        span(
            trace,
            "agent",
            None,
            SpanKind.AGENT,
            at,
            at + 40,
            name="invoke_agent research",
            agent_name="research",
            conversation_id=conv,
            input_tokens=999,
            output_tokens=999,
            tool_definitions=(CALC,),
        ),
        chat(trace, "chat1", "agent", at + 1, h1, [asst(c)], tool_definitions=None),
        tool(trace, "tool1", "agent", at + 7, "calculator", cid, args, res="tool text " + res),
        chat(trace, "chat2", "agent", at + 10, h2, [asst(text(answer))], tool_definitions=None),
    ]


def test_multi_turn_agent_traces_take_the_newest_user_message() -> None:
    t1 = agent_trace("A", 0, [], Q1, "c1", {"expression": "17 * 23 + 4"}, "395", "395.")
    history = [user(Q1), asst(C1), tool_msg(result("c1", "395")), asst(text("395."))]
    t2 = agent_trace("B", 100, history, Q2, "c2", {"expression": "2 ** 10"}, "1024", "1024.")
    res = assemble_turns(t1 + t2)
    assert [(t.request, t.turn_index, t.conversation_id) for t in res.turns] == [
        (Q1, 0, "sess"),
        (Q2, 1, "sess"),
    ]
    second = res.turns[1]
    assert second.trace_id == "B"
    assert [(c.name, c.arguments, c.result, c.step) for c in second.calls] == [
        ("calculator", '{"expression":"2 ** 10"}', "1024", 0)
    ]
    # token totals on the agent span are not added to the leaf model calls'
    assert (second.input_tokens, second.output_tokens, second.llm_calls) == (200, 20, 2)
    assert second.agent_name == "research"
    assert [t.name for t in second.tools] == ["calculator"]
    assert second.started_at < second.ended_at and second.duration_ms == pytest.approx(40.0)


def test_agent_runs_without_conversation_id_or_history_stay_separate_turns() -> None:
    a = agent_trace("A", 0, [], Q1, "c1", {"expression": "1"}, "1", "1.", conv=None)
    b = agent_trace("B", 100, [], Q1, "c2", {"expression": "1"}, "1", "1.", conv=None)
    res = assemble_turns(a + b)
    assert [(t.trace_id, t.conversation_id, t.turn_index) for t in res.turns] == [
        ("A", "A", 0),
        ("B", "B", 0),
    ]


def test_nested_agent_spans_give_one_turn_and_leaf_usage() -> None:
    c = call("c1", "get_weather", {"city": "Paris"})
    h1 = [user("Weather in Paris?")]
    spans = [
        span(
            "N",
            "outer",
            None,
            SpanKind.AGENT,
            0,
            50,
            agent_name="outer",
            input_tokens=500,
            tool_definitions=(WEATHER,),
        ),
        span("N", "inner", "outer", SpanKind.AGENT, 1, 49, agent_name="inner", input_tokens=500),
        chat("N", "m1", "inner", 2, h1, [asst(c)], tool_definitions=(CALC,), input_tokens=None),
        tool("N", "x1", "inner", 8, "get_weather", "c1", {"city": "Paris"}, res='{"t":18}'),
        chat(
            "N",
            "m2",
            "inner",
            12,
            [*h1, asst(c), tool_msg(result("c1", '{"t":18}'))],
            [asst(text("18 degrees."))],
            tool_definitions=(CALC,),
            input_tokens=70,
        ),
    ]
    t = only(assemble_turns(spans))
    assert (t.final_answer, t.llm_calls, t.input_tokens) == ("18 degrees.", 2, 70)
    assert {x.name for x in t.tools} == {"calculator", "get_weather"}
    assert t.agent_name == "outer"
    assert t.started_at.timestamp() == pytest.approx(T0 / 1e9)


def test_results_only_in_next_input_and_role_user_tool_results() -> None:
    c = call("c1", "calculator", {"expression": "2+2"})
    h1 = [user("2+2?")]
    # pydantic-ai style: the tool result comes back with role "user"
    h2 = [*h1, asst(c), tool_msg(result("c1", "4"), role="user")]
    spans = [
        chat("R", "m1", None, 0, h1, [asst(c)]),
        chat("R", "m2", None, 10, h2, [asst(text("4."))]),
    ]
    t = only(assemble_turns(spans))
    assert t.request == "2+2?"
    assert [(x.call_id, x.result, x.status, x.started_at) for x in t.calls] == [
        ("c1", "4", "ok", None)
    ]


def test_tool_spans_without_ids_parallel_and_out_of_order() -> None:
    a = call("ca", "get_weather", {"city": "Paris"})
    b = call("cb", "get_weather", {"city": "Oslo"})
    h1 = [user("Paris and Oslo?")]
    h2 = [
        *h1,
        asst(a, b),
        tool_msg(result("cb", "oslo seen")),
        tool_msg(result("ca", "paris seen")),
    ]
    spans = [
        span("P", "agent", None, SpanKind.AGENT, 0, 40),
        chat("P", "m1", "agent", 1, h1, [asst(a, b)]),
        # Oslo ran first, and neither tool span carries the call id
        tool("P", "oslo", "agent", 6, "get_weather", None, {"city": "Oslo"}, res="oslo span"),
        tool("P", "paris", "agent", 7, "get_weather", None, {"city": "Paris"}, err="Timeout"),
        chat("P", "m2", "agent", 12, h2, [asst(text("done"))]),
    ]
    t = only(assemble_turns(spans))
    got = [(c.call_id, c.arguments, c.result, c.error, c.status) for c in t.calls]
    assert got == [
        ("ca", '{"city":"Paris"}', "paris seen", "Timeout", "error"),
        ("cb", '{"city":"Oslo"}', "oslo seen", None, "ok"),
    ]
    assert t.calls[0].started_at is not None and t.calls[0].started_at > t.calls[1].started_at
    assert t.status == "ok"  # a failed tool the agent recovered from does not fail the turn


def test_results_without_ids_pair_by_position_and_tool_span_fills_gaps() -> None:
    a = call(None, "calculator", {"expression": "1+1"})
    b = call(None, "get_weather", {"city": "Oslo"})
    h1 = [user("two things")]
    h2 = [*h1, asst(a, b), tool_msg(result(None, "2"))]
    spans = [
        chat("Q", "m1", None, 0, h1, [asst(a, b)]),
        tool("Q", "w", None, 3, "get_weather", None, {"city": "Oslo"}, res="cold"),
        chat("Q", "m2", None, 10, h2, [asst(text("2, cold"))]),
    ]
    t = only(assemble_turns(spans))
    assert [(c.name, c.result) for c in t.calls] == [("calculator", "2"), ("get_weather", "cold")]


def test_failed_run_is_error_with_its_text() -> None:
    c = call("c1", "get_weather", {"city": "Atlantis"})
    spans = [
        span(
            "F",
            "agent",
            None,
            SpanKind.AGENT,
            0,
            20,
            status="error",
            error="ValueError: Unknown city: Atlantis",
        ),
        chat("F", "m1", "agent", 1, [user("Atlantis weather?")], [asst(c)]),
        tool(
            "F",
            "t1",
            "agent",
            7,
            "get_weather",
            "c1",
            {"city": "Atlantis"},
            err="ValueError: Unknown city: Atlantis",
        ),
    ]
    t = only(assemble_turns(spans))
    assert (t.status, t.error, t.final_answer) == (
        "error",
        "ValueError: Unknown city: Atlantis",
        None,
    )
    assert [(c.status, c.error) for c in t.calls] == [
        ("error", "ValueError: Unknown city: Atlantis")
    ]


def test_missing_parent_keeps_what_is_known_as_incomplete() -> None:
    spans = [chat("M", "m1", "never-arrived", 0, [user(Q1)], [asst(C1)], conversation_id="s")]
    t = only(assemble_turns(spans))
    assert (t.status, t.request, t.llm_calls, t.final_answer) == ("incomplete", Q1, 1, None)
    assert t.error is not None and "never-arrived" in t.error
    assert [(c.name, c.status, c.result) for c in t.calls] == [("calculator", "no_result", None)]


def test_pending_call_without_parent_issue_is_incomplete_too() -> None:
    t = only(assemble_turns([chat("M", "m1", None, 0, [user(Q1)], [asst(C1)])]))
    assert t.status == "incomplete" and t.error is not None and "requested tools" in t.error


def test_agent_span_without_model_spans_gives_a_turn() -> None:
    spans = [
        span(
            "O",
            "wf",
            None,
            SpanKind.AGENT,
            0,
            30,
            input_messages=(user(Q1),),
            output_messages=(asst(text("395.")),),
            agent_name="bridge",
        ),
        tool("O", "t1", "wf", 5, "calculator", "c1", {"expression": "17 * 23 + 4"}, res="395"),
    ]
    t = only(assemble_turns(spans))
    assert (t.request, t.final_answer, t.llm_calls, t.input_tokens) == (Q1, "395.", 0, None)
    assert [(c.name, c.result, c.step) for c in t.calls] == [("calculator", "395", 0)]
    assert (t.tools_source, [x.name for x in t.tools]) == ("inferred", ["calculator"])


def test_sub_agent_below_a_tool_does_not_split_the_turn() -> None:
    c = call("c1", "research", {"topic": "x"})
    h1 = [user("Research x")]
    spans = [
        span("S", "agent", None, SpanKind.AGENT, 0, 60),
        chat("S", "m1", "agent", 1, h1, [asst(c)]),
        tool("S", "t1", "agent", 6, "research", "c1", {"topic": "x"}, res="notes"),
        span("S", "sub", "t1", SpanKind.AGENT, 6, 8),
        chat("S", "sm", "sub", 6, [user("find x")], [asst(text("notes"))], input_tokens=5),
        chat(
            "S",
            "m2",
            "agent",
            20,
            [*h1, asst(c), tool_msg(result("c1", "notes"))],
            [asst(text("x is notes"))],
        ),
    ]
    t = only(assemble_turns(spans))
    assert (t.request, t.llm_calls, t.input_tokens) == ("Research x", 3, 205)
    assert [(c.name, c.step) for c in t.calls] == [("research", 0)]


def test_a_run_called_as_a_tool_by_a_caller_the_export_lacks_makes_its_turn() -> None:
    # A tool server's trace: the run sits below the tool span its caller's request made,
    # and the caller's model calls are elsewhere. Its tool span frames the run: the run's
    # own tool call is the turn's, the frame is none, and nothing below is lost.
    c = call("c1", "calculator", {"expression": "2 ** 10"})
    h1 = [user("Compute 2 ** 10")]
    spans = [
        tool("F", "frame", "elsewhere", 0, "solve", "s1", {"task": "2 ** 10"}, res="1024.",
             end_unix_nano=T0 + 60_000_000),
        span("F", "agent", "frame", SpanKind.AGENT, 1, 59),
        chat("F", "m1", "agent", 2, h1, [asst(c)]),
        tool("F", "t1", "agent", 8, "calculator", "c1", {"expression": "2 ** 10"}, res="1024"),
        chat("F", "m2", "agent", 20, [*h1, asst(c), tool_msg(result("c1", "1024"))],
             [asst(text("1024."))]),
    ]
    t = only(assemble_turns(spans))
    assert (t.request, t.final_answer, t.llm_calls) == ("Compute 2 ** 10", "1024.", 2)
    assert [(c.name, c.result, c.step) for c in t.calls] == [("calculator", "1024", 0)]
    # With the caller's model call in the trace, the same run is its tool's sub-agent again.
    caller = [span("F", "elsewhere", None, SpanKind.AGENT, -10, 70),
              chat("F", "cm", "elsewhere", -5, [user("Solve it")], [asst(text("Done."))])]
    t = only(assemble_turns([*caller, *spans]))
    assert (t.request, [c.name for c in t.calls], t.llm_calls) == ("Solve it", ["solve"], 3)


def test_no_tools_and_no_usage_are_none_not_zero() -> None:
    s = chat(
        "Z",
        "m",
        None,
        0,
        [user("hi")],
        [asst(text("hello"))],
        tool_definitions=None,
        input_tokens=None,
        output_tokens=None,
    )
    t = only(assemble_turns([s]))
    assert (t.tools, t.tools_source, t.input_tokens, t.output_tokens) == ((), "none", None, None)


def test_same_spans_any_order_and_duplicates_give_the_same_turns() -> None:
    t1 = agent_trace("A", 0, [], Q1, "c1", {"expression": "17 * 23 + 4"}, "395", "395.")
    spans = raw_multi_turn() + t1
    expected = assemble_turns(spans).turns
    shuffled = spans + spans[:3]
    random.Random(7).shuffle(shuffled)
    again = assemble_turns(shuffled)
    assert again.turns == expected
    assert again.errors == []
    assert len({t.turn_id for t in expected}) == len(expected)


def test_conflicting_duplicate_is_reported() -> None:
    a = chat("D", "m", None, 0, [user("hi")], [asst(text("hello"))])
    b = replace(a, attributes=SpanAttributes({"x": 1}, {}), source="other.json")
    c = replace(a, attributes=SpanAttributes({"x": 2}, {}), source="third.json")
    res = assemble_turns([b, c])
    assert len(res.turns) == 1
    assert len(res.errors) == 1 and "span m" in res.errors[0].position


def test_turn_metadata_fields() -> None:
    root_attrs = {
        "gen_ai.input.messages": "[...]",
        "llm.input_messages.0.message.role": "user",
        "gen_ai.agent.name": "research",
        "deployment": "prod",
    }
    spans = agent_trace("A", 0, [], Q1, "c1", {"expression": "1"}, "1", "1.")
    spans[0] = replace(
        spans[0],
        attributes=SpanAttributes(root_attrs, {}),
        case_id="case-7",
        service_name="svc",
        convention="pydantic-ai",
    )
    t = only(assemble_turns(spans, ingest_id="run-1"))
    assert orjson.loads(t.attributes) == {"gen_ai.agent.name": "research", "deployment": "prod"}
    assert (t.case_id, t.service_name, t.ingest_id) == ("case-7", "svc", "run-1")
    assert t.convention == "otel-genai,pydantic-ai"
    assert t.source == "A.json"
    assert t.model == "gpt-4o-mini-2024-07-18"
    assert t.content_hash and t.content_hash == t.with_hash().content_hash


def test_steps_count_model_calls_across_tool_rounds() -> None:
    a = call("a", "calculator", {"expression": "1+1"})
    b = call("b", "get_weather", {"city": "Oslo"})
    h1 = [user("q")]
    h2 = [*h1, asst(a), tool_msg(result("a", "2"))]
    h3 = [*h2, asst(text("thinking"), b), tool_msg(result("b", "cold"))]
    spans = [
        chat("S", "m1", None, 0, h1, [asst(a)]),
        chat("S", "m2", None, 10, h2, [asst(text("thinking"), b)]),
        chat("S", "m3", None, 20, h3, [asst(text("2 and cold"))]),
    ]
    t = only(assemble_turns(spans))
    assert [(c.name, c.step, c.result) for c in t.calls] == [
        ("calculator", 0, "2"),
        ("get_weather", 1, "cold"),
    ]
    assert (t.llm_calls, t.final_answer) == (3, "2 and cold")


def test_names_only_declaration_merges_with_a_tool_span_schema() -> None:
    names_only = (ToolDef("calculator"), ToolDef("get_weather"))
    spans = agent_trace("A", 0, [], Q1, "c1", {"expression": "1"}, "1", "1.")
    spans[0] = replace(spans[0], tool_definitions=names_only)
    spans[2] = replace(spans[2], tool_definitions=(CALC,))
    t = only(assemble_turns(spans))
    assert t.tools_source == "declared"
    assert t.tools == (
        Tool("calculator", CALC.description, CALC.parameters),
        Tool("get_weather", None, None),
    )


def test_a_long_raw_client_conversation_chains_every_trace() -> None:
    history: list[Message] = []
    spans: list[Span] = []
    for i in range(60):
        c = call(f"id{i}", "calculator", {"expression": str(i)})
        history.append(user(f"question {i}"))
        spans.append(chat(f"t{i}a", "a", None, i * 100, history, [asst(c)]))
        history += [asst(c), tool_msg(result(f"id{i}", str(i)))]
        spans.append(chat(f"t{i}b", "b", None, i * 100 + 10, history, [asst(text(f"{i}."))]))
        history.append(asst(text(f"{i}.")))
    res = assemble_turns(spans)
    assert {t.conversation_id for t in res.turns} == {"t0a"}
    assert [(t.turn_index, t.request, t.final_answer) for t in res.turns] == [
        (i, f"question {i}", f"{i}.") for i in range(60)
    ]
    assert all(t.calls[0].result == str(t.turn_index) for t in res.turns)


def test_one_trace_holding_two_turns_splits_at_the_new_user_message() -> None:
    h1 = [user(Q1)]
    h2 = [*h1, asst(text("395.")), user(Q2)]
    spans = [
        span("W", "session", None, SpanKind.AGENT, 0, 100, status="error", error="later crash"),
        chat("W", "m1", "session", 1, h1, [asst(text("395."))]),
        chat("W", "m2", "session", 50, h2, [asst(text("1024."))]),
    ]
    res = assemble_turns(spans)
    assert [(t.request, t.final_answer, t.status) for t in res.turns] == [
        (Q1, "395.", "ok"),
        (Q2, "1024.", "ok"),
    ]
    first, second = res.turns
    assert first.ended_at <= second.started_at  # timed by their own spans, not the shared root
    assert first.turn_id != second.turn_id
