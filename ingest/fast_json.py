"""JSON framing at orjson speed, with exactly the documents and positions of
`formats.iter_json_documents`.

Most OTLP JSON files are one request per line (the Collector file exporter) or one
request on one line; those are parsed line by line with orjson. Anything else (a
pretty-printed request, several documents on a line, values orjson refuses such as NaN,
malformed JSON) goes to the standard framing, which reports problems with their lines;
documents already yielded are not repeated. orjson reads an integer beyond 64 bits as a
float where the standard parser keeps it exact, so a file that may hold one (a long run
of digits where a number can start) takes the standard framing too.
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from turnscore.ingest import formats

__all__ = ["iter_json_documents"]

_JSON_WS = " \t\r\n"
# Digits and minus become "0"; what may precede a JSON number becomes "#".
_NUMBER_CHARS = bytes.maketrans(b"0123456789-:,[ \t\r\n", b"0" * 11 + b"#" * 7)
_LONG_NUMBER = b"#" + b"0" * 19


def _long_number(payload: bytes) -> bool:
    """Whether the bytes may hold a number beyond 64 bits: 19 or more digits (or a minus
    and 18) after a character a number can follow. Ids and timestamps in quotes do not
    match; a false match only costs speed. Far cheaper than a regular expression."""
    return payload.translate(_NUMBER_CHARS).find(_LONG_NUMBER) >= 0


def iter_json_documents(
    text: str, payload: bytes
) -> Iterator[formats.JsonDocument | formats.Problem]:
    """Every top-level JSON value in `text` (decoded from `payload`), as
    `formats.iter_json_documents` yields them."""
    start = len(text) - len(text.lstrip(_JSON_WS))
    if start >= len(text) or text[start] != "{" or _long_number(payload):
        # A top-level array numbers its elements as requests, which the standard framing does.
        yield from formats.iter_json_documents(text)
        return
    done = 0
    for item in _lines(text, start):
        if item is None:
            break
        yield item
        done += 1
    else:
        return
    if done == 0:
        whole = _whole(text, start)
        if whole is not None:
            yield whole
            return
    rest = formats.iter_json_documents(text)
    for _ in range(done):
        next(rest)
    yield from rest


def _lines(text: str, pos: int) -> Iterator[formats.JsonDocument | formats.Problem | None]:
    """One document per non-blank line; None where a line is not exactly one document."""
    line = text.count("\n", 0, pos)
    pos -= pos - (text.rfind("\n", 0, pos) + 1)  # back to the start of the first line
    size = len(text)
    while pos < size:
        end = text.find("\n", pos)
        if end < 0:
            end = size
        line += 1
        chunk = text[pos:end]
        pos = end + 1
        if not chunk.strip(_JSON_WS):
            continue
        try:
            value = orjson.loads(chunk)
        except orjson.JSONDecodeError:
            yield None
            return
        yield formats.checked_document(chunk, value, f"line {line}")


def _whole(text: str, start: int) -> formats.JsonDocument | formats.Problem | None:
    """The file as one (pretty-printed) document, or None."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    line = text.count("\n", 0, start) + 1
    end = len(text.rstrip(_JSON_WS))
    single = text.find("\n", start, end) < 0
    return formats.checked_document(
        text, value, f"line {line}" if single else f"request 1 (line {line})"
    )
