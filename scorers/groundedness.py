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

import polars as pl

from turnscore.ingest.turn import Turn
from turnscore.scorers.base import Case, Score, scorer
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
_TIME = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2})?(?![\d:])")
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
    prepared = [_prepare(t) for t in turns]
    # One normalisation call for the whole batch: every source text, every name and quoted
    # value (a polars call per turn costs more than the rest of the scorer).
    texts = sorted({text for p in prepared if p for text in p.to_normalize()})
    normalized = dict(zip(texts, normalize_series(pl.Series("t", texts, dtype=pl.String)),
                          strict=True))
    return [p.score(normalized) if p else Score.not_run("the turn has no final answer")
            for p in prepared]


@dataclass(frozen=True, slots=True)
class _Prepared:
    source_text: str
    specifics: list[Specific]
    outputs: int
    uncaptured: int

    def to_normalize(self) -> Iterator[str]:
        yield self.source_text
        yield from (s.text for s in self.specifics if s.kind in ("name", "quoted"))

    def score(self, normalized: dict[str, str]) -> Score:
        sources = _Sources(self.source_text, normalized)
        unsupported = [s for s in self.specifics if not sources.supports(s)]
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


def _prepare(turn: Turn) -> _Prepared | None:
    if turn.final_answer is None:
        return None
    outputs = [x for c in turn.calls for x in (c.result, c.error) if x]
    return _Prepared(
        source_text="\n".join([turn.request, *outputs]),
        specifics=list(dict.fromkeys(extract_specifics(turn.final_answer))),
        outputs=len(outputs),
        uncaptured=sum(1 for c in turn.calls if c.result is None and c.error is None),
    )


def extract_specifics(answer: str) -> Iterator[Specific]:
    """The specifics of `answer`, in extraction order (see the module docstring)."""
    taken = bytearray(len(answer))  # 1 where an earlier specific claimed the character

    def free(m: re.Match[str]) -> bool:
        s, e = m.span()
        if taken.find(1, s, e) != -1:
            return False
        taken[s:e] = b"\x01" * (e - s)
        return True

    for m in _LIST_MARKER.finditer(answer):
        free(m)
    for m in _matches(_HEADING, answer):
        free(m)
    for m in _URL.finditer(answer):
        if free(m):
            yield Specific("url", m.group().rstrip(".,;:!?"))
    for m in _matches(_EMAIL, answer):
        if free(m):
            yield Specific("identifier", m.group())
    for m in _matches(_QUOTED, answer):
        inner = next(g for g in m.groups() if g is not None).strip()
        if free(m) and any(ch.isalnum() for ch in inner):
            yield Specific("quoted", inner)
    for m in _date_matches(answer):
        parts = _date_parts(m)
        if parts is not None and free(m):
            yield Specific("date", m.group(), parts)
    for m in _matches(_TIME, answer):
        if free(m):
            yield Specific("time", m.group())
    for m in _CODE.finditer(answer):
        if free(m):
            yield Specific("identifier", m.group())
    for m in _NUMBER.finditer(answer):
        if free(m):
            yield Specific("number", m.group())
    for m in _NAME_RUN.finditer(answer):
        name = _name(answer, m)
        if name and free(m):
            yield Specific("name", name)


# A character every match of the pattern contains: text without it skips the scan, which
# for patterns that start with a lookbehind tries every position.
_NEEDLES: dict[re.Pattern[str], tuple[str, ...]] = {
    _HEADING: ("#",), _EMAIL: ("@",), _QUOTED: ('"', "“", "`"), _TIME: (":",),
    _ISO_DATE: ("-",), _MDY: tuple(_MONTH_PREFIXES), _DMY: tuple(_MONTH_PREFIXES),
}


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    if any(needle in text for needle in _NEEDLES[pattern]):
        yield from pattern.finditer(text)


def _date_matches(text: str) -> Iterator[re.Match[str]]:
    """Matches of the three date forms, in the order extraction claims them."""
    for pattern in (_ISO_DATE, _MDY, _DMY):
        yield from _matches(pattern, text)


def _name(answer: str, m: re.Match[str]) -> str | None:
    tokens = [re.sub(r"['’]s$", "", t) for t in m.group().split()]
    dropped = 0
    while tokens and tokens[0].lower() in COMMON_WORDS:
        tokens.pop(0)
        dropped += 1
    while tokens and tokens[-1].lower() in COMMON_WORDS:
        tokens.pop()
    if not tokens or answer[m.end():m.end() + 1] == ":" or len(" ".join(tokens)) < 2:
        return None
    i = m.start() - 1
    while i >= 0 and answer[i] in _OPENERS:
        i -= 1
    sentence_start = dropped == 0 and (i < 0 or answer[i] in ".!?:;\n")
    if sentence_start and len(tokens) == 1:
        return None
    return " ".join(tokens)


class _Sources:
    """The request and tool outputs, indexed for each kind of specific."""

    def __init__(self, text: str, normalized: dict[str, str]) -> None:
        self.lower = " ".join(text.lower().split())
        self.norm = f" {normalized[text]} "
        self.normalized = normalized
        self.numbers = {_decimal(m.group()) for m in _SOURCE_NUMBER.finditer(text)}
        self.times = {(int(m[1]), int(m[2])) for m in _matches(_TIME, text)}
        self.dates: set[tuple[int | None, int, int]] = set()
        for m in _date_matches(text):
            parts = _date_parts(m)
            if parts:
                self.dates.update({parts, (None, parts[1], parts[2])})

    def supports(self, s: Specific) -> bool:
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
            norm = self.normalized.get(s.text, "")
            return bool(norm) and f" {norm} " in self.norm
        return False

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


def _decimal(text: str) -> Decimal:
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
