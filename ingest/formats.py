"""Recognise what an OTLP file holds from its bytes: compression, JSON framing, protobuf kind.

File names are only hints; exporters and people name files freely, so everything here
looks at content (a name decides only which files of a folder are input,
`is_input_name`):
- gzip (`1f 8b`) and zstd (`28 b5 2f fd`) are unwrapped by magic bytes, any number of
  members/frames, nested wrappers too. A damaged stream keeps what decoded before the damage.
- Protobuf: an `Export{Trace,Logs}ServiceRequest` is a run of field-1 length-delimited
  records (tag byte 0x0a) covering the buffer exactly. Both requests share that outer
  shape, so the kind is decided by the wire types of fields inside the first records
  (a Span's field 1 is bytes, a LogRecord's is fixed64; see `_SPAN_TAGS` / `_LOG_TAGS`).
- Size-prefixed messages (the Collector `file` exporter's `format: proto`, and its
  per-message compressed JSON): each message is read as a file of its own
  (`size_prefixed`).
- JSON: one document, documents back to back (pretty-printed or one per line, as the
  Collector file exporter writes), or an array of documents. A broken document is reported
  and reading resumes at the next line starting with `{`.

JSON has one framer (`_Framer`): msgspec decodes every document in place (`Parse`: by
default into plain values, the OTLP reader's into its typed structs) and says where one
ends. Only a document msgspec refuses (NaN, lone surrogates, numbers beyond a double,
malformed or too deep) is handed to the standard parser, which reads what JSON allows and
words what is wrong with its line and column; msgspec goes on after it.

One module past the ~400-line guide: each part answers "what do this file's bytes hold"
and reports in the same `Problem`s and positions, which the reader turns into rows.
"""

from __future__ import annotations

import io
import json
import re
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

import msgspec
import zstandard

from turnscore.ingest.records import WHOLE_FILE

INPUT_SUFFIXES = (".json", ".jsonl", ".ndjson", ".pb", ".binpb", ".protobuf")
"""File name endings taken from a folder (any case), each also with a `COMPRESSED_SUFFIXES`
ending. Only folders filter by name: a file named on the command line is read whatever
its name, and its content decides the format either way."""
COMPRESSED_SUFFIXES = (".gz", ".zst", ".zstd")
INPUT_SUFFIXES_HELP = f"{' '.join(INPUT_SUFFIXES)}, each optionally {'/'.join(COMPRESSED_SUFFIXES)}"
"""The endings as the CLI's help and the README say them."""

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_MAX_NESTED_WRAPPERS = 4
_SNIFF_RECORDS = 32
"""How many spans/log records the protobuf sniffer inspects before deciding."""

_DECODER = json.JSONDecoder()


class ProtoKind(StrEnum):
    TRACES = "traces"
    LOGS = "logs"


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with the file's framing; `position` says where."""

    position: str
    message: str


@dataclass(frozen=True, slots=True)
class JsonDocument:
    """One top-level JSON value of a file, decoded."""

    value: object
    position: str
    """'line 12' for a one-line document, else 'request 3 (line 120)'."""


# --- file names -------------------------------------------------------------------------


def is_input_name(name: str) -> bool:
    """Whether a file called `name` in a folder is taken as input (`INPUT_SUFFIXES`)."""
    lower = name.lower()
    for suffix in COMPRESSED_SUFFIXES:
        if lower.endswith(suffix):
            lower = lower.removesuffix(suffix)
            break
    return lower.endswith(INPUT_SUFFIXES)


# --- compression ----------------------------------------------------------------------

DEFAULT_MAX_EXPANDED_MB = 512
"""Largest payload (MiB) one compressed file may expand to; past it the file is an error."""
DEFAULT_MAX_EXPANSION_RATIO = 200
"""Largest expansion (payload bytes per file byte) allowed beyond `RATIO_FLOOR`."""
RATIO_FLOOR = 16 << 20
"""A payload this small is fine at any ratio: small files of repeated spans compress well."""
_FEED = 256
"""Input bytes per decompressor call. A zstd block can expand 32768-fold (an RLE block),
deflate some 1032-fold, so this bounds one call's output to some 8 MiB; the cap is
checked between calls."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How far a compressed file may expand (`turnscore.toml` `[ingest]`)."""

    max_expanded_mb: int = DEFAULT_MAX_EXPANDED_MB
    max_expansion_ratio: int = DEFAULT_MAX_EXPANSION_RATIO

    def cap(self, compressed: int) -> int:
        """Payload bytes allowed for a file of `compressed` bytes."""
        ratio_cap = max(self.max_expansion_ratio * compressed, RATIO_FLOOR)
        return min(self.max_expanded_mb << 20, ratio_cap)


