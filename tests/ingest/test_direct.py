"""The direct ingest path gives exactly what the general path gives (issue 6).

`ingest_paths(direct=True)` takes plain OTel GenAI agent runs through
`turnscore.ingest.direct`; the contract is that for any input it writes the same turn rows
and span rows, and reports the same errors and summary (`direct_turns` aside), as
`direct=False`. The input is the benchmark's generated agent traffic (real OTel SDK spans,
sessions of 1-3 runs sharing a conversation id, cut across files in finish order); each
case is a named mutation of it, and says whether the conversations it touches may still
take the direct path: the tests check both that the paths agree and that the shortcut is
taken where it should be and refused where it must be. The SDK draws random trace and span
ids, so no case depends on them (where order would go by id, the case sets the ids).

Two cases pin a bug these tests found: a conversation-less follow-up whose first model span
is not its first main-line call (a sub-agent's call, a framework's model span around the
call) is chained to a direct conversation by the general path; `_clashes` must see it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import astuple, dataclass, fields, replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.ingest.outputs import bench_ingest, span_rows, turn_rows
from turnscore.ingest.decode import decode_span
from turnscore.ingest.direct import find_runs
from turnscore.ingest.otlp import read_file
from turnscore.ingest.pipeline import IngestBatch, ingest_paths
from turnscore.ingest.records import RawSpan
from turnscore.ingest.turn import Turn

SEED = 11
SPANS = 600
"""About this many generated spans (whole sessions): 37 conversations of 1-3 runs."""
PER_FILE = 60
"""Spans per input file: traces and sessions straddle files."""
ONE_GROUP = 1 << 30
FORMATS = ("json", "jsonl", "pb")
JSONL_BATCH = 25
"""Spans per JSONL line (export request)."""

SpanDict = dict[str, Any]
"""One span in the OTLP/JSON spec dialect, as the generator writes it."""


# --- the generated input -------------------------------------------------------------------




@dataclass(frozen=True)
class Export:
    resource: dict[str, Any]
    scope: dict[str, Any]
    spans: list[SpanDict]
    """In the order they finished."""

    def copy(self) -> list[SpanDict]:
        return list(orjson.loads(orjson.dumps(self.spans)))

    def request(self, spans: list[SpanDict]) -> dict[str, Any]:
        return {"resourceSpans": [{"resource": self.resource,
                                   "scopeSpans": [{"scope": self.scope, "spans": spans}]}]}


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Export:
    bench = bench_ingest()
    # Whole sessions only: as many spans as the first batch of whole sessions holds.
    total = len(next(bench.Generator(SEED).spans(SPANS)))
    root = tmp_path_factory.mktemp("generated")
    [path] = bench.generate(root, total, total, gen=bench.Generator(SEED), formats=("json",))[
        "json"
    ]
    doc = orjson.loads(path.read_bytes())
    [resource_spans] = doc["resourceSpans"]
    [scope_spans] = resource_spans["scopeSpans"]
    return Export(resource_spans["resource"], scope_spans["scope"], scope_spans["spans"])


def _write(
    export: Export,
    spans: list[SpanDict],
    folder: Path,
    fmt: str,
    to_protobuf: Callable[..., bytes],
    per_file: int = PER_FILE,
) -> list[Path]:
    """The spans cut into files of `per_file`, in order, as an exporter cuts them."""
    folder.mkdir(parents=True)
    paths = []
    for n, start in enumerate(range(0, len(spans), per_file)):
        part = spans[start : start + per_file]
        path = folder / f"export-{n:04d}.{fmt}"
        if fmt == "json":
            path.write_bytes(orjson.dumps(export.request(part)))
        elif fmt == "jsonl":
            lines = [orjson.dumps(export.request(part[i : i + JSONL_BATCH]))
                     for i in range(0, len(part), JSONL_BATCH)]
            path.write_bytes(b"\n".join(lines) + b"\n")
        else:
            path.write_bytes(to_protobuf(export.request(part)))
        paths.append(path)
    return paths


# --- span dicts ----------------------------------------------------------------------------


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, str):
        return {"stringValue": value}
    return {"arrayValue": {"values": [_value(v) for v in value]}}


def _get(span: SpanDict, key: str) -> Any:
    for kv in span["attributes"]:
        if kv["key"] == key:
            return next(iter(kv["value"].values()))
    return None


def _set(span: SpanDict, key: str, value: Any) -> None:
    _drop(span, key)
    span["attributes"].append({"key": key, "value": _value(value)})


def _drop(span: SpanDict, key: str) -> None:
    span["attributes"] = [kv for kv in span["attributes"] if kv["key"] != key]


def _op(span: SpanDict) -> Any:
    return _get(span, "gen_ai.operation.name")


def _start(span: SpanDict) -> int:
    return int(span["startTimeUnixNano"])


def _shift(spans: list[SpanDict], delta: int) -> None:
    for s in spans:
        s["startTimeUnixNano"] = str(int(s["startTimeUnixNano"]) + delta)
        s["endTimeUnixNano"] = str(int(s["endTimeUnixNano"]) + delta)


@dataclass
class Trace:
    spans: list[SpanDict]

    @property
    def trace_id(self) -> str:
        return str(self.spans[0]["traceId"])

    @property
    def root(self) -> SpanDict:
        return next(s for s in self.spans if not s.get("parentSpanId"))

    def of(self, op: str | None) -> list[SpanDict]:
        found = [s for s in self.spans if s.get("parentSpanId") and _op(s) == op]
        return sorted(found, key=_start)

    @property
    def chats(self) -> list[SpanDict]:
        return self.of("chat")

    @property
    def tools(self) -> list[SpanDict]:
        return self.of("execute_tool")


def _sessions(spans: list[SpanDict]) -> list[list[Trace]]:
    """Conversations of whole runs, in start order, each its runs in start order."""
    by_trace: dict[str, list[SpanDict]] = {}
    for s in spans:
        by_trace.setdefault(s["traceId"], []).append(s)
    by_conv: dict[str, list[Trace]] = {}
    for trace_spans in by_trace.values():
        trace = Trace(trace_spans)
        by_conv.setdefault(str(_get(trace.root, "gen_ai.conversation.id")), []).append(trace)
    out = [sorted(ts, key=lambda t: _start(t.root)) for ts in by_conv.values()]
    return sorted(out, key=lambda ts: _start(ts[0].root))


def _session(spans: list[SpanDict], runs: int = 1, chats: int = 2, skip: int = 0) -> list[Trace]:
    """The `skip`-th conversation with at least `runs` runs, its first with `chats` model
    calls (so cases mutate different conversations and never the same one twice)."""
    fits = [ts for ts in _sessions(spans) if len(ts) >= runs and len(ts[0].chats) >= chats]
    return fits[skip]


def _ids(session: list[Trace]) -> set[str]:
    return {t.trace_id for t in session}


def _messages(span: SpanDict, key: str = "gen_ai.input.messages") -> list[dict[str, Any]]:
    return list(json.loads(_get(span, key)))


def _set_messages(
    span: SpanDict, messages: list[dict[str, Any]], key: str = "gen_ai.input.messages"
) -> None:
    _set(span, key, json.dumps(messages))  # the generator's spelling


def _new_id(seed: str, size: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:size]


def _child(parent: SpanDict, name: str, attributes: dict[str, Any], offset: int) -> SpanDict:
    start = _start(parent) + offset
    return {
        "traceId": parent["traceId"],
        "spanId": _new_id(parent["spanId"] + name, 16),
        "parentSpanId": parent["spanId"],
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1_000_000),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
        "status": {"code": 0},
    }


# --- mutations: each changes the input and returns the traces of every conversation it
# --- touches (whose turns must not be built directly unless the case says they may)


def unmodified(spans: list[SpanDict]) -> set[str]:
    return set()


def second_request_in_one_run(spans: list[SpanDict]) -> set[str]:
    """The run's last model call sees a new genuine user message: two turns in one trace."""
    session = _session(spans, chats=2)
    last = session[0].chats[-1]
    request = {"role": "user", "parts": [{"type": "text", "content": "And one more thing?"}]}
    _set_messages(last, [*_messages(last), request])
    return _ids(session)


