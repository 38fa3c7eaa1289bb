"""How spans become turns, on shapes recorded with the real OTel SDK (the convention
fixtures' `Recorder`) where a rule of assembly, not a decoder, decides the turn:

- calls seen only in a later request's history: a model call whose output was not
  captured (LlamaIndex's OTel integration drops a streamed call's end event, which comes
  after its span closed: run-llama/llama_index `llama-index-observability-otel`), whose
  tool calls and results the next model call of the turn replays (`linking` rule 1);
- a tool call whose arguments and result were not captured (the Google GenAI SDK
  instrumentation in `EVENT_ONLY` mode: open-telemetry/opentelemetry-python-contrib
  `instrumentation-genai/opentelemetry-instrumentation-google-genai/.../tool_call_wrapper.py`
  sets `gen_ai.tool.call.arguments` / `result` only when content goes on spans);
- DSPy ReAct's `finish` pseudo-tool (stanfordnlp/dspy `dspy/predict/react.py`);
- a run its caller invoked as a tool, with the caller's model calls not in the export (a
  tool server traced on its own: the `tools/call` span of modelcontextprotocol/python-sdk
  `src/mcp/server/lowlevel/server.py` under the caller's propagated context);
- the agent of an orchestrated turn (strands-agents/sdk-python
  `src/strands/telemetry/tracer.py` `start_multiagent_span`: `gen_ai.agent.name` is the
  orchestration's, `swarm` / `graph`).

Each test pins what the turn must be (DESIGN §3), not how assembly gets there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opentelemetry.trace import SpanKind

from tests.ingest.test_multi_agent_shapes import HANDED, HANDOFF, multiagent, s_node, swarm_prompt
from tests.ingest.test_stack_forms import turns_of
from tests.ingest.test_survey2_forms import (
    ANSWER,
    ARGUMENTS,
    REQUEST,
    SYSTEM,
    _li_agent,
    _li_chat_events,
    _li_message,
    _li_text,
)
from tests.ingest.test_turn_shapes import (
    A1,
    A2,
    PARIS,
    PARIS_OUT,
    Q1,
    Q2,
    ROME,
    ROME_OUT,
    agent,
    answers,
    asks,
    chat,
    said,
    tool,
    user,
)
from turnscore.ingest.turn import Turn


def _j(value: Any) -> str:
    return json.dumps(value)


def _c(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _calls(turn: Turn) -> list[tuple[str, str | None, str | None, str | None, str, int]]:
    return [(c.name, c.call_id, c.arguments, c.result, c.status, c.step) for c in turn.calls]


# --- calls seen only in a later request ---------------------------------------------------


def test_llamaindex_streamed_agent_calls_come_from_the_next_request(tmp_path: Path) -> None:
    """A FunctionAgent run streamed (its default): neither model call has an output, but
    the second one's request replays the first one's tool call and its result. The call is
    the turn's; the answer stays not captured."""
    [turn] = turns_of(lambda r: _li_agent(r, streamed=True), tmp_path)
    assert _calls(turn) == [("get_weather", "call_1", ARGUMENTS, "18C, cloudy", "ok", 0)]
    assert [t.name for t in turn.tools] == ["get_weather"]
    assert (turn.final_answer, turn.status, turn.issues) == (
        None, "incomplete", ("answer_not_captured",))


LI_CALL_2 = {"block_type": "tool_call", "tool_call_id": "call_2", "tool_name": "get_weather",
             "tool_kwargs": {"city": "Rome"}}


def test_llamaindex_streamed_steps_each_take_their_own_replayed_calls(tmp_path: Path) -> None:
    """Three streamed model calls, two tool rounds: each replayed tool call belongs to the
    step that asked for it, once, though every later request replays it again."""
    history = [_li_message("system", _li_text(SYSTEM)), _li_message("user", _li_text(REQUEST))]
    after_1 = [*history, _li_message("assistant", {**LI_CALL_2, "tool_call_id": "call_1",
                                                   "tool_kwargs": {"city": "Paris"}}),
               _li_message("tool", _li_text("18C, cloudy"), tool_call_id="call_1")]
    after_2 = [*after_1, _li_message("assistant", LI_CALL_2),
               _li_message("tool", _li_text("24C, sunny"), tool_call_id="call_2")]

    def record(r: Any) -> None:
        with r.span("FunctionAgent.run", {}):
            for messages in (history, after_1, after_2):
                with r.span("OpenAI.astream_chat", {"llamaindex.run_id": "run"},
                            events=_li_chat_events(messages, None, (0, 0))):
                    pass

    [turn] = turns_of(record, tmp_path)
    assert _calls(turn) == [
        ("get_weather", "call_1", ARGUMENTS, "18C, cloudy", "ok", 0),
        ("get_weather", "call_2", _c(ROME), "24C, sunny", "ok", 1)]
    assert turn.llm_calls == 3


