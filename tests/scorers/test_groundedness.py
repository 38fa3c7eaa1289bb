"""The groundedness scorer's extraction of specifics, its documented blind spot, and the
batch path (`groundedness_batch`) against the row-wise reference.

Verdicts on whole turns are table tests in `cases/groundedness.jsonl`.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scorers.factory import make_turn
from turnscore.ingest.turn import turns_to_arrow
from turnscore.scorers import specifics
from turnscore.scorers.base import Status, score_columns
from turnscore.scorers.groundedness import groundedness, groundedness_columns
from turnscore.scorers.groundedness_batch import _AGREED, score_batch
from turnscore.scorers.specifics import (
    _CODE,
    _DMY,
    _ISO_DATE,
    _MDY,
    _MONTH,
    _ORD,
    _PREFILTERS,
    _code_matches,
    extract_specifics,
    prefiltered,
)

EXAMPLES = json.loads((Path(__file__).parent / "cases" / "specifics.json").read_text())


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e["answer"][:40])
def test_extracts_the_specifics(example: dict[str, object]) -> None:
    found = [[s.kind, s.text] for s in extract_specifics(str(example["answer"]))]
    assert found == example["specifics"]


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


# Text built from the pieces the patterns care about, so matches are common.
_PIECE_TEXTS = [
    "March 5, 2024", "5th Mar", "2024-03-05", "9:30", "09:30:15", "x:12:30", "1,000",
    "18.34", "ORD-1234", "ab-12-cd", "x_1", "a\u00b2b3", "\u00e9ab12", "-ab12-", "9-a1",
    "ab\u06634", "\u0663:\u0664\u0665", "1. ", "\n2) ", "\n# Heading", " ", "\n", "\t", ", ",
    "New York", "\u201cquoted\u201d", '"Q 1"', "`c_1`", "a@b.com", "https://x.io/a.", "Sept 3",
    "\x1c", "Note:",
]
_PIECES = st.sampled_from(_PIECE_TEXTS)
_TEXTS = st.one_of(st.text(), st.lists(_PIECES, max_size=12).map("".join))


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_a_prefilter_hits_wherever_its_pattern_matches(text: str) -> None:
    [hits] = prefiltered([text])
    for pattern in _PREFILTERS:
        if pattern.search(text):
            assert pattern in hits, pattern.pattern


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_identifiers_are_the_matches_of_the_whole_text(text: str) -> None:
    assert [m.span() for m in _code_matches(text)] == [m.span() for m in _CODE.finditer(text)]


# The date patterns as first written, with `\b` in front; the shipped ones move it behind
# the first characters so that `re` can skip ahead (see `specifics.py`).
_PLAIN_DATES = {
    _ISO_DATE: re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)"),
    _MDY: re.compile(rf"\b({_MONTH}) (\d{{1,2}}){_ORD}\b(?:,? (\d{{4}})\b)?"),
    _DMY: re.compile(rf"\b(\d{{1,2}}){_ORD} ({_MONTH})(?:,? (\d{{4}})\b)?"),
}
_DATE_PIECES = st.sampled_from([
    "March 5, 2024", "5th Mar", "2024-03-05", "12024-3-5", "Sept 3", "Sept. 4", "Sep", "t",
    "May", "Dec", "x", "\u00e9", "\u0663", "_", "1", "31", "2024", " ", ",", ", ", "-", "th",
])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(_DATE_PIECES, max_size=12).map("".join)))
def test_date_patterns_match_as_with_a_leading_word_boundary(text: str) -> None:
    for pattern, plain in _PLAIN_DATES.items():
        assert [(m.span(), m.groups()) for m in pattern.finditer(text)] == \
               [(m.span(), m.groups()) for m in plain.finditer(text)], plain.pattern


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


# Pieces for the batch path: each pattern's matches, the lookahead cases it sets aside
# (`1,2345`, `12:30:4`, `1.5th`, `2024-03-055`), names around sentence ends and colons,
# and characters on which `re` and Rust regex disagree.
_BATCH_PIECES = st.sampled_from([
    *_PIECE_TEXTS, "1,2345", "12:30:4", "1.5th", "12th", "3rd", "2024-03-055", "18.0",
    "18", "180", "0.50", "007", "3,14", "The", "Paris", "Monday's", "Bank of America", ". ",
    "! ", ": ", "Reference: ", "TK-0", "O'Brien", "Jean-Luc Picard", "(", "*", "- ", "AB",
    "\u00e9", "\u00b0C", "\u00c9COLE", "\u0130", "\u03a3", "\u200d", "\u0301", "Apr 31",
    "Feb 30, 2024", "2024-13-01", "01:60", "Dr. Who", "van", "Ludwig van Beethoven",
    "James's", "A1", "B-52", "x1y", "ID_9", "iPhone", "THE", "a.b@c.de", "http://", "\x00",
    ". The ", "\nIf ", ". I ", "Of ", "Monday ",
])
_BATCH_TEXTS = st.one_of(st.text(), st.lists(_BATCH_PIECES, max_size=14).map("".join))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), _BATCH_TEXTS), _BATCH_TEXTS, _BATCH_TEXTS,
                          st.booleans()), min_size=1, max_size=8))
def test_the_batch_path_gives_the_reference_scores(
        rows: list[tuple[str | None, str, str, bool]]) -> None:
    """Answers and sources from the pieces the patterns care about, a batch at a time
    (turns also share a batch with others): the columns of `groundedness_columns` are
    the reference's, whether a turn is scored in the batch path or set aside."""
    turns = [make_turn({"request": request, "final_answer": answer,
                        "calls": [{"name": "t", "result": result},
                                  *([{"name": "u", "result": None}] if lost else [])]},
                       turn_id=f"t{i}")
             for i, (answer, request, result, lost) in enumerate(rows)]
    frame = pl.from_arrow(turns_to_arrow(turns))
    assert isinstance(frame, pl.DataFrame)
    want = score_columns(groundedness(turns, [None] * len(turns)))
    assert groundedness_columns(frame, [None] * len(turns)).to_dicts() == want.to_dicts()