def middle_input_edits_the_request(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, chats=3, skip=1)
    middle = session[0].chats[1]
    messages = _messages(middle)
    user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    messages[user] = {"role": "user", "parts": [{"type": "text", "content": "Edited request?"}]}
    _set_messages(middle, messages)
    return _ids(session)


def middle_input_edits_a_tool_result(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, chats=3, skip=2)
    middle = session[0].chats[1]
    messages = _messages(middle)
    tool = max(i for i, m in enumerate(messages) if m["role"] == "tool")
    messages[tool]["parts"][0]["response"] = "edited result"
    _set_messages(middle, messages)
    return _ids(session)


def middle_input_respaced(spans: list[SpanDict]) -> set[str]:
    """Same messages, compact JSON: not a text prefix of the last input any more."""
    session = _session(spans, chats=3, skip=3)
    middle = session[0].chats[1]
    _set(middle, "gen_ai.input.messages", orjson.dumps(_messages(middle)).decode())
    return _ids(session)


def last_input_respaced(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, chats=3, skip=4)
    last = session[0].chats[-1]
    _set(last, "gen_ai.input.messages", orjson.dumps(_messages(last)).decode())
    return _ids(session)


def first_input_respaced(spans: list[SpanDict]) -> set[str]:
    """The first input is parsed, not compared as text: the run still goes direct."""
    session = _session(spans, chats=3, skip=5)
    first = session[0].chats[0]
    _set(first, "gen_ai.input.messages", json.dumps(_messages(first), indent=1))
    return _ids(session)


