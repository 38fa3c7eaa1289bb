"""Hostile input (issue 17 items 1, 2, 7, 9): one bad file is that file's error and the rest
is ingested; decompression is capped; the same spans give the same rows in every format;
nothing wrong is accepted without a row naming the span."""

from __future__ import annotations

import copy
import gzip
import json
import random
import shutil
import tracemalloc
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
import zstandard
from typer.testing import CliRunner

from turnscore.errors import ConfigError
from turnscore.ingest import formats, inputs
from turnscore.ingest.formats import Limits, decompress
from turnscore.ingest.otlp import read_bytes
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.records import WHOLE_FILE, InputError, RawLog, RawSpan
from turnscore.ingest.store import TurnStore
from turnscore.warehouse.config import load_config
from turnscore.warehouse.ingest_run import IngestReport, run_ingest

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
GOOD = CORPUS / "otel-genai-openai" / "single_tool.json"
"""A real OTel SDK export (see the corpus README), beside every bad file."""
OTHER = CORPUS / "otel-genai-openai" / "no_tool.json"
"""Another real export, other traces: the bad files are mutants of it."""
SMALL = Limits(max_expanded_mb=1, max_expansion_ratio=100)


def _export(path: Path = OTHER) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def _first_span(doc: dict[str, Any]) -> dict[str, Any]:
    span: dict[str, Any] = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    return span


def _mutant(**fields: Any) -> bytes:
    doc = _export()
    _first_span(doc).update(fields)
    return json.dumps(doc).encode()


def _with_attribute(value: dict[str, Any], key: str = "extra") -> bytes:
    doc = _export()
    _first_span(doc)["attributes"].append({"key": key, "value": value})
    return json.dumps(doc).encode()  # ASCII: a lone surrogate stays an escape


def _protobuf(**fields: Any) -> bytes:
    """The export as protobuf, with fields of its first span set (the wire allows values
    JSON readers would refuse)."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    request = trace_service_pb2.ExportTraceServiceRequest()
    doc = _export()
    for span in (s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]):
        for key in ("traceId", "spanId", "parentSpanId"):
            if span.get(key):
                span[key] = _b64(span[key])
    json_format.ParseDict(doc, request)
    first = request.resource_spans[0].scope_spans[0].spans[0]
    for name, value in fields.items():
        setattr(first, name, value)
    return request.SerializeToString()


def _b64(hex_id: str) -> str:
    import base64

    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def _bomb(codec: str, size: int) -> bytes:
    payload = b" " * size
    if codec == "gz":
        return gzip.compress(payload, compresslevel=9)
    return zstandard.ZstdCompressor(level=19).compress(payload)


FAULTS: dict[str, tuple[str, bytes]] = {
    "json start 2^63": ("bad.json", _mutant(startTimeUnixNano=str(2**63))),
    "json end 10^19": ("bad.json", _mutant(endTimeUnixNano=str(10**19))),
    "json kind 2^40": ("bad.json", _mutant(kind=2**40)),
    "protobuf start 2^63": ("bad.pb", _protobuf(start_time_unix_nano=2**63)),
    "protobuf end 10^19": ("bad.pb", _protobuf(end_time_unix_nano=10**19)),
    "protobuf kind 2^31-1": ("bad.pb", _protobuf(kind=2**31 - 1)),
    "json intValue 10^29": ("bad.json", _with_attribute({"intValue": str(10**29)})),
    "json lone surrogates": ("bad.json", _with_attribute({"stringValue": "a\ud800"}, "k\udc00")),
    "json nested 5000 deep": ("bad.json", b'{"resourceSpans": ' + b"[" * 5000 + b"]" * 5000 + b"}"),
    "zstd bomb": ("bad.json.zst", _bomb("zst", 8 << 20)),
    "gzip bomb": ("bad.json.gz", _bomb("gz", 8 << 20)),
}
"""Each crashed the whole ingest (a traceback, exit 1, nothing loaded) before."""


def _inputs(tmp_path: Path, name: str, data: bytes) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(GOOD, folder / "good.json")
    (folder / name).write_bytes(data)
    return folder


def _table(warehouse: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(warehouse / "warehouse.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


def _good_alone(tmp_path: Path) -> int:
    report = run_ingest([GOOD], tmp_path / "alone")
    assert report.outcome == "ok"
    return report.turns_new


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_bad_file_is_its_own_error_and_the_rest_is_ingested(tmp_path: Path, fault: str) -> None:
    name, data = FAULTS[fault]
    folder = _inputs(tmp_path, name, data)
    report = run_ingest([folder], tmp_path / "wh", limits=SMALL)
    assert report.outcome == "partial", report.error  # exit 3
    bad = str(folder / name)
    assert report.errors and all(e.source == bad for e in report.errors), report.errors
    assert report.turns_new >= _good_alone(tmp_path)
    files = _table(tmp_path / "wh", "SELECT path FROM ingested_files")
    assert (str(folder / "good.json"),) in files
    rows = _table(tmp_path / "wh", "SELECT source, position, message FROM ingest_errors")
    assert rows and all(source == bad and position for source, position, _ in rows)


def test_a_failure_inside_a_reader_is_that_files_error_with_its_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A MemoryError (or a bug) while decompressing one file: the other files go in."""

    def out_of_memory(data: bytes, cap: int) -> tuple[bytes, None]:
        raise MemoryError("simulated")

    monkeypatch.setattr(formats, "_unzstd", out_of_memory)
    packed = zstandard.ZstdCompressor().compress(OTHER.read_bytes())
    folder = _inputs(tmp_path, "bad.json.zst", packed)
    report = run_ingest([folder], tmp_path / "wh")
    assert report.outcome == "partial"
    (error,) = report.errors
    assert error.source == str(folder / "bad.json.zst")
    assert "MemoryError: simulated" in error.message
    assert "Traceback" in caplog.text  # a bug stays visible
    assert report.turns_new >= _good_alone(tmp_path)


