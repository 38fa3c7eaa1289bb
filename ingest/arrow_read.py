"""OTLP/JSON trace files read by pyarrow's JSON reader into a `SPAN_TABLE` (the columnar path).

`read_span_table` parses a file in C++ (both cores for JSON Lines), flattens requests ->
resourceSpans -> scopeSpans -> spans with Arrow compute and checks, column by column, that
every span reads exactly as `turnscore.ingest.otlp.read_file` would read it, without one
problem to report. Anything else gives None and the caller reads the file the plain way,
which reports what is wrong. None is always safe: a false alarm only costs speed, so the
checks are cheap and conservative. Among what goes the plain way:
- damaged compression, protobuf, not JSON, invalid UTF-8, a top-level array;
- not one JSON object per non-blank line, unless the whole file is one object;
- an explicit `null` as a value (pyarrow cannot tell it from an absent member; the plain
  reader can). A number beyond 64 bits needs no check of its own: where the schema
  has an integer pyarrow refuses it, and as a doubleValue both read the same double;
- anything pyarrow refuses against `OTLP_JSON_SCHEMA` (unknown or snake_case field, value
  of another type, duplicate key, lone surrogate, AnyValue nested deeper), logs included;
- a trace/span id that is not hex of its size or is zero, a malformed parent id, a time
  that is not a decimal string in int64 range, a start before 2000 or an end before the
  start (reported though kept), a kind or status code the protos don't
  name, an AnyValue with two members, a string or bytes value over
  `MAX_ATTRIBUTE_VALUE_CHARS`, an intValue beyond int64, a non-finite doubleValue,
  bytesValue that is not base64, an attribute entry without a key.

`raw_spans` turns such a table into the `RawSpan`s `read_file` yields, equal field by field.
The checks and the decoding mirror each other, hence one module of some length.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import reduce
from itertools import accumulate, islice, starmap
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from turnscore.ingest import anyvalue, formats
from turnscore.ingest.otlp_shared import (
    EARLIEST_UNIX_NANO,
    SPAN_ID_BYTES,
    SPAN_KINDS,
    STATUS_CODES,
    TRACE_ID_BYTES,
)
from turnscore.ingest.records import AttrValue, RawEvent, RawSpan
from turnscore.ingest.span_table import OTLP_JSON_SCHEMA, SPAN_TABLE

__all__ = ["raw_spans", "read_span_table"]

logger = logging.getLogger(__name__)

_BOM = b"\xef\xbb\xbf"
_WS = b" \t\r\n"
_NON_SPACE = re.compile(rb"[^ \t\r\n]")
_NON_BLANK = re.compile(rb"[^ \t\r]")
"""A line holding only these is blank to `fast_json._lines` (which splits on \\n only)."""
_MIN_BLOCK = 1 << 20
"""Bytes per parse block at least; a block holds whole lines, so JSON Lines files of a
few MB and up are parsed on all cores."""
_LOOK_BACK = 64
"""Bytes looked at before a `null` to tell a value from text."""
_UINT = "^[0-9]+$"
_INT = "^-?[0-9]+$"
_MEMBERS = ("stringValue", "boolValue", "intValue", "doubleValue", "bytesValue")
_NESTED = ("arrayValue", "kvlistValue")
_EVENT_TYPE = SPAN_TABLE.field("events").type.value_type


class _Unfit(Exception):
    """The file needs the plain reader."""


def read_span_table(path: Path, limits: formats.Limits = formats.DEFAULT_LIMITS) -> pa.Table | None:
    """The file's spans as a `SPAN_TABLE`, in `read_file` order; None when the file needs
    the plain reader (see the module docstring)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return _span_table(data, str(path), limits)
    except (_Unfit, pa.ArrowInvalid):
        return None
    except Exception:  # a bug here must not lose the file: the plain reader reads it
        logger.exception("%s: the columnar reader failed; reading it the plain way", path)
        return None


# --- the bytes --------------------------------------------------------------------------