def middle_inputs_shrink(spans: list[SpanDict]) -> set[str]:
    """Two middle inputs swapped: each a prefix of the last, but out of order."""
    session = _session(spans, chats=4)
    _, second, third, *_ = session[0].chats
    a, b = _get(second, "gen_ai.input.messages"), _get(third, "gen_ai.input.messages")
    _set(second, "gen_ai.input.messages", b)
    _set(third, "gen_ai.input.messages", a)
    return _ids(session)


def middle_input_missing(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, chats=3, skip=6)
    _drop(session[0].chats[1], "gen_ai.input.messages")
    return _ids(session)


def middle_input_not_json(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, chats=3, skip=7)
    _set(session[0].chats[1], "gen_ai.input.messages", "what is the refund policy?")
    return _ids(session)


def last_input_with_a_non_message(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, chats=3, skip=8)
    last = session[0].chats[-1]
    _set(last, "gen_ai.input.messages", _get(last, "gen_ai.input.messages")[:-1] + ", 42]")
    return _ids(session)


def system_message_in_every_input(spans: list[SpanDict]) -> set[str]:
    """A system message heads each input of a conversation (spelled as the generator
    spells inputs, so middle inputs stay prefixes): still direct."""
    session = _session(spans, runs=2, chats=3)
    system = {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]}
    for trace in session:
        for chat in trace.chats:
            _set_messages(chat, [system, *_messages(chat)])
    return _ids(session)


def system_instructions_on_chats(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, runs=2, chats=3, skip=1)
    for trace in session:
        for chat in trace.chats:
            _set(chat, "gen_ai.system_instructions", '[{"type":"text","content":"Be brief."}]')
    return _ids(session)


def overlapping_runs(spans: list[SpanDict]) -> set[str]:
    """The second run's first model call starts before the first run's last one."""
    session = _session(spans, runs=2, chats=3, skip=2)
    first, second = session[0], session[1]
    _shift(second.spans, _start(first.chats[-1]) - _start(second.chats[0]) - 1_000_000)
    return _ids(session)


def runs_with_the_same_start(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, runs=2, skip=3)
    first, second = session[0], session[1]
    _shift(second.spans, _start(first.root) - _start(second.root))
    return _ids(session)


def roots_with_the_same_start(spans: list[SpanDict]) -> set[str]:
    """Root spans start together, model calls do not interleave: still direct."""
    session = _session(spans, runs=2, skip=4)
    session[1].root["startTimeUnixNano"] = session[0].root["startTimeUnixNano"]
    return _ids(session)


def _same_start(spans: list[SpanDict], skip: int, ids: tuple[str, str]) -> set[str]:
    """Two model calls of a run start together; which comes first goes by span id (the
    SDK's are random: set here, so the case is the same on every run)."""
    session = _session(spans, chats=3, skip=skip)
    _, second, third, *_ = session[0].chats
    third["startTimeUnixNano"] = second["startTimeUnixNano"]
    second["spanId"], third["spanId"] = ids
    return _ids(session)


def model_calls_with_the_same_start(spans: list[SpanDict]) -> set[str]:
    return _same_start(spans, 9, ("00000000000000a1", "00000000000000a2"))


