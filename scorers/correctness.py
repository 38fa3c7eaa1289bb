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

import polars as pl

from turnscore.scorers.base import (
    NO_DETAILS,
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
        return _scored(turns.frame.get_column("final_answer").gather(at), present)

    return cased_columns(cases, score)


_CASE_SCHEMA = {"ideal": pl.String, "mode": pl.String, "skip": pl.String,
                "no_words": pl.String, "details": pl.String}


def _scored(answers: pl.Series, cases: Sequence[Case]) -> pl.DataFrame:
    """The score columns of turns with a case (`answers`: their final answers).

    What a verdict says of its case (the mode, the details, an inconclusive reason) is
    the same for every turn of the case, so it is written once per distinct case
    (`_case_terms`); per turn, only the match is computed, as columns."""
    position: dict[int, int] = {}
    distinct: list[Case] = []
    for case in cases:
        if id(case) not in position:
            position[id(case)] = len(distinct)
            distinct.append(case)
    terms = pl.DataFrame([_case_terms(c) for c in distinct], schema=_CASE_SCHEMA,
                         orient="row")
    terms = terms.with_columns(ideal_norm=normalize_expr(pl.col("ideal")))
    no_words = pl.col("ideal_norm").is_null() | (pl.col("ideal_norm") == "")
    terms = terms.with_columns(
        skip=pl.when(pl.col("skip").is_null() & (pl.col("mode") != "exact") & no_words)
        .then(pl.col("no_words")).otherwise(pl.col("skip")))
    frame = pl.DataFrame({"answer": answers,
                          "k": pl.Series([position[id(c)] for c in cases], dtype=pl.UInt32)})
    frame = frame.join(terms.with_row_index("k"), on="k", how="left", maintain_order="left")
    mode, answer, ideal, ideal_norm = (pl.col("mode"), pl.col("answer"), pl.col("ideal"),
                                       pl.col("ideal_norm"))
    # Normalising the answers costs most of the scorer: it is done only where a normalised
    # mode compares them with a reference that has words left.
    compared = pl.col("skip").is_null() & answer.is_not_null()
    normalised = compared & (mode != "exact")
    frame = frame.with_columns(
        answer_norm=pl.when(normalised).then(normalize_expr(answer)))
    match = (pl.when(mode == "exact")
             .then(answer.str.strip_chars() == ideal.str.strip_chars())
             .when(mode == "contains")
             .then(pl.col("answer_norm").str.contains(ideal_norm, literal=True))
             .otherwise(pl.col("answer_norm") == ideal_norm)).fill_null(False)
    skip, no_answer = pl.col("skip").is_not_null(), answer.is_null()
    return frame.select(
        status=pl.when(skip).then(pl.lit(Status.INCONCLUSIVE.value))
        .otherwise(pl.lit(Status.SCORED.value)),
        value=pl.when(skip).then(None).when(~no_answer & match).then(1.0).otherwise(0.0)
        .cast(pl.Float64),
        label=pl.when(skip).then(None).when(~no_answer & match).then(pl.lit("pass"))
        .otherwise(pl.lit("fail")).cast(pl.String),
        explanation=pl.when(skip).then(pl.col("skip"))
        .when(no_answer).then(pl.lit("the turn has no final answer"))
        .when(match).then(pl.lit("the answer matches the reference (") + mode + pl.lit(")"))
        .otherwise(pl.lit("the answer does not match the reference (") + mode + pl.lit(")")),
        details=pl.when(skip).then(pl.lit(NO_DETAILS)).otherwise(pl.col("details")),
    ).cast(SCORE_COLUMNS)  # type: ignore[arg-type]


def _case_terms(case: Case) -> tuple[str | None, str, str | None, str, str | None]:
    """(ideal, mode, why the turns of `case` are inconclusive whatever their answer
    (None: they are not), why they are when its ideal_response has no words left after
    normalisation, their details) as `_scored` reads them. Whether it has words is found
    there, in polars: the one normalisation."""
    ideal = case.ideal_response
    no_words = f"case {case.case_id!r}: ideal_response has no words left after normalisation"
    if ideal is None or not ideal.strip():
        return (None, DEFAULT_MODE, f"case {case.case_id!r} has no ideal_response", no_words,
                None)
    requested = case.match_mode
    asked = requested.strip().lower() if requested is not None else None
    mode = asked if asked in MODES else DEFAULT_MODE
    details: dict[str, object] = {"mode": mode, "ideal_response": ideal}
    if requested is not None and requested.strip() and requested.strip().lower() != mode:
        details["requested_mode"] = requested
        details["note"] = (
            f"unknown match_mode {requested!r} (known: {', '.join(MODES)}); used {DEFAULT_MODE}"
        )
    return ideal, mode, None, no_words, details_json(details)
