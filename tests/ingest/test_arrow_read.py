"""`turnscore.ingest.arrow_read`: the columnar path reads a file exactly as `read_file` does,
or declines (None) and leaves it to the plain reader.

The contract checked everywhere (`assert_same`): when `read_span_table` gives a table,
`raw_spans` of it equals, record for record and type for type (`repr`, so 1 is not 1.0
or True), the spans `read_file` yields, and `read_file` has nothing to report for the file.
"""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.ingest.outputs import bench_ingest
from turnscore.ingest import anyvalue, arrow_read, otlp_json, otlp_shared
from turnscore.ingest.arrow_read import raw_spans, read_span_table
from turnscore.ingest.otlp import read_file
from turnscore.ingest.records import RawSpan
from turnscore.ingest.span_table import SPAN_TABLE

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
CORPUS_FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file())


def _plain_reader_only(path: Path) -> bool:
    """Corpus files the columnar path leaves to the plain reader, and why."""
    return (
        path.suffix == ".pb"  # protobuf
        or path.name.endswith(".logs.json")  # logs: resourceLogs is not in the schema
        or path.name in ("ground_truth.json", "README.md")  # not OTLP
        or "protojson-default" in path.name  # enum names, base64 ids: the other dialect
    )


def assert_same(path: Path) -> bool:
    """The contract; True when the columnar path took the file."""
    table = read_span_table(path)
    if table is None:
        return False
    records = list(read_file(path))
    assert all(isinstance(r, RawSpan) for r in records), [
        r for r in records if not isinstance(r, RawSpan)
    ]
    assert table.schema == SPAN_TABLE
    got = raw_spans(table)
    assert got == records
    assert repr(got) == repr(records)
    return True


def test_span_table_columns_are_the_raw_span_fields_in_order() -> None:
    # `raw_spans` builds records positionally from the columns.
    assert SPAN_TABLE.names == [f.name for f in dataclasses.fields(RawSpan)]


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_file_reads_as_plain_or_declines(path: Path) -> None:
    assert assert_same(path) is not _plain_reader_only(path)


def test_most_of_the_corpus_takes_the_columnar_path() -> None:
    traces = [p for p in CORPUS_FILES if p.suffix == ".json" and not _plain_reader_only(p)]
    assert len(traces) >= 40
    assert all(read_span_table(p) is not None for p in traces)


def test_compressed_corpus_file(tmp_path: Path) -> None:
    source = CORPUS / "strands_default" / "multi_turn.json"
    path = tmp_path / "multi_turn.json.gz"
    path.write_bytes(gzip.compress(source.read_bytes()))
    assert assert_same(path)
    truncated = tmp_path / "truncated.json.gz"
    truncated.write_bytes(path.read_bytes()[:-20])
    assert read_span_table(truncated) is None


# --- benchmark traffic --------------------------------------------------------------------




@pytest.fixture(scope="module")
def bench_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("arrow_bench")
    files = bench_ingest().generate(root, 2000, 1000, formats=("json", "jsonl"))
    paths: list[Path] = files["json"] + files["jsonl"]
    zipped = root / "export.jsonl.gz"
    zipped.write_bytes(gzip.compress(files["jsonl"][0].read_bytes()))
    return [*paths, zipped]


def test_benchmark_files_take_the_columnar_path(bench_files: list[Path]) -> None:
    for path in bench_files:
        assert assert_same(path), path


# --- edge cases ----------------------------------------------------------------------------

TRACE, SPAN, PARENT = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174", "eee19b7ec3c1b173"


