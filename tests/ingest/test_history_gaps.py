"""History links across a replayed assistant message whose content was not captured, or
whose calls the earlier output recorded wrong.

Raw-client instrumentations export one trace per model call and no conversation id, so
grouping chains the calls by history (`turnscore.ingest.links`). Some replay the
assistant message that asked for a tool with its role only: BerriAI/litellm
`litellm/integrations/opentelemetry.py` (`set_attributes`, the flattened
`gen_ai.prompt.N.{role,content}` form) sets a prompt's `content` only when truthy and
never its `tool_calls`, while the completion carries the call
(`gen_ai.completion.N.function_call.{name,arguments}`). The later call's input then no
longer extends the earlier's input + output; the gap rule (`links.gap_keys`) joins them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.test_stack_forms import Recorder, turns_of
from turnscore.ingest.assemble import assemble_turns
from turnscore.ingest.links import (
    call_ids,
    components,
    gap_history_key,
    gap_keys,
    history_key,
    join_keys,
    prefix_keys,
    span_links,
)
from turnscore.ingest.model import Message, Part, PartType, Span, SpanKind
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.store import TurnStore

REQUEST = "What is the weather in Paris?"
ANSWER = "It is 18C and cloudy in Paris."
ARGS = {"city": "Paris"}
_COMMON = {"llm.request.type": "completion", "gen_ai.system": "openai",
           "gen_ai.request.model": "gpt-4o-mini",
           "llm.request.functions.0.name": "get_weather",
           "llm.request.functions.0.parameters": json.dumps(
               {"type": "object", "properties": {"city": {"type": "string"}}})}


def _asks_tool(request: str, args: dict[str, Any]) -> dict[str, Any]:
    return {**_COMMON, "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": request,
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.finish_reason": "tool_calls",
            "gen_ai.completion.0.function_call.name": "get_weather",
            "gen_ai.completion.0.function_call.arguments": json.dumps(args)}


def _answers(request: str, result: str, answer: str) -> dict[str, Any]:
    return {**_COMMON, "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": request,
            "gen_ai.prompt.1.role": "assistant",  # its tool call not replayed
            "gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.content": result,
            "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": answer,
            "gen_ai.completion.0.finish_reason": "stop"}


def test_litellm_replayed_call_without_its_tool_call_continues_the_turn(tmp_path: Path) -> None:
    def record(r: Any) -> None:
        with r.span("litellm_request", _asks_tool(REQUEST, ARGS)):
            pass
        with r.span("litellm_request", _answers(REQUEST, "18C, cloudy", ANSWER)):
            pass

    turns = turns_of(record, tmp_path)
    assert [(t.request, t.final_answer, t.llm_calls) for t in turns] == [(REQUEST, ANSWER, 2)]
    [turn] = turns
    assert [(c.name, json.loads(c.arguments or "null"), c.result) for c in turn.calls] == [
        ("get_weather", ARGS, "18C, cloudy")]


def _replay(request: str, *rounds: str, system: str | None = None) -> dict[str, Any]:
    """A prompt as LiteLLM's callback writes it: each round's tool call replayed as a
    role-only assistant message, then its result."""
    messages = [("system", system)] if system else []
    messages.append(("user", request))
    for result in rounds:
        messages += [("assistant", None), ("tool", result)]
    attrs: dict[str, Any] = {}
    for i, (role, content) in enumerate(messages):
        attrs[f"gen_ai.prompt.{i}.role"] = role
        if content is not None:
            attrs[f"gen_ai.prompt.{i}.content"] = content
    return attrs


def _completion(*, text: str | None = None, call: dict[str, Any] | None = None) -> dict[str, Any]:
    attrs: dict[str, Any] = {"gen_ai.completion.0.role": "assistant"}
    if text is not None:
        attrs["gen_ai.completion.0.content"] = text
    if call is not None:
        attrs["gen_ai.completion.0.function_call.name"] = "get_weather"
        attrs["gen_ai.completion.0.function_call.arguments"] = json.dumps(call)
    return attrs


def test_a_chain_through_two_gaps_is_one_turn(tmp_path: Path) -> None:
    def record(r: Any) -> None:
        with r.span("litellm_request", {**_COMMON, **_replay(REQUEST),
                                        **_completion(call=ARGS)}):
            pass
        with r.span("litellm_request", {**_COMMON, **_replay(REQUEST, "18C, cloudy"),
                                        **_completion(call={"city": "Lyon"})}):
            pass
        with r.span("litellm_request", {**_COMMON, **_replay(REQUEST, "18C, cloudy", "20C"),
                                        **_completion(text=ANSWER)}):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 3)
    assert [(json.loads(c.arguments or "null"), c.result) for c in turn.calls] == [
        (ARGS, "18C, cloudy"), ({"city": "Lyon"}, "20C")]


# --- the guard: a gap stands only for a call the later input continues ------------------


def _two_traces(tmp_path: Path, first: dict[str, Any], second: dict[str, Any]) -> list[Any]:
    def record(r: Any) -> None:
        for attrs in (first, second):
            with r.span("litellm_request", {**_COMMON, **attrs}):
                pass

    return turns_of(record, tmp_path)


def test_a_gap_after_another_request_stays_apart(tmp_path: Path) -> None:
    turns = _two_traces(tmp_path, {**_replay(REQUEST), **_completion(call=ARGS)},
                        {**_replay("And in Lyon?", "20C"), **_completion(text="20C in Lyon.")})
    assert [(t.request, t.llm_calls) for t in turns] == [(REQUEST, 1), ("And in Lyon?", 1)]


def test_traces_sharing_only_a_system_prompt_stay_apart(tmp_path: Path) -> None:
    """A gap joins a history, never what every trace of the app begins with: with no user
    message before it, the earlier call's input is the system prompt alone."""
    system = "You answer weather questions."
    prompt = {"gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": system}
    later = {**prompt, "gen_ai.prompt.1.role": "assistant", "gen_ai.prompt.2.role": "tool",
             "gen_ai.prompt.2.content": "18C, cloudy", **_completion(text=ANSWER)}
    turns = _two_traces(tmp_path, {**prompt, **_completion(call=ARGS)}, later)
    assert [t.llm_calls for t in turns] == [1, 1]
    # The same pair with the user message in both is one turn: the guard is what parts them.
    (tmp_path / "joined").mkdir()
    joined = _two_traces(tmp_path / "joined",
                         {**_replay(REQUEST, system=system), **_completion(call=ARGS)},
                         {**_replay(REQUEST, "18C, cloudy", system=system),
                          **_completion(text=ANSWER)})
    assert [t.llm_calls for t in joined] == [2]