def model_calls_with_the_same_start_out_of_order(spans: list[SpanDict]) -> set[str]:
    """The longer input sorts first: the inputs shrink, as the direct path sees them."""
    return _same_start(spans, 10, ("00000000000000a2", "00000000000000a1"))


def event_on_a_model_call(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=34)
    chat = session[0].chats[0]
    chat["events"] = [{"timeUnixNano": chat["startTimeUnixNano"], "name": "exception",
                       "attributes": [{"key": "exception.type",
                                       "value": {"stringValue": "RateLimitError"}}]}]
    return _ids(session)


def _on_chat(key: str, value: Any, skip: int) -> Callable[[list[SpanDict]], set[str]]:
    def mutate(spans: list[SpanDict]) -> set[str]:
        session = _session(spans, skip=skip)
        _set(session[0].chats[-1], key, value)
        return _ids(session)

    mutate.__name__ = f"{key}_on_a_model_call"
    return mutate


def vercel_operation_on_a_plain_span(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=15)
    root = session[0].root
    spans.append(_child(root, "ai.toolCall", {"ai.operationId": "ai.toolCall"}, 500_000))
    return _ids(session)


def span_under_a_tool(spans: list[SpanDict]) -> set[str]:
    """A sub-agent's model call below a tool span."""
    session = _session(spans, skip=16)
    tool = session[0].tools[0]
    spans.append(_child(tool, "chat gpt-4o-mini", {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", "content": "q"}]}]',
        "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", '
        '"content": "a"}]}]',
    }, 10))
    return _ids(session)


def plain_span_under_a_model_call(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=17)
    spans.append(_child(session[0].chats[0], "http POST", {"http.method": "POST"}, 10))
    return _ids(session)


def model_call_of_another_conversation(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, runs=2, skip=5)
    _set(session[1].chats[0], "gen_ai.conversation.id", "someone-else")
    return _ids(session)


def model_call_naming_another_plain_conversation(spans: list[SpanDict]) -> set[str]:
    """The general path files a trace under the id of its earliest span naming one: here
    a model call (starting with its root) naming another conversation of plain runs."""
    session, other = _session(spans, skip=21), _session(spans, skip=22)
    chat = session[0].chats[0]
    _set(chat, "gen_ai.conversation.id", _get(other[0].root, "gen_ai.conversation.id"))
    chat["startTimeUnixNano"] = str(int(session[0].root["startTimeUnixNano"]) - 1)
    return _ids(session) | _ids(other)


def model_call_of_the_same_conversation(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=18)
    trace = session[0]
    _set(trace.chats[0], "gen_ai.conversation.id", _get(trace.root, "gen_ai.conversation.id"))
    return _ids(session)


def root_with_input_messages(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=19)
    trace = session[0]
    _set(trace.root, "gen_ai.input.messages", _get(trace.chats[0], "gen_ai.input.messages"))
    return _ids(session)


def tool_with_output_messages(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=20)
    tool = session[0].tools[0]
    _set(tool, "gen_ai.output.messages", '[{"role": "tool", "parts": []}]')
    return _ids(session)


def plain_span_with_an_operation(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=21)
    spans.append(_child(session[0].root, "embeddings", {"gen_ai.operation.name": "embeddings"}, 5))
    return _ids(session)


def second_root_span(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=22)
    del session[0].tools[-1]["parentSpanId"]
    return _ids(session)


def run_without_model_calls(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, runs=2, skip=6)
    gone = {id(s) for s in session[1].chats}
    spans[:] = [s for s in spans if id(s) not in gone]
    return _ids(session)


def follow_up_without_conversation_id(spans: list[SpanDict]) -> set[str]:
    """A later trace names no conversation and continues a run's history: the general path
    chains it to that conversation, so the conversation must leave the direct path."""
    session = _session(spans, runs=2, skip=7)
    added = _follow_up(spans, session[-1], conversation=None)
    return _ids(session) | {added}


def follow_up_of_another_conversation(spans: list[SpanDict]) -> set[str]:
    """The same continuation naming its own conversation: nothing chains, both direct."""
    session = _session(spans, runs=2, skip=8)
    added = _follow_up(spans, session[-1], conversation="follow-up")
    return _ids(session) | {added}


