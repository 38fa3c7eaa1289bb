"""`run_ingest` against a real DuckDB warehouse: idempotent loads, late spans, crashes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import duckdb
import pytest
import zstandard
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.ingest.instrumented.export import FileSpanExporter
from turnscore.ingest.schema import TURN_FIELDS
from turnscore.warehouse.db import DB_FILE
from turnscore.warehouse.errors import InvalidOption, WarehouseBusy
from turnscore.warehouse.ingest_run import run_ingest
from turnscore.warehouse.score_run import score_turns

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
COLUMNS = ", ".join(f'"{f.name}"' for f in TURN_FIELDS)


def _query(warehouse: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(warehouse / DB_FILE), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def _turn_rows(warehouse: Path) -> list[tuple[Any, ...]]:
    return _query(warehouse, f"SELECT {COLUMNS} FROM turns ORDER BY turn_id")


def _split_last_span(src: Path, folder: Path) -> tuple[Path, Path]:
    """The scenario as two files: everything but the last-starting span, then that span."""
    doc = json.loads(src.read_text())
    spans = [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    last = max(spans, key=lambda s: int(s["startTimeUnixNano"]))["spanId"]
    parts = []
    for name, keep in (
        ("early.json", lambda s: s["spanId"] != last),
        ("late.json", lambda s: s["spanId"] == last),
    ):
        part = {
            "resourceSpans": [
                {
                    **rs,
                    "scopeSpans": [
                        {**ss, "spans": [s for s in ss["spans"] if keep(s)]}
                        for ss in rs["scopeSpans"]
                    ],
                }
                for rs in doc["resourceSpans"]
            ]
        }
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(part))
        parts.append(folder / name)
    return parts[0], parts[1]


def test_ingest_loads_every_turn_once_and_records_the_run(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    report = run_ingest([CORPUS / "pydantic-ai", CORPUS / "strands_default"], wh)
    assert report.outcome == "partial"  # ground_truth.json files are not OTLP
    assert {Path(e.source).name for e in report.errors} == {"ground_truth.json"}
    [(turns, distinct)] = _query(wh, "SELECT count(*), count(DISTINCT turn_id) FROM turns")
    assert turns == distinct == report.turns_new > 10
    assert (report.turns_rebuilt, report.turns_unchanged) == (0, 0)
    files = _query(wh, "SELECT path, spans, run_id FROM ingested_files ORDER BY path")
    # Every file but the two that gave only errors, which the next run reads again.
    assert len(files) == report.files_read - 2 and {f[2] for f in files} == {report.run_id}
    assert not any(f[0].endswith("ground_truth.json") for f in files)
    assert sum(f[1] for f in files) == report.spans
    [(outcome, summary, ended)] = _query(
        wh, "SELECT outcome, summary, ended_at FROM runs WHERE run_id = ?", [report.run_id]
    )
    assert outcome == "partial" and ended is not None
    assert json.loads(summary)["turns_new"] == turns
    errors = _query(
        wh, "SELECT source, position, message FROM ingest_errors WHERE run_id = ?", [report.run_id]
    )
    assert len(errors) == len(report.errors) == 2
    assert all("resourceSpans" in e[2] for e in errors)


def test_a_second_ingest_of_the_same_files_changes_nothing(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    run_ingest([CORPUS / "otel-genai-openai"], wh)
    rows = _turn_rows(wh)
    again = run_ingest([CORPUS / "otel-genai-openai"], wh)
    # ground_truth.json is no OTLP: never recorded, so it is read and reported again.
    assert again.outcome == "partial"
    assert [Path(e.source).name for e in again.errors] == ["ground_truth.json"]
    assert again.files_read == 1 and again.files_skipped == 6
    assert (again.turns_new, again.turns_rebuilt, again.turns_removed) == (0, 0, 0)
    assert _turn_rows(wh) == rows


def test_the_same_spans_in_another_file_leave_rows_untouched(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    src = CORPUS / "openinference-openai" / "parallel_tools.json"
    first = run_ingest([src], wh)
    rows = _turn_rows(wh)
    # The protobuf file carries the same spans: other bytes, same content.
    again = run_ingest([src.with_suffix(".pb")], wh)
    assert again.files_read == 1 and again.new_spans == 0
    assert (again.turns_new, again.turns_rebuilt, again.turns_unchanged) == (0, 0, first.turns_new)
    assert _turn_rows(wh) == rows  # including ingest_id: the rows were not rewritten


def test_a_late_span_rebuilds_the_turn_under_the_same_id(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    early, late = _split_last_span(
        CORPUS / "otel-openai-v2_latest-span-agentspans" / "single_tool.json", tmp_path / "in"
    )
    first = run_ingest([early], wh)
    [(turn_id, status, hash_before)] = _query(wh, "SELECT turn_id, status, content_hash FROM turns")
    second = run_ingest([late], wh)
    assert (first.turns_new, second.turns_new, second.turns_rebuilt) == (1, 0, 1)
    [(turn_id_after, status_after, hash_after, ingest_id)] = _query(
        wh, "SELECT turn_id, status, content_hash, ingest_id FROM turns"
    )
    assert turn_id_after == turn_id
    assert (status, status_after) == ("incomplete", "ok")
    assert hash_after != hash_before
    assert ingest_id == second.run_id
    # The same result as ingesting the whole scenario at once.
    whole = tmp_path / "whole"
    run_ingest([CORPUS / "otel-openai-v2_latest-span-agentspans" / "single_tool.json"], whole)
    drop = ("ingest_id", "source")
    cols = ", ".join(f'"{f.name}"' for f in TURN_FIELDS if f.name not in drop)
    assert _query(wh, f"SELECT {cols} FROM turns") == _query(whole, f"SELECT {cols} FROM turns")


def test_a_failure_loads_nothing_and_a_rerun_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wh = tmp_path / "wh"
    src = CORPUS / "strands_default"
    with monkeypatch.context() as m:
        # The warehouse load fails half-way through its transaction.
        m.setattr(
            "turnscore.warehouse.ingest_run.INSERT_FILES", "INSERT INTO no_such_table VALUES (1)"
        )
        failed = run_ingest([src], wh)
    assert failed.outcome == "failed" and "no_such_table" in (failed.error or "")
    assert _query(wh, "SELECT count(*) FROM turns") == [(0,)]
    assert _query(wh, "SELECT count(*) FROM ingested_files") == [(0,)]
    assert _query(wh, "SELECT outcome FROM runs WHERE run_id = ?", [failed.run_id]) == [("failed",)]
    done = run_ingest([src], wh)
    assert done.outcome == "partial" and done.files_read == 6 and done.new_spans == 0
    clean = tmp_path / "clean"
    run_ingest([src], clean)
    assert _turn_rows(wh) != [] and len(_turn_rows(wh)) == len(_turn_rows(clean))


CRASH = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from turnscore.ingest import store
    from turnscore.warehouse.ingest_run import run_ingest

    real = store.TurnStore.replace
    def replace_then_die(self, turns, rebuilt):
        real(self, turns, rebuilt)
        os._exit(9)  # killed after writing Parquet, before the warehouse load
    store.TurnStore.replace = replace_then_die
    run_ingest([Path(sys.argv[1])], Path(sys.argv[2]))
    """
)


