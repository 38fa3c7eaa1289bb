"""Tool arguments against a tool's JSON Schema: the one check `call_validity` and the rules
judge (`scorers.judge.rules`) both apply.

`check_text(parameters, arguments)` parses a call's arguments text and checks it (cached by
the two texts: agents repeat the same calls across turns, and validating costs more than
the rest of either scorer); `check(parameters, arguments)` validates parsed arguments
against a schema's text and says three things: the violations (required fields, types,
enums, `additionalProperties: false`, ... as jsonschema words them, at most
`MAX_VIOLATIONS` and a count of the rest), why the schema could not be applied
(unreadable, not a schema, an unresolvable `$ref`: the schema's fault, never the call's),
and the top-level arguments the schema does not declare.

The last is not a JSON Schema violation: a schema that lists `properties` and says nothing
of `additionalProperties` accepts any other key. `call_validity` (is the call valid?) leaves
them be; the rules judge counts them as invented arguments, which is what a model calling a
declared function does when it makes up a parameter (BFCL's tools declare no
`additionalProperties`). A schema that allows more keys explicitly (`additionalProperties`
true or a schema, or `patternProperties`) declares them.

A `$ref` is resolved within the schema only: an empty registry means a URL in an agent's
tool schema is never fetched (otherwise telemetry could make the scorer call any host).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson
from jsonschema import SchemaError
from jsonschema.validators import validator_for
from referencing import Registry

MAX_VIOLATIONS = 5
UNREADABLE = "is unreadable, not checked"
UNAPPLICABLE = "could not be applied"


@dataclass(frozen=True, slots=True)
class Checked:
    violations: tuple[str, ...]
    """The schema's violations, each `path: message` (the message alone at the top)."""
    unusable: str | None
    """Why the schema could not be applied (then nothing was checked), else None."""
    undeclared: tuple[str, ...]
    """Top-level argument names the schema neither declares nor explicitly allows."""


def check(parameters: str, arguments: object) -> Checked:
    """`arguments` (parsed JSON) against the schema text `parameters`."""
    validator = _validator(parameters)
    if isinstance(validator, _Unusable):
        return Checked((), f"{validator.why}: {validator.error[:120]}", ())
    try:
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    except Exception as exc:  # an unresolvable $ref and the like: the schema's fault
        return Checked((), f"{UNAPPLICABLE}: {str(exc)[:120]}", ())
    violations = []
    for err in errors[:MAX_VIOLATIONS]:
        where = "/".join(str(p) for p in err.absolute_path)
        violations.append(f"{where}: {err.message}" if where else err.message)
    if len(errors) > MAX_VIOLATIONS:
        violations.append(f"... and {len(errors) - MAX_VIOLATIONS} more schema errors")
    return Checked(tuple(violations), None, _undeclared(validator.schema, arguments))


def _undeclared(schema: object, arguments: object) -> tuple[str, ...]:
    if not (isinstance(schema, dict) and isinstance(arguments, dict)):
        return ()
    declared = schema.get("properties")
    if (not isinstance(declared, dict) or "additionalProperties" in schema
            or "patternProperties" in schema):
        return ()
    return tuple(k for k in arguments if k not in declared)


@dataclass(frozen=True, slots=True)
class ArgumentsCheck:
    """A call's arguments text, parsed and checked against its tool's schema."""

    value: object
    """The parsed JSON (shared through the cache: read it, never change it); None when the
    text is not JSON."""
    error: str | None
    """Why the text is not JSON (the parser's message), else None."""
    canonical: str
    """The value with keys sorted, compact (to spot repeats); the stripped text when it is
    not JSON."""
    checked: Checked | None
    """The schema check, when a schema was given and the text is JSON."""


CACHED_ARGUMENTS = 2048
"""Longer arguments are checked every time: the cache holds its keys' texts, and long
arguments (a document to summarise, a file to write) rarely repeat."""


def check_text(parameters: str | None, arguments: str) -> ArgumentsCheck:
    """The arguments text against the schema text `parameters` (None or empty: none).

    Cached by the two texts when the arguments are short: at most 65,536 entries of at
    most 2 KB of arguments each.
    """
    if len(arguments) > CACHED_ARGUMENTS:
        return _check_text(parameters, arguments)
    return _cached_check_text(parameters, arguments)


def _check_text(parameters: str | None, arguments: str) -> ArgumentsCheck:
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError as exc:
        return ArgumentsCheck(None, str(exc), arguments.strip(), None)
    canonical = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return ArgumentsCheck(value, None, canonical,
                          check(parameters, value) if parameters else None)


_cached_check_text = lru_cache(maxsize=65_536)(_check_text)


def is_valid(schema: str, value: object) -> bool:
    """Whether `value` is valid against the schema text `schema` (an unusable schema
    accepts nothing)."""
    validator = _validator(schema)
    return not isinstance(validator, _Unusable) and bool(validator.is_valid(value))


@dataclass(frozen=True, slots=True)
class _Unusable:
    why: str
    error: str


@lru_cache(maxsize=4096)
def _validator(parameters: str) -> Any:
    """A validator for a schema's text, or why it cannot be used.

    Cached: a tool set repeats across turns, and checking a schema against its metaschema
    costs far more than validating one call's arguments.
    """
    try:
        schema = orjson.loads(parameters)
        if not isinstance(schema, (dict, bool)):
            raise SchemaError(f"a schema is an object or a boolean, not {type(schema).__name__}")
        cls = validator_for(schema)
        # Every metaschema error, the first by place and wording: `check_schema` raises the
        # one `best_match` picks, and of errors equally relevant which one that is differs
        # between processes (a local and a Ray worker's scores of one turn told apart).
        meta = validator_for(cls.META_SCHEMA, default=cls)(cls.META_SCHEMA)
        wrong = min(meta.iter_errors(schema), key=lambda e: (e.json_path, e.message),
                    default=None)
        if wrong is not None:
            return _Unusable(UNREADABLE, f"{wrong.message} at {wrong.json_path}")
        return cls(schema, registry=Registry())
    except SchemaError as exc:
        return _Unusable(UNREADABLE, exc.message)
    except orjson.JSONDecodeError as exc:
        return _Unusable(UNREADABLE, str(exc))
    except Exception as exc:  # an unresolvable $ref and the like: the schema's fault
        return _Unusable(UNAPPLICABLE, str(exc))
