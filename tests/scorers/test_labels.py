"""Reading label files: the same cases from JSONL, CSV, JSON and Parquet; bad rows named."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from turnscore.scorers.base import Case
from turnscore.scorers.labels import LabelError, LabelWarning, default_case_id, read_labels
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


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_bad_csv_row_costs_that_row_only_and_is_named_by_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "cases.csv", (
        'id,input,canary\n'
        'a,"one, two",x\n'
        'b,three,x,extra\n'          # more fields than the header
        'c,"unterminated,x\n'        # a stray quote: the next lines still load
        'd,four,y\n'
        'e,"spans\ntwo lines",z\n'   # a quoted field may span lines
        '\n'
        'f,short\n'                  # fewer fields: the rest are empty
        'h,trailing,w,,\n'           # empty fields past the header's: trailing commas
        'g,"end of file\n'))
    cases, errors = read_labels(path)
    assert [(c.case_id, c.input, c.canary) for c in cases] == [
        ("a", "one, two", ("x",)), ("d", "four", ("y",)), ("e", "spans\ntwo lines", ("z",)),
        ("f", "short", None), ("h", "trailing", ("w",))]
    assert [e.line for e in errors] == [3, 4, 11]
    assert errors[0].message == "4 fields, the header has 3 (an unquoted comma?)"
    assert errors[1].message.startswith("not valid CSV")
    assert str(errors[2]) == f"{path}:11: not valid CSV: unexpected end of data"


def test_a_csv_with_a_bad_header_is_one_error(tmp_path: Path) -> None:
    cases, errors = read_labels(_write(tmp_path, "h.csv", "id,input,id\na,b,c\n"))
    assert cases == [] and errors[0].line is None and "repeats column(s) id" in errors[0].message
    assert read_labels(_write(tmp_path, "empty.csv", "")) == ([], [])


def test_invalid_values_are_bad_rows_and_unknown_modes_warnings(tmp_path: Path) -> None:
    path = _write(tmp_path, "v.jsonl", "\n".join(json.dumps(r) for r in [
        {"id": "ok", "input": "x", "match_mode": " Exact ", "expected_tools_mode": "ORDERED",
         "expected_tools": ["a", "b"]},
        {"id": "fuzzy", "input": "x", "match_mode": "fuzzy"},
        {"id": "sometimes", "input": "x", "expected_tools": "calculator",
         "expected_tools_mode": "sometimes"},
        {"id": "a", "case_id": "b", "input": "x"},
        {"id": "same", "case_id": "same", "input": "x", "should_decline": "no"},
        {"id": "mode-type", "input": "x", "match_mode": ["exact"]},
        {"input": {"text": "x"}},
    ]) + "\n")
    warnings: list[LabelWarning] = []
    cases, errors = read_labels(path, warnings)
    assert [(c.case_id, c.match_mode, c.expected_tools_mode) for c in cases] == [
        ("ok", "exact", "ordered"), ("fuzzy", "fuzzy", None), ("same", None, None)]
    assert cases[2].should_decline is False
    assert [(w.line, w.message) for w in warnings] == [
        (2, "unknown match_mode 'fuzzy' (known: exact, normalized, contains); scored as "
            "normalized"),
        (3, "unknown expected_tools_mode 'sometimes' (known: any, all, exact, ordered); "
            "scored as all")]
    assert [(e.line, e.message) for e in errors] == [
        (3, "field 'expected_tools' must be a list of strings, got a string "
            "(write [\"calculator\"])"),
        (4, "fields 'id' ('a') and 'case_id' ('b') differ"),
        (6, "field 'match_mode' must be a string, got list"),
        (7, "field 'input' must be a string, got dict"),
    ]


def test_csv_and_parquet_values_are_checked_the_same_way(tmp_path: Path) -> None:
    csv_path = _write(tmp_path, "v.csv", "id,input,expected_tools,expected_tools_mode\n"
                                         "a,x,calculator,all\nb,x,calculator,sometimes\n")
    warnings: list[LabelWarning] = []
    cases, errors = read_labels(csv_path, warnings)
    assert [(c.case_id, c.expected_tools) for c in cases] == [
        ("a", ("calculator",)), ("b", ("calculator",))]
    assert errors == [] and [(w.line, "'sometimes'" in w.message) for w in warnings] == [
        (3, True)]
    parquet = tmp_path / "v.parquet"
    pl.DataFrame({"id": ["a", "b"], "input": ["x", "y"], "match_mode": ["contains", "fuzzy"],
                  "should_decline": ["maybe", None]}).write_parquet(parquet)
    warnings = []
    cases, errors = read_labels(parquet, warnings)
    assert [c.case_id for c in cases] == ["b"] and [e.line for e in errors] == [1]
    assert [w.line for w in warnings] == [2]


def test_an_unknown_field_is_named_once_per_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.jsonl", "\n".join(json.dumps(r) for r in [
        {"id": "a", "input": "x", "expected_tool": ["search"]},
        {"id": "b", "input": "y", "expected_tool": ["search"], "Canary": "z"},
    ]) + "\n")
    warnings: list[LabelWarning] = []
    cases, errors = read_labels(path, warnings)
    assert [c.case_id for c in cases] == ["a", "b"] and errors == []
    assert [(w.line, w.message.split(";")[0]) for w in warnings] == [
        (1, "not label field(s), ignored (here and in the rest of the file): 'expected_tool'"),
        (2, "not label field(s), ignored (here and in the rest of the file): 'Canary'")]


def test_the_modes_accepted_are_the_scorers_modes() -> None:
    from turnscore.scorers import call_accuracy, correctness
    from turnscore.scorers.labels import MODES
    assert MODES == {"match_mode": correctness.MODES,
                     "expected_tools_mode": call_accuracy.MODES}
