"""Message forms of LiteLLM's OTel callback, OpenLIT and Mastra 0.x, recorded with the real
OTel SDK (the convention fixtures' `Recorder`) in the shapes their source emits, decoded
and assembled. `tests/ingest/test_stacks.py` checks LiteLLM and OpenLIT on real exports
(`litellm-otel`, `openlit-openai`); these pin each rule on its own.

- Mastra's 0.x exporter (mastra-ai/mastra `observability/otel-exporter/src/
  span-converter.ts`) copies every span's input and output to the bare keys `input` /
  `output` "for Laminar compatibility": content the Mastra convention declares itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import Recorder, turns_of
from turnscore.ingest import attributes as A
from turnscore.ingest.conventions import messages
from turnscore.ingest.conventions.mastra import MASTRA
from turnscore.ingest.decode import decode_spans
from turnscore.ingest.model import Span
from turnscore.ingest.otlp import read_file
from turnscore.ingest.records import RawSpan

SYSTEM = "Be terse."


def _j(value: Any) -> str:
    return json.dumps(value)


def _decoded(record: Callable[[Any], None], tmp_path: Path) -> list[Span]:
    recorder = Recorder("msg-forms")
    record(recorder)
    raw = [r for path in recorder.write(tmp_path, "case") for r in read_file(path)
           if isinstance(r, RawSpan)]  # fmt: skip
    spans, errors = decode_spans(raw)
    assert errors == []
    return spans


# --- Mastra 0.x -------------------------------------------------------------------------


def test_mastra_0x_bare_input_output_are_its_own_content() -> None:
    """Declared by Mastra, not left to another convention that happens to use the keys."""
    assert {A.MASTRA_INPUT, A.MASTRA_OUTPUT} <= set(MASTRA.content_keys)


def test_mastra_0x_bare_input_output_stay_out_of_turn_attributes(tmp_path: Path) -> None:
    """A short request is no leak needle (`assemble._root_attributes`), and the agent
    span's `input` holds the earlier exchange too: only the declaration keeps it out."""
    earlier = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]
    history = [*earlier, {"role": "user", "content": "Thanks"}]
    agent = {
        "gen_ai.operation.name": "agent.run", "span.kind": "server",
        "mastra.span.type": "agent_run", "agent.id": "greeter", "deployment": "prod",
        "input": _j(history), "output": _j({"text": "You're welcome.", "files": []}),
    }
    generation = {
        "gen_ai.operation.name": "chat", "mastra.span.type": "llm_generation",
        "input": _j({"messages": [{"role": "system", "content": SYSTEM}, *history]}),
        "gen_ai.prompt": _j({"messages": [{"role": "system", "content": SYSTEM}, *history]}),
        "output": _j({"text": "You're welcome.", "toolCalls": []}),
        "gen_ai.completion": _j({"text": "You're welcome.", "toolCalls": []}),
        "gen_ai.request.model": "gpt-4o-mini",
    }

    def record(r: Any) -> None:
        with r.span("agent.greeter", agent), r.span("chat gpt-4o-mini", generation):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == ("Thanks", "You're welcome.")
    attributes = json.loads(turn.attributes)
    assert {"input", "output"}.isdisjoint(attributes)
    assert attributes["deployment"] == "prod"


# --- LiteLLM's OTel callback ------------------------------------------------------------

REQUEST = "What's the weather in Paris and in Rome?"
ANSWER = "Paris: 18C, cloudy. Rome: 24C, sunny."
_LITELLM = {"llm.request.type": "completion", "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "llm.request.functions.0.name": "get_weather",
            "llm.request.functions.0.parameters": _j(
                {"type": "object", "properties": {"city": {"type": "string"}}})}


