"""The input side of an ingest: which files, in which groups, read and deduplicated.

Helpers of `turnscore.ingest.pipeline`: a file is known by the hash of its bytes (the
same content under another name is the same file); files are read in groups of about a
byte budget; a group's records are deduplicated as they are read (first copy kept, a
differing copy reported), and a file whose reading fails in a way the reader does not
report becomes one error naming it, never a stopped ingest.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from turnscore.ingest.formats import Limits
from turnscore.ingest.otlp import Record, iter_input_files, read_file, unreadable
from turnscore.ingest.records import WHOLE_FILE, InputError, RawLog, RawSpan
from turnscore.ingest.store import RecordKey, record_key

__all__ = [
    "Fresh",
    "IngestedFile",
    "InputFile",
    "SkippedFile",
    "conflicts",
    "dedup_records",
    "file_key",
    "groups",
    "plan",
    "read_into",
    "read_whole",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IngestedFile:
    """A file read in this batch: an `ingested_files` row once the warehouse load commits."""

    file_key: str
    """sha256 of the file's bytes: the same content under another name is the same file."""
    path: Path
    bytes: int
    spans: int
    logs: int
    errors: int


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: Path
    file_key: str
    reason: str


def file_key(path: Path) -> str:
    with open(path, "rb") as fh:  # read into one reused buffer, not a new chunk each time
        return hashlib.file_digest(fh, "sha256").hexdigest()


@dataclass(frozen=True, slots=True)
class InputFile:
    path: Path
    key: str
    size: int


@dataclass(slots=True)
class Fresh:
    """One group's records as read, deduplicated, first copy kept."""

    spans: dict[RecordKey, RawSpan] = field(default_factory=dict)
    logs: dict[RecordKey, RawLog] = field(default_factory=dict)
    sources: set[str] = field(default_factory=set)


def plan(
    paths: Sequence[Path], known: Collection[str], errors: list[InputError]
) -> tuple[list[InputFile], list[SkippedFile]]:
    inputs: list[InputFile] = []
    skipped: list[SkippedFile] = []
    seen: dict[str, Path] = {}
    for path in iter_input_files(paths):
        try:
            key = file_key(path)
            size = path.stat().st_size
        except OSError as exc:
            # Not recorded as ingested: a later run retries it once it is readable.
            errors.append(unreadable(path, exc))
            continue
        if key in known:
            skipped.append(SkippedFile(path, key, "already ingested"))
        elif key in seen:
            skipped.append(SkippedFile(path, key, f"same content as {seen[key]}"))
        else:
            seen[key] = path
            inputs.append(InputFile(path, key, size))
    return inputs, skipped


def groups(inputs: Sequence[InputFile], budget: int) -> Iterator[list[InputFile]]:
    group: list[InputFile] = []
    size = 0
    for item in inputs:
        if group and size + item.size > budget:
            yield group
            group, size = [], 0
        group.append(item)
        size += item.size
    if group:
        yield group


def read_into(
    item: InputFile, fresh: Fresh, errors: list[InputError], limits: Limits
) -> IngestedFile:
    """Read one file into `fresh` (its input errors, and differing copies, into `errors`)."""
    spans = logs = bad = 0
    fresh.sources.add(str(item.path))
    for rec in _records(item.path, limits):
        if isinstance(rec, RawSpan):
            spans += 1
            _keep_first(fresh.spans, rec, errors)
        elif isinstance(rec, RawLog):
            logs += 1
            _keep_first(fresh.logs, rec, errors)
        else:
            bad += 1
            errors.append(rec)
    return IngestedFile(item.key, item.path, item.size, spans, logs, bad)


def _records(path: Path, limits: Limits) -> list[Record]:
    return read_whole(str(path), lambda: read_file(path, limits))


def read_whole(source: str, read: Callable[[], Iterable[Record]]) -> list[Record]:
    """Every record `read` gives for the file `source`, or, when reading it fails in a way
    the reader does not report (a bug, memory), one error naming the file and the failure,
    and none of its records: one file never stops an ingest. The traceback is logged, so
    a bug stays visible."""
    try:
        return list(read())
    except Exception as exc:
        logger.exception("%s: reading the file failed", source)
        failure = f"{type(exc).__name__}: {exc}"[:300]
        return [InputError(source, WHOLE_FILE, f"reading the file failed: {failure}")]


def dedup_records(
    records: Iterable[RawSpan | RawLog],
) -> tuple[list[RawSpan | RawLog], list[InputError]]:
    """One copy per record key, the first of `records` (pass them in input order), and an
    error for each differing copy of a span: `read_into`'s rule, for engines that gather
    a trace's records from many files at once (`turnscore.warehouse.ray_engine`)."""
    kept: dict[RecordKey, RawSpan | RawLog] = {}
    errors: list[InputError] = []
    for rec in records:
        _keep_first(kept, rec, errors)
    return list(kept.values()), errors


def _keep_first(
    kept: dict[RecordKey, Any], rec: RawSpan | RawLog, errors: list[InputError]
) -> None:
    """The rule for copies of a record: the first copy of a record key is kept; a copy of
    a span that differs from it is an error (a log record's key is its content)."""
    first = kept.setdefault(record_key(rec), rec)
    if first is not rec and isinstance(rec, RawSpan) and _content(first) != _content(rec):
        errors.append(_twice(rec, first))


def conflicts(
    fresh: dict[RecordKey, RawSpan], stored: dict[RecordKey, RawSpan]
) -> Iterator[InputError]:
    for key, span in fresh.items():
        old = stored.get(key)
        if old is not None and _content(old) != _content(span):
            yield _copy_error(
                span, f"was already stored with different content (from {old.source}); "
                "kept the stored copy"
            )


def _twice(span: RawSpan, first: RawSpan) -> InputError:
    return _copy_error(
        span, f"arrived twice with different content; kept the first copy (from "
        f"{first.source}, {first.position})"
    )


def _copy_error(span: RawSpan, what: str) -> InputError:
    """A copy of a span that differs from the one kept, and `what` was kept."""
    return InputError(
        span.source,
        span.position,
        f"span {span.span_id} of trace {span.trace_id} {what}",
        span_id=span.span_id,
        trace_id=span.trace_id,
    )


def _content(span: RawSpan) -> RawSpan:
    return replace(span, source="", position="")


