"""`call_validity`: are the turn's tool calls well-formed?

Each call is checked, in order:
1. the tool exists among the turn's declared tools (`tools_source = 'declared'`; with
   inferred tools the set comes from the calls themselves, so the check cannot fail);
2. its arguments parse as JSON and validate against the tool's JSON Schema (required
   fields, types, enums, `additionalProperties: false`, ...), when the tool declares one;
   arguments that were not captured are noted, not counted against the call;
3. it is not an exact duplicate (same tool, same canonical arguments) of an earlier call
   in the turn, unless that earlier call failed: retrying after an error is legitimate.

The value is the share of valid calls; details name every violation. A turn without
calls is `not_run`. An unreadable tool schema is a note, not the call's fault.

Two entry points give the same verdicts: `call_validity` here walks each turn's calls
(the reference, `_verdict`); `call_validity_batch.call_validity_columns` decides a whole
batch at once with Arrow kernels, running Python only per distinct (schema, arguments)
pair and per text that depends on a few small values, which is what makes scoring
millions of turns affordable. Both use the checks (`_outcome`) and the texts
(`_call_verdict`, `_details`, ...) defined here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

import orjson

from turnscore.ingest.turn import Turn
from turnscore.scorers import schema_check
from turnscore.scorers.base import (
    Case,
    Score,
    scorer,
)

NAME = "call_validity"
# 2: one schema check shared with the rules judge (`schema_check`); a violation at the top
# of the arguments reads as jsonschema's message alone (was "arguments: ...").
VERSION = "2"


@scorer(
    name=NAME,
    version=VERSION,
    kind="code",
    reads=("calls", "tools", "tools_source"),
    description="Share of calls naming a known tool with arguments valid against its JSON Schema.",
)
def call_validity(turns: Sequence[Turn], cases: Sequence[Case | None]) -> list[Score]:
    out = []
    for t in turns:
        verdict = _verdict([c.name for c in t.calls], [c.arguments for c in t.calls],
                           [_failed(c.status, c.error) for c in t.calls],
                           {tool.name: tool.parameters for tool in t.tools}, t.tools_source)
        out.append(Score.not_run(_NO_CALLS) if verdict is None else Score.scored(*verdict))
    return out


_NO_CALLS = "the turn made no tool calls"
_DECLARED = "declared"
_NOT_CHECKED = "no declared tool set: tool existence and schemas not checked"


def _failed(status: str | None, error: str | None) -> bool:
    """The call ended in an error: a repeat of it is a retry, not a duplicate."""
    return status == "error" or bool(error)


class _Outcome(NamedTuple):
    """What a call's arguments alone make of it, under its tool's schema (if any)."""

    violations: tuple[str, ...]
    """The arguments are not JSON, or break the schema."""
    uncaptured: bool
    unusable: str | None
    """Why the tool's schema could not be applied."""
    canonical: bytes
    """A digest of the arguments with keys sorted, to spot duplicates (a digest, not the
    text: outcomes are cached, and arguments can be long)."""
    # Written once per outcome for the columnar path, which puts texts together by column:
    text: str | None
    """The violations joined as in a problem, None if there are none."""
    as_json: str | None
    """The violations as the items of a JSON array, None if there are none."""
    notes_json: str | None
    """The call's notes as JSON (`,"notes":[...]`, or empty); None if they name the tool."""


def _made(violations: tuple[str, ...], uncaptured: bool, unusable: str | None, canonical: str
          ) -> _Outcome:
    digest = hashlib.blake2b(canonical.encode(), digest_size=16).digest()
    return _Outcome(
        violations, uncaptured, unusable, digest,
        "; ".join(violations) if violations else None,
        orjson.dumps(violations).decode()[1:-1] if violations else None,
        None if unusable is not None and not uncaptured
        else _notes_json(_notes("", uncaptured, unusable)),
    )


_CACHED_ARGUMENTS = 2048
"""Longer arguments are checked every time: the cache holds its keys' texts, and long
arguments (a document to summarise, a file to write) rarely repeat."""


def _outcome(schema: str | None, arguments: str | None) -> _Outcome:
    """The outcome of `arguments` (None: not captured) under the schema text `schema`
    (None or empty: none to check).

    Cached by the two texts when the arguments are short: agents repeat the same call
    (tool and arguments) across turns, and validating costs more than the rest of the
    scorer. At most 65,536 entries of at most 2 KB of arguments each (~150 MB).
    """
    if arguments is not None and len(arguments) > _CACHED_ARGUMENTS:
        return _checked(schema, arguments)
    return _cached(schema, arguments)


