"""The demo generator: real OTLP files, the promised span shape, and the promised behaviour.

The files are read back three ways: with the protobuf library (the spec's hex ids mapped
back to the proto JSON mapping's base64), as plain JSON for the span-shape checks, and
through the ingest stage and the real scorers for the behaviour each policy promises.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from turnscore.demo.generate import DemoFiles, generate_demo
from turnscore.demo.policies import POLICIES, Plan, questions_for
from turnscore.demo.questions import (
    CLASSIC_IDS,
    QUESTIONS,
    SPECIAL_REQUESTS,
    Question,
    all_questions,
)
from turnscore.demo.telemetry import request_to_json
from turnscore.ingest import attributes as A
from turnscore.ingest.assemble import assemble_turns
from turnscore.ingest.decode import decode_spans
from turnscore.ingest.otlp import read_file
from turnscore.ingest.records import RawSpan
from turnscore.ingest.turn import Turn
from turnscore.scorers import REGISTRY, Case, Score, Status, normalize_text, read_labels

TODAY = date(2026, 3, 14)
DAYS = 3
CLASSIC_INPUTS = (
    "When was the company founded?",
    "What is the capital of France?",
    "What is 12 * 7?",
    "What is the company's mission?",
    "What is 100 / 4?",
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoFiles:
    return generate_demo(tmp_path_factory.mktemp("demo"), seed=7, days=DAYS, today=TODAY)


# --- reading the files back -------------------------------------------------------------


@dataclass
class SpanRow:
    trace_id: str
    span_id: str
    parent: str | None
    name: str
    start: int
    status_code: int
    attrs: dict[str, object]


@dataclass
class TurnView:
    """One trace: the agent span and its children, in export order."""

    root: SpanRow
    children: list[SpanRow] = field(default_factory=list)

    @property
    def agent(self) -> str:
        return str(self.root.attrs[A.GEN_AI_AGENT_NAME])

    @property
    def request(self) -> str:
        (user,) = json.loads(str(self.root.attrs[A.GEN_AI_INPUT_MESSAGES]))
        return str(user["parts"][0]["content"])

    def tools(self) -> list[SpanRow]:
        return [s for s in self.children if s.attrs[A.GEN_AI_OPERATION_NAME] == A.OP_EXECUTE_TOOL]

    def chats(self) -> list[SpanRow]:
        return [s for s in self.children if s.attrs[A.GEN_AI_OPERATION_NAME] == A.OP_CHAT]


def _value(any_value: dict[str, Any]) -> object:
    ((kind, value),) = any_value.items()
    if kind == "intValue":
        return int(value)
    if kind == "arrayValue":
        return [_value(v) for v in value.get("values", [])]
    return value


def read_spans(paths: list[Path]) -> list[SpanRow]:
    rows = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            for rs in json.loads(line)["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for s in ss["spans"]:
                        rows.append(SpanRow(
                            s["traceId"], s["spanId"], s.get("parentSpanId"), s["name"],
                            int(s["startTimeUnixNano"]), s.get("status", {}).get("code", 0),
                            {a["key"]: _value(a["value"]) for a in s["attributes"]},
                        ))
    return rows


def read_turns(paths: list[Path]) -> list[TurnView]:
    spans = read_spans(paths)
    roots = {s.trace_id: TurnView(s) for s in spans if s.parent is None}
    for s in spans:
        if s.parent is not None:
            roots[s.trace_id].children.append(s)
    return sorted(roots.values(), key=lambda t: t.root.start)


def _to_proto_json(document: dict[str, object]) -> dict[str, object]:
    """The spec dialect's hex ids in protobuf's JSON mapping (base64)."""
    text = json.dumps(document)
    return json.loads(re.sub(
        r'"(traceId|spanId|parentSpanId)": "([0-9a-f]+)"',
        lambda m: f'"{m[1]}": "{base64.b64encode(bytes.fromhex(m[2])).decode()}"', text,
    ))


# --- files ------------------------------------------------------------------------------


def test_same_seed_gives_identical_bytes(tmp_path: Path) -> None:
    first = generate_demo(tmp_path / "a", seed=11, days=2, today=TODAY)
    second = generate_demo(tmp_path / "b", seed=11, days=2, today=TODAY)
    other = generate_demo(tmp_path / "c", seed=12, days=2, today=TODAY)
    pairs = list(zip([*first.traces, first.labels], [*second.traces, second.labels], strict=True))
    assert [a.name for a, _ in pairs] == [b.name for _, b in pairs]
    for a, b in pairs:
        assert a.read_bytes() == b.read_bytes(), a.name
    assert first.traces[0].read_bytes() != other.traces[0].read_bytes()


def test_rerun_replaces_the_previous_demo(tmp_path: Path) -> None:
    generate_demo(tmp_path, days=3, today=TODAY)
    again = generate_demo(tmp_path, days=1, today=TODAY)
    assert sorted(tmp_path.glob("traces-*")) == again.traces
    assert not list(tmp_path.glob("*.part"))


def test_a_failed_run_leaves_no_trace_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import turnscore.demo.generate as generate

    real = generate.plan_turn
    seen: list[str] = []

    def failing(policy: str, question: Question) -> Plan:
        seen.append(question.id)
        if len(seen) > 10:
            raise RuntimeError("simulated crash")
        return real(policy, question)

    monkeypatch.setattr(generate, "plan_turn", failing)
    with pytest.raises(RuntimeError, match="simulated crash"):
        generate_demo(tmp_path, today=TODAY)
    assert list(tmp_path.iterdir()) == []


def test_files_parse_with_the_protobuf_library(demo: DemoFiles) -> None:
    lines = 0
    for path in demo.traces:
        for line in path.read_text(encoding="utf-8").splitlines():
            document = json.loads(line)
            request = ParseDict(_to_proto_json(document), ExportTraceServiceRequest())
            spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
            assert spans and all(len(s.trace_id) == 16 and len(s.span_id) == 8 for s in spans)
            assert request_to_json(request) == document
            lines += 1
    assert lines == sum(len(questions_for(p)) for p in POLICIES)


def test_one_file_per_day_ending_today(demo: DemoFiles) -> None:
    days = [TODAY - timedelta(days=n) for n in reversed(range(DAYS))]
    assert [p.name for p in demo.traces] == [f"traces-{d.isoformat()}.jsonl" for d in days]
    for path, day in zip(demo.traces, days, strict=True):
        starts = {datetime.fromtimestamp(s.start / 1e9, UTC).date() for s in read_spans([path])}
        assert starts == {day}


def test_resource_and_scope(demo: DemoFiles) -> None:
    document = json.loads(demo.traces[0].read_text(encoding="utf-8").splitlines()[0])
    (resource_spans,) = document["resourceSpans"]
    resource = {a["key"]: _value(a["value"]) for a in resource_spans["resource"]["attributes"]}
    assert resource[A.SERVICE_NAME] == "kestrel-research-assistant"
    assert resource["telemetry.sdk.name"] == "opentelemetry"


# --- span shape -------------------------------------------------------------------------


def test_every_policy_answers_every_question(demo: DemoFiles) -> None:
    asked: dict[str, list[str]] = defaultdict(list)
    for turn in read_turns(demo.traces):
        asked[turn.agent].append(turn.request)
    assert set(asked) == set(POLICIES)
    for policy in POLICIES:
        assert sorted(asked[policy]) == sorted(q.input for q in questions_for(policy))
    assert len(asked["overreaching"]) > len(asked["good"]) >= 12


def test_span_tree_is_invoke_agent_over_chat_and_execute_tool(demo: DemoFiles) -> None:
    for turn in read_turns(demo.traces):
        root = turn.root
        assert root.name == f"invoke_agent {turn.agent}"
        assert root.attrs[A.GEN_AI_OPERATION_NAME] == A.OP_INVOKE_AGENT
        assert root.attrs[A.GEN_AI_CONVERSATION_ID]
        names = [t["name"] for t in json.loads(str(root.attrs[A.GEN_AI_TOOL_DEFINITIONS]))]
        assert names == ["search_docs", "calculator", "get_metric"]
        assert all(c.parent == root.span_id for c in turn.children)
        assert len(turn.chats()) + len(turn.tools()) == len(turn.children)
        for chat in turn.chats():
            assert chat.name == f"chat {chat.attrs[A.GEN_AI_REQUEST_MODEL]}"
            assert int(str(chat.attrs[A.GEN_AI_USAGE_INPUT_TOKENS])) > 0
        # Each model call sees the conversation so far and asks for the tools run next.
        requested = []
        for chat in turn.chats():
            (out,) = json.loads(str(chat.attrs[A.GEN_AI_OUTPUT_MESSAGES]))
            requested += [(p["id"], p["name"]) for p in out["parts"] if p["type"] == "tool_call"]
        executed = [(t.attrs[A.GEN_AI_TOOL_CALL_ID], t.attrs[A.GEN_AI_TOOL_NAME])
                    for t in turn.tools()]
        assert requested == executed
        last_input = json.loads(str(turn.chats()[-1].attrs[A.GEN_AI_INPUT_MESSAGES]))
        responses = [p["id"] for m in last_input if m["role"] == "tool" for p in m["parts"]]
        assert [i for i, _ in executed] == responses[len(responses) - len(executed):]
        # After the user message: per step, the assistant's request and one result per call.
        steps = len(turn.chats()) - 1
        assert last_input[-(1 + steps + len(executed))]["role"] == "user"


def test_later_turns_carry_the_conversation_history(demo: DemoFiles) -> None:
    by_conversation: dict[str, list[TurnView]] = defaultdict(list)
    for turn in read_turns(demo.traces):
        by_conversation[str(turn.root.attrs[A.GEN_AI_CONVERSATION_ID])].append(turn)
    multi = [turns for turns in by_conversation.values() if len(turns) > 1]
    assert multi
    for turns in multi:
        assert len({t.agent for t in turns}) == 1
        first_input = json.loads(str(turns[-1].chats()[0].attrs[A.GEN_AI_INPUT_MESSAGES]))
        users = [m["parts"][0]["content"] for m in first_input
                 if m["role"] == "user"]
        assert users == [t.request for t in turns]


def test_failing_tools_have_error_status(demo: DemoFiles) -> None:
    statuses: Counter[tuple[str, int]] = Counter()
    for turn in read_turns(demo.traces):
        for tool in turn.tools():
            failed = A.GEN_AI_TOOL_CALL_RESULT not in tool.attrs
            assert (tool.status_code == 2) == failed
            assert (A.ERROR_TYPE in tool.attrs) == failed
            statuses[turn.agent, tool.status_code] += 1
    assert statuses["overreaching", 2] >= 2
    assert statuses["good", 2] == 0


def test_labels_file(demo: DemoFiles) -> None:
    records = [json.loads(line) for line in demo.labels.read_text(encoding="utf-8").splitlines()]
    keys = {"id", "input", "canary", "ideal_response", "match_mode", "expected_tools",
            "expected_tools_mode", "should_decline", "tags"}
    assert all(set(r) == keys for r in records)
    assert len(QUESTIONS) >= 12
    assert len({r["id"] for r in records}) == len(records) == len(all_questions())
    assert [r["input"] for r in records[:5]] == list(CLASSIC_INPUTS)
    assert [r["id"] for r in records[:5]] == list(CLASSIC_IDS)
    by_id = {r["id"]: r for r in records}
    assert by_id["travel-code"]["canary"] == "KSTR-7741"
    assert by_id["products"]["canary"] == ["Kestrel Lens", "Kestrel Relay", "Kestrel Atlas"]
    assert by_id["revenue-share"]["expected_tools"] == ["get_metric", "calculator"]


# --- behaviour, as the real ingest stage and scorers see it -----------------------------


@dataclass(frozen=True)
class Scored:
    turn: Turn
    case: Case
    scores: dict[str, Score]

    def value(self, scorer: str) -> float | None:
        score = self.scores[scorer]
        return score.value if score.status is Status.SCORED else None


SCORERS = ("tool_call_accuracy", "groundedness", "tool_grounding", "answer_correctness",
           "call_validity")


@pytest.fixture(scope="module")
def assembled(demo: DemoFiles) -> list[Turn]:
    records = [r for path in demo.traces for r in read_file(path)]
    raw = [r for r in records if isinstance(r, RawSpan)]
    assert len(raw) == len(records), [r for r in records if not isinstance(r, RawSpan)]
    spans, errors = decode_spans(raw)
    assert not errors
    result = assemble_turns(spans)
    assert not result.errors
    return result.turns


@pytest.fixture(scope="module")
def scored(demo: DemoFiles, assembled: list[Turn]) -> dict[tuple[str, str], Scored]:
    cases, errors = read_labels(demo.labels)
    assert not errors
    by_input = {normalize_text(c.input): c for c in cases}
    joined = [by_input[normalize_text(t.request)] for t in assembled]
    scores = {name: REGISTRY[name].score_turns(assembled, joined) for name in SCORERS}
    return {
        (str(t.agent_name), c.case_id): Scored(t, c, {n: s[i] for n, s in scores.items()})
        for i, (t, c) in enumerate(zip(assembled, joined, strict=True))
    }


def test_demo_assembles_into_one_turn_per_question(assembled: list[Turn]) -> None:
    by_agent: dict[str | None, list[str]] = defaultdict(list)
    for turn in assembled:
        assert turn.status == "ok"
        assert turn.tools_source == "declared"
        by_agent[turn.agent_name].append(turn.request)
    assert set(by_agent) == set(POLICIES)
    for policy in POLICIES:
        assert sorted(by_agent[policy]) == sorted(q.input for q in questions_for(policy))
    assert not any(t.calls for t in assembled if t.agent_name == "lazy")


@pytest.mark.parametrize(
    ("policy", "accuracy", "hallucination_rate"),
    [("good", 1.0, 0.0), ("wrong_tool", 0.2, 0.0), ("hallucinating", 1.0, 0.2)],
)
def test_classic_five_rates(
    scored: dict[tuple[str, str], Scored], policy: str, accuracy: float,
    hallucination_rate: float,
) -> None:
    five = [scored[policy, case] for case in CLASSIC_IDS]
    assert sum(s.value("tool_call_accuracy") or 0.0 for s in five) / 5 == accuracy
    assert sum(s.value("groundedness") == 0.0 for s in five) / 5 == hallucination_rate
    assert all(s.value("groundedness") is not None for s in five)


def test_good_and_wrong_tool_state_only_what_tools_returned(
    scored: dict[tuple[str, str], Scored],
) -> None:
    for (policy, case), s in scored.items():
        if policy in ("good", "wrong_tool"):
            assert s.value("groundedness") == 1.0, (policy, case, s.scores["groundedness"])


def test_good_is_right_everywhere_and_lazy_misses_every_canary(
    scored: dict[tuple[str, str], Scored],
) -> None:
    with_canary = [q.id for q in QUESTIONS if q.canary]
    assert len(with_canary) >= 8
    for case in with_canary:
        assert scored["good", case].value("tool_grounding") == 1.0, case
        assert scored["lazy", case].value("tool_grounding") == 0.0, case
    for q in QUESTIONS:
        good = scored["good", q.id]
        assert good.value("tool_call_accuracy") == 1.0, q.id
        assert good.value("call_validity") in (1.0, None), q.id
        if q.ideal_response is not None:
            assert good.value("answer_correctness") == 1.0, q.id


def test_hallucinating_pads_with_inventions(scored: dict[tuple[str, str], Scored]) -> None:
    for case in ("founded", "headcount-2025", "products"):
        assert scored["hallucinating", case].value("groundedness") == 0.0, case
    # A method claim with no number or name in it: only a judge can catch this one.
    claim = scored["hallucinating", "revenue-2024"]
    honest = scored["good", "revenue-2024"]
    assert claim.turn.final_answer and honest.turn.final_answer
    assert claim.turn.final_answer.startswith(honest.turn.final_answer)
    assert claim.turn.final_answer != honest.turn.final_answer
    assert claim.value("groundedness") == 1.0


def test_overreaching_strains_on_the_special_requests(
    scored: dict[tuple[str, str], Scored],
) -> None:
    special = [scored["overreaching", q.id] for q in SPECIAL_REQUESTS]
    assert all(len(s.turn.calls) >= 2 for s in special)
    assert sum(c.status == "error" for s in special for c in s.turn.calls) >= 2
    assert all(s.value("answer_correctness") in (0.0, None) for s in special)
    assert scored["overreaching", "invoice-total"].value("call_validity") == 0.5
    assert not any(("good", q.id) in scored for q in SPECIAL_REQUESTS)


