"""Real stacks' exports give the same turns however the input is cut: each committed
recording (`test_stacks.py`) ingested whole, and again one trace per batch into one store,
in start order and in reverse (a later trace finds the earlier ones stored, and the other
way round).

A batch rebuilds every stored trace of a conversation it touches (`turnscore.ingest.links`:
the keys a span is stored with find its trace again). Those keys are only exercised when
traces arrive apart, and each stack joins its traces by its own keys: a conversation id, a
history, a gap, a response id, a call named in a replayed request. A key stored wrong
shows here as a turn split, doubled or lost.

Recordings with content log files are left out: a log record must arrive with its span
(`decode.decode_spans` reports one that matches no span in its batch), so cutting their
spans from their logs is not a cut ingest must survive.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.trace.v1 import trace_pb2

from tests.ingest.instrumented.stacks.check import recorded
from tests.ingest.instrumented.stacks.record import FIXTURES
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.store import TurnStore

CUTTABLE = sorted({
    stack for stack, scenario in recorded()
    if not list((FIXTURES / stack / scenario).glob("*.logs.pb"))
})


def per_trace(files: list[Path], folder: Path) -> list[Path]:
    """One OTLP protobuf file per trace, in start order."""
    spans: dict[bytes, list[tuple[Any, Any, Any]]] = defaultdict(list)
    for f in files:
        data = trace_pb2.TracesData.FromString(f.read_bytes())
        for rs in data.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    spans[span.trace_id].append((rs, ss, span))
    order = sorted(spans.values(), key=lambda s: min(x[2].start_time_unix_nano for x in s))
    paths = []
    for i, items in enumerate(order):
        one = trace_pb2.TracesData()
        for rs, ss, span in items:
            resource = one.resource_spans.add(resource=rs.resource, schema_url=rs.schema_url)
            scope = resource.scope_spans.add(scope=ss.scope, schema_url=ss.schema_url)
            scope.spans.append(span)
        path = folder / f"trace-{i:03d}.traces.pb"
        path.write_bytes(one.SerializeToString())
        paths.append(path)
    return paths


def _turns(store: Path) -> tuple[list[Any], list[list[str]]]:
    turns = TurnStore(store, "read").read_all()
    conversations: dict[str, list[str]] = defaultdict(list)
    for t in turns:
        conversations[t.conversation_id].append(t.request)
    rows = sorted(
        (t.request, t.final_answer, t.status, t.llm_calls,
         [(c.name, c.call_id, c.arguments, c.result, c.status) for c in t.calls])
        for t in turns
    )
    return rows, sorted(sorted(c) for c in conversations.values())


@pytest.mark.parametrize("stack", CUTTABLE)
def test_one_trace_per_batch_gives_the_same_turns(stack: str, tmp_path: Path) -> None:
    cut_any = False
    for name, scenario in recorded():
        folder = FIXTURES / name / scenario
        if name != stack or list(folder.glob("*.logs.pb")):
            continue
        files = sorted(folder.glob("*.pb"))
        work = tmp_path / scenario
        (work / "traces").mkdir(parents=True)
        pieces = per_trace(files, work / "traces")
        if len(pieces) < 2:
            continue
        cut_any = True
        ingest_paths(files, work / "whole")
        whole = _turns(work / "whole")
        for order, batches in (("forward", pieces), ("backward", pieces[::-1])):
            for piece in batches:
                ingest_paths([piece], work / order)
            assert _turns(work / order) == whole, (scenario, order)
    if not cut_any:
        pytest.skip(f"{stack}: every recording is one trace")
