"""The migrated schema, the migrations runner, identifier quoting and the writer lock."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from turnscore.ingest.schema import TURN_FIELDS
from turnscore.warehouse.db import (
    BULK_CHECKPOINT_THRESHOLD,
    DB_FILE,
    bulk_writes,
    migrations,
    open_readonly,
    open_warehouse,
    quote_ident,
    transaction,
    writer_lock,
)
from turnscore.warehouse.ddl import ADDED_COLUMNS, columns_of, duckdb_type, turns_ddl
from turnscore.warehouse.errors import MigrationError, WarehouseBusy, WarehouseMissing
from turnscore.warehouse.label_schema import LABEL_COLUMNS
from turnscore.warehouse.score_schema import HISTORY_FIELDS, JSON_COLUMNS, SCORE_FIELDS

TS = "TIMESTAMP WITH TIME ZONE"
# The contracts' tables are checked against their field tuples: a drift fails here, and
# the fix is a new migration (the old ones are history).
SCORE_COLUMNS = columns_of(SCORE_FIELDS, JSON_COLUMNS)
# (name, type, nullable) per table, in column order: the schema other code relies on.
EXPECTED: dict[str, list[tuple[str, str, bool]]] = {
    "score_queue": [("turn_id", "VARCHAR", False), ("reason", "VARCHAR", False),
                    ("enqueued_at", TS, False)],
    "score_queue_scope": [("scorer", "VARCHAR", False), ("version", "VARCHAR", False),
                          ("labels", "BOOLEAN", False), ("sample_bucket", "BIGINT", True)],
    "score_queue_off": [("scorer", "VARCHAR", False), ("agent", "VARCHAR", True)],
    "_migrations": [("name", "VARCHAR", False), ("applied_at", TS, False)],
    "_commits": [("run_id", "VARCHAR", False), ("committed_at", TS, False)],
    "turns": [],  # derived from the contract in `_expected`
    "labels": columns_of(LABEL_COLUMNS),
    "scores": SCORE_COLUMNS,
    "scores_history": columns_of(HISTORY_FIELDS, JSON_COLUMNS),
    "request_norms": [
        ("turn_id", "VARCHAR", False),
        ("content_hash", "VARCHAR", False),
        ("norm_md5", "UHUGEINT", False),
    ],
    "runs": [
        ("run_id", "VARCHAR", False),
        ("kind", "VARCHAR", False),
        ("started_at", TS, False),
        ("ended_at", TS, True),
        ("outcome", "VARCHAR", True),
        ("summary", "JSON", True),
        ("config", "JSON", True),
        ("error", "VARCHAR", True),
        ("judge_batches", "VARCHAR[]", True),
    ],
    "ingest_errors": [
        ("run_id", "VARCHAR", False),
        ("source", "VARCHAR", False),
        ("position", "VARCHAR", True),
        ("trace_id", "VARCHAR", True),
        ("span_id", "VARCHAR", True),
        ("message", "VARCHAR", False),
        ("recorded_at", TS, False),
    ],
    "ingested_files": [
        ("file_key", "VARCHAR", False),
        ("path", "VARCHAR", False),
        ("bytes", "BIGINT", False),
        ("spans", "BIGINT", False),
        ("logs", "BIGINT", False),
        ("run_id", "VARCHAR", False),
        ("ingested_at", TS, False),
    ],
    "judge_cache": [
        ("cache_key", "VARCHAR", False),
        ("scorer", "VARCHAR", False),
        ("model", "VARCHAR", False),
        ("prompt_version", "VARCHAR", False),
        ("reply", "JSON", False),
        ("input_tokens", "BIGINT", True),
        ("output_tokens", "BIGINT", True),
        ("created_at", TS, False),
    ],
    "judge_batches": [
        ("batch_key", "VARCHAR", False),
        ("scorer", "VARCHAR", False),
        ("model", "VARCHAR", False),
        ("base_url", "VARCHAR", False),
        ("state", "VARCHAR", False),
        ("batch_id", "VARCHAR", True),
        ("input_file_id", "VARCHAR", True),
        ("status", "VARCHAR", True),
        ("requests", "INTEGER", False),
        ("run_id", "VARCHAR", False),
        ("submitted_at", TS, False),
        ("collected_at", TS, True),
        ("collected_run_id", "VARCHAR", True),
        ("turnaround_ms", "DOUBLE", True),
        ("error", "VARCHAR", True),
    ],
    "judge_batch_items": [
        ("batch_key", "VARCHAR", False),
        ("custom_id", "VARCHAR", False),
        ("turn_id", "VARCHAR", False),
        ("scorer", "VARCHAR", False),
        ("content_hash", "VARCHAR", False),
        ("cache_key", "VARCHAR", False),
        ("reply", "VARCHAR", True),
        ("error", "VARCHAR", True),
        ("used_run_id", "VARCHAR", True),
    ],
}
PRIMARY_KEYS = {
    "score_queue_scope": ["scorer"],
    "turns": ["turn_id"],
    "labels": ["case_id"],
    "scores": ["turn_id", "scorer"],
    "runs": ["run_id"],
    "ingested_files": ["file_key"],
    "judge_cache": ["cache_key"],
    "request_norms": ["turn_id"],
    "judge_batches": ["batch_key"],
    "judge_batch_items": ["batch_key", "custom_id"],
    "_migrations": ["name"],
}


def _expected(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str, bool]]:
    if table != "turns":
        return EXPECTED[table]
    # DuckDB's own spelling of each contract type (it quotes struct fields only when needed).
    spelled = [
        con.execute(f"SELECT typeof(NULL::{duckdb_type(f.type)})").fetchall()[0][0]
        for f in TURN_FIELDS
    ]
    return [(f.name, s, f.nullable) for f, s in zip(TURN_FIELDS, spelled, strict=True)]


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str, bool]]:
    rows = con.execute(
        "SELECT column_name, data_type, is_nullable = 'YES' FROM information_schema.columns "
        "WHERE table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    return open_warehouse(tmp_path / "wh")


def test_every_table_has_the_pinned_columns(con: duckdb.DuckDBPyConnection) -> None:
    tables = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
        ).fetchall()
    }
    assert tables == set(EXPECTED)
    for table in EXPECTED:
        assert _columns(con, table) == _expected(con, table), table


@pytest.mark.parametrize("table", sorted(PRIMARY_KEYS))
def test_primary_keys(con: duckdb.DuckDBPyConnection, table: str) -> None:
    row = con.execute(
        "SELECT constraint_column_names FROM duckdb_constraints() "
        "WHERE table_name = ? AND constraint_type = 'PRIMARY KEY'",
        [table],
    ).fetchone()
    assert row is not None and list(row[0]) == PRIMARY_KEYS[table]
    no_pk = con.execute(
        "SELECT count(*) FROM duckdb_constraints() WHERE table_name = "
        "'scores_history' AND constraint_type = 'PRIMARY KEY'"
    ).fetchone()
    assert no_pk == (0,)


def test_turns_migration_is_the_generated_ddl() -> None:
    # The frozen migration was generated from TURN_FIELDS; when the contract changes this
    # and the column test fail together, and the fix is a new migration.
    turns = next(m for m in migrations() if m.name == "0001_turns.sql")
    body = "\n".join(line for line in turns.sql.splitlines() if not line.startswith("--"))
    assert body.strip() == turns_ddl(first=True).strip()
    names = {m.name for m in migrations()}
    assert set(ADDED_COLUMNS.values()) <= names


def test_migrations_are_recorded_once_in_order(tmp_path: Path) -> None:
    con = open_warehouse(tmp_path)
    names = [
        r[0]
        for r in con.execute("SELECT name FROM _migrations ORDER BY applied_at, name").fetchall()
    ]
    assert names == [m.name for m in migrations()]
    assert [m.number for m in migrations()] == list(range(1, len(names) + 1))
    con.close()
    again = open_warehouse(tmp_path)  # nothing pending: no error, no duplicate rows
    assert again.execute("SELECT count(*) FROM _migrations").fetchone() == (len(names),)


def test_a_warehouse_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    con = open_warehouse(tmp_path)
    con.execute("INSERT INTO _migrations (name) VALUES ('9999_from_the_future.sql')")
    con.close()
    with pytest.raises(MigrationError, match="9999_from_the_future"):
        open_warehouse(tmp_path)


HOSTILE = ['a"b', "x; DROP TABLE scores; --", "名前 with space", "select", '"', "'"]


@pytest.mark.parametrize("name", HOSTILE)
def test_quote_ident_keeps_any_name_one_identifier(
    con: duckdb.DuckDBPyConnection, name: str
) -> None:
    con.execute(f"CREATE TABLE {quote_ident(name)} ({quote_ident(name)} INTEGER)")
    con.execute(f"INSERT INTO {quote_ident(name)} VALUES (7)")
    assert con.execute(f"SELECT {quote_ident(name)} FROM {quote_ident(name)}").fetchall() == [(7,)]
    assert con.execute("SELECT count(*) FROM scores").fetchone() == (0,)


def test_quote_ident_refuses_nul() -> None:
    with pytest.raises(ValueError, match="NUL"):
        quote_ident("a\x00b")


def test_open_readonly_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WarehouseMissing, match=str(tmp_path)):
        open_readonly(tmp_path / DB_FILE)


def _threshold(con: duckdb.DuckDBPyConnection) -> str:
    return str(con.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0])


def test_bulk_writes_defers_checkpoints_then_checkpoints_once_and_restores(
        tmp_path: Path) -> None:
    con = open_warehouse(tmp_path)
    con.execute("CREATE TABLE t (i INTEGER)")
    con.execute("SET checkpoint_threshold = '1KiB'")
    before, wal = _threshold(con), tmp_path / f"{DB_FILE}.wal"
    with bulk_writes(con):
        assert _threshold(con) == _threshold_of(BULK_CHECKPOINT_THRESHOLD)
        for i in range(20):  # 20 commits, each past the caller's 1 KiB threshold
            con.execute("INSERT INTO t SELECT range FROM range(?, ? + 100)", [i * 100, i * 100])
        assert wal.stat().st_size > 20 * 100 * 4  # no checkpoint yet: all of it in the WAL
    assert not wal.exists()  # checkpointed on the way out, the connection still open
    assert _threshold(con) == before
    con.close()


def test_bulk_writes_that_fail_restore_the_threshold_and_keep_commits_in_the_wal(
        tmp_path: Path) -> None:
    con = open_warehouse(tmp_path)
    con.execute("CREATE TABLE t (i INTEGER)")
    con.execute("CHECKPOINT")
    before = _threshold(con)
    with pytest.raises(RuntimeError), bulk_writes(con):
        con.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("scoring failed")
    assert _threshold(con) == before
    assert (tmp_path / f"{DB_FILE}.wal").exists()  # committed, not checkpointed
    con.close()
    con = open_warehouse(tmp_path)
    assert con.execute("SELECT * FROM t").fetchall() == [(1,)]
    con.close()


def _threshold_of(size: str) -> str:
    con = duckdb.connect()
    con.execute("SET checkpoint_threshold = $t", {"t": size})
    return _threshold(con)


HOLD_LOCK = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from turnscore.warehouse.db import writer_lock
    with writer_lock(Path(sys.argv[1])):
        print("locked", flush=True)
        time.sleep(float(sys.argv[2]))
""")