def _span_table(data: bytes, source: str, limits: formats.Limits) -> pa.Table:
    payload, problems = formats.decompress(data, limits)
    if problems or formats.sniff_protobuf(payload, name_hint=Path(source).name) is not None:
        raise _Unfit
    payload = payload.removeprefix(_BOM)
    start = _NON_SPACE.search(payload)
    if start is None or payload[start.start()] != ord("{"):
        raise _Unfit  # not JSON, or a top-level array (positions 'request N')
    if not payload.isascii():
        try:
            payload.decode("utf-8")
        except UnicodeDecodeError:
            raise _Unfit from None
    if _has_null(payload):
        raise _Unfit
    lines, longest, aligned = _document_lines(payload)
    # Aligned lines are read in blocks of whole lines (all cores); anything else (a
    # pretty-printed request) in one block, where pyarrow counts the documents itself.
    block = max(longest + 2, _MIN_BLOCK) if aligned else len(payload) + 2
    requests = pajson.read_json(
        pa.BufferReader(payload),
        read_options=pajson.ReadOptions(block_size=block, use_threads=True),
        parse_options=pajson.ParseOptions(
            explicit_schema=OTLP_JSON_SCHEMA, unexpected_field_behavior="error"
        ),
    )
    if aligned and requests.num_rows == len(lines):
        positions = [f"line {n}" for n in lines]
    elif not aligned and requests.num_rows == 1:  # as `fast_json._whole` numbers it
        positions = [f"line {lines[0]}" if len(lines) == 1 else f"request 1 (line {lines[0]})"]
    else:
        raise _Unfit  # several documents on a line, or pretty-printed ones back to back
    return _flatten(requests.column("resourceSpans").combine_chunks(), positions, source)


def _document_lines(payload: bytes) -> tuple[list[int], int, bool]:
    """Numbers of the non-blank lines (counting blank ones, as `fast_json._lines` does),
    the longest line's length, and whether every non-blank line starts with `{` and ends
    with `}`. A Python step per line, not per byte or span.

    Aligned lines hold whole documents: a line break lies between tokens (JSON strings
    hold no raw newline), and inside a document a `}` is never followed by a `{`. So when
    pyarrow then counts as many documents as lines, each line holds exactly one.
    """
    lines: list[int] = []
    aligned = True
    longest = pos = number = 0
    size = len(payload)
    while pos < size:
        end = payload.find(b"\n", pos)
        if end < 0:
            end = size
        number += 1
        first = _NON_BLANK.search(payload, pos, end)
        if first is not None:
            lines.append(number)
            aligned = (
                aligned
                and payload[first.start()] == ord("{")
                and payload[max(pos, end - 16) : end].rstrip(b" \t\r").endswith(b"}")
            )
        longest = max(longest, end - pos)
        pos = end + 1
    return lines, longest, aligned


def _has_null(payload: bytes) -> bool:
    """Whether a JSON `null` may stand as a value. One in a string (embedded JSON, prose)
    is told apart where cheap: after `:`, a real one follows a key's closing quote, which
    no backslash escapes. After `[` or `,`, or without context, it counts: a false alarm
    at worst. Looks a few bytes back per occurrence, never over the whole prefix."""
    pos = payload.find(b"null")
    while pos >= 0:
        before = payload[max(0, pos - _LOOK_BACK) : pos].rstrip(_WS)
        if not before or before.endswith((b"[", b",")):
            return True
        if before.endswith(b":"):
            key_end = before[:-1].rstrip(_WS)
            if not key_end:
                return True
            if key_end.endswith(b'"'):  # else the colon is inside a string
                body = key_end[:-1]
                escapes = len(body) - len(body.rstrip(b"\\"))
                if escapes % 2 == 0 or escapes == len(body):
                    return True
        pos = payload.find(b"null", pos + 4)
    return False


# --- requests -> spans ------------------------------------------------------------------


def _field(array: pa.StructArray, name: str) -> pa.Array:
    """A struct's child with the struct's own nulls applied (`.field` ignores them)."""
    index = array.type.get_field_index(name)
    if index < 0:
        raise KeyError(name)
    return array.flatten()[index]