def test_a_killed_run_is_marked_interrupted_and_redone_without_duplicates(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    src = CORPUS / "pydantic-ai" / "multi_turn.json"
    proc = subprocess.run([sys.executable, "-c", CRASH, str(src), str(wh)], check=False)
    assert proc.returncode == 9
    assert list((wh / "turns").rglob("*.parquet"))  # Parquet was written, the load was not
    # A temp file left mid-rename by the dead process must not survive the rerun.
    day = next((wh / "spans").iterdir())
    (day / ".tmp-part-dead-00001.parquet.1").write_bytes(b"half")
    report = run_ingest([src], wh)
    assert report.outcome == "ok" and report.turns_new == 2 and report.new_spans == 0
    assert not list(wh.rglob(".tmp-*"))
    assert _query(wh, "SELECT count(*), count(DISTINCT turn_id) FROM turns") == [(2, 2)]
    outcomes = _query(wh, "SELECT outcome FROM runs ORDER BY started_at")
    assert outcomes == [("interrupted",), ("ok",)]
    parquet_turns = _query(wh, f"SELECT count(*) FROM read_parquet('{wh}/turns/*/*.parquet')")
    assert parquet_turns == [(2,)]


HOLD_LOCK = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from turnscore.warehouse.db import writer_lock\n"
    "with writer_lock(Path(sys.argv[1])):\n"
    "    print('locked', flush=True)\n"
    "    time.sleep(60)\n"
)


