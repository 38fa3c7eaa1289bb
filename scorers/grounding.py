"""`tool_grounding`: did the final answer carry the canary the tool returns?

A labelled case names one or more canary values that only a tool call can produce. The
turn scores 1.0 when every canary appears in the final answer (case-insensitive
substring), else 0.0 with the missing values named. Present means good: an agent that
guessed, refused or skipped the tool misses the canary. It sees only the answer, never
the calls. No case, or a case without a canary, is `inconclusive`.

The search runs as one polars expression over the batch (canaries exploded to one row
each), not turn by turn; turns without a case are passed straight through.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from turnscore.scorers.base import (
    NO_CASE,
    Case,
    Score,
    Turns,
    cased_columns,
    score_columns,
    scorer,
)

NAME = "tool_grounding"
VERSION = "1"


@scorer(
    name=NAME,
    version=VERSION,
    kind="code",
    reads=("final_answer", "canary"),
    description="1 when every canary value appears in the final answer (case-insensitive), else 0.",
)
def tool_grounding(turns: Turns, cases: Sequence[Case | None]) -> pl.DataFrame:
    answers = turns.frame.get_column("final_answer")
    return cased_columns(cases, lambda at, present: score_columns(
        _scores(answers.gather(at).to_list(), present)))


def _scores(answers: Sequence[str | None], cases: Sequence[Case | None]) -> list[Score]:
    canaries = [_canaries(c) for c in cases]
    rows = [
        (i, answer, canary)
        for i, (answer, cs) in enumerate(zip(answers, canaries, strict=True))
        for canary in cs
    ]
    found: dict[int, list[tuple[str, bool]]] = {}
    if rows:
        frame = pl.DataFrame(
            {
                "row": [r[0] for r in rows],
                "answer": [r[1] for r in rows],
                "canary": [r[2] for r in rows],
            },
            schema={"row": pl.Int64, "answer": pl.String, "canary": pl.String},
        ).with_columns(
            pl.col("answer")
            .str.to_lowercase()
            .str.contains(pl.col("canary").str.to_lowercase(), literal=True)
            .fill_null(False)
            .alias("present")
        )
        for row, canary, present in frame.select("row", "canary", "present").iter_rows():
            found.setdefault(row, []).append((canary, present))

    scores = []
    for i, (answer, case) in enumerate(zip(answers, cases, strict=True)):
        if case is None:
            scores.append(Score.inconclusive(NO_CASE))
        elif i not in found:
            scores.append(Score.inconclusive(f"case {case.case_id!r} has no canary"))
        else:
            scores.append(_verdict(found[i], answer is None))
    return scores


def _canaries(case: Case | None) -> list[str]:
    if case is None or case.canary is None:
        return []
    return [c for c in case.canary if c.strip()]


def _verdict(checks: list[tuple[str, bool]], no_answer: bool) -> Score:
    canaries = [c for c, _ in checks]
    missing = [c for c, present in checks if not present]
    details: dict[str, object] = {"canaries": canaries, "missing": missing}
    if not missing:
        return Score.scored(1.0, "pass", "every canary appears in the final answer", details)
    if no_answer:
        why = "the turn has no final answer"
    else:
        why = "missing from the final answer: " + ", ".join(repr(m) for m in missing)
    return Score.scored(0.0, "fail", why, details)
