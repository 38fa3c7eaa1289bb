"""Every view runs on a real warehouse; the main ones return known rows.

The warehouse is made by `open_warehouse` (all migrations), filled with fixture turns and
score rows, and the session time zone is set away from UTC so that a view using the
local date instead of the UTC one gets a wrong `day`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from turnscore.ingest.assemble import ISSUES
from turnscore.ingest.turn import Call, Tool, Turn, turns_to_arrow
from turnscore.queries import (
    AGENT_MACRO,
    DESIGN_SCORERS,
    View,
    ViewHeaderError,
    load_views,
    parse_view,
    turn_scores_view,
)
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.publish import PUBLISHED_DB, PUBLISHED_DIR, publish, refresh_views
from turnscore.warehouse.query import create_temp_views, open_for_reading

UTC_5 = datetime(2026, 1, 5, 23, 30, tzinfo=UTC)


def _turn(turn_id: str, started: datetime, calls: tuple[Call, ...] = (),
          agent: str | None = "weather", service: str | None = "svc") -> Turn:
    return Turn(turn_id=turn_id, trace_id=turn_id, conversation_id=turn_id, turn_index=0,
                started_at=started, ended_at=started, duration_ms=1.0, status="ok",
                request=f"request {turn_id}", tools=(Tool("weather"), Tool("search")),
                tools_source="declared", calls=calls, final_answer="answer", llm_calls=1,
                agent_name=agent, service_name=service, content_hash=f"h-{turn_id}")


TURNS = (
    # 23:30 UTC on the 5th: still the 5th in New York.
    _turn("t1", UTC_5, (Call("weather", status="ok", duration_ms=100.0),
                        Call("weather", status="error", error="timeout", duration_ms=300.0))),
    _turn("t2", datetime(2026, 1, 5, 10, 0, tzinfo=UTC), (Call("search", duration_ms=50.0),)),
    _turn("t3", datetime(2026, 1, 6, 12, 0, tzinfo=UTC), agent=None, service="booking-svc"),
    # 00:30 UTC on the 6th: the 5th in New York, the 6th in UTC.
    _turn("t4", datetime(2026, 1, 6, 0, 30, tzinfo=UTC),
          (Call("weather", status="no_result"),)),
)

# (turn, scorer, status, value, explanation)
SCORES = (
    ("t1", "tool_grounding", "scored", 1.0, None),
    ("t2", "tool_grounding", "scored", 0.0, None),
    ("t4", "tool_grounding", "inconclusive", None, None),
    ("t1", "answer_correctness", "scored", 1.0, None),
    ("t2", "answer_correctness", "inconclusive", None, None),
    ("t1", "tool_call_accuracy", "scored", 0.0, None),
    ("t1", "groundedness", "scored", 0.0, None),
    ("t2", "groundedness", "scored", 1.0, None),
    ("t3", "groundedness", "error", None, None),
    ("t4", "groundedness", "scored", 1.0, None),
    ("t1", "call_validity", "scored", 0.5, None),
    ("t3", "call_validity", "not_run", None, None),
    ("t1", "tool_usage", "scored", 7.0, "good choice"),
    ("t2", "tool_usage", "error", None, None),
)


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = open_warehouse(tmp_path)
    con.register("_turns", turns_to_arrow(TURNS))
    con.execute("INSERT INTO turns SELECT * FROM _turns")
    con.unregister("_turns")
    for turn_id, scorer, status, value, explanation in SCORES:
        # t4's groundedness row was computed on an older version of the turn.
        content_hash = "old" if (turn_id, scorer) == ("t4", "groundedness") else f"h-{turn_id}"
        con.execute(
            "INSERT INTO scores (turn_id, scorer, scorer_version, status, value, explanation, "
            "content_hash, run_id, scored_at) VALUES (?, ?, '1', ?, ?, ?, ?, 'run', now())",
            [turn_id, scorer, status, value, explanation, content_hash])
    for view in load_views():
        con.execute(view.create_sql())
    con.execute("SET TimeZone = 'America/New_York'")
    yield con
    con.close()


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, object]]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


@pytest.mark.parametrize("view", load_views(), ids=lambda v: v.name)
def test_every_view_runs_and_has_its_declared_columns(con: duckdb.DuckDBPyConnection,
                                                       view: View) -> None:
    cur = con.execute(f'SELECT * FROM "{view.name}"')
    actual = [d[0] for d in cur.description]
    cur.fetchall()
    declared = [c.name for c in view.columns]
    if "*" in declared:
        fixed = [c for c in declared if c != "*"]
        assert actual[: len(fixed)] == fixed
    else:
        assert actual == declared


def test_views_come_after_the_views_they_read() -> None:
    names = [v.name for v in load_views()]
    assert names[0] == "turn_scores"
    assert names.index("tool_calls") < names.index("tool_errors")
    assert names.index("turn_scores") < names.index("turns_scored")


def test_publish_refresh_creates_every_shipped_view(tmp_path: Path) -> None:
    con = open_warehouse(tmp_path)
    created = refresh_views(con)
    assert set(created) == {v.name for v in load_views()}
    con.close()


def test_the_snapshot_holds_each_view_as_a_table_with_the_same_columns_and_rows(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    publish(tmp_path, con=con)
    snap = duckdb.connect(str(tmp_path / PUBLISHED_DB), read_only=True)
    snap.execute("SET TimeZone = 'America/New_York'")  # as the fixture's, for equal reprs
    tables = {name for (name,) in snap.execute("SELECT table_name FROM duckdb_tables()")
              .fetchall()}
    for view in load_views():
        assert view.name in tables
        describe = f'SELECT column_name, column_type FROM (DESCRIBE "{view.name}")'
        assert snap.execute(describe).fetchall() == con.execute(describe).fetchall()
        select = f'SELECT * FROM "{view.name}"'
        live = con.execute(select).fetchall()
        assert sorted(snap.execute(select).fetchall(), key=repr) == sorted(live, key=repr)
        exported = pq.read_table(tmp_path / PUBLISHED_DIR / f"{view.name}.parquet")
        assert exported.num_rows == len(live)
        assert exported.column_names == [d[0] for d in con.execute(select).description]
    snap.close()


def test_grounding_and_correctness(con: duckdb.DuckDBPyConnection) -> None:
    rows = _rows(con, "SELECT * FROM grounding_and_correctness ORDER BY agent, day")
    assert rows == [
        {"agent": "booking-svc", "day": date(2026, 1, 6), "turns": 1,
         "canary_scored": 0, "canary_inconclusive": 0, "canary_pass_rate": None,
         "correctness_scored": 0, "correctness_inconclusive": 0, "correctness_rate": None,
         "call_accuracy_scored": 0, "call_accuracy_inconclusive": 0, "call_accuracy_rate": None,
         "groundedness_scored": 0, "groundedness_inconclusive": 0, "hallucination_rate": None},
        {"agent": "weather", "day": date(2026, 1, 5), "turns": 2,
         "canary_scored": 2, "canary_inconclusive": 0, "canary_pass_rate": 0.5,
         "correctness_scored": 1, "correctness_inconclusive": 1, "correctness_rate": 1.0,
         "call_accuracy_scored": 1, "call_accuracy_inconclusive": 0, "call_accuracy_rate": 0.0,
         "groundedness_scored": 2, "groundedness_inconclusive": 0, "hallucination_rate": 0.5},
        {"agent": "weather", "day": date(2026, 1, 6), "turns": 1,
         "canary_scored": 0, "canary_inconclusive": 1, "canary_pass_rate": None,
         "correctness_scored": 0, "correctness_inconclusive": 0, "correctness_rate": None,
         "call_accuracy_scored": 0, "call_accuracy_inconclusive": 0, "call_accuracy_rate": None,
         "groundedness_scored": 1, "groundedness_inconclusive": 0, "hallucination_rate": 0.0},
    ]


def test_tool_calls(con: duckdb.DuckDBPyConnection) -> None:
    rows = _rows(con, "SELECT turn_id, agent, day, call_index, tool, status, error, duration_ms "
                      "FROM tool_calls ORDER BY turn_id, call_index")
    assert rows == [
        {"turn_id": "t1", "agent": "weather", "day": date(2026, 1, 5), "call_index": 0,
         "tool": "weather", "status": "ok", "error": None, "duration_ms": 100.0},
        {"turn_id": "t1", "agent": "weather", "day": date(2026, 1, 5), "call_index": 1,
         "tool": "weather", "status": "error", "error": "timeout", "duration_ms": 300.0},
        {"turn_id": "t2", "agent": "weather", "day": date(2026, 1, 5), "call_index": 0,
         "tool": "search", "status": "ok", "error": None, "duration_ms": 50.0},
        {"turn_id": "t4", "agent": "weather", "day": date(2026, 1, 6), "call_index": 0,
         "tool": "weather", "status": "no_result", "error": None, "duration_ms": None},
    ]


def test_tool_errors(con: duckdb.DuckDBPyConnection) -> None:
    rows = _rows(con, "SELECT * FROM tool_errors ORDER BY tool")
    assert rows[0] == {"tool": "search", "calls": 1, "turns": 1, "errors": 0, "error_rate": 0.0,
                       "no_result": 0, "p50_ms": 50.0, "p95_ms": 50.0}
    weather = rows[1]
    assert {k: weather[k] for k in ("tool", "calls", "turns", "errors", "no_result", "p50_ms")} \
        == {"tool": "weather", "calls": 3, "turns": 2, "errors": 1, "no_result": 1, "p50_ms": 200.0}
    assert weather["error_rate"] == pytest.approx(1 / 3)
    assert weather["p95_ms"] == pytest.approx(290.0)


def test_turn_quality_counts_each_issue_per_agent_and_convention(
        con: duckdb.DuckDBPyConnection) -> None:
    """A stack whose content was not captured shows up by agent and convention, one column
    per issue `assemble` can raise."""
    untrusted = (
        replace(TURNS[0], turn_id="q1", convention="openinference", final_answer=None,
                status="incomplete", issues=("answer_not_captured",)),
        replace(TURNS[0], turn_id="q2", convention="openinference", tools_source="none",
                issues=("request_not_captured", "call_content_not_captured")),
    )
    con.register("_more", turns_to_arrow(untrusted))
    con.execute("INSERT INTO turns SELECT * FROM _more")
    rows = _rows(con, "SELECT * FROM turn_quality")
    assert [(r["agent"], r["convention"], r["turns"], r["with_issues"]) for r in rows] == [
        ("weather", "openinference", 2, 2), ("booking-svc", "", 1, 0), ("weather", "", 3, 0)]
    first = rows[0]
    assert {k: first[k] for k in ("ok", "errors", "incomplete", "no_answer", "no_tools",
                                  *ISSUES)} == {
        "ok": 1, "errors": 0, "incomplete": 1, "no_answer": 1, "no_tools": 1,
        "request_not_captured": 1, "answer_not_captured": 1, "model_call_without_content": 0,
        "unreconciled_calls": 0, "call_content_not_captured": 1}


def test_turn_quality_has_a_column_for_every_issue() -> None:
    """The view spells the issue names; `assemble.ISSUES` is where they are defined."""
    view = next(v for v in load_views() if v.name == "turn_quality")
    assert set(ISSUES) <= {c.name for c in view.columns}


def test_daily_trends(con: duckdb.DuckDBPyConnection) -> None:
    rows = _rows(con, "SELECT * FROM daily_trends WHERE scorer = 'groundedness' ORDER BY day")
    assert rows == [
        {"day": date(2026, 1, 5), "scorer": "groundedness", "turns": 2, "mean_value": 0.5,
         "scored": 2, "inconclusive": 0, "not_run": 0, "errors": 0},
        {"day": date(2026, 1, 6), "scorer": "groundedness", "turns": 2, "mean_value": 1.0,
         "scored": 1, "inconclusive": 0, "not_run": 0, "errors": 1},
    ]


def test_score_coverage(con: duckdb.DuckDBPyConnection) -> None:
    rows = {r["scorer"]: r for r in _rows(con, "SELECT * FROM score_coverage")}
    assert set(rows) == {s[1] for s in SCORES}
    assert rows["groundedness"] == {
        "scorer": "groundedness", "turns": 4, "scored": 3, "inconclusive": 0, "not_run": 0,
        "errors": 1, "missing": 0, "disabled": 0, "stale": 1, "scored_share": 0.75,
        "inconclusive_share": 0.0, "not_run_share": 0.0, "error_share": 0.25}
    assert rows["tool_grounding"]["missing"] == 1
    assert rows["call_validity"]["not_run"] == 1


def test_turns_scored(con: duckdb.DuckDBPyConnection) -> None:
    rows = {r["turn_id"]: r for r in _rows(con, "SELECT * FROM turns_scored")}
    assert set(rows) == {"t1", "t2", "t3", "t4"}
    t1 = rows["t1"]
    assert (t1["day"], t1["calls"], t1["call_errors"], t1["tools_available"]) == \
        (date(2026, 1, 5), 2, 1, 2)
    assert (t1["tool_grounding"], t1["call_validity"], t1["tool_usage"]) == (1.0, 0.5, 7.0)
    assert t1["tool_usage_explanation"] == "good choice"
    assert t1["tractability"] is None
    # Values show only for scored rows: an inconclusive or errored row is NULL.
    assert rows["t2"]["answer_correctness"] is None
    assert rows["t2"]["tool_usage"] is None
    assert rows["t3"]["agent"] == "booking-svc"
    assert rows["t4"]["day"] == date(2026, 1, 6)


@dataclass(frozen=True)
class _Scorer:
    name: str
    kind: str


def test_turn_scores_has_design_scorers_and_registered_extras_even_hostile_names(
        tmp_path: Path) -> None:
    hostile = 'x"; DROP TABLE turns; --'
    view = turn_scores_view([_Scorer("tool_grounding", "code"), _Scorer(hostile, "judge")])
    con = open_warehouse(tmp_path)
    con.execute("INSERT INTO scores (turn_id, scorer, scorer_version, status, value, "
                "explanation, content_hash, run_id, scored_at) "
                "VALUES ('t', ?, '1', 'scored', 3.0, 'why', 'h', 'r', now())", [hostile])
    con.execute(view.create_sql())
    cur = con.execute("SELECT * FROM turn_scores")
    names = [d[0] for d in cur.description]
    row = dict(zip(names, cur.fetchone() or (), strict=True))
    assert names[: 1 + len(DESIGN_SCORERS) + 2] == [
        "turn_id", "tool_usage", "tool_usage_explanation", "tractability",
        "tractability_explanation", "tool_grounding", "answer_correctness",
        "tool_call_accuracy", "groundedness", "call_validity"]
    assert row[hostile] == 3.0 and row[hostile + "_explanation"] == "why"
    assert con.execute("SELECT count(*) FROM turns").fetchone() == (0,)
    con.close()


@pytest.mark.parametrize("text, message", [
    ("SELECT 1", "no '-- grain"),
    ("-- grain: x\nSELECT 1", "lists no columns"),
    ("-- grain: x\n-- columns:\n--   a\nSELECT 1", ":3: expected"),
])
def test_malformed_headers_name_file_and_line(text: str, message: str) -> None:
    with pytest.raises(ViewHeaderError, match=message):
        parse_view("bad", text, Path("queries/bad.sql"))


def test_header_parsing() -> None:
    view = parse_view("v", "-- grain: one row per x\n-- columns:\n--   a   the a\n"
                           "--   b_2  the b, with more words\nSELECT 1 AS a, 2 AS b_2")
    assert view.grain == "one row per x"
    assert [(c.name, c.description) for c in view.columns] == [
        ("a", "the a"), ("b_2", "the b, with more words")]


# The agent rule spelled out: coalesce over agent_name and service_name (any aliases,
# spacing, case, either order), or a CASE on agent_name IS NULL falling back to the service.
_AGENT_RULE = re.compile(
    r"coalesce\s*\(\s*(\w+\.)?\"?(agent_name|service_name)\"?\s*,\s*(\w+\.)?\"?"
    r"(agent_name|service_name)\b"
    r"|agent_name\s+is\s+null\s+then\s+(\w+\.)?service_name",
    re.IGNORECASE)
_PACKAGE = Path(__file__).resolve().parents[2]


def test_the_agent_rule_is_spelled_once_in_the_package() -> None:
    """Every view, runner and report query says `turn_agent(...)`; only the macro's own
    definition spells the rule (a copy that comes back would drift from it)."""
    found = []
    for folder in ("queries", "warehouse", "scorers", "ingest", "cli", "demo"):
        for path in sorted((_PACKAGE / folder).rglob("*")):
            if path.suffix not in {".sql", ".py"} or "__pycache__" in path.parts:
                continue
            for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
                if _AGENT_RULE.search(line):
                    found.append(f"{path.relative_to(_PACKAGE)}:{number}: {line.strip()}")
    assert len(found) == 1, found
    assert found[0].startswith("warehouse/db.py:") and AGENT_MACRO.body in found[0], found


def test_the_agent_macro_is_the_name_else_the_service(tmp_path: Path) -> None:
    con = open_warehouse(tmp_path)
    rows = con.execute("SELECT turn_agent(a, s) FROM (VALUES ('bot', 'svc'), (NULL, 'svc'), "
                       "(NULL, NULL)) AS v(a, s)").fetchall()
    assert rows == [("bot",), ("svc",), (None,)]
    con.close()


def test_a_read_only_connection_gets_the_installed_macro(tmp_path: Path) -> None:
    """A warehouse last written by a turnscore without the macro still answers the views
    and the report through `open_for_reading` (TEMP macros)."""
    con = open_warehouse(tmp_path)
    con.execute(f"DROP MACRO {AGENT_MACRO.name}")
    con.close()
    reader, _, _ = open_for_reading(tmp_path)
    assert reader.execute("SELECT turn_agent(NULL, 'svc')").fetchall() == [("svc",)]
    create_temp_views(reader)
    assert reader.execute("SELECT count(*) FROM tool_calls").fetchall() == [(0,)]
    reader.close()


def test_views_with_a_declared_order_return_rows_in_it(con: duckdb.DuckDBPyConnection) -> None:
    """Aggregates come sorted as declared (the header's `-- order:` line), not in hash
    order: the same rows in the same order on every read."""
    ordered = [v for v in load_views() if v.order]
    assert {v.name for v in ordered} >= {"daily_trends", "grounding_and_correctness",
                                         "judge_cost", "score_coverage", "tool_errors",
                                         "tool_usage_by_agent", "tool_usage_by_tool",
                                         "tractability_by_kind", "usage_vs_tractability"}
    for view in ordered:
        rows = con.execute(f'SELECT * FROM "{view.name}"').fetchall()
        again = con.execute(f'SELECT * FROM (SELECT * FROM "{view.name}") '
                            f"ORDER BY {view.order}").fetchall()
        assert rows == again, view.name
    assert [(r["day"], r["agent"]) for r in _rows(con, "SELECT * FROM grounding_and_correctness")] \
        == [(date(2026, 1, 5), "weather"), (date(2026, 1, 6), "booking-svc"),
            (date(2026, 1, 6), "weather")]
    assert [r["tool"] for r in _rows(con, "SELECT * FROM tool_errors")] == ["weather", "search"]
    assert [r["scorer"] for r in _rows(con, "SELECT * FROM score_coverage")] == sorted(
        {s[1] for s in SCORES})
