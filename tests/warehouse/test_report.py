"""build_report on a real warehouse: the bundled demo, ingested, labelled and scored.

Numbers in the report are checked against the same warehouse read another way (Python
over the raw rows), hostile agent content must come out escaped, and empty warehouses
and periods must give "no data" notes, never errors.
"""

from __future__ import annotations

import html
from collections import Counter
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import duckdb
import pytest
import typer
from typer.testing import CliRunner

from tests.warehouse.turn_factory import load_turns, make_turn
from turnscore.demo import generate_demo
from turnscore.warehouse import score_queue
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.errors import InvalidOption
from turnscore.warehouse.ingest_run import run_ingest
from turnscore.warehouse.labels import load_labels
from turnscore.warehouse.report import (
    Period,
    ReportData,
    build_report,
    load_report_data,
    resolve_period,
)
from turnscore.warehouse.report.charts import plotly_js
from turnscore.warehouse.report.sections import NO_JUDGED, headline_metrics
from turnscore.warehouse.score_run import score_turns

# Today: ingest errors are recorded now, and a report shows those of its period's days.
LAST_DAY = datetime.now(UTC).date()
DAY_BEFORE = LAST_DAY - timedelta(days=1)
DAYS = 7
HOSTILE = '<script>window.__turnscore_xss=1</script><img src=x onerror="window.__turnscore_xss=2">'
HOSTILE_AGENT = "<b>evil</b><script>window.__turnscore_xss=3</script>"
HOSTILE_TOOL = "<svg onload=window.__turnscore_xss=4>"
BAD_LINE = '{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "<i>broken</i>"'

COPY_TURN = """
INSERT INTO turns SELECT * REPLACE (
    $id AS turn_id, $request AS request, $agent AS agent_name, $answer AS final_answer,
    [struct_pack(call_id := 'call-hostile', name := $tool, arguments := $args,
                 result := $answer, error := NULL, status := 'ok', step := 0,
                 started_at := started_at, duration_ms := 5.0)] AS calls)
FROM turns WHERE turn_id = $src
"""
COPY_SCORES = """
INSERT INTO scores SELECT * REPLACE (
    $id AS turn_id,
    CASE WHEN scorer = 'tool_usage' THEN 0.0 ELSE value END AS value,
    CASE WHEN scorer = 'tool_usage' THEN $why ELSE explanation END AS explanation)
FROM scores WHERE turn_id = $src
"""


def build_demo_warehouse(root: Path) -> Path:
    """The demo through ingest, labels and scoring, plus one hostile turn on the last day,
    one malformed trace file and one errored score."""
    demo = generate_demo(root / "demo", days=DAYS, today=LAST_DAY)
    wh = root / "wh"
    bad = root / "demo" / "broken.jsonl"
    bad.write_text(BAD_LINE + "\n")
    assert run_ingest([*demo.traces, bad], wh).turns_new > 0
    load_labels(wh, [demo.labels], case_id_attribute="turnscore.case_id")
    score_turns(wh, publish_snapshot=False)
    con = open_warehouse(wh)
    try:
        src = con.execute("SELECT turn_id FROM turns WHERE started_at >= $day ORDER BY turn_id "
                          "LIMIT 1", {"day": datetime.combine(LAST_DAY, time(0), UTC)}).fetchone()
        assert src is not None
        params = {"id": "hostile-turn", "src": src[0]}
        con.execute(COPY_TURN, {**params, "request": HOSTILE, "agent": HOSTILE_AGENT,
                                "answer": HOSTILE, "tool": HOSTILE_TOOL, "args": HOSTILE})
        con.execute(COPY_SCORES, {**params, "why": f"the agent said {HOSTILE}"})
        con.execute("UPDATE scores SET status = 'error', value = NULL, error = $e "
                    "WHERE turn_id = $id AND scorer = 'groundedness'",
                    {"e": f"judge reply was {HOSTILE}", "id": src[0]})
        score_queue.queue_turns(con, ["hostile-turn", src[0]])  # written by hand, as ingest
    finally:
        con.close()
    return wh


@pytest.fixture(scope="module")
def demo_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_warehouse(tmp_path_factory.mktemp("report"))


