"""Real instrumentation libraries, a real `openai` client, a scripted server, ingested end to end.

Each (library, scenario) runs `tests.ingest.instrumented.driver` in its own process (the
libraries patch the client globally) against `ScriptedServer` on 127.0.0.1; the driver
exports through the OTel SDK to OTLP protobuf files, which `ingest_paths` turns into turns.
The expected turns come from what the server received and answered on the wire, never
from the exported data. Where a library's telemetry does not carry a field, `KNOWN_GAPS`
says why, and the test proves the value is nowhere in the exported records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.instrumented.driver import LIBRARIES
from tests.ingest.instrumented.expected import Expected, as_json, expected_turn
from tests.ingest.instrumented.scenarios import SCENARIOS
from tests.ingest.instrumented.server import Exchange, ScriptedServer
from turnscore.ingest.otlp import read_file
from turnscore.ingest.pipeline import IngestBatch, ingest_paths
from turnscore.ingest.records import RawLog, RawSpan
from turnscore.ingest.store import TurnStore
from turnscore.ingest.turn import Turn
from turnscore.warehouse.db import DB_FILE, open_readonly
from turnscore.warehouse.ingest_run import run_ingest

ROOT = Path(__file__).resolve().parents[2]


def _installed(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def _all_installed(library: str) -> bool:
    return all(_installed(d) for d in LIBRARIES[library].distributions)


def _skip_unless_installed(library: str) -> list[pytest.MarkDecorator]:
    dists = " and ".join(LIBRARIES[library].distributions)
    return [
        pytest.mark.skipif(
            not _all_installed(library),
            reason=f"{dists}: not installed (pip install -e '.[instrumentation]')",
        )
    ]


@dataclass(frozen=True)
class Run:
    exchanges: list[Exchange]
    files: list[Path]
    batch: IngestBatch
    turns: list[Turn]
    raw_spans: list[RawSpan]
    raw_logs: list[RawLog]


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted


@dataclass(frozen=True)
class Export:
    folder: Path
    driver: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def exports(
    server: ScriptedServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str], Export]:
    """Every installed library's run of every scenario, the drivers running side by side
    (each is a process of its own: a second of imports, then a few model calls)."""
    wanted = [
        (lib, name)
        for lib in LIBRARIES
        if _all_installed(lib)
        for name in SCENARIOS
    ]

    def export(key: tuple[str, str]) -> Export:
        library, scenario = key
        folder = tmp_path_factory.mktemp(f"{library}-{scenario}-otlp")
        driver = [sys.executable, "-m", "tests.ingest.instrumented.driver"]
        proc = subprocess.run(
            [*driver, library, scenario, server.base_url(library, scenario), str(folder)],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        return Export(folder, proc)

    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        return dict(zip(wanted, pool.map(export, wanted), strict=True))


@pytest.fixture(scope="module")
def runs(
    server: ScriptedServer,
    exports: dict[tuple[str, str], Export],
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[str, str], Run]:
    done: dict[tuple[str, str], Run] = {}

    def run(library: str, scenario: str) -> Run:
        if (library, scenario) not in done:
            exported = exports[library, scenario]
            done[library, scenario] = _ingest(server, tmp_path_factory, exported, library, scenario)
        return done[library, scenario]

    return run


def _ingest(
    server: ScriptedServer,
    tmp: pytest.TempPathFactory,
    exported: Export,
    library: str,
    scenario: str,
) -> Run:
    assert exported.driver.returncode == 0, exported.driver.stderr[-4000:]
    files = sorted(exported.folder.iterdir())
    out = tmp.mktemp(f"{library}-{scenario}-ingested")
    batch = ingest_paths(files, out)
    turns = sorted(TurnStore(out, "read").read_all(), key=lambda t: (t.started_at, t.turn_index))
    records = [r for f in files for r in read_file(f)]
    return Run(
        exchanges=server.of(library, scenario),
        files=files,
        batch=batch,
        turns=turns,
        raw_spans=[r for r in records if isinstance(r, RawSpan)],
        raw_logs=[r for r in records if isinstance(r, RawLog)],
    )


def _calls(key: str) -> Callable[[Turn, Expected], tuple[Any, Any]]:
    ours: Callable[[Any], Any] = {
        "id": lambda c: c.call_id,
        "name": lambda c: c.name,
        "arguments": lambda c: as_json(c.arguments),
        "result": lambda c: c.result,
        "is_error": lambda c: c.status == "error",
    }[key]
    return lambda t, x: ([ours(c) for c in t.calls], [c[key] for c in x.calls])


FIELDS: dict[str, Callable[[Turn, Expected], tuple[Any, Any]]] = {
    "request": lambda t, x: (t.request, x.request),
    "system_prompt": lambda t, x: (t.system_instructions, x.system_prompt),
    "tools": lambda t, x: (
        sorted((tool.name, tool.description, as_json(tool.parameters)) for tool in t.tools),
        x.tools,
    ),
    "call.id": _calls("id"),
    "call.name": _calls("name"),
    "call.arguments": _calls("arguments"),
    "call.result": _calls("result"),
    "call.is_error": _calls("is_error"),
    "final_answer": lambda t, x: (t.final_answer, x.final_answer),
    "llm_calls": lambda t, x: (t.llm_calls, x.llm_calls),
    "usage": lambda t, x: ((t.input_tokens, t.output_tokens), x.usage),
}


@dataclass(frozen=True)
class Gap:
    library: str
    scenario: str
    """A scenario name, or '*' for all."""
    field: str
    reason: str
    absent: Callable[[Expected], list[str]]
    """The expected texts that must appear nowhere in the export for the gap to be real."""


RAW_CLIENTS = tuple(LIBRARIES)
_NO_CONTENT = tuple(lib for lib, spec in LIBRARIES.items() if not spec.content)
_UNCAPTURED: dict[str, Callable[[Expected], list[str]]] = {
    "request": lambda x: [x.request],
    "system_prompt": lambda x: [x.system_prompt] if x.system_prompt else [],
    "final_answer": lambda x: [x.final_answer] if x.final_answer else [],
    "call.arguments": lambda x: [v for c in x.calls for v in c["arguments"].values()
                                 if isinstance(v, str)],
    "call.result": lambda x: [c["result"] for c in x.calls if c["result"]],
}
"""What an export without content lacks: each value proven absent from it."""
KNOWN_GAPS: tuple[Gap, ...] = (
    *(
        Gap(lib, "tool_error", "call.is_error",
            "raw chat-completions telemetry has no tool spans and a tool message has no error "
            "flag: the failure is only in the result text the driver wrote",
            lambda x: ["is_error", "exception.type"])
        for lib in RAW_CLIENTS
    ),
    *(
        Gap(lib, "*", "tools",
            "the v1.30 conventions (-openai-v2 without the stability opt-in) have no tool "
            "definitions: neither the chat span nor the gen_ai.* message events carry them, "
            "so only the called tools are inferred, without description or schema",
            lambda x: [description for _, description, _ in x.tools])
        for lib in ("otel-openai-v2-legacy-events", "otel-openai-v2-legacy-events-stream")
    ),
    *(
        Gap(lib, "*", "tools",
            "the v1.30 conventions have no tool definitions (above), and without content "
            "only the called tools' names are left",
            lambda x: [description for _, description, _ in x.tools])
        for lib in _NO_CONTENT
    ),
    *(
        Gap(lib, scenario, field, f"content capture is off: no {field} is exported", absent)
        for lib in _NO_CONTENT
        for scenario, scripted in SCENARIOS.items()
        for field, absent in _UNCAPTURED.items()
        if field in ("request", "system_prompt", "final_answer")
        or any(step.calls for turn in scripted.turns for step in turn.steps)
    ),
    Gap("openllmetry-events", "*", "tools",
        "OpenLLMetry in events mode sets no gen_ai.tool.definitions (nor llm.request.functions) "
        "on the chat span, and its message events carry no tool definitions",
        lambda x: [description for _, description, _ in x.tools]),
)  # fmt: skip

DECODER_BUGS: dict[tuple[str, str, int, str], str] = {}
"""Cases that fail because of a decoder: strict xfails, so that a fix shows up."""


def gap(library: str, scenario: str, field: str) -> Gap | None:
    return next(
        (g for g in KNOWN_GAPS
         if g.library == library and g.scenario in ("*", scenario) and g.field == field),
        None,
    )  # fmt: skip


def export_text(run: Run) -> str:
    """Everything the exported records say, for absence proofs."""
    payload = [
        *([dict(s.attributes), s.status_message, [[e.name, dict(e.attributes)] for e in s.events]]
          for s in run.raw_spans),
        *([lg.event_name, dict(lg.attributes), lg.body] for lg in run.raw_logs),
    ]  # fmt: skip
    return json.dumps(payload, default=repr)


def in_raw(text: str, value: str) -> bool:
    once = json.dumps(value)[1:-1]
    twice = json.dumps(once)[1:-1]
    return any(v in text for v in (value, once, twice))


@dataclass(frozen=True)
class Form:
    """What a library's export must look like, so a version that changes its output form
    fails here instead of silently testing another form."""

    attributes: frozenset[str] = frozenset()
    log_events: frozenset[str] = frozenset()
    absent: frozenset[str] = frozenset()


_V1_30_EVENTS = frozenset(
    {"gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message",
     "gen_ai.tool.message", "gen_ai.choice"}
)  # fmt: skip
_JSON_MESSAGES = frozenset(
    {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions"}
)
FORMS: dict[str, Form] = {
    "otel-openai-v2-legacy-events": Form(
        frozenset({"gen_ai.system"}), _V1_30_EVENTS, _JSON_MESSAGES
    ),
    "otel-openai-v2-legacy-events-stream": Form(
        frozenset({"gen_ai.system"}), _V1_30_EVENTS, _JSON_MESSAGES
    ),
    "otel-openai-v2-no-content": Form(
        frozenset({"gen_ai.system"}), _V1_30_EVENTS, _JSON_MESSAGES
    ),
    "otel-openai-v2-no-content-stream": Form(
        frozenset({"gen_ai.system"}), _V1_30_EVENTS, _JSON_MESSAGES
    ),
    "openllmetry": Form(_JSON_MESSAGES, absent=frozenset({"gen_ai.prompt.0.content"})),
    "openllmetry-stream": Form(_JSON_MESSAGES, absent=frozenset({"gen_ai.prompt.0.content"})),
    "openllmetry-events": Form(log_events=_V1_30_EVENTS, absent=_JSON_MESSAGES),
    "openinference-stream": Form(
        frozenset(
            {
                "openinference.span.kind",
                "llm.tools.0.tool.json_schema",
                "session.id",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id",
            }
        )
    ),
    # Both forms in one export, each model call recorded twice.
    "openllmetry+openinference": Form(
        _JSON_MESSAGES | {"openinference.span.kind", "llm.tools.0.tool.json_schema",
                          "session.id"},
        absent=frozenset({"gen_ai.prompt.0.content"}),
    ),
    "otel-openai-v2+openllmetry": Form(
        _JSON_MESSAGES | {"gen_ai.system"}, _V1_30_EVENTS,
        absent=frozenset({"gen_ai.prompt.0.content"}),
    ),
}


# --- tests ------------------------------------------------------------------------------------


def _scenario_params() -> Iterator[Any]:
    for lib in LIBRARIES:
        for name in SCENARIOS:
            yield pytest.param(lib, name, marks=_skip_unless_installed(lib), id=f"{lib}-{name}")


def _turn_params() -> Iterator[Any]:
    for param in _scenario_params():
        lib, name = param.values
        for i in range(len(SCENARIOS[name].turns)):
            yield pytest.param(lib, name, i, marks=param.marks, id=f"{param.id}-{i}")


@pytest.mark.parametrize(("library", "scenario"), list(_scenario_params()))
def test_ingests_cleanly_into_the_scripted_turns(
    runs: Callable[[str, str], Run], library: str, scenario: str
) -> None:
    run = runs(library, scenario)
    assert run.batch.errors == ()
    assert run.batch.spans == len(run.raw_spans) > 0
    scripted = SCENARIOS[scenario].turns
    # Without content, each turn is there all the same: its calls chained by their ids, a
    # new one where a user message (its text not captured) was added.
    captured = LIBRARIES[library].content
    assert [t.request for t in run.turns] == [s.request if captured else "" for s in scripted]
    assert [t.turn_index for t in run.turns] == list(range(len(scripted)))
    assert [t.status for t in run.turns] == ["ok" if captured else "incomplete"] * len(scripted)
    assert len({t.conversation_id for t in run.turns}) == 1
    if LIBRARIES[library].session:
        assert run.turns[0].conversation_id == f"sess-{library}-{scenario}"
    # every model call on the wire is a model call of exactly one turn
    assert sum(t.llm_calls for t in run.turns) == len(run.exchanges)


@pytest.mark.parametrize(
    "library", [pytest.param(lib, marks=_skip_unless_installed(lib)) for lib in LIBRARIES]
)
def test_exports_the_form_it_stands_for(runs: Callable[[str, str], Run], library: str) -> None:
    run = runs(library, "single_tool")
    form = FORMS[library]
    keys = {k for span in run.raw_spans for k in span.attributes}
    assert form.attributes <= keys
    assert not form.absent & keys
    assert form.log_events <= {lg.event_name for lg in run.raw_logs}
    assert {bool(e.request.get("stream")) for e in run.exchanges} == {LIBRARIES[library].stream}
    assert {f.suffix for f in run.files} == {".jsonl" if LIBRARIES[library].jsonl else ".pb"}
    # Every instrumentation recorded every model call: the doubling the turns must undo.
    model_spans = [s for s in run.raw_spans
                   if {"gen_ai.request.model", "llm.model_name"} & set(s.attributes)]
    assert len(model_spans) == len(LIBRARIES[library].distributions) * len(run.exchanges)


def _field_params() -> Iterator[Any]:
    for param in _turn_params():
        lib, scenario, index = param.values
        for name in FIELDS:
            bug = DECODER_BUGS.get((lib, scenario, index, name))
            marks = [*param.marks, *([pytest.mark.xfail(reason=bug, strict=True)] if bug else [])]
            yield pytest.param(lib, scenario, index, name, marks=marks, id=f"{name}-{param.id}")


@pytest.mark.parametrize(("library", "scenario", "index", "field"), list(_field_params()))
def test_turn_field_matches_the_wire(
    runs: Callable[[str, str], Run], library: str, scenario: str, index: int, field: str
) -> None:
    run = runs(library, scenario)
    assert len(run.turns) > index
    expected = expected_turn(run.exchanges, index)
    ours, theirs = FIELDS[field](run.turns[index], expected)
    known = gap(library, scenario, field)
    if known is None:
        assert ours == theirs
        return
    assert ours != theirs, f"listed as a gap but ingested correctly: {known.reason}"
    if field.startswith("call."):
        assert len(ours) == len(theirs), "a gap in one call field, but calls are missing"
    text = export_text(run)
    for value in known.absent(expected):
        assert not in_raw(text, value), f"{value!r} is in the export after all"


def test_every_export_loads_into_the_warehouse(
    runs: Callable[[str, str], Run], tmp_path: Path
) -> None:
    """All installed libraries' exports in one `run_ingest`: the DuckDB `turns` table holds
    exactly the turns each export gave on its own."""
    installed = [lib for lib in LIBRARIES if _all_installed(lib)]
    if not installed:
        pytest.skip("no instrumentation library installed (pip install -e '.[instrumentation]')")
    done = [runs(lib, name) for lib in installed for name in SCENARIOS]
    report = run_ingest([f for run in done for f in run.files], tmp_path / "wh")
    assert (report.outcome, report.errors) == ("ok", ())
    expected = sorted(
        (t.turn_id, t.request, t.final_answer, t.llm_calls, len(t.calls), t.input_tokens)
        for run in done
        for t in run.turns
    )
    con = open_readonly(tmp_path / "wh" / DB_FILE)
    try:
        rows = con.execute(
            "SELECT turn_id, request, final_answer, llm_calls, len(calls), input_tokens "
            "FROM turns ORDER BY turn_id"
        ).fetchall()
    finally:
        con.close()
    assert sorted(rows) == expected
    assert (
        report.turns_new
        == len(expected)
        == sum(len(SCENARIOS[n].turns) for n in SCENARIOS) * len(installed)
    )
