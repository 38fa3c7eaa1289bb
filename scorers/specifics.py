"""Specifics: the checkable tokens of a text (numbers, dates, names, quoted values, URLs...).

The groundedness scorer extracts them from a final answer and looks for each in the
sources. Each span of the answer is counted once, in this order:

- URLs and e-mail addresses;
- quoted values ("...", “...”, `...`), taken as a whole;
- dates: ISO (`2024-03-05`) and written (`March 5, 2024`, `5 March`), parsed to
  (year or None, month, day); a match that is not a real date is skipped;
- times (`9:30`) and identifiers mixing letters and digits (`ORD-1234`);
- numbers (`1,000`, `18.34`); signs are not part of a number; list markers (`1.` at a
  line start) and ordinals (`3rd`) are not specifics;
- proper names: runs of capitalised words, minus leading and trailing common words
  ("The", "In", weekdays, months...). A lone capitalised word that starts a sentence is
  not taken as a name (it is just capitalised); a run of two or more is ("New York
  is..."). Labels followed by a colon and markdown headings are skipped.

Sources are searched with the same patterns (`times_in`, `dates_in`) plus a looser one
for numbers (`numbers_in`: every number, list markers and ordinals included).

Most patterns would try every position of every text; a vectorised polars pass over a
whole batch first tells which patterns can match in which text (`prefiltered`), and `re`
runs only there.

These patterns are the reference: `groundedness_batch` rewrites them for the Rust regex
engine (no lookaround) to score whole batches in polars. Change one here, change it there
(the property tests in `tests/scorers/test_groundedness.py` compare the two).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import TypeAlias

import polars as pl

Hits: TypeAlias = frozenset[re.Pattern[str]]
"""The patterns whose prefilter hit in a text (`prefiltered`)."""
DateParts: TypeAlias = tuple[int | None, int, int]
"""(year or None, month, day)."""

_MONTHS = {m: i + 1 for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"))}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_PREFIXES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                   "Dec")
_MONTH = rf"(?:{'|'.join(_MONTH_PREFIXES)}|Sept)[a-z]*"
_ORD = r"(?:st|nd|rd|th)?"

_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
# Anchored at a token start: unanchored, a long token without "@" is quadratic.
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_CODE = re.compile(r"\b(?=[A-Za-z][\w-]*\d)[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*\b")
_QUOTED = re.compile(r"\"([^\"\n]{1,80})\"|“([^”\n]{1,80})”|`([^`\n]{1,80})`")
# The date patterns are `\b(\d{4})-...`, `\b({_MONTH}) ...` and `\b(\d{1,2})...` with the
# `\b` moved behind the first characters as a lookbehind (as in `_NUMBER` below): a
# pattern that starts with a character class or literals lets `re` skip ahead to where it
# can start instead of testing `\b` at every position (2-5x faster, same matches). A
# month's first three letters are word characters, so `(?<!\w{4})` after them is `\b`
# before them; "Sept" is "Sep" followed by `[a-z]*`.
_ISO_DATE = re.compile(r"(\d(?<!\w\d)\d{3})-(\d{1,2})-(\d{1,2})(?!\d)")
_MDY = re.compile(rf"((?:{'|'.join(_MONTH_PREFIXES)})(?<!\w{{4}})[a-z]*) (\d{{1,2}}){_ORD}\b"
                  rf"(?:,? (\d{{4}})\b)?")
_DMY = re.compile(rf"(\d(?<!\w\d)\d?){_ORD} ({_MONTH})(?:,? (\d{{4}})\b)?")
# `\d(?<![\d:]\d)` is `(?<![\d:])\d`, digit first (see `_NUMBER` below).
_TIME = re.compile(r"(\d(?<![\d:]\d)\d?):(\d{2})(?::\d{2})?(?![\d:])")
_LIST_MARKER = re.compile(r"(?m)^[ \t]*\d+[.)](?=\s)")
_HEADING = re.compile(r"(?m)^[ \t]*#+ .*$")
# `\d(?<![\w.]\d)` is `(?<![\w.])\d` with the digit first, so the engine jumps from digit
# to digit instead of trying the lookbehind at every character (4x faster, same matches).
_NUMBER = re.compile(r"\d(?<![\w.]\d)\d{0,2}(?:,\d{3})+(?:\.\d+)?(?!\d)"
                     r"|\d(?<![\w.,]\d)\d*(?:\.\d+)?(?![\d]|st\b|nd\b|rd\b|th\b)")
_SOURCE_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?")
_NAME_RUN = re.compile(r"[A-Z][\w'’-]*(?:[ \t]+(?:(?:of|de|la|van|von|der|da|di|du)[ \t]+)?"
                       r"[A-Z][\w'’-]*)*")
_OPENERS = " \t*_#>-\"“(["
_POSSESSIVE = ("'s", "’s")

COMMON_WORDS = frozenset({
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "i", "we", "you", "he",
    "she", "they", "my", "our", "your", "their", "his", "her", "me", "us", "in", "on", "at",
    "for", "from", "to", "with", "by", "of", "and", "but", "or", "if", "when", "while", "as",
    "so", "yes", "no", "not", "here", "there", "today", "tomorrow", "yesterday", "please",
    "note", "sure", "hello", "hi", "hey", "thanks", "thank", "unfortunately", "however",
    "also", "currently", "based", "according", "let", "what", "which", "who", "where", "how",
    "why", "is", "are", "was", "were", "will", "would", "can", "could", "should", "do", "does",
    "did", "all", "some", "any", "each", "every", "one", "two", "three", "first", "next",
    "then", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "ok", "okay", "celsius", "fahrenheit", "utc", "gmt",
    "am", "pm", "summary", "answer", "result", "results",
})


@dataclass(frozen=True, slots=True)
class Specific:
    kind: str
    """'url', 'identifier', 'quoted', 'date', 'time', 'number' or 'name'."""
    text: str
    date: DateParts | None = None
    """(year or None, month, day) for dates."""


def extract_specifics(answer: str, hits: Hits | None = None) -> Iterator[Specific]:
    """The specifics of `answer`, in extraction order (see the module docstring).

    `hits`: the patterns that can match in `answer` (`prefiltered`), when the caller
    checked a whole batch at once.
    """
    if hits is None:
        hits = prefiltered([answer])[0]
    taken = bytearray(len(answer))  # 1 where an earlier specific claimed the character

    def free(m: re.Match[str]) -> bool:
        s, e = m.span()
        if taken.find(1, s, e) != -1:
            return False
        taken[s:e] = b"\x01" * (e - s)
        return True

    for m in _matches(_LIST_MARKER, answer, hits):
        free(m)
    for m in _matches(_HEADING, answer, hits):
        free(m)
    for m in _URL.finditer(answer):
        if free(m):
            yield Specific("url", m.group().rstrip(".,;:!?"))
    for m in _matches(_EMAIL, answer, hits):
        if free(m):
            yield Specific("identifier", m.group())
    for m in _matches(_QUOTED, answer, hits):
        inner = next(g for g in m.groups() if g is not None).strip()
        if free(m) and any(ch.isalnum() for ch in inner):
            yield Specific("quoted", inner)
    for m in _date_matches(answer, hits):
        parts = _date_parts(m)
        if parts is not None and free(m):
            yield Specific("date", m.group(), parts)
    for m in _matches(_TIME, answer, hits):
        if free(m):
            yield Specific("time", m.group())
    for m in _code_matches(answer):
        if free(m):
            yield Specific("identifier", m.group())
    for m in _NUMBER.finditer(answer):
        if free(m):
            yield Specific("number", m.group())
    for m in _NAME_RUN.finditer(answer):
        word = m.group()
        if word.lower() in COMMON_WORDS:  # most runs: one common word ("The", "It")
            continue
        name = _name(answer, m)
        if name and free(m):
            yield Specific("name", name)


# Prefilters: for each pattern, a Rust regex (polars has no lookaround) that matches
# wherever the pattern can, i.e. a superset. A batch's answers and source texts are
# checked against all of them in one vectorised pass, and `re`, which for most of these
# patterns tries every position of the text, runs only where its prefilter hit. Only
# literals, ASCII classes and `\d` (Unicode digits in both engines) are used, so the
# prefilter never misses what the pattern finds.
_PREFILTERS: dict[re.Pattern[str], str] = {
    _LIST_MARKER: r"(?m)^[ \t]*\d+[.)]",
    _HEADING: r"(?m)^[ \t]*#+ ",
    _EMAIL: "@",
    _QUOTED: "[\"“`]",
    _ISO_DATE: r"\d{4}-\d{1,2}-\d{1,2}",
    _MDY: rf"(?:{'|'.join(_MONTH_PREFIXES)})[a-z]* \d",
    _DMY: rf"\d(?:st|nd|rd|th)? (?:{'|'.join(_MONTH_PREFIXES)})",
    _TIME: r"\d:\d\d",
}
_PREFILTERED = tuple(_PREFILTERS)


def prefiltered(texts: Sequence[str]) -> list[Hits]:
    """Per text, the patterns whose prefilter hit (see `_PREFILTERS`)."""
    if not texts:
        return []
    # One bit per prefilter, so that Python sees one integer per text, and one frozenset
    # per distinct combination.
    masks = pl.Series("t", texts, dtype=pl.String).to_frame().select(pl.sum_horizontal(
        pl.col("t").str.contains(rx).cast(pl.Int32) * (1 << i)
        for i, rx in enumerate(_PREFILTERS.values())
    )).to_series()
    sets = {mask: frozenset(p for i, p in enumerate(_PREFILTERED) if mask >> i & 1)
            for mask in masks.unique().to_list()}
    return [sets[mask] for mask in masks.to_list()]


def _matches(pattern: re.Pattern[str], text: str, hits: Hits) -> Iterable[re.Match[str]]:
    # A plain function, not a generator: it runs for every pattern of every text.
    return pattern.finditer(text) if pattern in hits else ()


_DIGIT_ON = re.compile(r"\d[\w-]*")


def _code_matches(text: str) -> Iterator[re.Match[str]]:
    """`_CODE.finditer(text)`, scanning only the runs of word characters and hyphens that
    hold a digit: a match and its lookahead lie inside one such run, and the lookahead,
    tried at every word start, is most of the scan's cost. A run ends at a character
    that is neither a word character nor a hyphen, so `\b` at `endpos` holds exactly
    where it does in the whole text."""
    for digit in _DIGIT_ON.finditer(text):
        start = digit.start()
        prev = text[start - 1] if start else " "
        if digit.group().isdigit() and not (prev.isalnum() or prev in "_-"):
            continue  # a run of digits only (most: prices, years): no ASCII letter to match
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-"):
            start -= 1  # `\w` is `str.isalnum()` or the underscore
        yield from _CODE.finditer(text, start, digit.end())


def _date_matches(text: str, hits: Hits) -> list[re.Match[str]]:
    """Matches of the three date forms, in the order extraction claims them."""
    return [m for pattern in (_ISO_DATE, _MDY, _DMY) if pattern in hits
            for m in pattern.finditer(text)]


def _name(answer: str, m: re.Match[str]) -> str | None:
    tokens = [t[:-2] if t.endswith(_POSSESSIVE) else t for t in m.group().split()]
    dropped = 0
    while tokens and tokens[0].lower() in COMMON_WORDS:
        tokens.pop(0)
        dropped += 1
    while tokens and tokens[-1].lower() in COMMON_WORDS:
        tokens.pop()
    if not tokens or answer[m.end():m.end() + 1] == ":" or len(" ".join(tokens)) < 2:
        return None
    if dropped == 0 and len(tokens) == 1:  # a lone word: is it just a sentence's first?
        i = m.start() - 1
        while i >= 0 and answer[i] in _OPENERS:
            i -= 1
        if i < 0 or answer[i] in ".!?:;\n":
            return None
    return " ".join(tokens)


def _date_parts(m: re.Match[str]) -> DateParts | None:
    """(year or None, month, day) of a date match, or None when it is not a real date."""
    a, b, c = m.groups()
    year: int | None
    month: int | None
    if m.re is _ISO_DATE:
        year, month, day = int(a), int(b), int(c)
    elif m.re is _MDY:
        year, month, day = (int(c) if c else None), _MONTHS.get(a.lower().rstrip(".")), int(b)
    else:
        year, month, day = (int(c) if c else None), _MONTHS.get(b.lower().rstrip(".")), int(a)
    if month is None or not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return year, month, day


def number_texts_in(text: str) -> set[str]:
    """The distinct texts of the numbers in a source text, list markers and ordinals
    included (what is no specific in an answer can still support one); `number_value`
    gives their values."""
    return set(_SOURCE_NUMBER.findall(text))


def times_in(text: str, hits: Hits) -> Iterator[tuple[int, int]]:
    """(hour, minute) of every time in `text`."""
    return ((int(m[1]), int(m[2])) for m in _matches(_TIME, text, hits))


def dates_in(text: str, hits: Hits) -> Iterator[DateParts]:
    """Every real date in `text`, in any of the forms an answer's dates are taken in."""
    for m in _date_matches(text, hits):
        parts = _date_parts(m)
        if parts:
            yield parts


def time_value(text: str) -> tuple[int, int] | None:
    """(hour, minute) of a time specific's text."""
    m = _TIME.fullmatch(text)
    return None if m is None else (int(m[1]), int(m[2]))


@lru_cache(maxsize=65_536)
def number_value(text: str) -> Decimal:
    """The value of a number's text; cached, as the same numbers recur across turns."""
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return Decimal(-1)