def test_an_output_that_said_something_is_not_what_a_gap_stands_for(tmp_path: Path) -> None:
    """A replay without content stands for an output without text: LiteLLM writes the
    content of every replayed message that has one."""
    said = {**_replay(REQUEST), **_completion(text="Let me check.", call=ARGS)}
    turns = _two_traces(tmp_path, said, {**_replay(REQUEST, "18C, cloudy"),
                                         **_completion(text=ANSWER)})
    assert [t.llm_calls for t in turns] == [1, 1]


def _oll_call(call_id: str) -> dict[str, Any]:
    """OpenLLMetry's older versions (traceloop/openllmetry
    `opentelemetry-instrumentation-openai/.../shared/chat_wrappers.py`): `_set_prompts`
    writes a prompt's role and content only; `_set_completions` the completion's tool
    calls with their ids."""
    return {"gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.tool_calls.0.id": call_id,
            "gen_ai.completion.0.tool_calls.0.name": "get_weather",
            "gen_ai.completion.0.tool_calls.0.arguments": json.dumps(ARGS)}


def _oll_answer(result_id: str) -> dict[str, Any]:
    return {**_replay(REQUEST, "18C, cloudy"), "gen_ai.prompt.2.tool_call_id": result_id,
            **_completion(text=ANSWER)}


@pytest.mark.parametrize(("result_id", "calls"), [("call_1", [2]), ("call_9", [1, 1])])
def test_tool_results_naming_another_call_stay_apart(
    result_id: str, calls: list[int], tmp_path: Path
) -> None:
    """Ids are compared where both sides name them: two runs of one script stay apart."""
    turns = _two_traces(tmp_path, {**_replay(REQUEST), **_oll_call("call_1")},
                        _oll_answer(result_id))
    assert [t.llm_calls for t in turns] == calls


def test_openinference_replay_without_its_tool_calls(tmp_path: Path) -> None:
    """OpenInference where an input message's tool calls are not captured (the output's
    are: `llm.output_messages.0.message.tool_calls.*`), one trace per call, no session."""
    base = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": REQUEST}
    out = "llm.output_messages.0.message."

    def record(r: Any) -> None:
        with r.span("ChatCompletion", {
                **base, out + "role": "assistant",
                out + "tool_calls.0.tool_call.id": "call_1",
                out + "tool_calls.0.tool_call.function.name": "get_weather",
                out + "tool_calls.0.tool_call.function.arguments": json.dumps(ARGS)}):
            pass
        with r.span("ChatCompletion", {
                **base, "llm.input_messages.1.message.role": "assistant",
                "llm.input_messages.2.message.role": "tool",
                "llm.input_messages.2.message.tool_call_id": "call_1",
                "llm.input_messages.2.message.content": "18C, cloudy",
                out + "role": "assistant", out + "content": ANSWER}):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 2)
    assert [(c.call_id, c.result) for c in turn.calls] == [("call_1", "18C, cloudy")]


