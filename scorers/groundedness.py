"""`groundedness` (code variant): is every specific in the answer traceable to a source?

Sources are the request and every tool output (results and error messages). Specifics
(URLs, quoted values, dates, times, identifiers, numbers, proper names) are extracted
from the final answer by `turnscore.scorers.specifics`, each span of text counted once.
A specific is supported when a source holds it:

- numbers by value: `1,000` equals `1000`, `18.0` equals `18`, and an answer that rounds
  a source value (`18` or `18.3` for `18.34`) is supported; "18" never matches inside
  "180";
- dates in any of the forms (`2024-03-05` matches `March 5, 2024`); a date without a year
  matches on month and day;
- times by value (`9:30` matches `09:30`);
- everything else case-insensitively in the whitespace-collapsed source text, and names
  and quoted values also in the normalised source text (`scorers.text`).

The value is 1.0 when every specific is supported (label `grounded`), else 0.0
(`ungrounded`) with the unsupported ones listed; the hallucination rate is the share of
scored turns at 0.0. No final answer is `not_run`. When unsupported specifics remain and
some tool output was not captured, the turn is `inconclusive`: the missing output might
hold them.

Blind spot, by design: a claim with no specific token ("the flight is on time") cannot be
checked here and passes; the judge variant checks entailment claim by claim.

Two implementations give the same columns: `groundedness` (row-wise, `_scores`) is the
reference; `groundedness_columns`, the one the runner uses, scores the batch with polars
(`groundedness_batch`) and passes the turns that path sets aside to `_scores`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

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
from turnscore.scorers.groundedness_batch import merge, score_batch
from turnscore.scorers.specifics import (
    DateParts,
    Hits,
    Specific,
    dates_in,
    extract_specifics,
    number_texts_in,
    number_value,
    prefiltered,
    time_value,
    times_in,
)
from turnscore.scorers.text import normalize_series

NAME = "groundedness"
VERSION = "1"


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
    """Vectorised (`groundedness_batch`); the turns it sets aside go through `_scores`."""
    scored, aside = score_batch(turns.get_column("final_answer"), turns.get_column("request"),
                                turns.get_column("calls"))
    rest = turns[aside]
    calls = nested_records(rest.get_column("calls"), ("result", "error"), _pair)
    reference = score_columns(_scores(rest.get_column("final_answer").to_list(),
                                      rest.get_column("request").to_list(), calls))
    return merge(scored, aside, reference)


def _pair(result: str | None, error: str | None) -> tuple[str | None, str | None]:
    return result, error


def _scores(answers: Sequence[str | None], requests: Sequence[str],
            calls: Sequence[Sequence[tuple[str | None, str | None]]]) -> list[Score]:
    """Per turn: its final answer, request, and each call's (result, error)."""
    outputs = [[x for pair in c for x in pair if x] for c in calls]
    sources = ["\n".join([r, *o]) for r, o in zip(requests, outputs, strict=True)]
    hits = prefiltered([a or "" for a in answers] + sources)
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
    source_hits: Hits

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


class _Sources:
    """The request and tool outputs, indexed for each kind of specific.

    Each index is built on first use: most specifics are found verbatim in `lower`.
    """

    # Plain lazy attributes, not `functools.cached_property`: on Python 3.11 each of its
    # reads takes a lock, which showed in profiles at one `_Sources` per turn.
    __slots__ = ("_dates", "_number_texts", "_numbers", "_padded", "_times", "hits", "lower",
                 "text")

    def __init__(self, text: str, hits: Hits) -> None:
        self.text = text
        self.hits = hits
        self.lower = " ".join(text.lower().split())
        self._number_texts: set[str] | None = None
        self._numbers: set[Decimal] | None = None
        self._times: set[tuple[int, int]] | None = None
        self._dates: set[DateParts] | None = None
        self._padded: str | None = None

    @property
    def number_texts(self) -> set[str]:
        if self._number_texts is None:
            self._number_texts = number_texts_in(self.text)
        return self._number_texts

    @property
    def numbers(self) -> set[Decimal]:
        if self._numbers is None:
            self._numbers = set(map(number_value, self.number_texts))
        return self._numbers

    @property
    def times(self) -> set[tuple[int, int]]:
        if self._times is None:
            self._times = set(times_in(self.text, self.hits))
        return self._times

    @property
    def dates(self) -> set[DateParts]:
        if self._dates is None:
            self._dates = set()
            for parts in dates_in(self.text, self.hits):
                self._dates.update({parts, (None, parts[1], parts[2])})
        return self._dates

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
            value = time_value(s.text)
            return value is not None and value in self.times
        if s.kind in ("name", "quoted"):
            return None
        return False

    def supports_normalized(self, s: Specific, normalized: dict[str, str]) -> bool:
        """A name or quoted value against the normalised sources (`normalized` maps each
        text to its normalised form)."""
        norm = normalized.get(s.text, "")
        if not norm:
            return False
        if self._padded is None:  # once per turn, not per specific: sources are long
            self._padded = f" {normalized[self.text]} "
        return f" {norm} " in self._padded

    def _number(self, text: str) -> bool:
        if text in self.number_texts:  # the same text, so the same value (most numbers)
            return True
        value = number_value(text)
        numbers = self.numbers
        if value in numbers:  # equal Decimals hash alike: `18.0` finds `18`
            return True
        exponent = value.as_tuple().exponent
        exponent = exponent if isinstance(exponent, int) else 0
        places = Decimal(1).scaleb(exponent)
        # Only a source number with more decimal places than `value` can round to it:
        # quantizing one with as many or fewer is exact, and equal values were found above.
        return any(_rounds_to(n, places, value) for n in numbers
                   if _finer(n, exponent))


def _finer(n: Decimal, exponent: int) -> bool:
    """Whether `n` has more decimal places than a value of `exponent`."""
    e = n.as_tuple().exponent
    return not isinstance(e, int) or e < exponent


def _rounds_to(n: Decimal, places: Decimal, value: Decimal) -> bool:
    try:
        return n.quantize(places, ROUND_HALF_UP) == value
    except InvalidOperation:  # too many digits for the context: not a rounding of `value`
        return False