def test_a_busy_warehouse_is_refused(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    # Another process: the lock is re-entrant within one.
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(wh)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(WarehouseBusy, match="busy"):
            run_ingest([CORPUS / "pydantic-ai" / "no_tool.json"], wh)
    finally:
        holder.kill()
        holder.wait()
    assert not (wh / DB_FILE).exists()  # refused before touching anything


def test_a_missing_path_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(InvalidOption, match=r"no such file or folder: .*nope\.json"):
        run_ingest([CORPUS / "pydantic-ai" / "no_tool.json", tmp_path / "nope.json"],
                   tmp_path / "wh")
    assert not (tmp_path / "wh").exists()


GOOD = (CORPUS / "pydantic-ai" / "single_tool.json").read_bytes()
OTHER = (CORPUS / "pydantic-ai" / "no_tool.json").read_bytes()
BAD_LINE = json.dumps(json.loads(OTHER)).encode() + b"\n{oops\n"
UNREADABLE = None
"""A file listed in a folder that cannot be read (a symlink to nothing: root reads any
mode, so permissions cannot stand in for it)."""
INPUTS: dict[str, bytes | None] = {
    "good.json": GOOD,
    "other.json": OTHER,
    "garbage.json": bytes(range(7, 200)),
    "empty.json": b"",
    "nototlp.json": b'{"hello": 1}',
    "cut.json.zst": zstandard.ZstdCompressor().compress(GOOD)[:40],
    "badline.jsonl": BAD_LINE,
    "gone.json": UNREADABLE,
    "nothing.json": b'{"resourceSpans": []}',
}


@pytest.mark.parametrize(
    ("nights", "outcomes", "recorded"),
    [
        # Only files that gave records (or gave no error) are recorded; the rest come back.
        ([["good.json"]], ["ok"], ["good.json"]),
        ([["garbage.json"], ["garbage.json"]], ["failed", "failed"], []),
        ([["empty.json"]], ["failed"], []),
        ([["nototlp.json"]], ["failed"], []),
        ([["cut.json.zst"]], ["failed"], []),
        ([["gone.json"]], ["failed"], []),
        ([["nothing.json"]], ["ok"], ["nothing.json"]),
        # Bad files beside good ones, read now or on an earlier night: completed, partial.
        ([["good.json", "garbage.json", "gone.json"]], ["partial"], ["good.json"]),
        ([["good.json"], ["good.json", "garbage.json"]], ["ok", "partial"], ["good.json"]),
        ([["good.json"], ["good.json", "gone.json"]], ["ok", "partial"], ["good.json"]),
        # A file with some bad lines is in, and is not reported again.
        ([["badline.jsonl"], ["badline.jsonl"]], ["partial", "ok"], ["badline.jsonl"]),
        # Fixed overnight: the new content is read.
        ([["garbage.json"], ["good.json"]], ["failed", "ok"], ["good.json"]),
        # Only garbage, even if an empty-but-valid file came with it: nothing was read.
        ([["nothing.json", "garbage.json"]], ["failed"], ["nothing.json"]),
    ],
)
def test_what_is_recorded_and_each_run_outcome(
    tmp_path: Path, nights: list[list[str]], outcomes: list[str], recorded: list[str]
) -> None:
    wh = tmp_path / "wh"
    got = []
    for night, names in enumerate(nights):
        folder = tmp_path / f"night{night}"
        folder.mkdir()
        for name in names:
            data = INPUTS[name]
            if data is None:
                (folder / name).symlink_to(tmp_path / "deleted")
            else:
                (folder / name).write_bytes(data)
        report = run_ingest([folder], wh)
        got.append(report.outcome)
        bad = {n for n in names if INPUTS[n] is not GOOD and INPUTS[n] is not OTHER}
        bad -= {"nothing.json"} | ({"badline.jsonl"} if night else set())
        assert {Path(e.source).name for e in report.errors} == bad
        assert (report.error is not None) == (report.outcome == "failed")
    assert got == outcomes
    rows = _query(wh, "SELECT path FROM ingested_files")
    assert sorted({Path(r[0]).name for r in rows}) == recorded


def test_hostile_file_names_stay_data(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    name = "x'); DROP TABLE turns; --.json"
    shutil.copy(CORPUS / "pydantic-ai" / "no_tool.json", folder / name)
    (folder / "bad'name.json").write_text("{oops")
    wh = tmp_path / "wh"
    report = run_ingest([folder], wh)
    assert report.outcome == "partial"
    # The bad file gave nothing, so it is not recorded (the next run reads it again).
    assert _query(wh, "SELECT path FROM ingested_files") == [(str(folder / name),)]
    assert _query(wh, "SELECT count(*) FROM turns") == [(1,)]
    assert os.path.basename(_query(wh, "SELECT source FROM ingest_errors")[0][0]) == "bad'name.json"


def test_turns_a_rebuild_no_longer_yields_are_deleted(tmp_path: Path) -> None:
    """The agent root arriving late can re-anchor turns: the old rows go, none linger."""
    src = CORPUS / "pydantic-ai" / "multi_turn.json"
    doc = json.loads(src.read_text())
    folder = tmp_path / "in"
    folder.mkdir()
    for name, keep in (("children.json", True), ("roots.json", False)):
        part = {
            "resourceSpans": [
                {
                    **rs,
                    "scopeSpans": [
                        {
                            **ss,
                            "spans": [
                                s for s in ss["spans"] if bool(s.get("parentSpanId")) == keep
                            ],
                        }
                        for ss in rs["scopeSpans"]
                    ],
                }
                for rs in doc["resourceSpans"]
            ]
        }
        (folder / name).write_text(json.dumps(part))
    wh = tmp_path / "wh"
    first = run_ingest([folder / "children.json"], wh)
    second = run_ingest([folder / "roots.json"], wh)
    whole = tmp_path / "whole"
    run_ingest([src], whole)
    cols = ", ".join(f'"{f.name}"' for f in TURN_FIELDS if f.name not in ("ingest_id", "source"))
    sql = f"SELECT {cols} FROM turns ORDER BY turn_id"
    assert _query(wh, sql) == _query(whole, sql)
    assert first.turns_new == 2
    assert second.turns_new + second.turns_rebuilt == 2
    assert second.turns_removed == second.turns_new  # every re-anchored turn replaced one


def test_scores_of_a_removed_turn_move_to_history(tmp_path: Path) -> None:
    """A late first model call re-anchors its turn (a new turn_id): the old turn goes, and
    its scores leave `scores` for `scores_history`, so no view counts a turn that is gone."""
    doc = json.loads((CORPUS / "pydantic-ai" / "multi_turn.json").read_text())
    spans = [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    first_chat = min((s for s in spans if s["name"].startswith("chat")),
                     key=lambda s: int(s["startTimeUnixNano"]))
    folder = tmp_path / "in"
    folder.mkdir()
    for name, late in (("early.json", False), ("late.json", True)):
        part = {"resourceSpans": [
            {**rs, "scopeSpans": [
                {**ss, "spans": [s for s in ss["spans"] if (s is first_chat) == late]}
                for ss in rs["scopeSpans"]]}
            for rs in doc["resourceSpans"]]}
        (folder / name).write_text(json.dumps(part))
    wh = tmp_path / "wh"
    run_ingest([folder / "early.json"], wh)
    score_turns(wh, scorers=["call_validity", "groundedness"], publish_snapshot=False)
    scored_before = {r[0] for r in _query(wh, "SELECT turn_id FROM scores")}
    second = run_ingest([folder / "late.json"], wh)
    assert second.turns_removed > 0
    current = {r[0] for r in _query(wh, "SELECT turn_id FROM scores")}
    retired = scored_before - current
    assert len(retired) == second.turns_removed
    assert _query(wh, "SELECT count(*) FROM scores WHERE turn_id NOT IN "
                      "(SELECT turn_id FROM turns)") == [(0,)]
    assert {r[0] for r in _query(wh, "SELECT turn_id FROM scores_history")} == retired
    assert _query(wh, "SELECT count(*) FROM scores_history") == [(2 * len(retired),)]


def capture_off_export(folder: Path) -> None:
    """Two model calls in their own traces, exported by the OTel SDK: one with its
    messages, one as an instrumentation records it with content capture off (usage only)."""
    provider = TracerProvider(resource=Resource({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(folder, "capture")))
    tracer = provider.get_tracer("weather-agent")
    said = {
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}],
              "finish_reason": "stop"}]),
    }
    for content in (said, {}):
        with tracer.start_as_current_span("chat gpt-4o", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 3, **content,
        }):
            pass
    provider.shutdown()


def test_the_report_says_how_many_turns_have_each_status_and_issue(tmp_path: Path) -> None:
    """A stack recorded without content gives turns nobody should score blindly: the run's
    report counts them by issue, as the `turns` rows say."""
    capture_off_export(tmp_path / "in")
    wh = tmp_path / "wh"
    first = run_ingest([tmp_path / "in"], wh)
    statuses = dict(_query(wh, "SELECT status, count(*) FROM turns GROUP BY status"))
    issues = dict(_query(wh, "SELECT issue, count(*) FROM "
                             "(SELECT unnest(issues) AS issue FROM turns) GROUP BY issue"))
    assert first.turn_status == statuses and sum(statuses.values()) == 2
    assert first.turn_issues == issues
    assert first.turn_status == {"ok": 1, "incomplete": 1}  # in this order, ok first
    assert first.turn_conventions == {"otel-genai": 2}
    assert list(first.turn_issues.items()) == [
        ("request_not_captured", 1), ("answer_not_captured", 1), ("model_call_without_content", 1)]
