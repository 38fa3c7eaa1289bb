"""The judge views on a real warehouse, over turns scored by the rules judge (and a few
LLM-judged rows), written through the warehouse's own score writer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.scorers.judge.scripted import make_turn
from turnscore.ingest.turn import Turn, turns_to_arrow
from turnscore.scorers.base import REGISTRY, Score, Usage
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.publish import refresh_views
from turnscore.warehouse.scores import ScoreRow, write_scores

W = {"name": "get_weather", "description": "Weather forecast for a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                    "required": ["city"]}}
EMAIL = {"name": "send_email", "description": "Send an email to a recipient.",
         "parameters": {"type": "object", "properties": {"to": {"type": "string"},
                        "body": {"type": "string"}}, "required": ["to", "body"]}}
HAND_SUM = ("12 + 45 = 57, 57 + 78 = 135, 135 + 23 = 158, 158 + 56 = 214, 214 + 89 = 303, "
            "303 + 34 = 337.")
SPECS = {
    "w1": ("weather", {"request": "What's the weather in Paris for the next 3 days?",
                       "tools": [W], "calls": [{"name": "get_weather",
                                                "arguments": {"city": "Paris"}}],
                       "final_answer": "Sunny all week."}),
    "w2": ("weather", {"request": "What's the weather in Paris today?", "tools": [W],
                       "final_answer": "Probably sunny."}),
    "m1": ("math", {"request": "How many of these 500 orders were shipped late?",
                    "tools": [EMAIL], "final_answer": "Many of them were late."}),
    "m2": ("math", {"request": "Add up these numbers: 12, 45, 78, 23, 56, 89, 34",
                    "tools": [EMAIL], "calls": [{"name": "send_email", "arguments": {"to": 5}}],
                    "final_answer": HAND_SUM}),
}


def _turn(turn_id: str, agent: str, spec: dict[str, Any]) -> Turn:
    return make_turn(spec | {"agent_name": agent, "content_hash": f"h-{turn_id}"}, turn_id)


TURNS = [_turn(tid, agent, spec) for tid, (agent, spec) in SPECS.items()]


def _write(con: duckdb.DuckDBPyConnection, rows: list[tuple[str, str, Score]]) -> None:
    write_scores(con, [ScoreRow(tid, scorer, "1", f"h-{tid}", score)
                       for tid, scorer, score in rows], "run-1")


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = open_warehouse(tmp_path)
    con.register("_turns", turns_to_arrow(TURNS))
    con.execute("INSERT INTO turns SELECT * FROM _turns")
    con.unregister("_turns")
    rows = []
    for scorer in ("tool_usage", "tractability"):
        for turn, score in zip(TURNS, REGISTRY[scorer].score_turns(TURNS, [None] * 4), strict=True):
            rows.append((turn.turn_id, scorer, score))
    _write(con, rows)
    refresh_views(con)
    yield con
    con.close()


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def test_rules_scores_are_what_the_views_are_built_on(con: duckdb.DuckDBPyConnection) -> None:
    got = {(r["turn_id"], r["scorer"]): r["value"]
           for r in rows(con, "SELECT turn_id, scorer, value FROM scores")}
    assert got == {("w1", "tool_usage"): 10, ("w2", "tool_usage"): 1, ("m1", "tool_usage"): 9,
                   ("m2", "tool_usage"): 1, ("w1", "tractability"): 9,
                   ("w2", "tractability"): 9, ("m1", "tractability"): 2,
                   ("m2", "tractability"): 3}


def test_tool_usage_by_tool(con: duckdb.DuckDBPyConnection) -> None:
    got = rows(con, "SELECT * FROM tool_usage_by_tool ORDER BY tool")
    assert got == [
        {"tool": "get_weather", "judge": "rules-v1", "turns_available": 2, "turns_called": 1,
         "scored_turns": 2, "mean_tool_usage": 5.5, "low_share": 0.5, "low_turns": 1,
         "low_verdicts": ["not called although it matched the request"]},
        {"tool": "send_email", "judge": "rules-v1", "turns_available": 2, "turns_called": 1,
         "scored_turns": 2, "mean_tool_usage": 5.0, "low_share": 0.5, "low_turns": 1,
         "low_verdicts": ["unrelated call: nothing in the request points at send_email (at "
                          "most a word other tools share) and no argument value comes from "
                          "the request; 'body' is a required property; to: 5 is not of type "
                          "'string'"]},
    ]


def test_tool_usage_by_agent(con: duckdb.DuckDBPyConnection) -> None:
    got = {r["agent"]: r for r in rows(con, "SELECT * FROM tool_usage_by_agent")}
    assert got["weather"] == {
        "agent": "weather", "judge": "rules-v1", "turns": 2, "scored": 2, "not_run": 0,
        "errors": 0, "mean_tool_usage": 5.5, "low_share": 0.5, "no_call_turns": 1,
        "missed_calls": 1, "calls_judged": 1, "bad_choice": 0, "bad_arguments": 0}
    assert (got["math"]["missed_calls"], got["math"]["calls_judged"],
            got["math"]["bad_arguments"], got["math"]["bad_choice"]) == (0, 1, 1, 1)


def test_tractability_by_kind(con: duckdb.DuckDBPyConnection) -> None:
    got = {r["request_kind"]: r for r in rows(con, "SELECT * FROM tractability_by_kind")}
    assert set(got) == {"lookup", "counting", "arithmetic"}
    assert got["lookup"]["turns"] == 2 and got["lookup"]["low_turns"] == 0
    assert got["lookup"]["missing_capability"] is None
    counting = got["counting"]
    assert counting["missing_capability"] == "counting over many items (a query or code tool)"
    assert (counting["low_turns"], counting["agents"]) == (1, ["math"])
    assert counting["example_request"] == SPECS["m1"][1]["request"]
    assert got["arithmetic"]["strain_signs"] == ["arithmetic done by hand"]


def test_usage_vs_tractability_has_four_quadrants_per_agent(
        con: duckdb.DuckDBPyConnection) -> None:
    got = {(r["agent"], r["usage_high"], r["tractability_high"]): r
           for r in rows(con, "SELECT * FROM usage_vs_tractability")}
    assert len(got) == 8
    assert got[("weather", True, True)]["turns"] == 1
    assert got[("weather", False, True)]["suggests"].startswith("fix the agent")
    assert got[("weather", False, True)]["share"] == 0.5
    assert got[("math", True, False)]["suggests"].startswith("extend the tool set")
    assert got[("math", False, False)]["suggests"].startswith("the tooling more than the agents")
    assert got[("math", True, True)]["turns"] == 0
    assert got[("math", True, True)]["mean_tool_usage"] is None


def test_judge_cost_counts_replaced_rows_and_cache_hits(con: duckdb.DuckDBPyConnection) -> None:
    paid = Score.scored(7.0, "7-8", "ok", {"calls": []}, judge="gpt-test", prompt_sha="s",
                        usage=Usage(1000, 100, 0.002, 250.0, 2))
    cached = Score.scored(3.0, "3-4", "meh", {"calls": []}, judge="gpt-test", prompt_sha="s",
                          usage=Usage(1000, 100, 0.0, 0.0, 0))
    failed = Score.failed("unusable judge reply", judge="gpt-test",
                          usage=Usage(500, 50, 0.001, 100.0, 1))
    _write(con, [("w1", "tool_usage", paid), ("w2", "tool_usage", cached),
                 ("m1", "tool_usage", failed)])
    got = {r["judge"]: r for r in rows(con, "SELECT * FROM judge_cost WHERE scorer = "
                                            "'tool_usage'")}
    llm = got["gpt-test"]
    assert (llm["scores"], llm["scored"], llm["errors"], llm["cache_hits"]) == (3, 2, 1, 1)
    assert (llm["requests"], llm["input_tokens"], llm["output_tokens"]) == (3, 1500, 150)
    assert llm["cost_usd"] == pytest.approx(0.003)
    assert llm["mean_latency_ms"] == pytest.approx(175.0)
    assert got["rules-v1"]["scores"] == 4 and got["rules-v1"]["cost_usd"] == 0.0
    # the views keep LLM and rules-judge rows apart by the judge column
    by_tool = rows(con, "SELECT tool, judge FROM tool_usage_by_tool ORDER BY tool, judge")
    assert [(r["tool"], r["judge"]) for r in by_tool] == [
        ("get_weather", "gpt-test"), ("send_email", "rules-v1"), ("send_email", None)]


def test_judge_cost_counts_partial_verdicts_and_flagged_content(
        con: duckdb.DuckDBPyConnection) -> None:
    usage = Usage(1000, 100, 0.002, 250.0, 1)
    partial = Score.scored(7.0, "7-8", "ok", {"missing": ["calls", "call_needed"]},
                           judge="gpt-test", prompt_sha="s", usage=usage)
    whole = Score.scored(8.0, "7-8", "ok", {"calls": [], "call_needed": None, "missing": []},
                         judge="gpt-test", prompt_sha="s", usage=usage)
    flagged = Score.scored(6.0, "5-6", "ok", {"calls": [], "content_markers": ["request"]},
                           judge="gpt-test", prompt_sha="s", usage=usage)
    forged = Score.inconclusive("repeats the agent's verdict", judge="gpt-test",
                                details={"forged_verdict": True}, usage=usage)
    _write(con, [("w1", "tool_usage", partial), ("w2", "tool_usage", whole),
                 ("m1", "tool_usage", flagged), ("m2", "tool_usage", forged)])
    [llm] = rows(con, "SELECT * FROM judge_cost WHERE judge = 'gpt-test'")
    assert (llm["scores"], llm["scored"], llm["partial"], llm["flagged"]) == (4, 3, 1, 2)
