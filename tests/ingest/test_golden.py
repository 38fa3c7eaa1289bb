"""Golden tests: every corpus scenario, read, decoded and assembled, against its ground truth.

`ground_truth.json` says what the model really received and returned on the wire. Where a
framework's telemetry does not carry a field, `KNOWN_GAPS` says so with the reason, and the
test checks that the gap is real: the expected value must differ from ours *and* the part
we miss must appear nowhere in the exported spans and log records of that turn. A gap that
the data does cover fails, so a gap cannot hide a decoding or assembly bug.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from turnscore.ingest.assemble import AssemblyResult, assemble_turns
from turnscore.ingest.decode import decode_spans
from turnscore.ingest.model import Span
from turnscore.ingest.otlp import read_file
from turnscore.ingest.records import InputError, RawLog, RawSpan
from turnscore.ingest.turn import Turn

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
FRAMEWORKS = sorted(p.parent.name for p in CORPUS.glob("*/ground_truth.json"))
RAW_CLIENTS = (
    "openinference-openai",
    "otel-genai-openai",
    "otel-openai-v2_latest-eventonly",
    "traceloop-openai-0.54_legacy",
)
EXPECTED_STATUS = {"tool_error_uncaught": "error", "crash_mid_tool": "incomplete"}


@dataclass(frozen=True)
class Gap:
    framework: str
    scenario: str
    """A scenario name, or '*' for all of the framework's."""
    field: str
    reason: str


KNOWN_GAPS: tuple[Gap, ...] = (
    *(
        Gap(fw, "tool_error", "call.is_error",
            "raw chat-completions telemetry has no tool spans, and a tool message carries no "
            "error flag: the failure is only in the result text the driver wrote")
        for fw in RAW_CLIENTS
    ),
    Gap("otel-openai-v2_latest-eventonly", "*", "tools",
        "the operation-details event of -openai-v2 2.4b0 carries no gen_ai.tool.definitions, "
        "and spans carry no content in event_only mode: only called tools can be inferred"),
    Gap("strands_default", "*", "tools",
        "strands exports only the tool names (gen_ai.agent.tools on the agent span); a "
        "description and schema only on the execute_tool span of a tool that ran"),
    Gap("pydantic-ai", "tool_error", "call.result",
        "ModelRetry: the model got {\"error\": ...} on the wire, but pydantic-ai's telemetry "
        "records the retry prompt as result 'Unknown city: Atlantis'"),
)  # fmt: skip


DECODER_BUGS: dict[tuple[str, str, int, str], str] = {}
"""Cases that fail because of decoding, not assembly: strict xfails, so a fix shows up."""


def gap(framework: str, scenario: str, field: str) -> Gap | None:
    return next(
        (
            g
            for g in KNOWN_GAPS
            if g.framework == framework and g.scenario in ("*", scenario) and g.field == field
        ),
        None,
    )


@dataclass(frozen=True)
class Loaded:
    raw_spans: list[RawSpan]
    raw_logs: list[RawLog]
    spans: list[Span]
    errors: list[InputError]
    result: AssemblyResult


@cache
def load(framework: str, scenario: str) -> Loaded:
    files = [CORPUS / framework / f"{scenario}.json"]
    logs_file = CORPUS / framework / f"{scenario}.logs.json"
    if logs_file.exists():
        files.append(logs_file)
    raw_spans: list[RawSpan] = []
    raw_logs: list[RawLog] = []
    errors: list[InputError] = []
    for f in files:
        for rec in read_file(f):
            if isinstance(rec, RawSpan):
                raw_spans.append(rec)
            elif isinstance(rec, RawLog):
                raw_logs.append(rec)
            else:
                errors.append(rec)
    spans, decode_errors = decode_spans(raw_spans, raw_logs)
    result = assemble_turns(spans)
    return Loaded(raw_spans, raw_logs, spans, [*errors, *decode_errors, *result.errors], result)


