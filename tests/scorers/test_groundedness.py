"""The groundedness scorer's extraction of specifics, its documented blind spot, how it
takes the matches a lookahead would decide, and properties over generated text.

Verdicts on whole turns are table tests in `cases/groundedness.jsonl`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scorers.factory import make_turn
from tests.scorers.specifics_oracle import specifics as oracle
from turnscore.ingest.turn import Turn
from turnscore.scorers import REGISTRY
from turnscore.scorers.base import Score, Status
from turnscore.scorers.specifics import specifics_of


def groundedness(turns: list[Turn], cases: list[None]) -> list[Score]:
    found = REGISTRY["groundedness"].score_turns(turns, cases)
    assert all(s is not None for s in found)
    return found  # type: ignore[return-value]


EXAMPLES = json.loads((Path(__file__).parent / "cases" / "specifics.json").read_text())


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e["answer"][:40])
def test_extracts_the_specifics(example: dict[str, object]) -> None:
    [found] = specifics_of([str(example["answer"])])
    assert [list(f) for f in found] == example["specifics"]


def test_blind_spot_a_fabricated_claim_without_specifics_passes() -> None:
    """The tool says the flight is delayed; the answer says it is on time. No number,
    date, name or quoted value carries the lie, so this scorer cannot see it: the
    judge variant exists for this. If this test starts failing, the docstring's blind
    spot has changed: update both."""
    turn = make_turn({"request": "Is my flight on time?",
                      "calls": [{"name": "flight", "result": '{"status": "delayed"}'}],
                      "final_answer": "Yes, your flight is on time."})
    [score] = groundedness([turn], [None])
    assert (score.status, score.value) == (Status.SCORED, 1.0)
    assert score.details["specifics"] == 0


def test_the_same_lie_with_a_specific_is_caught() -> None:
    turn = make_turn({"request": "When does my flight leave?",
                      "calls": [{"name": "flight", "result": '{"departs": "14:10"}'}],
                      "final_answer": "It leaves on time at 13:40."})
    [score] = groundedness([turn], [None])
    assert (score.status, score.value, score.label) == (Status.SCORED, 0.0, "ungrounded")
    assert score.details["unsupported"] == [{"kind": "time", "text": "13:40"}]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_an_answer_that_repeats_the_tool_output_is_grounded(text: str) -> None:
    turn = make_turn({"request": "q", "calls": [{"name": "t", "result": text}],
                      "final_answer": text})
    [score] = groundedness([turn], [None])
    assert (score.status, score.value) == (Status.SCORED, 1.0), score.details


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_any_text_scores_without_raising(answer: str, result: str) -> None:
    turn = make_turn({"request": "q", "calls": [{"name": "t", "result": result}],
                      "final_answer": answer})
    [score] = groundedness([turn], [None])
    assert score.status in (Status.SCORED, Status.INCONCLUSIVE)
    assert score.value in (0.0, 1.0)


@pytest.mark.parametrize(("answer", "source", "label"), [
    ("It costs 18.", "price: 18.0", "grounded"),      # equal values, different texts
    ("It costs 18.3.", "price: 18.34", "grounded"),   # a rounding of a finer value
    ("It costs 18.34.", "price: 18.3", "ungrounded"),  # not the other way round
    ("It costs 1,000.", "total 1000", "grounded"),
    ("It costs 18.", "code 180", "ungrounded"),
])
def test_numbers_are_compared_by_value(answer: str, source: str, label: str) -> None:
    turn = make_turn({"request": "q", "final_answer": answer,
                      "calls": [{"name": "t", "result": source}]})
    [score] = groundedness([turn], [None])
    assert score.label == label


@pytest.mark.parametrize(("answer", "specifics"), [
    # A lookahead fails the match: taken as a backtracking engine (`re`) takes it.
    ("It was 1,2345 units.", [("number", "1")]),
    ("It was 1,234,5678 units.", [("number", "1,234")]),
    ("The 1.5th try.", [("number", "1")]),
    ("The 12th try.", []),
    ("At 12:30:4 sharp.", [("number", "12"), ("number", "30"), ("number", "4")]),
    ("On 2024-03-055.", [("number", "2024"), ("number", "03"), ("number", "055")]),
    ("Done at 9:30, not 09:30:15.", [("time", "9:30"), ("time", "09:30:15")]),
    ("Rows ,3,1412 and 5", [("number", "5")]),
])
def test_matches_a_lookahead_decides(answer: str, specifics: list[tuple[str, str]]) -> None:
    assert specifics_of([answer]) == [specifics]


def test_a_source_number_followed_by_a_digit_is_read_as_backtracking_reads_it() -> None:
    turn = make_turn({"request": "q", "final_answer": "It is 1 or 2345.",
                      "calls": [{"name": "t", "result": "1,2345"}]})
    [score] = groundedness([turn], [None])
    assert score.label == "grounded", score.details


_PIECES = st.sampled_from([
    "March 5, 2024", "5th Mar", "2024-03-05", "9:30", "09:30:15", "1,000", "18.34",
    "ORD-1234", "1,2345", "12:30:4", "1.5th", "2024-03-055", "New York", "The", ". ",
    "\n", " ", "\u201cquoted\u201d", "a@b.com", "https://x.io/a.", "Caf\u00e9\u0301",
    "\u0663", "\x00", "Bank of America", "Note:", "# H", "1. ",
])
_TEXTS = st.one_of(st.text(), st.lists(_PIECES, max_size=14).map("".join))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_TEXTS, _TEXTS), min_size=1, max_size=6))
def test_a_turn_scores_alike_alone_and_in_a_batch(rows: list[tuple[str, str]]) -> None:
    turns = [make_turn({"request": "q", "final_answer": answer,
                        "calls": [{"name": "t", "result": result}]}, turn_id=f"t{i}")
             for i, (answer, result) in enumerate(rows)]
    batch = groundedness(turns, [None] * len(turns))
    assert batch == [groundedness([t], [None])[0] for t in turns]


# Characters Python's `re` and Rust regex read alike (word, digit, space, case): where the
# oracle's lookarounds and the shipped rewrite without them must agree.
_ALIKE = st.sampled_from([chr(c) for c in range(0x20, 0x7f)]
                         + list("\n\t\u00e9\u00c9\u00fc\u201c\u201d\u2019"))
_ALIKE_PIECES = _PIECES.filter(lambda p: p != "\x00" and (p.isascii() or p.isalpha()))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_ALIKE_PIECES, st.lists(_ALIKE, max_size=6).map("".join)),
                max_size=14).map("".join))
def test_the_extraction_finds_what_the_lookaround_patterns_find(text: str) -> None:
    assert specifics_of([text]) == [oracle(text)]
