"""`groundedness` (code variant): is every specific in the answer traceable to a source?

Sources are the request and every tool output (results and error messages). Specifics
are extracted from the final answer, each span of text counted once, in this order:

- URLs and e-mail addresses;
- quoted values ("...", “...”, `...`), checked as a whole;
- dates: ISO (`2024-03-05`) and written (`March 5, 2024`, `5 March`); a date matches a
  source date in any of these forms, a date without a year matches on month and day;
- times (`9:30` matches `09:30`) and identifiers mixing letters and digits (`ORD-1234`);
- numbers: `1,000` equals `1000`, `18.0` equals `18`, and an answer that rounds a source
  value (`18` or `18.3` for `18.34`) is supported; signs are ignored; list markers
  (`1.` at a line start) and ordinals (`3rd`) are not specifics;
- proper names: runs of capitalised words, minus leading common words ("The", "In",
  weekdays, months...). A lone capitalised word that starts a sentence is not taken as a
  name (it is just capitalised); a run of two or more is ("New York is..."). Labels
  followed by a colon and markdown headings are skipped.

Text specifics match case-insensitively in the collapsed or normalised source text.
The value is 1.0 when every specific is supported (label `grounded`), else 0.0
(`ungrounded`) with the unsupported ones listed; the hallucination rate is the share of
scored turns at 0.0. No final answer is `not_run`. When unsupported specifics remain and
some tool output was not captured, the turn is `inconclusive`: the missing output might
hold them.

Blind spot, by design: a claim with no specific token ("the flight is on time") cannot be
checked here and passes; the judge variant checks entailment claim by claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import cached_property, lru_cache

import polars as pl

from turnscore.ingest.turn import Turn
from turnscore.scorers.base import (
    Case,
    Score,
    columnar,
    nested_records,
    score_columns,
    scorer,
)
from turnscore.scorers.text import normalize_series

NAME = "groundedness"
VERSION = "1"

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
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
_MDY = re.compile(rf"\b({_MONTH}) (\d{{1,2}}){_ORD}\b(?:,? (\d{{4}})\b)?")
_DMY = re.compile(rf"\b(\d{{1,2}}){_ORD} ({_MONTH})(?:,? (\d{{4}})\b)?")
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
    """'url', 'identifier', 'quoted', 'date', 'number' or 'name'."""
    text: str
    date: tuple[int | None, int, int] | None = None
    """(year or None, month, day) for dates."""


@scorer(
    name=NAME,
    version=VERSION,
    kind="code",
    reads=("final_answer", "calls", "request"),
    description="1 when every specific in the answer (numbers, dates, names, quoted values, URLs) "
                "appears in a tool result or the request, else 0.",
)
def groundedness(turns: Sequence[Turn], cases: Sequence[Case | None]) -> list[Score]:
    return _scores([t.final_answer for t in turns], [t.request for t in turns],
                   [[(c.result, c.error) for c in t.calls] for t in turns])


@columnar(NAME)
def groundedness_columns(turns: pl.DataFrame, cases: Sequence[Case | None]) -> pl.DataFrame:
    calls = nested_records(turns.get_column("calls"), ("result", "error"), _pair)
    return score_columns(_scores(turns.get_column("final_answer").to_list(),
                                 turns.get_column("request").to_list(), calls))


def _pair(result: str | None, error: str | None) -> tuple[str | None, str | None]:
    return result, error


def _scores(answers: Sequence[str | None], requests: Sequence[str],
            calls: Sequence[Sequence[tuple[str | None, str | None]]]) -> list[Score]:
    """Per turn: its final answer, request, and each call's (result, error)."""
    outputs = [[x for pair in c for x in pair if x] for c in calls]
    sources = ["\n".join([r, *o]) for r, o in zip(requests, outputs, strict=True)]
    hits = _prefiltered([a or "" for a in answers] + sources)
    n = len(answers)
    prepared = [
        None if answer is None else _Prepared(
            source_text=sources[i],
            specifics=list(dict.fromkeys(extract_specifics(answer, hits[i]))),
            outputs=len(outputs[i]),
            uncaptured=sum(1 for result, error in calls[i] if result is None and error is None),
            source_hits=hits[n + i],
        )
        for i, answer in enumerate(answers)
    ]
    indexes = [None if p is None else _Sources(p.source_text, p.source_hits) for p in prepared]
    supported = [[] if p is None or src is None else [src.supports(s) for s in p.specifics]
                 for p, src in zip(prepared, indexes, strict=True)]
    # Names and quoted values not found verbatim are looked for in the normalised sources:
    # one normalisation call for the whole batch, over only the texts that need it (a
    # polars call per turn costs more than the rest of the scorer).
    texts = sorted({text for p, found in zip(prepared, supported, strict=True) if p
                    for text in p.to_normalize(found)})
    normalized = dict(zip(texts, normalize_series(pl.Series("t", texts, dtype=pl.String)),
                          strict=True))
    scores = []
    for p, src, found in zip(prepared, indexes, supported, strict=True):
        if p is None or src is None:
            scores.append(Score.not_run("the turn has no final answer"))
            continue
        verdicts = [src.supports_normalized(s, normalized) if ok is None else ok
                    for s, ok in zip(p.specifics, found, strict=True)]
        scores.append(p.score(verdicts))
    return scores


