"""Real stacks' exports that lost one span inside a run keep their turns whole.

A span can be lost on the way: a batch span processor drops spans when its queue is full,
an exporter loses a batch it could not send, a span processor filters some out. Its
children then name a parent that never arrives. Before `grouping.adopt_orphans`, a lost
agent step, task, member agent or agent-as-tool span left its model calls outside the run
above them, so a turn split in two (`/work/tools/dropspan.py` swept every recording: each
inner span dropped in turn, 198 of 2,769 cases split).

Each case drops, one at a time, every span of one name from a committed recording
(`test_stacks.py`) and compares with the whole: as many turns, the same requests and
answers, the same tool calls, the same statuses (a turn that ran to its answer is `ok`
though a span of it was lost; one with no answer says which parent never arrived).

What a lost span takes with it stays lost: a sub-agent run with no agent span of its own
(CrewAI's coworker under OpenInference: its model calls directly below the delegation's
TOOL span) whose tool span is lost has nothing left to tell its calls from the caller's.
Its calls then join the caller's turn: one turn still, with the sub-agent's calls in it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.trace.v1 import trace_pb2

from tests.ingest.instrumented.stacks.record import FIXTURES
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.store import TurnStore

LOST = [
    # (stack, scenario, name of the span lost), each one that split a turn before
    ("smolagents-openinference", "multi_turn", "Step 1"),
    ("smolagents-openinference-openai", "multi_turn", "OpenAIModel.generate"),
    ("smolagents-openinference-managed", "handoff", "Step 1"),
    ("crewai-openinference-sequential", "multi_turn", "editor._execute_core"),
    ("crewai-openllmetry-sequential", "single_tool", "research_assistant.agent"),
    ("crewai-openllmetry-hierarchical", "handoff", "triage_agent.agent"),
    ("agno-openinference-team", "handoff", "weather_specialist.run"),
    ("autogen-as-tool-openinference", "handoff", "execute_tool weather_specialist"),
    ("openai-agents-otel-as-tool", "handoff", "execute_tool weather_specialist"),
    ("openai-agents-openinference-as-tool", "handoff", "weather_specialist"),
    ("genai-agno-openai-team", "handoff", "execute_tool delegate_task_to_members"),
    ("strands-as-tool", "handoff", "execute_event_loop_cycle"),
    # a step whose parallel tool calls overlap, the longest enclosing the other
    ("vercel-ai-stream", "parallel_tools", "step 1"),
    ("vercel-ai-openinference", "parallel_tools", "step 1"),
]


def _without(files: list[Path], span_id: bytes, folder: Path) -> list[Path]:
    out = []
    for i, f in enumerate(files):
        data = trace_pb2.TracesData.FromString(f.read_bytes())
        for rs in data.resource_spans:
            for ss in rs.scope_spans:
                keep = [s for s in ss.spans if s.span_id != span_id]
                del ss.spans[:]
                ss.spans.extend(keep)
        path = folder / f"part-{i}.traces.pb"
        path.write_bytes(data.SerializeToString())
        out.append(path)
    return out


def _turns(files: list[Path], store: Path) -> list[Any]:
    ingest_paths(files, store)
    return list(TurnStore(store, "read").read_all())


def _said(turns: list[Any]) -> Counter[tuple[Any, ...]]:
    return Counter((t.request, t.final_answer, t.status,
                    tuple((c.name, c.arguments, c.result, c.status) for c in t.calls))
                   for t in turns)


def _ran(turns: list[Any]) -> Counter[tuple[Any, ...]]:
    """When each call ran, as the span of its execution told it."""
    return Counter((c.name, c.started_at, c.duration_ms) for t in turns for c in t.calls
                   if c.started_at is not None)


@pytest.mark.parametrize(("stack", "scenario", "name"), LOST)
def test_a_lost_span_inside_a_run_splits_no_turn(
    stack: str, scenario: str, name: str, tmp_path: Path
) -> None:
    files = sorted((FIXTURES / stack / scenario).glob("*.traces.pb"))
    whole = _turns(files, tmp_path / "whole")
    datas = [trace_pb2.TracesData.FromString(f.read_bytes()) for f in files]
    spans = [s for d in datas for rs in d.resource_spans for ss in rs.scope_spans for s in ss.spans]
    parents = {s.parent_span_id for s in spans}
    lost = [s for s in spans if s.name == name and s.parent_span_id and s.span_id in parents]
    assert lost, f"no inner span named {name!r} in {stack}/{scenario}"
    for i, span in enumerate(lost):
        folder = tmp_path / str(i)
        folder.mkdir()
        got = _turns(_without(files, span.span_id, folder), folder / "store")
        assert _said(got) == _said(whole), f"{stack}/{scenario} without span {span.span_id.hex()}"
        # Only the lost span's own execution may go: the others keep theirs.
        gone = _ran(whole) - _ran(got)
        assert not _ran(got) - _ran(whole)
        assert all(abs(at.timestamp() - span.start_time_unix_nano / 1e9) < 1e-3
                   for _, at, _ in gone), gone