def _flatten(resource_spans: pa.ListArray, positions: list[str], source: str) -> pa.Table:
    resources = pc.list_flatten(resource_spans)
    request_of_resource = pc.list_parent_indices(resource_spans)
    scope_spans_list = _field(resources, "scopeSpans")
    scope_spans = pc.list_flatten(scope_spans_list)
    resource_of_scope = pc.list_parent_indices(scope_spans_list)
    spans_list = _field(scope_spans, "spans")
    spans = pc.list_flatten(spans_list)
    scope_of_span = pc.list_parent_indices(spans_list)
    resource_of_span = pc.take(resource_of_scope, scope_of_span)
    request_of_span = pc.take(request_of_resource, resource_of_span)

    scope = _field(scope_spans, "scope")
    resource_attrs = _field(_field(resources, "resource"), "attributes")
    span_attrs = _field(spans, "attributes")
    status = _field(spans, "status")
    events = _events(_field(spans, "events"))
    for attrs in (span_attrs, resource_attrs):
        _check_key_values(attrs)

    start, end = _uint(_field(spans, "startTimeUnixNano")), _uint(_field(spans, "endTimeUnixNano"))
    if not _all(pc.greater_equal(start, EARLIEST_UNIX_NANO)) or not _all(
        pc.greater_equal(end, start)
    ):
        raise _Unfit  # kept, but reported
    columns = {
        "trace_id": _id(_field(spans, "traceId"), TRACE_ID_BYTES, required=True),
        "span_id": _id(_field(spans, "spanId"), SPAN_ID_BYTES, required=True),
        "parent_span_id": _id(_field(spans, "parentSpanId"), SPAN_ID_BYTES, required=False),
        "name": pc.fill_null(_field(spans, "name"), ""),
        "kind": _enum(_field(spans, "kind"), SPAN_KINDS.values()),
        "start_unix_nano": start,
        "end_unix_nano": end,
        "status_code": _enum(_field(status, "code"), STATUS_CODES.values()),
        "status_message": pc.fill_null(_field(status, "message"), ""),
        "attributes": span_attrs,
        "events": events,
        "resource": pc.take(resource_attrs, resource_of_span),
        "scope_name": pc.take(pc.fill_null(_field(scope, "name"), ""), scope_of_span),
        "scope_version": pc.take(pc.fill_null(_field(scope, "version"), ""), scope_of_span),
        "source": pa.array([source] * len(spans), pa.string()),
        "position": pc.take(pa.array(positions, pa.string()), request_of_span),
    }
    return pa.Table.from_arrays(
        [pc.cast(columns[f.name], f.type) for f in SPAN_TABLE], schema=SPAN_TABLE
    )


def _id(ids: pa.Array, size: int, *, required: bool) -> pa.Array:
    """Lowercase hex; null for an unset parent (absent, empty or zero, as the plain reader
    reads it). A missing or zero trace/span id, or any id not hex of `size` bytes, would be
    reported: unfit."""
    if required and ids.null_count:
        raise _Unfit
    if not required:
        ids = pc.if_else(pc.equal(ids, ""), pa.scalar(None, pa.string()), ids)
    if not _all(pc.match_substring_regex(ids.drop_null(), f"^[0-9a-fA-F]{{{2 * size}}}$")):
        raise _Unfit
    lower = pc.utf8_lower(ids)
    zero = pc.equal(lower, "0" * 2 * size)
    if required:
        if pc.any(zero).as_py():
            raise _Unfit
        return lower
    return pc.if_else(pc.fill_null(zero, False), pa.scalar(None, pa.string()), lower)


def _uint(times: pa.Array) -> pa.Array:
    """Nanoseconds from decimal strings; absent or "" is 0 as in `_json_uint`. Anything
    else, or beyond int64, is unfit."""
    times = pc.fill_null(times, "")
    times = pc.if_else(pc.equal(times, ""), "0", times)
    if not _all(pc.match_substring_regex(times, _UINT)):
        raise _Unfit
    return pc.cast(times, pa.int64())  # ArrowInvalid beyond int64: unfit


def _enum(values: pa.Array, known: Iterable[int]) -> pa.Array:
    """Absent is 0 (unspecified); a number the protos don't name is unfit (the plain reader
    keeps or reports it)."""
    values = pc.fill_null(values, 0)
    if not _all(pc.is_in(values, pa.array(sorted(set(known)), pa.int64()))):
        raise _Unfit
    return values


