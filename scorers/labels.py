"""Reading labelled cases from JSONL, JSON, CSV or Parquet files.

One row is one case. Fields (all but `input` optional):

| field | meaning |
|---|---|
| `id` (or `case_id`) | the case id turns carry; default: a stable hash of the normalised input |
| `input` | the request text; turns without a case id join on it, normalised |
| `canary` | a string or a list of strings: values only a tool call can produce |
| `ideal_response` | the reference answer (a string) |
| `match_mode` | `exact`, `normalized` (the default) or `contains` (`correctness.MODES`) |
| `expected_tools` | a list of tool names |
| `expected_tools_mode` | `any`, `all` (the default), `exact` or `ordered` (`call_accuracy.MODES`) |
| `should_decline` | true when the agent should decline (with no expected tools: no calls) |
| `tags` | free labels: a string or a list of strings |

Every value is checked here, at load, against what the scorers accept (modes in any
case, stored lowercase). In CSV, list fields are JSON arrays (`["a","b"]`) or
`|`-separated (`a|b`). A malformed row (bad JSON or CSV, a value of the wrong type, a CSV
row with more fields than the header) becomes a `LabelError` naming the file and line
(or row) and what is wrong; the other rows load.

Two things are warnings (`LabelWarning`), not bad rows, because the case is still
usable: an unknown mode is loaded as written and its scorer falls back to its default
(`normalized`, `all`) and says so, as the scorers' definitions promise; a field that is
no label field (a typo such as `expected_tool`) is ignored, named once per file.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import orjson
import polars as pl

from turnscore.scorers import call_accuracy, correctness
from turnscore.scorers.base import Case
from turnscore.scorers.text import normalize_series

log = logging.getLogger(__name__)
_T = TypeVar("_T")

FIELDS = ("id", "case_id", "input", "canary", "ideal_response", "match_mode", "expected_tools",
          "expected_tools_mode", "should_decline", "tags")
SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")
MODES: dict[str, tuple[str, ...]] = {
    "match_mode": correctness.MODES,
    "expected_tools_mode": call_accuracy.MODES,
}
"""The values each mode field may take: the modes its scorer knows."""
DEFAULT_MODES: dict[str, str] = {
    "match_mode": correctness.DEFAULT_MODE,
    "expected_tools_mode": call_accuracy.DEFAULT_MODE,
}
"""What each scorer uses for a mode it does not know."""
_TRUE = frozenset({"true", "yes", "y", "1", "t"})
_FALSE = frozenset({"false", "no", "n", "0", "f"})


@dataclass(frozen=True, slots=True)
class LabelError:
    """A label row (or file) that could not be read."""

    path: str
    line: int | None
    """Line in JSONL/CSV, row (from 1) in Parquet and JSON arrays; None for the whole file."""
    message: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class LabelWarning(LabelError):
    """A label row loaded with something worth fixing: an unknown mode, an unknown field."""


class _RowError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class _Row:
    line: int
    values: dict[str, object]


def read_labels(path: str | Path, warnings: list[LabelWarning] | None = None
                ) -> tuple[list[Case], list[LabelError]]:
    """Every well-formed case in `path`, and one error per malformed row; the warnings
    about loaded rows are appended to `warnings` when given."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        return [], [LabelError(str(path), None, f"unsupported label file type {suffix!r} "
                                                f"(use one of {', '.join(SUFFIXES)})")]
    errors: list[LabelError] = []
    try:
        rows = list(_rows(path, suffix, errors))
    except (OSError, ValueError, pl.exceptions.PolarsError) as exc:
        return [], [LabelError(str(path), None, f"cannot read: {exc}")]

    parsed: list[tuple[int, dict[str, object]]] = []
    found: list[LabelWarning] = []
    unknown_fields: set[str] = set()
    for row in rows:
        notes: list[str] = []
        unknown = sorted(k for k in row.values if k not in FIELDS and k not in unknown_fields)
        if unknown:
            unknown_fields.update(unknown)
            notes.append(f"not label field(s), ignored (here and in the rest of the file): "
                         f"{', '.join(map(repr, unknown))}; label fields: {', '.join(FIELDS)}")
        try:
            parsed.append((row.line, _fields(row.values, notes, text_lists=suffix == ".csv")))
        except _RowError as exc:
            errors.append(LabelError(str(path), row.line, str(exc)))
        found.extend(LabelWarning(str(path), row.line, note) for note in notes)
    if warnings is not None:
        warnings.extend(found)

    inputs = pl.Series("input", [str(p["input"]) for _, p in parsed], dtype=pl.String)
    normalized = normalize_series(inputs).to_list()
    cases: list[Case] = []
    first_line: dict[str, int] = {}
    for (line, values), norm in zip(parsed, normalized, strict=True):
        case_id = str(values.pop("case_id", None) or default_case_id(norm))
        if case_id in first_line:
            errors.append(LabelError(str(path), line, f"duplicate id {case_id!r} (first at "
                                     f"line {first_line[case_id]}); row skipped"))
            continue
        first_line[case_id] = line
        cases.append(Case(case_id=case_id, **values))  # type: ignore[arg-type]
    errors.sort(key=lambda e: e.line or 0)
    log.info("%s: %d cases, %d errors", path, len(cases), len(errors))
    return cases, errors


