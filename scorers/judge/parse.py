"""Parsing a judge's reply into a `Verdict`, and reading agent content for forged verdicts.

A usable reply is a score: one verdict-shaped JSON object (it has `assessment` or `score`)
with a non-empty string `assessment` and a numeric `score` from 0 to 10. Every other field
the scorer's schema declares is kept when it is valid against that schema and otherwise
named in `details["missing"]`: a judge that drops or garbles an optional field still gives a
score. What raises `VerdictError` (an `error` row with an excerpt, retried next run):
no verdict at all, a verdict without a usable assessment or score, and more than one
verdict that disagree ("ambiguous verdict": a forged verdict the judge quoted could be
either of them).

Agent content is scanned before judging (`scan_content`): verdict-shaped text and the
prompt's block markers are flagged in the score's details, and the verdicts embedded anywhere
in the turn's agent content (shown to this judge or not) are remembered. An object the
reply copies character for character from what the judge was shown is a quote, not the
judge's verdict, and is set aside; a verdict equal in assessment and score to an embedded
one, or a reply whose only usable verdict is such a quote, is the agent grading itself and
is never a normal score (`Verdict.forged`; the engine stores it as `inconclusive`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from turnscore.scorers import schema_check

MAX_SCAN = 50_000
"""Longer replies are scanned only in their last part, where the verdict belongs."""
_NESTED_DEPTH = 3
"""JSON inside JSON strings (tool arguments, descriptions) is looked into this deep."""
_VERDICT_KEYS = ("assessment", "score")
_VERDICT_TEXT = (re.compile(r"\bassessment\b\W{0,4}:", re.I),
                 re.compile(r"\bscore\b\W{0,4}:", re.I))
_MARKER_TEXT = re.compile(r"<<<|>>>")


@dataclass(frozen=True, slots=True)
class Verdict:
    assessment: str
    score: float
    details: dict[str, object]
    """The other valid fields of the verdict object (JSON), and `missing` when some were not."""
    forged: bool = False
    """Assessment and score equal those of a verdict embedded in the agent content."""


class VerdictError(ValueError):
    """The reply holds no usable verdict."""


@dataclass(frozen=True, slots=True)
class ContentScan:
    """What the agent content carries that looks like the judge's own."""

    verdict_shaped: tuple[str, ...] = ()
    """Names of the blocks holding text shaped like a verdict (`"assessment": ..., "score":`)."""
    markers: tuple[str, ...] = ()
    """Names of the blocks holding marker-shaped text (`<<<`, `>>>`), escaped before judging."""
    verdicts: frozenset[tuple[str, float]] = field(default_factory=frozenset)
    """(assessment, score) of every verdict object embedded in the agent content, including
    blocks this judge is not shown."""

    def flags(self) -> dict[str, object]:
        """The score's `details` entries; empty for content with nothing to flag."""
        out: dict[str, object] = {}
        if self.verdict_shaped:
            out["content_verdict_shaped"] = list(self.verdict_shaped)
        if self.markers:
            out["content_markers"] = list(self.markers)
        return out


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


def scan_content(sections: Sequence[tuple[str, str]],
                 agent_content: Sequence[tuple[str, str]] | None = None) -> ContentScan:
    """Flags of the raw (unescaped) blocks the judge will see, and the verdicts embedded in
    `agent_content` (everything the agent wrote, shown or not; default: `sections`)."""
    shaped, markers = [], []
    for name, body in sections:
        text = body[-MAX_SCAN:]
        if all(p.search(text) for p in _VERDICT_TEXT):
            shaped.append(name)
        if _MARKER_TEXT.search(text):
            markers.append(name)
    # A verdict object has the key "score": text without the word (or a \u escape, which
    # could spell it) holds none, and most blocks are skipped without a JSON search.
    verdicts = {_key(obj) for _, body in (sections if agent_content is None else agent_content)
                if _may_hold_verdict(body)
                for obj in _objects_deep(body[-MAX_SCAN:], _NESTED_DEPTH)
                if _problem(obj) is None}
    return ContentScan(tuple(shaped), tuple(markers), frozenset(verdicts))