def _request() -> dict[str, Any]:
    """A valid request touching every member the path reads."""
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [
                        {"key": "service.name", "value": {"stringValue": "svc"}},
                        {"key": "pid", "value": {"intValue": "42"}},
                    ]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "lib", "version": "1.0"},
                        "spans": [
                            {
                                "traceId": TRACE,
                                "spanId": SPAN,
                                "parentSpanId": PARENT,
                                "name": "chat",
                                "kind": 3,
                                "startTimeUnixNano": "1700000000000000000",
                                "endTimeUnixNano": "1700000000500000000",
                                "attributes": [
                                    {"key": "s", "value": {"stringValue": "text"}},
                                    {"key": "i", "value": {"intValue": "-7"}},
                                    {"key": "d", "value": {"doubleValue": 0.1}},
                                    {"key": "b", "value": {"boolValue": True}},
                                ],
                                "events": [
                                    {
                                        "timeUnixNano": "1700000000100000000",
                                        "name": "gen_ai.choice",
                                        "attributes": [
                                            {"key": "index", "value": {"intValue": "0"}}
                                        ],
                                    }
                                ],
                                "status": {"code": 2, "message": "boom"},
                            },
                            {
                                "traceId": TRACE,
                                "spanId": PARENT,
                                "name": "root",
                                "startTimeUnixNano": "1699999999000000000",
                                "endTimeUnixNano": "1700000001000000000",
                            },
                        ],
                    }
                ],
            }
        ]
    }


Mutation = Callable[[dict[str, Any]], Any]


def _span(doc: dict[str, Any]) -> dict[str, Any]:
    span: dict[str, Any] = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    return span


def _set_span(**fields: Any) -> Mutation:
    return lambda doc: _span(doc).update(fields)


def _attr(value: Any, key: str | None = "k") -> Mutation:
    entry = {"value": value} if key is None else {"key": key, "value": value}
    return lambda doc: _span(doc)["attributes"].append(entry)


