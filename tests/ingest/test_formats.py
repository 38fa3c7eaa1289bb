"""`turnscore.ingest.formats`: compression, text, JSON framing and protobuf sniffing."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest
import zstandard

from turnscore.ingest.formats import (
    JsonDocument,
    Problem,
    ProtoKind,
    decode_text,
    decompress,
    describe_non_otlp,
    is_input_name,
    iter_json_documents,
    iter_protobuf_resources,
    looks_like_json,
    sniff_protobuf,
)

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
PAYLOAD = b'{"resourceSpans": []}\n' * 50


# --- file names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "taken"),
    [
        ("traces.json", True), ("x.JSONL", True), ("x.ndjson", True), ("x.pb", True),
        ("x.binpb", True), ("x.protobuf", True), ("x.json.gz", True), ("x.jsonl.zst", True),
        ("x.pb.zstd", True), ("x.JSON.GZ", True),
        ("x.gz", False), ("x.zst", False), ("NOTES.md", False), ("x.csv", False),
        ("x.json.bak", False), ("x.tar.gz", False), ("json", False), ("x.json.gz.zst", False),
    ],
)  # fmt: skip
def test_is_input_name(name: str, taken: bool) -> None:
    assert is_input_name(name) is taken


# --- compression --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "packed",
    [
        gzip.compress(PAYLOAD),
        gzip.compress(PAYLOAD[:100]) + gzip.compress(PAYLOAD[100:]),  # multi-member
        zstandard.ZstdCompressor().compress(PAYLOAD),
        zstandard.ZstdCompressor().compress(PAYLOAD[:7])
        + zstandard.ZstdCompressor().compress(PAYLOAD[7:]),  # multi-frame
        gzip.compress(zstandard.ZstdCompressor().compress(PAYLOAD)),  # nested
        PAYLOAD,  # not compressed at all
    ],
    ids=["gzip", "gzip-members", "zstd", "zstd-frames", "zstd-in-gzip", "plain"],
)
def test_decompress(packed: bytes) -> None:
    assert decompress(packed) == (PAYLOAD, [])


def test_zstd_stream_without_content_size() -> None:
    compressor = zstandard.ZstdCompressor(write_content_size=False)
    chunker = compressor.compressobj()
    packed = chunker.compress(PAYLOAD) + chunker.flush()
    assert decompress(packed) == (PAYLOAD, [])


def test_truncated_gzip_keeps_the_decoded_prefix() -> None:
    packed = gzip.compress(PAYLOAD)
    data, problems = decompress(packed[:-12])
    assert PAYLOAD.startswith(data) and data
    assert len(problems) == 1 and "truncated gzip stream" in problems[0].message
    assert problems[0].position == f"byte {len(packed) - 12}"


def test_corrupt_gzip_is_reported() -> None:
    packed = bytearray(gzip.compress(PAYLOAD))
    packed[12:20] = b"\xff" * 8
    _, problems = decompress(bytes(packed))
    assert len(problems) == 1 and "gzip" in problems[0].message


def test_truncated_zstd_is_reported() -> None:
    packed = zstandard.ZstdCompressor().compress(PAYLOAD * 20)
    data, problems = decompress(packed[: len(packed) // 2])
    assert (PAYLOAD * 20).startswith(data)
    assert len(problems) == 1 and "zstd" in problems[0].message


# --- text -----------------------------------------------------------------------------------


def test_decode_text_strips_bom_and_reports_bad_utf8() -> None:
    assert decode_text(b"\xef\xbb\xbf{}") == ("{}", None)
    text, problem = decode_text(b'{"a":\n"x\xc3"}')
    assert text == '{"a":\n"x\ufffd"}'
    assert problem == Problem(
        "byte 8 (line 2)",
        "invalid UTF-8 (invalid continuation byte); 1 invalid sequence(s) replaced with U+FFFD",
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"  \n{", True),
        (b"\xef\xbb\xbf[", True),
        (b"\n\n\t[]", True),
        (b"a,b", False),
        (b"", False),
    ],
)
def test_looks_like_json(data: bytes, expected: bool) -> None:
    assert looks_like_json(data) is expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\x89PNG\r\n\x1a\n", "a PNG image"),
        (b"PK\x03\x04....", "a zip archive"),
        (b"  \n", "an empty file"),
        (b"id,name\n1,x\n", "text starting 'id,name'"),
        (b"\x00\x01\x02", "binary data starting 00 01 02"),
    ],
)
def test_describe_non_otlp(data: bytes, expected: str) -> None:
    assert describe_non_otlp(data) == expected


# --- JSON framing ---------------------------------------------------------------------------


def documents(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for item in iter_json_documents(text):
        if isinstance(item, JsonDocument):
            out.append((item.position, item.value))
        else:
            out.append((item.position, item.message))
    return out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', [("line 1", {"a": 1})]),
        ('{"a": 1}\n{"a": 2}\n\n{"a": 3}\n', [("line 1", {"a": 1}), ("line 2", {"a": 2}),
                                              ("line 4", {"a": 3})]),
        ('{\n "a": 1\n}\n{\n "a": 2\n}', [("request 1 (line 1)", {"a": 1}),
                                         ("request 2 (line 4)", {"a": 2})]),
        ('{"a": 1}{"a": 2}', [("line 1", {"a": 1}), ("line 1", {"a": 2})]),
        ('[\n {"a": 1},\n {"a": 2}\n]\n', [("request 1 (line 2)", {"a": 1}),
                                          ("request 2 (line 3)", {"a": 2})]),
        ("[]", []),
        ("", []),
    ],
)  # fmt: skip
def test_framings(text: str, expected: list[tuple[str, Any]]) -> None:
    assert documents(text) == expected


def test_jsonl_bad_line_resumes_on_the_next_line() -> None:
    got = documents('{"a": 1}\n{"a": \n{"a": 3}\n')
    assert got[0] == ("line 1", {"a": 1})
    assert got[1][0] == "line 2"
    assert got[1][1].startswith("malformed or truncated JSON: ")
    assert got[1][1].endswith("skipped to line 3")
    assert got[2] == ("line 3", {"a": 3})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # The parser's message ends in "at"; the position follows it once.
        ('{"a": "open', "Unterminated string starting at line 1 column 7; skipped the rest"),
        ('{"a": "x\x01"}', "Invalid control character at line 1 column 9; skipped the rest"),
        ('{"a": }', "Expecting value at line 1 column 7; skipped the rest"),
        ('[{"a": "open', "Unterminated string starting at line 1 column 8; the rest of the"),
    ],
)
def test_json_errors_say_where_once(text: str, message: str) -> None:
    (problem,) = [d for d in documents(text) if isinstance(d[1], str)]
    assert message in problem[1] and " at at " not in problem[1]


@pytest.mark.parametrize("encode", [False, True], ids=["text", "utf-8"])
def test_documents_msgspec_refuses_after_non_ascii_text(encode: bool) -> None:
    """The standard parser reads a refused document at the right character, however many
    characters of several bytes came before it, and msgspec goes on after it."""
    text = '{"a": "é"}\n{"b": NaN, "x": "ü"}\n{"c": "ü"}\n{"d": \n{"e": "€"}\n'
    got = [
        (d.position, d.value if isinstance(d, JsonDocument) else d.message)
        for d in iter_json_documents(text.encode() if encode else text)
    ]
    assert got[0] == ("line 1", {"a": "é"})
    assert got[1][0] == "line 2" and math.isnan(got[1][1]["b"]) and got[1][1]["x"] == "ü"
    assert got[2] == ("line 3", {"c": "ü"})
    assert got[3][0] == "line 4" and got[3][1].endswith("skipped to line 5")
    assert got[4:] == [("line 5", {"e": "€"})]


def test_truncated_pretty_document_names_its_request() -> None:
    text = json.dumps({"a": 1}, indent=1) + "\n" + json.dumps({"b": [1, 2, 3]}, indent=1)[:-6]
    got = documents(text)
    assert got[0] == ("request 1 (line 1)", {"a": 1})
    assert got[1][0] == "request 2 (line 4)"
    assert "skipped the rest of the file (lines 4-" in got[1][1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"a": 1}, {"a": ', "malformed or truncated JSON array element"),
        ('[{"a": 1} {"a": 2}]', "expected ',' or ']' after request 1"),
        ('[{"a": 1}', "truncated JSON array: missing ']'"),
        ('[{"a": 1}] junk', "unexpected content after the JSON array"),
    ],
)
def test_broken_arrays_keep_earlier_elements(text: str, message: str) -> None:
    got = documents(text)
    assert got[0] == ("request 1 (line 1)", {"a": 1})
    assert len(got) == 2 and message in got[1][1]


# --- protobuf -------------------------------------------------------------------------------


def _logs_pb(otlp_json: Any) -> bytes:
    source = CORPUS / "otel-openai-v2_latest-eventonly" / "parallel_tools.logs.json"
    return bytes(otlp_json.to_protobuf(json.loads(source.read_text())))


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*/*.pb")), ids=lambda p: p.parent.name)
def test_sniff_corpus_traces(path: Path) -> None:
    assert sniff_protobuf(path.read_bytes()) is ProtoKind.TRACES


def test_sniff_logs(otlp_json: Any) -> None:
    assert sniff_protobuf(_logs_pb(otlp_json)) is ProtoKind.LOGS


def test_sniff_minimal_requests(otlp_json: Any) -> None:
    """One telling field decides; with none, the file name breaks the tie."""
    log = otlp_json.to_protobuf(otlp_json.logs_request([{"observedTimeUnixNano": "5"}]))
    span = otlp_json.to_protobuf(otlp_json.traces_request([{"traceId": "ab" * 16}]))
    assert sniff_protobuf(log, "export.pb") is ProtoKind.LOGS
    assert sniff_protobuf(span, "logs.pb") is ProtoKind.TRACES
    body_only = otlp_json.to_protobuf(otlp_json.logs_request([{"body": {"stringValue": "x"}}]))
    assert sniff_protobuf(body_only, "x.logs.pb") is ProtoKind.LOGS
    assert sniff_protobuf(body_only, "x.pb") is ProtoKind.TRACES


@pytest.mark.parametrize(
    "data",
    [b"", b'{"resourceSpans": []}', b"\x0a\x05abc", b"\x0a\x02\x12\x05", b"\x89PNG\r\n"],
    ids=["empty", "json", "short", "inner-overrun", "png"],
)
def test_sniff_rejects_non_protobuf(data: bytes) -> None:
    assert sniff_protobuf(data) is None


def test_protobuf_resources_and_damage() -> None:
    data = (CORPUS / "openinference-openai" / "parallel_tools.pb").read_bytes()
    whole = list(iter_protobuf_resources(data + data))
    assert all(isinstance(item, tuple) for item in whole)
    assert len(whole) == 2 * len(list(iter_protobuf_resources(data)))
    damaged = list(iter_protobuf_resources(data + data[:-3]))
    assert isinstance(damaged[-1], Problem)
    assert damaged[-1].position == f"byte {len(data)}"
    assert "truncated or corrupt protobuf" in damaged[-1].message
    trailing = list(iter_protobuf_resources(data + b"\x10\x01"))
    assert isinstance(trailing[-1], Problem)
    assert "unexpected protobuf field 2" in trailing[-1].message
