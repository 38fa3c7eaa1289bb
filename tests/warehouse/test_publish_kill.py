"""A run killed while publishing: the rerun has nothing to score, yet publishes what the
killed run committed (to `published.duckdb` and to the Parquet exports under `published/`),
and removes the half-written snapshot it left."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.warehouse.kills import sigkill_at
from tests.warehouse.turn_factory import answer_length, load_turns, make_turn, registered
from turnscore.warehouse.db import open_readonly, open_warehouse
from turnscore.warehouse.publish import PUBLISHED_DB, PUBLISHED_DIR
from turnscore.warehouse.score_run import score_turns

N_TURNS = 30
TMP = PUBLISHED_DB + ".tmp"

# Scores with `t_len` at version argv[2]; publishing stops inside, after the copy into
# `published.duckdb.tmp`, and waits to be killed.
CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from tests.warehouse.turn_factory import answer_length
    from turnscore.scorers.base import scorer
    from turnscore.warehouse import publish
    from turnscore.warehouse.score_run import score_turns

    def stuck(con, seconds=None):
        print("publishing", flush=True)
        time.sleep(60)

    publish.materialise_views = stuck
    scorer(name="t_len", version=sys.argv[2], kind="code", reads=(), description="len")(
        answer_length)
    score_turns(Path(sys.argv[1]), scorers=["t_len"])
""")


# Scores with `t_len` version 1 and publishes; holds between the two steps that put a
# publish in place (the `published.duckdb` rename and the `published` link swap), whichever
# comes first, and waits to be killed.
CHILD_BETWEEN_SWAPS = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from tests.warehouse.turn_factory import answer_length
    from turnscore.scorers.base import scorer
    from turnscore.warehouse import publish
    from turnscore.warehouse.score_run import score_turns

    real_replace, real_swap, steps = os.replace, publish._swap_link, []

    def step(name):
        steps.append(name)
        if len(steps) == 1:
            print("between", flush=True)
            time.sleep(60)

    def replace(src, dst):
        real_replace(src, dst)
        if Path(dst).name == publish.PUBLISHED_DB:
            step("snapshot")

    def swap(warehouse_dir, version):
        link = real_swap(warehouse_dir, version)
        step("link")
        return link

    os.replace, publish._swap_link = replace, swap
    scorer(name="t_len", version="1", kind="code", reads=(), description="len")(answer_length)
    score_turns(Path(sys.argv[1]), scorers=["t_len"])
""")


def _snapshot_versions(wh: Path) -> list[tuple[str, int]]:
    con = open_readonly(wh / PUBLISHED_DB)
    try:
        return [(v, n) for v, n in con.execute(
            "SELECT scorer_version, count(*) FROM scores GROUP BY 1 ORDER BY 1").fetchall()]
    finally:
        con.close()


def _load(wh: Path, indexes: range) -> None:
    con = open_warehouse(wh)
    load_turns(con, [make_turn(i) for i in indexes])
    con.close()


def _kill_while_publishing(wh: Path, version: str) -> None:
    sigkill_at(CHILD, [str(wh), version], "publishing")


@pytest.mark.slow
def test_a_rerun_with_nothing_to_score_publishes_what_a_killed_publish_left_out(
        tmp_path: Path) -> None:
    _load(tmp_path, range(N_TURNS))
    with registered("t_len", answer_length, version="1"):
        assert score_turns(tmp_path, scorers=["t_len"]).published
    assert _snapshot_versions(tmp_path) == [("1", N_TURNS)]

    _kill_while_publishing(tmp_path, "2")
    assert (tmp_path / TMP).exists()  # the half-written snapshot
    assert _snapshot_versions(tmp_path) == [("1", N_TURNS)]  # dashboards: stale

    with registered("t_len", answer_length, version="2"):
        rerun = score_turns(tmp_path, scorers=["t_len"])
        assert rerun.nothing_to_do and rerun.published
        assert _snapshot_versions(tmp_path) == [("2", N_TURNS)]
        assert not (tmp_path / TMP).exists()
        assert not (tmp_path / (TMP + ".wal")).exists()
        # Now current: a run with nothing to do does not publish again.
        assert score_turns(tmp_path, scorers=["t_len"]).published is None


def test_a_snapshot_behind_the_warehouse_is_published_by_a_run_with_nothing_to_do(
        tmp_path: Path) -> None:
    """A run that committed and died before publishing (here: turns loaded and scored with
    publishing off) leaves the snapshot behind; a leftover WAL of a dead publish goes."""
    _load(tmp_path, range(N_TURNS))
    with registered("t_len", answer_length, version="1"):
        score_turns(tmp_path, scorers=["t_len"])
        _load(tmp_path, range(N_TURNS, N_TURNS + 5))
        assert score_turns(tmp_path, scorers=["t_len"], publish_snapshot=False).written == 5
        (tmp_path / (TMP + ".wal")).write_bytes(b"left by a killed publish")
        assert _snapshot_versions(tmp_path) == [("1", N_TURNS)]

        assert score_turns(tmp_path, scorers=["t_len"]).published
        assert _snapshot_versions(tmp_path) == [("1", N_TURNS + 5)]
        assert not (tmp_path / (TMP + ".wal")).exists()


def _turns_published(wh: Path) -> tuple[int, int]:
    """Turns in `published.duckdb` and rows of the exported `turns_scored.parquet`."""
    con = open_readonly(wh / PUBLISHED_DB)
    try:
        in_db = con.execute("SELECT count(*) FROM turns").fetchall()[0][0]
        exported = con.execute("SELECT count(*) FROM read_parquet(?)", [
            str(wh / PUBLISHED_DIR / "turns_scored.parquet")]).fetchall()[0][0]
    finally:
        con.close()
    return in_db, exported


@pytest.mark.slow
def test_a_kill_between_the_snapshot_and_the_link_swap_is_published_by_the_rerun(
        tmp_path: Path) -> None:
    _load(tmp_path, range(N_TURNS))
    with registered("t_len", answer_length, version="1"):
        assert score_turns(tmp_path, scorers=["t_len"]).published
    assert _turns_published(tmp_path) == (N_TURNS, N_TURNS)

    _load(tmp_path, range(N_TURNS, N_TURNS + 5))
    sigkill_at(CHILD_BETWEEN_SWAPS, [str(tmp_path)], "between")

    with registered("t_len", answer_length, version="1"):
        rerun = score_turns(tmp_path, scorers=["t_len"])
    assert rerun.nothing_to_do  # the killed run committed its scores
    # Both what dashboards read and the snapshot are current, not only the snapshot.
    assert _turns_published(tmp_path) == (N_TURNS + 5, N_TURNS + 5)


def test_a_missing_published_folder_is_published_again(tmp_path: Path) -> None:
    _load(tmp_path, range(N_TURNS))
    with registered("t_len", answer_length, version="1"):
        assert score_turns(tmp_path, scorers=["t_len"]).published
        (tmp_path / PUBLISHED_DIR).unlink()  # the link, as a kill mid-swap can leave it
        assert score_turns(tmp_path, scorers=["t_len"]).published
    assert _turns_published(tmp_path) == (N_TURNS, N_TURNS)