DEFAULT_LIMITS = Limits()


class _OverCap(Exception):
    pass


class _Codec(NamedTuple):
    name: str
    stream: Callable[[], Any]
    """A new decompressor of one member or frame: `decompress`, `eof`, `unused_data`."""
    error: type[Exception]


_GZIP = _Codec("gzip", lambda: zlib.decompressobj(wbits=31), zlib.error)
_ZSTD = _Codec("zstd", lambda: zstandard.ZstdDecompressor().decompressobj(), zstandard.ZstdError)


def decompress(data: bytes, limits: Limits = DEFAULT_LIMITS) -> tuple[bytes, list[Problem]]:
    """Unwrap gzip/zstd layers detected by magic bytes; return the payload and any damage.

    Decompressed as a stream, at most `limits.cap(len(data))` bytes: a file that would
    expand further is a problem and gives no payload (a decompression bomb must not take
    the machine's memory)."""
    problems: list[Problem] = []
    cap = limits.cap(len(data))
    for _ in range(_MAX_NESTED_WRAPPERS):
        try:
            if data.startswith(GZIP_MAGIC):
                data, problem = _gunzip(data, cap)
            elif data.startswith(ZSTD_MAGIC):
                data, problem = _unzstd(data, cap)
            else:
                break
        except _OverCap:
            problems.append(_over_cap(cap, limits))
            return b"", problems
        if problem is not None:
            problems.append(problem)
            break
    return data, problems


def _over_cap(cap: int, limits: Limits) -> Problem:
    return Problem(
        WHOLE_FILE,
        f"decompresses to more than {cap:,} bytes (the cap: {limits.max_expanded_mb} MiB, "
        f"or {limits.max_expansion_ratio}x the file beyond {RATIO_FLOOR >> 20} MiB); not "
        "read. Raise [ingest] max_expanded_mb / max_expansion_ratio if the file is genuine",
    )


def _gunzip(data: bytes, cap: int) -> tuple[bytes, Problem | None]:
    return _unwrap(data, GZIP_MAGIC, _GZIP, cap)


def _unzstd(data: bytes, cap: int) -> tuple[bytes, Problem | None]:
    return _unwrap(data, ZSTD_MAGIC, _ZSTD, cap)


def _unwrap(data: bytes, magic: bytes, codec: _Codec, cap: int) -> tuple[bytes, Problem | None]:
    """Every member (gzip) or frame (zstd) back to back, fed `_FEED` bytes at a time;
    damage ends the layer, keeping what decoded before it."""
    out = io.BytesIO()  # getvalue() shares its buffer: no second copy of the payload
    view = memoryview(data)
    consumed = 0
    while data.startswith(magic, consumed):
        stream = codec.stream()
        pos = consumed
        try:
            while not stream.eof and pos < len(data):
                end = min(pos + _FEED, len(data))
                out.write(stream.decompress(view[pos:end]))
                if out.tell() > cap:
                    raise _OverCap
                pos = end
        except codec.error as exc:
            problem = Problem(f"byte {consumed}", f"corrupt {codec.name} stream: {exc}")
            return out.getvalue(), problem
        if not stream.eof:
            return out.getvalue(), _cut_short(codec.name, len(data), out.tell())
        consumed = pos - len(stream.unused_data)
    return out.getvalue(), None


def _cut_short(codec: str, size: int, decoded: int) -> Problem:
    """The stream ended before its end marker: a cut-off file, or damage the decoder took
    for data (then nothing, or little, decodes)."""
    if decoded == 0:
        return Problem(f"byte {size}", f"truncated or corrupt {codec} stream: nothing decoded")
    return Problem(
        f"byte {size}",
        f"truncated {codec} stream (kept the {decoded} bytes decoded before the end)",
    )


