"""publish: a snapshot readers can open while a writer works, its views materialised as
tables, and Parquet per view."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.warehouse.turn_factory import load_turns, make_turn
from turnscore.queries import load_views
from turnscore.scorers.base import Score
from turnscore.warehouse.db import migrate, open_readonly, open_warehouse
from turnscore.warehouse.errors import WarehouseError
from turnscore.warehouse.publish import (
    PUBLISHED_DB,
    PUBLISHED_DIR,
    publish,
    publish_snapshot,
    refresh_views,
    snapshot_behind,
)
from turnscore.warehouse.publish_export import MANIFEST
from turnscore.warehouse.query import create_temp_views
from turnscore.warehouse.scores import ScoreRow, write_scores


@dataclass(frozen=True, slots=True)
class View:
    name: str
    sql: str


def _scores(n: int, start: int = 0) -> list[ScoreRow]:
    return [ScoreRow(f"turn-{i:05d}", "s", "1", "h", Score.scored(float(i)))
            for i in range(start, start + n)]


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(i) for i in range(6)])
    write_scores(con, _scores(6), "r1")
    return con


def test_snapshot_has_the_tables_and_views(tmp_path: Path, con: duckdb.DuckDBPyConnection
                                           ) -> None:
    con.execute("CREATE VIEW mean_score AS SELECT scorer, avg(value) AS mean FROM scores "
                "GROUP BY scorer")
    path = publish(tmp_path, con=con)
    assert path == tmp_path / PUBLISHED_DB
    assert not (tmp_path / (PUBLISHED_DB + ".tmp")).exists()
    snap = duckdb.connect(str(path), read_only=True)
    assert snap.execute("SELECT * FROM mean_score").fetchall() == [("s", 2.5)]
    assert snap.execute("SELECT count(*) FROM turns").fetchall() == [(6,)]
    tools = snap.execute("SELECT tools[1].name FROM turns LIMIT 1").fetchall()
    assert tools == [("get_weather",)]
    exported = pq.read_table(tmp_path / PUBLISHED_DIR / "mean_score.parquet")
    assert exported.to_pylist() == [{"scorer": "s", "mean": 2.5}]


def test_exports_swap_atomically_and_old_folders_are_pruned(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE VIEW n_scores AS SELECT count(*) AS n FROM scores")
    seen = []
    for i in range(4):
        write_scores(con, _scores(1, start=100 + i), f"r{i}")
        publish(tmp_path, con=con)
        link = tmp_path / PUBLISHED_DIR
        assert link.is_symlink()
        seen.append(pq.read_table(link / "n_scores.parquet").to_pylist()[0]["n"])
    assert seen == [7, 8, 9, 10]
    versions = [p for p in tmp_path.iterdir() if p.name.startswith(".published-")]
    assert len(versions) == 2  # the current one and the one a slow reader may still be in
    assert os.readlink(tmp_path / PUBLISHED_DIR) in {v.name for v in versions}


def test_a_real_published_folder_is_set_aside_for_one_round(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    (tmp_path / PUBLISHED_DIR).mkdir()
    (tmp_path / PUBLISHED_DIR / "scores.parquet").write_text("an older export")
    publish(tmp_path, con=con)
    assert (tmp_path / PUBLISHED_DIR).is_symlink()
    [legacy] = tmp_path.glob(".published-legacy-*")
    assert (legacy / "scores.parquet").read_text() == "an older export"
    publish(tmp_path, con=con)
    assert not legacy.exists()


def test_a_view_name_that_is_not_a_file_name_is_not_exported(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    con.execute('CREATE VIEW "../escape" AS SELECT 1 AS x')
    con.execute('CREATE VIEW "a""b; DROP TABLE scores" AS SELECT 1 AS x')
    publish(tmp_path, con=con)
    exported = set(os.listdir(tmp_path / PUBLISHED_DIR)) - {MANIFEST}
    assert not any("escape" in name or "DROP" in name for name in exported)
    views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal")
             .fetchall()}
    assert exported == {f"{v}.parquet" for v in views if v.isidentifier()}
    assert not (tmp_path / "escape.parquet").exists()
    assert con.execute("SELECT count(*) FROM scores").fetchall() == [(6,)]


def test_views_are_created_whatever_their_order(con: duckdb.DuckDBPyConnection) -> None:
    views = [View("top", "SELECT max(n) AS n FROM base"),
             View("base", "SELECT count(*) AS n FROM scores;")]
    assert refresh_views(con, views) == ["base", "top"]
    assert con.execute("SELECT n FROM top").fetchall() == [(6,)]
    with pytest.raises(WarehouseError, match="broken"):
        refresh_views(con, [View("broken", "SELECT nope FROM scores")])


READER = textwrap.dedent("""
    import sys, time, duckdb
    path, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
    seen, errors = [], []
    while time.monotonic() < deadline:
        try:
            c = duckdb.connect(path, read_only=True)
            seen.append(c.execute("SELECT count(*) FROM scores").fetchall()[0][0])
            c.close()
        except Exception as exc:
            errors.append(repr(exc))
    print(len(seen), sorted(set(seen)), errors[:3], flush=True)
    sys.exit(1 if errors else 0)
