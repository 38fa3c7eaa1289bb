"""call_validity beyond its case file: what it must never do."""

from __future__ import annotations

from typing import Any

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.recording_server import recording_server
from tests.scorers.call_validity_oracle import oracle
from tests.scorers.factory import make_turn
from turnscore.ingest.turn import Turn, turns_to_arrow
from turnscore.scorers import REGISTRY
from turnscore.scorers.base import SCORE_COLUMNS, Status, Turns, score_columns


def test_a_remote_ref_in_a_tool_schema_is_never_fetched() -> None:
    with recording_server() as (base, hits):
        tool = {"name": "get_weather", "description": "Weather for a city.",
                "parameters": {"type": "object", "properties": {"city": {"$ref": f"{base}/c"}}}}
        turn = make_turn({"tools_source": "declared", "tools": [tool],
                          "calls": [{"call_id": "c1", "name": "get_weather",
                                     "arguments": {"city": "Paris"}}]})
        [score] = REGISTRY["call_validity"].score_turns([turn], [None])
        assert score is not None
    assert hits == []
    assert score.status == Status.SCORED
    assert "could not be applied" in str(score.details), score.details


def _frame(turns: list[Turn]) -> pl.DataFrame:
    frame = pl.from_arrow(turns_to_arrow(turns))
    assert isinstance(frame, pl.DataFrame)
    return frame


def test_a_batch_checks_the_same_arguments_against_each_turns_own_schema() -> None:
    # The scorer parses and checks each distinct text once per batch: the memo must still
    # tell apart the schemas (and the tools) the same arguments meet.
    strict = {"name": "weather", "parameters": {"type": "object", "required": ["city"]}}
    loose = {"name": "weather", "parameters": {"type": "object"}}
    bare = {"name": "weather"}
    call = {"name": "weather", "arguments": "{}"}
    specs = [{"tools_source": "declared", "tools": tools, "calls": [call, call]}
             for tools in ([strict], [loose], [bare], [], [strict])]
    specs[1]["calls"] = [{**call, "status": "error"}, call]
    turns = [make_turn(s, turn_id=f"t{i}") for i, s in enumerate(specs)]
    scorer = REGISTRY["call_validity"]
    want = score_columns(oracle(turns))
    got = scorer.score(_frame(turns), [None] * len(turns))
    assert got.to_dicts() == want.to_dicts()
    assert got["label"].to_list() == ["invalid", "valid", "invalid", "invalid", "invalid"]
    assert "'city' is a required property" in got["explanation"][0]
    assert "duplicate" not in got["explanation"][1]
    assert got["explanation"][2] == "call 1 weather: exact duplicate of call 0"
    assert "unknown tool" in got["explanation"][3]
    # A slice of the batch (an Arrow offset) reads the same rows.
    tail = scorer.score(_frame(turns).slice(3, 2), [None] * 2)
    assert tail.to_dicts() == want[3:].to_dicts()


# Small pools, so that a batch repeats names, arguments and schemas: the scorer decides
# duplicates, tool look-ups and outcomes over the batch, by distinct value.
_NAMES = ("weather", "search", "Wé\"ird\n", "")
_ARGUMENTS = ('{"city": "Paris"}', '{ "city":"Paris" }', '{"city": 3}', "{}", "{not json",
              "  ", None, '{"q": "\u00e9\u2028", "n": [1, 2.5e3]}', '{"b": 1, "a": 2}',
              '{"a": 2, "b": 1}')
_SCHEMAS = ('{"type": "object", "required": ["city"], "properties": {"city": {"type": '
            '"string"}}, "additionalProperties": false}', '{"type": "object"}', "", None,
            "not a schema", '{"type": "nope"}', "[1]")
_calls = st.lists(st.fixed_dictionaries({
    "name": st.sampled_from(_NAMES), "arguments": st.sampled_from(_ARGUMENTS),
    "status": st.sampled_from(("ok", "error", "no_result")),
    "error": st.sampled_from((None, "", "boom")),
}), max_size=12)
_tools = st.lists(st.fixed_dictionaries({
    "name": st.sampled_from(_NAMES), "parameters": st.sampled_from(_SCHEMAS),
}), max_size=4)
_turns = st.lists(st.fixed_dictionaries({
    "tools_source": st.sampled_from(("declared", "inferred", "none")),
    "tools": _tools, "calls": _calls,
}), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(_turns)
def test_the_batch_kernels_follow_the_rules_call_by_call(specs: list[dict[str, Any]]) -> None:
    turns = [make_turn(s, turn_id=f"t{i}") for i, s in enumerate(specs)]
    scorer = REGISTRY["call_validity"]
    want = score_columns(oracle(turns)).select(list(SCORE_COLUMNS))
    # The function itself, not `score`: a failure must not become error rows.
    got = scorer.fn(Turns(_frame(turns)), [None] * len(turns))
    assert got.to_dicts() == want.to_dicts()
    # A batch in two chunks, as a concatenation hands it over.
    half = len(turns) // 2
    chunked = pl.concat([_frame(turns[:half]), _frame(turns[half:])], rechunk=False)
    assert scorer.fn(Turns(chunked), [None] * len(turns)).to_dicts() == want.to_dicts()