# --- text -------------------------------------------------------------------------------


def decode_text(data: bytes) -> tuple[str, Problem | None]:
    """UTF-8 text of a JSON file; invalid bytes become U+FFFD and are reported once."""
    try:
        text = data.decode("utf-8")
        problem = None
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        bad = text.count("\ufffd") - data.count("\ufffd".encode())
        line = data.count(b"\n", 0, exc.start) + 1
        problem = Problem(
            f"byte {exc.start} (line {line})",
            f"invalid UTF-8 ({exc.reason}); {bad} invalid sequence(s) replaced with U+FFFD",
        )
    return text.removeprefix("\ufeff"), problem


def looks_like_json(data: bytes) -> bool:
    head = data[:64].lstrip(b" \t\r\n").removeprefix(b"\xef\xbb\xbf")
    return head[:1] in (b"{", b"[")


def describe_non_otlp(data: bytes) -> str:
    """A short human description of what a file that is not OTLP seems to be."""
    signatures = {
        b"\x89PNG": "a PNG image",
        b"%PDF": "a PDF document",
        b"PK\x03\x04": "a zip archive",
        b"\xff\xd8\xff": "a JPEG image",
        b"PAR1": "a Parquet file",
        b"SQLite format 3": "an SQLite database",
    }
    for magic, name in signatures.items():
        if data.startswith(magic):
            return name
    if not data.strip():
        return "an empty file"
    head = data[:60]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = "\x00"
    if any(ch < " " and ch not in "\t\r\n" for ch in text):
        return f"binary data starting {head[:16].hex(' ')}"
    first = text.splitlines()[0] if text.strip() else text
    return f"text starting {first[:60]!r}"


# --- JSON framing -----------------------------------------------------------------------


Parse = Callable[[bytes | memoryview, str], tuple[object, int]]
"""Decodes one JSON document's bytes, found at a position ('line 3'): its value and the
colons of what it decoded written again as JSON (`written_colons`, for the repeated-key
check). Raises msgspec's errors, or RecursionError, for a document msgspec does not read
(`_standard` reads it then)."""
_PARSE_ERRORS = (msgspec.MsgspecError, ValueError, RecursionError)
_GENERIC = msgspec.json.Decoder()
_WRITER = msgspec.json.Encoder()
_EXTENT = msgspec.json.Decoder(msgspec.Raw)
"""Reads a document without building it: where it ends (`_Framer.extent`)."""
_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")
_NOT_WS = re.compile(rb"[^ \t\r\n]")
_OPEN, _COMMA, _CLOSE = b"[,]"


def parse_plain(data: bytes | memoryview, position: str = "") -> tuple[object, int]:
    """`Parse` into plain JSON values (dict, list, str, int, float, bool, None)."""
    value = _GENERIC.decode(data)
    return value, written_colons(value)


def written_colons(value: object) -> int:
    """The colons of `value` (as decoded: structs, plain values) written as JSON: one per
    object key, and those inside its strings. -1 for a value that cannot be written."""
    try:
        return _WRITER.encode(value).count(b":")
    except (msgspec.EncodeError, UnicodeEncodeError):
        return -1


def iter_json_documents(
    data: str | bytes, parse: Parse = parse_plain
) -> Iterator[JsonDocument | Problem]:
    """Every top-level JSON value in `data`, with its position; framing errors as Problems.

    `data` is text, or UTF-8 without a byte order mark (a file read without replacements).
    A document is what `parse` makes of it; one msgspec does not read is read by the
    standard parser into plain JSON values, or reported (`_standard`)."""
    framer = _Framer(data, parse)
    start = framer.skip(0)
    if start < len(framer.payload) and framer.payload[start] == _OPEN:
        return framer.array(start)
    return framer.stream(start)