@dataclass(frozen=True, slots=True)
class _Prepared:
    source_text: str
    specifics: list[Specific]
    outputs: int
    uncaptured: int
    source_hits: frozenset[re.Pattern[str]]

    def to_normalize(self, found: list[bool | None]) -> Iterator[str]:
        """The texts to normalise: the specifics `_Sources.supports` could not settle and,
        when there are any, the source text."""
        pending = [s.text for s, ok in zip(self.specifics, found, strict=True) if ok is None]
        if pending:
            yield self.source_text
            yield from pending

    def score(self, supported: list[bool]) -> Score:
        """The verdict, given whether each specific is supported."""
        unsupported = [s for s, ok in zip(self.specifics, supported, strict=True) if not ok]
        details: dict[str, object] = {
            "specifics": len(self.specifics),
            "unsupported": [{"kind": s.kind, "text": s.text} for s in unsupported],
            "tool_outputs": self.outputs,
        }
        if not unsupported:
            why = (f"all {len(self.specifics)} specifics traced to the request or tool output"
                   if self.specifics else "no checkable specifics in the answer")
            return Score.scored(1.0, "grounded", why, details)
        listed = ", ".join(f"{s.kind} {s.text!r}" for s in unsupported)
        if self.uncaptured:
            details["uncaptured_outputs"] = self.uncaptured
            return Score.inconclusive(f"{self.uncaptured} tool output(s) not captured; "
                                      f"cannot trace: {listed}", details=details)
        return Score.scored(0.0, "ungrounded", f"not in the request or any tool output: {listed}",
                            details)


def extract_specifics(answer: str, hits: frozenset[re.Pattern[str]] | None = None
                      ) -> Iterator[Specific]:
    """The specifics of `answer`, in extraction order (see the module docstring).

    `hits`: the prefiltered patterns that can match in `answer` (`_prefiltered`), when
    the caller checked a whole batch at once.
    """
    if hits is None:
        hits = _prefiltered([answer])[0]
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


def _prefiltered(texts: Sequence[str]) -> list[frozenset[re.Pattern[str]]]:
    """Per text, the patterns whose prefilter hit (see `_PREFILTERS`)."""
    if not texts:
        return []
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.String}).select(
        pl.col("t").str.contains(rx).alias(str(i)) for i, rx in enumerate(_PREFILTERS.values())
    )
    return [frozenset(p for p, hit in zip(_PREFILTERED, row, strict=True) if hit)
            for row in frame.iter_rows()]