def parse_verdict(text: str | None, fields: Mapping[str, str | Mapping[str, object]] | None = None,
                  *, shown: str = "", content: ContentScan | None = None) -> Verdict:
    """`fields`: JSON Schemas of the verdict's fields besides assessment and score, as text
    (`verdict_fields`, serialised once per scorer) or as objects.
    `shown`: everything the judge was shown; `content`: the scan of the agent content."""
    if not text or not text.strip():
        raise VerdictError("the judge sent an empty reply")
    scan = text[-MAX_SCAN:]
    usable: list[dict[str, object]] = []
    quotes: list[dict[str, object]] = []
    problems: list[str] = []
    outer_end = -1  # objects nested in a verdict-shaped one are part of it, not verdicts
    for start, end, obj in json_objects(scan):
        if start < outer_end or not any(k in obj for k in _VERDICT_KEYS):
            continue
        outer_end = end
        problem = _problem(obj)
        if shown and scan[start:end] in shown:
            quotes.append(obj)
        elif problem is None:
            usable.append(obj)
        else:
            problems.append(problem)
    quoted = len(quotes)
    # Only quotes, one of them usable: the judge repeated the agent's verdict word for word.
    # That is a forged verdict (stored inconclusive), not an error asked again every night.
    copied = [] if usable or problems else [q for q in quotes if _problem(q) is None]
    if copied:
        usable = copied[-1:]
    distinct = {_key(o) for o in usable}
    if len(distinct) > 1:
        scores = ", ".join(f"{s:g}" for s in sorted({s for _, s in distinct}))
        raise VerdictError(f"ambiguous verdict: {len(usable)} verdict objects that disagree "
                           f"(scores {scores}): {excerpt(text)}")
    if not usable:
        why = (problems[-1] if problems else
               "only unusable verdicts copied from the agent content" if quoted else
               "no JSON verdict object")
        raise VerdictError(f"unusable judge reply ({why}): {excerpt(text)}")
    obj = usable[-1]
    details, missing = {}, []
    for name, schema in (fields or {}).items():
        text = schema if isinstance(schema, str) else orjson.dumps(
            schema, option=orjson.OPT_SORT_KEYS).decode()
        if name in obj and schema_check.is_valid(text, obj[name]):
            details[name] = obj[name]
        else:
            missing.append(name)
    if missing:
        details["missing"] = missing
    if quoted:
        details["quoted_content_verdicts"] = quoted
    assessment, score = _key(obj)
    forged = bool(copied) or (content is not None and (assessment, score) in content.verdicts)
    return Verdict(str(obj["assessment"]), score, details, forged)


def verdict_fields(schema: Mapping[str, object]) -> dict[str, str]:
    """The field schemas of a verdict schema (its properties but assessment and score), as
    JSON text: `schema_check` caches a validator per text."""
    props = schema.get("properties")
    assert isinstance(props, Mapping)
    return {k: orjson.dumps(v, option=orjson.OPT_SORT_KEYS).decode()
            for k, v in props.items() if k not in _VERDICT_KEYS}


def _problem(obj: Mapping[str, object]) -> str | None:
    missing = [k for k in _VERDICT_KEYS if k not in obj]
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


def _key(obj: Mapping[str, object]) -> tuple[str, float]:
    return " ".join(str(obj["assessment"]).split()), float(obj["score"])  # type: ignore[arg-type]


def _may_hold_verdict(text: str) -> bool:
    return "score" in text or "\\u" in text


def _objects_deep(text: str, depth: int) -> list[dict[str, object]]:
    found = [obj for _, _, obj in json_objects(text)]
    if depth > 1:
        for obj in list(found):
            for s in _strings(obj):
                if "{" in s and _may_hold_verdict(s):
                    found.extend(_objects_deep(s, depth - 1))
    return found


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
