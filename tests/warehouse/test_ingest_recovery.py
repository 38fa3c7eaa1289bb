"""A run killed between writing `turns/` and its warehouse commit, whose input is never
offered again: the next run (of other input) brings the warehouse back in line with
`turns/`, reading only the dead run's files."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import duckdb

from tests.warehouse.kills import sigkill_at
from tests.warehouse.test_ingest_run import _split_last_span
from turnscore.ingest.schema import TURN_FIELDS
from turnscore.warehouse.db import DB_FILE
from turnscore.warehouse.ingest_run import UNLOADED_DIR, run_ingest

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
COLUMNS = ", ".join(f'"{f.name}"' for f in TURN_FIELDS)

# Writes `turns/` for its input, then stops before the warehouse load and waits to be
# killed (SIGKILL: no cleanup of any kind runs).
KILLED = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from turnscore.ingest import store
    from turnscore.warehouse.ingest_run import run_ingest

    real = store.TurnStore.replace
    def replace_then_wait(self, turns, rebuilt):
        written = real(self, turns, rebuilt)
        print("written", flush=True)
        time.sleep(60)
        return written
    store.TurnStore.replace = replace_then_wait
    run_ingest([Path(sys.argv[1])], Path(sys.argv[2]))
""")


def _kill_after_writing_turns(src: Path, wh: Path) -> None:
    sigkill_at(KILLED, [str(src), str(wh)], "written")


def _rows(wh: Path, relation: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(wh / DB_FILE), read_only=True)
    try:
        return con.execute(f"SELECT {COLUMNS} FROM {relation} ORDER BY turn_id").fetchall()
    finally:
        con.close()


def _parquet(wh: Path) -> str:
    return f"read_parquet('{wh}/turns/*/*.parquet')"


def test_turns_written_by_a_killed_run_are_loaded_by_the_next_run_of_other_input(
        tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _kill_after_writing_turns(CORPUS / "pydantic-ai" / "multi_turn.json", wh)
    assert len(_rows(wh, _parquet(wh))) == 2 and _rows(wh, "turns") == []

    other = run_ingest([CORPUS / "pydantic-ai" / "single_tool.json"], wh)
    assert other.outcome == "ok" and other.turns_recovered == 2
    assert _rows(wh, "turns") == _rows(wh, _parquet(wh))
    assert len(_rows(wh, "turns")) == 2 + other.turns_new
    assert not list((wh / UNLOADED_DIR).iterdir())

    again = run_ingest([CORPUS / "pydantic-ai" / "no_tool.json"], wh)
    assert again.turns_recovered == 0
    assert _rows(wh, "turns") == _rows(wh, _parquet(wh))


def test_a_rebuild_killed_before_its_commit_is_loaded_by_the_next_run(
        tmp_path: Path) -> None:
    """The killed run rebuilt a turn already in the warehouse (its late span arrived):
    the next run loads the rebuilt row, not leaving the old one in place."""
    wh = tmp_path / "wh"
    early, late = _split_last_span(CORPUS / "openinference-openai" / "single_tool.json",
                                   tmp_path / "in")
    run_ingest([early], wh)
    before = _rows(wh, "turns")
    _kill_after_writing_turns(late, wh)
    assert _rows(wh, "turns") == before != _rows(wh, _parquet(wh))

    other = run_ingest([CORPUS / "pydantic-ai" / "single_tool.json"], wh)
    assert other.turns_recovered == 1
    assert _rows(wh, "turns") == _rows(wh, _parquet(wh))