def _events(events: pa.ListArray) -> pa.ListArray:
    flat = pc.list_flatten(events)
    attrs = _field(flat, "attributes")
    _check_key_values(attrs)
    rows = pa.StructArray.from_arrays(
        [pc.fill_null(_field(flat, "name"), ""), _uint(_field(flat, "timeUnixNano")), attrs],
        fields=list(_EVENT_TYPE),
    )
    return pa.ListArray.from_arrays(_offsets(events), rows, type=pa.list_(_EVENT_TYPE))


def _offsets(lists: pa.ListArray) -> pa.Array:
    """Offsets into `list_flatten(lists)`; a null list becomes an empty one."""
    lengths = pc.fill_null(pc.list_value_length(lists), 0)
    return pa.concat_arrays(
        [pa.array([0], pa.int32()), pc.cumulative_sum(lengths).cast(pa.int32())]
    )


def _all(mask: pa.Array) -> bool:
    """Every value true; a null (a value the check could not judge) counts as false."""
    return bool(pc.all(pc.fill_null(mask, False), min_count=0).as_py())


# --- AnyValue checks --------------------------------------------------------------------


def _check_key_values(lists: pa.ListArray) -> None:
    """Unfit unless every entry reads without a report and with its key present."""
    flat = pc.list_flatten(lists)
    if _field(flat, "key").null_count:
        raise _Unfit
    values = _field(flat, "value")
    _check_scalars(values)
    array = _field(values, "arrayValue")
    _check_scalars(pc.list_flatten(_field(array, "values")))
    pairs = pc.list_flatten(_field(_field(values, "kvlistValue"), "values"))
    if _field(pairs, "key").null_count:
        raise _Unfit
    _check_scalars(_field(pairs, "value"))


def _check_scalars(values: pa.StructArray) -> None:
    """At most one member set; strings and bytes within the limit; intValue an int64
    written in decimal; doubleValue finite; bytesValue base64 as `decode_json_bytes` reads it."""
    names = [f.name for f in values.type]
    members = values.flatten()
    set_count = reduce(pc.add, [pc.cast(member.is_valid(), pa.int8()) for member in members])
    if len(values) and pc.max(set_count).as_py() > 1:
        raise _Unfit
    by_name = dict(zip(names, members, strict=True))
    text = by_name["stringValue"]
    if text.null_count < len(text):
        longest = pc.max(pc.utf8_length(text)).as_py()
        if longest is not None and longest > anyvalue.MAX_ATTRIBUTE_VALUE_CHARS:
            raise _Unfit
    ints = by_name["intValue"]
    if ints.null_count < len(ints):
        if not _all(pc.match_substring_regex(ints.drop_null(), _INT)):
            raise _Unfit
        pc.cast(ints, pa.int64())  # ArrowInvalid beyond int64: unfit
    doubles = by_name["doubleValue"]
    if doubles.null_count < len(doubles) and not _all(pc.is_finite(doubles.drop_null())):
        raise _Unfit  # NaN/Infinity tokens: the plain reader's NaN would never compare equal
    for raw in by_name["bytesValue"].drop_null().to_pylist():
        try:
            decoded = anyvalue.decode_json_bytes(raw)
        except anyvalue.AnyValueError:
            raise _Unfit from None
        if len(decoded) > anyvalue.MAX_ATTRIBUTE_VALUE_CHARS:
            raise _Unfit


# --- table -> RawSpan -------------------------------------------------------------------


def raw_spans(table: pa.Table) -> list[RawSpan]:
    """The rows of a `SPAN_TABLE` as `RawSpan`s, equal to what `read_file` yields.

    Column by column: each column is converted once with `to_pylist`; attribute dicts are
    cut out of flat key/value lists. Consecutive spans of one resource share its dict.
    """
    t = table.combine_chunks()
    columns = [_COLUMN_DECODERS.get(name, _plain)(_chunk(t, name)) for name in SPAN_TABLE.names]
    return list(starmap(RawSpan, zip(*columns, strict=True)))  # columns in field order


def _plain(column: pa.Array) -> list[Any]:
    return column.to_pylist()  # type: ignore[no-any-return]