class _Framer:
    """The documents of one file. msgspec finds where each ends and decodes it in place.

    A document is most often exactly one line (JSON Lines, a one-line file), so the line
    at a document's start is decoded as it stands; only when it is not one whole document
    (several on a line, one spanning lines) is its end found, as the offset msgspec names
    when it meets "trailing characters" after the first value of the rest (`extent`; a
    scan of the document that builds nothing, a fifth of a decode), and that much decoded.
    A document msgspec refuses is read by the standard parser alone (`_standard`)."""

    def __init__(self, data: str | bytes, parse: Parse) -> None:
        self.payload = data.encode() if isinstance(data, str) else data
        self.view = memoryview(self.payload)
        self.parse = parse
        self.lines = _Lines(self.payload)
        self._data = data
        self._text: str | None = None
        """The file's text for the standard parser, decoded when first needed."""
        self._ascii = True
        self._bytes = self._chars = 0  # the last byte offset read as text, and its character

    def skip(self, pos: int) -> int:
        """The offset of the first non-blank byte from `pos`, or the end."""
        found = _NOT_WS.search(self.payload, pos)
        return len(self.payload) if found is None else found.start()

    def extent(self, pos: int) -> int | None:
        """Where the document at `pos` ends (the next one's start, or the end), or None
        where msgspec cannot read it."""
        try:
            _EXTENT.decode(self.view[pos:])
        except msgspec.DecodeError as exc:
            found = _TRAILING.search(str(exc))
            return None if found is None else pos + int(found[1])
        except RecursionError:
            return None
        return len(self.payload)

    def decoded(self, pos: int, end: int | None, position: str) -> JsonDocument | Problem | None:
        """The document `payload[pos:end]` as `parse` makes of it, or None if it refuses."""
        if end is None:
            return None
        try:
            value, keys = self.parse(self.view[pos:end], position)
        except _PARSE_ERRORS:
            return None
        return _checked(self.payload, value, keys, position, pos, end)

    def stream(self, pos: int) -> Iterator[JsonDocument | Problem]:
        """Documents back to back: one per line, pretty-printed, several on a line."""
        size = len(self.payload)
        index = 0
        one_per_line = True  # JSON Lines so far: an error's position is its line number
        while pos < size:
            index += 1
            line = self.lines.at(pos)
            eol = self.payload.find(b"\n", pos)
            eol = size if eol < 0 else eol
            end: int | None = eol
            doc = self.decoded(pos, eol, f"line {line}")
            if doc is None:
                end = self.extent(pos)
                single = end is not None and end <= eol
                doc = self.decoded(pos, end, _position(index, line, single))
            else:
                single = True
                self.lines.seen(eol, line)  # no need to count the line's bytes again
            if doc is not None:
                yield doc
                one_per_line = one_per_line and single
                pos = self.skip(end)  # type: ignore[arg-type]  # set where doc is
                continue
            try:
                items, resume, single = self.standard(pos, index, line)
            except json.JSONDecodeError as exc:
                resume = _next_document_start(self.payload, pos + 1)
                yield self._malformed(exc, pos, resume, index, line, one_per_line)
            except RecursionError:
                resume = _next_document_start(self.payload, pos + 1)
                yield Problem(_position(index, line, one_per_line), self._too_deep(resume))
            else:
                yield from items
                one_per_line = one_per_line and single
            if resume < 0:
                return
            pos = self.skip(resume)

    def _malformed(
        self, exc: json.JSONDecodeError, pos: int, resume: int, index: int, line: int,
        one_per_line: bool,
    ) -> Problem:  # fmt: skip
        stop = len(self.payload) if resume < 0 else resume
        single = one_per_line and self.payload.count(b"\n", pos, stop) <= 1
        if resume < 0:
            what = f"lines {line}-{exc.lineno}" if exc.lineno > line else f"line {line}"
            skipped = f"skipped the rest of the file ({what})"
        else:
            skipped = f"skipped to line {self.lines.at(resume)}"
        return Problem(
            _position(index, line, single),
            f"malformed or truncated JSON: {_json_error(exc)}; {skipped}",
        )

    def _too_deep(self, resume: int) -> str:
        skipped = (
            "skipped the rest of the file"
            if resume < 0
            else f"skipped to line {self.lines.at(resume)}"
        )
        depth = sys.getrecursionlimit()
        return f"JSON nested too deeply to read (over ~{depth} levels); {skipped}"

    def array(self, pos: int) -> Iterator[JsonDocument | Problem]:
        """The elements of a top-level array, each a request."""
        size = len(self.payload)
        pos = self.skip(pos + 1)
        index = 0
        while pos < size and self.payload[pos] != _CLOSE:
            index += 1
            line = self.lines.at(pos)
            position = f"request {index} (line {line})"
            end = self.extent(pos)
            doc = self.decoded(pos, end, position)
            if doc is not None:
                yield doc
            else:
                try:
                    items, end, _ = self.standard(pos, index, line, in_array=True)
                except RecursionError:
                    yield Problem(position, self._too_deep(-1))
                    return
                except json.JSONDecodeError as exc:
                    yield Problem(
                        position,
                        f"malformed or truncated JSON array element: {_json_error(exc)}; "
                        "the rest of the array is skipped",
                    )
                    return
                yield from items
            pos = self.skip(end)  # type: ignore[arg-type]  # set where doc is
            if pos < size and self.payload[pos] == _COMMA:
                pos = self.skip(pos + 1)
            elif pos < size and self.payload[pos] != _CLOSE:
                yield Problem(
                    f"line {self.lines.at(pos)}",
                    "malformed or truncated JSON array: expected ',' or ']' after request "
                    f"{index}; the rest of the array is skipped",
                )
                return
        if pos >= size:
            yield Problem(f"line {self.lines.at(size)}", "truncated JSON array: missing ']'")
        elif self.skip(pos + 1) < size:
            yield Problem(
                f"line {self.lines.at(pos + 1)}",
                "unexpected content after the JSON array; ignored",
            )

    def standard(
        self, pos: int, index: int, line: int, in_array: bool = False
    ) -> tuple[list[JsonDocument | Problem], int, bool]:
        """The document at `pos`, which msgspec refuses, read by the standard parser: what
        JSON allows beyond msgspec (NaN and Infinity, numbers beyond a double, lone
        surrogates) is read, and what is wrong is said with its line and column (raises
        `json.JSONDecodeError`, or RecursionError). Its items, where it ends, and whether
        it is one line."""
        if self._text is None:
            self._text, self._ascii = _text(self._data), self.payload.isascii()
        if self._ascii:  # a character is a byte
            self._chars = pos
        else:  # each byte decoded once: `pos` only grows
            self._chars += len(self.payload[self._bytes : pos].decode("utf-8", "replace"))
        self._bytes, start, text = pos, self._chars, self._text
        value, stop = _DECODER.raw_decode(text, start)
        body = text[start:stop]
        single = "\n" not in body
        position = f"request {index} (line {line})" if in_array else _position(index, line, single)
        items = list(_document(body, value, position))
        return items, pos + len(body.encode("utf-8", "surrogatepass")), single