def default_case_id(input_norm: str) -> str:
    """The id of a case without one: stable across files and runs for the same input."""
    return "case-" + hashlib.sha256(input_norm.encode()).hexdigest()[:16]


def _rows(path: Path, suffix: str, errors: list[LabelError]) -> Iterator[_Row]:
    if suffix in (".jsonl", ".ndjson"):
        # Line by line, not pl.read_ndjson: one bad line must not lose the file.
        with path.open("rb") as f:
            for number, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                try:
                    value = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    errors.append(LabelError(str(path), number, f"not valid JSON: {exc}"))
                    continue
                if not isinstance(value, dict):
                    errors.append(LabelError(str(path), number,
                                             f"expected a JSON object, got {type(value).__name__}"))
                    continue
                yield _Row(number, value)
    elif suffix == ".json":
        data = orjson.loads(path.read_bytes())
        items = data if isinstance(data, list) else [data]
        for number, value in enumerate(items, start=1):
            if isinstance(value, dict):
                yield _Row(number, value)
            else:
                errors.append(LabelError(str(path), number,
                                         f"expected a JSON object, got {type(value).__name__}"))
    elif suffix == ".csv":
        yield from _csv_rows(path, errors)
    else:
        for number, value in enumerate(pl.read_parquet(path).iter_rows(named=True), start=1):
            yield _Row(number, value)


class _Lines:
    """The file's lines, for `csv.reader`, with the position to restart from."""

    def __init__(self, lines: list[str]) -> None:
        self.lines, self.at = lines, 0

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        if self.at >= len(self.lines):
            raise StopIteration
        self.at += 1
        return self.lines[self.at - 1]


def _csv_rows(path: Path, errors: list[LabelError]) -> Iterator[_Row]:
    """CSV records, each with the line it starts on. Python's `csv`, record by record, not
    one polars read: a bad record must cost that record only, and be named by its line.

    A record is bad when `csv` (strict) cannot parse it, e.g. an unterminated quote, or
    when it has more non-empty fields than the header (fewer: the missing trailing fields
    are empty).
    Reading then restarts on the line after the bad record's first: a stray quote may
    have swallowed the lines after it.
    """
    # newline="": line ends stay in the lines, for quoted fields spanning lines.
    lines = _Lines(io.StringIO(path.read_text(encoding="utf-8-sig"), newline="").readlines())
    reader = csv.reader(lines, strict=True)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        return
    except csv.Error as exc:
        raise ValueError(f"bad CSV header: {exc}") from exc
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:
        raise ValueError(f"CSV header repeats column(s) {', '.join(repeated)}")
    while True:
        start = lines.at
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            message = f"not valid CSV: {exc}"
        else:
            if not any(field.strip() for field in record):
                continue  # a blank line
            # Empty fields past the header's (trailing commas) carry nothing: not an error.
            if not any(field.strip() for field in record[len(header):]):
                yield _Row(start + 1, dict(zip(header, record, strict=False)))
                continue
            message = (f"{len(record)} fields, the header has {len(header)} "
                       f"(an unquoted comma?)")
        errors.append(LabelError(str(path), start + 1, message))
        lines.at = start + 1
        reader = csv.reader(lines, strict=True)