def test_a_failure_the_reader_does_not_report_is_that_files_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = inputs.read_file

    def fails_on_bad(path: Path, limits: Limits = formats.DEFAULT_LIMITS) -> Iterator[Any]:
        if path.name == "bad.json":
            raise RuntimeError("reader bug")
        return real(path, limits)

    monkeypatch.setattr(inputs, "read_file", fails_on_bad)
    folder = _inputs(tmp_path, "bad.json", OTHER.read_bytes())
    batch = ingest_paths([folder], tmp_path / "out", workers=2)
    (error,) = batch.errors
    assert error.source == str(folder / "bad.json")
    assert "RuntimeError: reader bug" in error.message
    assert batch.turns > 0


def test_ingest_json_prints_its_object_whatever_happens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import typer

    from turnscore.cli import ingest as cli_ingest
    from turnscore.warehouse import ingest_run

    def broken(*args: Any, **kwargs: Any) -> IngestReport:
        raise RuntimeError("a bug")

    # The command imports its library when it runs: patched where it is looked up.
    monkeypatch.setattr(ingest_run, "run_ingest", broken)
    monkeypatch.chdir(tmp_path)
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command("ingest")(cli_ingest.ingest_cli)
    result = CliRunner().invoke(app, ["ingest", str(GOOD), "--json", "--warehouse", "wh"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["outcome"] == "failed" and "RuntimeError: a bug" in document["error"]


# --- decompression cap (item 2) -------------------------------------------------------------


@pytest.mark.parametrize("codec", ["gz", "zst"])
def test_a_decompression_bomb_is_a_problem_and_memory_stays_bounded(codec: str) -> None:
    packed = _bomb(codec, 64 << 20)
    tracemalloc.start()
    try:
        payload, problems = decompress(packed, Limits(max_expanded_mb=2))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert payload == b""
    (problem,) = problems
    assert "decompresses to more than 2,097,152 bytes" in problem.message
    assert peak < 24 << 20  # the cap plus one call's output, not the 64 MiB


def test_the_expansion_ratio_is_capped_beyond_the_floor() -> None:
    packed = _bomb("zst", formats.RATIO_FLOOR + (4 << 20))
    _, problems = decompress(packed, Limits(max_expansion_ratio=1000))
    assert "1000x the file" in problems[0].message
    payload, problems = decompress(_bomb("zst", 1 << 20), Limits(max_expansion_ratio=2))
    assert problems == [] and len(payload) == 1 << 20  # small payloads: any ratio


def test_a_nested_bomb_is_capped_too() -> None:
    inner = _bomb("gz", 8 << 20)
    packed = zstandard.ZstdCompressor().compress(inner)
    payload, problems = decompress(packed, Limits(max_expanded_mb=1))
    assert payload == b"" and "decompresses to more than" in problems[0].message


def test_limits_come_from_the_config_and_the_environment(tmp_path: Path) -> None:
    toml = tmp_path / "turnscore.toml"
    toml.write_text("[ingest]\nmax_expanded_mb = 64\nmax_expansion_ratio = 50\n")
    assert load_config(toml, env={}).ingest == Limits(64, 50)
    env = {"TURNSCORE_INGEST_MAX_EXPANDED_MB": "8"}
    assert load_config(toml, env=env).ingest == Limits(8, 50)
    assert load_config(None, env={}).ingest == Limits()
    for bad in ("max_expanded_mb = 0", "max_expanded_mb = 'lots'", "cap = 3"):
        toml.write_text(f"[ingest]\n{bad}\n")
        with pytest.raises(ConfigError):
            load_config(toml, env={})


# --- silent acceptance (item 9) -------------------------------------------------------------


def _records(data: bytes) -> tuple[list[RawSpan], list[RawLog], list[InputError]]:
    records = list(read_bytes(data, "m.json"))
    return (
        [r for r in records if isinstance(r, RawSpan)],
        [r for r in records if isinstance(r, RawLog)],
        [r for r in records if isinstance(r, InputError)],
    )


def _turns(out: Path) -> list[Any]:
    return sorted(TurnStore(out, "read").read_all(), key=lambda t: t.turn_id)


def test_an_end_before_the_start_is_reported_and_the_turn_lasts_no_less_than_0(
    tmp_path: Path,
) -> None:
    doc = _export()
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["endTimeUnixNano"] = str(int(span["startTimeUnixNano"]) - 1_800_000 * 10**9)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "x.json").write_text(json.dumps(doc))
    batch = ingest_paths([tmp_path / "in"], tmp_path / "out")
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    named = {e.span_id for e in batch.errors if "ms before it starts; kept" in e.message}
    assert named == {s["spanId"] for s in spans}
    turns = _turns(tmp_path / "out")
    assert turns and all(t.duration_ms >= 0 for t in turns)
    assert all(c.duration_ms is None or c.duration_ms >= 0 for t in turns for c in t.calls)


@pytest.mark.parametrize("start", [0, 7])
def test_a_start_time_of_0_or_before_2000_is_reported(tmp_path: Path, start: int) -> None:
    data = _mutant(startTimeUnixNano=str(start))
    spans, _, errors = _records(data)
    span_id = _first_span(_export())["spanId"]
    (error,) = errors
    assert error.span_id == span_id and "kept, so its turn is dated 1970-01-01" in error.message
    assert span_id in {s.span_id for s in spans}
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "x.json").write_bytes(data)  # the columnar reader reports it too
    batch = ingest_paths([tmp_path / "in"], tmp_path / "out")
    assert [e.span_id for e in batch.errors] == [span_id]