class _Lines:
    """Line numbers for increasing offsets, counting newlines only once overall."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._offset = 0
        self._line = 1

    def at(self, offset: int) -> int:
        if offset < self._offset:
            return self._data.count(b"\n", 0, offset) + 1
        self._line += self._data.count(b"\n", self._offset, offset)
        self._offset = offset
        return self._line

    def seen(self, offset: int, line: int) -> None:
        """`offset` is known to be on `line`."""
        self._offset, self._line = offset, line


def _text(data: str | bytes) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def _position(index: int, line: int, single_line: bool) -> str:
    return f"line {line}" if single_line else f"request {index} (line {line})"


def _next_document_start(data: bytes, pos: int) -> int:
    """Offset of the next line that starts with `{` (a new top-level document), or -1."""
    found = data.find(b"\n{", pos)
    return -1 if found < 0 else found + 1


def _checked(
    data: bytes, value: object, colons: int, position: str, start: int = 0, end: int | None = None
) -> JsonDocument | Problem:
    """`value`, parsed from `data[start:end]`, whose parse written again as JSON holds
    `colons` colons, unless an object of it repeats a key. Parsers keep the last value of a
    repeated key and drop the others without a word (a repeated `resourceSpans` would drop
    a whole request), so such a document is a problem.

    Cheap for the usual document: JSON has a colon after every key and elsewhere only in
    strings, which decoding keeps, so the text holds as many colons as its parse written
    again; a dropped key takes its colon away, whatever blanks or escapes surround it.
    Only a document whose counts differ is parsed again to find a repeat: more in the text
    is a repeat or a field the parse does not keep; fewer, a colon written as an escape
    (`\\u003a`, which no encoder writes; a repeat hidden behind as many of them goes
    unseen)."""
    end = len(data) if end is None else end
    if data.count(b":", start, end) == colons:
        return JsonDocument(value, position)
    problem = _repeated_key(data[start:end].decode("utf-8", "replace"), position)
    return JsonDocument(value, position) if problem is None else problem


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_ESCAPE = re.compile(
    r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"  # a pair
    r"|(u[dD][89a-fA-F][0-9a-fA-F]{2})|.)",  # a lone surrogate, or another escape
    re.DOTALL,
)
"""A JSON escape, read from the left: a surrogate pair (one character), a lone surrogate
(group 1: no Unicode, no writer takes it), or any other."""


def _document(text: str, value: object, position: str) -> Iterator[JsonDocument | Problem]:
    """A document the standard parser read: lone surrogate escapes replaced with U+FFFD
    and reported (msgspec refuses them, so documents holding one come this way), then
    checked. The replacement keeps every offset (six characters for six)."""
    if _SURROGATE_ESCAPE.search(text):
        replaced = 0

        def fix(escape: re.Match[str]) -> str:
            nonlocal replaced
            replaced += escape[1] is not None
            return "\\ufffd" if escape[1] is not None else escape[0]

        text = _ESCAPE.sub(fix, text)
        if replaced:
            value = _DECODER.decode(text)
            yield Problem(
                position, f"{replaced} lone UTF-16 surrogate escape(s) replaced with U+FFFD"
            )
    yield _checked(text.encode(), value, written_colons(value), position)


def _repeated_key(text: str, position: str) -> Problem | None:
    try:
        json.loads(text, object_pairs_hook=_no_repeats)
    except _RepeatedKey as exc:
        return Problem(
            position,
            f"a JSON object repeats the key {exc.key[:80]!r}; JSON keeps only the last "
            "value, so the request is ambiguous: skipped",
        )
    except (ValueError, RecursionError):
        pass  # it parsed once: the first parse stands
    return None


def _no_repeats(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return out


def _json_error(exc: json.JSONDecodeError) -> str:
    """What the parser found, and where. Some of its messages end in "at" before the
    position it would append ("Unterminated string starting at"); we append our own."""
    return f"{exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}"


# --- size-prefixed messages -----------------------------------------------------------

_SIZE_BYTES = 4


@dataclass(frozen=True, slots=True)
class Framed:
    """A file of messages each preceded by its size (`size_prefixed`)."""

    messages: tuple[tuple[int, int], ...]
    """(start, end) of each message's bytes, after its size."""
    problem: Problem | None
    """A last message cut short (what came before it is read)."""