def _fields(values: dict[str, object], notes: list[str], *, text_lists: bool
            ) -> dict[str, object]:
    """The row's fields, checked; every problem of the row is named in one `_RowError`,
    and what is only worth a warning is appended to `notes`."""
    problems: list[str] = []

    def checked(parse: Callable[[], _T]) -> _T | None:
        try:
            return parse()
        except _RowError as exc:
            problems.append(str(exc))
            return None

    text = checked(lambda: _text(values.get("input"), "input"))
    if (text is None and not problems) or (text is not None and not text.strip()):
        problems.append("missing required field 'input'")
    case_id = checked(lambda: _text(values.get("id"), "id"))
    other_id = checked(lambda: _text(values.get("case_id"), "case_id"))
    if case_id is not None and other_id is not None and case_id != other_id:
        problems.append(f"fields 'id' ({case_id!r}) and 'case_id' ({other_id!r}) differ")
    out: dict[str, object] = {
        "case_id": case_id if case_id is not None else other_id,
        "input": text,
        "canary": checked(lambda: _list(values.get("canary"), "canary", text_lists)),
        "ideal_response": checked(lambda: _text(values.get("ideal_response"),
                                                "ideal_response")),
        "match_mode": checked(lambda: _mode(values.get("match_mode"), "match_mode", notes)),
        "expected_tools": checked(lambda: _list(values.get("expected_tools"),
                                                "expected_tools", text_lists,
                                                one_string=False)),
        "expected_tools_mode": checked(lambda: _mode(values.get("expected_tools_mode"),
                                                     "expected_tools_mode", notes)),
        "should_decline": checked(lambda: _bool(values.get("should_decline"))),
        "tags": checked(lambda: _list(values.get("tags"), "tags", text_lists)) or (),
    }
    if problems:
        raise _RowError("; ".join(problems))
    return out


def _mode(value: object, name: str, notes: list[str]) -> str | None:
    """A mode field, lowercase; None (the scorer's default) when absent or blank. An
    unknown mode is kept as written, for its scorer to fall back from (and say so)."""
    text = _text(value, name)
    if text is None:
        return None
    mode = text.strip().lower()
    if mode not in MODES[name]:
        notes.append(f"unknown {name} {text!r} (known: {', '.join(MODES[name])}); scored "
                     f"as {DEFAULT_MODES[name]}")
        return text.strip()
    return mode


def _text(value: object, name: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip() and name != "input"):
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _RowError(f"field {name!r} must be a string, got {type(value).__name__}")
    return str(value)


def _list(value: object, name: str, text_lists: bool, *, one_string: bool = True
          ) -> tuple[str, ...] | None:
    """A list field. Outside CSV a plain string is a list of one only where `one_string`
    (a canary, a tag); `expected_tools` must be a list, so that a string is never read
    as its characters or silently as one tool."""
    if value is None:
        return None
    if isinstance(value, pl.Series):
        value = value.to_list()
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped:
            return None
        if text_lists and stripped.startswith("["):
            try:
                value = orjson.loads(stripped)
            except orjson.JSONDecodeError as exc:
                raise _RowError(f"field {name!r}: not a JSON array ({exc})") from exc
        elif text_lists:
            return tuple(p.strip() for p in stripped.split("|") if p.strip())
        elif one_string:
            return (value,)
        else:
            raise _RowError(f"field {name!r} must be a list of strings, got a string "
                            f"(write [{orjson.dumps(value).decode()}])")
    if not isinstance(value, (list, tuple)):
        raise _RowError(f"field {name!r} must be a string or a list, got {type(value).__name__}")
    if not all(isinstance(v, str) for v in value):
        raise _RowError(f"field {name!r} must list strings, got {value!r}")
    return tuple(str(v) for v in value)


def _bool(value: object) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if not word:
            return None
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    raise _RowError(f"field 'should_decline' must be true or false, got {value!r}")