def test_a_repeated_resource_spans_key_is_an_error_not_an_empty_file(tmp_path: Path) -> None:
    text = json.dumps(_export())
    folder = _inputs(tmp_path, "dup.json", (text[:-1] + ', "resourceSpans": []}').encode())
    report = run_ingest([folder], tmp_path / "wh")
    assert report.outcome == "partial"
    (error,) = report.errors
    assert error.source == str(folder / "dup.json") and error.position == "line 1"
    assert "repeats the key 'resourceSpans'" in error.message
    files = {p for (p,) in _table(tmp_path / "wh", "SELECT path FROM ingested_files")}
    assert str(folder / "dup.json") not in files  # read again next run, until fixed


def test_a_repeated_key_in_a_pretty_printed_request_too() -> None:
    text = json.dumps(_export(), indent=2)
    _, _, errors = _records((text[:-2] + ',\n  "resourceSpans": []\n}').encode())
    assert "repeats the key 'resourceSpans'" in errors[0].message


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*path, i))


def _wrong_types(value: Any) -> list[Any]:
    """Values of every other JSON type; a decimal string's number keeps its value."""
    if isinstance(value, bool):
        return ["true", 1, {}]
    if isinstance(value, int | float):
        return ["x", {}, [], True]
    if isinstance(value, str):
        return [int(value) if value.isdigit() else 7, {"a": 1}, ["x"], True]
    if isinstance(value, list):
        return [{}, "x", 1]
    return [[], "x", 1]