def _line(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode() + b"\n"


def _second_resource(value: Any) -> Mutation:
    """A second resourceSpans whose one resource attribute is `value`."""

    def mutate(doc: dict[str, Any]) -> None:
        block = copy.deepcopy(doc["resourceSpans"][0])
        block["resource"]["attributes"] = [{"key": "pid", "value": value}]
        doc["resourceSpans"][0]["resource"]["attributes"] = [
            {"key": "pid", "value": {"intValue": "1"}}
        ]
        doc["resourceSpans"].append(block)

    return mutate


# (name, mutation of a valid request or the whole file's bytes, columnar path expected)
EDGE_CASES: list[tuple[str, Mutation | bytes, bool]] = [
    ("valid", lambda doc: None, True),
    ("uppercase id", _set_span(traceId=TRACE.upper()), True),
    ("zero trace id", _set_span(traceId="0" * 32), False),
    ("zero parent id", _set_span(parentSpanId="0" * 16), True),
    ("empty parent id", _set_span(parentSpanId=""), True),
    ("malformed parent id", _set_span(parentSpanId="xyz"), False),
    ("missing span id", lambda doc: _span(doc).pop("spanId"), False),
    ("base64 trace id", _set_span(traceId="W47/95gDgQPSabYzgT/GDA=="), False),
    ("kind as a name", _set_span(kind="SPAN_KIND_CLIENT"), False),
    ("kind 9", _set_span(kind=9), False),
    ("status code 3", _set_span(status={"code": 3}), False),
    ("time as a number", _set_span(startTimeUnixNano=5), False),
    ("empty time", _set_span(endTimeUnixNano=""), False),  # an end before the start: reported
    ("negative time", _set_span(endTimeUnixNano="-1"), False),
    ("time beyond int64", _set_span(endTimeUnixNano="9223372036854775808"), False),
    (
        "missing name, status, events",
        lambda doc: [_span(doc).pop(k) for k in ("name", "status", "events")],
        True,
    ),
    ("unknown span field", _set_span(foo=1), False),
    ("snake_case field", _set_span(trace_id=TRACE), False),
    ("intValue as a number", _attr({"intValue": 5}), False),
    ("intValue beyond int64", _attr({"intValue": "99999999999999999999"}), False),
    ("intValue padded", _attr({"intValue": " 5"}), False),
    ("doubleValue as an integer", _attr({"doubleValue": 3}), True),
    ('doubleValue "NaN"', _attr({"doubleValue": "NaN"}), False),
    (
        "doubleValue NaN token",
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"'
        + TRACE.encode()
        + b'","spanId":"'
        + SPAN.encode()
        + b'","attributes":[{"key":"d","value":{"doubleValue":NaN}}]}]}]}]}\n',
        False,
    ),
    ("explicit null", _set_span(name=None), False),
    ("explicit null value", _attr(None), False),
    ("null in a string", _attr({"stringValue": '{"a": null, "b\\\\": null}'}), True),
    (
        "arrayValue",
        _attr(
            {
                "arrayValue": {
                    "values": [
                        {"stringValue": "a"},
                        {"intValue": "1"},
                        {"boolValue": False},
                        {"doubleValue": 1.5},
                        {},
                    ]
                }
            }
        ),
        True,
    ),
    ("empty arrayValue", _attr({"arrayValue": {}}), True),
    ("arrayValue in arrayValue", _attr({"arrayValue": {"values": [{"arrayValue": {}}]}}), False),
    (
        "kvlistValue",
        _attr(
            {
                "kvlistValue": {
                    "values": [
                        {"key": "a", "value": {"intValue": "1"}},
                        {"key": "a", "value": {"stringValue": "later"}},
                        {"key": "b"},
                    ]
                }
            }
        ),
        True,
    ),
    (
        "kvlistValue entry without key",
        _attr({"kvlistValue": {"values": [{"value": {"intValue": "1"}}]}}),
        False,
    ),
    ("bytesValue", _attr({"bytesValue": "aGVsbG8="}), True),
    ("bytesValue url-safe", _attr({"bytesValue": "_-8="}), True),
    ("bytesValue not base64", _attr({"bytesValue": "not base64!"}), False),
    ("bytesValue bad padding", _attr({"bytesValue": "aGVsbG8"}), False),
    ("two members", _attr({"stringValue": "a", "intValue": "1"}), False),
    ("duplicate attribute key", _attr({"stringValue": "later"}, key="s"), True),
    ("empty AnyValue", _attr({}), True),
    ("missing value", lambda doc: _span(doc)["attributes"].append({"key": "k"}), True),
    ("missing key", _attr({"stringValue": "x"}, key=None), False),
    ("unknown AnyValue member", _attr({"fooValue": 1}), False),
    ("lone surrogate", _attr({"stringValue": "\ud800"}), False),
    ("surrogate pair", _attr({"stringValue": "\U0001f600"}), True),
    ("resources 1 then True", _second_resource({"boolValue": True}), True),
    ("resources 1 then 1.0", _second_resource({"doubleValue": 1.0}), True),
    (
        "resources 0.0 then -0.0",
        lambda doc: (
            _second_resource({"doubleValue": -0.0})(doc)
            or doc["resourceSpans"][0]["resource"].update(
                attributes=[{"key": "pid", "value": {"doubleValue": 0.0}}]
            )
        ),
        True,
    ),
    (
        "resources then none",
        lambda doc: _second_resource({})(doc) or doc["resourceSpans"][1].pop("resource"),
        True,
    ),
    ("logs request", lambda doc: doc.update(resourceLogs=doc.pop("resourceSpans")), False),
    ("large flags", _set_span(flags=10**20), False),
    (
        "blank lines between requests",
        b"\n" + _line(_request()) + b"  \n\n" + _line(_request()),
        True,
    ),
    ("CRLF line ends", _line(_request()).replace(b"\n", b"\r\n") * 2, True),
    ("no final newline", _line(_request()).rstrip(), True),
    ("trailing spaces", b"\n" + _line(_request()).rstrip() + b" " * 40 + b"\n", True),
    ("trailing spaces, two lines", (_line(_request()).rstrip() + b" " * 40 + b"\n") * 2, False),
    ("empty request", b"{}\n" + _line(_request()), True),
    ("only empty requests", b"{}\n{}\n", True),
    ("pretty-printed request", b"\n\n" + json.dumps(_request(), indent=1).encode(), True),
    ("pretty-printed requests", json.dumps(_request(), indent=1).encode() * 2, False),
    ("two requests on a line", _line(_request()).rstrip() + b" " + _line(_request()), False),
    (
        "a request across two lines after one",
        b"{} " + _line(_request()).replace(b'"kind":3,', b'"kind":\n3,'),
        False,
    ),
    (
        "pretty-printed, first line closes an object",
        b'{"resourceSpans":[{"resource":{}\n,'
        + b'"scopeSpans":'
        + json.dumps(_request()["resourceSpans"][0]["scopeSpans"]).encode()
        + b"}]}",
        True,
    ),
    ("top-level array", b"[" + _line(_request()).rstrip() + b"]\n", False),
    ("BOM", b"\xef\xbb\xbf" + _line(_request()), True),
    ("invalid UTF-8", _line(_request()).replace(b"text", b"t\xffxt"), False),
    ("not JSON", b"hello\n", False),
    ("empty file", b"", False),
    ("a JSON string", b'"resourceSpans"\n', False),
]


def _edge_file(tmp_path: Path, case: Mutation | bytes) -> Path:
    if isinstance(case, bytes):
        data = case
    else:
        doc = _request()
        case(doc)
        data = _line(doc)
    path = tmp_path / "edge.json"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("case", "columnar"), [c[1:] for c in EDGE_CASES], ids=[c[0] for c in EDGE_CASES]
)
def test_edge_case(tmp_path: Path, case: Mutation | bytes, columnar: bool) -> None:
    assert assert_same(_edge_file(tmp_path, case)) is columnar


