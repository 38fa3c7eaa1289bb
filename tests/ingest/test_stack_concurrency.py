"""Real stacks' runs at once: each committed recording (`test_stacks.py`) ingested together
with copies of itself, as users asking one deterministic agent the same thing, or an
evaluation running a case several times in parallel, would export them: one copy started
50 ms later; and three, one at the same instant and two 50 and 100 ms later. A copy has
fresh trace and span ids, and every session id, tool call id and response id in it is
another; its words are the same. Each turn must come out once per run, no more, no less.

Where an export keeps no session id, traces join by the history their model calls replay
(`turnscore.ingest.grouping`, rule 3), and two runs alike meet there: a call whose output
lost its ids (or never had any) is continued by both runs' next calls, and a call sent the
same prompt as one whose output says nothing looks like its continuation. This is where
such runs would merge into one turn, or split.
"""

from __future__ import annotations

import json
import random
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from tests.ingest.instrumented.stacks.check import recorded
from tests.ingest.instrumented.stacks.record import FIXTURES
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.store import TurnStore
from turnscore.ingest.turn import Turn

LATER = 50 * 10**6
"""How much later a copy starts than the run before it: inside its model calls, as parallel
runs do."""
_ID_KEYS = frozenset({"id", "toolUseId", "tool_use_id", "tool_call_id", "call_id",
                      "responseId", "generation_id", "response_id"})
"""Keys under which the scripted server's responses name a response or a tool call."""


def _turns(files: list[Path], out: Path) -> list[Turn]:
    ingest_paths(files, out)
    return list(TurnStore(out, "read").read_all())


def _said(turn: Turn) -> tuple[Any, ...]:
    """What a turn says, ids aside: the copy's are other ids."""
    calls = tuple((c.name, c.arguments, c.result, c.status) for c in turn.calls)
    return (turn.request, turn.final_answer, calls, turn.llm_calls, turn.input_tokens,
            turn.output_tokens, turn.status)


