"""The rules judge's tool relevance: which tool a request points at, and why."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.scorers.judge.scripted import make_turn
from turnscore.ingest.turn import Tool
from turnscore.scorers.judge import relevance as rel
from turnscore.scorers.judge import rules


def tool(name: str, description: str, /, **properties: dict[str, Any]) -> Tool:
    schema = {"type": "object", "properties": properties}
    return Tool(name, description, json.dumps(schema))


DOCS = tool("search_docs", "Search Acme Analytics' internal documents (company facts, offices, "
            "products, policies) and return the best matching snippets.",
            query={"type": "string", "description": "Keywords to search for."},
            top_k={"type": "integer", "maximum": 5, "description": "How many snippets to return."})
CALC = tool("calculator", "Evaluate an arithmetic expression (at most 40 characters).",
            expression={"type": "string", "maxLength": 40})
METRIC = tool("get_metric", "Look up one of Acme Analytics' business metrics for a period.",
              name={"type": "string", "enum": ["revenue", "headcount", "churn_rate"]},
              period={"type": "string", "enum": ["2024", "2025"]})
TOOLS = (DOCS, CALC, METRIC)


@pytest.mark.parametrize(("request_text", "top", "hit"), [
    ("What is 12 * 7?", "calculator", "arithmetic: 12 * 7"),
    ("What is 15% of 80?", "calculator", "arithmetic: % over 2 number(s)"),
    ("What was the churn rate in 2025?", "get_metric", "name=churn_rate"),
    ("What was revenue in 2024?", "get_metric", "period=2024"),
    ("Which products does the company sell?", "search_docs", "product"),
    ("Who founded it?", "search_docs", "a fact-seeking question for a general search"),
])
def test_the_tool_a_request_points_at(request_text: str, top: str, hit: str) -> None:
    matches = rel.rank(TOOLS, request_text)
    best = rel.best(matches.values())
    assert best is not None and best.tool == top, matches
    assert hit in [h for h, _ in best.hits]


@pytest.mark.parametrize("request_text", [
    "What will the share price be next year?",  # the future is not in any document
    "Write me a haiku about autumn.",            # not a question a search answers
    "Draft a note on the 2025-03-01 launch.",  # a date, not a subtraction
])
def test_requests_no_tool_points_at(request_text: str) -> None:
    matches = rel.rank(TOOLS, request_text)
    assert all(m.score < 2 for m in matches.values()), matches


def test_a_word_every_tool_shares_counts_less_than_its_share() -> None:
    a = tool("alpha", "Reports on sales.")
    b = tool("beta", "Reports on staff.")
    matches = rel.rank((a, b), "Show me the reports on sales")
    # "report" is held by both (smoothed IDF: log(3/2)/log(3)); "sales" by alpha alone.
    assert matches["beta"].score == 0.37
    assert matches["alpha"].score == 1.37
    # With more tools a word two of them hold counts for more than with two.
    c, d = tool("gamma", "Charts."), tool("delta", "Maps.")
    assert rel.rank((a, b, c, d), "the reports")["alpha"].score == 0.57


def test_arithmetic_every_calculator_shares_tells_them_apart_little() -> None:
    mean = tool("calculate_average", "Calculates the average of a list of scores.")
    spread = tool("calculate_spread", "Calculates the standard deviation of scores.")
    matches = rel.rank((mean, spread), "What is the average of 90, 75 and 82?")
    [(_, alone)] = [h for h in rel.rank((mean,), "What is the average of 90, 75 and 82?")
                    ["calculate_average"].hits if h[0].startswith(rel.ARITHMETIC_HIT)]
    [(_, shared)] = [h for h in matches["calculate_spread"].hits
                     if h[0].startswith(rel.ARITHMETIC_HIT)]
    assert alone == 4.0 and shared < alone / 2


def test_a_year_is_not_arithmetic_and_a_name_is_not_a_capability() -> None:
    assert rel.arithmetic_signal("What was revenue in 2024?") == (0.0, None)
    assert rel.arithmetic_signal("Add 3 and 4, please")[0] == 0.0
    assert rel.arithmetic_signal("What is the sum of 3 and 4?")[0] == 4.0
    assert "analytic" not in rel.common_words("Search Acme Analytics' documents.")
    assert "search" in rel.common_words("Search Acme Analytics' documents.")
    assert rel.is_calculator(CALC) and not rel.is_calculator(DOCS)
    assert rel.is_general_search(DOCS) and not rel.is_general_search(METRIC)


def test_params_read_enums_and_limits_and_survive_bad_schemas() -> None:
    by_name = {p.name: p for p in rel.params(METRIC)}
    assert by_name["period"].enum == ("2024", "2025")
    assert {p.name: p.maximum for p in rel.params(DOCS)}["top_k"] == 5
    assert rel.params(CALC)[0].max_length == 40
    assert rel.params(Tool("x", "y", "{not json")) == ()
    assert rel.params(Tool("x", "y", '{"properties": [1]}')) == ()


def _usage(request_text: str, calls: list[dict[str, Any]]) -> tuple[float, list[str]]:
    turn = make_turn({"request": request_text, "calls": calls,
                      "tools": [{"name": t.name, "description": t.description,
                                 "parameters": t.parameters} for t in TOOLS]})
    verdict = rules.tool_usage(turn)
    checks = verdict.details["checks"]
    assert isinstance(checks, list)
    return verdict.score, checks


def test_a_weaker_tool_is_a_wrong_choice_unless_the_better_one_is_also_called() -> None:
    score, checks = _usage("What was revenue in 2024?",
                           [{"name": "search_docs", "arguments": {"query": "revenue 2024"}}])
    assert score == 1 and "weaker tool: get_metric" in checks[0]
    both = [{"name": "get_metric", "arguments": {"name": "revenue", "period": "2024"}},
            {"name": "calculator", "arguments": {"expression": "18.6 * 0.15"}}]
    assert _usage("What is 15% of revenue in 2024?", both) == (10, [])


def test_inferred_tool_sets_are_not_second_guessed() -> None:
    turn = make_turn({"request": "What is 12 * 7?", "tools_source": "inferred",
                      "tools": [{"name": "search_docs"}, {"name": "calculator"}],
                      "calls": [{"name": "search_docs", "arguments": {"query": "12 * 7"}}]})
    assert rules.tool_usage(turn).score == 10  # only the tools seen called are known


def test_tractability_reads_the_calculator_limit_from_the_description_too() -> None:
    calc = Tool("calculator", "Evaluate an arithmetic expression (at most 20 characters).")
    turn = make_turn({"request": "Total of 1200.50, 3300.25, 4100.75 and 990.10?",
                      "tools": [{"name": calc.name, "description": calc.description}],
                      "final_answer": "The total is 9591.6."})
    verdict = rules.tractability(turn)
    assert verdict.score == 5 and verdict.details["missing_capability"] == (
        "exact arithmetic over 4 numbers in one go (calculator takes at most 20 characters)")


def test_a_calculator_limit_is_no_gap_when_another_arithmetic_tool_takes_it_all() -> None:
    request = "Total of 1200.50, 3300.25, 4100.75 and 990.10?"
    small = Tool("calculator", "Evaluate an arithmetic expression (at most 20 characters).")
    python = Tool("run_python", "Execute Python code and return its output.")
    assert rel.calculator_gap((small,), request) is not None
    assert rel.calculator_gap((small, python), request) is None
    assert rel.calculator_gap((python, small), request) is None