def test_litellm_parallel_calls_numbered_by_call_are_one_message(tmp_path: Path) -> None:
    """The older flattened form (BerriAI/litellm `integrations/opentelemetry.py`,
    `set_attributes` and `_tool_calls_kv_pair`): the first choice's role and finish reason
    at `gen_ai.completion.0`, then each call at `gen_ai.completion.<call index>.
    function_call.*`. The second call is no second answer: one model output, two calls."""
    asks = {**_LITELLM, "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": REQUEST,
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.finish_reason": "tool_calls",
            "gen_ai.completion.0.function_call.name": "get_weather",
            "gen_ai.completion.0.function_call.arguments": _j({"city": "Paris"}),
            "gen_ai.completion.1.function_call.name": "get_weather",
            "gen_ai.completion.1.function_call.arguments": _j({"city": "Rome"})}
    answers = {**_LITELLM, "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": REQUEST,
               "gen_ai.prompt.1.role": "assistant",  # its calls not replayed
               "gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.content": "18C, cloudy",
               "gen_ai.prompt.3.role": "tool", "gen_ai.prompt.3.content": "24C, sunny",
               "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": ANSWER,
               "gen_ai.completion.0.finish_reason": "stop"}

    def record(r: Any) -> None:
        with r.span("litellm_request", asks):
            pass
        with r.span("litellm_request", answers):
            pass

    (tmp_path / "spans").mkdir()
    first = _decoded(record, tmp_path / "spans")[0]
    [output] = first.output_messages or ()
    assert (output.role, output.finish_reason) == ("assistant", "tool_calls")
    assert [(p.name, p.arguments) for p in output.tool_calls] == [
        ("get_weather", '{"city":"Paris"}'), ("get_weather", '{"city":"Rome"}')]
    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 2)
    assert [(c.name, c.arguments, c.step) for c in turn.calls] == [
        ("get_weather", '{"city":"Paris"}', 0), ("get_weather", '{"city":"Rome"}', 0)]


# --- OpenLIT ----------------------------------------------------------------------------

WEATHER = {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris and Rome?"}]}
_OPENLIT = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini", "telemetry.sdk.name": "openlit"}


def _openlit_call(r: Any, history: list[dict[str, Any]], output: dict[str, Any]) -> None:
    with r.span("chat gpt-4o-mini", {**_OPENLIT, "gen_ai.input.messages": _j(history),
                                     "gen_ai.output.messages": _j([output])}):
        pass


def test_openlit_input_without_the_message_that_asked_for_the_tools(tmp_path: Path) -> None:
    """OpenLIT 1.45 (`build_input_messages`, openai `utils.py`) keeps a request message only
    when its content gives parts and never reads `tool_calls`: the assistant message that
    asked for the tools is missing, the results follow the user's question. Two parentless
    calls (a raw client) are still one turn, each call answered by its result."""
    system = {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]}
    calls = [{"type": "tool_call", "id": f"call_{c}", "name": "get_weather",
              "arguments": {"city": city}} for c, city in (("p", "Paris"), ("r", "Rome"))]
    results = [{"role": "tool", "parts": [{"type": "tool_call_response", "id": f"call_{c}",
                                           "response": text}]}
               for c, text in (("p", "18C, cloudy"), ("r", "24C, sunny"))]
    answer = "Paris: 18C, cloudy. Rome: 24C, sunny."

    def record(r: Any) -> None:
        _openlit_call(r, [system, WEATHER], {"role": "assistant", "parts": calls,
                                             "finish_reason": "tool_call"})
        _openlit_call(r, [system, WEATHER, *results], {
            "role": "assistant", "parts": [{"type": "text", "content": answer}],
            "finish_reason": "stop"})

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (
        "Weather in Paris and Rome?", answer, 2)
    assert [(c.call_id, c.result, c.step) for c in turn.calls] == [
        ("call_p", "18C, cloudy", 0), ("call_r", "24C, sunny", 0)]
    assert turn.issues == ()

    (tmp_path / "whole").mkdir()  # the history memo cleared: the whole list parsed at once
    messages._HISTORIES.clear()
    later = _decoded(lambda r: _openlit_call(r, [system, WEATHER, *results], {
        "role": "assistant", "parts": [], "finish_reason": "stop"}), tmp_path / "whole")[0]
    assert [(m.role, len(m.parts)) for m in later.input_messages or ()] == [
        ("system", 1), ("user", 1), ("assistant", 0), ("tool", 1), ("tool", 1)]


def test_a_history_opening_with_results_gets_no_invented_message(tmp_path: Path) -> None:
    """A list that opens with tool results may be a truncated history: nothing is put
    before them."""
    result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_p",
                                         "response": "18C"}]}
    [span] = _decoded(lambda r: _openlit_call(r, [result, WEATHER], {
        "role": "assistant", "parts": [{"type": "text", "content": "18C."}]}), tmp_path)
    assert [m.role for m in span.input_messages or ()] == ["tool", "user"]


