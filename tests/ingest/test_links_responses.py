"""One model call recorded by two instrumentations, each in a trace of its own, is one
call whichever run brings each trace: the response id is a key stored with the span
(`SpanLinks.response_id`), so a later run finds the other instrumentation's trace and
rebuilds the two together, as one run does (`calls.logical_spans`, rule 3).

The traces are recorded with the real OTel SDK (the convention fixtures' `Recorder`: a
TracerProvider per instrumentation, an in-memory exporter, the OTLP protobuf encoder),
in the attribute forms of the corpus: OpenLLMetry's `gen_ai.prompt.N.*`/`llm.*`
(traceloop-openai-0.54_legacy), opentelemetry-instrumentation-openai-v2's
`gen_ai.input.messages` (otel-genai-openai), and a provider SDK's own span carrying the
response id and usage only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import astuple, dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.outputs import load_module
from turnscore.ingest.links import Lookups
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.store import SpanStore, TurnStore

BUILD = Path(__file__).resolve().parent.parent / "fixtures" / "conventions" / "build.py"
Recorder = load_module("conventions_build", BUILD).Recorder

SYSTEM = "You are a helpful assistant. Use the tools when they help."
REQUEST = "What is 17 * 23 + 4? Use the calculator."
ANSWER = "17 * 23 + 4 = 395."
CALL = {"id": "call_e83ccc964836ec863a7d", "name": "calculator",
        "arguments": {"expression": "17 * 23 + 4"}}


@dataclass(frozen=True)
class Call:
    """One chat completion as the wire had it."""

    response_id: str
    messages: list[dict[str, Any]]
    """Input: OpenAI chat messages (`tool_calls` as in CALL)."""
    answer: dict[str, Any]
    tokens: tuple[int, int]


def _openllmetry(call: Call) -> dict[str, Any]:
    """opentelemetry-instrumentation-openai 0.54 (OpenLLMetry), content as attributes."""
    attrs: dict[str, Any] = {
        "llm.request.type": "chat", "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o-mini", "llm.is_streaming": False,
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.id": call.response_id,
        "gen_ai.usage.input_tokens": call.tokens[0], "gen_ai.usage.output_tokens": call.tokens[1],
        "llm.usage.total_tokens": sum(call.tokens),
    }
    for prefix, messages in (("gen_ai.prompt", call.messages),
                             ("gen_ai.completion", [call.answer])):
        for i, m in enumerate(messages):
            attrs[f"{prefix}.{i}.role"] = m["role"]
            if "content" in m:
                attrs[f"{prefix}.{i}.content"] = m["content"]
            if "tool_call_id" in m:
                attrs[f"{prefix}.{i}.tool_call_id"] = m["tool_call_id"]
            for j, c in enumerate(m.get("tool_calls", ())):
                attrs[f"{prefix}.{i}.tool_calls.{j}.id"] = c["id"]
                attrs[f"{prefix}.{i}.tool_calls.{j}.name"] = c["name"]
                attrs[f"{prefix}.{i}.tool_calls.{j}.arguments"] = json.dumps(c["arguments"])
    return attrs


def _v2_message(m: dict[str, Any]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if m["role"] == "tool":
        parts.append({"type": "tool_call_response", "id": m["tool_call_id"],
                      "response": m["content"]})
    elif "content" in m:
        parts.append({"type": "text", "content": m["content"]})
    parts += [{"type": "tool_call", "id": c["id"], "name": c["name"],
               "arguments": c["arguments"]} for c in m.get("tool_calls", ())]
    return {"role": m["role"], "parts": parts}


def _openai_v2(call: Call) -> dict[str, Any]:
    """opentelemetry-instrumentation-openai-v2, latest semantic conventions."""
    return {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.id": call.response_id,
        "gen_ai.usage.input_tokens": call.tokens[0], "gen_ai.usage.output_tokens": call.tokens[1],
        "gen_ai.input.messages": json.dumps([_v2_message(m) for m in call.messages]),
        "gen_ai.output.messages": json.dumps([_v2_message(call.answer)]),
    }


def _sdk_usage(call: Call) -> dict[str, Any]:
    """A provider SDK's own span: the response id and usage, no content."""
    return {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.response.id": call.response_id,
            "gen_ai.usage.input_tokens": call.tokens[0],
            "gen_ai.usage.output_tokens": call.tokens[1]}