def test_replayed_calls_of_an_earlier_turn_stay_in_it(tmp_path: Path) -> None:
    """Two turns of one conversation, every output lost: the second turn's requests replay
    the first turn's call before the second user message. It is the first turn's call
    only; the second turn's own is read from after its user message."""
    conv = {"gen_ai.conversation.id": "s1"}
    turn_1 = [user(Q1), asks(("c1", "get_weather", PARIS)), answers(("c1", PARIS_OUT))]
    turn_2 = [*turn_1, said(A1), user(Q2)]

    def record(r: Any) -> None:
        with agent(r, "helper", **conv):
            chat(r, turn_1[:1], None)
            chat(r, turn_1, None)
            chat(r, turn_2, None)
            chat(r, [*turn_2, asks(("c2", "get_weather", ROME)), answers(("c2", ROME_OUT))],
                 [said(A2)])

    first, second = turns_of(record, tmp_path)
    assert _calls(first) == [("get_weather", "c1", _c(PARIS), _c(PARIS_OUT), "ok", 0)]
    assert _calls(second) == [("get_weather", "c2", _c(ROME), _c(ROME_OUT), "ok", 0)]
    assert (second.request, second.final_answer, second.status) == (Q2, A2, "ok")
    # The first turn's answer, lost with its output, is what the second turn replays.
    assert (first.final_answer, first.status, first.issues) == (A1, "ok", ())


def test_history_before_the_user_message_never_fills_a_step(tmp_path: Path) -> None:
    """A step of the second turn whose output was lost said something without asking for
    a tool (its text is replayed): the earlier turn's lost call, replayed before the user
    message, is no call of this turn, though a step of it lacks an output."""
    conv = {"gen_ai.conversation.id": "s1"}
    turn_1 = [user(Q1), asks(("c1", "get_weather", PARIS)), answers(("c1", PARIS_OUT))]
    turn_2 = [*turn_1, said(A1), user(Q2)]

    def record(r: Any) -> None:
        with agent(r, "helper", **conv):
            chat(r, turn_1[:1], None)
            chat(r, turn_1, [said(A1)])
            chat(r, turn_2, None)
            chat(r, [*turn_2, said("Let me check.")], [said(A2)])

    first, second = turns_of(record, tmp_path)
    assert [c.call_id for c in first.calls] == ["c1"]
    assert (second.request, second.calls, second.final_answer) == (Q2, (), A2)


# --- tool calls whose content was not captured ----------------------------------------


def _google_genai(r: Any, on_spans: bool) -> None:
    """opentelemetry-instrumentation-google-genai on opentelemetry-util-genai, automatic
    function calling: one `generate_content` span; content on it (`SPAN_ONLY`) or in the
    operation-details log event (`EVENT_ONLY`); an `execute_tool` child (span kind
    CLIENT, no call id) whose arguments and result are written only with content on
    spans."""
    inputs = [{"role": "user", "parts": [{"type": "text", "content": REQUEST}]}]
    outputs = [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}],
                "finish_reason": "stop"}]
    content = {"gen_ai.input.messages": _j(inputs), "gen_ai.output.messages": _j(outputs)}
    tool: dict[str, Any] = {"gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": "get_weather",
                            "gen_ai.tool.description": "Weather for a city."}
    if on_spans:
        tool.update({"gen_ai.tool.call.arguments": ARGUMENTS,
                     "gen_ai.tool.call.result": _j("18C, cloudy")})
    with r.span("generate_content gemini-2.5-flash", {
        "gen_ai.operation.name": "generate_content", "gen_ai.provider.name": "gemini",
        "gen_ai.request.model": "gemini-2.5-flash", "gen_ai.usage.input_tokens": 80,
        "gen_ai.usage.output_tokens": 12, **(content if on_spans else {}),
    }, kind=SpanKind.CLIENT):
        if not on_spans:
            r.log("gen_ai.client.inference.operation.details", None, content)
        with r.span("execute_tool get_weather", tool, kind=SpanKind.CLIENT):
            pass