""")


def test_a_reader_never_meets_a_lock_while_the_writer_works(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    publish(tmp_path, con=con)
    reader = subprocess.Popen([sys.executable, "-c", READER, str(tmp_path / PUBLISHED_DB), "3"],
                              stdout=subprocess.PIPE, text=True)
    for i in range(12):  # the writer keeps warehouse.duckdb open and locked throughout
        write_scores(con, _scores(10, start=1000 + 10 * i), f"r{i}")
        publish(tmp_path, con=con)
    out, _ = reader.communicate(timeout=30)
    assert reader.returncode == 0, out
    reads, counts = out.split(" ", 1)[0], out
    assert int(reads) > 10, out
    assert "[]" in counts  # no errors
    # Every snapshot it read was a whole one: 6 plus whole batches of 10.
    values = [int(v) for v in out[out.index("[") + 1:out.index("]")].split(",")]
    assert all((v - 6) % 10 == 0 for v in values), out


def test_views_become_tables_of_the_same_name_in_the_snapshot_only(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE VIEW per_scorer AS SELECT scorer, count(*) AS n FROM scores "
                "GROUP BY scorer")
    con.execute("CREATE VIEW top AS SELECT max(n) AS n FROM per_scorer")
    published = publish_snapshot(tmp_path, con=con)
    assert {"per_scorer", "top"} | {v.name for v in load_views()} == set(published.views)
    assert {"copy", "parquet", "checkpoint", "view top", "view turns_scored"} \
        <= set(published.seconds)
    snap = duckdb.connect(str(published.path), read_only=True)
    assert snap.execute(USER_VIEWS).fetchall() == []
    tables = {name for (name,) in snap.execute("SELECT table_name FROM duckdb_tables()")
              .fetchall()}
    assert set(published.views) | {"turns", "scores", "labels", "runs"} <= tables
    assert snap.execute("SELECT * FROM top").fetchall() == [(6,)]
    assert pq.read_table(tmp_path / PUBLISHED_DIR / "top.parquet").to_pylist() == [{"n": 6}]
    snap.close()
    # The live warehouse keeps its views: ad-hoc SQL there sees the freshest rows.
    live_views = {name for (name,) in con.execute(USER_VIEWS).fetchall()}
    assert set(published.views) == live_views
    write_scores(con, _scores(1, start=50), "r2")
    assert con.execute("SELECT * FROM top").fetchall() == [(7,)]


USER_VIEWS = "SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary"


def test_a_reader_holding_the_old_snapshot_reads_it_whole_through_a_publish(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE VIEW n_scores AS SELECT count(*) AS n FROM scores")
    publish(tmp_path, con=con)
    old = duckdb.connect(str(tmp_path / PUBLISHED_DB), read_only=True)
    assert old.execute("SELECT n FROM n_scores").fetchall() == [(6,)]
    write_scores(con, _scores(10, start=100), "r2")
    publish(tmp_path, con=con)
    # The old file (its inode) is still there for it, tables not read before included.
    assert old.execute("SELECT n FROM n_scores").fetchall() == [(6,)]
    assert old.execute("SELECT count(*) FROM turns_scored").fetchall() == [(6,)]
    assert old.execute("SELECT count(*) FROM scores").fetchall() == [(6,)]
    old.close()
    new = duckdb.connect(str(tmp_path / PUBLISHED_DB), read_only=True)
    assert new.execute("SELECT n FROM n_scores").fetchall() == [(16,)]
    new.close()


HOLDING_READER = textwrap.dedent("""
    import sys, time, duckdb
    path, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
    c = duckdb.connect(path, read_only=True)
    seen, errors = set(), []
    print("ready", flush=True)
    while time.monotonic() < deadline:
        try:
            seen.add((c.execute("SELECT n FROM n_scores").fetchall()[0][0],
                      c.execute("SELECT count(*) FROM scores").fetchall()[0][0],
                      c.execute("SELECT count(*) FROM turns_scored").fetchall()[0][0]))
        except Exception as exc:
            errors.append(repr(exc))
    print(sorted(seen), errors[:3], flush=True)
    sys.exit(1 if errors else 0)
