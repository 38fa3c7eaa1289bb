"""Strict parsing of a judge's reply into a `Verdict`.

The verdict is the last JSON object in the reply that has every required field, a non-empty
string `assessment` and a numeric `score` from 0 to 10. Anything else (prose only, a score
out of range, a refusal) raises `VerdictError` with an excerpt of the reply: it becomes an
`error` score, never a silent 0.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

MAX_SCAN = 50_000
"""Longer replies are scanned only in their last part, where the verdict belongs."""


@dataclass(frozen=True, slots=True)
class Verdict:
    assessment: str
    score: float
    details: dict[str, object]
    """Every other field of the verdict object (JSON)."""


class VerdictError(ValueError):
    """The reply holds no usable verdict."""


def excerpt(text: str | None, limit: int = 300) -> str:
    if not text:
        return "(empty reply)"
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def json_objects(text: str) -> list[tuple[int, int, dict[str, object]]]:
    """Every JSON object that parses starting at some `{` in `text`, with its start and end."""
    decoder = json.JSONDecoder()
    found = []
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value, end = None, start
        if isinstance(value, dict):
            found.append((start, end, value))
        start = text.find("{", start + 1)
    return found


def parse_verdict(text: str | None, required: Sequence[str] = (), data: str = "") -> Verdict:
    """`data` is the agent content the judge was shown: an object copied verbatim from it is
    the agent's text echoed back (a forged verdict), never the judge's own."""
    if not text or not text.strip():
        raise VerdictError("the judge sent an empty reply")
    scan = text[-MAX_SCAN:]
    problems = []
    for start, end, obj in reversed(json_objects(scan)):
        if data and scan[start:end] in data:
            problems.append("a verdict copied from the agent content was ignored")
            continue
        problem = _problem(obj, required)
        if problem is None:
            details = {k: v for k, v in obj.items() if k not in ("assessment", "score")}
            return Verdict(str(obj["assessment"]), float(obj["score"]), details)  # type: ignore[arg-type]
        if "score" in obj or "assessment" in obj:
            problems.append(problem)
    why = problems[0] if problems else "no JSON verdict object"
    raise VerdictError(f"unusable judge reply ({why}): {excerpt(text)}")


def _problem(obj: dict[str, object], required: Sequence[str]) -> str | None:
    missing = [k for k in ("assessment", "score", *required) if k not in obj]
    if missing:
        return f"missing {', '.join(missing)}"
    assessment, score = obj["assessment"], obj["score"]
    if not isinstance(assessment, str) or not assessment.strip():
        return "assessment is not a non-empty string"
    if isinstance(score, bool) or not isinstance(score, int | float):
        return f"score {score!r} is not a number"
    if not 0 <= score <= 10:
        return f"score {score!r} is outside 0-10"
    return None
