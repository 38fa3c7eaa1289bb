"""`tool_call_accuracy`: did the turn call the tool(s) its case expects?

Label `expected_tools` (tool names) with `expected_tools_mode`:
- `any`: at least one expected tool was called;
- `all` (the default): every expected tool was called, other calls allowed;
- `exact`: the set of called tools equals the expected set;
- `ordered`: the expected tools appear, in order, as a subsequence of the calls.

An unknown mode falls back to `all` and says so in details. A case with
`should_decline = true` and no expected tools expects no calls at all. No case, or a
case with neither expectation, is `inconclusive`. Every requested call counts, whether
or not it succeeded: the question is what the agent chose to call. Only the called
tools' names are read, and only for turns with a case.
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

NAME = "tool_call_accuracy"
VERSION = "1"
MODES = ("any", "all", "exact", "ordered")
DEFAULT_MODE = "all"


@scorer(
    name=NAME,
    version=VERSION,
    kind="code",
    reads=("calls", "expected_tools", "expected_tools_mode", "should_decline"),
    description="Whether the turn called the case's expected tools (any, all, exact, ordered).",
)
def tool_call_accuracy(turns: Turns, cases: Sequence[Case | None]) -> pl.DataFrame:
    def score(at: list[int], present: list[Case]) -> pl.DataFrame:
        names = (turns.frame.get_column("calls").gather(at)
                 .list.eval(pl.element().struct.field("name")).to_list())
        return score_columns([_score(called or [], case)
                              for case, called in zip(present, names, strict=True)])

    return cased_columns(cases, score)


def _score(called: list[str], case: Case | None) -> Score:
    if case is None:
        return Score.inconclusive(NO_CASE)
    expected = [e for e in case.expected_tools or () if e.strip()]
    if not expected:
        if case.should_decline:
            return _expect_no_calls(called)
        return Score.inconclusive(f"case {case.case_id!r} has no expected_tools")

    requested = (case.expected_tools_mode or "").strip().lower()
    mode = requested if requested in MODES else DEFAULT_MODE
    missing = [e for e in dict.fromkeys(expected) if e not in called]
    details: dict[str, object] = {
        "mode": mode, "expected": expected, "called": called, "missing": missing,
    }
    if requested and requested != mode:
        details["requested_mode"] = case.expected_tools_mode
        details["note"] = (
            f"unknown expected_tools_mode {case.expected_tools_mode!r} "
            f"(known: {', '.join(MODES)}); used {DEFAULT_MODE}"
        )

    if mode == "any":
        ok = len(missing) < len(set(expected))
    elif mode == "all":
        ok = not missing
    elif mode == "exact":
        unexpected = [c for c in dict.fromkeys(called) if c not in expected]
        details["unexpected"] = unexpected
        ok = not missing and not unexpected
    else:
        ok = _is_subsequence(expected, called)
    if ok:
        return Score.scored(1.0, "pass", f"called the expected tools ({mode})", details)
    return Score.scored(0.0, "fail", _why_not(mode, details), details)


def _expect_no_calls(called: list[str]) -> Score:
    details: dict[str, object] = {"mode": "none", "expected": [], "called": called}
    if not called:
        return Score.scored(1.0, "pass", "the case should be declined and no tool was called",
                            details)
    return Score.scored(0.0, "fail", "the case should be declined but the turn called: "
                        + ", ".join(called), details)


def _is_subsequence(expected: list[str], called: list[str]) -> bool:
    remaining = iter(called)
    return all(any(c == e for c in remaining) for e in expected)


def _why_not(mode: str, details: dict[str, object]) -> str:
    missing = details["missing"]
    if mode == "exact" and details.get("unexpected"):
        return f"called tools outside the expected set: {details['unexpected']}"
    if mode == "ordered" and not missing:
        return f"expected tools called, but not in the order {details['expected']}"
    if mode == "any":
        return f"called none of {details['expected']}"
    return f"did not call: {missing}"
