"""`answer_correctness`: does the final answer match the case's reference answer?

Modes (label `match_mode`):
- `exact`: equal after trimming surrounding whitespace;
- `normalized` (the default): equal after `turnscore.scorers.text` normalisation
  (lowercase, punctuation removed, whitespace collapsed);
- `contains`: the normalised reference appears inside the normalised answer.

An unknown mode falls back to `normalized` and says so in details. No case, or no
`ideal_response`, is `inconclusive`; so is a reference with no words left after
normalisation in the normalised modes, since it would match anything. A turn with no
final answer scores 0.0.

Matching runs as polars column expressions, over the turns with a reference only; the
verdicts of the others are filled in as whole columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import polars as pl

from turnscore.scorers.base import (
    SCORE_COLUMNS,
    Case,
    Status,
    Turns,
    cased_columns,
    details_json,
    scorer,
)
from turnscore.scorers.text import normalize_expr

NAME = "answer_correctness"
VERSION = "1"
MODES = ("exact", "normalized", "contains")
DEFAULT_MODE = "normalized"


@scorer(
    name=NAME,
    version=VERSION,
    kind="code",
    reads=("final_answer", "ideal_response", "match_mode"),
    description="The final answer against the case's ideal_response "
                "(exact, normalized or contains).",
)
def answer_correctness(turns: Turns, cases: Sequence[Case | None]) -> pl.DataFrame:
    def score(at: list[int], present: list[Case]) -> pl.DataFrame:
        found = _verdicts(turns.frame.get_column("final_answer").gather(at), present)
        return pl.DataFrame(
            {"status": [str(v.status) for v in found], "value": [v.value for v in found],
             "label": [v.label for v in found], "explanation": [v.explanation for v in found],
             "details": [details_json(v.details) for v in found]},
            schema=SCORE_COLUMNS)

    return cased_columns(cases, score)


class _Verdict(NamedTuple):
    """A `Score`'s fields, without the object: they are written as columns."""

    status: Status
    value: float | None
    label: str | None
    explanation: str
    details: dict[str, object]


def _inconclusive(why: str) -> _Verdict:
    return _Verdict(Status.INCONCLUSIVE, None, None, why, {})


def _verdicts(answers: pl.Series, cases: Sequence[Case]) -> list[_Verdict]:
    """The verdicts on turns with a case (`answers`: their final answers)."""
    idx = [i for i, c in enumerate(cases) if c.ideal_response is not None]
    if len(idx) == len(cases):
        return _matched(answers, cases)
    out = [_no_reference(c) for c in cases]
    for i, verdict in zip(idx, _matched(answers.gather(idx), [cases[i] for i in idx]),
                          strict=True):
        out[i] = verdict
    return out


def _matched(answers: pl.Series, cases: Sequence[Case]) -> list[_Verdict]:
    """The verdicts on turns whose case has an `ideal_response`."""
    frame = pl.DataFrame(
        {
            "answer": answers,
            "ideal": [c.ideal_response for c in cases],
            "requested": [c.match_mode for c in cases],
        },
        schema={"answer": pl.String, "ideal": pl.String, "requested": pl.String},
    )
    requested = pl.col("requested").str.strip_chars().str.to_lowercase()
    frame = frame.with_columns(
        pl.when(requested.is_in(MODES)).then(requested).otherwise(pl.lit(DEFAULT_MODE)).alias("mode"),
        normalize_expr(pl.col("ideal")).alias("ideal_norm"),
    ).with_row_index("i")
    mode, answer, ideal, ideal_norm = (pl.col("mode"), pl.col("answer"), pl.col("ideal"),
                                       pl.col("ideal_norm"))
    exact = frame.filter(mode == "exact").filter(
        (answer.str.strip_chars() == ideal.str.strip_chars()).fill_null(False))
    # Normalising the answers costs most of the scorer: it is done only where a normalised
    # mode compares them with a reference that has words left.
    normalized = (
        frame.filter(mode != "exact", answer.is_not_null(), ideal_norm != "")
        .with_columns(normalize_expr(answer).alias("answer_norm"))
        .filter(pl.when(mode == "contains")
                .then(pl.col("answer_norm").str.contains(ideal_norm, literal=True))
                .otherwise(pl.col("answer_norm") == ideal_norm)
                .fill_null(False))
    )
    match = [False] * frame.height
    for found in (exact, normalized):
        for i in found.get_column("i").to_list():
            match[i] = True
    # The answers' texts stay in polars: a verdict only asks whether there is one.
    rows = frame.select(answer.is_null(), ideal, "requested", mode,
                        ideal_norm.is_null() | (ideal_norm == "")).iter_rows()
    return [_verdict(case, no_answer, ideal_text, requested_mode, mode_used, no_words, hit)
            for case, (no_answer, ideal_text, requested_mode, mode_used, no_words), hit
            in zip(cases, rows, match, strict=True)]


def _no_reference(case: Case) -> _Verdict:
    return _inconclusive(f"case {case.case_id!r} has no ideal_response")


def _verdict(case: Case, no_answer: bool, ideal: str | None, requested: str | None,
             mode: str, no_words: bool, match: bool) -> _Verdict:
    if ideal is None or not ideal.strip():
        return _no_reference(case)
    if mode != "exact" and no_words:
        return _inconclusive(
            f"case {case.case_id!r}: ideal_response has no words left after normalisation"
        )
    details: dict[str, object] = {"mode": mode, "ideal_response": ideal}
    if requested is not None and requested.strip() and requested.strip().lower() != mode:
        details["requested_mode"] = requested
        details["note"] = (
            f"unknown match_mode {requested!r} (known: {', '.join(MODES)}); used {DEFAULT_MODE}"
        )
    if no_answer:
        return _Verdict(Status.SCORED, 0.0, "fail", "the turn has no final answer", details)
    if match:
        return _Verdict(Status.SCORED, 1.0, "pass", f"the answer matches the reference ({mode})",
                        details)
    return _Verdict(Status.SCORED, 0.0, "fail",
                    f"the answer does not match the reference ({mode})", details)
