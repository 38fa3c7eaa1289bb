"""The semconv 1.26/1.27 content span events `gen_ai.content.prompt` (key `gen_ai.prompt`)
and `gen_ai.content.completion` (key `gen_ai.completion`), recorded with the real OTel SDK
in the shapes their emitters give, decoded and assembled into turns:

- OpenLIT 1.17 to 1.36 (openlit/openlit `sdk/python/src/openlit/instrumentation/*`): the
  prompt as `role: content` lines, the completion as plain text, requested calls listed on
  the span (`gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.args`, joined by ", ");
- Semantic Kernel Python 1.8 to 1.18 (microsoft/semantic-kernel `python/semantic_kernel/
  utils/telemetry/model_diagnostics/decorators.py`): OpenAI-format JSON histories with
  tool calls and results, operation `chat.completions`, usage in `gen_ai.response.*`;
- Langtrace (Scale3-Labs/langtrace-python-sdk `utils/llm.py`): the prompt as the span
  attribute, the completion as a JSON message list in the event;
- OpenLIT 1.37 and later, most providers: the same transcript and text, but in the current
  `gen_ai.input.messages` / `gen_ai.output.messages`, where JSON belongs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import root, turns_of

SYSTEM = "You are a weather assistant."
REQUEST = "What's the weather in Paris?"
ANSWER = "It is 18 degrees C and sunny in Paris."
RESULT = "18 degrees C, sunny"
ARGS = '{"city": "Paris"}'
PROMPT = "gen_ai.content.prompt"
COMPLETION = "gen_ai.content.completion"
OPENLIT = {"telemetry.sdk.name": "openlit"}
"""What every OpenLIT model-call span carries (`common_span_attributes`), whoever made the
tracer provider: only there is a prose prompt OpenLIT's transcript."""


def _j(value: Any) -> str:
    return json.dumps(value)


def _openlit_chat(r: Any, prompt: str, completion: str | None, **extra: Any) -> None:
    """One OpenLIT chat span: content events only when there is a value, since the SDK
    drops a None attribute (OpenLIT's completion for a call that only requests tools)."""
    events = [(PROMPT, {"gen_ai.prompt": prompt})]
    events.append((COMPLETION, {} if completion is None else {"gen_ai.completion": completion}))
    with r.span("chat gpt-4o-mini", {
        **OPENLIT, "gen_ai.system": "openai", "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 40,
        "gen_ai.usage.output_tokens": 9, **extra,
    }, events=events):
        pass


def test_openlit_agent_turn_with_a_tool_call(tmp_path: Path) -> None:
    """OpenLIT renders the history as text, where the assistant's call is `None` and the
    result has no id: the call comes from the span's listing, its result by order."""
    def record(r: Any) -> None:
        with root(r, "openlit-1"):
            _openlit_chat(r, f"system: {SYSTEM}\nuser: {REQUEST}", "",
                          **{"gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "call_1",
                             "gen_ai.tool.args": ARGS})
            _openlit_chat(r, f"system: {SYSTEM}\nuser: {REQUEST}\nassistant: None\n"
                             f"tool: {RESULT}", ANSWER)

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert turn.system_instructions == SYSTEM
    assert [(c.name, c.call_id, json.loads(c.arguments), c.result) for c in turn.calls] == [
        ("get_weather", "call_1", {"city": "Paris"}, RESULT)]
    assert (turn.llm_calls, turn.input_tokens, turn.issues) == (2, 80, ())
    assert "gen_ai.tool.args" not in json.loads(turn.attributes)


def test_openlit_transcript_last_user_message_is_the_request(tmp_path: Path) -> None:
    """A second question in the same text is the turn's request; multi-line contents stay
    whole; `text: ` list rendering is unwrapped; no call is read from the text."""
    prompt = ("user: Hi there\nassistant: Hello! How can I help?\n"
              "user: text: Summarise this:\nline one\nline two")

    def record(r: Any) -> None:
        _openlit_chat(r, prompt, "A two-line note.")

    (turn,) = turns_of(record, tmp_path)
    assert turn.request == "Summarise this:\nline one\nline two"
    assert (turn.final_answer, turn.calls, turn.status) == ("A two-line note.", (), "ok")


def test_openlit_anthropic_tool_result_lines_are_no_user_messages(tmp_path: Path) -> None:
    """Anthropic's tool_use / tool_result blocks render as empty `assistant: ` / `user: `
    lines: they must not become the newest user message."""
    def record(r: Any) -> None:
        _openlit_chat(r, f"user: {REQUEST}\nassistant: \nuser: ", ANSWER)

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)


