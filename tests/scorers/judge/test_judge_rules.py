"""The rules judge over hand-written case files: `cases/<scorer>.jsonl`, one turn per row with
the band, value, checks and details it must get. Scored through the registry, offline."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.recording_server import recording_server
from tests.scorers.judge.scripted import make_turn
from turnscore.scorers.base import REGISTRY, Status
from turnscore.scorers.judge.config import RULES_JUDGE
from turnscore.scorers.judge.engine import band

CASES = Path(__file__).parent / "cases"
ROWS = [(path.stem, json.loads(line)) for path in sorted(CASES.glob("*.jsonl"))
        for line in path.read_text().splitlines() if line.strip()]


def _subset(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(expected) == len(actual)
                and all(_subset(e, a) for e, a in zip(expected, actual, strict=True)))
    return bool(expected == actual)


@pytest.mark.parametrize(("scorer", "row"), ROWS, ids=[f"{s}: {r['name']}" for s, r in ROWS])
def test_rules_case(scorer: str, row: dict[str, Any]) -> None:
    expect = row["expect"]
    [score] = REGISTRY[scorer].score_turns([make_turn(row["turn"])], [None])
    assert score.status == Status(expect.get("status", "scored")), score
    if score.status != Status.SCORED:
        return
    assert score.judge == RULES_JUDGE and score.prompt_sha is None
    assert score.value == expect["value"], score.explanation
    assert score.label == expect["band"] == band(score.value)
    assert score.explanation is not None and score.explanation.startswith("rules-v1: ")
    checks = score.details["checks"]
    assert isinstance(checks, list)
    if expect.get("checks") == []:
        assert checks == [] and "none (every check passed)" in score.explanation
    for fragment in expect.get("checks", []):
        assert fragment in score.explanation, score.explanation
        assert any(fragment in c for c in checks)
    assert _subset(expect.get("details", {}), score.details), score.details


def test_every_band_is_covered_for_both_rubrics() -> None:
    for scorer in ("tool_usage", "tractability"):
        bands = {r["expect"]["band"] for s, r in ROWS if s == scorer}
        assert bands == {"9-10", "7-8", "5-6", "3-4", "0-2"}, scorer
    no_calls = [r["expect"]["details"]["call_needed"] for s, r in ROWS
                if s == "tool_usage" and not r["turn"]["calls"]]
    assert True in no_calls and False in no_calls


def test_rules_judge_is_deterministic() -> None:
    for scorer, row in ROWS:
        turn = make_turn(row["turn"])
        once = REGISTRY[scorer].score_turns([turn], [None])
        assert once == REGISTRY[scorer].score_turns([turn], [None])


def test_judged_scorers_are_registered_as_judge_kind() -> None:
    from turnscore.ingest.turn import Turn
    turn_fields = set(Turn.__dataclass_fields__)
    for name in ("tool_usage", "tractability", "groundedness_judge"):
        scorer = REGISTRY[name]
        assert scorer.kind == "judge"
        assert set(scorer.reads) <= turn_fields
    assert "final_answer" not in REGISTRY["tool_usage"].reads
    # The relevance-based rules replaced the first ones: rows they wrote are re-scored.
    assert REGISTRY["tool_usage"].version == "4/tool_usage-v1"
    assert REGISTRY["tractability"].version == "3/tractability-v1"
    assert REGISTRY["groundedness_judge"].version == "1/groundedness-v1"


_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=120)
_tool = st.fixed_dictionaries({"name": st.sampled_from(["get_weather", "calculator", "x"]),
                               "description": _text,
                               "parameters": st.sampled_from([
                                   None, "{not json", {"type": "object"},
                                   {"type": "object", "required": ["a"],
                                    "properties": {"a": {"type": "integer"}}}])})
_call = st.fixed_dictionaries({"name": st.sampled_from(["get_weather", "calculator", "y"]),
                               "arguments": st.one_of(st.none(), _text,
                                                      st.just({"a": 1}), st.just([1])),
                               "result": st.one_of(st.none(), _text)})


@settings(max_examples=150, deadline=None)
@given(request=_text, answer=st.one_of(st.none(), _text),
       tools=st.lists(_tool, max_size=3, unique_by=lambda t: str(t["name"])),
       calls=st.lists(_call, max_size=4))
def test_rules_judge_always_gives_a_banded_verdict(request: str, answer: str | None,
                                                   tools: list[dict[str, Any]],
                                                   calls: list[dict[str, Any]]) -> None:
    turn = make_turn({"request": request, "final_answer": answer, "tools": tools,
                      "calls": calls})
    for name in ("tool_usage", "tractability", "groundedness_judge"):
        [score] = REGISTRY[name].score_turns([turn], [None])
        assert score.status != Status.ERROR, score.error
        if score.status == Status.SCORED:
            assert score.value is not None and 0 <= score.value <= 10
            assert score.label == band(score.value)


def test_a_remote_ref_in_a_tool_schema_is_never_fetched() -> None:
    local = {"$ref": "#/$defs/city"}
    with recording_server() as (base, hits):
        for ref, problem in (({"$ref": f"{base}/city.json"}, False), (local, True)):
            tool = {"name": "get_weather", "description": "Weather forecast for a city.",
                    "parameters": {"type": "object", "$defs": {"city": {"type": "string"}},
                                   "properties": {"city": ref}}}
            turn = make_turn({"request": "Weather in Paris?", "tools_source": "declared",
                              "tools": [tool], "final_answer": "Sunny.",
                              "calls": [{"call_id": "c1", "name": "get_weather",
                                         "arguments": {"city": 75}, "result": "sunny"}]})
            [score] = REGISTRY["tool_usage"].score_turns([turn], [None])
            assert score.status == Status.SCORED
            [verdict] = score.details["calls"]  # type: ignore[index]
            # A local reference still validates; a remote one is left unresolved.
            assert verdict["arguments_ok"] is not problem, verdict
    assert hits == []


@pytest.mark.parametrize("run", ["1,", "1."])
def test_a_long_run_of_digits_takes_linear_time(run: str) -> None:
    # "1,2,3,..." without spaces, as a CSV answer has it: number patterns that could start
    # after every comma took minutes on 40 KB.
    numbers = run * 6000
    turn = make_turn({"request": f"Add these up: {numbers}",
                      "final_answer": f"Working: {numbers} = 5, so about 5."})
    started = time.monotonic()
    for name in ("tool_usage", "tractability", "groundedness_judge"):
        REGISTRY[name].score_turns([turn], [None])
    assert time.monotonic() - started < 1.5
