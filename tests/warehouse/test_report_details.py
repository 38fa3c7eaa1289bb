"""The "why" lines of a low-scoring turn, from verdict details as an LLM judge may send them."""

from __future__ import annotations

import json

import pytest

from turnscore.warehouse.report.data import ScoreView
from turnscore.warehouse.report.turn_sections import _details_lines


@pytest.mark.parametrize(("scorer", "details", "lines"), [
    ("tractability", {"request_kind": "arithmetic", "strain_signs": ["hand arithmetic"]},
     ["request kind: arithmetic", "strain: hand arithmetic"]),
    # Not the schema's list, but one sign: one line, not one line per character.
    ("tractability", {"strain_signs": "hand arithmetic"}, ["strain: hand arithmetic"]),
    ("tool_usage", {"calls": [{"tool": "search", "problem": "wrong tool"}, {"tool": "x"}]},
     ["call search: wrong tool"]),
    ("tool_usage", {"calls": "none"}, []),
    ("tool_usage", {"calls": {"tool": "search", "problem": "wrong tool"}}, []),
])
def test_details_lines(scorer: str, details: dict[str, object], lines: list[str]) -> None:
    score = ScoreView(scorer, "scored", 2.0, "low", json.dumps(details))
    assert _details_lines(score) == lines