def turn_text(loaded: Loaded, turn: Turn) -> str:
    """Everything the exported spans (and their log records) of a turn's time span say."""
    start = int(turn.started_at.timestamp() * 1e9) - 1_000
    end = int(turn.ended_at.timestamp() * 1e9) + 1_000
    spans = [s for s in loaded.raw_spans if s.start_unix_nano >= start and s.end_unix_nano <= end]
    ids = {(s.trace_id, s.span_id) for s in spans}
    logs = [lg for lg in loaded.raw_logs if (lg.trace_id, lg.span_id) in ids]
    payload = [
        *([dict(s.attributes), [[e.name, dict(e.attributes)] for e in s.events]] for s in spans),
        *([dict(lg.attributes), lg.body] for lg in logs),
    ]
    return json.dumps(payload, default=repr)


def ground_truth(framework: str) -> dict[str, list[dict[str, Any]]]:
    data: dict[str, list[dict[str, Any]]] = json.loads(
        (CORPUS / framework / "ground_truth.json").read_text()
    )
    return data


CASES = [(fw, sc) for fw in FRAMEWORKS for sc in sorted(ground_truth(fw))]
TURN_CASES = [
    (fw, sc, i) for fw in FRAMEWORKS for sc, turns in sorted(ground_truth(fw).items())
    for i in range(len(turns))
]  # fmt: skip


def in_raw(raw_text: str, value: str) -> bool:
    """Whether a text occurs in exported data, plain or JSON-escaped once or twice."""
    once = json.dumps(value)[1:-1]
    twice = json.dumps(once)[1:-1]
    return any(v in raw_text for v in (value, once, twice))


def as_json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


# --- per-field comparisons: (ours, expected) as comparable values --------------------------

Getter = Callable[[Turn, dict[str, Any]], tuple[Any, Any]]


def _tools(t: Turn, gt: dict[str, Any]) -> tuple[Any, Any]:
    ours = sorted((x.name, x.description, as_json(x.parameters)) for x in t.tools)
    theirs = sorted((x["name"], x["description"], x["parameters"]) for x in gt["tools_available"])
    return ours, theirs


def _calls(key: str) -> Getter:
    def get(t: Turn, gt: dict[str, Any]) -> tuple[Any, Any]:
        ours = [_call_field(c, key) for c in t.calls]
        theirs = [_truth_field(c, key) for c in gt["tool_calls"]]
        return ours, theirs

    return get


def _call_field(c: Any, key: str) -> Any:
    return {
        "call.name": c.name,
        "call.id": c.call_id,
        "call.arguments": as_json(c.arguments),
        "call.result": c.result,
        "call.is_error": c.status == "error",
    }[key]


def _truth_field(c: dict[str, Any], key: str) -> Any:
    return {
        "call.name": c["name"],
        "call.id": c["id"],
        "call.arguments": c["arguments"],
        "call.result": c["result_seen_by_model"],
        "call.is_error": c["is_error"],
    }[key]


FIELDS: dict[str, Getter] = {
    "request": lambda t, gt: (t.request, gt["user_request"]),
    "system_prompt": lambda t, gt: (t.system_instructions, gt["system_prompt"]),
    "tools": _tools,
    "llm_calls": lambda t, gt: (t.llm_calls, gt["llm_calls"]),
    "call.name": _calls("call.name"),
    "call.id": _calls("call.id"),
    "call.arguments": _calls("call.arguments"),
    "call.result": _calls("call.result"),
    "call.is_error": _calls("call.is_error"),
    "final_answer": lambda t, gt: (t.final_answer, gt["final_answer"]),
    "usage": lambda t, gt: (
        (t.input_tokens, t.output_tokens),
        (gt["usage"]["input_tokens"], gt["usage"]["output_tokens"]),
    ),
}