def follow_up_after_a_sub_agent_call(spans: list[SpanDict]) -> set[str]:
    """The follow-up's first model call is a sub-agent's, below a tool span, with other
    input; its first main-line call continues the run's history. The general path chains
    the trace by that main-line call (`group_conversations`)."""
    session = _session(spans, runs=2, skip=12)
    added = _follow_up(spans, session[-1], conversation=None, before=_sub_agent)
    return _ids(session) | {added}


def follow_up_under_a_framework_model_span(spans: list[SpanDict]) -> set[str]:
    """The follow-up's model call is nested in a framework's model span that repeats only
    the newest message: the general path chains the trace by the inner (leaf) call."""
    session = _session(spans, runs=2, skip=13)
    added = _follow_up(spans, session[-1], conversation=None, wrapped=True)
    return _ids(session) | {added}


def follow_up_whose_first_call_has_no_input(spans: list[SpanDict]) -> set[str]:
    """The follow-up's first model call has no captured input: the general path does not
    chain the trace, the clash rule (first call with input) still sends the conversation
    the general way. The same turns, fewer built directly."""
    session = _session(spans, runs=2, skip=14)
    added = _follow_up(spans, session[-1], conversation=None, before=_call_without_input)
    return _ids(session) | {added}


def _call_without_input(root: SpanDict) -> list[SpanDict]:
    return [_child(root, "chat gpt-4o-mini", {
        "gen_ai.operation.name": "chat", "gen_ai.output.messages": _OTHER_OUTPUT}, 100)]


_OTHER_INPUT = '[{"role": "user", "parts": [{"type": "text", "content": "Sub-task?"}]}]'
_OTHER_OUTPUT = '[{"role": "assistant", "parts": [{"type": "text", "content": "Done."}]}]'


