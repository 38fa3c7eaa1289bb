"""History keys (`turnscore.ingest.links`) keep the values stored spans carry: stores
written before keep finding, and being found by, the traces that continue them."""

from __future__ import annotations

import hashlib

import orjson

from turnscore.ingest.links import history_key, normalize, prefix_keys
from turnscore.ingest.model import Message, Part, PartType, Span, SpanKind


def _call(history: list[Message], answer: list[Message]) -> Span:
    return Span(trace_id="t1", span_id="01", parent_span_id=None, name="chat",
                kind=SpanKind.LLM, start_unix_nano=1, end_unix_nano=2, status="ok", error=None,
                convention="otel-genai", input_messages=tuple(history),
                output_messages=tuple(answer))


def _stored_key(messages: tuple[Message, ...]) -> str:
    """How the keys in stored spans were spelled: the hash of the normalized messages'
    JSON (orjson's compact form)."""
    return hashlib.sha256(orjson.dumps(normalize(messages))).hexdigest()[:32]


HISTORY = [
    Message("system", (Part(PartType.TEXT, "You are terse."),)),
    Message("user", (Part(PartType.TEXT, " What is 2 + 2? "),)),
    Message("assistant", (Part(PartType.TOOL_CALL, call_id="c1", name="calc",
                                arguments='{"e": "2+2"}'),)),
    Message("tool", (Part(PartType.TOOL_RESULT, "4", call_id="c1"),)),
    Message("assistant", (Part(PartType.TEXT, ""), Part(PartType.TEXT, "It is 4 \u00e9."))),
    Message("user", (Part(PartType.TEXT, "And \"3 + 3\"?\n"),)),
]
ANSWER = [Message("assistant", (Part(PartType.TEXT, "6."),))]


def test_prefix_keys_are_the_hashes_of_each_normalized_prefix() -> None:
    call = _call(HISTORY, ANSWER)
    kept = [m for m in HISTORY if normalize([m])]  # the system message and empty text go
    assert len(kept) == 5
    assert prefix_keys(call) == tuple(_stored_key(tuple(kept[:n])) for n in range(1, 6))


def test_a_history_key_is_the_hash_of_input_and_output() -> None:
    call = _call(HISTORY, ANSWER)
    assert history_key(call) == _stored_key((*HISTORY, *ANSWER))
    # The call that answers with the next input's history is what that input continues.
    follow = _call([*HISTORY, *ANSWER, Message("user", (Part(PartType.TEXT, "Thanks"),))], [])
    assert history_key(call) in prefix_keys(follow)
    assert history_key(_call(HISTORY, [])) == _stored_key(tuple(HISTORY))