def _chunk(table: pa.Table, name: str) -> pa.Array:
    column = table.column(name)
    return column.chunk(0) if column.num_chunks else pa.array([], column.type)


def _event_tuples(events: pa.ListArray) -> Iterator[tuple[RawEvent, ...]]:
    flat = pc.list_flatten(events)
    if not len(flat):
        yield from (() for _ in range(len(events)))
        return
    records = iter(
        [
            RawEvent(name=name, time_unix_nano=time, attributes=attributes)
            for name, time, attributes in zip(
                _field(flat, "name").to_pylist(),
                _field(flat, "time_unix_nano").to_pylist(),
                _key_value_dicts(_field(flat, "attributes")),
                strict=True,
            )
        ]
    )
    for length in pc.fill_null(pc.list_value_length(events), 0).to_pylist():
        yield tuple(islice(records, length))


def _key_value_dicts(lists: pa.ListArray, share: bool = False) -> list[dict[str, AttrValue]]:
    """One dict per row (an absent list is empty); a later duplicate key wins, as in
    `decode_json_key_values`. With `share`, a row equal to the one before (same keys, and
    values of the same types) gets the same dict object."""
    flat = pc.list_flatten(lists)
    keys = _field(flat, "key").to_pylist()
    any_values = _field(flat, "value")
    values = _any_values(any_values)
    lengths = pc.fill_null(pc.list_value_length(lists), 0).to_pylist()
    # Comparing nested values could take [1] for [True]; never share those.
    if not share or any(_field(any_values, name).null_count < len(flat) for name in _NESTED):
        pairs = zip(keys, values, strict=True)
        return [dict(islice(pairs, n)) for n in lengths]
    out: list[dict[str, AttrValue]] = []
    previous: tuple[list[Any], list[Any], list[type]] | None = None
    current: dict[str, AttrValue] = {}
    for start, n in zip(accumulate(lengths, initial=0), lengths, strict=False):
        row_values = values[start : start + n]
        row = (keys[start : start + n], row_values, list(map(type, row_values)))
        if row != previous or float in row[2]:  # 0.0 == -0.0: floats are never shared
            current = dict(zip(row[0], row_values, strict=True))
            previous = row
        out.append(current)
    return out


def _any_values(values: pa.StructArray) -> list[AttrValue]:
    """Decoded AnyValues, as `decode_json_any_value` reads them (none set: None). The
    scalar member most values use is converted as a whole column; the others are patched
    in at their rows."""
    members = {
        f.name: member
        for f, member in zip(values.type, values.flatten(), strict=True)
        if member.null_count < len(member)
    }
    scalars = [name for name in _MEMBERS[:4] if name in members]
    if not scalars:
        out: list[AttrValue] = [None] * len(values)
    else:
        base = max(scalars, key=lambda name: len(values) - members[name].null_count)
        out = _member_values(base, members.pop(base))
    for name, member in members.items():
        present = member.is_valid()
        where = pc.indices_nonzero(present).to_pylist()
        for i, value in zip(where, _member_values(name, member.filter(present)), strict=True):
            out[i] = value
    return out


def _member_values(name: str, member: pa.Array) -> list[AttrValue]:
    """One AnyValue member's values decoded (a null stays None)."""
    if name == "intValue":
        return pc.cast(member, pa.int64()).to_pylist()  # type: ignore[no-any-return]
    if name == "bytesValue":
        return [anyvalue.decode_json_bytes(raw) for raw in member.to_pylist()]
    if name == "arrayValue":
        items = _field(member, "values")
        flat = _any_values(pc.list_flatten(items))
        lengths = pc.fill_null(pc.list_value_length(items), 0).to_pylist()
        it = iter(flat)
        return [list(islice(it, n)) for n in lengths]
    if name == "kvlistValue":
        return _key_value_dicts(_field(member, "values"))  # type: ignore[return-value]
    return member.to_pylist()  # type: ignore[no-any-return]


_COLUMN_DECODERS: dict[str, Callable[[pa.Array], Sequence[Any]]] = {
    "attributes": _key_value_dicts,
    "events": lambda events: list(_event_tuples(events)),
    "resource": lambda resource: _key_value_dicts(resource, share=True),
}
"""Columns that need more than `to_pylist`; the rest convert as they are."""
