"""A score run SIGKILLed mid-run loses only uncommitted batches; the rerun completes them
exactly once."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.warehouse.turn_factory import answer_length, load_turns, make_turn, query, registered
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.score_run import score_turns

N_TURNS = 120
BATCH = 10
ROOT = Path(__file__).parents[2]

# The child registers a slow scorer under the same name, at the version given, and prints
# a line after every committed batch so the parent knows where it is.
CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from tests.warehouse.turn_factory import answer_length
    from turnscore.scorers.base import scorer
    from turnscore.warehouse.score_run import score_turns

    def slow(turns, cases):
        time.sleep(0.04 * len(turns))
        return answer_length(turns, cases)

    scorer(name="t_slow", version=sys.argv[2], kind="code", reads=(), description="slow")(slow)
    score_turns(Path(sys.argv[1]), scorers=["t_slow"], batch_size=int(sys.argv[3]),
                progress=lambda done, total: print("batch", done, flush=True))
""")

# The child scores with a fast scorer, but write number argv[3] (1-based) is held open
# inside its transaction: once its plain INSERT (new scores only, `replacing=False`) has
# run and before COMMIT, the writer thread prints "inside write" and sleeps. Only the
# INSERT is held, so a run that took the upsert path never prints it.
HOLDING_CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from tests.warehouse.turn_factory import answer_length
    from turnscore.scorers.base import scorer
    from turnscore.warehouse import score_write, scores
    from turnscore.warehouse.score_run import score_turns

    hold_at, writes = int(sys.argv[3]), 0

    class Holding:
        def __init__(self, con):
            self.con = con

        def __getattr__(self, name):
            return getattr(self.con, name)

        def execute(self, sql, *args):
            result = self.con.execute(sql, *args)
            if sql == scores.INSERT_SCORES and writes == hold_at:
                print("inside write", flush=True)
                time.sleep(60)
            return result

    def holding_write(con, *args, **kwargs):
        global writes
        writes += 1
        return scores.write_scores(Holding(con), *args, **kwargs)

    score_write.write_scores = holding_write
    scorer(name="t_len", version="1", kind="code", reads=(), description="len")(answer_length)
    score_turns(Path(sys.argv[1]), scorers=["t_len"], batch_size=int(sys.argv[2]),
                progress=lambda done, total: print("batch", done, flush=True))
""")


def _loaded(tmp_path: Path) -> Path:
    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(i) for i in range(N_TURNS)])
    con.close()
    return tmp_path


@pytest.mark.slow
def test_sigkill_mid_batch_then_rerun(tmp_path: Path) -> None:
    wh = _loaded(tmp_path)
    with registered("t_slow", answer_length, version="1"):
        assert score_turns(wh, scorers=["t_slow"]).written == N_TURNS

    child = subprocess.Popen([sys.executable, "-c", CHILD, str(wh), "2", str(BATCH)],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert child.stdout is not None
    for _ in range(3):
        assert child.stdout.readline().startswith("batch")
    # Progress is reported when the next batch is handed to the writer: at "batch 30"
    # batches 1-3 are committed and batch 4 is scored and about to be written. The kill
    # lands while batch 5 is being scored (0.4 s), with batch 4's write in flight or
    # committed, so 30 or 40 v2 scores are committed (more only if this process slept
    # far longer than asked).
    time.sleep(0.15)
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL

    con = open_warehouse(wh)
    done_v2 = con.execute("SELECT count(*) FROM scores WHERE scorer_version = '2'").fetchall()
    history = con.execute("SELECT count(*) FROM scores_history").fetchall()
    # Whole batches only: every v2 score replaced exactly one v1 score, which is in history.
    assert done_v2 == history and done_v2[0][0] % BATCH == 0 and done_v2[0][0] >= 3 * BATCH
    assert done_v2[0][0] < N_TURNS
    assert con.execute("SELECT count(*) FROM scores").fetchall() == [(N_TURNS,)]
    con.close()

    with registered("t_slow", answer_length, version="2"):
        rerun = score_turns(wh, scorers=["t_slow"])
    assert rerun.pending_before == N_TURNS - done_v2[0][0]

    con = open_warehouse(wh)
    assert con.execute(
        "SELECT count(*), count(DISTINCT turn_id), min(scorer_version), max(scorer_version) "
        "FROM scores").fetchall() == [(N_TURNS, N_TURNS, "2", "2")]
    assert con.execute(
        "SELECT count(*), count(DISTINCT turn_id), min(scorer_version), max(scorer_version) "
        "FROM scores_history").fetchall() == [(N_TURNS, N_TURNS, "1", "1")]
    outcomes = con.execute("SELECT outcome FROM runs ORDER BY started_at").fetchall()
    assert outcomes == [("ok",), ("interrupted",), ("ok",)]
    con.close()


@pytest.mark.slow
def test_sigkill_inside_a_write_on_a_fresh_warehouse_then_rerun(tmp_path: Path) -> None:
    """No score exists yet, so every batch takes the plain-INSERT path; the process dies
    with the fourth batch's rows inserted but not committed."""
    wh = _loaded(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", HOLDING_CHILD, str(wh), str(BATCH), "4"],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert child.stdout is not None
        lines = []
        for line in child.stdout:  # ends early only if the child exits without holding
            lines.append(line.strip())
            if lines[-1] == "inside write":
                break
        assert lines[-1:] == ["inside write"], lines
        assert "batch 30" in lines  # the writes before it returned and were reported
    finally:
        child.send_signal(signal.SIGKILL)
        returncode = child.wait()
    assert returncode == -signal.SIGKILL

    # Writes 1-3 committed, write 4 died inside its transaction: none of its rows stay.
    assert query(wh, "SELECT count(*), count(DISTINCT turn_id), min(run_id) = max(run_id) "
                  "FROM scores") == [(3 * BATCH, 3 * BATCH, True)]
    assert query(wh, "SELECT count(*) FROM scores_history") == [(0,)]

    with registered("t_len", answer_length, version="1"):
        rerun = score_turns(wh, scorers=["t_len"], batch_size=BATCH)
    assert (rerun.pending_before, rerun.written) == (N_TURNS - 3 * BATCH, N_TURNS - 3 * BATCH)

    # One current score per (turn, scorer), nothing replaced, nothing written twice.
    assert query(wh, "SELECT count(*), count(DISTINCT (turn_id, scorer)) FROM scores") == [
        (N_TURNS, N_TURNS)]
    assert query(wh, "SELECT count(*) FROM scores_history") == [(0,)]
    assert query(wh, "SELECT count(*) FROM (SELECT run_id FROM scores GROUP BY run_id)") == [(2,)]
    assert query(wh, "SELECT outcome FROM runs ORDER BY started_at") == [
        ("interrupted",), ("ok",)]