""")


def test_a_reader_connected_during_publishes_keeps_its_snapshot(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE VIEW n_scores AS SELECT count(*) AS n FROM scores")
    publish(tmp_path, con=con)
    reader = subprocess.Popen(
        [sys.executable, "-c", HOLDING_READER, str(tmp_path / PUBLISHED_DB), "3"],
        stdout=subprocess.PIPE, text=True)
    assert reader.stdout is not None
    assert reader.stdout.readline().strip() == "ready"
    for i in range(6):
        write_scores(con, _scores(10, start=1000 + 10 * i), f"r{i}")
        publish(tmp_path, con=con)
    out, _ = reader.communicate(timeout=30)
    assert reader.returncode == 0, out
    assert out.strip() == "[(6, 6, 6)] []"


def test_a_failed_publish_leaves_the_previous_snapshot(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    publish(tmp_path, con=con)
    before = os.readlink(tmp_path / PUBLISHED_DIR)
    # Binds, so it is created; fails only when its rows are computed.
    con.execute("CREATE VIEW broken AS SELECT CAST(turn_id AS INTEGER) AS n FROM turns")
    write_scores(con, _scores(1, start=100), "r2")
    with pytest.raises(WarehouseError, match="broken"):
        publish(tmp_path, con=con)
    assert not (tmp_path / (PUBLISHED_DB + ".tmp")).exists()
    assert os.readlink(tmp_path / PUBLISHED_DIR) == before
    snap = duckdb.connect(str(tmp_path / PUBLISHED_DB), read_only=True)
    assert snap.execute("SELECT count(*) FROM scores").fetchall() == [(6,)]
    snap.close()


def test_without_a_database_file_the_tables_are_copied_one_by_one(tmp_path: Path) -> None:
    con = duckdb.connect()  # in memory: no file to copy
    migrate(con)
    load_turns(con, [make_turn(i) for i in range(3)])
    write_scores(con, _scores(3), "r1")
    path = publish(tmp_path, con=con)
    snap = duckdb.connect(str(path), read_only=True)
    assert snap.execute("SELECT count(*) FROM scores").fetchall() == [(3,)]
    assert snap.execute("SELECT count(*) FROM turns_scored").fetchall() == [(3,)]
    snap.close()


def test_query_reads_the_snapshot_tables_not_temp_views_over_them(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    publish(tmp_path, con=con)
    snap = open_readonly(tmp_path / PUBLISHED_DB)
    assert create_temp_views(snap) == []
    assert snap.execute("SELECT count(*) FROM turns_scored").fetchall() == [(6,)]
    snap.close()


def test_a_view_with_a_day_column_is_stored_sorted_by_day(
        tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE VIEW by_day AS SELECT DATE '2026-01-01' + CAST(5 - i AS INTEGER) AS day, i "
                "FROM range(6) AS r(i)")
    publish(tmp_path, con=con)
    snap = duckdb.connect(str(tmp_path / PUBLISHED_DB), read_only=True)
    days = [d for (d, _) in snap.execute("SELECT * FROM by_day").fetchall()]
    snap.close()
    assert days == sorted(days) and len(days) == 6
    exported = pq.read_table(tmp_path / PUBLISHED_DIR / "by_day.parquet").column("day")
    assert exported.to_pylist() == days


def test_a_full_disk_while_publishing_is_a_publish_error_and_the_score_run_keeps_its_scores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from turnscore.warehouse.score_run import score_turns

    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(i) for i in range(4)])
    con.close()

    def full_disk(*args: object) -> dict[str, list[str]]:
        raise duckdb.IOException("could not write: No space left on device")

    monkeypatch.setattr("turnscore.warehouse.publish.export_views", full_disk)
    with pytest.raises(WarehouseError, match="No space left"):
        publish(tmp_path)
    assert not (tmp_path / (PUBLISHED_DB + ".tmp")).exists()

    report = score_turns(tmp_path, scorers=["call_validity"])
    assert report.outcome.value == "partial" and report.published is None
    assert report.publish_error is not None and "No space left" in report.publish_error
    snap = open_readonly(tmp_path / "warehouse.duckdb")
    try:
        assert snap.execute("SELECT count(*) FROM scores").fetchall() == [(4,)]
        assert snap.execute("SELECT outcome FROM runs WHERE kind = 'score'").fetchall() == [
            ("partial",)]
    finally:
        snap.close()


CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "pydantic-ai"
_STAMP_COLUMNS = """
SELECT table_name, list(column_name ORDER BY column_name) FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'main'
  AND table_name IN ('turns', 'ingest_errors', 'ingested_files', 'scores', 'scores_history',
                     'labels')
  AND (column_name IN ('run_id', 'ingest_id') OR suffix(column_name, '_at'))
