"""`turnscore query` and `turnscore views` through typer's CliRunner on a real warehouse."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from tests.warehouse.turn_factory import load_turns, make_turn
from turnscore.cli.query import query_cli
from turnscore.cli.views import views_cli
from turnscore.scorers.base import Score
from turnscore.warehouse.db import DB_FILE, open_warehouse, quote_ident
from turnscore.warehouse.errors import QueryRejected
from turnscore.warehouse.publish import publish
from turnscore.warehouse.query import statement_for
from turnscore.warehouse.scores import ScoreRow, write_scores

app = typer.Typer()
app.command("query")(query_cli)
app.command("views")(views_cli)
runner = CliRunner()

HOSTILE_VIEW = 'x"; DROP TABLE scores; --'


@pytest.fixture
def wh(tmp_path: Path) -> Path:
    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(i, final_answer=f'answer "{i}", with, commas') for i in range(3)])
    write_scores(con, [ScoreRow(f"turn-{i:05d}", "s", "1", "h", Score.scored(
        float(i), details={"why": [i]})) for i in range(3)], "r1")
    con.execute(f"CREATE VIEW {quote_ident(HOSTILE_VIEW)} AS SELECT 'still data' AS v")
    con.close()
    return tmp_path


def _query(wh: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["query", *args, "--warehouse", str(wh)])
    return result.exit_code, result.stdout, result.stderr


def _scores_intact(wh: Path) -> bool:
    con = open_warehouse(wh)
    try:
        return con.execute("SELECT count(*) FROM scores").fetchall() == [(3,)]
    finally:
        con.close()


def test_json_is_one_array_of_objects(wh: Path) -> None:
    code, out, _ = _query(wh, "SELECT turn_id, tools, started_at, final_answer FROM turns "
                              "ORDER BY turn_id", "--format", "json")
    assert code == 0
    rows = orjson.loads(out)
    assert isinstance(rows, list) and len(rows) == 3
    assert rows[0]["turn_id"] == "turn-00000"
    assert rows[0]["tools"][0]["name"] == "get_weather"
    assert rows[0]["started_at"].startswith("2026-01-30T02:00:00")
    assert rows[2]["final_answer"] == 'answer "2", with, commas'


def test_jsonl_csv_and_table(wh: Path) -> None:
    code, out, _ = _query(wh, "scores", "--format", "jsonl")
    assert code == 0
    lines = [orjson.loads(line) for line in out.splitlines()]
    assert sorted(r["value"] for r in lines) == [0.0, 1.0, 2.0]
    code, out, _ = _query(wh, "SELECT turn_id, final_answer, tools FROM turns ORDER BY 1",
                          "--format", "csv")
    import csv
    rows = list(csv.reader(out.splitlines()))
    assert rows[0] == ["turn_id", "final_answer", "tools"]
    assert rows[1][1] == 'answer "0", with, commas'
    assert orjson.loads(rows[1][2])[0]["name"] == "get_weather"
    code, out, _ = _query(wh, "SELECT count(*) AS n FROM scores")
    assert code == 0 and "n" in out and "3" in out


def test_parquet_needs_out_and_writes_it(wh: Path, tmp_path: Path) -> None:
    code, _, err = _query(wh, "scores", "--format", "parquet")
    assert code == 2 and "--out" in err
    out = tmp_path / "s.parquet"
    code, _, _ = _query(wh, "scores", "--format", "parquet", "--out", str(out))
    assert code == 0 and pq.read_table(out).num_rows == 3


def test_a_hostile_view_name_and_file_name_stay_data(wh: Path, tmp_path: Path) -> None:
    out = tmp_path / "o'; DROP TABLE turns; --.json"
    code, _, _ = _query(wh, HOSTILE_VIEW, "--format", "json", "--out", str(out))
    assert code == 0
    assert orjson.loads(out.read_bytes()) == [{"v": "still data"}]
    assert _scores_intact(wh)


@pytest.mark.parametrize("sql", [
    "DELETE FROM scores", "DROP TABLE scores", "SELECT 1; DELETE FROM scores",
    "COPY scores TO 'leak.csv'", "ATTACH 'other.duckdb'", "INSTALL httpfs",
    "CREATE TABLE t AS SELECT 1",
    "EXPLAIN ANALYZE COPY scores TO 'leak.csv'",
    "/* x */ explain analyse (format json) COPY scores TO 'leak.csv'",
    "EXPLAIN ANALYZE DELETE FROM scores",
])
def test_anything_but_one_query_is_rejected(wh: Path, sql: str) -> None:
    code, out, err = _query(wh, sql)
    assert code == 2 and out == ""
    assert "read-only" in err or "one statement" in err
    assert _scores_intact(wh)
    assert not (Path.cwd() / "leak.csv").exists()


def test_explain_of_a_query_runs(wh: Path) -> None:
    code, out, _ = _query(wh, "EXPLAIN ANALYZE SELECT count(*) FROM scores")
    assert code == 0 and out


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_csv('/etc/hostname')",
    "SELECT * FROM read_parquet('turns/*/*.parquet')",
])
def test_files_outside_the_warehouse_are_not_read(wh: Path, sql: str) -> None:
    code, out, err = _query(wh, sql)
    assert code == 2 and out == ""
    assert "disabled" in err


def test_not_sql_and_not_a_view(wh: Path) -> None:
    code, _, err = _query(wh, "no_such_view")
    assert code == 2 and "not a view name and not valid SQL" in err


def test_missing_warehouse(tmp_path: Path) -> None:
    code, _, err = _query(tmp_path / "nothing", "scores")
    assert code == 1 and "no warehouse" in err


def test_while_a_writer_holds_the_warehouse_the_snapshot_is_read(wh: Path) -> None:
    publish(wh)
    hold = ("import sys, time, duckdb; c = duckdb.connect(sys.argv[1]); "
            "c.execute('DELETE FROM scores'); print('open', flush=True); time.sleep(10)")
    proc = subprocess.Popen([sys.executable, "-c", hold, str(wh / DB_FILE)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
        code, out, err = _query(wh, "SELECT count(*) AS n FROM scores", "--format", "json")
        assert code == 0 and orjson.loads(out) == [{"n": 3}]
        assert "snapshot" in err
    finally:
        proc.kill()
        proc.wait()


def test_views_lists_name_grain_and_columns() -> None:
    result = runner.invoke(app, ["views", "--json"])
    assert result.exit_code == 0
    views = orjson.loads(result.stdout)
    by_name = {v["name"]: v for v in views}
    assert "turn_scores" in by_name
    assert all(v["grain"] and v["columns"] for v in views)
    assert by_name["turn_scores"]["columns"][0]["name"] == "turn_id"
    table = runner.invoke(app, ["views"])
    assert table.exit_code == 0 and "turn_scores" in table.stdout


def test_a_shipped_view_runs_by_name_before_anything_was_published(wh: Path) -> None:
    assert not (wh / "published.duckdb").exists()
    code, out, _ = _query(wh, "turn_scores", "--format", "json")
    assert code == 0
    rows = orjson.loads(out)
    assert sorted(r["turn_id"] for r in rows) == ["turn-00000", "turn-00001", "turn-00002"]


def test_json_keeps_numbers_numbers(wh: Path) -> None:
    """SUM over integers is DECIMAL(38,0) in DuckDB; JSON readers want a number, not "3"."""
    code, out, _ = _query(wh, "SELECT sum(llm_calls) AS n, 1.25::DECIMAL(10,2) AS d "
                              "FROM turns", "--format", "json")
    assert code == 0
    [row] = orjson.loads(out)
    assert isinstance(row["n"], int) and row["d"] == 1.25


def test_published_reads_the_snapshot_as_of_the_last_run(wh: Path) -> None:
    code, _, err = _query(wh, "turns_scored", "--published")
    assert code == 1 and "no published snapshot" in err and "--published" in err
    publish(wh)
    con = open_warehouse(wh)
    con.execute("DELETE FROM scores WHERE turn_id = 'turn-00000'")
    con.close()
    code, out, _ = _query(wh, "SELECT count(*) AS n FROM scores", "--format", "json",
                          "--published")
    assert code == 0 and orjson.loads(out) == [{"n": 3}]
    code, out, _ = _query(wh, "SELECT count(*) AS n FROM scores", "--format", "json")
    assert code == 0 and orjson.loads(out) == [{"n": 2}]
    # In the snapshot the view is a materialised table, read as such.
    code, out, _ = _query(wh, "SELECT table_type FROM information_schema.tables "
                              "WHERE table_name = 'turns_scored'", "--format", "json",
                          "--published")
    assert code == 0 and orjson.loads(out) == [{"table_type": "BASE TABLE"}]


@pytest.mark.parametrize(("value", "shown", "exact"), [
    ("18.0 / 7", "2.5714", 18.0 / 7), ("0.5", "0.5", 0.5), ("3.0", "3.0", 3.0),
    ("0.0001234", "0.000123", 0.0001234), ("123456.789", "123456.789", 123456.789),
    ("-1.0 / 3", "-0.3333", -1.0 / 3),
])
def test_the_table_rounds_floats_and_csv_keeps_them(
    wh: Path, value: str, shown: str, exact: float
) -> None:
    sql = f"SELECT CAST({value} AS DOUBLE) AS x"
    code, out, _ = _query(wh, sql)
    assert code == 0 and shown in out.split()
    code, out, _ = _query(wh, sql, "--format", "csv")
    assert code == 0 and float(out.split()[1]) == exact


@pytest.mark.parametrize("sql", [
    "WITH x AS (DELETE FROM scores RETURNING *) SELECT * FROM x",
    "WITH x AS (INSERT INTO scores SELECT * FROM scores RETURNING turn_id) SELECT 1",
    "with a as (select 1), x as materialized (update scores set value = 0 returning value) "
    "select * from x",
    "SELECT * FROM turns WHERE turn_id IN "
    "(WITH x AS (DELETE FROM turns RETURNING turn_id) SELECT turn_id FROM x)",
    "EXPLAIN WITH x AS (DELETE FROM scores RETURNING *) SELECT * FROM x",
])
def test_a_data_modifying_cte_is_refused_by_the_statement_check(wh: Path, sql: str) -> None:
    """The check itself refuses it (on a writable connection too), not only the read-only
    connection when it runs."""
    con = open_warehouse(wh)
    try:
        with pytest.raises(QueryRejected, match=r"read-only.*(DELETE|INSERT|UPDATE)"):
            statement_for(con, sql)
        assert con.execute("SELECT count(*) FROM scores").fetchall() == [(3,)]
    finally:
        con.close()
    code, out, err = _query(wh, sql)
    assert code == 2 and out == "" and "data-modifying WITH" in err


@pytest.mark.parametrize("sql", [
    "WITH x AS (SELECT turn_id FROM turns) SELECT count(*) FROM x",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
    "SELECT * FROM r",
    "SELECT 'DELETE FROM scores' AS text",
    "DESCRIBE scores",
])
def test_reading_ctes_and_dml_words_in_strings_still_run(wh: Path, sql: str) -> None:
    code, out, err = _query(wh, sql, "--format", "json")
    assert code == 0, err
    assert orjson.loads(out)


CPU_BOUND = "SELECT sum(hash(range)) FROM range(1000000000000)"


def test_a_query_past_its_timeout_is_stopped(wh: Path) -> None:
    started = time.monotonic()
    code, out, err = _query(wh, CPU_BOUND, "--timeout", "0.5")
    assert code == 1 and out == ""
    assert "stopped after 0.5 s" in err and "--timeout" in err
    assert time.monotonic() - started < 20


def test_the_timeout_comes_from_the_environment_or_the_config(
        wh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "turnscore.toml"
    config.write_text("[query]\ntimeout_s = 0.4\n")
    code, _, err = _query(wh, CPU_BOUND, "--config", str(config))
    assert code == 1 and "stopped after 0.4 s" in err
    result = runner.invoke(app, ["query", CPU_BOUND, "--warehouse", str(wh)],
                           env={"TURNSCORE_QUERY_TIMEOUT": "0.3"})
    assert result.exit_code == 1 and "stopped after 0.3 s" in result.stderr


def test_a_query_past_its_memory_limit_fails_with_the_limit_named(
        wh: Path, tmp_path: Path) -> None:
    heavy = "SELECT range % 3 AS k, list(range) FROM range(20000000) GROUP BY k"
    code, out, err = _query(wh, heavy, "--memory-limit", "20MB")
    assert code == 1 and out == ""
    assert "more memory than its limit, 20MB" in err
    config = tmp_path / "turnscore.toml"
    config.write_text('[query]\nmemory_limit = "20MB"\n')
    code, _, err = _query(wh, heavy, "--config", str(config))
    assert code == 1 and "limit, 20MB" in err


def test_bad_limits_are_usage_errors(wh: Path, tmp_path: Path) -> None:
    code, _, err = _query(wh, "SELECT 1", "--memory-limit", "lots")
    assert code == 2 and "memory limit 'lots'" in err
    config = tmp_path / "turnscore.toml"
    config.write_text('[query]\ntimeout_s = "soon"\n')
    code, _, err = _query(wh, "SELECT 1", "--config", str(config))
    assert code == 2 and "timeout_s must be a positive number" in err


def test_an_output_file_that_cannot_be_written_is_one_line_and_exit_1(wh: Path,
                                                                     tmp_path: Path) -> None:
    for fmt in ("csv", "parquet"):
        code, _, err = _query(wh, "turns", "--format", fmt, "--out",
                              str(tmp_path / "no-such-folder" / f"x.{fmt}"))
        assert code == 1 and "cannot write" in err and "Traceback" not in err, err
    assert not list((tmp_path).glob("**/.x.*"))


def test_a_misspelt_view_name_lists_the_views(wh: Path) -> None:
    code, _, err = _query(wh, "tool_error")
    assert code == 2 and "no view or table named 'tool_error'" in err
    assert "tool_errors" in err and "turns_scored" in err
