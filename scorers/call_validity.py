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
from typing import Any, NamedTuple

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from jsonschema import SchemaError
from jsonschema.validators import validator_for
from referencing import Registry

from turnscore.ingest.turn import Turn
from turnscore.scorers.base import (
    SCORE_COLUMNS,
    Case,
    Score,
    Status,
    columnar,
    details_json,
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
    texts = _Texts([], [])  # filled as the turns are read
    out = []
    for t in turns:
        tools = {tool.name: texts.param_code(tool.parameters) for tool in t.tools}
        verdict = _verdict([c.name for c in t.calls],
                           [texts.arg_code(c.arguments) for c in t.calls],
                           [_failed(c.status, c.error) for c in t.calls],
                           tools, t.tools_source, texts)
        out.append(Score.not_run(_NO_CALLS) if verdict is None else Score.scored(*verdict))
    return out


_NO_CALLS = "the turn made no tool calls"


def _failed(status: str | None, error: str | None) -> bool:
    """The call ended in an error: a repeat of it is a retry, not a duplicate."""
    return status == "error" or bool(error)


@columnar(NAME)
def call_validity_columns(turns: pl.DataFrame, cases: Sequence[Case | None]) -> pl.DataFrame:
    calls, call_counts = _flat(turns.get_column("calls"),
                               ("name", "arguments", "error", "status"))
    tools, tool_counts = _flat(turns.get_column("tools"), ("name", "parameters"))
    # Dictionary-encoded: each distinct text is decoded, parsed and checked once per
    # batch, and the per-call memo keys are small ints instead of long strings.
    args = calls["arguments"].dictionary_encode()
    params = tools["parameters"].dictionary_encode()
    texts = _Texts(args.dictionary.to_pylist(), params.dictionary.to_pylist())
    failed = pc.or_(pc.fill_null(pc.equal(calls["status"], "error"), False),
                    pc.fill_null(pc.not_equal(calls["error"], ""), False)).to_pylist()
    names = calls["name"].to_pylist()
    codes = args.indices.to_pylist()
    tool_names = tools["name"].to_pylist()
    param_codes = params.indices.to_pylist()
    sources = turns.get_column("tools_source").to_list()

    n = turns.height
    cols: dict[str, list[Any]] = {
        "status": [_NOT_RUN] * n, "value": [None] * n, "label": [None] * n,
        "explanation": [_NO_CALLS] * n, "details": [_NO_DETAILS] * n,
    }
    status_col, value_col, label_col = cols["status"], cols["value"], cols["label"]
    explanation_col, details_col = cols["explanation"], cols["details"]
    c = t = 0
    for row, (n_calls, n_tools, source) in enumerate(
            zip(call_counts, tool_counts, sources, strict=True)):
        if n_calls:
            end = c + n_calls
            tool_map = dict(zip(tool_names[t:t + n_tools], param_codes[t:t + n_tools],
                                strict=True))
            verdict = _verdict(names[c:end], codes[c:end], failed[c:end], tool_map, source,
                               texts)
            assert verdict is not None
            status_col[row] = _SCORED
            value_col[row], label_col[row], explanation_col[row] = verdict[:3]
            details_col[row] = details_json(verdict[3])
        c += n_calls
        t += n_tools
    return pl.DataFrame(cols, schema=SCORE_COLUMNS)


_SCORED, _NOT_RUN = str(Status.SCORED), str(Status.NOT_RUN)
_NO_DETAILS = details_json({})


def _flat(column: pl.Series, names: Sequence[str]) -> tuple[dict[str, pa.Array], list[int]]:
    """The text fields `names` of a list-of-structs column's items (all rows), and each
    row's item count."""
    # At the newest compat level polars hands its string views over as they are; the
    # default converts every text of the struct (call results too) to `large_string`,
    # which cost more than checking the calls. Only the fields read are converted.
    arr: Any = column.to_arrow(compat_level=pl.CompatLevel.newest())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    # `flatten` respects the slice offset, unlike `.values`; a null list has no items.
    items = arr.flatten()
    fields = {n: items.field(n).cast(pa.large_string()) for n in names}
    return fields, arr.value_lengths().fill_null(0).to_pylist()


class _Texts:
    """The batch's distinct argument and schema texts, by code, and what was found about
    them: an argument text is parsed once, an (arguments, schema) pair checked once."""

    def __init__(self, args: list[str], params: list[str]) -> None:
        # The columnar path passes its dictionaries; the row-wise one starts empty and
        # codes texts as it meets them (`arg_code`, `param_code`).
        self.args, self.params = args, params
        self._arg_codes: dict[str, int] = {}
        self._param_codes: dict[str, int] = {}
        self._outcomes: dict[tuple[int | None, int | None], _Outcome] = {}

    def arg_code(self, text: str | None) -> int | None:
        return None if text is None else _code(text, self.args, self._arg_codes)

    def param_code(self, text: str | None) -> int | None:
        return None if text is None else _code(text, self.params, self._param_codes)

    def outcome(self, params: int | None, args: int | None) -> _Outcome:
        """What the arguments `args` alone make of a call to a tool with the schema
        `params` (None: none to check)."""
        key = (params, args)
        found = self._outcomes.get(key)
        if found is None:
            found = self._outcomes[key] = self._judge(params, args)
        return found

    def _judge(self, params: int | None, args: int | None) -> _Outcome:
        if args is None:
            return _Outcome((), True, None, "")
        text = self.args[args]
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            problem = f"arguments are not valid JSON ({exc}): {text[:80]!r}"
            return _Outcome((problem,), False, None, text.strip())
        canonical = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
        if params is None or not self.params[params]:
            return _Outcome((), False, None, canonical)
        # Interned: every batch brings its own copy of the same schema text, and the
        # cache below would otherwise keep one copy per entry.
        found, unusable = _schema_violations(sys.intern(self.params[params]), text)
        return _Outcome(found, False, unusable, canonical)


class _Outcome(NamedTuple):
    violations: tuple[str, ...]
    """The arguments are not JSON, or break the schema."""
    uncaptured: bool
    unusable: str | None
    """Why the tool's schema could not be applied."""
    canonical: str
    """The arguments with keys sorted, to spot duplicates."""


def _code(text: str, texts: list[str], codes: dict[str, int]) -> int:
    code = codes.get(text)
    if code is None:
        code = codes[text] = len(texts)
        texts.append(text)
    return code


_MISSING = -1
"""A tool the turn does not declare (a schema's code is >= 0, None if it has none)."""


def _verdict(names: Sequence[str], args: Sequence[int | None], failed: Sequence[bool],
             tools: dict[str, int | None], tools_source: str, texts: _Texts
             ) -> tuple[float, str, str, dict[str, object]] | None:
    """Value, label, explanation and details of a turn, or None if it made no calls.
    The calls come as parallel columns, their arguments as codes into `texts`; `tools`
    maps each declared tool's name to its schema's code (None: no schema)."""
    if not names:
        return None
    declared = tools_source == "declared"
    seen: dict[tuple[str, str], int] = {}
    check_duplicates = len(names) > 1
    verdicts: list[dict[str, object]] = []
    problems: list[str] = []
    for index, (name, arg) in enumerate(zip(names, args, strict=True)):
        violations: list[str] = []
        params = tools.get(name, _MISSING)
        if params == _MISSING:
            if declared:
                known = ", ".join(sorted(tools)) or "none"
                violations.append(f"unknown tool {name!r} (available: {known})")
            params = None
        outcome = texts.outcome(params, arg)
        violations.extend(outcome.violations)
        if check_duplicates:
            key = (name, outcome.canonical)
            earlier = seen.get(key)
            if earlier is not None and not failed[earlier]:
                violations.append(f"exact duplicate of call {earlier}")
            seen[key] = index
        verdict: dict[str, object] = {
            "index": index, "name": name, "valid": not violations, "violations": violations,
        }
        if outcome.uncaptured:
            verdict["notes"] = ["arguments not captured"]
        elif outcome.unusable is not None:
            verdict["notes"] = [f"schema of {name!r} {outcome.unusable}"]
        verdicts.append(verdict)
        if violations:
            problems.append(f"call {index} {name}: {'; '.join(violations)}")

    valid = len(verdicts) - len(problems)
    value = valid / len(verdicts)
    details: dict[str, object] = {
        "calls": verdicts, "valid": valid, "invalid": len(problems),
        "tools_source": tools_source,
    }
    if not declared:
        details["note"] = "no declared tool set: tool existence and schemas not checked"
    if not problems:
        return value, "valid", f"all {valid} calls valid", details
    return value, "invalid", " | ".join(problems), details


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
