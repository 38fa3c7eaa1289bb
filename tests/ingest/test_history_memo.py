"""A model call's input continuing an earlier one is decoded from only its new messages,
with exactly the result of decoding it whole (`conventions.messages.continued_messages`).

Each case decodes a conversation's growing inputs in order (the second and later continue
the first), then each input alone with the memo emptied, and compares spans and errors.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnscore.ingest.conventions import messages
from turnscore.ingest.decode import decode_span
from turnscore.ingest.model import Span
from turnscore.ingest.records import InputError, RawSpan

SYSTEM = {"role": "user", "parts": [{"type": "text", "content": "x" * 80}]}
"""Long enough that every input is kept (`_HISTORY_HEAD`)."""


def _chat(span_id: str, history: list[object], text: str | None = None) -> RawSpan:
    return RawSpan(
        trace_id="t" * 32, span_id=span_id, parent_span_id="p" * 16, name="chat m",
        kind=1, start_unix_nano=1, end_unix_nano=2, status_code=0, status_message="",
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": text if text is not None else json.dumps(history),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]),
        },
        resource={}, events=(), scope_name="s", scope_version="1", source="f", position="1",
    )


def _decoded(spans: list[RawSpan]) -> list[tuple[Span, InputError | None]]:
    return [decode_span(s) for s in spans]


def _alone(spans: list[RawSpan]) -> list[tuple[Span, InputError | None]]:
    out = []
    for s in spans:
        messages._HISTORIES.clear()
        out.append(decode_span(s))
    return out


MESSAGE = st.one_of(
    st.builds(lambda t: {"role": "user", "parts": [{"type": "text", "content": t}]},
              st.text(max_size=20)),
    st.builds(lambda i, n: {"role": "assistant", "parts": [
        {"type": "tool_call", "id": i, "name": n, "arguments": {"q": i}}]},
        st.text(max_size=5), st.sampled_from(["search", "lookup"])),
    st.builds(lambda i, r: {"role": "tool", "parts": [
        {"type": "tool_call_response", "id": i, "response": r}]},
        st.text(max_size=5), st.text(max_size=20)),
    st.just(7),  # not a message: reported with its position
    st.just({"role": "user"}),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(MESSAGE, max_size=4), min_size=1, max_size=4), st.booleans())
def test_growing_inputs_decode_as_each_alone(steps: list[list[object]], spaced: bool) -> None:
    history: list[object] = [SYSTEM]
    spans = []
    for n, step in enumerate(steps):
        history = [*history, *step]
        text = json.dumps(history, separators=None if spaced else (",", ":"))
        spans.append(_chat(f"{n:016x}", history, text))
    messages._HISTORIES.clear()
    assert _decoded(spans) == _alone(spans)


@pytest.mark.parametrize("later", [
    '[{"role":"user","parts":[{"type":"text","content":"' + "x" * 80 + '"}]}, 5]',
    '[{"role":"user","parts":[{"type":"text","content":"' + "x" * 80 + '"}]},',
    '[{"role":"user","parts":[{"type":"text","content":"' + "x" * 80 + '"}]}]  ',
    '[{"role":"user","parts":[{"type":"text","content":"' + "x" * 80 + '"}]}, {"role":"tool"}]',
], ids=["problem-in-new-part", "truncated", "same-with-space", "new-message"])
def test_an_input_that_continues_oddly_decodes_as_alone(later: str) -> None:
    spans = [_chat("a" * 16, [SYSTEM]), _chat("b" * 16, [], later)]
    messages._HISTORIES.clear()
    together = _decoded(spans)
    assert together == _alone(spans)
    if later.endswith(","):
        assert together[1][1] is not None  # not JSON: reported, as alone


def test_a_continuing_input_is_taken_from_the_memo() -> None:
    first = [SYSTEM, {"role": "assistant", "parts": [{"type": "text", "content": "a"}]}]
    later = [*first, {"role": "user", "parts": [{"type": "text", "content": "b"}]}]
    messages._HISTORIES.clear()
    (span, _), = _decoded([_chat("a" * 16, first)])
    found = messages.continued_messages(json.dumps(later), "gen_ai.input.messages")
    assert found is not None and found[: len(first)] == span.input_messages
    assert [m.text for m in found] == ["x" * 80, "a", "b"]
