"""call_validity beyond its case file: what it must never do."""

from __future__ import annotations

import polars as pl

from tests.recording_server import recording_server
from tests.scorers.factory import make_turn
from turnscore.ingest.turn import Turn, turns_to_arrow
from turnscore.scorers import REGISTRY
from turnscore.scorers.base import Status, score_columns


def test_a_remote_ref_in_a_tool_schema_is_never_fetched() -> None:
    with recording_server() as (base, hits):
        tool = {"name": "get_weather", "description": "Weather for a city.",
                "parameters": {"type": "object", "properties": {"city": {"$ref": f"{base}/c"}}}}
        turn = make_turn({"tools_source": "declared", "tools": [tool],
                          "calls": [{"call_id": "c1", "name": "get_weather",
                                     "arguments": {"city": "Paris"}}]})
        [score] = REGISTRY["call_validity"].score([turn], [None])
    assert hits == []
    assert score.status == Status.SCORED
    assert "could not be applied" in str(score.details), score.details


def _frame(turns: list[Turn]) -> pl.DataFrame:
    frame = pl.from_arrow(turns_to_arrow(turns))
    assert isinstance(frame, pl.DataFrame)
    return frame


def test_a_batch_checks_the_same_arguments_against_each_turns_own_schema() -> None:
    # The columnar path parses and checks each distinct text once per batch: the memo
    # must still tell apart the schemas (and the tools) the same arguments meet.
    strict = {"name": "weather", "parameters": {"type": "object", "required": ["city"]}}
    loose = {"name": "weather", "parameters": {"type": "object"}}
    bare = {"name": "weather"}
    call = {"name": "weather", "arguments": "{}"}
    specs = [{"tools_source": "declared", "tools": tools, "calls": [call, call]}
             for tools in ([strict], [loose], [bare], [], [strict])]
    specs[1]["calls"] = [{**call, "status": "error"}, call]
    turns = [make_turn(s, turn_id=f"t{i}") for i, s in enumerate(specs)]
    scorer = REGISTRY["call_validity"]
    want = score_columns(scorer.fn(turns, [None] * len(turns)))
    got = scorer.score_frame(_frame(turns), [None] * len(turns))
    assert got.to_dicts() == want.to_dicts()
    assert got["label"].to_list() == ["invalid", "valid", "invalid", "invalid", "invalid"]
    assert "'city' is a required property" in got["explanation"][0]
    assert "duplicate" not in got["explanation"][1]
    assert got["explanation"][2] == "call 1 weather: exact duplicate of call 0"
    assert "unknown tool" in got["explanation"][3]
    # A slice of the batch (an Arrow offset) reads the same rows.
    tail = scorer.score_frame(_frame(turns).slice(3, 2), [None] * 2)
    assert tail.to_dicts() == want[3:].to_dicts()