def _wire_ids(scenario: Path) -> set[str]:
    """The response and tool call ids the scripted server answered with."""
    found: set[str] = set()

    def walk(value: Any, key: str | None = None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key in _ID_KEYS and len(value) >= 6:
            found.add(value)

    for exchange in json.loads((scenario / "wire.json").read_text()):
        walk(exchange.get("response"))
    return found


class _Copy:
    """Rewrites one recording's OTLP files as another run of it, `later` ns later, each
    of `ids` followed by `suffix`."""

    def __init__(self, ids: Iterable[str], seed: int, later: int, suffix: str) -> None:
        self.ids = sorted(ids, key=len, reverse=True)  # a longer id before one inside it
        self.rnd = random.Random(seed)
        self.fresh: dict[bytes, bytes] = {}
        self.later, self.suffix = later, suffix

    def id(self, old: bytes) -> bytes:
        if old and old not in self.fresh:
            self.fresh[old] = self.rnd.randbytes(len(old))
        return self.fresh.get(old, old)

    def value(self, v: common_pb2.AnyValue) -> None:
        kind = v.WhichOneof("value")
        if kind == "string_value":
            text = v.string_value
            for old in self.ids:
                text = text.replace(old, f"{old}{self.suffix}")
            v.string_value = text
        elif kind == "array_value":
            for item in v.array_value.values:
                self.value(item)
        elif kind == "kvlist_value":
            for kv in v.kvlist_value.values:
                self.value(kv.value)

    def spans(self, data: trace_pb2.TracesData) -> None:
        for rs in data.resource_spans:
            for ss in rs.scope_spans:
                for s in ss.spans:
                    s.trace_id, s.span_id = self.id(s.trace_id), self.id(s.span_id)
                    s.parent_span_id = self.id(s.parent_span_id)
                    s.start_time_unix_nano += self.later
                    s.end_time_unix_nano += self.later
                    for a in s.attributes:
                        self.value(a.value)
                    for e in s.events:
                        e.time_unix_nano += self.later
                        for a in e.attributes:
                            self.value(a.value)
                    for link in s.links:
                        link.trace_id, link.span_id = self.id(link.trace_id), self.id(link.span_id)

    def logs(self, data: logs_pb2.LogsData) -> None:
        for rl in data.resource_logs:
            for sl in rl.scope_logs:
                for r in sl.log_records:
                    r.trace_id, r.span_id = self.id(r.trace_id), self.id(r.span_id)
                    for field in ("time_unix_nano", "observed_time_unix_nano"):
                        if getattr(r, field):
                            setattr(r, field, getattr(r, field) + self.later)
                    for a in r.attributes:
                        self.value(a.value)
                    self.value(r.body)

    def write(self, files: list[Path], folder: Path) -> list[Path]:
        out = []
        for path in files:
            data: Any
            if path.name.endswith(".traces.pb"):
                data = trace_pb2.TracesData.FromString(path.read_bytes())
                self.spans(data)
            else:
                data = logs_pb2.LogsData.FromString(path.read_bytes())
                self.logs(data)
            out.append(folder / f"copy{self.suffix}-{path.name}")
            out[-1].write_bytes(data.SerializeToString())
        return out


def _runs_at_once(stack: str, scenario: str, later: Sequence[int], tmp: Path) -> None:
    """The recording with a copy started each of `later` ns after it: each turn once per
    run."""
    folder = FIXTURES / stack / scenario
    files = sorted(folder.glob("*.pb"))
    alone = _turns(files, tmp / "alone")
    ids = _wire_ids(folder) | {t.conversation_id for t in alone if t.conversation_id != t.trace_id}
    ids |= {c.call_id for t in alone for c in t.calls if c.call_id and len(c.call_id) >= 4}
    seed = zlib.crc32(f"{stack}/{scenario}".encode())
    copies = [
        path
        for n, ns in enumerate(later, 1)
        for path in _Copy(ids, seed + n, ns, f"-{n}").write(files, tmp)
    ]
    runs = 1 + len(later)
    together = Counter(_said(t) for t in _turns([*files, *copies], tmp / "together"))
    assert together == Counter({said: runs * n for said, n in Counter(map(_said, alone)).items()})


@pytest.mark.parametrize(("stack", "scenario"), recorded())
def test_two_runs_at_once_give_each_turn_twice(stack: str, scenario: str,
                                                tmp_path: Path) -> None:
    _runs_at_once(stack, scenario, [LATER], tmp_path)


@pytest.mark.parametrize(("stack", "scenario"), recorded())
def test_four_runs_at_once_give_each_turn_four_times(stack: str, scenario: str,
                                                     tmp_path: Path) -> None:
    """Two runs started at the same instant, a third `LATER` and a fourth twice that:
    calls alike that ended together, and others still under way when the first go on. A
    call continues one that had ended when it started, and the one continued the fewest
    times yet, so each run's next turn finds its own (where outputs kept no ids, any one of
    them: they say the same)."""
    _runs_at_once(stack, scenario, [0, LATER, 2 * LATER], tmp_path)


@pytest.mark.parametrize(("stack", "scenario"), recorded())
def test_runs_20_ms_apart_give_each_turn_once_per_run(stack: str, scenario: str,
                                                      tmp_path: Path) -> None:
    """Four runs each 20 ms after the one before: shorter than a model call, so a run's
    reports start inside another run's. Where two instrumentations report each call alone
    in a trace of its own, another run's report may end as near the own as its own does;
    the own starts nearest (`calls._misfit`)."""
    _runs_at_once(stack, scenario, [LATER * 2 // 5, LATER * 4 // 5, LATER * 6 // 5], tmp_path)


_AT = 1_900_000_000 * 10**9
"""The instant every stack's run starts at in `test_other_agents_asked_the_same_at_once`."""


def _start(files: Iterable[Path]) -> int | None:
    return min((s.start_time_unix_nano
                for f in files if f.name.endswith(".traces.pb")
                for rs in trace_pb2.TracesData.FromString(f.read_bytes()).resource_spans
                for ss in rs.scope_spans for s in ss.spans), default=None)  # fmt: skip


@pytest.mark.parametrize("scenario", ["single_tool", "multi_turn"])
def test_other_agents_asked_the_same_at_once_stay_apart(scenario: str, tmp_path: Path) -> None:
    """Every stack's recording of one scenario, all started at one instant and ingested in
    one batch: an evaluation running one task set through several agents at once. Their
    words are the same and many name no session, so traces of different services would
    chain by history; each agent's turns must come out as they do alone."""
    alone: Counter[tuple[Any, ...]] = Counter()
    files: list[Path] = []
    for n, (stack, _) in enumerate(c for c in recorded() if c[1] == scenario):
        folder = FIXTURES / stack / scenario
        recording = sorted(folder.glob("*.pb"))
        turns = _turns(recording, tmp_path / f"alone-{n}")
        alone.update(_said(t) for t in turns)
        ids = _wire_ids(folder) | {t.conversation_id for t in turns
                                   if t.conversation_id != t.trace_id}
        ids |= {c.call_id for t in turns for c in t.calls if c.call_id and len(c.call_id) >= 4}
        start = _start(recording)
        later = 0 if start is None else _AT - start
        files += _Copy(ids, n, later, f"-s{n}").write(recording, tmp_path)
    assert len(files) > 100
    assert Counter(_said(t) for t in _turns(files, tmp_path / "together")) == alone