def _sub_agent(root: SpanDict) -> list[SpanDict]:
    tool = _child(root, "execute_tool ask_expert", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ask_expert"}, 100)
    call = _child(tool, "chat gpt-4o-mini", {
        "gen_ai.operation.name": "chat", "gen_ai.input.messages": _OTHER_INPUT,
        "gen_ai.output.messages": _OTHER_OUTPUT}, 10)
    return [call, tool]


def _follow_up(
    spans: list[SpanDict],
    after: Trace,
    conversation: str | None,
    before: Callable[[SpanDict], list[SpanDict]] | None = None,
    wrapped: bool = False,
) -> str:
    last = after.chats[-1]
    history = [*_messages(last), *_messages(last, "gen_ai.output.messages"),
               {"role": "user", "parts": [{"type": "text", "content": "Thanks, and then?"}]}]
    root = json.loads(json.dumps(after.root))
    root["traceId"] = _new_id(after.trace_id, 32)
    root["spanId"] = _new_id(root["traceId"], 16)
    _shift([root], int(after.root["endTimeUnixNano"]) - _start(after.root) + 1_000_000)
    if conversation is None:
        _drop(root, "gen_ai.conversation.id")
    else:
        _set(root, "gen_ai.conversation.id", conversation)
    output = json.dumps([{"role": "assistant", "finish_reason": "stop",
                          "parts": [{"type": "text", "content": "Then done."}]}])
    parent, added = root, [root]
    if wrapped:
        parent = _child(root, "agent model", {
            "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(history[-1:]),
            "gen_ai.output.messages": output}, 500)
        added.insert(0, parent)
    chat = _child(parent, "chat gpt-4o-mini", {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": output,
    }, 1_000)
    spans += [chat, *(before(root) if before else ()), *added]
    return str(root["traceId"])


def tool_call_id_matching_nothing(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=23)
    _set(session[0].tools[0], "gen_ai.tool.call.id", "call_nobody_asked")
    return _ids(session)


def tool_without_arguments_or_result(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=24)
    for tool in session[0].tools:
        _drop(tool, "gen_ai.tool.call.arguments")
        _drop(tool, "gen_ai.tool.call.result")
        _drop(tool, "gen_ai.tool.call.id")
    return _ids(session)


def tool_result_with_an_unknown_call_id(spans: list[SpanDict]) -> set[str]:
    """Every input of the conversation shows one result under an id no call has."""
    session = _session(spans, runs=2, chats=3, skip=9)
    target = next(m for m in _messages(session[0].chats[-1]) if m["role"] == "tool")
    call_id = target["parts"][0]["id"]
    for trace in session:
        for chat in trace.chats:
            messages = _messages(chat)
            for m in messages:
                for p in m["parts"]:
                    if m["role"] == "tool" and p.get("id") == call_id:
                        p["id"] = "call_unknown"
            _set_messages(chat, messages)
    return _ids(session)


def failing_tool(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=25)
    tool = session[0].tools[-1]
    tool["status"] = {"code": 2, "message": "tool exploded"}
    _set(tool, "error.type", "ToolError")
    return _ids(session)


def tool_with_error_type_only(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=26)
    _set(session[0].tools[0], "error.type", "TimeoutError")
    return _ids(session)


def failing_root(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=27)
    session[0].root["status"] = {"code": 2, "message": "agent crashed"}
    return _ids(session)


def failing_model_call(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=28)
    chat = session[0].chats[-1]
    chat["status"] = {"code": 2}
    _set(chat, "error.type", "RateLimitError")
    return _ids(session)


def output_messages_not_json(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, chats=3, skip=11)
    _set(session[0].chats[1], "gen_ai.output.messages", '[{"role": "assistant", "parts": [')
    return _ids(session)


def last_output_not_json(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=29)
    _set(session[0].chats[-1], "gen_ai.output.messages", "{oops")
    return _ids(session)


def first_input_not_json(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=30)
    _set(session[0].chats[0], "gen_ai.input.messages", "[{")
    return _ids(session)


def root_tool_definitions_not_json(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=31)
    _set(session[0].root, "gen_ai.tool.definitions", "[{")
    return _ids(session)


def root_without_conversation_id(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, runs=2, skip=10)
    _drop(session[1].root, "gen_ai.conversation.id")
    return _ids(session)


def session_id_instead_of_conversation_id(spans: list[SpanDict]) -> set[str]:
    session = _session(spans, skip=32)
    root = session[0].root
    _set(root, "session.id", _get(root, "gen_ai.conversation.id"))
    _drop(root, "gen_ai.conversation.id")
    return _ids(session)


def repeated_span_with_another_end(spans: list[SpanDict]) -> set[str]:
    """A model call exported twice, the copies differing: the first copy read is kept."""
    session = _session(spans, skip=33)
    copy = json.loads(json.dumps(session[0].chats[0]))
    copy["endTimeUnixNano"] = str(int(copy["endTimeUnixNano"]) + 5)
    spans.append(copy)
    return _ids(session)


def late_root_span(spans: list[SpanDict]) -> set[str]:
    """A root exported long after its children (many files later when files are small)."""
    session = _session(spans, runs=2, skip=11)
    root = session[0].root
    spans.remove(root)
    spans.append(root)
    return _ids(session)


@dataclass(frozen=True)
class Case:
    mutate: Callable[[list[SpanDict]], set[str]]
    direct: bool
    """Whether the touched conversations still take the direct path (in one group)."""




CASES = {
    c.mutate.__name__: c
    for c in [
        Case(unmodified, True),
        Case(second_request_in_one_run, False),
        Case(middle_input_edits_the_request, False),
        Case(middle_input_edits_a_tool_result, False),
        Case(middle_input_respaced, False),
        Case(last_input_respaced, False),
        Case(first_input_respaced, True),
        Case(middle_inputs_shrink, False),
        Case(middle_input_missing, False),
        Case(middle_input_not_json, False),
        Case(last_input_with_a_non_message, False),
        Case(system_message_in_every_input, True),
        Case(system_instructions_on_chats, True),
        Case(overlapping_runs, False),
        Case(runs_with_the_same_start, False),
        Case(roots_with_the_same_start, True),
        Case(model_calls_with_the_same_start, True),
        Case(model_calls_with_the_same_start_out_of_order, False),
        Case(event_on_a_model_call, False),
        Case(_on_chat("openinference.span.kind", "LLM", 12), False),
        Case(_on_chat("traceloop.span.kind", "task", 13), False),
        Case(_on_chat("gen_ai.prompt", "hello", 14), False),
        Case(vercel_operation_on_a_plain_span, False),
        Case(span_under_a_tool, False),
        Case(plain_span_under_a_model_call, False),
        Case(model_call_of_another_conversation, False),
        Case(model_call_naming_another_plain_conversation, False),
        Case(model_call_of_the_same_conversation, True),
        Case(root_with_input_messages, False),
        Case(tool_with_output_messages, False),
        Case(plain_span_with_an_operation, False),
        Case(second_root_span, False),
        Case(run_without_model_calls, False),
        Case(follow_up_without_conversation_id, False),
        Case(follow_up_of_another_conversation, True),
        Case(follow_up_whose_first_call_has_no_input, False),
        Case(follow_up_after_a_sub_agent_call, False),
        Case(follow_up_under_a_framework_model_span, False),
        Case(tool_call_id_matching_nothing, True),
        Case(tool_without_arguments_or_result, True),
        Case(tool_result_with_an_unknown_call_id, True),
        Case(failing_tool, True),
        Case(tool_with_error_type_only, True),
        Case(failing_root, True),
        Case(failing_model_call, True),
        Case(output_messages_not_json, False),
        Case(last_output_not_json, False),
        Case(first_input_not_json, False),
        Case(root_tool_definitions_not_json, False),
        Case(root_without_conversation_id, False),
        Case(session_id_instead_of_conversation_id, True),
        Case(repeated_span_with_another_end, True),
        Case(late_root_span, True),
    ]
}


# --- comparing the two paths ---------------------------------------------------------------




def _summary(batch: IngestBatch, out: Path) -> tuple[Any, ...]:
    """Everything `ingest_paths` reports but how many turns it built directly."""
    return astuple(replace(
        batch,
        direct_turns=0,
        turn_files=tuple(p.relative_to(out) for p in batch.turn_files),
        errors=tuple(sorted(batch.errors, key=repr)),
    ))


@dataclass(frozen=True)
class Outcome:
    plain: IngestBatch
    direct: IngestBatch
    turns: list[tuple[Any, ...]]


def _both(
    batches: list[list[Path]],
    out: Path,
    group_bytes: int,
    case_id_attribute: str | None = None,
    workers: int = 1,
) -> Outcome:
    """Ingest each batch of files in turn through both paths (the direct one with `workers`
    processes, the general one alone); assert they agree."""
    results: dict[bool, list[IngestBatch]] = {}
    for direct in (False, True):
        results[direct] = [
            ingest_paths(files, out / str(direct), ingest_id=f"i{n}", group_bytes=group_bytes,
                         case_id_attribute=case_id_attribute, direct=direct,
                         workers=workers if direct else 1)
            for n, files in enumerate(batches)
        ]
    for plain, direct in zip(results[False], results[True], strict=True):
        assert _summary(direct, out / "True") == _summary(plain, out / "False")
    turns = turn_rows(out / "False")
    assert turn_rows(out / "True") == turns
    assert span_rows(out / "True") == span_rows(out / "False")
    return Outcome(results[False][-1], results[True][-1], turns)


_TRACE_ID = [f.name for f in fields(Turn)].index("trace_id")
"""Where a turn row holds its trace id."""


# --- the tests -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_generated_input_is_all_direct_in_one_group(
    export: Export, tmp_path: Path, otlp_json: Any, fmt: str
) -> None:
    files = _write(export, export.copy(), tmp_path / "in", fmt, otlp_json.to_protobuf)
    outcome = _both([files], tmp_path / "out", ONE_GROUP)
    assert outcome.plain.turns > 50 and not outcome.plain.errors
    assert outcome.direct.direct_turns == outcome.direct.turns


