"""`call_validity`: are the turn's tool calls well-formed?

Each call is checked, in order:
1. the tool exists among the turn's declared tools (`tools_source = 'declared'`; with
   inferred tools the set comes from the calls themselves, so the check cannot fail);
2. its arguments parse as JSON and validate against the tool's JSON Schema (required
   fields, types, enums, `additionalProperties: false`, ...; `scorers.schema_check`, the
   rules judge's check too), when the tool declares one; arguments that were not captured
   are noted, not counted against the call;
3. it is not an exact duplicate (same tool, same canonical arguments) of an earlier call
   in the turn, unless that earlier call failed: retrying after an error is legitimate.

The value is the share of valid calls; details name every violation. A turn without
calls is `not_run`. An unreadable tool schema is a note, not the call's fault.

One implementation, columnar: a whole batch is decided at once with Arrow kernels, running
Python only per distinct (schema, arguments) pair (`_outcome`, its check cached across
batches) and
per text that depends on a few small values, which is what makes scoring millions of turns
affordable. (Over ~400 lines:
the checks, their texts and the kernels that apply them are one piece; split, the texts
would be written in one module for another.) tests/scorers/call_validity_oracle.py keeps a
call-by-call statement of the rules as a test oracle.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable, Sequence
from functools import lru_cache
from operator import attrgetter
from typing import Any, NamedTuple

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from turnscore.scorers import schema_check
from turnscore.scorers.base import NO_DETAILS, SCORE_COLUMNS, Case, Status, Turns, scorer

NAME = "call_validity"
# 2: one schema check shared with the rules judge (`schema_check`); a violation at the top
# of the arguments reads as jsonschema's message alone (was "arguments: ...").
VERSION = "2"


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


def _outcome(schema: str | None, arguments: str | None) -> _Outcome:
    """The outcome of `arguments` (None: not captured) under the schema text `schema`
    (None or empty: none to check); the parse and the check are `schema_check.check_text`'s
    (shared with the rules judge).

    Cached by the two texts when the arguments are short, as `check_text` is: agents
    repeat the same calls across turns, and an outcome's texts cost about what the check
    does once the check is cached.
    """
    if arguments is not None and len(arguments) > schema_check.CACHED_ARGUMENTS:
        return _made_outcome(schema, arguments)
    return _cached_outcome(schema, arguments)


def _made_outcome(schema: str | None, arguments: str | None) -> _Outcome:
    if arguments is None:
        return _made((), True, None, "")
    found = schema_check.check_text(schema or None, arguments)
    if found.error is not None:
        problem = f"arguments are not valid JSON ({found.error}): {arguments[:80]!r}"
        return _made((problem,), False, None, found.canonical)
    if found.checked is None:
        return _made((), False, None, found.canonical)
    return _made(found.checked.violations, False, found.checked.unusable, found.canonical)


_cached_outcome = lru_cache(maxsize=65_536)(_made_outcome)


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
    """One call's entry in details, and its problem for the explanation (None if valid):
    written here for valid calls without notes (`_Calls.plain_entries`); `_odd_texts`
    writes the others as columns, in the same form (a property test holds both to the
    oracle in tests/)."""
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


@scorer(
    name=NAME,
    version=VERSION,
    kind="code",
    reads=("calls", "tools", "tools_source"),
    description="Share of calls naming a known tool with arguments valid against its JSON Schema.",
)
def call_validity(turns: Turns, cases: Sequence[Case | None]) -> pl.DataFrame:
    # The batch's calls are decided at once, as Arrow columns: the tool each names,
    # duplicates, each call's entry in details and its problem. Python runs per distinct
    # (schema, arguments) pair (`_outcome`, cached across batches), per distinct text
    # that depends only on a few small values (a valid call's entry, the end of details),
    # and per call to an unknown tool or with an unusable schema.
    calls = _Calls(turns.frame)
    outcomes = list(map(_outcome, *calls.pairs()))
    checked = _PerCall(outcomes, calls.pair)
    earlier = calls.earlier_duplicates(checked.canonical)
    unknown = calls.unknown_tools()
    notes = calls.notes(outcomes, checked.notes)
    odd = pc.invert(pc.and_(
        pc.and_(pc.is_null(unknown), pc.is_null(checked.text)),
        pc.and_(pc.is_null(earlier), pc.equal(notes, _str("")))))
    entry, problem = calls.plain_entries(), pa.nulls(len(calls.pair), _TEXT)
    at = pc.indices_nonzero(odd)
    if len(at):
        odd_entry, odd_problem = _odd_texts(*(pc.take(column, at) for column in (
            calls.index, calls.name, calls.name_json, unknown, checked.text, checked.json,
            earlier, notes)))
        entry = pc.replace_with_mask(entry, odd, odd_entry)
        problem = pc.replace_with_mask(problem, odd, odd_problem)
    return _per_turn(turns.frame, calls, entry, problem)


def _odd_texts(index: pa.Array, name: pa.Array, name_json: pa.Array, unknown: pa.Array,
               schema_text: pa.Array, schema_json: pa.Array, earlier: pa.Array,
               notes: pa.Array) -> tuple[pa.Array, pa.Array]:
    """`_call_verdict`'s entries (as orjson writes them) and problems, for calls with
    violations or notes."""
    # A call's violations, in this order: unknown tool, schema, duplicate.
    duplicate = _concat(_DUPLICATE, earlier.cast(_TEXT))
    valid = pc.and_(pc.and_(pc.is_null(unknown), pc.is_null(schema_text)), pc.is_null(earlier))
    index_text = index.cast(_TEXT)
    entry = _concat(
        '{"index":', index_text, ',"name":', name_json,
        ',"valid":', pc.if_else(valid, _str("true"), _str("false")),
        ',"violations":[', _joined(",", _json_each(unknown), schema_json,
                                   _concat('"', duplicate, '"')),
        "]", notes, "}")
    problem = pc.if_else(valid, pa.scalar(None, _TEXT), _concat(
        "call ", index_text, " ", name, ": ", _joined("; ", unknown, schema_text, duplicate)))
    return entry, problem


_SCORED, _NOT_RUN = str(Status.SCORED), str(Status.NOT_RUN)
_TEXT = pa.large_string()
_CALLS_OPEN = '{"calls":['


def _per_turn(turns: pl.DataFrame, calls: _Calls, entry: pa.Array, problem: pa.Array
              ) -> pl.DataFrame:
    """The score columns, from each call's details entry and problem (null if valid)."""
    entries = pc.binary_join(pa.LargeListArray.from_arrays(calls.offsets, entry), _str(","))
    # The invalid calls' problems, by turn: offsets counted over the invalid calls only.
    invalid_before = _offsets(pc.is_valid(problem).cast(pa.int64()))
    problems = pa.LargeListArray.from_arrays(pc.take(invalid_before, calls.offsets),
                                             pc.drop_null(problem))
    counts = calls.counts.cast(pa.int64())
    invalid = problems.value_lengths().cast(pa.int64())
    valid = pc.subtract(counts, invalid)
    sources = turns.get_column("tools_source").to_arrow().cast(_TEXT).dictionary_encode()
    source_names = sources.dictionary.to_pylist()
    # What follows the calls in details depends on the counts and the source only:
    # written once per distinct combination, by `_details` itself.
    width = int(pc.max(counts).as_py() or 0) + 1
    combination = _key(_key(sources.indices.cast(pa.int64()), width, valid), width, invalid)
    distinct = pc.unique(combination)
    tails, explained = [], []
    for code in distinct.to_pylist():
        source, rest = divmod(code, width * width)
        ok, bad = divmod(rest, width)
        written = orjson.dumps(_details([], ok, bad, source_names[source])).decode()
        assert written.startswith(_CALLS_OPEN + "]")
        tails.append(written[len(_CALLS_OPEN):])
        explained.append(_all_valid(ok))
    which = pc.index_in(combination, value_set=distinct)
    none = pc.equal(counts, _int(0))
    all_valid = pc.equal(invalid, _int(0))
    out = pa.table({
        "status": pc.if_else(none, _str(_NOT_RUN), _str(_SCORED)),
        "value": pc.if_else(none, pa.scalar(None, pa.float64()),
                            pc.divide(valid.cast(pa.float64()), counts.cast(pa.float64()))),
        "label": pc.if_else(none, pa.scalar(None, _TEXT),
                            pc.if_else(all_valid, _str("valid"), _str("invalid"))),
        "explanation": pc.if_else(none, _str(_NO_CALLS), pc.if_else(
            all_valid, pc.take(pa.array(explained, _TEXT), which),
            pc.binary_join(problems, _str(" | ")))),
        "details": pc.if_else(none, _str(NO_DETAILS), _concat(
            _CALLS_OPEN, entries, pc.take(pa.array(tails, _TEXT), which))),
    })
    frame = pl.from_arrow(out)
    assert isinstance(frame, pl.DataFrame)
    return frame.cast(SCORE_COLUMNS)  # type: ignore[arg-type]