def test_openlit_transcript_keeps_prose_dialogue_in_its_message(tmp_path: Path) -> None:
    """OpenLIT's transcript (`format_content`: `f"{role}: {content}"` per message, most
    providers since 1.37 in `gen_ai.input.messages`) opens a message with a role as the
    request spells it, lower case, then `: `. A few-shot prompt's `User:` / `Assistant:`
    lines, or a `note:x` line, are content of the message they are in."""
    request = ("Answer in the style of these examples.\nUser: Is it cold?\n"
               "Assistant: Bring a coat.\nsystem:reboot is no role line\nUser: Is it hot?")

    def record(r: Any) -> None:
        with r.span("chat mistral-large-latest", {
            "gen_ai.system": "mistral_ai", "gen_ai.operation.name": "chat",
            "telemetry.sdk.name": "openlit",
            "gen_ai.input.messages": f"system: {SYSTEM}\nuser: {request}",
            "gen_ai.output.messages": "Bring sunscreen.",
        }):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.system_instructions) == (request, SYSTEM)
    assert turn.final_answer == "Bring sunscreen."


# --- OpenLIT's LangChain callback -------------------------------------------------------

_LC = {"gen_ai.application_name": "app", "gen_ai.environment": "default"}
"""OpenLIT's own keys on every span of its LangChain callback (`_set_common_attributes`)."""


def test_openlit_langchain_tool_spans(tmp_path: Path) -> None:
    """OpenLIT's LangChain callback (openlit `instrumentation/langchain/__init__.py`): a
    tool's arguments are LangChain's `input_str` (the dict's repr), its result the printed
    ToolMessage (`content='...' name='...' tool_call_id='...'`); a failed tool keeps the
    run id as `gen_ai.tool.call.id` and has no result, which the next call's input gives as
    a tool message's text part with no id (`build_input_messages_from_langchain`)."""
    calls = [{"type": "tool_call", "id": f"call_{c}", "name": "get_weather",
              "arguments": _j({"city": city})} for c, city in (("p", "Paris"), ("a", "Atlantis"))]
    request = [{"role": "user", "parts": [{"type": "text", "content": "Paris and Atlantis?"}]}]
    results = [{"role": "tool", "parts": [{"type": "text", "content": text}]}
               for text in ('{"temp": 18}', "Error: ValueError('Unknown city')")]
    answer = "Paris: 18C. Atlantis is unknown."

    def chat(r: Any, history: list[Any], output: dict[str, Any]) -> None:
        with r.span("chat gpt-4o-mini", {
            **_OPENLIT, **_LC, "gen_ai.conversation.id": "lc-1",
            "gen_ai.input.messages": _j(history), "gen_ai.output.messages": _j([output]),
        }):
            pass

    def record(r: Any) -> None:
        with r.span("invoke_agent agent", {**_LC, "gen_ai.operation.name": "invoke_agent",
                                           "gen_ai.conversation.id": "lc-1",
                                           "gen_ai.workflow.input": "{'messages': ['hi']}"}):
            chat(r, request, {"role": "assistant", "parts": calls})
            with r.span("execute_tool get_weather", {
                **_LC, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call_p", "gen_ai.tool.call.arguments": "{'city': 'Paris'}",
                "gen_ai.tool.call.result":
                    "content='{\"temp\": 18}' name='get_weather' tool_call_id='call_p'",
            }):
                pass
            with r.span("execute_tool get_weather", {
                **_LC, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "01a24d07-fa7f-7247-bda9-7de25ae5943a",
                "gen_ai.tool.call.arguments": "{'city': 'Atlantis'}", "error.type": "ValueError",
            }, error="Unknown city"):
                pass
            said = {"role": "assistant", "parts": [{"type": "text", "content": ""}]}
            chat(r, [*request, said, *results],
                 {"role": "assistant", "parts": [{"type": "text", "content": answer}]})

    [turn] = turns_of(record, tmp_path)
    assert (turn.final_answer, turn.llm_calls, turn.issues) == (answer, 2, ())
    assert [(c.call_id, json.loads(c.arguments), c.result, c.error is not None)
            for c in turn.calls] == [
        ("call_p", {"city": "Paris"}, '{"temp": 18}', False),
        ("call_a", {"city": "Atlantis"}, "Error: ValueError('Unknown city')", True)]
    assert "gen_ai.workflow.input" not in json.loads(turn.attributes)
