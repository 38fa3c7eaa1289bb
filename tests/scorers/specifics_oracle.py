"""A test oracle for `scorers.specifics`: the extraction written with Python's `re` and its
lookarounds, one answer at a time (the row-wise reference the polars extraction replaced).

`test_groundedness.py` holds the shipped extraction to it on text whose characters both
engines read alike (ASCII and Latin letters): there, the lookaround-free rewrite must find
what these patterns find.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from turnscore.scorers.specifics import _MONTH_PREFIXES, _MONTHS, COMMON_WORDS

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


def specifics(answer: str) -> list[tuple[str, str]]:
    """The specifics of `answer` as (kind, text), in extraction order, each once."""
    return list(dict.fromkeys(_extract(answer)))


def _extract(answer: str) -> Iterator[tuple[str, str]]:
    taken = bytearray(len(answer))  # 1 where an earlier specific claimed the character

    def free(m: re.Match[str]) -> bool:
        s, e = m.span()
        if taken.find(1, s, e) != -1:
            return False
        taken[s:e] = b"\x01" * (e - s)
        return True

    for m in _LIST_MARKER.finditer(answer):
        free(m)
    for m in _HEADING.finditer(answer):
        free(m)
    for m in _URL.finditer(answer):
        if free(m):
            yield ("url", m.group().rstrip(".,;:!?"))
    for m in _EMAIL.finditer(answer):
        if free(m):
            yield ("identifier", m.group())
    for m in _QUOTED.finditer(answer):
        inner = next(g for g in m.groups() if g is not None).strip()
        if free(m) and any(ch.isalnum() for ch in inner):
            yield ("quoted", inner)
    for m in _date_matches(answer):
        parts = _date_parts(m)
        if parts is not None and free(m):
            yield ("date", m.group())
    for m in _TIME.finditer(answer):
        if free(m):
            yield ("time", m.group())
    for m in _code_matches(answer):
        if free(m):
            yield ("identifier", m.group())
    for m in _NUMBER.finditer(answer):
        if free(m):
            yield ("number", m.group())
    for m in _NAME_RUN.finditer(answer):
        word = m.group()
        if word.lower() in COMMON_WORDS:  # most runs: one common word ("The", "It")
            continue
        name = _name(answer, m)
        if name and free(m):
            yield ("name", name)


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


def _date_matches(text: str) -> list[re.Match[str]]:
    """Matches of the three date forms, in the order extraction claims them."""
    return [m for pattern in (_ISO_DATE, _MDY, _DMY) for m in pattern.finditer(text)]


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


def _date_parts(m: re.Match[str]) -> tuple[int | None, int, int] | None:
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