def size_prefixed(data: bytes) -> Framed | None:
    """The messages of `data` when it is a run of messages, each preceded by its size as a
    4-byte big-endian integer: how the Collector's `file` exporter writes `format: proto`,
    and `format: json` with `compression: zstd` (each message compressed on its own), when
    the file is not compressed whole (opentelemetry-collector-contrib,
    `exporter/fileexporter`: `exportMessageAsBuffer`). None when the sizes do not tile the
    file, or the first message is nothing OTLP is written as (a protobuf request, JSON, a
    gzip or zstd stream): then the bytes are something else."""
    messages: list[tuple[int, int]] = []
    pos, size = 0, len(data)
    while pos < size:
        start = pos + _SIZE_BYTES
        end = start + int.from_bytes(data[pos:start], "big")
        if start >= end or start > size:
            return None  # a size of 0, or a stray byte or three: not this framing
        if end > size:
            if not messages and not _message_start(data, start):
                return None
            cut = Problem(
                f"byte {pos}",
                f"truncated size-prefixed message {len(messages) + 1} ({end - start} bytes "
                f"announced, {size - start} present); the messages before it are read",
            )
            return Framed(tuple(messages), cut)
        messages.append((start, end))
        pos = end
    if not messages or not _message_start(data, messages[0][0]):
        return None
    return Framed(tuple(messages), None)


def _message_start(data: bytes, start: int) -> bool:
    head = data[start : start + 4]
    return (head.startswith((b"\x0a", GZIP_MAGIC, ZSTD_MAGIC))
            or looks_like_json(data[start : start + 64]))


