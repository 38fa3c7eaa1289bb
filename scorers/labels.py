"""Reading labelled cases from JSONL, JSON, CSV or Parquet files.

One row is one case. Fields (all but `input` optional):

| field | meaning |
|---|---|
| `id` (or `case_id`) | the case id turns carry; default: a stable hash of the normalised input |
| `input` | the request text; turns without a case id join on it, normalised |
| `canary` | a string or a list: values only a tool call can produce |
| `ideal_response`, `match_mode` | the reference answer; `exact`, `normalized` or `contains` |
| `expected_tools`, `expected_tools_mode` | tool names; `any`, `all`, `exact` or `ordered` |
| `should_decline` | true when the agent should decline (with no expected tools: no calls) |
| `tags` | free labels |

In CSV, list fields are JSON arrays (`["a","b"]`) or `|`-separated (`a|b`). A malformed
row becomes a `LabelError` naming the file and line (or row); the other rows load.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import polars as pl

from turnscore.scorers.base import Case
from turnscore.scorers.text import normalize_series

log = logging.getLogger(__name__)

FIELDS = ("id", "case_id", "input", "canary", "ideal_response", "match_mode", "expected_tools",
          "expected_tools_mode", "should_decline", "tags")
SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")
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


class _RowError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class _Row:
    line: int
    values: dict[str, object]


def read_labels(path: str | Path) -> tuple[list[Case], list[LabelError]]:
    """Every well-formed case in `path`, and one error per malformed row."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        return [], [LabelError(str(path), None, f"unsupported label file type {suffix!r} "
                                                f"(use one of {', '.join(SUFFIXES)})")]
    errors: list[LabelError] = []
    try:
        rows = list(_rows(path, suffix, errors))
    except (OSError, pl.exceptions.PolarsError, orjson.JSONDecodeError) as exc:
        return [], [LabelError(str(path), None, f"cannot read: {exc}")]

    parsed: list[tuple[int, dict[str, object]]] = []
    for row in rows:
        try:
            parsed.append((row.line, _fields(row.values, text_lists=suffix == ".csv")))
        except _RowError as exc:
            errors.append(LabelError(str(path), row.line, str(exc)))

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
    else:
        frame = (pl.read_csv(path, infer_schema=False) if suffix == ".csv"
                 else pl.read_parquet(path))
        # CSV: line 1 is the header (a quoted field spanning lines shifts later numbers).
        offset = 2 if suffix == ".csv" else 1
        for number, value in enumerate(frame.iter_rows(named=True), start=offset):
            yield _Row(number, value)


def _fields(values: dict[str, object], *, text_lists: bool) -> dict[str, object]:
    unknown = sorted(k for k in values if k not in FIELDS)
    if unknown:
        log.debug("ignoring label fields %s", unknown)
    text = _text(values.get("input"), "input")
    if text is None or not text.strip():
        raise _RowError("missing required field 'input'")
    case_id = values.get("id", values.get("case_id"))
    return {
        "case_id": _text(case_id, "id"),
        "input": text,
        "canary": _list(values.get("canary"), "canary", text_lists),
        "ideal_response": _text(values.get("ideal_response"), "ideal_response"),
        "match_mode": _text(values.get("match_mode"), "match_mode"),
        "expected_tools": _list(values.get("expected_tools"), "expected_tools", text_lists),
        "expected_tools_mode": _text(values.get("expected_tools_mode"), "expected_tools_mode"),
        "should_decline": _bool(values.get("should_decline")),
        "tags": _list(values.get("tags"), "tags", text_lists) or (),
    }


def _text(value: object, name: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip() and name != "input"):
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _RowError(f"field {name!r} must be a string, got {type(value).__name__}")
    return str(value)


def _list(value: object, name: str, text_lists: bool) -> tuple[str, ...] | None:
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
        else:
            return (value,)
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
