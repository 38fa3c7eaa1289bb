"""call_validity beyond its case file: what it must never do."""

from __future__ import annotations

from tests.recording_server import recording_server
from tests.scorers.factory import make_turn
from turnscore.scorers import REGISTRY
from turnscore.scorers.base import Status


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