def test_openlit_fallback_repr_reads_back_the_whole_history(tmp_path: Path) -> None:
    """OpenLIT 1.35-1.36 renders a message it cannot read (content None) as `user: ` plus
    the repr of the whole list: that list is the history, calls and ids included, so two
    parentless calls (a raw client) join by history into one turn."""
    history = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": REQUEST},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "call_7", "type": "function",
                    "function": {"name": "get_weather", "arguments": ARGS}}]},
               {"role": "tool", "tool_call_id": "call_7", "content": RESULT}]
    prompt = f"system: {SYSTEM}\nuser: {REQUEST}\nuser: {history!s}\ntool: {RESULT}"

    def record(r: Any) -> None:
        _openlit_chat(r, f"system: {SYSTEM}\nuser: {REQUEST}", "",
                      **{"gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "call_7",
                         "gen_ai.tool.args": ARGS})
        _openlit_chat(r, prompt, ANSWER)

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert [(c.name, c.call_id, c.result) for c in turn.calls] == [
        ("get_weather", "call_7", RESULT)]
    assert turn.llm_calls == 2


def test_openlit_call_listing_is_read_only_when_it_lines_up(tmp_path: Path) -> None:
    """Two calls listed by ", " are split; a listing whose values do not pair up (an empty
    id dropped before joining) yields no call rather than a guessed one."""
    def record(r: Any) -> None:
        with root(r, "two"):
            _openlit_chat(r, f"user: {REQUEST}", None, **{
                "gen_ai.tool.name": "get_weather, get_time",
                "gen_ai.tool.call.id": "call_1, call_2",
                "gen_ai.tool.args": '{"city": "Paris"}, {"tz": "CET, CEST"}'})
        with root(r, "unpaired"):
            _openlit_chat(r, "user: And in Rome?", None, **{
                "gen_ai.tool.name": "get_weather, get_time",
                "gen_ai.tool.call.id": "call_3",
                "gen_ai.tool.args": '{"city": "Rome"}, {}'})

    both, unpaired = turns_of(record, tmp_path)
    assert [(c.name, c.call_id, json.loads(c.arguments)) for c in both.calls] == [
        ("get_weather", "call_1", {"city": "Paris"}), ("get_time", "call_2", {"tz": "CET, CEST"})]
    assert unpaired.request == "And in Rome?"
    assert unpaired.calls == ()


def test_semantic_kernel_turn_with_function_call_and_result(tmp_path: Path) -> None:
    """SK's JSON chat history: the call in the first completion, its result in the next
    prompt (`role: tool`, `tool_call_id`); its own operation names are model calls."""
    call = {"id": "call_abc", "type": "function",
            "function": {"name": "WeatherPlugin-get_weather", "arguments": ARGS}}
    first = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": REQUEST}]
    second = [*first, {"role": "assistant", "tool_calls": [call]},
              {"role": "tool", "content": RESULT, "tool_call_id": "call_abc"}]

    def sk_chat(r: Any, prompt: Any, completion: Any, tokens: int) -> None:
        with r.span("chat.completions gpt-4o", {
            "gen_ai.operation.name": "chat.completions", "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o", "gen_ai.response.prompt_tokens": tokens,
            "gen_ai.response.completion_tokens": 12,
        }, events=[(PROMPT, {"gen_ai.prompt": _j(prompt)}),
                   (COMPLETION, {"gen_ai.completion": _j(completion)})]):
            pass

    def record(r: Any) -> None:
        with root(r, "sk-1"):
            sk_chat(r, first, [{"role": "assistant", "tool_calls": [call]}], 50)
            with r.span("WeatherPlugin-get_weather", {}):
                pass
            sk_chat(r, second, [{"role": "assistant", "content": ANSWER}], 80)

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert turn.system_instructions == SYSTEM
    assert [(c.name, c.call_id, json.loads(c.arguments), c.result) for c in turn.calls] == [
        ("WeatherPlugin-get_weather", "call_abc", {"city": "Paris"}, RESULT)]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (2, 130, 24)
    attributes = json.loads(turn.attributes)
    assert not any(k in attributes for k in ("gen_ai.prompt", "gen_ai.completion"))


def test_plain_text_completion_through_events(tmp_path: Path) -> None:
    """SK's text completion: a plain prompt (no role names it) and TextContent items; the
    prompt is prose even with a colon in it."""
    def record(r: Any) -> None:
        with r.span("text.completions gpt-3.5-turbo-instruct", {
            "gen_ai.operation.name": "text.completions", "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-3.5-turbo-instruct",
        }, events=[(PROMPT, {"gen_ai.prompt": "Translate: hello"}),
                   (COMPLETION, {"gen_ai.completion": _j([{"type": "text", "text": "bonjour"}])})]):
            pass

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status, turn.llm_calls) == (
        "Translate: hello", "bonjour", "ok", 1)