GROUP BY table_name ORDER BY table_name
"""


def _fingerprint(wh: Path) -> list[tuple[object, ...]]:
    """What readers see, the slow way (the check `snapshot_behind` made before the commit
    stamp): each table's row count and the maximum of its lineage stamps."""
    con = open_readonly(wh / "warehouse.duckdb")
    try:
        out = []
        for table, columns in con.execute(_STAMP_COLUMNS).fetchall():
            stamps = "".join(f', max("{c}")::VARCHAR' for c in columns)
            out.append((table, *con.execute(f'SELECT count(*){stamps} FROM "{table}"')
                        .fetchall()[0]))
        return out
    finally:
        con.close()


def _behind(wh: Path) -> bool:
    con = open_warehouse(wh)
    try:
        return snapshot_behind(wh, con)
    finally:
        con.close()


def test_every_write_readers_see_moves_the_commit_stamp_and_nothing_else_does(
        tmp_path: Path) -> None:
    """Through the package's own writers (ingest, labels, a score run, a re-ingest that
    changes nothing): whenever the slow fingerprint of what readers see changes, the
    snapshot is behind; publishing makes it current; a step that changes nothing leaves it
    current."""
    from tests.warehouse.turn_factory import write_jsonl
    from turnscore.warehouse.ingest_run import run_ingest
    from turnscore.warehouse.labels import load_labels
    from turnscore.warehouse.score_run import score_turns

    publish(tmp_path)
    labels = write_jsonl(tmp_path / "cases.jsonl", [{"case_id": "c1", "input": "x",
                                                     "canary": "y"}])
    steps = [
        ("ingest", lambda: run_ingest([CORPUS / "single_tool.json"], tmp_path)),
        ("labels", lambda: load_labels(tmp_path, [labels], case_id_attribute="case.id")),
        ("score", lambda: score_turns(tmp_path, scorers=["call_validity"],
                                      publish_snapshot=False)),
        ("ingest again", lambda: run_ingest([CORPUS / "single_tool.json"], tmp_path)),
        ("score again", lambda: score_turns(tmp_path, scorers=["call_validity"],
                                            publish_snapshot=False)),
        ("labels again", lambda: load_labels(tmp_path, [labels], case_id_attribute="case.id")),
    ]
    for name, step in steps:
        before = _fingerprint(tmp_path)
        step()
        changed = _fingerprint(tmp_path) != before
        assert _behind(tmp_path) or not changed, f"{name}: changed, but not behind"
        publish(tmp_path)
        assert not _behind(tmp_path), name
    assert _fingerprint(tmp_path)[-1][0] == "turns"  # every table was looked at


def test_a_no_op_run_publishes_a_stale_snapshot_and_leaves_a_current_one_alone(
        tmp_path: Path) -> None:
    from turnscore.warehouse.score_run import score_turns

    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(i) for i in range(4)])
    con.close()
    assert score_turns(tmp_path, scorers=["call_validity"]).published
    snapshot = tmp_path / PUBLISHED_DB
    first = snapshot.stat()

    again = score_turns(tmp_path, scorers=["call_validity"])
    assert again.nothing_to_do and again.published is None
    assert (snapshot.stat().st_ino, snapshot.stat().st_mtime_ns) == (first.st_ino,
                                                                     first.st_mtime_ns)

    con = open_warehouse(tmp_path)  # a commit that no publish followed (a killed run)
    write_scores(con, _scores(2, start=100), "dead-run")
    con.close()
    stale = score_turns(tmp_path, scorers=["call_validity"])
    assert stale.nothing_to_do and stale.published
    assert snapshot.stat().st_ino != first.st_ino
    snap = open_readonly(snapshot)
    try:
        assert snap.execute("SELECT count(*) FROM scores").fetchall() == [(6,)]
    finally:
        snap.close()


def test_a_snapshot_from_before_the_commit_stamp_is_behind(tmp_path: Path,
                                                           con: duckdb.DuckDBPyConnection
                                                           ) -> None:
    publish(tmp_path, con=con)
    assert not snapshot_behind(tmp_path, con)
    old = duckdb.connect(str(tmp_path / PUBLISHED_DB))
    old.execute("DROP TABLE _commits")
    old.close()
    assert snapshot_behind(tmp_path, con)