def _checked(schema: str | None, arguments: str | None) -> _Outcome:
    if arguments is None:
        return _made((), True, None, "")
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError as exc:
        problem = f"arguments are not valid JSON ({exc}): {arguments[:80]!r}"
        return _made((problem,), False, None, arguments.strip())
    canonical = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    if not schema:
        return _made((), False, None, canonical)
    checked = schema_check.check(schema, value)
    return _made(checked.violations, False, checked.unusable, canonical)


_cached = lru_cache(maxsize=65_536)(_checked)


def _verdict(names: Sequence[str], args: Sequence[str | None], failed: Sequence[bool],
             tools: dict[str, str | None], tools_source: str
             ) -> tuple[float, str, str, dict[str, object]] | None:
    """Value, label, explanation and details of a turn, or None if it made no calls.
    The calls come as parallel columns; `tools` maps each declared tool's name to its
    schema's text (None: no schema)."""
    if not names:
        return None
    declared = tools_source == _DECLARED
    seen: dict[tuple[str, bytes], int] = {}
    check_duplicates = len(names) > 1
    verdicts: list[dict[str, object]] = []
    problems: list[str] = []
    for index, (name, arg) in enumerate(zip(names, args, strict=True)):
        violations: list[str] = []
        schema = None
        if name in tools:
            schema = tools[name]
        elif declared:
            violations.append(_unknown_tool(name, tools))
        outcome = _outcome(schema, arg)
        violations.extend(outcome.violations)
        if check_duplicates:
            key = (name, outcome.canonical)
            earlier = seen.get(key)
            if earlier is not None and not failed[earlier]:
                violations.append(_duplicate_of(earlier))
            seen[key] = index
        verdict, problem = _call_verdict(index, name, violations, outcome)
        verdicts.append(verdict)
        if problem is not None:
            problems.append(problem)

    valid = len(verdicts) - len(problems)
    value = valid / len(verdicts)
    details = _details(verdicts, valid, len(problems), tools_source)
    if not problems:
        return value, "valid", _all_valid(valid), details
    return value, "invalid", " | ".join(problems), details


def _details(verdicts: list[dict[str, object]], valid: int, invalid: int, tools_source: str
             ) -> dict[str, object]:
    details: dict[str, object] = {
        "calls": verdicts, "valid": valid, "invalid": invalid, "tools_source": tools_source,
    }
    if tools_source != _DECLARED:
        details["note"] = _NOT_CHECKED
    return details


def _all_valid(valid: int) -> str:
    return f"all {valid} calls valid"


def _unknown_tool(name: str, declared: Iterable[str]) -> str:
    known = ", ".join(sorted(set(declared))) or "none"
    return f"unknown tool {name!r} (available: {known})"


_DUPLICATE = "exact duplicate of call "


def _duplicate_of(earlier: int) -> str:
    return f"{_DUPLICATE}{earlier}"


def _call_verdict(index: int, name: str, violations: list[str], outcome: _Outcome
                  ) -> tuple[dict[str, object], str | None]:
    """One call's entry in details, and its problem for the explanation (None if valid).
    The columnar path writes the entries and problems of calls with violations or notes
    itself (`_odd_texts`): keep the two in step (a property test compares the paths)."""
    verdict: dict[str, object] = {
        "index": index, "name": name, "valid": not violations, "violations": violations,
    }
    notes = _notes(name, outcome.uncaptured, outcome.unusable)
    if notes is not None:
        verdict["notes"] = notes
    problem = f"call {index} {name}: {'; '.join(violations)}" if violations else None
    return verdict, problem


def _notes(name: str, uncaptured: bool, unusable: str | None) -> list[str] | None:
    if uncaptured:
        return ["arguments not captured"]
    if unusable is not None:
        return [f"schema of {name!r} {unusable}"]
    return None


def _notes_json(notes: list[str] | None) -> str:
    """`notes` as the end of a call's entry in details, as orjson writes it."""
    return "" if notes is None else ',"notes":' + orjson.dumps(notes).decode()


_PLAIN = _made((), False, None, "")
"""The outcome of arguments that are fine and leave nothing to note."""