@pytest.mark.parametrize(("per_file", "direct_share"), [(PER_FILE, 0.5), (7, 0.1)],
                         ids=["files-of-60", "files-of-7"])
def test_generated_input_in_a_group_per_file(
    export: Export, tmp_path: Path, otlp_json: Any, per_file: int, direct_share: float
) -> None:
    """Runs cut across files wait one group for their root (files of 7 spans: many runs
    span three files and are processed without it); sessions straddle groups, so later
    runs of stored conversations go the general way. Still, many turns are direct."""
    files = _write(export, export.copy(), tmp_path / "in", "json", otlp_json.to_protobuf,
                   per_file)
    outcome = _both([files], tmp_path / "out", 1)
    assert outcome.direct.direct_turns > outcome.direct.turns * direct_share


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_mutated_input_gives_identical_results(
    export: Export, tmp_path: Path, otlp_json: Any, case: Case
) -> None:
    spans = export.copy()
    touched = case.mutate(spans)
    assert touched or case.mutate is unmodified
    files = _write(export, spans, tmp_path / "in", "json", otlp_json.to_protobuf)
    outcome = _both([files], tmp_path / "out", ONE_GROUP)
    touched_turns = sum(1 for row in outcome.turns if row[_TRACE_ID] in touched)
    assert touched_turns > 0 or not touched
    expected = outcome.plain.turns - (0 if case.direct else touched_turns)
    assert outcome.direct.direct_turns == expected