Instrumentation = tuple[str, Callable[[Call], dict[str, Any]]]
OPENLLMETRY: Instrumentation = ("openai.chat", _openllmetry)
OPENAI_V2: Instrumentation = ("chat gpt-4o-mini", _openai_v2)
SDK: Instrumentation = ("chat.completions.create", _sdk_usage)

USER = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": REQUEST}]
ASKS = {"role": "assistant", "tool_calls": [CALL]}
RESULT = {"role": "tool", "tool_call_id": CALL["id"], "content": "395"}
ANSWERS = {"role": "assistant", "content": ANSWER}
ONE_CALL = [Call("chatcmpl-mock00442", USER, ANSWERS, (344, 15))]
TOOL_LOOP = [Call("chatcmpl-mock00443", USER, ASKS, (344, 20)),
             Call("chatcmpl-mock00444", [*USER, ASKS, RESULT], ANSWERS, (380, 15))]


@dataclass(frozen=True)
class Case:
    name: str
    calls: list[Call]
    first: Instrumentation
    second: Instrumentation


CASES = [
    # A call answered at once: the two traces meet by response id alone (a prefix of the
    # input never equals a history of input + output).
    Case("openllmetry+openai-v2", ONE_CALL, OPENLLMETRY, OPENAI_V2),
    Case("openllmetry+sdk-usage", ONE_CALL, OPENLLMETRY, SDK),
    Case("openai-v2+sdk-usage", TOOL_LOOP, OPENAI_V2, SDK),
    # Each call its own root span: the traces meet by history as well.
    Case("openllmetry+openai-v2 tool loop", TOOL_LOOP, OPENLLMETRY, OPENAI_V2),
]


def _record(folder: Path, calls: list[Call], instrumentation: Instrumentation) -> Path:
    """Every call as one instrumentation records it, on its own TracerProvider (a trace
    per call: a raw client has no span around them)."""
    name, attributes = instrumentation
    recorder = Recorder("agent")
    for call in calls:
        with recorder.span(name, attributes(call)):
            pass
    folder.mkdir(parents=True)
    [path] = recorder.write(folder, name.replace(" ", "_"))
    return path


def _turns(out: Path) -> list[tuple[Any, ...]]:
    """The stored turns, less the run that wrote them."""
    return sorted(astuple(replace(t, ingest_id="")) for t in TurnStore(out, "read").read_all())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_two_instrumentations_of_one_call_in_two_runs_are_one_call(
    tmp_path: Path, case: Case
) -> None:
    first = _record(tmp_path / "first", case.calls, case.first)
    second = _record(tmp_path / "second", case.calls, case.second)
    ingest_paths([first, second], tmp_path / "one-run", ingest_id="both", workers=1)
    together = _turns(tmp_path / "one-run")
    [turn] = TurnStore(tmp_path / "one-run", "read").read_all()
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)
    assert turn.llm_calls == len(case.calls)
    assert turn.input_tokens == sum(c.tokens[0] for c in case.calls)
    for order in ((first, second), (second, first)):
        out = tmp_path / f"two-runs-{order[0].parent.name}-first"
        for n, path in enumerate(order):
            ingest_paths([path], out, ingest_id=f"run{n}", workers=1)
        assert _turns(out) == together, order[0].parent.name
        # One run, a group per file: the second group finds the first's stored trace.
        out = tmp_path / f"two-groups-{order[0].parent.name}-first"
        ingest_paths(list(order), out, ingest_id="grouped", workers=1, group_bytes=1)
        assert _turns(out) == together, order[0].parent.name


def test_a_stored_response_id_finds_its_trace(tmp_path: Path) -> None:
    path = _record(tmp_path / "in", ONE_CALL, OPENLLMETRY)
    out = tmp_path / "out"
    ingest_paths([path], out, ingest_id="r", workers=1)
    [turn] = TurnStore(out, "read").read_all()
    store = SpanStore(out, "look")
    wanted = Lookups(responses={ONE_CALL[0].response_id})
    assert store.linked_traces(wanted) == {turn.trace_id}
    assert store.linked_traces(Lookups(responses={"chatcmpl-other"})) == set()
