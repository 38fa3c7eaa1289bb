"""Read OTLP trace and log files into raw records (`turnscore.ingest.records`).

`read_file` accepts, detected from content (`turnscore.ingest.formats`):
- OTLP/JSON `ExportTraceServiceRequest` / `ExportLogsServiceRequest` in the spec dialect
  (hex ids, integer enums, int64 as decimal strings, lowerCamelCase) and in protobuf's
  default JSON mapping (base64 ids, enum names, snake_case keys allowed);
- one request, requests back to back, one per line (Collector file exporter), or an array;
- protobuf binary, traces or logs;
- requests each preceded by its 4-byte size (the Collector file exporter's `format: proto`,
  and its JSON compressed per message);
- any of these gzip- or zstd-compressed.

Bad input never raises: it becomes an `InputError` naming the file, where (line, request,
byte, span id) and what was wrong, and reading goes on with what can still be trusted.
A span without valid trace/span ids is skipped; an over-long attribute value is cut to
`MAX_ATTRIBUTE_VALUE_CHARS` and reported. Invalid UTF-8 in JSON files is replaced with
U+FFFD and reported once per file.

Records are yielded as each request is decoded; one file's bytes are held at a time.

Each request is decoded once, into the objects the one decoder of records reads
(`turnscore.ingest.otlp_shared`): OTLP/JSON (both dialects) by msgspec into the structs of
`turnscore.ingest.otlp_json`, framed by `formats.iter_json_documents`; protobuf by upb,
one resource block at a time (`_read_protobuf`, the `PROTOBUF` dialect below). This
module finds the format and the requests.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from turnscore.ingest import formats
from turnscore.ingest.anyvalue import MAX_ATTRIBUTE_VALUE_CHARS, decode_pb_any_value
from turnscore.ingest.otlp_json import json_request_records, parse_request
from turnscore.ingest.otlp_shared import (
    LOGS,
    MAX_UNIX_NANO,
    TRACES,
    BadInput,
    Dialect,
    Record,
    Report,
    Where,
    block_records,
    decode_attrs,
    known_enum,
    too_late,
)
from turnscore.ingest.records import WHOLE_FILE, AttrValue, InputError

__all__ = [
    "MAX_ATTRIBUTE_VALUE_CHARS",
    "Record",
    "folders_without_input",
    "iter_input_files",
    "read_bytes",
    "read_file",
    "unreadable",
]

logger = logging.getLogger(__name__)


def iter_input_files(paths: Sequence[Path]) -> Iterator[Path]:
    """Files named in `paths`, folders expanded recursively; sorted, hidden entries skipped.

    Of a folder, only files named as OTLP input are taken (`formats.is_input_name`: a
    README or a CSV next to the exports is not bad input). A path given explicitly is
    yielded whatever its name, even if hidden; a missing path raises `FileNotFoundError`
    (a typo on the command line should stop the run, not yield nothing).
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


def folders_without_input(paths: Sequence[Path]) -> list[Path]:
    """The folders among `paths` that hold no input file: worth saying, since a run over
    them reads nothing. Stops at a folder's first input file."""
    return [p for p in paths if p.is_dir() and next(_walk(p), None) is None]


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        ignored = 0
        for name in files:
            if name.startswith("."):
                continue
            if formats.is_input_name(name):
                yield Path(root) / name
            else:
                ignored += 1
        if ignored:
            logger.info(
                "%s: %d file(s) not named as OTLP input (%s) left alone",
                root,
                ignored,
                formats.INPUT_SUFFIXES_HELP,
            )