# --- the keys: extra on both sides, the others unchanged, found in the store ------------


def _span(trace: str, start: int, history: list[Message], answer: list[Message]) -> Span:
    return Span(trace_id=trace, span_id="01", parent_span_id=None, name="chat",
                kind=SpanKind.LLM, start_unix_nano=start, end_unix_nano=start + 1,
                status="ok", error=None, convention="openllmetry",
                input_messages=tuple(history), output_messages=tuple(answer))


USER = Message("user", (Part(PartType.TEXT, REQUEST),))
ASKS = Message("assistant", (Part(PartType.TOOL_CALL, name="get_weather",
                                  arguments=json.dumps(ARGS)),))
HOLE = Message("assistant", ())
RESULT = Message("tool", (Part(PartType.TOOL_RESULT, "18C, cloudy"),))
SAYS = Message("assistant", (Part(PartType.TEXT, ANSWER),))


def test_gap_keys_are_extra_keys_that_meet_each_other_only() -> None:
    earlier = _span("t1", 1, [USER], [ASKS])
    later = _span("t2", 2, [USER, HOLE, RESULT], [SAYS])
    gap = gap_history_key(earlier)
    assert gap is not None and gap_keys(later) == (gap,)
    # The keys stored before: the gap is left out of them, as it always was.
    assert prefix_keys(later) == prefix_keys(_span("t2", 2, [USER, RESULT], [SAYS]))
    assert history_key(later) == history_key(_span("t2", 2, [USER, RESULT], [SAYS]))
    assert gap not in {history_key(earlier), history_key(later), *prefix_keys(later)}
    assert gap_history_key(later) is None  # its output said something
    # The backward and the forward store lookups (`SpanStore.linked_traces`): the new
    # trace's histories against the stored prefix keys.
    stored = span_links([earlier, later], {})
    early, late = join_keys([earlier]), join_keys([later])
    assert late.histories & set(stored["t1", "01"].prefix_keys)
    assert early.histories & set(stored["t2", "01"].prefix_keys)
    assert early.meets(late) and components({"t1": early, "t2": late}) == {"t1": "t1", "t2": "t1"}


def _in_either_order(
    tmp_path: Path, span: str, first: dict[str, Any], second: dict[str, Any]
) -> dict[str, list[Any]]:
    """Two traces ingested one per run, forward and backward: the stored turns of each."""
    files = {}
    for name, attrs in (("a", first), ("b", second)):
        recorder = Recorder("history-gaps")
        with recorder.span(span, attrs):
            pass
        (tmp_path / name).mkdir()
        files[name] = recorder.write(tmp_path / name, name)
    out = {}
    for order, folder in ((("a", "b"), "forward"), (("b", "a"), "backward")):
        for name in order:
            ingest_paths(files[name], tmp_path / folder)
        out[folder] = TurnStore(tmp_path / folder, "read").read_all()
    return out


def test_a_gap_found_across_batches_in_either_order(tmp_path: Path) -> None:
    """The store finds either call's trace from the other's: the same turn however the
    input is cut."""
    runs = _in_either_order(tmp_path, "litellm_request", _asks_tool(REQUEST, ARGS),
                            _answers(REQUEST, "18C, cloudy", ANSWER))
    for order, turns in runs.items():
        assert [(t.request, t.final_answer, t.llm_calls) for t in turns] == [
            (REQUEST, ANSWER, 2)], order


# --- requests recorded wrong: the replay holds the calls the output lost -----------------
# One trace per model call, no session (OpenInference's flattened form). The first call's
# recorded output holds the stream's last call only, or its parallel calls merged into one
# (@arizeai/openinference-instrumentation-openai 4.x); the next call's input replays the
# request as the client sent it back, both calls with their ids, then their results.

SEARCH = {"query": "rate limits"}
_OI = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini"}
_IN, _OUT = "llm.input_messages.", "llm.output_messages.0.message."


def _asked(request: str, *calls: tuple[str, str, str]) -> dict[str, Any]:
    attrs: dict[str, Any] = {**_OI, _IN + "0.message.role": "user",
                             _IN + "0.message.content": request, _OUT + "role": "assistant"}
    for k, (call_id, name, arguments) in enumerate(calls):
        at = f"{_OUT}tool_calls.{k}.tool_call."
        attrs |= {at + "id": call_id, at + "function.name": name,
                  at + "function.arguments": arguments}
    return attrs