class _Calls:
    """A batch's calls as Arrow columns, in order (one item per call)."""

    def __init__(self, turns: pl.DataFrame) -> None:
        calls_arr, self._tools = _list_array(turns, "calls"), _list_array(turns, "tools")
        items, tools = calls_arr.flatten(), self._tools.flatten()
        self.counts = calls_arr.value_lengths().fill_null(0)
        self.offsets = _offsets(self.counts)
        self.row = pc.list_parent_indices(calls_arr)
        self.index = pc.subtract(_positions(len(items)), pc.take(self.offsets, self.row))
        # The texts stay string views (as polars hands them over): they are only compared
        # and coded here, and only the (few) distinct ones are converted.
        self.failed = pc.or_(
            pc.fill_null(pc.equal(_field(items, "status"), _view("error")), _FALSE),
            pc.fill_null(pc.not_equal(_field(items, "error"), _view("")), _FALSE))
        call_names, tool_names = _field(items, "name"), _field(tools, "name")
        sources = turns.get_column("tools_source")
        if call_names.null_count or tool_names.null_count or sources.null_count():
            raise ValueError("a null tool name or tools_source")
        # Names coded over calls and tools together: a call's tool is the last of the
        # turn's tools with the same (row, name code) (a later tool of a name wins); `index_in`
        # finds the first match, so it searches the tools backwards.
        names = pa.concat_arrays([call_names, tool_names]).dictionary_encode()
        self._names: list[str] = names.dictionary.to_pylist()
        codes = names.indices.cast(pa.int64())
        self.name_code = codes[:len(items)]
        self.name = pc.take(names.dictionary.cast(_TEXT), self.name_code)
        self.name_json = pc.take(
            pa.array([orjson.dumps(n).decode() for n in self._names], _TEXT), self.name_code)
        self.key = _key(self.row, len(self._names), self.name_code)
        tool_keys = _key(pc.list_parent_indices(self._tools), len(self._names),
                         codes[len(items):])
        tool_at = pc.subtract(_int(len(tools) - 1),
                              pc.index_in(self.key, value_set=tool_keys[::-1]))
        declared = pc.equal(sources.to_arrow().cast(_TEXT), _str(_DECLARED))
        self.is_unknown = pc.and_(pc.take(declared, self.row), pc.is_null(tool_at))
        # Each distinct (schema, arguments) pair is numbered: `pair`. Codes are shifted by
        # one: 0 is no schema, or arguments not captured.
        schemas = _field(tools, "parameters").dictionary_encode()
        arguments = _field(items, "arguments").dictionary_encode()
        schema = pc.fill_null(pc.add(pc.take(schemas.indices.cast(pa.int64()), tool_at),
                                     _int(1)), _int(0))
        argument = pc.fill_null(pc.add(arguments.indices.cast(pa.int64()), _int(1)), _int(0))
        self._width = len(arguments.dictionary) + 1
        pair_key = _key(schema, self._width, argument)
        self._pair_keys = pc.unique(pair_key)
        self.pair = pc.index_in(pair_key, value_set=self._pair_keys)
        # Interned: every batch brings its own copy of the same schema texts; the cache of
        # outcomes would otherwise keep one copy per entry, and hash each anew.
        self._schemas = [None, *(sys.intern(s) for s in schemas.dictionary.to_pylist())]
        self._arguments = pa.concat_arrays([pa.nulls(1, _TEXT), arguments.dictionary.cast(_TEXT)])

    def pairs(self) -> tuple[list[str | None], list[str | None]]:
        """The distinct (schema, arguments) texts, by pair number."""
        schema = pc.divide(self._pair_keys, _int(self._width))
        argument = pc.subtract(self._pair_keys, pc.multiply(schema, _int(self._width)))
        schemas = self._schemas
        return ([schemas[s] for s in schema.to_pylist()],
                pc.take(self._arguments, argument).to_pylist())

    def plain_entries(self) -> pa.Array:
        """Per call, its entry in details were it valid and without notes: it depends only
        on the call's index and name, so `_call_verdict` writes each distinct one once."""
        width = len(self._names)
        combination = _key(self.index, width, self.name_code)
        distinct = pc.unique(combination)
        written = [orjson.dumps(_call_verdict(code // width, self._names[code % width], [],
                                              _PLAIN)[0]).decode()
                   for code in distinct.to_pylist()]
        return pc.take(pa.array(written, _TEXT), pc.index_in(combination, value_set=distinct))

    def earlier_duplicates(self, canonical: pa.Array) -> pa.Array:
        """Per call, the index of the earlier call it duplicates (the rule: the
        latest earlier call with the same tool and canonical arguments, if it did not
        fail), else null."""
        n = len(self.key)
        if n < 2:
            return pa.nulls(n, pa.int64())
        same = _key(self.key, int(pc.max(canonical).as_py()) + 1, canonical)
        order = pc.sort_indices(pa.table({"same": same, "at": _positions(n)}),
                                sort_keys=[("same", "ascending"), ("at", "ascending")])
        keys = pc.take(same, order)
        before = pc.and_(pc.equal(keys[1:], keys[:-1]),
                         pc.invert(pc.take(self.failed, order[:-1])))
        earlier = pc.if_else(before, pc.take(self.index, order[:-1]),
                             pa.scalar(None, pa.int64()))
        # Back from sorted order to call order.
        return pc.take(pa.concat_arrays([pa.nulls(1, pa.int64()), earlier]),
                       pc.sort_indices(order))

    def unknown_tools(self) -> pa.Array:
        """Per call, the violation of a call to a tool the turn does not declare, else null."""
        at = pc.indices_nonzero(self.is_unknown)
        if not len(at):
            return pa.nulls(len(self.key), _TEXT)
        found = [_unknown_tool(self._names[code], self._declared(row)) for row, code in zip(
            pc.take(self.row, at).to_pylist(), pc.take(self.name_code, at).to_pylist(),
            strict=True)]
        return pc.replace_with_mask(pa.nulls(len(self.key), _TEXT), self.is_unknown,
                                    pa.array(found, _TEXT))

    def notes(self, outcomes: list[_Outcome], by_pair: pa.Array) -> pa.Array:
        """Per call, its entry's notes as JSON (`,"notes":[...]`, or empty); the note on
        an unusable schema names the tool, so it is written per call."""
        missing = pc.is_null(by_pair)
        at = pc.indices_nonzero(missing)
        if not len(at):
            return by_pair
        found = [_notes_json(_notes(self._names[code], outcomes[pair].uncaptured,
                                    outcomes[pair].unusable)) for code, pair in zip(
            pc.take(self.name_code, at).to_pylist(), pc.take(self.pair, at).to_pylist(),
            strict=True)]
        return pc.replace_with_mask(by_pair, missing, pa.array(found, _TEXT))

    def _declared(self, row: int) -> list[str]:
        tools = self._tools[row].values
        return [] if tools is None else tools.field("name").to_pylist()