@pytest.mark.parametrize("answer", [
    "Done. The New York office. The Foo:Bar. Note: The Paris team. The Paris.",
    "Done. The van Gogh museum. The of Rome. The de la Cruz family.\nThe  van Oslo.",
    "Hi.\nThe Of Paris said. The Monday Lisbon. The X. I Paris. The Monday. If Rome:",
    "1. The Bank of America\n2. The Bank Of Lisbon. The\n# Head. The Oslo\n"
    "\"x. The\" Oslo. The ORD-12 Oslo.",
])
def test_names_after_a_sentence_opening_word_are_the_reference_names(answer: str) -> None:
    """The batch path lower-cases a capitalised common word after a sentence's end before
    it looks for names (`_SENTENCE_OPENINGS`): the names and verdicts stay the same."""
    turn = make_turn({"request": "q", "final_answer": answer,
                      "calls": [{"name": "t", "result": "Paris"}]})
    frame = pl.from_arrow(turns_to_arrow([turn]))
    assert isinstance(frame, pl.DataFrame)
    want = score_columns(groundedness([turn], [None]))
    assert "\"kind\":\"name\"" in want["details"][0]  # there are names to get right
    assert groundedness_columns(frame, [None]).to_dicts() == want.to_dicts()


@pytest.mark.parametrize("answer", [
    "It was 1,2345 units.", "At 12:30:4 sharp.", "The 1.5th try.", "On 2024-03-055.",
    "Caf\u00e9\u0301 Paris",  # a combining mark: `\\w` differs between the engines
])
def test_the_batch_path_sets_aside_what_only_re_can_settle(answer: str) -> None:
    scored, aside = score_batch(pl.Series([answer]), pl.Series(["q"]),
                                pl.Series([[{"result": "r", "error": None}]]))
    assert (scored.height, aside) == (0, [0])


def test_the_batch_path_scores_plain_turns_itself() -> None:
    scored, aside = score_batch(pl.Series(["Order ORD-1234 ships on March 5, 2024 to Paris."]),
                                pl.Series(["Where is ORD-1234?"]),
                                pl.Series([[{"result": "ships 2024-03-05 to Paris",
                                             "error": None}]]))
    assert aside == []
    assert scored.select("status", "value", "label").row(0) == ("scored", 1.0, "grounded")


def _agreed() -> list[str]:
    ranges = re.findall(r"(\\[xuU][0-9a-f]+)(?:-(\\[xuU][0-9a-f]+))?", _AGREED)
    code = [(int(a[2:], 16), int((b or a)[2:], 16)) for a, b in ranges]
    return [chr(c) for lo, hi in code for c in range(lo, hi + 1)]


def test_the_engines_agree_on_every_character_scored_in_the_batch_path() -> None:
    """`_AGREED`: per character, `re`'s `\\w`, `\\s`, `\\d` and `str.isalnum`,
    `str.isspace`, `str.lower` are the Rust regex engine's (and the digits are ASCII)."""
    chars = _agreed()
    assert len(chars) > 4500  # the ranges were all read
    rust = pl.DataFrame({"c": chars}).select(
        w=pl.col("c").str.contains(r"^\w$"), s=pl.col("c").str.contains(r"^\s$"),
        d=pl.col("c").str.contains(r"^\d$"), alnum=pl.col("c").str.contains(r"^[\pL\pN]$"),
        blank=pl.col("c").str.strip_chars() == "", lower=pl.col("c").str.to_lowercase())
    python = pl.DataFrame({
        "w": [bool(re.fullmatch(r"\w", c)) for c in chars],
        "s": [bool(re.fullmatch(r"\s", c)) for c in chars],
        "d": [bool(re.fullmatch(r"\d", c)) and c.isascii() for c in chars],
        "alnum": [c.isalnum() for c in chars], "blank": [c.isspace() for c in chars],
        "lower": [c.lower() for c in chars]})
    differ = [c for c, a, b in zip(chars, rust.iter_rows(), python.iter_rows(), strict=True)
              if a != b or a[1] != a[4]]
    assert differ == []


SPECIFICS_PATTERNS_DIGEST = "f9ff42b3352f793c"


def test_the_reference_patterns_are_the_ones_the_batch_path_mirrors() -> None:
    # `groundedness_batch` re-implements these patterns for polars (no lookarounds); the
    # property tests only catch a drift their generated texts happen to reach.
    patterns = sorted((name, p.pattern, p.flags) for name, p in vars(specifics).items()
                      if isinstance(p, re.Pattern))
    digest = hashlib.sha256(repr(patterns).encode()).hexdigest()[:16]
    assert digest == SPECIFICS_PATTERNS_DIGEST, (
        "a pattern in scorers/specifics.py changed: change its mirror in "
        "scorers/groundedness_batch.py, then update SPECIFICS_PATTERNS_DIGEST")
