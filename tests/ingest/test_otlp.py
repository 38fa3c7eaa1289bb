"""`turnscore.ingest.otlp`: every corpus file, every framing, every dialect, bad input."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import zstandard
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from turnscore.ingest.otlp import (
    MAX_ATTRIBUTE_VALUE_CHARS,
    folders_without_input,
    iter_input_files,
    read_bytes,
    read_file,
)
from turnscore.ingest.records import InputError, RawLink, RawLog, RawSpan

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
OTLP_FILES = sorted(
    p for p in CORPUS.glob("*/*") if p.suffix in (".json", ".pb") and p.stem != "ground_truth"
)
JSON_FILES = [p for p in OTLP_FILES if p.suffix == ".json" and "protojson" not in p.name]
AGENTSPANS = CORPUS / "otel-openai-v2_latest-span-agentspans"


def split(records: Iterable[object]) -> tuple[list[RawSpan], list[RawLog], list[InputError]]:
    spans, logs, errors = [], [], []
    for record in records:
        if isinstance(record, RawSpan):
            spans.append(record)
        elif isinstance(record, RawLog):
            logs.append(record)
        else:
            assert isinstance(record, InputError)
            errors.append(record)
    return spans, logs, errors


def content(span: RawSpan) -> tuple[Any, ...]:
    """Everything a span says, without where it was read from."""
    return (
        span.trace_id, span.span_id, span.parent_span_id, span.name, span.kind,
        span.start_unix_nano, span.end_unix_nano, span.status_code, span.status_message,
        dict(span.attributes), span.events, span.links, dict(span.resource), span.scope_name,
        span.scope_version,
    )  # fmt: skip


def naive_items(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    spans = [
        s
        for rs in doc.get("resourceSpans", [])
        for ss in rs.get("scopeSpans", [])
        for s in ss.get("spans", [])
    ]
    logs = [
        r
        for rl in doc.get("resourceLogs", [])
        for sl in rl.get("scopeLogs", [])
        for r in sl.get("logRecords", [])
    ]
    return spans, logs


# --- the corpus ---------------------------------------------------------------------------


def test_corpus_is_not_empty() -> None:
    assert len(JSON_FILES) >= 40
    assert len([p for p in OTLP_FILES if p.suffix == ".pb"]) >= 5


@pytest.mark.parametrize("path", OTLP_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_file_decodes_without_errors(path: Path) -> None:
    spans, logs, errors = split(read_file(path))
    assert errors == []
    assert spans or logs
    for span in spans:
        assert len(span.trace_id) == 32 and span.trace_id == span.trace_id.lower()
        assert len(span.span_id) == 16 and int(span.span_id, 16) > 0
        assert span.parent_span_id is None or len(span.parent_span_id) == 16
        assert span.end_unix_nano >= span.start_unix_nano > 1_600_000_000 * 10**9
        assert span.source == str(path)
        assert span.resource["service.name"] == f"corpus-{path.parent.name}"
    for log in logs:
        assert log.event_name
        assert log.time_unix_nano > 0


@pytest.mark.parametrize("path", JSON_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_json_matches_a_naive_reading(path: Path) -> None:
    naive_spans, naive_logs = naive_items(json.loads(path.read_text()))
    spans, logs, _ = split(read_file(path))
    assert len(spans) == len(naive_spans)
    assert len(logs) == len(naive_logs)
    for raw, span in zip(naive_spans, spans, strict=True):
        assert span.span_id == raw["spanId"]
        assert span.trace_id == raw["traceId"]
        assert span.name == raw["name"]
        assert span.kind == raw["kind"]
        assert span.start_unix_nano == int(raw["startTimeUnixNano"])
        assert span.status_code == raw.get("status", {}).get("code", 0)
        assert list(span.attributes) == [kv["key"] for kv in raw.get("attributes", [])]
        for kv in raw.get("attributes", []):
            if "stringValue" in kv["value"]:
                assert span.attributes[kv["key"]] == kv["value"]["stringValue"]
            elif "intValue" in kv["value"]:
                assert span.attributes[kv["key"]] == int(kv["value"]["intValue"])
        assert [e.name for e in span.events] == [e["name"] for e in raw.get("events", [])]
    for raw, log in zip(naive_logs, logs, strict=True):
        assert log.event_name == raw.get("eventName", "")
        assert log.span_id == (raw.get("spanId") or None)


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*/ground_truth.json")))
def test_non_otlp_json_is_one_clear_error(path: Path) -> None:
    spans, logs, errors = split(read_file(path))
    assert (spans, logs) == ([], [])
    assert len(errors) == 1
    assert errors[0].message.startswith("not an OTLP traces/logs request")
    assert "resourceSpans" in errors[0].message
    assert errors[0].source == str(path)


@pytest.mark.parametrize("pb", sorted(CORPUS.glob("*/*.pb")), ids=lambda p: p.parent.name)
def test_protobuf_equals_spec_json(pb: Path) -> None:
    from_pb = [content(s) for s in split(read_file(pb))[0]]
    from_json = [content(s) for s in split(read_file(pb.with_suffix(".json")))[0]]
    assert from_pb == from_json
    assert from_pb


def test_protojson_default_dialect_equals_spec_json_and_protobuf() -> None:
    dialect = AGENTSPANS / "parallel_tools.protojson-default.json"
    assert '"SPAN_KIND_CLIENT"' in dialect.read_text()  # the file really is the other dialect
    default = [content(s) for s in split(read_file(dialect))[0]]
    spec = [content(s) for s in split(read_file(AGENTSPANS / "parallel_tools.json"))[0]]
    binary = [content(s) for s in split(read_file(AGENTSPANS / "parallel_tools.pb"))[0]]
    assert default == spec == binary
    assert {s[4] for s in default} >= {1, 3}  # internal and client kinds both decoded


def test_snake_case_protojson_keys(tmp_path: Path) -> None:
    message = trace_service_pb2.ExportTraceServiceRequest.FromString(
        (AGENTSPANS / "parallel_tools.pb").read_bytes()
    )
    path = tmp_path / "snake.json"
    path.write_text(json_format.MessageToJson(message, preserving_proto_field_name=True))
    assert '"start_time_unix_nano"' in path.read_text()
    snake = [content(s) for s in split(read_file(path))[0]]
    spec = [content(s) for s in split(read_file(AGENTSPANS / "parallel_tools.json"))[0]]
    assert snake == spec


# --- framings and wrappers ------------------------------------------------------------------


def corpus_requests() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in JSON_FILES[:6]]


def expected_spans(requests: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(s["spanId"], s["name"]) for r in requests for s in naive_items(r)[0]]


@pytest.mark.parametrize(
    ("framing", "render"),
    [
        ("jsonl", lambda reqs: "\n".join(json.dumps(r) for r in reqs) + "\n"),
        ("concatenated", lambda reqs: "".join(json.dumps(r, indent=2) + "\n" for r in reqs)),
        ("concatenated-compact", lambda reqs: "".join(json.dumps(r) for r in reqs)),
        ("array", lambda reqs: json.dumps(reqs, indent=1)),
        ("array-compact", lambda reqs: json.dumps(reqs)),
    ],
)
def test_many_requests_in_one_file(tmp_path: Path, framing: str, render: Any) -> None:
    requests = corpus_requests()
    path = tmp_path / f"export.{framing}"
    path.write_text(render(requests))
    spans, _, errors = split(read_file(path))
    assert errors == []
    assert [(s.span_id, s.name) for s in spans] == expected_spans(requests)


def test_json_starting_with_a_newline_is_not_mistaken_for_protobuf(tmp_path: Path) -> None:
    path = tmp_path / "export.pb"  # protobuf's first byte is 0x0a, a newline
    path.write_text("\n" + (AGENTSPANS / "parallel_tools.json").read_text())
    spans, _, errors = split(read_file(path))
    assert errors == [] and len(spans) == 5


def test_jsonl_positions_are_line_numbers(tmp_path: Path) -> None:
    requests = corpus_requests()
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in requests) + "\n")
    spans, _, _ = split(read_file(path))
    first_line_of = {s["spanId"]: i + 1 for i, r in enumerate(requests) for s in naive_items(r)[0]}
    assert {s.position for s in spans} == {f"line {n}" for n in range(1, len(requests) + 1)}
    for span in spans:
        assert span.position == f"line {first_line_of[span.span_id]}"


def test_concatenated_positions_name_request_and_line(tmp_path: Path) -> None:
    requests = corpus_requests()[:3]
    texts = [json.dumps(r, indent=2) for r in requests]
    path = tmp_path / "export.json"
    path.write_text("\n".join(texts))
    spans, _, _ = split(read_file(path))
    line = 1
    expected = {}
    for index, text in enumerate(texts, start=1):
        for raw in naive_items(requests[index - 1])[0]:
            expected[raw["spanId"]] = f"request {index} (line {line})"
        line += text.count("\n") + 1
    assert {s.span_id: s.position for s in spans} == expected


@pytest.mark.parametrize("wrapper", ["gzip", "zstd", "gzip-in-zstd"])
@pytest.mark.parametrize("name", ["parallel_tools.json", "parallel_tools.pb"])
def test_compressed_files_any_extension(tmp_path: Path, wrapper: str, name: str) -> None:
    original = (AGENTSPANS / name).read_bytes()
    if wrapper == "gzip":
        packed = gzip.compress(original)
    elif wrapper == "zstd":
        packed = zstandard.ZstdCompressor().compress(original)
    else:
        packed = zstandard.ZstdCompressor().compress(gzip.compress(original))
    path = tmp_path / "export.data"  # the extension says nothing
    path.write_bytes(packed)
    got = [content(s) for s in split(read_file(path))[0]]
    assert got == [content(s) for s in split(read_file(AGENTSPANS / name))[0]]
    assert len(got) == 5


def test_protobuf_logs_are_detected_by_content(tmp_path: Path, otlp_json: Any) -> None:
    source = CORPUS / "otel-openai-v2_latest-eventonly" / "parallel_tools.logs.json"
    path = tmp_path / "traces.pb"  # a misleading name
    path.write_bytes(otlp_json.to_protobuf(json.loads(source.read_text())))
    _, logs, errors = split(read_file(path))
    _, expected, _ = split(read_file(source))
    assert errors == []
    strip = [(lg.trace_id, lg.span_id, lg.event_name, lg.time_unix_nano, lg.body) for lg in logs]
    want = [(e.trace_id, e.span_id, e.event_name, e.time_unix_nano, e.body) for e in expected]
    assert strip == want
    assert isinstance(logs[0].body, dict) or logs[0].attributes


def test_logs_json_fields(otlp_json: Any) -> None:
    record = {
        "timeUnixNano": "0",
        "observedTimeUnixNano": "1700000000000000000",
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "",
        "attributes": otlp_json.key_values({"event.name": "gen_ai.choice"}),
        "body": otlp_json.any_value({"message": {"role": "assistant", "content": "hi"}}),
    }
    data = json.dumps(otlp_json.logs_request([record])).encode()
    (log,) = read_bytes(data, "mem")
    assert isinstance(log, RawLog)
    assert log.event_name == "gen_ai.choice"  # from the attribute when eventName is unset
    assert log.time_unix_nano == 1_700_000_000_000_000_000  # observed time as fallback
    assert log.span_id is None
    assert log.body == {"message": {"role": "assistant", "content": "hi"}}


# --- what trace stores answer with ---------------------------------------------------------


def _old_names(request: dict[str, Any]) -> dict[str, Any]:
    """`request` as OTLP before 0.15 named its scope blocks."""
    renamed = {}
    for key, old in (
        ("resourceSpans", "instrumentationLibrarySpans"),
        ("resourceLogs", "instrumentationLibraryLogs"),
    ):
        inner = "scopeSpans" if key == "resourceSpans" else "scopeLogs"
        renamed[key] = [
            {"resource": block["resource"],
             old: [{"instrumentationLibrary": s.pop("scope"), **s} for s in block[inner]]}
            for block in request.get(key, [])
        ]  # fmt: skip
    return {k: v for k, v in renamed.items() if v}


def _chunks(request: dict[str, Any]) -> str:
    """Jaeger's api_v3 answer: the trace's resource blocks streamed, one chunk each."""
    return "\n".join(json.dumps({"result": {"resourceSpans": [b]}})
                     for b in request["resourceSpans"])  # fmt: skip


@pytest.mark.parametrize(
    ("store", "render"),
    [
        ("tempo", lambda r: json.dumps({"batches": r["resourceSpans"]})),
        ("tempo-v2", lambda r: json.dumps({"trace": r})),
        ("tempo-1.x", lambda r: json.dumps({"batches": _old_names(r)["resourceSpans"]})),
        ("jaeger-api-v3", _chunks),
        ("otlp-0.14", lambda r: json.dumps(_old_names(r))),
    ],
)
def test_a_trace_as_trace_stores_answer_reads_as_its_request(
    tmp_path: Path, store: str, render: Any
) -> None:
    """A trace downloaded from Tempo or Jaeger (or written by a pre-2022 Collector) is an
    OTLP request under other names: it reads as the request, span for span."""
    source = AGENTSPANS / "parallel_tools.json"
    expected = [content(s) for s in split(read_file(source))[0]]
    path = tmp_path / f"{store}.json"
    path.write_text(render(json.loads(source.read_text())))
    spans, _, errors = split(read_file(path))
    assert errors == []
    assert sorted(map(repr, map(content, spans))) == sorted(map(repr, expected))
    assert {s.scope_name for s in spans} == {e[13] for e in expected} != {None}


def test_old_names_read_in_logs_and_where_a_request_is_misshapen(tmp_path: Path) -> None:
    """The piece-by-piece reading of a request msgspec refused knows the other names too:
    only the bad span is lost."""
    logs = CORPUS / "otel-openai-v2_latest-eventonly" / "parallel_tools.logs.json"
    expected_logs = [(g.span_id, g.event_name, g.body) for g in split(read_file(logs))[1]]
    request = _old_names(json.loads(logs.read_text()))
    spans = json.loads((AGENTSPANS / "parallel_tools.json").read_text())
    request["batches"] = spans["resourceSpans"]
    request["batches"][0]["scopeSpans"][0]["spans"].append("not a span")
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"trace": request}))
    got_spans, got_logs, errors = split(read_file(path))
    assert [(g.span_id, g.event_name, g.body) for g in got_logs] == expected_logs
    assert len(got_spans) == len(split(read_file(AGENTSPANS / "parallel_tools.json"))[0])
    assert len(errors) == 1 and "is malformed" in errors[0].message


@pytest.mark.parametrize("doc", [{"result": 5}, {"result": {"id": 1}}, {"trace": []}])
def test_other_json_under_a_store_s_key_is_still_no_request(tmp_path: Path, doc: Any) -> None:
    path = tmp_path / "rpc.json"
    path.write_text(json.dumps(doc))
    spans, logs, errors = split(read_file(path))
    assert (spans, logs) == ([], [])
    assert len(errors) == 1 and "not an OTLP traces/logs request" in errors[0].message


# --- iter_input_files -----------------------------------------------------------------------


def test_iter_input_files_recursive_sorted_without_hidden(tmp_path: Path) -> None:
    for name in ["b/2.json", "b/1.pb", "a.jsonl", "b/.hidden.json", ".git/x.json",
                 "c/d/e.json.gz"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    explicit = tmp_path / "b" / ".hidden.json"
    got = list(iter_input_files([tmp_path, explicit, tmp_path / "a.jsonl"]))
    rel = [p.relative_to(tmp_path).as_posix() for p in got]
    assert rel == ["a.jsonl", "b/1.pb", "b/2.json", "c/d/e.json.gz", "b/.hidden.json"]


TAKEN = ["a.json", "b.JSONL", "c.ndjson", "d.pb", "e.binpb", "f.protobuf", "g.json.gz",
         "h.jsonl.zst", "i.pb.zstd", "traces.2024-01-01.jsonl"]
LEFT = ["NOTES.md", "x.csv", "e.gz", "f.zst", "archive.tar.gz", "json", "a.json.bak",
        "a.json.gz.zst"]


def test_a_folder_gives_only_files_named_as_input(tmp_path: Path) -> None:
    for name in TAKEN + LEFT:
        (tmp_path / "in" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "in" / name).write_text("{}")
    got = [p.name for p in iter_input_files([tmp_path / "in"])]
    assert got == sorted(TAKEN)
    # A file named explicitly is read whatever its name.
    named = [tmp_path / "in" / name for name in LEFT]
    assert list(iter_input_files(named)) == named


def test_folders_without_input(tmp_path: Path) -> None:
    for name in ["empty/", "notes/README.md", "hidden/.x.json", "deep/a/b/c.jsonl", "mixed/x.csv",
                 "mixed/y.json"]:
        path = tmp_path / name
        if name.endswith("/"):
            path.mkdir(parents=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("{}")
    folders = [tmp_path / n for n in ("empty", "notes", "hidden", "deep", "mixed")]
    file = tmp_path / "notes" / "README.md"
    assert folders_without_input([*folders, file]) == folders[:3]


def test_iter_input_files_missing_path_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope"):
        list(iter_input_files([tmp_path / "nope"]))


# --- bad input ------------------------------------------------------------------------------


def test_truncated_json_keeps_earlier_requests(tmp_path: Path) -> None:
    requests = corpus_requests()[:3]
    text = "".join(json.dumps(r, indent=2) + "\n" for r in requests)
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) - 200])
    spans, _, errors = split(read_file(path))
    assert [(s.span_id, s.name) for s in spans] == expected_spans(requests[:2])
    assert len(errors) == 1
    assert errors[0].position.startswith("request 3 (line ")
    assert "malformed or truncated JSON" in errors[0].message


def test_malformed_request_in_the_middle_is_skipped(tmp_path: Path) -> None:
    requests = corpus_requests()[:3]
    texts = [json.dumps(r, indent=2) for r in requests]
    texts[1] = texts[1].replace('"spanId"', '"spanId" "oops"', 1)
    path = tmp_path / "mid.json"
    path.write_text("\n".join(texts) + "\n")
    spans, _, errors = split(read_file(path))
    assert [(s.span_id, s.name) for s in spans] == expected_spans([requests[0], requests[2]])
    assert len(errors) == 1
    assert errors[0].position == f"request 2 (line {texts[0].count(chr(10)) + 2})"


def test_jsonl_with_a_bad_line(tmp_path: Path) -> None:
    requests = corpus_requests()[:4]
    lines = [json.dumps(r) for r in requests]
    lines[2] = lines[2][:100]
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(lines) + "\n")
    spans, _, errors = split(read_file(path))
    good = [requests[0], requests[1], requests[3]]
    assert [(s.span_id, s.name) for s in spans] == expected_spans(good)
    assert [e.position for e in errors] == ["line 3"]
    assert "skipped to line 4" in errors[0].message


def test_jsonl_with_a_non_otlp_line(tmp_path: Path) -> None:
    requests = corpus_requests()[:2]
    path = tmp_path / "export.jsonl"
    lines = [json.dumps(requests[0]), '{"hello": 1}', "[1, 2]", json.dumps(requests[1])]
    path.write_text("\n".join(lines) + "\n")
    spans, _, errors = split(read_file(path))
    assert [(s.span_id, s.name) for s in spans] == expected_spans(requests)
    assert [e.position for e in errors] == ["line 2", "line 3"]
    assert all(e.message.startswith("not an OTLP traces/logs request") for e in errors)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(40),
         "not an OTLP traces/logs file: a PNG image; expected OTLP JSON or protobuf"),
        (b"trace_id,span_id,name\n1,2,chat\n",
         "not an OTLP traces/logs file: text starting 'trace_id,span_id,name'; expected OTLP "
         "JSON or protobuf"),
        (bytes(range(7, 200)),
         "not an OTLP traces/logs file: binary data starting 07 08 09 0a 0b 0c 0d 0e 0f 10 11 "
         "12 13 14 15 16; expected OTLP JSON or protobuf"),
        (b"", "the file is empty"),
        (b" \n\n", "the file is empty"),
        (gzip.compress(b""), "the file is empty"),
    ],
)  # fmt: skip
def test_wrong_file_type_is_one_clear_error(tmp_path: Path, payload: bytes, message: str) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(payload)
    (error,) = read_file(path)
    assert isinstance(error, InputError)
    assert (error.source, error.position, error.message) == (str(path), "file", message)


@pytest.mark.parametrize(
    ("packed", "message"),
    [
        (zstandard.ZstdCompressor().compress(JSON_FILES[0].read_bytes())[:40],
         "truncated or corrupt zstd stream: nothing decoded"),
        (gzip.compress(JSON_FILES[0].read_bytes())[:10],  # the header alone
         "truncated or corrupt gzip stream: nothing decoded"),
        (zstandard.ZstdCompressor().compress(b"{}")[:4] + bytes(range(200)),
         "corrupt zstd stream: "),
    ],
)  # fmt: skip
def test_damaged_compression_with_nothing_decoded_is_one_error(
    packed: bytes, message: str
) -> None:
    # The damage is the whole story: no "the file is empty" about what decoded after it.
    (error,) = read_bytes(packed, "x.json.zst")
    assert isinstance(error, InputError) and error.message.startswith(message)


def test_unreadable_path_is_an_error(tmp_path: Path) -> None:
    (error,) = read_file(tmp_path)  # a folder cannot be read as a file
    assert isinstance(error, InputError)
    assert "cannot read file" in error.message


def test_invalid_utf8_is_replaced_and_reported(otlp_json: Any) -> None:
    span = otlp_json.span(attributes={"gen_ai.prompt": "caf\u00e9 MARK"})
    data = otlp_json.dumps(otlp_json.traces_request([span])).encode()
    data = data.replace(b"MARK", b"\xff\xfe")
    offset = data.index(b"\xff")
    spans, _, errors = split(read_bytes(data, "bad.json"))
    assert spans[0].attributes["gen_ai.prompt"] == "caf\u00e9 \ufffd\ufffd"
    assert len(errors) == 1
    assert errors[0].position == f"byte {offset} (line 1)"
    assert "invalid UTF-8" in errors[0].message and "2 invalid" in errors[0].message


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"trace_id": None}, "traceId is missing"),
        ({"span_id": None}, "spanId is missing"),
        ({"span_id": "xyz"}, "spanId 'xyz' is not 8 bytes"),
        ({"trace_id": "0af7651916cd43dd8448eb21"}, "traceId '0af7651916cd43dd8448eb21' is not"),
        ({"trace_id": "0" * 32}, "traceId is missing or zero"),
    ],
)
def test_span_with_bad_ids_is_skipped(otlp_json: Any, fields: dict[str, Any], reason: str) -> None:
    good = otlp_json.span(name="good", span_id="00f067aa0ba902b7")
    bad = otlp_json.span(name="broken", **fields)
    data = otlp_json.dumps(otlp_json.traces_request([bad, good])).encode()
    spans, _, errors = split(read_bytes(data, "ids.json"))
    assert [s.name for s in spans] == ["good"]
    assert len(errors) == 1
    assert "span 'broken' skipped" in errors[0].message
    assert reason in errors[0].message
    assert errors[0].position == "line 1, resourceSpans[0].scopeSpans[0].spans[0]"


def test_bad_parent_id_keeps_the_span_as_root(otlp_json: Any) -> None:
    span = otlp_json.span(name="child", parent_span_id="zz")
    data = otlp_json.dumps(otlp_json.traces_request([span])).encode()
    spans, _, errors = split(read_bytes(data, "p.json"))
    assert spans[0].parent_span_id is None
    assert errors[0].span_id == spans[0].span_id
    assert "parentSpanId 'zz'" in errors[0].message


def test_bad_attribute_value_drops_only_that_attribute(otlp_json: Any) -> None:
    span = otlp_json.span(name="chat", attributes={"ok": 1})
    span["attributes"].append({"key": "bad", "value": {"intValue": "twelve"}})
    data = otlp_json.dumps(otlp_json.traces_request([span])).encode()
    spans, _, errors = split(read_bytes(data, "a.json"))
    assert spans[0].attributes == {"ok": 1}
    assert "attribute 'bad' of span 'chat' dropped" in errors[0].message
    assert errors[0].position == "line 1, span b7ad6b7169203331"


@pytest.mark.parametrize(
    ("kind", "code", "expected", "errors"),
    [
        ("SPAN_KIND_SERVER", "STATUS_CODE_OK", (2, 1), 0),
        ("CLIENT", "ERROR", (3, 2), 0),
        ("4", "2", (4, 2), 0),
        ("SIDEWAYS", 1.5, (0, 0), 2),
    ],
)
def test_enum_spellings(otlp_json: Any, kind: Any, code: Any, expected: Any, errors: int) -> None:
    span = otlp_json.span(kind=kind, status={"code": code})
    data = otlp_json.dumps(otlp_json.traces_request([span])).encode()
    spans, _, found = split(read_bytes(data, "e.json"))
    assert (spans[0].kind, spans[0].status_code) == expected
    assert len(found) == errors
    assert all("is not a known value" in e.message for e in found)


def test_float_timestamps_are_accepted(otlp_json: Any) -> None:
    span = otlp_json.span(startTimeUnixNano=1.7e18, endTimeUnixNano="1700000000000000001")
    data = otlp_json.dumps(otlp_json.traces_request([span])).encode()
    (got,) = read_bytes(data, "t.json")
    assert isinstance(got, RawSpan)
    assert (got.start_unix_nano, got.end_unix_nano) == (
        1_700_000_000_000_000_000,
        1_700_000_000_000_000_001,
    )


@pytest.mark.parametrize("field", ["startTimeUnixNano", "kind"])
def test_a_non_ascii_digit_is_an_error_not_a_crash(otlp_json: Any, field: str) -> None:
    span = otlp_json.span(**{field: "\u00b2"})  # '²': a digit to str.isdigit, not to int
    data = otlp_json.dumps(otlp_json.traces_request([span])).encode()
    spans, _, errors = split(read_bytes(data, "d.json"))
    assert len(errors) == 1 and "'\u00b2'" in errors[0].message
    assert len(spans) == (1 if field == "kind" else 0)  # a bad kind reads as 0, a bad time skips


def test_huge_attribute_is_truncated_and_reported(otlp_json: Any) -> None:
    huge = "x" * (MAX_ATTRIBUTE_VALUE_CHARS + 10)
    span = otlp_json.span(
        name="chat", attributes={"gen_ai.input.messages": huge, "nested": [{"deep": huge}]}
    )
    request = otlp_json.traces_request([span])
    data = otlp_json.dumps(request).encode()
    for source, payload in [("j.json", data), ("p.pb", otlp_json.to_protobuf(request))]:
        spans, _, errors = split(read_bytes(payload, source))
        assert len(spans[0].attributes["gen_ai.input.messages"]) == MAX_ATTRIBUTE_VALUE_CHARS
        assert spans[0].attributes["nested"] == [{"deep": huge[:MAX_ATTRIBUTE_VALUE_CHARS]}]
        assert [e.span_id for e in errors] == ["b7ad6b7169203331"] * 2
        assert "'gen_ai.input.messages' of span 'chat'" in errors[0].message
        assert str(MAX_ATTRIBUTE_VALUE_CHARS + 10) in errors[0].message
        assert "'nested'" in errors[1].message


def test_protobuf_span_with_bad_ids(otlp_json: Any) -> None:
    spans_in = [
        otlp_json.span(name="short-id", span_id=b"abc".hex()),
        otlp_json.span(name="fine", span_id="00f067aa0ba902b7"),
    ]
    data = otlp_json.to_protobuf(otlp_json.traces_request(spans_in))
    spans, _, errors = split(read_bytes(data, "x.pb"))
    assert [s.name for s in spans] == ["fine"]
    assert "span 'short-id' skipped: span_id '616263' is 3 bytes" in errors[0].message
    assert errors[0].position == "byte 3, resourceSpans[0].scopeSpans[0].spans[0]"


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"trace_id": None}, "span 'odd' skipped: trace_id is missing or zero"),
        ({"span_id": "0" * 16}, "span 'odd' skipped: span_id is missing or zero"),
        ({"parent_span_id": "abcdef"}, "span 'odd': parent_span_id 'abcdef' is 3 bytes"),
    ],
)
def test_protobuf_spans_settle_ids_like_json_ones(
    otlp_json: Any, fields: dict[str, Any], reason: str
) -> None:
    """One rule for both readers: no usable ids, no span; a bad parent, a root span."""
    request = otlp_json.traces_request([otlp_json.span(name="odd", **fields)])
    spans, _, errors = split(read_bytes(otlp_json.to_protobuf(request), "ids.pb"))
    assert [s.name for s in spans] == ([] if "skipped" in reason else ["odd"])
    assert len(errors) == 1 and reason in errors[0].message
    if spans:
        assert spans[0].parent_span_id is None
        assert errors[0].message.endswith("; treated as a root span")
        assert errors[0].span_id == spans[0].span_id


_LINKED_TRACE, _LINKED_SPAN = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"


def _linked(otlp_json: Any) -> dict[str, Any]:
    span = otlp_json.span(name="process weather", parent_span_id="")
    span["links"] = [
        {"traceId": _LINKED_TRACE, "spanId": _LINKED_SPAN,
         "attributes": otlp_json.key_values({"messaging.operation": "create"})},
        {"traceId": _LINKED_TRACE, "spanId": "abcdef"},  # 3 bytes: no span named
    ]
    return otlp_json.traces_request([span])


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_span_links_are_read_and_a_bad_one_costs_only_itself(otlp_json: Any, encoding: str) -> None:
    request = _linked(otlp_json)
    data = (otlp_json.to_protobuf(request) if encoding == "protobuf"
            else otlp_json.dumps(request).encode())  # fmt: skip
    [span], _, [error] = split(read_bytes(data, f"links.{encoding}"))
    assert span.links == (RawLink(_LINKED_TRACE, _LINKED_SPAN, {"messaging.operation": "create"}),)
    assert "link 1 of span 'process weather' dropped" in error.message
    assert error.span_id == span.span_id


def test_links_of_the_wrong_json_type_cost_only_the_links(otlp_json: Any) -> None:
    request = otlp_json.traces_request([otlp_json.span(name="odd", links={"traceId": "x"})])
    [span], _, [error] = split(read_bytes(otlp_json.dumps(request).encode(), "l.json"))
    assert span.name == "odd" and span.links == ()
    assert "links" in error.message and "dropped" in error.message


def test_truncated_protobuf_keeps_whole_resources(tmp_path: Path) -> None:
    parts = [(AGENTSPANS / "parallel_tools.pb").read_bytes()] * 2
    data = b"".join(parts)
    whole = split(read_bytes(data, "two.pb"))[0]
    assert len(whole) == 10
    spans, _, errors = split(read_bytes(data[:-50], "cut.pb"))
    assert 5 <= len(spans) < 10
    assert [content(s) for s in spans] == [content(s) for s in whole[: len(spans)]]
    assert len(errors) == 1 and "truncated or corrupt protobuf" in errors[0].message
    assert errors[0].position.startswith("byte ")


def test_truncated_gzip_reports_and_keeps_what_decoded(tmp_path: Path) -> None:
    requests = corpus_requests()
    packed = gzip.compress("\n".join(json.dumps(r) for r in requests).encode())
    spans, _, errors = split(read_bytes(packed[: len(packed) * 2 // 3], "cut.gz"))
    assert spans and len(spans) < len(expected_spans(requests))
    assert "truncated gzip stream" in errors[0].message


# --- real SDK output --------------------------------------------------------------------------


def test_real_sdk_spans_survive_protobuf_and_json(tmp_path: Path) -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind, Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "sdk-test"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("turnscore.tests", "9.9")
    attributes: dict[str, Any] = {
        "s": "héllo",
        "i": -(2**62),
        "f": 0.25,
        "b": True,
        "ss": ["a", "b"],
        "ii": [1, 2, 3],
        "ff": [1.5, -2.0],
        "bb": [True, False],
    }
    with tracer.start_as_current_span("invoke_agent", kind=SpanKind.INTERNAL) as agent:
        with tracer.start_as_current_span("chat", kind=SpanKind.CLIENT, attributes=attributes):
            pass
        agent.add_event("gen_ai.choice", {"index": 0, "message": "done"})
        agent.set_status(Status(StatusCode.ERROR, "boom"))
    provider.shutdown()
    finished = exporter.get_finished_spans()
    request = encode_spans(finished)
    (tmp_path / "sdk.pb").write_bytes(request.SerializeToString())
    (tmp_path / "sdk.json").write_text(json_format.MessageToJson(request))
    by_id = {format(s.context.span_id, "016x"): s for s in finished}
    for path in (tmp_path / "sdk.pb", tmp_path / "sdk.json"):
        spans, _, errors = split(read_file(path))
        assert errors == []
        assert {s.span_id for s in spans} == set(by_id)
        for span in spans:
            sdk = by_id[span.span_id]
            assert span.trace_id == format(sdk.context.trace_id, "032x")
            assert span.parent_span_id == (
                format(sdk.parent.span_id, "016x") if sdk.parent else None
            )
            assert (span.start_unix_nano, span.end_unix_nano) == (sdk.start_time, sdk.end_time)
            assert span.resource["service.name"] == "sdk-test"
            assert (span.scope_name, span.scope_version) == ("turnscore.tests", "9.9")
        chat = next(s for s in spans if s.name == "chat")
        assert chat.attributes == {k: list(v) if isinstance(v, list) else v
                                   for k, v in attributes.items()}  # fmt: skip
        assert chat.kind == 3
        agent_span = next(s for s in spans if s.name == "invoke_agent")
        assert (agent_span.status_code, agent_span.status_message) == (2, "boom")
        assert agent_span.events[0].name == "gen_ai.choice"
        assert agent_span.events[0].attributes == {"index": 0, "message": "done"}


def test_console_exporter_output_is_named(tmp_path: Path) -> None:
    """The SDK's console exporters print spans and log records in a JSON shape of their own,
    which tutorials redirect to a file; the error says what the file is and what to use."""
    from opentelemetry._logs import SeverityNumber
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import ConsoleLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    path = tmp_path / "console.json"
    with path.open("w") as out:
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
        logger_provider = LoggerProvider()
        logger_provider.add_log_record_processor(
            SimpleLogRecordProcessor(ConsoleLogRecordExporter(out=out)))
        with tracer_provider.get_tracer("t").start_as_current_span("chat gpt-4o") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            logger_provider.get_logger("t").emit(
                body="hi", severity_number=SeverityNumber.INFO, event_name="gen_ai.user.message")
        tracer_provider.shutdown()
        logger_provider.shutdown()
    spans, logs, errors = split(read_file(path))
    assert (spans, logs) == ([], [])
    assert len(errors) == 2
    assert all("console exporter's output, which is not OTLP" in e.message for e in errors)