class _PerCall:
    """Per call, what its pair's outcome holds for the columnar path."""

    def __init__(self, outcomes: list[_Outcome], pair: pa.Array) -> None:
        def column(field: str) -> pa.Array:
            return pa.array(list(map(attrgetter(field), outcomes)), _TEXT)

        self.text = pc.take(column("text"), pair)
        self.json = pc.take(column("as_json"), pair)
        self.notes = pc.take(column("notes_json"), pair)
        canonical = pa.array(list(map(attrgetter("canonical"), outcomes)),
                             pa.binary()).dictionary_encode()
        self.canonical = pc.take(canonical.indices.cast(pa.int64()), pair)


def _list_array(turns: pl.DataFrame, name: str) -> Any:
    """A list-of-structs column (`calls`, `tools`) as one Arrow array."""
    # At the newest compat level polars hands its string views over as they are; the
    # default converts every text of the struct (call results too) to `large_string`,
    # which costs more than checking the calls. Only the fields read are converted.
    arr: Any = turns.get_column(name).to_arrow(compat_level=pl.CompatLevel.newest())
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _field(items: Any, name: str) -> pa.Array:
    """A text field of the items, as string views."""
    found = items.field(name)
    return found if found.type == pa.string_view() else found.cast(pa.string_view())


def _offsets(counts: pa.Array) -> pa.Array:
    """Where each row's items start, and the last one ends, for rows of `counts` items."""
    return pa.concat_arrays([pa.array([0], pa.int64()),
                             pc.cumulative_sum(counts.cast(pa.int64()))])


