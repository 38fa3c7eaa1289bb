"""Normalisation: exact on ASCII against a plain reference, and its invariants on any text."""

from __future__ import annotations

import re
import unicodedata

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from turnscore.scorers.text import normalize_series, normalize_text


def _ascii_reference(s: str) -> str:
    # Whitespace is Unicode White_Space: \x1c-\x1f are not (Python's str.split thinks so).
    s = re.sub(r"[^a-z0-9 \t\n\r\x0b\x0c]", "", s.lower())
    return " ".join(s.split())


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127)))
def test_ascii_matches_the_reference(s: str) -> None:
    assert normalize_text(s) == _ascii_reference(s)


@given(st.text())
def test_invariants_on_any_text(s: str) -> None:
    out = normalize_text(s)
    assert normalize_text(out) == out
    assert out == " ".join(out.split(" ")) and out == out.strip() and "  " not in out
    for ch in out:
        category = unicodedata.category(ch)
        assert ch == " " or not (category.startswith("P") or category.startswith("Z")), (s, out)
        assert ch == " " or not ch.isspace(), (s, out)


@given(st.lists(st.one_of(st.none(), st.text())))
def test_batch_equals_one_by_one(values: list[str | None]) -> None:
    batch = normalize_series(pl.Series("v", values, dtype=pl.String)).to_list()
    assert batch == [None if v is None else normalize_text(v) for v in values]


def test_examples() -> None:
    assert normalize_text("It's  1,000!\n\tHello_World") == "its 1000 helloworld"
    assert normalize_text("  ÉCOLE — ça, c'est « bien » ") == "école ça cest bien"
    assert normalize_text("!!!") == ""