def _replayed(request: str, ids: tuple[str, str], answer: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {**_OI, _IN + "0.message.role": "user",
                             _IN + "0.message.content": request,
                             _IN + "1.message.role": "assistant",
                             _OUT + "role": "assistant", _OUT + "content": answer}
    for k, (call_id, (name, args, result)) in enumerate(zip(ids, (
            ("get_weather", ARGS, "18C, cloudy"), ("search_docs", SEARCH, "60 per minute")),
            strict=True)):
        at = f"{_IN}1.message.tool_calls.{k}.tool_call."
        attrs |= {at + "id": call_id, at + "function.name": name,
                  at + "function.arguments": json.dumps(args),
                  f"{_IN}{2 + k}.message.role": "tool",
                  f"{_IN}{2 + k}.message.tool_call_id": call_id,
                  f"{_IN}{2 + k}.message.content": result}
    return attrs


BOTH = [("get_weather", ARGS, "18C, cloudy"), ("search_docs", SEARCH, "60 per minute")]
LAST_CHUNK = ("c_2", "search_docs", json.dumps(SEARCH))
MERGED = ("call_1call_2", "get_weathersearch_docs", json.dumps(ARGS) + json.dumps(SEARCH))


def _calls(turn: Any) -> list[tuple[str, Any, str | None]]:
    return [(c.name, json.loads(c.arguments or "null"), c.result) for c in turn.calls]


@pytest.mark.parametrize(("recorded", "ids"), [
    pytest.param(LAST_CHUNK, ("c_1", "c_2"), id="last-chunk"),
    pytest.param(MERGED, ("call_1", "call_2"), id="merged"),
])
def test_a_request_recorded_wrong_is_read_from_its_replay(
    recorded: tuple[str, str, str], ids: tuple[str, str], tmp_path: Path
) -> None:
    turns = _two_traces(tmp_path, _asked(REQUEST, recorded), _replayed(REQUEST, ids, ANSWER))
    assert [(t.request, t.final_answer, t.llm_calls) for t in turns] == [(REQUEST, ANSWER, 2)]
    assert _calls(turns[0]) == BOTH
    assert [c.call_id for c in turns[0].calls] == list(ids)


def test_runs_of_one_script_recorded_wrong_stay_apart(tmp_path: Path) -> None:
    """Two runs of one request, interleaved: each replay joins the output whose call it
    names, not the latest earlier output of the same request."""
    def record(r: Any) -> None:
        for attrs in (_asked(REQUEST, ("a_2", "search_docs", json.dumps(SEARCH))),
                      _asked(REQUEST, ("b_2", "search_docs", json.dumps(SEARCH))),
                      _replayed(REQUEST, ("a_1", "a_2"), ANSWER),
                      _replayed(REQUEST, ("b_1", "b_2"), "Cloudy; 60 a minute.")):
            with r.span("ChatCompletion", attrs):
                pass

    turns = turns_of(record, tmp_path)
    assert sorted((t.final_answer, t.llm_calls, tuple(c.call_id for c in t.calls))
                  for t in turns) == [("Cloudy; 60 a minute.", 2, ("b_1", "b_2")),
                                      (ANSWER, 2, ("a_1", "a_2"))]


def test_a_replayed_request_sharing_no_call_with_the_output_stays_apart(tmp_path: Path) -> None:
    turns = _two_traces(tmp_path, _asked(REQUEST, ("x_9", "search_docs", '{"query": "x"}')),
                        _replayed(REQUEST, ("c_1", "c_2"), ANSWER))
    assert [t.llm_calls for t in turns] == [1, 1]


def test_a_request_recorded_wrong_found_across_batches_in_either_order(tmp_path: Path) -> None:
    runs = _in_either_order(tmp_path, "ChatCompletion", _asked(REQUEST, MERGED),
                            _replayed(REQUEST, ("call_1", "call_2"), ANSWER))
    for order, turns in runs.items():
        assert [(t.final_answer, t.llm_calls, len(t.calls)) for t in turns] == [
            (ANSWER, 2, 2)], order


# --- the guards: a replay is taken only for the request it repeats ----------------------


def _call(call_id: str | None, name: str, args: dict[str, Any]) -> Part:
    return Part(PartType.TOOL_CALL, call_id=call_id, name=name,
                arguments=json.dumps(args, sort_keys=True, separators=(",", ":")))


def _result(call_id: str | None, text: str) -> Message:
    return Message("tool", (Part(PartType.TOOL_RESULT, text, call_id=call_id),))


def _llm(trace: str, start: int, history: list[Message], answer: list[Message],
         parent: str | None = None, conversation: str | None = None) -> Span:
    return Span(trace_id=trace, span_id=f"s{start}", parent_span_id=parent, name="chat",
                kind=SpanKind.LLM, start_unix_nano=start, end_unix_nano=start + 1,
                status="ok", error=None, convention="test", conversation_id=conversation,
                input_messages=tuple(history), output_messages=tuple(answer))


def test_results_with_no_request_before_them_leave_the_output_as_recorded() -> None:
    """An input holding only tool results (a server-side conversation: the Responses API's
    `previous_response_id`) replays no request to read."""
    asks = _llm("t1", 1, [USER], [Message("assistant", (_call("fc_1", "get_weather", ARGS),))])
    then = _llm("t1", 2, [_result("call_1", "18C, cloudy")], [SAYS])
    [turn] = assemble_turns([asks, then]).turns
    assert [(c.name, c.call_id, c.result) for c in turn.calls] == [
        ("get_weather", "call_1", "18C, cloudy")]


def test_parallel_agents_do_not_take_each_others_requests() -> None:
    """Two agents of one turn, interleaved in start order: the next main-line step's input
    is the other agent's, whose request shares no call with this step's output."""
    weather = Message("assistant", (_call("a1", "get_weather", ARGS),))
    search = Message("assistant", (_call("b1", "search_docs", SEARCH),
                                   _call("b2", "search_docs", {"query": "quotas"})))
    spans = [
        Span(trace_id="t1", span_id=name, parent_span_id=None, name=name, kind=SpanKind.AGENT,
             start_unix_nano=0, end_unix_nano=9, status="ok", error=None, convention="test",
             conversation_id="c1", input_messages=(USER,))
        for name in ("A", "B")
    ] + [
        _llm("t1", 2, [USER], [weather], parent="A", conversation="c1"),
        _llm("t1", 3, [USER], [search], parent="B", conversation="c1"),
        _llm("t1", 4, [USER, weather, _result("a1", "18C")], [SAYS], parent="A",
             conversation="c1"),
        _llm("t1", 5, [USER, search, _result("b1", "60/min"), _result("b2", "none")], [SAYS],
             parent="B", conversation="c1"),
    ]
    calls = [c for t in assemble_turns(spans).turns for c in t.calls]
    assert sorted((c.call_id, c.result) for c in calls) == [
        ("a1", "18C"), ("b1", "60/min"), ("b2", "none")]


def test_inputs_replaying_one_request_do_not_meet() -> None:
    """A replayed request's keys join the output that asked for it, never another input
    replaying the same request (a few-shot prompt with a tool call, in every run): a
    prefix joins a history, in a batch and in the store."""
    shot = Message("assistant", (_call("call_shot", "get_weather", ARGS),))
    prompt = [USER, shot, _result("call_shot", "18C, cloudy"), SAYS,
              Message("user", (Part(PartType.TEXT, "And in Lyon?"),))]
    runs = {f"t{k}": _llm(f"t{k}", k, prompt, [SAYS]) for k in (1, 2)}
    keys = {trace: join_keys([span]) for trace, span in runs.items()}
    assert not keys["t1"].meets(keys["t2"])
    stored = span_links([runs["t1"]], {})[("t1", "s1")]
    assert not keys["t2"].histories & set(stored.prefix_keys)
    # The output that asked for it is found, in the batch and from the store.
    asks = _llm("t0", 0, [USER], [shot])
    assert join_keys([asks]).meets(keys["t1"])
    assert join_keys([asks]).histories & set(stored.prefix_keys)
    assert keys["t1"].histories & set(span_links([asks], {})[("t0", "s0")].prefix_keys)


@pytest.mark.parametrize(("call_id", "ids"), [
    ("call_ab12call_cd34", ["call_ab12call_cd34", "call_ab12", "call_cd34"]),
    ("call_cancel_call_0", ["call_cancel_call_0"]),  # pieces of unequal length: one id
    ("toolu_01A", ["toolu_01A"]),
    ("3f2c9a1e-0b1d-4c1e-9d7a-2f1e0c9b8a7d", ["3f2c9a1e-0b1d-4c1e-9d7a-2f1e0c9b8a7d"]),
    (None, []),
])
def test_merged_ids_are_split_where_they_repeat_their_head(
    call_id: str | None, ids: list[str]
) -> None:
    assert call_ids(call_id) == ids
