"""The score queue stands for the full pass: over a night's worth of warehouse states, made
by the real writers (ingest's `load_batch`, `load_labels`, score runs killed or not), the
pending pairs a run reads from the queue are exactly those the full pass finds; and the
run takes the full pass (refilling the queue) exactly where it must."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.warehouse.turn_factory import answer_length, changed, make_turn, registered, write_jsonl
from turnscore.ingest.pipeline import IngestBatch
from turnscore.ingest.turn import Turn, turns_to_arrow
from turnscore.scorers.base import REGISTRY
from turnscore.warehouse import score_pending, score_queue
from turnscore.warehouse.db import DB_FILE, migrations, open_warehouse
from turnscore.warehouse.ingest_run import load_batch
from turnscore.warehouse.labels import load_labels
from turnscore.warehouse.runs import RunKind, start_run
from turnscore.warehouse.score_run import ScorersForAgent, resolve_scorers, score_turns
from turnscore.warehouse.scores import write_score_table

Pair = tuple[str, str]
_files = itertools.count()


def _turn(i: int, *, agent: str | None = None, answer: str = "done", case_id: str | None = None,
          request: str | None = None) -> Turn:
    return replace(make_turn(i, final_answer=answer, case_id=case_id, request=request),
                   agent_name=agent).with_hash()


def ingest(wh: Path, turns: Sequence[Turn], rebuilt: Sequence[str] = ()) -> None:
    """Load `turns` as ingest does (`load_batch`), `rebuilt` traces rebuilt whole."""
    path = wh.parent / f"turns-{next(_files)}.parquet"
    pq.write_table(turns_to_arrow(turns), path)
    con = open_warehouse(wh)
    try:
        run_id = start_run(con, RunKind.INGEST, {})
        batch = IngestBatch(run_id, (), (), 0, 0, 0, 0, (path,), len(turns),
                            frozenset(rebuilt), (), ())
        assert load_batch(con, batch, set(), (), time.monotonic()).outcome == "ok"
    finally:
        con.close()


def labels(wh: Path, rows: list[dict[str, object]]) -> None:
    path = write_jsonl(wh.parent / f"labels-{next(_files)}.jsonl", rows)
    assert load_labels(wh, [path], case_id_attribute="case").outcome == "ok"


def sql(wh: Path, statement: str) -> None:
    """A hand edit the queue cannot follow, and the call that says so (`forget_scope`)."""
    con = open_warehouse(wh)
    try:
        con.execute(statement)
        score_queue.forget_scope(con)
    finally:
        con.close()


class Killed(BaseException):
    pass


def score(wh: Path, *, kill: str | None = None, **options: object) -> None:
    """A score run; `kill`: 'dequeue' dies in the first batch's dequeue, inside its
    transaction (so the batch rolls back with it), 'batch' after that batch committed."""
    if kill is None:
        score_turns(wh, publish_snapshot=False, **options)  # type: ignore[arg-type]
        return
    mp = pytest.MonkeyPatch()
    if kill == "dequeue":
        def die(*_: object) -> None:
            raise Killed
        mp.setattr(score_queue, "dequeue", die)
    else:
        def progress(done: int, total: int) -> None:
            raise Killed
        options["progress"] = progress
    try:
        with pytest.raises(Killed):
            score_turns(wh, publish_snapshot=False, batch_size=4, **options)  # type: ignore[arg-type]
    finally:
        mp.undo()


def stale_scores(wh: Path) -> None:
    """Scores computed before a queued turn changed, written by a run for that turn (as a
    Ray run recovers a dead run's): not current, so the turn stays queued."""
    turn = T[17]
    ingest(wh, [changed(turn, "s")])
    con = open_warehouse(wh)
    try:
        score_pending.queue_pending(con, resolve_scorers(None), False, None, None)
        run_id = start_run(con, RunKind.SCORE, {})
        old = con.sql("SELECT * FROM scores WHERE turn_id = $t",
                      params={"t": turn.turn_id}).to_arrow_table()
        assert old.num_rows == len(REGISTRY)
        write_score_table(con, old, run_id, settle=score_queue.dequeue)
        queued = con.execute("SELECT count(*) FROM score_queue WHERE turn_id = $t",
                             {"t": turn.turn_id}).fetchall()
        assert queued == [(1,)]
    finally:
        con.close()


def off_for_b(agent: str | None) -> Sequence[str]:
    """Per-agent choice: agent 'b' runs no tool_usage and no answer_length."""
    every = sorted(REGISTRY)
    return [n for n in every if agent != "b" or n not in ("tool_usage", "answer_length")]


@dataclass(frozen=True)
class Check:
    """A run to compare, and whether it may read the queue (False: it must do the full
    pass; the queue is then refilled, as that run would)."""

    from_queue: bool
    scorers: tuple[str, ...] | None = None
    sample: float | None = None
    choice: ScorersForAgent | None = None


def pending_both(wh: Path, check: Check) -> tuple[bool, set[Pair], set[Pair]]:
    """(read the queue?, the pairs `queue_pending` found, the pairs of the full pass)."""
    chosen = resolve_scorers(check.scorers)
    passes: list[bool] = []
    full_pass = score_pending._full_pass

    def counted(*a: object, **kw: object) -> None:
        passes.append(True)
        full_pass(*a, **kw)  # type: ignore[arg-type]

    con = open_warehouse(wh)
    mp = pytest.MonkeyPatch()
    mp.setattr(score_pending, "_full_pass", counted)
    try:
        score_pending.queue_pending(con, chosen, False, check.sample, check.choice)
        found = set(con.execute("SELECT turn_id, scorer FROM _pending").fetchall())
        mp.undo()
        con.execute(score_pending.CREATE_PENDING)
        enabled = None if check.choice is None else score_pending._agent_choice(
            con, check.choice, [s.name for s in chosen])[0]
        bucket = None if check.sample is None else round(check.sample * 1_000_000)
        full_pass(con, chosen, bucket, False, enabled)
        full = set(con.execute("SELECT turn_id, scorer FROM _pending").fetchall())
    finally:
        mp.undo()
        con.close()
    return not passes, found, full


ALL = Check(True)
Step = Callable[[Path], None]
T = [_turn(i, agent="a" if i % 2 else "b") for i in range(40)]
CASES = [{"case_id": "c1", "input": "anything", "canary": "done"},
         {"case_id": "c2", "input": T[5].request, "canary": "nope"}]
STATES: list[tuple[str, Step, tuple[Check, ...]]] = [
    ("fresh load, never scored", lambda wh: ingest(wh, T[:30]), (Check(False),)),
    ("scored", lambda wh: score(wh), (ALL,)),
    ("new turns, changed content, identical reloads", lambda wh: ingest(
        wh, [*T[30:40], *(changed(t, "other") for t in T[:5]), *T[5:8]]), (ALL,)),
    # The dequeue is in the batch's transaction: scores and queue roll back together.
    ("killed in a batch's dequeue", lambda wh: score(wh, kill="dequeue"), (ALL,)),
    ("killed between batches", lambda wh: score(wh, kill="batch"), (ALL,)),
    ("scored again", lambda wh: score(wh), (ALL,)),
    ("labels added (by id, by text)", lambda wh: (
        ingest(wh, [_turn(40, case_id="c1"), _turn(41, request=T[5].request)]),
        score(wh), labels(wh, CASES)), (ALL,)),
    ("the same labels again", lambda wh: (score(wh), labels(wh, CASES)), (ALL,)),
    ("a label changed", lambda wh: labels(wh, [{**CASES[0], "canary": "x"}]), (ALL,)),
    ("a case that now wins the text join", lambda wh: (score(wh), labels(
        wh, [{"case_id": "a0", "input": T[5].request, "canary": "done"}])), (ALL,)),
    ("a label removed by SQL", lambda wh: (score(wh), sql(
        wh, "DELETE FROM labels WHERE case_id = 'c1'")), (Check(False), ALL)),
    ("a turn gone from a rebuilt trace", lambda wh: (score(wh), ingest(
        wh, [changed(T[9], "x")], rebuilt=[T[9].trace_id, T[10].trace_id])), (ALL,)),
    ("a scorer subset run", lambda wh: (ingest(wh, [changed(t, "y") for t in T[11:15]]),
                                         score(wh, scorers=["tool_grounding"])),
     (ALL, Check(True, ("tool_grounding",)))),
    ("a sample", lambda wh: (score(wh), ingest(wh, [changed(t, "z") for t in T[:30]]),
                             score(wh, sample=0.5)),
     (Check(True, sample=0.5), Check(True, sample=0.25), ALL)),
    ("a per-agent choice", lambda wh: (score(wh), ingest(wh, [changed(t, "w") for t in T[:20]]),
                                       score(wh, scorers_for_agent=off_for_b)),
     (Check(True, choice=off_for_b), ALL)),
    ("stale scores written for a queued turn", lambda wh: (score(wh), stale_scores(wh)),
     (ALL,)),
    ("scores edited by SQL", lambda wh: (score(wh), sql(
        wh, "UPDATE scores SET content_hash = 'x' WHERE turn_id = 'turn-00003'")),
     (Check(False), ALL)),
]


@pytest.mark.parametrize("upto", range(len(STATES)), ids=[name for name, _, _ in STATES])
def test_the_queue_finds_what_the_full_pass_finds(tmp_path: Path, upto: int) -> None:
    wh = tmp_path / "wh"
    open_warehouse(wh).close()
    with registered("answer_length", answer_length):
        for _, step, _ in STATES[:upto]:
            step(wh)
        _, step, checks = STATES[upto]
        step(wh)
        pending = False
        for check in checks:
            from_queue, found, full = pending_both(wh, check)
            assert (from_queue, found) == (check.from_queue, full), check
            pending = pending or bool(full)
        assert pending or upto in (1, 5, 7), "a state with nothing pending tests little"


def test_a_scorer_version_bump_takes_the_full_pass_once(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    ingest(wh, T[:10])
    with registered("answer_length", answer_length):
        score(wh)
        assert pending_both(wh, ALL) == (True, set(), set())
    with registered("answer_length", answer_length, version="2"):
        from_queue, found, full = pending_both(wh, ALL)
        assert (from_queue, found, len(full)) == (False, full, 10)
        assert pending_both(wh, ALL) == (True, full, full)
        score(wh, kill="batch")
        from_queue, found, full = pending_both(wh, ALL)
        assert (from_queue, found, len(full)) == (True, full, 6)


def test_finished_turns_leave_the_queue_and_others_stay(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    ingest(wh, T[:10])
    score(wh)
    con = open_warehouse(wh)
    assert con.execute("SELECT count(*) FROM score_queue").fetchall() == [(0,)]
    con.close()
    ingest(wh, [changed(t, "v") for t in T[:6]])
    score(wh, scorers=["tool_grounding"])  # the other scorers still owe these turns
    con = open_warehouse(wh)
    assert con.execute("SELECT count(DISTINCT turn_id) FROM score_queue").fetchall() == [(6,)]
    con.close()
    con = open_warehouse(wh)
    before = con.execute("SELECT count(*) FROM _commits").fetchall()
    con.close()
    score(wh, kill="dequeue")  # in the batch's transaction: nothing of it committed
    con = open_warehouse(wh)
    assert con.execute("SELECT count(*) FROM _commits").fetchall() == before
    assert con.execute("SELECT count(DISTINCT turn_id) FROM score_queue").fetchall() == [(6,)]
    con.close()
    score(wh)
    con = open_warehouse(wh)
    assert con.execute("SELECT count(*) FROM score_queue").fetchall() == [(0,)]
    con.close()


@pytest.mark.parametrize("narrow", [{"sample": 0.5}, {"scorers_for_agent": off_for_b}])
def test_a_scope_made_narrow_takes_the_full_pass_when_a_run_is_wider(
        tmp_path: Path, narrow: dict[str, object]) -> None:
    """The queue's first scope is a sample (or an agent choice): the turns it leaves out
    were never queued, so a wider run must look at every turn, and then it is the scope."""
    wh = tmp_path / "wh"
    ingest(wh, T[:20])
    score(wh, **narrow)
    check = Check(True, sample=narrow.get("sample"), choice=narrow.get("scorers_for_agent"))
    assert pending_both(wh, check) == (True, set(), set())
    ingest(wh, [changed(t, "u") for t in T[:4]])
    from_queue, found, full = pending_both(wh, ALL)
    assert (from_queue, found) == (False, full)
    assert {t for t, _ in full} > {t.turn_id for t in T[:4]}  # turns the queue never held
    assert pending_both(wh, ALL) == (True, full, full)


PRINTS_0014 = """
SELECT coalesce((SELECT bit_xor(turn_print(turn_id, content_hash)) FROM turns), 0),
       coalesce((SELECT bit_xor(score_print(turn_id, scorer, scorer_version, status,
                                            content_hash)) FROM scores), 0),
       coalesce((SELECT bit_xor(label_print(case_id, input_norm, canary, ideal_response,
                                            match_mode, expected_tools, expected_tools_mode,
                                            should_decline)) FROM labels), 0)
"""


@pytest.mark.parametrize("seen", [True, False])
def test_migration_0015_keeps_a_scope_only_where_the_fingerprints_held(
        tmp_path: Path, seen: bool) -> None:
    """A warehouse at 0014: its scopes stand after the upgrade if every write went through
    the queue's writers (the fingerprints match), else none does (the full pass next)."""
    wh = tmp_path / "wh"
    ingest(wh, T[:6])
    with registered("answer_length", answer_length):
        score(wh)
    con = duckdb.connect(str(wh / DB_FILE))
    try:
        # Back to 0014, with the fingerprints of what is there (or of something else).
        con.execute("DELETE FROM _migrations WHERE name >= '0015'")
        state = "CREATE TABLE score_queue_state"
        sql_0014 = next(m.sql for m in migrations() if m.name.startswith("0014"))
        con.execute(state + sql_0014.split(state, 1)[1])  # the table and the macros
        prints = con.execute(PRINTS_0014).fetchall()[0]
        con.execute("INSERT INTO score_queue_state VALUES ($t, $s, $l)",
                    {"t": prints[0], "s": prints[1] if seen else prints[1] ^ 1, "l": prints[2]})
        before = con.execute("SELECT count(*) FROM score_queue_scope").fetchall()[0][0]
    finally:
        con.close()
    assert before == len(REGISTRY) + 1
    con = open_warehouse(wh)
    try:
        after = con.execute("SELECT count(*) FROM score_queue_scope").fetchall()[0][0]
        assert after == (before if seen else 0)
        assert not con.execute("SELECT * FROM duckdb_tables() "
                               "WHERE table_name = 'score_queue_state'").fetchall()
    finally:
        con.close()
