"""Read OTLP trace and log files into raw records (`turnscore.ingest.records`).

`read_file` accepts, detected from content (`turnscore.ingest.formats`):
- OTLP/JSON `ExportTraceServiceRequest` / `ExportLogsServiceRequest` in the spec dialect
  (hex ids, integer enums, int64 as decimal strings, lowerCamelCase) and in protobuf's
  default JSON mapping (base64 ids, enum names, snake_case keys allowed);
- one request, requests back to back, one per line (Collector file exporter), or an array;
- protobuf binary, traces or logs;
- any of these gzip- or zstd-compressed.

Bad input never raises: it becomes an `InputError` naming the file, where (line, request,
byte, span id) and what was wrong, and reading goes on with what can still be trusted.
A span without valid trace/span ids is skipped; an over-long attribute value is cut to
`MAX_ATTRIBUTE_VALUE_CHARS` and reported. Invalid UTF-8 in JSON files is replaced with
U+FFFD and reported once per file.

Records are yielded as each request is decoded; one file's bytes are held at a time.

The JSON reader is `turnscore.ingest.otlp_json`, the protobuf one
`turnscore.ingest.otlp_pb`; what they share (positions, reporting, how a span's ids are
settled) is `turnscore.ingest.otlp_shared`. This module finds the format and the requests.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from turnscore.ingest import fast_json, formats
from turnscore.ingest.anyvalue import MAX_ATTRIBUTE_VALUE_CHARS
from turnscore.ingest.otlp_json import json_request_records
from turnscore.ingest.otlp_pb import pb_resource_records
from turnscore.ingest.otlp_shared import Record
from turnscore.ingest.records import InputError

__all__ = ["MAX_ATTRIBUTE_VALUE_CHARS", "Record", "iter_input_files", "read_bytes", "read_file"]

logger = logging.getLogger(__name__)


def iter_input_files(paths: Sequence[Path]) -> Iterator[Path]:
    """Files named in `paths`, folders expanded recursively; sorted, hidden entries skipped.

    A path given explicitly is yielded even if hidden; a missing path raises
    `FileNotFoundError` (a typo on the command line should stop the run, not yield nothing).
    """
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found = sorted(_walk(path))
        elif path.exists():
            found = [path]
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
        for file in found:
            if file not in seen:
                seen.add(file)
                yield file


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.startswith("."):
                yield Path(root) / name


def read_file(path: Path) -> Iterator[Record]:
    """Every span, log record and input error in one OTLP file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        yield InputError(str(path), "file", f"cannot read file: {exc.strerror or exc}")
        return
    yield from read_bytes(data, str(path))


def read_bytes(data: bytes, source: str) -> Iterator[Record]:
    """Like `read_file`, for content already in memory; `source` names it in records."""
    payload, problems = formats.decompress(data)
    for problem in problems:
        yield InputError(source, problem.position, problem.message)
    kind = formats.sniff_protobuf(payload, name_hint=os.path.basename(source))
    if kind is not None:
        yield from _read_protobuf(payload, kind, source)
    elif formats.looks_like_json(payload):
        yield from _read_json(payload, source)
    else:
        yield InputError(
            source,
            "file",
            "not an OTLP traces/logs file: found "
            f"{formats.describe_non_otlp(payload)}; expected OTLP JSON or protobuf",
        )


def _read_json(payload: bytes, source: str) -> Iterator[Record]:
    text, problem = formats.decode_text(payload)
    if problem is not None:
        yield InputError(source, problem.position, problem.message)
    documents = 0
    for item in fast_json.iter_json_documents(text, payload):
        if isinstance(item, formats.Problem):
            yield InputError(source, item.position, item.message)
            continue
        documents += 1
        yield from json_request_records(item.value, source, item.position)
    logger.debug("%s: %d JSON request(s)", source, documents)


def _read_protobuf(payload: bytes, kind: formats.ProtoKind, source: str) -> Iterator[Record]:
    for index, item in enumerate(formats.iter_protobuf_resources(payload)):
        if isinstance(item, formats.Problem):
            yield InputError(source, item.position, item.message)
            continue
        start, end = item
        yield from pb_resource_records(payload[start:end], kind, source, start, index)