@pytest.mark.parametrize(("framework", "scenario"), CASES)
def test_reads_decodes_and_assembles_cleanly(framework: str, scenario: str) -> None:
    loaded = load(framework, scenario)
    assert loaded.errors == []
    expected = ground_truth(framework)[scenario]
    turns = loaded.result.turns
    assert [t.request for t in turns] == [gt["user_request"] for gt in expected]
    assert [t.turn_index for t in turns] == list(range(len(expected)))
    assert len({t.conversation_id for t in turns}) == 1
    assert [t.status for t in turns] == [EXPECTED_STATUS.get(scenario, "ok")] * len(expected)
    for t in turns:
        assert (t.status == "ok") == (t.error is None)


def field_cases() -> list[Any]:
    out = []
    for fw, sc, i in TURN_CASES:
        for name in sorted(FIELDS):
            bug = DECODER_BUGS.get((fw, sc, i, name))
            marks = [pytest.mark.xfail(reason=bug, strict=True)] if bug else []
            out.append(pytest.param(fw, sc, i, name, marks=marks, id=f"{name}-{fw}-{sc}-{i}"))
    return out


@pytest.mark.parametrize(("framework", "scenario", "index", "field"), field_cases())
def test_turn_field_matches_ground_truth(
    framework: str, scenario: str, index: int, field: str
) -> None:
    turns = load(framework, scenario).result.turns
    assert len(turns) > index
    ours, theirs = FIELDS[field](turns[index], ground_truth(framework)[scenario][index])
    known = gap(framework, scenario, field)
    if known is None:
        assert ours == theirs
        return
    assert ours != theirs, f"listed as a gap but assembled correctly: {known}"
    prove_absent(framework, scenario, index, field)


def prove_absent(framework: str, scenario: str, index: int, field: str) -> None:
    """The part of the expected value that we miss is nowhere in the exported files."""
    loaded = load(framework, scenario)
    turn = loaded.result.turns[index]
    gt = ground_truth(framework)[scenario][index]
    if field == "call.is_error":
        # no error signal anywhere: no failed span, no tool span, no result flagged as failed
        assert not any(s.status == "error" or s.tool_execution for s in loaded.spans)
        assert not any(
            p.is_error for s in loaded.spans for m in s.input_messages or () for p in m.parts
        )
        return
    if field == "tools":
        ours = {x.name: (x.description, as_json(x.parameters)) for x in turn.tools}
        assert set(ours) <= {x["name"] for x in gt["tools_available"]}
        missed = [
            x["description"]
            for x in gt["tools_available"]
            if ours.get(x["name"]) != (x["description"], x["parameters"])
        ]
    elif field == "call.result":
        missed = [
            c["result_seen_by_model"]
            for c, mine in zip(gt["tool_calls"], turn.calls, strict=True)
            if c["result_seen_by_model"] != mine.result
        ]
    else:
        raise AssertionError(f"no absence proof for {field}")
    text = turn_text(loaded, turn)
    for value in missed:
        assert not in_raw(text, value), f"{value!r} is in the turn's spans after all"


OTHER_ENCODINGS = sorted(
    p for p in CORPUS.glob("*/*") if p.suffix == ".pb" or p.name.endswith(".protojson-default.json")
)


@pytest.mark.parametrize("path", OTHER_ENCODINGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_protobuf_and_protojson_give_the_same_turns(path: Path) -> None:
    scenario = path.name.split(".")[0]
    records = list(read_file(path))
    logs_file = path.with_name(f"{scenario}.logs.json")  # the content logs are JSON only
    if logs_file.exists():
        records += read_file(logs_file)
    spans = [r for r in records if isinstance(r, RawSpan)]
    logs = [r for r in records if isinstance(r, RawLog)]
    assert spans and not [r for r in records if isinstance(r, InputError)]
    decoded, errors = decode_spans(spans, logs)
    assert errors == []
    ours = [replace(t, source="") for t in assemble_turns(decoded).turns]
    expected = [replace(t, source="") for t in load(path.parent.name, scenario).result.turns]
    assert ours == expected


def test_every_known_gap_names_a_real_case_and_field() -> None:
    for g in KNOWN_GAPS:
        assert g.framework in FRAMEWORKS and g.field in FIELDS and g.reason
        assert g.scenario == "*" or g.scenario in ground_truth(g.framework)