def _all_mutations(export: Export) -> list[SpanDict]:
    """Every case's mutation, one after the other, on one input."""
    spans = export.copy()
    for case in CASES.values():
        case.mutate(spans)
    return spans


@pytest.mark.parametrize(("fmt", "workers"), [(f, 1) for f in FORMATS] + [("jsonl", 2)])
def test_every_mutation_at_once_in_a_group_per_file(
    export: Export, tmp_path: Path, otlp_json: Any, fmt: str, workers: int
) -> None:
    """With `workers=2` the direct path runs beside the read-ahead workers' decodings."""
    files = _write(export, _all_mutations(export), tmp_path / "in", fmt, otlp_json.to_protobuf)
    outcome = _both([files], tmp_path / "out", 1, workers=workers)
    assert outcome.plain.errors  # the malformed content is reported, the same both ways
    assert 0 < outcome.direct.direct_turns < outcome.direct.turns


@pytest.mark.parametrize("mutated", [False, True], ids=["generated", "every-mutation"])
def test_two_ingests_into_one_folder(
    export: Export, tmp_path: Path, otlp_json: Any, mutated: bool
) -> None:
    """The second batch brings later runs, and late spans, of conversations the first
    stored: through the direct path those were stored as direct conversations."""
    spans = _all_mutations(export) if mutated else export.copy()
    files = _write(export, spans, tmp_path / "in", "json", otlp_json.to_protobuf)
    half = len(files) // 2
    outcome = _both([files[:half], files[half:]], tmp_path / "out", ONE_GROUP)
    assert outcome.direct.rebuilt_traces  # the second batch did rebuild stored traces
    assert outcome.direct.direct_turns > 0


def test_case_id_attribute(export: Export, tmp_path: Path, otlp_json: Any) -> None:
    spans = export.copy()
    for n, session in enumerate(_sessions(spans)):
        for trace in session:
            _set(trace.root, "app.case_id", f"case-{n}")
            if n % 2:
                _set(trace.chats[0], "app.case_id", f"chat-case-{n}")
    files = _write(export, spans, tmp_path / "in", "json", otlp_json.to_protobuf)
    outcome = _both([files], tmp_path / "out", ONE_GROUP, case_id_attribute="app.case_id")
    assert outcome.direct.direct_turns == outcome.direct.turns
    case_ids = {row[[f.name for f in fields(Turn)].index("case_id")] for row in outcome.turns}
    assert len(case_ids) > 10


@pytest.mark.parametrize(("mutated", "least_runs"), [(False, 70), (True, 25)],
                         ids=["generated", "every-mutation"])
def test_find_runs_decodes_spans_as_decode_span_does(
    export: Export, tmp_path: Path, otlp_json: Any, mutated: bool, least_runs: int
) -> None:
    """Every span of a direct run is `decode_span`'s, but for `attributes_json`, which only
    the root of a run carries (the turn's attributes come from it)."""
    spans = _all_mutations(export) if mutated else export.copy()
    files = _write(export, spans, tmp_path / "in", "json", otlp_json.to_protobuf)
    raw: dict[tuple[str, str], RawSpan] = {}
    for path in files:
        for rec in read_file(path):
            assert isinstance(rec, RawSpan)
            raw.setdefault((rec.trace_id, rec.span_id), rec)
    by_trace: dict[str, list[RawSpan]] = {}
    for r in raw.values():
        by_trace.setdefault(r.trace_id, []).append(r)
    conversations = find_runs(by_trace.values(), case_id_attribute="gen_ai.agent.name")
    runs = [run for conv in conversations.values() for run in conv]
    assert len(runs) >= least_runs
    for run in runs:
        for span in (run.root, *run.steps, *run.tools, *run.others):
            expected, error = decode_span(raw[(span.trace_id, span.span_id)],
                                          case_id_attribute="gen_ai.agent.name")
            assert error is None
            if span is not run.root:
                expected = replace(expected, attributes_json="{}")
            assert span == expected