def test_google_genai_event_only_tool_call_content_is_not_captured(tmp_path: Path) -> None:
    """`EVENT_ONLY`: the model call's content arrives in the event, the tool span carries
    only the tool's name. The call ran (`ok`); its arguments and result are not empty but
    not captured, and the turn says so."""
    [turn] = turns_of(lambda r: _google_genai(r, on_spans=False), tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert [(c.name, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", None, None, "ok")]
    assert turn.issues == ("call_content_not_captured",)


def test_google_genai_span_only_tool_call_is_captured(tmp_path: Path) -> None:
    """The same run with content on spans: nothing to report."""
    [turn] = turns_of(lambda r: _google_genai(r, on_spans=True), tmp_path)
    assert [(c.name, c.arguments, c.status) for c in turn.calls] == [
        ("get_weather", ARGUMENTS, "ok")]
    assert turn.issues == ()


# --- a run called as a tool -------------------------------------------------------------


def test_a_run_framed_by_its_callers_tool_span_is_a_turn(tmp_path: Path) -> None:
    """A tool server's export: its agent runs below the tool span of the call it serves,
    whose caller (and its model calls) is another service's export. The run is a turn of
    its own, with its own tool call; the framing tool span is no call of it."""

    def record(r: Any) -> None:
        h1 = [user(Q1)]
        with (tool(r, "plan_trip", "p1", {"city": "Paris"}, A1),
              agent(r, "weather-server")):  # fmt: skip
            chat(r, h1, [asks(("c1", "get_weather", PARIS))])
            with tool(r, "get_weather", "c1", PARIS, PARIS_OUT):
                pass
            chat(r, [*h1, asks(("c1", "get_weather", PARIS)), answers(("c1", PARIS_OUT))],
                 [said(A1)])

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.agent_name) == (Q1, A1, "weather-server")
    assert [(c.name, c.call_id, c.result) for c in turn.calls] == [
        ("get_weather", "c1", _c(PARIS_OUT))]


# --- orchestrated turns -----------------------------------------------------------------


def test_strands_swarm_turn_is_the_orchestrators(tmp_path: Path) -> None:
    """A Swarm's turn is run by the swarm, not by whichever node it started with: the
    orchestration's span names it (`gen_ai.agent.name` `swarm`)."""

    def record(r: Any) -> None:
        with multiagent(r, "swarm", Q1):
            s_node(r, "triage", swarm_prompt(None),
                   [("h1", "handoff_to_agent", HANDOFF, HANDED)], "Handing off.")
            s_node(r, "weather", swarm_prompt(HANDOFF["message"]),
                   [("c1", "get_weather", PARIS, _j(PARIS_OUT))], A1)

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.agent_name) == (Q1, A1, "swarm")


def test_a_single_agent_turn_keeps_its_agent(tmp_path: Path) -> None:
    """No orchestrator above it: the agent run's own name."""

    def record(r: Any) -> None:
        with r.span("session", {}), agent(r, "helper"):
            chat(r, [user(Q1)], [said(A1)])

    [turn] = turns_of(record, tmp_path)
    assert turn.agent_name == "helper"


def test_an_instrumentations_stamped_agent_name_is_no_agent() -> None:
    """The official Agents SDK bridge sets `gen_ai.agent.name = OpenAI Agent` on every span
    (its instrumentor's default), the agent's own name only on `invoke_agent`; an unnamed
    LangGraph graph is `LangGraph`: the turn's agent is the one the user spoke to."""
    from turnscore.ingest.assemble import assemble_turns
    from turnscore.ingest.decode import decode_spans, trace_order
    from turnscore.ingest.otlp import read_file
    from turnscore.ingest.records import RawSpan

    stacks = Path(__file__).parent.parent / "fixtures" / "stacks"
    for folder, agents in (("openai-agents-otel/single_tool", ["research_assistant"]),
                           ("openai-agents-otel-handoff/handoff", ["triage_agent"] * 2),
                           ("openai-agents-openinference-handoff/handoff", ["triage_agent"] * 2),
                           # OpenLLMetry's invoke_agent over LangGraph's unnamed supervisor
                           # graph is `LangGraph`: the agent is the one the graph runs first.
                           ("langgraph-supervisor/handoff", ["triage_agent"] * 2)):
        spans = [r for f in sorted((stacks / folder).glob("*.pb")) for r in read_file(f)
                 if isinstance(r, RawSpan)]
        decoded, _ = decode_spans(trace_order(spans), [])
        assert [t.agent_name for t in assemble_turns(decoded).turns] == agents, folder