def _rows(wh: Path, sql: str, params: dict[str, object] | None = None) -> list[tuple]:
    con = duckdb.connect(str(wh / "warehouse.duckdb"), read_only=True)
    try:
        con.execute("SET TimeZone = 'UTC'")
        return con.execute(sql, params or {}).fetchall()
    finally:
        con.close()


def _turns_by_day(wh: Path) -> Counter[date]:
    return Counter(r[0].astimezone(UTC).date() for r in _rows(wh, "SELECT started_at FROM turns"))


def _load(wh: Path, period: Period) -> ReportData:
    con = duckdb.connect(str(wh / "warehouse.duckdb"), read_only=True)
    try:
        return load_report_data(con, period)
    finally:
        con.close()


def test_default_period_is_the_last_night_compared_with_the_night_before(
        demo_warehouse: Path, tmp_path: Path) -> None:
    by_day = _turns_by_day(demo_warehouse)
    summary = build_report(demo_warehouse, out=tmp_path / "r.html")
    assert (summary.start, summary.end) == (LAST_DAY, LAST_DAY)
    assert summary.turns == by_day[LAST_DAY]
    assert summary.previous_turns == by_day[DAY_BEFORE]
    assert summary.empty_sections == ()
    assert summary.bytes == len((tmp_path / "r.html").read_bytes())


