"""A score run SIGKILLed mid-batch loses only that batch; the rerun completes it exactly once."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.warehouse.turn_factory import answer_length, load_turns, make_turn, registered
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.score_run import score_turns

N_TURNS = 120
BATCH = 10

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


@pytest.mark.slow
def test_sigkill_mid_batch_then_rerun(tmp_path: Path) -> None:
    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(i) for i in range(N_TURNS)])
    con.close()
    with registered("t_slow", answer_length, version="1"):
        assert score_turns(tmp_path, scorers=["t_slow"]).written == N_TURNS

    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), "2", str(BATCH)],
                             stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    assert child.stdout is not None
    for _ in range(3):
        assert child.stdout.readline().startswith("batch")
    time.sleep(0.15)  # inside the fourth batch (0.4 s of scoring)
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL

    con = open_warehouse(tmp_path)
    done_v2 = con.execute("SELECT count(*) FROM scores WHERE scorer_version = '2'").fetchall()
    history = con.execute("SELECT count(*) FROM scores_history").fetchall()
    # Whole batches only: every v2 score replaced exactly one v1 score, which is in history.
    assert done_v2 == history and done_v2[0][0] % BATCH == 0 and done_v2[0][0] >= 3 * BATCH
    assert done_v2[0][0] < N_TURNS
    assert con.execute("SELECT count(*) FROM scores").fetchall() == [(N_TURNS,)]
    con.close()

    with registered("t_slow", answer_length, version="2"):
        rerun = score_turns(tmp_path, scorers=["t_slow"])
    assert rerun.pending_before == N_TURNS - done_v2[0][0]

    con = open_warehouse(tmp_path)
    assert con.execute(
        "SELECT count(*), count(DISTINCT turn_id), min(scorer_version), max(scorer_version) "
        "FROM scores").fetchall() == [(N_TURNS, N_TURNS, "2", "2")]
    assert con.execute(
        "SELECT count(*), count(DISTINCT turn_id), min(scorer_version), max(scorer_version) "
        "FROM scores_history").fetchall() == [(N_TURNS, N_TURNS, "1", "1")]
    outcomes = con.execute("SELECT outcome FROM runs ORDER BY started_at").fetchall()
    assert outcomes == [("ok",), ("interrupted",), ("ok",)]
    con.close()