def _hold(directory: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(directory), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_second_writer_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    proc = _hold(tmp_path, 5)
    try:
        with pytest.raises(WarehouseBusy, match=f"pid {proc.pid}"), writer_lock(tmp_path):
            pass
    finally:
        proc.kill()
        proc.wait()
    with writer_lock(tmp_path):  # the kernel released the dead holder's lock
        pass


def test_second_writer_can_wait(tmp_path: Path) -> None:
    proc = _hold(tmp_path, 1.0)
    start = time.monotonic()
    with writer_lock(tmp_path, wait=True):
        waited = time.monotonic() - start
    assert waited > 0.5  # it blocked until the holder's second was up
    proc.wait()


def test_database_held_by_another_process_is_busy(tmp_path: Path) -> None:
    open_warehouse(tmp_path).close()
    code = (
        "import sys, time, duckdb; c = duckdb.connect(sys.argv[1]); "
        "print('open', flush=True); time.sleep(5)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / DB_FILE)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
        with pytest.raises(WarehouseBusy, match="busy"):
            open_warehouse(tmp_path)
    finally:
        proc.kill()
        proc.wait()


def test_writer_lock_is_reentrant_in_one_process_and_exclusive_across_processes(
    tmp_path: Path,
) -> None:
    probe = (
        "import sys; from pathlib import Path; from turnscore.warehouse.db import writer_lock\n"
        "try:\n    with writer_lock(Path(sys.argv[1])): print('got')\n"
        "except Exception as e: print(type(e).__name__)"
    )
    with writer_lock(tmp_path), writer_lock(tmp_path):
        out = subprocess.run(
            [sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert out == "WarehouseBusy"
    # The outer block released it for real, not just the inner one.
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "got"


def test_connections_draw_no_progress_bar_of_their_own(tmp_path: Path) -> None:
    # The CLI draws progress bars; DuckDB's own would interleave with them on stdout.
    con = open_warehouse(tmp_path)
    try:
        setting = "SELECT current_setting('enable_progress_bar')"
        assert con.execute(setting).fetchall() == [(False,)]
    finally:
        con.close()
    reader = open_readonly(tmp_path / DB_FILE)
    try:
        assert reader.execute(setting).fetchall() == [(False,)]
    finally:
        reader.close()


def test_transaction_commits_the_block_or_rolls_it_back_and_raises(tmp_path: Path) -> None:
    con = open_warehouse(tmp_path)
    try:
        con.execute("CREATE TABLE t (x INTEGER)")
        with transaction(con):
            con.execute("INSERT INTO t VALUES (1)")
        for error in (ValueError("bad"), KeyboardInterrupt()):
            with pytest.raises(type(error)), transaction(con):
                con.execute("INSERT INTO t VALUES (2)")
                raise error
        with pytest.raises(duckdb.ConstraintException), transaction(con):
            con.execute("INSERT INTO t VALUES (3)")
            con.execute("INSERT INTO _migrations (name) VALUES ('0001_turns.sql')")
        assert con.execute("SELECT list(x) FROM t").fetchall() == [([1],)]
    finally:
        con.close()