LIMIT = 8
LENGTH_CASES = [
    ({"stringValue": "é" * LIMIT}, True),
    ({"stringValue": "é" * (LIMIT + 1)}, False),
    ({"arrayValue": {"values": [{"stringValue": "a" * (LIMIT + 1)}]}}, False),
    ({"bytesValue": "YWFhYWFhYWE="}, True),  # 8 bytes
    ({"bytesValue": "YWFhYWFhYWFh"}, False),  # 9 bytes
]


@pytest.mark.parametrize(("value", "columnar"), LENGTH_CASES)
def test_values_over_the_length_limit_go_plain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: dict[str, Any], columnar: bool
) -> None:
    for module in (anyvalue, otlp_json, otlp_shared):
        monkeypatch.setattr(module, "MAX_ATTRIBUTE_VALUE_CHARS", LIMIT)
    assert assert_same(_edge_file(tmp_path, _attr(value))) is columnar


def test_positions_count_blank_lines(tmp_path: Path) -> None:
    path = _edge_file(tmp_path, b"\n" + _line(_request()) + b"\n" + _line(_request()))
    table = read_span_table(path)
    assert table is not None
    assert table.column("position").to_pylist() == ["line 2"] * 2 + ["line 4"] * 2
    assert table.column("source").to_pylist() == [str(path)] * 4


def test_many_blocks_keep_order_and_positions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arrow_read, "_MIN_BLOCK", 1)  # blocks of a line or two
    parsed: list[pa.Table] = []
    read_json = arrow_read.pajson.read_json

    def spy(*args: Any, **kwargs: Any) -> pa.Table:
        parsed.append(read_json(*args, **kwargs))
        return parsed[-1]

    monkeypatch.setattr(arrow_read.pajson, "read_json", spy)
    lines = []
    for i in range(40):
        doc = _request()
        _span(doc)["name"] = f"span {i}"
        lines.append(_line(doc) + b"\n" * (i % 3))
    assert assert_same(_edge_file(tmp_path, b"".join(lines)))
    assert parsed[0].column("resourceSpans").num_chunks > 10
