"""Ingest a committed stack recording and compare its turns with the wire's, field by field.

Shared by `tests/ingest/test_stacks.py` and the recovery table
(`python -m tests.ingest.instrumented.stacks.check`). Needs turnscore; the drivers do not.

A field is one of `FIELDS` of one expected turn; tool results are compared as JSON values
where they are JSON (a structured result has no one text form). The ingested turn it is
compared with is the one whose request is the expected request (the first such, in start
order), else the one at the same position: an extra empty turn then shows in the turn
count, not in every field after it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.expected import as_json
from tests.ingest.instrumented.scenarios import MULTI_AGENT
from tests.ingest.instrumented.scenarios import SCENARIOS as STANDARD
from tests.ingest.instrumented.stacks.expect import FIELDS, expected_turns
from tests.ingest.instrumented.stacks.record import FIXTURES, STACKS
from turnscore.ingest.otlp import read_file
from turnscore.ingest.pipeline import IngestBatch, ingest_paths
from turnscore.ingest.records import RawLog, RawSpan
from turnscore.ingest.store import TurnStore
from turnscore.ingest.turn import Turn

SCENARIOS = (*STANDARD, *MULTI_AGENT)


@dataclass(frozen=True)
class Recording:
    stack: str
    scenario: str
    files: list[Path]
    wire: list[dict[str, Any]]
    expected: list[dict[str, Any]]
    """As committed in expected.json."""
    batch: IngestBatch
    turns: list[Turn]
    raw_spans: list[RawSpan]
    raw_logs: list[RawLog]

    def turn_for(self, index: int) -> Turn | None:
        request = self.expected[index]["request"]
        same = [t for t in self.turns if t.request == request]
        if same:
            return same[0]
        return self.turns[index] if index < len(self.turns) else None


def recorded() -> list[tuple[str, str]]:
    """(stack, scenario) of every committed recording."""
    return [(s, n) for s in STACKS for n in SCENARIOS if (FIXTURES / s / n / "wire.json").exists()]


_EXPORTS = (".pb", ".traces.json", ".logs.json")


def load(stack: str, scenario: str, out: Path) -> Recording:
    folder = FIXTURES / stack / scenario
    # OTLP protobuf, or OTLP/JSON where the stack's exporter sent JSON (Gemini CLI's).
    files = sorted(p for p in folder.iterdir() if p.name.endswith(_EXPORTS))
    batch = ingest_paths(files, out)
    turns = sorted(TurnStore(out, "read").read_all(), key=lambda t: (t.started_at, t.turn_index))
    records = [r for f in files for r in read_file(f)]
    return Recording(
        stack=stack,
        scenario=scenario,
        files=files,
        wire=json.loads((folder / "wire.json").read_text()),
        expected=json.loads((folder / "expected.json").read_text()),
        batch=batch,
        turns=turns,
        raw_spans=[r for r in records if isinstance(r, RawSpan)],
        raw_logs=[r for r in records if isinstance(r, RawLog)],
    )


def _calls(key: str) -> tuple[Callable[[Turn], Any], Callable[[dict[str, Any]], Any]]:
    ours: Callable[[Any], Any] = {
        "id": lambda c: c.call_id,
        "name": lambda c: c.name,
        "arguments": lambda c: as_json(c.arguments),
        "result": lambda c: as_json(c.result),
        "is_error": lambda c: c.status == "error",
    }[key]
    theirs: Callable[[Any], Any] = as_json if key == "result" else (lambda v: v)
    return (lambda t: [ours(c) for c in t.calls]), (lambda x: [theirs(c[key]) for c in x["calls"]])


def _usage(t: Turn) -> list[int | None] | None:
    if t.input_tokens is None and t.output_tokens is None:
        return None
    return [t.input_tokens, t.output_tokens]


COMPARE: dict[str, tuple[Callable[[Turn], Any], Callable[[dict[str, Any]], Any]]] = {
    "request": (lambda t: t.request, lambda x: x["request"]),
    "system_prompt": (lambda t: t.system_instructions, lambda x: x["system_prompt"]),
    "tools": (
        lambda t: sorted([v.name, v.description, as_json(v.parameters)] for v in t.tools),
        lambda x: x["tools"],
    ),
    "call.id": _calls("id"),
    "call.name": _calls("name"),
    "call.arguments": _calls("arguments"),
    "call.result": _calls("result"),
    "call.is_error": _calls("is_error"),
    "final_answer": (lambda t: t.final_answer, lambda x: x["final_answer"]),
    "llm_calls": (lambda t: t.llm_calls, lambda x: x["llm_calls"]),
    "usage": (_usage, lambda x: x["usage"]),
}
assert tuple(COMPARE) == FIELDS


def compare(rec: Recording, index: int, field: str) -> tuple[Any, Any]:
    """(ingested, expected) for one field of one turn; ingested is None without a turn."""
    ours, theirs = COMPARE[field]
    turn = rec.turn_for(index)
    return (None if turn is None else ours(turn)), theirs(rec.expected[index])


def rederived(rec: Recording) -> list[dict[str, Any]]:
    return expected_turns(rec.scenario, rec.wire)


def turns_right(rec: Recording) -> bool:
    """One turn per user request, in order, holding every model call of the wire between
    them, and no ingest error. (Status is left to the fields it follows from: a turn whose
    answer an export lacks is rightly not `ok`.)"""
    return (
        rec.batch.errors == ()
        and [t.request for t in rec.turns] == [x["request"] for x in rec.expected]
        and sum(t.llm_calls for t in rec.turns) == len(rec.wire)
    )


@dataclass(frozen=True)
class Row:
    stack: str
    versions: str
    fields: int
    """Fields equal to the wire's."""
    total: int
    turn_lists: int
    """Scenarios whose turn list is right (`turns_right`)."""
    scenarios: int


def table(stacks: list[str] | None = None) -> list[Row]:
    """The rows of `stacks` (every stack's when None)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for stack in stacks or STACKS:
            got = total = lists = scenarios = 0
            for scenario in [n for s, n in recorded() if s == stack]:
                rec = load(stack, scenario, Path(tmp) / stack / scenario)
                scenarios += 1
                lists += turns_right(rec)
                for index in range(len(rec.expected)):
                    for field in FIELDS:
                        ours, theirs = compare(rec, index, field)
                        got, total = got + (ours == theirs), total + 1
            if scenarios:
                versions = json.loads((FIXTURES / stack / "versions.json").read_text())
                named = " ".join(f"{k} {v}" for k, v in versions.items())
                rows.append(Row(stack, named, got, total, lists, scenarios))
    return rows


def main(argv: list[str]) -> int:
    rows = table(argv or None)
    print("| stack | versions | fields recovered | right turn lists |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        lists = f"{r.turn_lists} / {r.scenarios}"
        print(f"| {r.stack} | {r.versions} | {r.fields} / {r.total} | {lists} |")
    got, total = sum(r.fields for r in rows), sum(r.total for r in rows)
    lists, scenarios = sum(r.turn_lists for r in rows), sum(r.scenarios for r in rows)
    share = f"{100 * got / max(total, 1):.0f}%"
    print(f"| all | | {got} / {total} ({share}) | {lists} / {scenarios} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