# --- protobuf sniffing ----------------------------------------------------------------

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
# (field number, wire type) pairs that only one of Span / LogRecord can carry.
_SPAN_TAGS = frozenset(
    {(1, _LEN), (2, _LEN), (4, _LEN), (6, _VARINT), (7, _I64), (8, _I64), (10, _VARINT),
     (11, _LEN), (12, _VARINT), (13, _LEN), (15, _LEN)}
)  # fmt: skip
_LOG_TAGS = frozenset(
    {(1, _I64), (2, _VARINT), (6, _LEN), (7, _VARINT), (8, _I32), (10, _LEN), (11, _I64),
     (12, _LEN)}
)  # fmt: skip


class _WireError(ValueError):
    pass


def _varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while pos < end and shift < 64:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
    raise _WireError(f"bad varint at byte {pos}")


def _fields(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field number, wire type, value start, value end) of each field in buf[pos:end]."""
    while pos < end:
        tag, pos = _varint(buf, pos, end)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise _WireError(f"field number 0 at byte {pos}")
        if wire == _VARINT:
            start = pos
            _, pos = _varint(buf, pos, end)
        elif wire == _I64:
            start, pos = pos, pos + 8
        elif wire == _I32:
            start, pos = pos, pos + 4
        elif wire == _LEN:
            length, start = _varint(buf, pos, end)
            pos = start + length
        else:
            raise _WireError(f"unsupported wire type {wire} at byte {pos}")
        if pos > end:
            raise _WireError(f"field {number} runs past its container at byte {start}")
        yield number, wire, start, pos


def sniff_protobuf(data: bytes, name_hint: str = "") -> ProtoKind | None:
    """TRACES or LOGS when `data` starts as an OTLP export request, else None.

    The first resource container must be well formed; damage after it is left for
    `iter_protobuf_resources` to report, so a truncated file still yields its first part.
    Only when the content carries no telling field (e.g. log records with nothing but a
    body) does `name_hint` decide: a name mentioning "log" means logs.
    """
    if not data.startswith(b"\x0a"):
        return None
    span_votes = log_votes = seen = complete = 0
    try:
        for number, wire, start, end in _fields(data, 0, len(data)):
            if (number, wire) != (1, _LEN):
                break
            for record_start, record_end in _records(data, start, end):
                seen += 1
                for tag in _fields(data, record_start, record_end):
                    span_votes += tag[:2] in _SPAN_TAGS
                    log_votes += tag[:2] in _LOG_TAGS
                if seen >= _SNIFF_RECORDS:
                    break
            complete += 1
            if seen >= _SNIFF_RECORDS:
                break
    except _WireError:
        pass
    if complete == 0:
        return None
    return _decide(span_votes, log_votes, name_hint)


def _decide(span_votes: int, log_votes: int, name_hint: str) -> ProtoKind:
    if span_votes == log_votes:
        return ProtoKind.LOGS if "log" in name_hint.lower() else ProtoKind.TRACES
    return ProtoKind.LOGS if log_votes > span_votes else ProtoKind.TRACES


def _records(data: bytes, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Spans or log records inside one ResourceSpans/ResourceLogs (both nest at 2 -> 2)."""
    for number, wire, scope_start, scope_end in _fields(data, start, end):
        if number == 2 and wire == _LEN:
            for inner, inner_wire, rec_start, rec_end in _fields(data, scope_start, scope_end):
                if inner == 2 and inner_wire == _LEN:
                    yield rec_start, rec_end


def iter_protobuf_resources(data: bytes) -> Iterator[tuple[int, int] | Problem]:
    """(start, end) of each ResourceSpans/ResourceLogs in an export request; damage as Problem.

    Concatenated requests are themselves a valid request (repeated field 1), so they need
    no special case.
    """
    pos = 0
    try:
        for number, wire, start, end in _fields(data, 0, len(data)):
            if (number, wire) != (1, _LEN):
                yield Problem(
                    f"byte {pos}",
                    f"unexpected protobuf field {number} (wire type {wire}) in an export "
                    "request; the rest of the file is skipped",
                )
                return
            yield start, end
            pos = end
    except _WireError as exc:
        yield Problem(
            f"byte {pos}",
            f"truncated or corrupt protobuf ({exc}); the rest of the file is skipped",
        )