def _record_paths(doc: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Each span's path in `doc` by span id, and each log record's path in order."""
    spans: dict[str, str] = {}
    logs: list[str] = []
    for outer, middle, leaf in (("resourceSpans", "scopeSpans", "spans"),
                                ("resourceLogs", "scopeLogs", "logRecords")):
        for i, block in enumerate(doc.get(outer, [])):
            for j, scope in enumerate(block.get(middle, [])):
                for k, item in enumerate(scope.get(leaf, [])):
                    path = f"{outer}[{i}].{middle}[{j}].{leaf}[{k}]"
                    if leaf == "spans":
                        spans[item["spanId"]] = path
                    else:
                        logs.append(path)
    return spans, logs


def _names(error: InputError, request: str, span_id: str | None, path: str) -> bool:
    """Whether `error` names the record at `path` of `request` (with `span_id`, for a
    span): by its span id, by its path or the path of a block or list holding it, or as
    an error of the whole request."""
    if span_id is not None and error.span_id == span_id:
        return True
    if error.span_id is not None:
        return False
    at, _, where = error.position.partition(", ")
    if at not in (request, WHOLE_FILE):
        return False
    return where == "" or path == where or path.startswith((where + ".", where + "["))


def _unreported(spans: list[RawSpan], logs: list[RawLog], paths: tuple[dict[str, str],
                list[str]], got_spans: list[RawSpan], got_logs: list[RawLog],
                got_errors: list[InputError]) -> list[str]:
    """The records a mutant changed (dropped, altered or added) that no error names."""
    before = {s.span_id: replace(s, position="") for s in spans}
    after = {s.span_id: replace(s, position="") for s in got_spans}
    request = spans[0].position if spans else logs[0].position
    span_paths, log_paths = paths
    missed = [
        span_paths.get(k, k) for k in sorted(before.keys() | after.keys())
        if before.get(k) != after.get(k)
        and not any(_names(e, request, k, span_paths.get(k, "?")) for e in got_errors)
    ]
    # Log records have no id: one of the original's is changed when the mutant's
    # records no longer hold it; one of the mutant's when the original's did not.
    remaining = [replace(g, position="") for g in got_logs]
    for log, path in zip(logs, log_paths, strict=True):
        kept = replace(log, position="")
        if kept in remaining:
            remaining.remove(kept)
        elif not any(_names(e, request, None, path) for e in got_errors):
            missed.append(path)
    if remaining and not got_errors:
        missed.append(f"{len(remaining)} new log record(s)")
    return missed


@pytest.mark.parametrize(
    "export",
    [
        CORPUS / "otel-genai-openai" / "single_tool.json",
        CORPUS / "openinference-openai" / "tool_error.json",
        CORPUS / "otel-openai-v2_latest-eventonly" / "single_tool.logs.json",
    ],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_every_wrong_type_mutant_decodes_the_same_or_is_reported(export: Path) -> None:
    """Each value of a real SDK export replaced by one of another JSON type: the file reads
    exactly as before (spans and log records), or each span and log record that changed is
    named by an error: by its span id, its path or a block holding it, or a whole-request
    error at the request's position."""
    doc = _export(export)
    spans, logs, errors = _records(json.dumps(doc).encode())
    assert errors == [] and (spans or logs)
    paths = _record_paths(doc)
    mutants = 0
    silent: list[str] = []
    for path, value in list(_paths(doc)):
        for wrong in _wrong_types(value) if path else ():
            mutant = copy.deepcopy(doc)
            target = mutant
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = wrong
            mutants += 1
            got_spans, got_logs, got_errors = _records(json.dumps(mutant).encode())
            missed = _unreported(spans, logs, paths, got_spans, got_logs, got_errors)
            if missed:
                silent.append(f"{'.'.join(map(str, path))} = {wrong!r}: {missed}")
    assert mutants > 300
    assert silent == []


def test_unknown_enums_and_non_string_names_are_reported() -> None:
    spans, _, errors = _records(_mutant(kind=9, name=12, status={"code": 7, "message": 3}))
    span_id = _first_span(_export())["spanId"]
    first = next(s for s in spans if s.span_id == span_id)
    assert (first.kind, first.status_code, first.name, first.status_message) == (0, 0, "12", "3")
    messages = " | ".join(e.message for e in errors if e.span_id == span_id)
    for what in ("kind '9' is not a known value", "status.code '7' is not a known value",
                 "span name is not a string", "status.message is not a string"):
        assert what in messages


def test_an_any_value_nested_too_deep_is_dropped_and_reported(tmp_path: Path) -> None:
    """260 levels: JSON parsers read it, but the JSON writers downstream refuse it (the
    span's attributes are stored as JSON), which crashed the run."""
    levels = 260
    deep = '{"arrayValue":{"values":[' * levels + '{"stringValue":"leaf"}' + "]}}" * levels
    doc = _export()
    _first_span(doc)["attributes"].append({"key": "deep", "value": "@DEEP@"})
    data = json.dumps(doc).replace('"@DEEP@"', deep).encode()
    spans, _, errors = _records(data)
    assert "attribute 'deep'" in errors[0].message
    assert "nested deeper than 64 levels" in errors[0].message
    assert all("deep" not in s.attributes for s in spans)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "deep.json").write_bytes(data)
    batch = ingest_paths([tmp_path / "in"], tmp_path / "out")
    assert batch.turns > 0 and len(batch.errors) == 1


