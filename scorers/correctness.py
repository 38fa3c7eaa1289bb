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

Matching runs as polars column expressions over the whole batch; the columnar entry
point passes turns without a reference straight through.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from turnscore.ingest.turn import Turn
from turnscore.scorers.base import NO_CASE, Case, Score, cased_columns, columnar, scorer
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
def answer_correctness(turns: Sequence[Turn], cases: Sequence[Case | None]) -> list[Score]:
    return _scores([t.final_answer for t in turns], cases)


@columnar(NAME)
def answer_correctness_columns(turns: pl.DataFrame, cases: Sequence[Case | None]
                               ) -> pl.DataFrame:
    answers = turns.get_column("final_answer")
    return cased_columns(cases, lambda at: _scores(answers.gather(at).to_list(),
                                                   [cases[i] for i in at]))


def _scores(answers: Sequence[str | None], cases: Sequence[Case | None]) -> list[Score]:
    # Only turns with a reference go through polars: normalising every answer of a batch
    # where most turns have no label costs more than the rest of the scorer.
    idx = [i for i, c in enumerate(cases) if c is not None and c.ideal_response is not None]
    scores = [Score.inconclusive(NO_CASE) if c is None
              else Score.inconclusive(f"case {c.case_id!r} has no ideal_response")
              for c in cases]
    for i, score in zip(idx, _matched([answers[i] for i in idx], [cases[i] for i in idx]),
                        strict=True):
        scores[i] = score
    return scores


def _matched(answers: Sequence[str | None], cases: Sequence[Case | None]) -> list[Score]:
    frame = pl.DataFrame(
        {
            "answer": answers,
            "ideal": [c.ideal_response if c else None for c in cases],
            "requested": [c.match_mode if c else None for c in cases],
        },
        schema={"answer": pl.String, "ideal": pl.String, "requested": pl.String},
    )
    requested = pl.col("requested").str.strip_chars().str.to_lowercase()
    answer_norm, ideal_norm = normalize_expr(pl.col("answer")), normalize_expr(pl.col("ideal"))
    frame = frame.with_columns(
        pl.when(requested.is_in(MODES)).then(requested).otherwise(pl.lit(DEFAULT_MODE)).alias("mode"),
        ideal_norm.alias("ideal_norm"),
    ).with_columns(
        pl.when(pl.col("mode") == "exact")
        .then(pl.col("answer").str.strip_chars() == pl.col("ideal").str.strip_chars())
        .when(pl.col("mode") == "contains")
        .then(answer_norm.str.contains(pl.col("ideal_norm"), literal=True))
        .otherwise(answer_norm == pl.col("ideal_norm"))
        .fill_null(False)
        .alias("match")
    )
    scores = []
    for case, row in zip(cases, frame.iter_rows(named=True), strict=True):
        scores.append(_verdict(case, row))
    return scores


def _verdict(case: Case | None, row: dict[str, object]) -> Score:
    if case is None:
        return Score.inconclusive("no labelled case for this turn")
    ideal, mode = row["ideal"], str(row["mode"])
    if ideal is None or not str(ideal).strip():
        return Score.inconclusive(f"case {case.case_id!r} has no ideal_response")
    if mode != "exact" and not row["ideal_norm"]:
        return Score.inconclusive(
            f"case {case.case_id!r}: ideal_response has no words left after normalisation"
        )
    details: dict[str, object] = {"mode": mode, "ideal_response": ideal}
    requested = row["requested"]
    if requested is not None and str(requested).strip() and str(requested).strip().lower() != mode:
        details["requested_mode"] = requested
        details["note"] = (
            f"unknown match_mode {requested!r} (known: {', '.join(MODES)}); used {DEFAULT_MODE}"
        )
    if row["answer"] is None:
        return Score.scored(0.0, "fail", "the turn has no final answer", details)
    if row["match"]:
        return Score.scored(1.0, "pass", f"the answer matches the reference ({mode})", details)
    return Score.scored(0.0, "fail", f"the answer does not match the reference ({mode})", details)