def read_file(path: Path, limits: formats.Limits = formats.DEFAULT_LIMITS) -> Iterator[Record]:
    """Every span, log record and input error in one OTLP file; `limits` bound how far a
    compressed file may expand."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        yield unreadable(path, exc)
        return
    yield from read_bytes(data, str(path), limits)


def unreadable(path: Path, exc: OSError) -> InputError:
    """The input error of a file that cannot be opened or read."""
    return InputError(str(path), WHOLE_FILE, f"cannot read file: {exc.strerror or exc}")


def read_bytes(
    data: bytes, source: str, limits: formats.Limits = formats.DEFAULT_LIMITS
) -> Iterator[Record]:
    """Like `read_file`, for content already in memory; `source` names it in records."""
    yield from _read_content(data, source, limits, framed=True)


def _read_content(
    data: bytes, source: str, limits: formats.Limits, framed: bool
) -> Iterator[Record]:
    """The records of a file, or (`framed` False) of one size-prefixed message in it."""
    payload, problems = formats.decompress(data, limits)
    for problem in problems:
        yield InputError(source, problem.position, problem.message)
    if problems and _blank(payload):
        return  # the damaged stream is the whole story, not "an empty file" after it
    kind = formats.sniff_protobuf(payload, name_hint=os.path.basename(source))
    if kind is not None:
        yield from _read_protobuf(payload, kind, source)
    elif formats.looks_like_json(payload):
        yield from _read_json(payload, source)
    elif framed and (messages := formats.size_prefixed(payload)) is not None:
        yield from _read_messages(payload, messages, source, limits)
    elif _blank(payload):
        yield InputError(source, WHOLE_FILE, "the file is empty")
    else:
        yield InputError(
            source,
            WHOLE_FILE,
            f"not an OTLP traces/logs file: {formats.describe_non_otlp(payload)}; expected "
            "OTLP JSON or protobuf",
        )


def _read_messages(
    payload: bytes, framed: formats.Framed, source: str, limits: formats.Limits
) -> Iterator[Record]:
    """Each size-prefixed message read as a file of its own; where something in one is
    wrong, the position names the message first."""
    for number, (start, end) in enumerate(framed.messages, 1):
        for record in _read_content(payload[start:end], source, limits, framed=False):
            if isinstance(record, InputError):
                where = f"message {number} (byte {start})"
                position = where if record.position == WHOLE_FILE else f"{where}, {record.position}"
                record = replace(record, position=position)
            yield record
    if framed.problem is not None:
        yield InputError(source, framed.problem.position, framed.problem.message)


def _blank(payload: bytes) -> bool:
    return not payload or payload.isspace()  # isspace stops at the first other byte


def _read_json(payload: bytes, source: str) -> Iterator[Record]:
    # The framer reads bytes: the payload itself, unless decoding changes its text
    # (a byte order mark, invalid UTF-8), which only bytes beyond ASCII can do.
    data: str | bytes = payload
    if not payload.isascii():
        text, problem = formats.decode_text(payload)
        if problem is not None:
            yield InputError(source, problem.position, problem.message)
        if problem is not None or payload.startswith(b"\xef\xbb\xbf"):
            data = text
    documents = 0
    parse = partial(parse_request, source)
    for item in formats.iter_json_documents(data, parse):
        if isinstance(item, formats.Problem):
            yield InputError(source, item.position, item.message)
            continue
        documents += 1
        yield from json_request_records(item.value, source, item.position)
    logger.debug("%s: %d JSON request(s)", source, documents)


def _read_protobuf(payload: bytes, kind: formats.ProtoKind, source: str) -> Iterator[Record]:
    """Each resource block of the request, decoded by upb and read by `otlp_shared` in the
    `PROTOBUF` dialect; a corrupt one is skipped, with a row at its byte offset."""
    traces = kind is formats.ProtoKind.TRACES
    tree = TRACES if traces else LOGS
    message = trace_pb2.ResourceSpans if traces else logs_pb2.ResourceLogs
    for index, item in enumerate(formats.iter_protobuf_resources(payload)):
        if isinstance(item, formats.Problem):
            yield InputError(source, item.position, item.message)
            continue
        start, end = item
        where = Where(source, f"byte {start}", f"{tree.blocks_path}[{index}]")
        try:
            block = message.FromString(payload[start:end])
        except DecodeError as exc:
            yield where.error(f"corrupt protobuf {tree.blocks_path} message ({exc}); skipped")
            continue
        records: list[Record] = []
        block_records(PROTOBUF, tree, block, where, records)
        yield from records


def _pb_attrs(items: Any, owner: str, report: Report) -> dict[str, AttrValue]:
    """Attributes as a dict (a later repeated key wins). Scalars are read inline; arrays,
    key-value lists and over-long values go through `decode_attrs`, which cuts and reports."""
    out: dict[str, AttrValue] = {}
    for kv in items:
        value = kv.value
        kind = value.WhichOneof("value")
        if kind == "string_value":
            text = value.string_value
            if len(text) <= MAX_ATTRIBUTE_VALUE_CHARS:
                out[kv.key] = text
                continue
        elif kind == "int_value":
            out[kv.key] = value.int_value
            continue
        elif kind == "bool_value":
            out[kv.key] = value.bool_value
            continue
        elif kind == "double_value":
            out[kv.key] = value.double_value
            continue
        out.update(decode_attrs(((kv.key, value),), decode_pb_any_value, owner, report))
    return out


def _pb_id(raw: bytes, size: int, what: str) -> str | None:
    if not raw:
        return None
    if len(raw) != size:
        raise BadInput(f"{what} {raw.hex()!r} is {len(raw)} bytes, expected {size}")
    return raw.hex() if any(raw) else None


def _pb_time(value: int, what: str) -> int:
    if value > MAX_UNIX_NANO:
        raise too_late(value, what)
    return value


def _pb_text(value: str, what: str, report: Report) -> str:
    return value  # always a string


PROTOBUF = Dialect(
    id=_pb_id,
    time=_pb_time,
    enum=known_enum,
    text=_pb_text,
    attrs=_pb_attrs,
    value=decode_pb_any_value,
    spell=str,
)
