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

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple, Protocol

import orjson
import polars as pl
from jsonschema import SchemaError
from jsonschema.validators import validator_for
from referencing import Registry

from turnscore.ingest.turn import Turn
from turnscore.scorers.base import (
    Case,
    Score,
    columnar,
    nested_records,
    score_columns,
    scorer,
)

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
    return [_score(t.calls, t.tools, t.tools_source) for t in turns]


class _CallLike(Protocol):
    """What the scorer reads of a call: a `Call`, or a `_CallRead` in the columnar path."""

    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def status(self) -> str: ...


class _ToolLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def parameters(self) -> str | None: ...


# Plain tuples: building a frozen `Call` per call costs more than checking it.
class _CallRead(NamedTuple):
    name: str
    arguments: str | None
    error: str | None
    status: str


class _ToolRead(NamedTuple):
    name: str
    parameters: str | None


@columnar(NAME)
def call_validity_columns(turns: pl.DataFrame, cases: Sequence[Case | None]) -> pl.DataFrame:
    calls = nested_records(turns.get_column("calls"), _CallRead._fields, _CallRead)
    tools = nested_records(turns.get_column("tools"), _ToolRead._fields, _ToolRead)
    sources = turns.get_column("tools_source").to_list()
    return score_columns([_score(c, t, s) for c, t, s in zip(calls, tools, sources, strict=True)])


def _score(calls: Sequence[_CallLike], tool_list: Sequence[_ToolLike], tools_source: str
           ) -> Score:
    if not calls:
        return Score.not_run("the turn made no tool calls")
    declared = tools_source == "declared"
    tools = {t.name: t for t in tool_list}
    seen: dict[tuple[str, str], int] = {}
    verdicts: list[dict[str, object]] = []
    for index, call in enumerate(calls):
        violations: list[str] = []
        notes: list[str] = []
        tool = tools.get(call.name)
        if declared and tool is None:
            known = ", ".join(sorted(tools)) or "none"
            violations.append(f"unknown tool {call.name!r} (available: {known})")
        problem = _unparsable(call)
        if problem:
            violations.append(problem)
        elif call.arguments is None:
            notes.append("arguments not captured")
        elif tool is not None:
            _check_schema(tool, call.arguments, violations, notes)
        _check_duplicate(index, call, calls, seen, violations)
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
        "tools_source": tools_source,
    }
    if not declared:
        details["note"] = "no declared tool set: tool existence and schemas not checked"
    if valid == len(verdicts):
        return Score.scored(value, "valid", f"all {valid} calls valid", details)
    problems = [f"call {v['index']} {v['name']}: {'; '.join(v['violations'])}"  # type: ignore[arg-type]
                for v in verdicts if not v["valid"]]
    return Score.scored(value, "invalid", " | ".join(problems), details)


def _unparsable(call: _CallLike) -> str | None:
    """Why the call's arguments are not JSON, or None (also when not captured)."""
    if call.arguments is None:
        return None
    try:
        orjson.loads(call.arguments)
    except orjson.JSONDecodeError as exc:
        return f"arguments are not valid JSON ({exc}): {call.arguments[:80]!r}"
    return None


def _check_schema(tool: _ToolLike, arguments: str, violations: list[str], notes: list[str]) -> None:
    """`arguments` (valid JSON) against the tool's schema."""
    if not tool.parameters:
        return
    # Interned: every turn brings its own copy of the same schema text, and the cache
    # below would otherwise keep one copy per entry (hundreds of MB for large schemas).
    found, problem = _schema_violations(sys.intern(tool.parameters), arguments)
    if problem is not None:
        notes.append(f"schema of {tool.name!r} {problem}")
    violations.extend(found)


@lru_cache(maxsize=65_536)
def _schema_violations(parameters: str, arguments: str) -> tuple[tuple[str, ...], str | None]:
    """The violations of `arguments` under the schema `parameters`, or why the schema
    cannot be applied.

    Cached by the two texts: agents repeat the same call (tool and arguments) across
    turns, and validating costs more than the rest of the scorer.
    """
    validator = _validator(parameters)
    if isinstance(validator, _Unusable):
        return (), f"{validator.why}: {validator.error[:120]}"
    try:
        errors = sorted(validator.iter_errors(orjson.loads(arguments)),
                        key=lambda e: list(e.absolute_path))
    except Exception as exc:  # an unresolvable $ref and the like: the schema's fault
        return (), f"could not be applied: {str(exc)[:120]}"
    violations = []
    for err in errors[:_MAX_SCHEMA_ERRORS]:
        where = "/".join(str(p) for p in err.absolute_path) or "arguments"
        violations.append(f"{where}: {err.message}")
    if len(errors) > _MAX_SCHEMA_ERRORS:
        violations.append(f"... and {len(errors) - _MAX_SCHEMA_ERRORS} more schema errors")
    return tuple(violations), None


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


def _check_duplicate(index: int, call: _CallLike, calls: Sequence[_CallLike],
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