def _matches(pattern: re.Pattern[str], text: str, hits: frozenset[re.Pattern[str]]
             ) -> Iterator[re.Match[str]]:
    if pattern in hits:
        yield from pattern.finditer(text)


_DIGIT_ON = re.compile(r"\d[\w-]*")


def _code_matches(text: str) -> Iterator[re.Match[str]]:
    """`_CODE.finditer(text)`, scanning only the runs of word characters and hyphens that
    hold a digit: a match and its lookahead lie inside one such run, and the lookahead,
    tried at every word start, is most of the scan's cost. A run ends at a character
    that is neither a word character nor a hyphen, so `\b` at `endpos` holds exactly
    where it does in the whole text."""
    for digit in _DIGIT_ON.finditer(text):
        start = digit.start()
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-"):
            start -= 1  # `\w` is `str.isalnum()` or the underscore
        yield from _CODE.finditer(text, start, digit.end())


def _date_matches(text: str, hits: frozenset[re.Pattern[str]]) -> Iterator[re.Match[str]]:
    """Matches of the three date forms, in the order extraction claims them."""
    for pattern in (_ISO_DATE, _MDY, _DMY):
        yield from _matches(pattern, text, hits)


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


class _Sources:
    """The request and tool outputs, indexed for each kind of specific.

    Each index is built on first use: most specifics are found verbatim in `lower`.
    """

    def __init__(self, text: str, hits: frozenset[re.Pattern[str]]) -> None:
        self.text = text
        self.hits = hits
        self.lower = " ".join(text.lower().split())

    @cached_property
    def numbers(self) -> set[Decimal]:
        return {_decimal(m.group()) for m in _SOURCE_NUMBER.finditer(self.text)}

    @cached_property
    def times(self) -> set[tuple[int, int]]:
        return {(int(m[1]), int(m[2])) for m in _matches(_TIME, self.text, self.hits)}

    @cached_property
    def dates(self) -> set[tuple[int | None, int, int]]:
        dates: set[tuple[int | None, int, int]] = set()
        for m in _date_matches(self.text, self.hits):
            parts = _date_parts(m)
            if parts:
                dates.update({parts, (None, parts[1], parts[2])})
        return dates

    def supports(self, s: Specific) -> bool | None:
        """Whether `s` is supported; None for a name or quoted value that is not found
        verbatim: `supports_normalized` then settles it."""
        if s.kind == "number":
            return self._number(s.text)
        # Numbers are compared as values only: "18" must not match inside "180".
        if " ".join(s.text.lower().split()) in self.lower:
            return True
        if s.kind == "date":
            return s.date in self.dates
        if s.kind == "time":
            m = _TIME.fullmatch(s.text)
            return m is not None and (int(m[1]), int(m[2])) in self.times
        if s.kind in ("name", "quoted"):
            return None
        return False

    def supports_normalized(self, s: Specific, normalized: dict[str, str]) -> bool:
        """A name or quoted value against the normalised sources (`normalized` maps each
        text to its normalised form)."""
        norm = normalized.get(s.text, "")
        return bool(norm) and f" {norm} " in f" {normalized[self.text]} "

    def _number(self, text: str) -> bool:
        value = _decimal(text)
        exponent = value.as_tuple().exponent
        places = Decimal(1).scaleb(exponent if isinstance(exponent, int) else 0)
        return any(n == value or _rounds_to(n, places, value) for n in self.numbers)


def _rounds_to(n: Decimal, places: Decimal, value: Decimal) -> bool:
    try:
        return n.quantize(places, ROUND_HALF_UP) == value
    except InvalidOperation:  # too many digits for the context: not a rounding of `value`
        return False


@lru_cache(maxsize=65_536)
def _decimal(text: str) -> Decimal:
    """The value of a number's text; cached, as the same numbers recur across turns."""
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return Decimal(-1)


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
