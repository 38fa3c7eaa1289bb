"""Partitioning an ingest by conversation (`turnscore.ingest.partition`): which traces
must be assembled together, and how components are packed into partitions."""

from __future__ import annotations

from dataclasses import replace

from turnscore.ingest.inputs import dedup_records
from turnscore.ingest.model import Message, Part, PartType, Span, SpanKind
from turnscore.ingest.partition import assign, components, trace_keys
from turnscore.ingest.records import RawSpan


def _text(role: str, text: str) -> Message:
    return Message(role, (Part(PartType.TEXT, text),))


def _call(trace: str, span: str, history: list[Message], answer: str, *,
          conversation: str | None = None, response: str | None = None) -> Span:
    return Span(trace_id=trace, span_id=span, parent_span_id=None, name="chat",
                kind=SpanKind.LLM, start_unix_nano=int(span, 16), end_unix_nano=int(span, 16) + 1,
                status="ok", error=None, convention="otel-genai",
                conversation_id=conversation, input_messages=tuple(history),
                output_messages=(_text("assistant", answer),), response_id=response)


SYSTEM = _text("system", "You are a billing bot.")
Q1, A1, Q2 = _text("user", "What do I owe?"), _text("assistant", "12 EUR."), _text("user", "Why?")
Q3 = _text("user", "Can I pay later?")


def test_a_trace_continuing_another_by_history_joins_it() -> None:
    spans = [
        _call("t1", "01", [SYSTEM, Q1], "12 EUR."),
        _call("t2", "02", [SYSTEM, Q1, A1, Q2], "Because of May."),
        _call("t3", "03", [SYSTEM, _text("user", "Hello")], "Hi."),  # same system prompt only
    ]
    parts = components(trace_keys(spans))
    assert parts["t1"] == parts["t2"] == "t1"
    assert parts["t3"] == "t3"  # a shared prefix is not a shared conversation


def test_conversation_ids_and_response_ids_join_traces() -> None:
    spans = [
        _call("a1", "01", [Q1], "x", conversation="c"),
        _call("a2", "02", [Q2], "y", conversation="c"),
        # Asked otherwise: a lone report sent what a call was sent may report that call
        # (`links.apart_keys`), so it would meet a1 by what both were sent.
        _call("b1", "03", [Q3], "z", response="resp-1"),
        _call("b2", "04", [Q3], "z", response="resp-1"),  # a second instrumentation's trace
        _call("d1", "05", [Q3], "w", conversation="b1"),  # names another trace as its conversation
    ]
    parts = components(trace_keys(spans))
    assert parts["a1"] == parts["a2"]
    assert parts["b1"] == parts["b2"] == parts["d1"]
    assert parts["a1"] != parts["b1"]


def test_partitions_balance_records() -> None:
    component_of = {"t1": "t1", "t2": "t1", "t3": "t3", "t4": "t4", "t5": "t5"}
    sizes = {"t1": 50, "t2": 50, "t3": 60, "t4": 30, "t5": 20}
    parts = assign(component_of, sizes, 2)
    load = {p: sum(sizes[t] for t, c in component_of.items() if parts[c] == p) for p in (0, 1)}
    assert sorted(load.values()) == [100, 110]
    assert assign(component_of, sizes, 1) == dict.fromkeys(parts, 0)


def test_dedup_keeps_the_first_copy_and_reports_a_differing_one() -> None:
    span = RawSpan("t", "s", None, "chat", 1, 1, 2, 0, "", {"k": "v"}, source="a.json",
                   position="line 1")
    same = replace(span, source="b.json", position="line 9")
    other = replace(span, attributes={"k": "changed"}, source="c.json", position="line 2")
    kept, errors = dedup_records([span, same, other])
    assert kept == [span]
    assert [(e.source, e.position) for e in errors] == [("c.json", "line 2")]
    assert "kept the first copy (from a.json, line 1)" in errors[0].message