def test_langtrace_completion_event_beside_the_prompt_attribute(tmp_path: Path) -> None:
    """Langtrace sets the prompt as the span attribute and the completion as an event; with
    no operation name, the completion event is what makes the span a model call."""
    def record(r: Any) -> None:
        with r.span("openai.chat.completions.create", {
            "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
            "gen_ai.prompt": _j([{"role": "user", "content": REQUEST}]),
        }, events=[(COMPLETION, {"gen_ai.completion": _j([{"role": "assistant",
                                                           "content": ANSWER}])})]):
            pass

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 1)


def test_the_attribute_wins_over_the_event(tmp_path: Path) -> None:
    """OpenLIT 1.34.22 and later sends both; the span attribute is read, not doubled."""
    def record(r: Any) -> None:
        prompt = f"user: {REQUEST}"
        with r.span("chat gpt-4o-mini", {
            **OPENLIT, "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.prompt": prompt, "gen_ai.completion": ANSWER,
        }, events=[(PROMPT, {"gen_ai.prompt": prompt}),
                   (COMPLETION, {"gen_ai.completion": ANSWER})]):
            pass

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.llm_calls) == (REQUEST, ANSWER, 1)


def test_openlit_transcript_where_the_current_messages_belong(tmp_path: Path) -> None:
    """Prose in `gen_ai.input.messages` / `output.messages` is the content, unreported;
    broken JSON there stays a reported problem (the `malformed` convention case)."""
    def record(r: Any) -> None:
        with r.span("chat mistral-large-latest", {
            **OPENLIT, "gen_ai.system": "mistral_ai", "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": f"system: {SYSTEM}\nuser: {REQUEST}\nin Celsius",
            "gen_ai.output.messages": ANSWER,
        }):
            pass

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (f"{REQUEST}\nin Celsius", ANSWER)
    assert (turn.system_instructions, turn.status, turn.issues) == (SYSTEM, "ok", ())


def test_role_lines_are_a_transcript_on_openlit_spans_only(tmp_path: Path) -> None:
    """Prose with `role: ` lines from anyone but OpenLIT (no `telemetry.sdk.name =
    openlit` on the span) is what a user typed: one message, the whole text its request,
    in the current attribute and in the deprecated prompt alike."""
    prompt = f"system: {SYSTEM}\nuser: {REQUEST}"

    def record(r: Any) -> None:
        with root(r, "current"), r.span("chat mistral-large-latest", {
            "gen_ai.system": "mistral_ai", "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": prompt, "gen_ai.output.messages": ANSWER,
        }):
            pass
        with root(r, "deprecated"), r.span("chat gpt-4o-mini", {
            "gen_ai.operation.name": "chat", "gen_ai.prompt": prompt,
            "gen_ai.completion": ANSWER,
        }):
            pass

    turns = turns_of(record, tmp_path)
    assert [(t.request, t.system_instructions, t.final_answer) for t in turns] == [
        (prompt, None, ANSWER), (prompt, None, ANSWER)]


def test_azure_ai_inference_event_bodies_as_json_text(tmp_path: Path) -> None:
    """The Azure AI Inference SDK's tracing (azure-ai-inference `tracing.py`) sends each
    older per-message event's whole body as JSON text under `gen_ai.event.content`: the
    request's messages as sent (calls and results by id), a choice as `{message,
    finish_reason, index}`."""
    call = {"id": "call_az", "type": "function",
            "function": {"name": "get_weather", "arguments": ARGS}}
    first = [("gen_ai.system.message", {"role": "system", "content": SYSTEM}),
             ("gen_ai.user.message", {"role": "user", "content": REQUEST})]
    second = [*first, ("gen_ai.assistant.message", {"role": "assistant", "content": None,
                                                    "tool_calls": [call]}),
              ("gen_ai.tool.message", {"role": "tool", "tool_call_id": "call_az",
                                       "content": RESULT})]

    def chat(r: Any, said: list[tuple[str, Any]], choice: dict[str, Any]) -> None:
        events = [(name, {"gen_ai.system": "az.ai.inference", "gen_ai.event.content": _j(body)})
                  for name, body in [*said, ("gen_ai.choice", choice)]]
        with r.span("chat gpt-4o-mini", {"gen_ai.operation.name": "chat",
                                         "gen_ai.system": "az.ai.inference",
                                         "gen_ai.request.model": "gpt-4o-mini"}, events=events):
            pass

    def record(r: Any) -> None:
        with root(r, "azure-1"):
            chat(r, first, {"message": {"content": None, "tool_calls": [call]},
                            "finish_reason": "tool_calls", "index": 0})
            chat(r, second, {"message": {"content": ANSWER}, "finish_reason": "stop",
                             "index": 0})

    (turn,) = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status) == (REQUEST, ANSWER, "ok")
    assert turn.system_instructions == SYSTEM
    assert [(c.name, c.call_id, json.loads(c.arguments), c.result) for c in turn.calls] == [
        ("get_weather", "call_az", {"city": "Paris"}, RESULT)]