def _positions(n: int) -> pa.Array:
    return pl.int_range(0, n, dtype=pl.Int64, eager=True).to_arrow()


def _key(major: pa.Array, width: int, minor: pa.Array) -> pa.Array:
    """`major * width + minor`: one integer for a pair of codes (`minor` < `width`).
    Checked: an overflow raises (the batch's turns become error rows), never aliases."""
    return pc.add_checked(pc.multiply_checked(major, _int(width)), minor)


def _concat(*parts: str | pa.Array) -> pa.Array:
    """Texts (columns, or literals) joined element-wise; null where a column is null."""
    return pc.binary_join_element_wise(
        *(_str(p) if isinstance(p, str) else p for p in parts), _str(""))


def _joined(separator: str, *parts: pa.Array) -> pa.Array:
    """The non-null texts of `parts` joined by `separator`, element-wise ("" if none)."""
    # Each part brings its own separator, and the first is cut off.
    prefixed = [pc.fill_null(_concat(separator, p), _str("")) for p in parts]
    return pc.utf8_slice_codeunits(_concat(*prefixed), start=len(separator))


def _json_each(texts: pa.Array) -> pa.Array:
    """Each text as a JSON string (nulls stay null)."""
    present = pc.is_valid(texts)
    at = pc.indices_nonzero(present)
    if not len(at):
        return texts
    encoded = [orjson.dumps(t).decode() for t in pc.take(texts, at).to_pylist()]
    return pc.replace_with_mask(texts, present, pa.array(encoded, _TEXT))


def _int(n: int) -> pa.Scalar:
    # Typed scalars: given a bare Python value, pyarrow tries its optional converters
    # (a failed import of dateutil on each call).
    return pa.scalar(n, pa.int64())


def _str(text: str) -> pa.Scalar:
    return pa.scalar(text, _TEXT)


def _view(text: str) -> pa.Scalar:
    return pa.scalar(text, pa.string_view())


_FALSE = pa.scalar(False, pa.bool_())

