"""History links from a model call whose output was not captured.

Raw-client instrumentations export one trace per model call and no conversation id, so
grouping chains the calls by history (`turnscore.ingest.links`). Some record no output for
a streamed call: OpenLLMetry's Together instrumentation (opentelemetry-instrumentation-
together 0.62, `_wrap`) hands the stream to its response handler as if it were the response
and ends the span before the stream is read. The next call's input replays the assistant
message that asked for a tool with its role only, then the tool's result: a gap
(`links.gaps`), which stands for an output that asked for tools and said nothing. An output
not captured may be that one: the call whose input is the history before the gap is the
one it continues, and both calls answer the same user message, one turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ingest.test_history_gaps import (
    _COMMON,
    ANSWER,
    REQUEST,
    _completion,
    _in_either_order,
    _replay,
    _two_traces,
)
from tests.ingest.test_stack_forms import turns_of


def test_a_call_whose_output_was_not_captured_is_what_a_gap_stands_for(
    tmp_path: Path,
) -> None:
    turns = _two_traces(tmp_path, _replay(REQUEST),
                        {**_replay(REQUEST, "18C, cloudy"), **_completion(text=ANSWER)})
    assert [(t.request, t.final_answer, t.llm_calls) for t in turns] == [(REQUEST, ANSWER, 2)]


def test_a_repeated_request_after_an_answer_is_a_turn_of_its_own(tmp_path: Path) -> None:
    """Neither output captured: the repeated request is a later genuine user message (one
    more of them), a new turn of the same conversation."""
    again = {"gen_ai.prompt.3.role": "assistant", "gen_ai.prompt.3.content": ANSWER,
             "gen_ai.prompt.4.role": "user", "gen_ai.prompt.4.content": REQUEST}

    def record(r: Any) -> None:
        first = _replay(REQUEST, "18C, cloudy")
        for attrs in (_replay(REQUEST), first, {**first, **again},
                      {**first, **again, "gen_ai.prompt.5.role": "assistant",
                       "gen_ai.prompt.6.role": "tool", "gen_ai.prompt.6.content": "17C"}):
            with r.span("together.chat", {**_COMMON, **attrs}):
                pass

    turns = turns_of(record, tmp_path)
    assert [(t.request, t.llm_calls, t.conversation_id) for t in turns] == [
        (REQUEST, 2, turns[0].conversation_id), (REQUEST, 2, turns[0].conversation_id)]


def test_runs_repeating_one_request_stay_apart(tmp_path: Path) -> None:
    """Two runs of one request, one after the other: each replay continues its own run's
    call, the latest earlier one with its history, not the other run's."""

    def record(r: Any) -> None:
        for result in ("18C, cloudy", "17C"):
            for attrs in (_replay(REQUEST), _replay(REQUEST, result)):
                with r.span("together.chat", {**_COMMON, **attrs}):
                    pass

    turns = turns_of(record, tmp_path)
    assert len({t.conversation_id for t in turns}) == len(turns)
    assert sum(t.llm_calls for t in turns) == 4
    assert all(t.request == REQUEST for t in turns)


def test_an_output_not_captured_found_across_batches_in_either_order(tmp_path: Path) -> None:
    """The store finds either call's trace from the other's: the same turn however the
    input is cut."""
    runs = _in_either_order(tmp_path, "together.chat", {**_COMMON, **_replay(REQUEST)},
                            {**_COMMON, **_replay(REQUEST, "18C, cloudy"),
                             **_completion(text=ANSWER)})
    for order, turns in runs.items():
        assert [(t.request, t.final_answer, t.llm_calls) for t in turns] == [
            (REQUEST, ANSWER, 2)], order