def test_headline_compares_with_the_day_before(demo_warehouse: Path, tmp_path: Path) -> None:
    data = _load(demo_warehouse, Period(LAST_DAY, LAST_DAY))
    metrics = {m.name: m for m in headline_metrics(data)}
    by_day = _turns_by_day(demo_warehouse)
    assert (metrics["turns"].value, metrics["turns"].previous) == (
        by_day[LAST_DAY], by_day[DAY_BEFORE])
    usage = _rows(demo_warehouse, """
        SELECT CAST(t.started_at AS DATE) = $last, s.value FROM scores s
        JOIN turns t USING (turn_id)
        WHERE s.scorer = 'tool_usage' AND s.status = 'scored'
          AND CAST(t.started_at AS DATE) IN ($last, $last - 1)""", {"last": LAST_DAY})
    now = [v for last, v in usage if last]
    before = [v for last, v in usage if not last]
    assert metrics["Tool Usage (mean)"].value == pytest.approx(sum(now) / len(now))
    assert metrics["Tool Usage (mean)"].previous == pytest.approx(sum(before) / len(before))
    build_report(demo_warehouse, out=tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert f"vs {by_day[DAY_BEFORE]}</span>" in page


def test_headline_numbers_match_the_raw_rows(demo_warehouse: Path) -> None:
    period = Period(LAST_DAY - timedelta(days=DAYS - 1), LAST_DAY)
    data = _load(demo_warehouse, period)
    scores = _rows(demo_warehouse, "SELECT scorer, status, value FROM scores")
    usage = [v for s, st, v in scores if s == "tool_usage" and st == "scored"]
    grounded = [v for s, st, v in scores if s == "groundedness" and st == "scored"]
    canary = [v for s, st, v in scores if s == "tool_grounding" and st == "scored"]
    assert data.totals.turns == sum(_turns_by_day(demo_warehouse).values())
    assert data.stat("tool_usage").mean_value == pytest.approx(sum(usage) / len(usage))
    assert data.stat("groundedness").zero_share == pytest.approx(
        grounded.count(0.0) / len(grounded))
    assert data.stat("tool_grounding").mean_value == pytest.approx(sum(canary) / len(canary))
    assert data.stat("groundedness").errors == 1
    # The week before the demo has no turns: nothing to compare with.
    assert data.previous_totals.turns == 0 and data.stat("tool_usage", previous=True) is None


def test_tool_rows_match_the_calls(demo_warehouse: Path) -> None:
    calls: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for (turn_calls,) in _rows(demo_warehouse, "SELECT calls FROM turns"):
        for call in turn_calls:
            calls[call["name"]] += 1
            errors[call["name"]] += call["status"] == "error"
    data = _load(demo_warehouse, Period(LAST_DAY - timedelta(days=30), LAST_DAY))
    assert {r.tool: r.calls for r in data.tool_usage if r.calls} == dict(calls)
    assert {r.tool: (r.calls, r.errors) for r in data.tool_errors} == {
        t: (calls[t], errors[t]) for t in calls}
    assert sum(errors.values()) > 0, "the demo has failing tool calls"


def test_lowest_turns_come_in_score_order_with_their_why(demo_warehouse: Path) -> None:
    data = _load(demo_warehouse, Period(LAST_DAY - timedelta(days=DAYS - 1), LAST_DAY))
    worst = [min(t.usage if t.usage is not None else 10,
                 t.tractability if t.tractability is not None else 10) for t in data.lowest]
    assert worst == sorted(worst) and len(data.lowest) == 10
    assert data.lowest[0].turn_id == "hostile-turn"
    judged_min = _rows(demo_warehouse, "SELECT min(value) FROM scores WHERE status = 'scored' "
                                       "AND scorer IN ('tool_usage', 'tractability')")[0][0]
    assert worst[0] == judged_min
    assert all(any(s.scorer == "tool_usage" and s.explanation for s in t.scores)
               for t in data.lowest)


def test_agent_content_is_escaped_everywhere(demo_warehouse: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    build_report(demo_warehouse, out=out)
    page = out.read_text()
    for hostile in (HOSTILE, HOSTILE_AGENT, HOSTILE_TOOL):
        assert hostile not in page
    # Tables and turn cards show it as text.
    assert html.escape(HOSTILE) in page
    assert html.escape(HOSTILE_AGENT) in page
    assert html.escape(HOSTILE_TOOL) in page
    # The ingest error and the errored score, escaped too.
    assert "broken.jsonl" in page and "judge reply was &lt;script&gt;" in page


def test_page_is_self_contained(demo_warehouse: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    build_report(demo_warehouse, out=out)
    page = out.read_text()
    body = page.replace(plotly_js(), "")
    assert page.count(plotly_js()) == 1
    assert "<script src" not in body and "<link" not in body and "@import" not in body
    assert "http://" not in body and "https://" not in body
    assert "default-src 'none'" in page


def test_empty_warehouse_gives_notes_not_errors(tmp_path: Path) -> None:
    open_warehouse(tmp_path / "wh").close()
    summary = build_report(tmp_path / "wh", out=tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert summary.turns == 0 and "nothing to report" in page
    assert set(summary.empty_sections) >= {"headline", "tool-usage", "quadrant", "lowest",
                                           "trends", "tool-errors", "judge-cost"}


def test_turns_without_scores_say_no_judged_scores(tmp_path: Path) -> None:
    con = open_warehouse(tmp_path / "wh")
    load_turns(con, [make_turn(i) for i in range(5)])
    con.close()
    summary = build_report(tmp_path / "wh", out=tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert summary.turns > 0 and "headline" not in summary.empty_sections
    assert {"tool-usage", "quadrant", "lowest", "judge-cost"} <= set(summary.empty_sections)
    assert html.escape(NO_JUDGED) in page


@pytest.mark.parametrize(("bounds", "start", "end", "expected"), [
    ((date(2026, 1, 1), date(2026, 1, 9)), None, None, (date(2026, 1, 9), date(2026, 1, 9))),
    ((date(2026, 1, 1), date(2026, 1, 9)), date(2026, 1, 3), None,
     (date(2026, 1, 3), date(2026, 1, 9))),
    ((date(2026, 1, 1), date(2026, 1, 9)), date(2026, 2, 3), None,
     (date(2026, 2, 3), date(2026, 2, 3))),
    ((date(2026, 1, 1), date(2026, 1, 9)), None, date(2026, 1, 4),
     (date(2026, 1, 4), date(2026, 1, 4))),
    (None, None, date(2026, 1, 3), (date(2026, 1, 3), date(2026, 1, 3))),
    (None, date(2026, 1, 2), date(2026, 1, 8), (date(2026, 1, 2), date(2026, 1, 8))),
])
def test_resolve_period(bounds: tuple[date, date] | None, start: date | None,
                        end: date | None, expected: tuple[date, date]) -> None:
    period = resolve_period(bounds, start, end)
    assert (period.start, period.end) == expected
    assert period.previous().end.toordinal() == period.start.toordinal() - 1
    assert period.previous().days == period.days


def test_start_after_end_is_rejected() -> None:
    with pytest.raises(InvalidOption, match="after"):
        resolve_period(None, date(2026, 1, 5), date(2026, 1, 4))


def test_cli_writes_the_report_and_a_json_summary(demo_warehouse: Path, tmp_path: Path) -> None:
    import orjson

    from turnscore.cli.report import report_cli

    app = typer.Typer()
    app.command("report")(report_cli)
    app.command("other")(lambda: None)  # two commands, so "report" is a subcommand
    out = tmp_path / "cli.html"
    result = CliRunner().invoke(app, ["report", "--warehouse", str(demo_warehouse),
                                      "--out", str(out), "--start", str(DAY_BEFORE), "--json"])
    assert result.exit_code == 0, result.output
    summary = orjson.loads(result.stdout)
    assert summary["start"] == str(DAY_BEFORE) and summary["end"] == str(LAST_DAY)
    assert out.is_file() and summary["bytes"] == out.stat().st_size

    bad = CliRunner().invoke(app, ["report", "--warehouse", str(demo_warehouse), "--out",
                                   str(out), "--start", str(LAST_DAY), "--end", str(DAY_BEFORE)])
    assert bad.exit_code == 2 and "after" in bad.output


def test_long_data_quality_lists_are_cut_but_counted(tmp_path: Path) -> None:
    con = open_warehouse(tmp_path / "wh")
    load_turns(con, [make_turn(i) for i in range(3)])
    con.execute(
        "INSERT INTO ingest_errors SELECT 'run-1', 'bad.json', 'line ' || i, NULL, NULL,"
        " 'unreadable', now() + to_microseconds(i) FROM range(120) AS r(i)"
    )
    con.close()
    today = datetime.now(UTC).date()
    data = _load(tmp_path / "wh", Period(today, today))
    assert data.ingest_errors.total == 120
    assert [e.position for e in data.ingest_errors.rows] == [f"line {i}" for i in range(50)]
    build_report(tmp_path / "wh", out=tmp_path / "r.html", start=today, end=today)
    page = (tmp_path / "r.html").read_text()
    assert "Ingest errors (120)" in page and "Showing the first 50 of 120." in page
    assert "line 49" in page and "line 50<" not in page


def test_agents_are_named_as_the_views_name_them(tmp_path: Path) -> None:
    # Without an agent name a turn belongs to its service, in the report as in the views.
    from dataclasses import replace

    from turnscore.warehouse.query import create_temp_views

    names = [("agent-x", "svc-a"), (None, "svc-a"), (None, "svc-b"), (None, None)]
    turns = [replace(make_turn(i), agent_name=a, service_name=s).with_hash()
             for i, (a, s) in enumerate(names)]
    con = open_warehouse(tmp_path / "wh")
    load_turns(con, turns)
    create_temp_views(con)
    viewed = {a for (a,) in con.execute("SELECT DISTINCT agent FROM turns_scored").fetchall()}
    con.close()
    day = turns[0].started_at.date()
    data = _load(tmp_path / "wh", Period(day, day))
    assert viewed == {"agent-x", "svc-a", "svc-b", None}  # None: a turn without either
    assert data.totals.agents == len(viewed)


def test_turns_with_issues_are_counted_per_agent_convention_and_issue(tmp_path: Path) -> None:
    """The stacks whose turns assembly could not trust, in the data-quality section."""
    from dataclasses import replace

    turns = [make_turn(i) for i in range(4)]
    turns[0] = replace(turns[0], agent_name="blind", convention="openinference",
                       issues=("request_not_captured", "answer_not_captured")).with_hash()
    turns[1] = replace(turns[1], agent_name="blind", convention="openinference",
                       issues=("answer_not_captured",)).with_hash()
    con = open_warehouse(tmp_path / "wh")
    load_turns(con, turns)
    con.close()
    day = turns[0].started_at.date()
    data = _load(tmp_path / "wh", Period(day, day))
    assert [(r.agent, r.convention, r.issue, r.turns) for r in data.turn_issues] == [
        ("blind", "openinference", "answer_not_captured", 2),
        ("blind", "openinference", "request_not_captured", 1),
    ]
    build_report(tmp_path / "wh", out=tmp_path / "r.html", start=day, end=day)
    page = (tmp_path / "r.html").read_text()
    assert "Turns with issues" in page and "request_not_captured" in page