# --- same spans, same rows (item 7) ---------------------------------------------------------


def _rows(out: Path) -> set[tuple[Any, ...]]:
    return {
        (t.turn_id, t.conversation_id, t.turn_index, t.status, t.request)
        for t in TurnStore(out, "read").read_all()
    }


def test_a_turn_whose_root_never_arrived_keeps_its_conversation_in_every_format(
    tmp_path: Path,
) -> None:
    """Agent runs whose root span (the one naming the conversation) never arrived join
    their conversation by history. Ingested as OTLP/JSON, then the same spans again as
    JSON Lines and protobuf: the same rows each time (they moved into a conversation of
    their own on the first ingest, and back on a re-ingest)."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from tests.ingest.outputs import bench_ingest

    bench = bench_ingest()
    batches = bench.Generator(seed=7).spans(150)
    spans = [s for _ in range(3) for s in next(batches)]
    roots = [s for s in spans if s.name.startswith("invoke_agent")]
    lost = {id(s) for s in random.Random(7).sample(roots, 3)}
    spans = [s for s in spans if id(s) not in lost]
    for fmt in ("json", "jsonl", "pb"):
        (tmp_path / fmt).mkdir()
    for n, i in enumerate(range(0, len(spans), 100)):
        part = spans[i : i + 100]
        (tmp_path / "json" / f"e{n}.json").write_bytes(orjson.dumps(bench._request_json(part)))
        lines = [
            orjson.dumps(bench._request_json(part[j : j + 10])) for j in range(0, len(part), 10)
        ]
        (tmp_path / "jsonl" / f"e{n}.jsonl").write_bytes(b"\n".join(lines))
        (tmp_path / "pb" / f"e{n}.pb").write_bytes(encode_spans(part).SerializeToString())
    out = tmp_path / "out"
    ingest_paths([tmp_path / "json"], out, group_bytes=1 << 16, workers=1)
    first = _rows(out)
    assert len(first) > 40
    for fmt in ("jsonl", "pb"):
        ingest_paths([tmp_path / fmt], out, group_bytes=1 << 16, workers=1)
        assert _rows(out) == first, fmt
        alone = tmp_path / f"alone-{fmt}"
        ingest_paths([tmp_path / fmt], alone, group_bytes=1 << 16, workers=1)
        assert _rows(alone) == first, fmt


def test_messages_cut_by_an_attribute_length_limit_are_named_as_cut(tmp_path: Path) -> None:
    """The SDK cuts every string attribute at its length limit: a message list longer than
    that is no JSON, and the error says it was cut and what cuts it."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_attribute_length=64))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    messages = [{"role": "user", "parts": [{"type": "text", "content": "What's the weather "
                                                                       "in Paris today?"}]}]
    with provider.get_tracer("t").start_as_current_span("chat gpt-4o") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.input.messages", json.dumps(messages))
    path = tmp_path / "cut.pb"
    path.write_bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())
    (error,) = ingest_paths([path], tmp_path / "out").errors
    assert "gen_ai.input.messages: not valid JSON" in error.message
    assert "after 64 characters: cut short" in error.message
    assert "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT" in error.message
    assert error.span_id == format(span.get_span_context().span_id, "016x")
