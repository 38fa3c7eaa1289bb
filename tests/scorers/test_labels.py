"""Reading label files: the same cases from JSONL, CSV, JSON and Parquet; bad rows named."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from turnscore.scorers.base import Case
from turnscore.scorers.labels import LabelError, default_case_id, read_labels
from turnscore.scorers.text import normalize_text

LABELS = Path(__file__).parent / "cases" / "labels"

EXPECTED = [
    Case("weather-paris", "What's the weather in Paris?", canary=("18.4",),
         expected_tools=("get_weather",), tags=("weather",)),
    Case("7", "Convert 10 USD", canary=("9.31", "EUR"), ideal_response="9.31 EUR",
         match_mode="contains", expected_tools=("fx",), expected_tools_mode="exact"),
    Case(default_case_id(normalize_text("Delete my account now!")), "Delete my account now!",
         should_decline=True),
]


def _parquet(tmp_path: Path) -> Path:
    path = tmp_path / "good.parquet"
    pl.DataFrame(
        {"id": ["weather-paris", "7", None],
         "input": ["What's the weather in Paris?", "Convert 10 USD", "Delete my account now!"],
         "canary": [["18.4"], ["9.31", "EUR"], None],
         "ideal_response": [None, "9.31 EUR", None], "match_mode": [None, "contains", None],
         "expected_tools": [["get_weather"], ["fx"], None],
         "expected_tools_mode": [None, "exact", None], "should_decline": [None, None, True],
         "tags": [["weather"], None, None]},
    ).write_parquet(path)
    return path


@pytest.mark.parametrize("name", ["good.jsonl", "good.csv", "parquet"])
def test_same_cases_from_every_format(name: str, tmp_path: Path) -> None:
    path = _parquet(tmp_path) if name == "parquet" else LABELS / name
    cases, errors = read_labels(path)
    assert errors == []
    assert cases == EXPECTED


def test_default_id_is_a_stable_hash_of_the_normalised_input() -> None:
    assert default_case_id("delete my account now") == EXPECTED[2].case_id
    assert default_case_id(normalize_text("DELETE my account, now.")) == EXPECTED[2].case_id
    assert default_case_id("something else") != EXPECTED[2].case_id


def test_bad_jsonl_rows_are_named_and_the_rest_load() -> None:
    path = LABELS / "bad.jsonl"
    cases, errors = read_labels(path)
    assert [c.case_id for c in cases] == ["ok-1", "ok-2"]
    assert cases[1].tags == ("solo",)
    assert [(e.line, e.message.split(" ")[0]) for e in errors] == [
        (2, "missing"), (3, "not"), (4, "expected"), (5, "field"), (6, "field"), (7, "duplicate")]
    assert all(e.path == str(path) for e in errors)
    assert str(errors[0]) == f"{path}:2: missing required field 'input'"
    assert "should_decline" in errors[3].message and "'maybe'" in errors[3].message
    assert "first at line 1" in errors[5].message


def test_bad_csv_rows_are_named_by_line() -> None:
    cases, errors = read_labels(LABELS / "bad.csv")
    assert [(c.case_id, c.canary, c.should_decline) for c in cases] == [
        ("a", ("x",), None), ("e", ("x", "y"), False)]
    assert [e.line for e in errors] == [3, 4, 5]
    assert "not a JSON array" in errors[1].message


def test_json_array() -> None:
    cases, errors = read_labels(LABELS / "array.json")
    assert [c.case_id for c in cases] == ["a", "b"]
    assert cases[1].canary == ("p", "q")
    assert [(e.line, e.message) for e in errors] == [(2, "expected a JSON object, got int")]


def test_unreadable_or_unsupported_files_are_one_error(tmp_path: Path) -> None:
    assert read_labels(tmp_path / "cases.xml") == ([], [LabelError(
        str(tmp_path / "cases.xml"), None,
        "unsupported label file type '.xml' (use one of .jsonl, .ndjson, .json, .csv, .parquet)")])
    cases, errors = read_labels(tmp_path / "missing.jsonl")
    assert cases == [] and len(errors) == 1 and "cannot read" in errors[0].message
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    cases, errors = read_labels(broken)
    assert cases == [] and errors[0].line is None
