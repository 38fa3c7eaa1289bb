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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson
from jsonschema import SchemaError
from jsonschema.validators import validator_for
from referencing import Registry

from turnscore.ingest.turn import Call, Tool, Turn
from turnscore.scorers.base import Case, Score, scorer

NAME = "call_validity"
VERSION = "1"
_MAX_SCHEMA_ERRORS = 5


@scorer(
    name=NAME,
    version=VERSION,
    kind="code",
    reads=("calls", "tools", "tools_source"),
    description="Share of calls naming a known tool with arguments valid against its JSON Schema.",
)
def call_validity(turns: Sequence[Turn], cases: Sequence[Case | None]) -> list[Score]:
    return [_score(t) for t in turns]


def _score(turn: Turn) -> Score:
    if not turn.calls:
        return Score.not_run("the turn made no tool calls")
    declared = turn.tools_source == "declared"
    tools = {t.name: t for t in turn.tools}
    seen: dict[tuple[str, str], int] = {}
    verdicts: list[dict[str, object]] = []
    for index, call in enumerate(turn.calls):
        violations: list[str] = []
        notes: list[str] = []
        tool = tools.get(call.name)
        if declared and tool is None:
            known = ", ".join(sorted(tools)) or "none"
            violations.append(f"unknown tool {call.name!r} (available: {known})")
        args, problem = _parse(call)
        if problem:
            violations.append(problem)
        elif call.arguments is None:
            notes.append("arguments not captured")
        elif tool is not None:
            _check_schema(tool, args, violations, notes)
        _check_duplicate(index, call, turn.calls, seen, violations)
        verdict: dict[str, object] = {
            "index": index, "name": call.name, "valid": not violations, "violations": violations,
        }
        if notes:
            verdict["notes"] = notes
        verdicts.append(verdict)

    valid = sum(1 for v in verdicts if v["valid"])
    value = valid / len(verdicts)
    details: dict[str, object] = {
        "calls": verdicts, "valid": valid, "invalid": len(verdicts) - valid,
        "tools_source": turn.tools_source,
    }
    if not declared:
        details["note"] = "no declared tool set: tool existence and schemas not checked"
    if valid == len(verdicts):
        return Score.scored(value, "valid", f"all {valid} calls valid", details)
    problems = [f"call {v['index']} {v['name']}: {'; '.join(v['violations'])}"  # type: ignore[arg-type]
                for v in verdicts if not v["valid"]]
    return Score.scored(value, "invalid", " | ".join(problems), details)


def _parse(call: Call) -> tuple[object, str | None]:
    if call.arguments is None:
        return None, None
    try:
        return orjson.loads(call.arguments), None
    except orjson.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON ({exc}): {call.arguments[:80]!r}"


def _check_schema(tool: Tool, args: object, violations: list[str], notes: list[str]) -> None:
    if not tool.parameters:
        return
    validator = _validator(tool.parameters)
    if isinstance(validator, _Unusable):
        notes.append(f"schema of {tool.name!r} {validator.why}: {validator.error[:120]}")
        return
    try:
        errors = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
    except Exception as exc:  # an unresolvable $ref and the like: the schema's fault
        notes.append(f"schema of {tool.name!r} could not be applied: {str(exc)[:120]}")
        return
    for err in errors[:_MAX_SCHEMA_ERRORS]:
        where = "/".join(str(p) for p in err.absolute_path) or "arguments"
        violations.append(f"{where}: {err.message}")
    if len(errors) > _MAX_SCHEMA_ERRORS:
        violations.append(f"... and {len(errors) - _MAX_SCHEMA_ERRORS} more schema errors")


@dataclass(frozen=True, slots=True)
class _Unusable:
    why: str
    error: str


_UNREADABLE = "is unreadable, not checked"


@lru_cache(maxsize=4096)
def _validator(parameters: str) -> Any:
    """A validator for a schema's text, or why it cannot be used.

    Cached: a tool set repeats across turns, and checking a schema against its
    metaschema costs far more than validating one call's arguments.
    """
    try:
        schema = orjson.loads(parameters)
        if not isinstance(schema, (dict, bool)):
            raise SchemaError(f"a schema is an object or a boolean, not {type(schema).__name__}")
        cls = validator_for(schema)
        cls.check_schema(schema)
        # An empty registry: a `$ref` to a URL in an agent's tool schema is never fetched.
        return cls(schema, registry=Registry())
    except (orjson.JSONDecodeError, SchemaError) as exc:
        return _Unusable(_UNREADABLE, str(exc))
    except Exception as exc:  # an unresolvable $ref and the like: the schema's fault
        return _Unusable("could not be applied", str(exc))


def _check_duplicate(index: int, call: Call, calls: Sequence[Call],
                     seen: dict[tuple[str, str], int], violations: list[str]) -> None:
    key = (call.name, _canonical(call.arguments))
    earlier = seen.get(key)
    if earlier is not None and calls[earlier].status != "error" and not calls[earlier].error:
        violations.append(f"exact duplicate of call {earlier}")
    seen[key] = index


def _canonical(arguments: str | None) -> str:
    if arguments is None:
        return ""
    try:
        return orjson.dumps(orjson.loads(arguments), option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONDecodeError:
        return arguments.strip()
