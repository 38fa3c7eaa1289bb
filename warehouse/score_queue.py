"""The score queue: the turns whose scores may be stale, kept as they change (issue 15).

A score run used to find its pending (turn, scorer) pairs by joining every turn to every
score; at a million turns that pass was a large part of a night that scores ten thousand.
Now the writers that change what the pending rule reads put the turns they touch in
`score_queue` (migration 0014), in their own transaction:

- ingest (`queue_loaded_turns`): each turn inserted or replaced;
- labels (`queue_case_changes` before the upsert, `queue_case_turns` after): each turn
  joining a case that is new or whose fields or text changed, joined before or after;
- the score runner (`dequeue`, in each batch's transaction): nothing enters; a turn
  leaves once each scorer of the scope has a current score for it;
- scores written outside a run (`scores.write_score_table`'s default, `queue_written`):
  their turns, which may be pending now;
- any other writer (a test's loader, a bench's copies): `queue_turns` for what it wrote,
  or, after an edit by hand it cannot name the turns of, `forget_scope` (the next run
  takes the full pass).

The queue is complete for a *scope* (`score_queue_scope`: per scorer, its version, a
sample and the agents switched off): no turn outside the queue has a pending pair in it.
A run inside the scope for each chosen scorer reads the queue's turns only (`derive`,
the same rule as `score_pending.INSERT_PENDING`, over those turns); any other run (a new
scorer or version, a larger sample, an agent switched back on, `--rescore`) does the full
pass, puts what it finds in the queue and takes its scorers' scope as its own (`refill`).

Leaving: a turn leaves when it has no pending pair in the scope, either at the start of
a run (outside every scorer's sample or agents, already scored, or gone) or after the
batch that scored it, with every pending scorer's score current (not `error`, not stale
for the turn: a recovered score may predate the turn's last change) and no pair of the
scope outside this run (another scorer, a smaller sample). The dequeue is a statement of
the batch's own transaction (`scores.write_score_table`'s `settle`), so the scores and
the queue commit together: a run killed anywhere leaves both as they were.

Writes around all of these (SQL by hand on the warehouse file) are not seen: call
`forget_scope`, or score with `--rescore`. (Until migration 0015, xor fingerprints of
turns, scores and labels caught them, at the cost of a scan of all three every run.) A
warehouse from before migration 0014 has no scope, so its first run does the full pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from turnscore.warehouse.db import quote_ident, transaction

SELECT_SCOPE = "SELECT scorer, version, sample_bucket FROM score_queue_scope"
SELECT_OFF = "SELECT scorer, agent FROM score_queue_off"
_NOT_QUEUED = "turn_id NOT IN (SELECT turn_id FROM score_queue)"

# Ingest, in `_upsert` before the turns are replaced (`_changed_turns`: new or rebuilt).
QUEUE_LOADED_TURNS = f"""
INSERT INTO score_queue
SELECT DISTINCT turn_id, 'turn', now() FROM _changed_turns WHERE {_NOT_QUEUED}
"""
# Any other writer of turns (a test's loader, a bench's copies): the turns it names.
QUEUE_TURNS = f"""
INSERT INTO score_queue
SELECT DISTINCT turn_id, $reason, now() FROM (SELECT unnest($turns::VARCHAR[]) AS turn_id)
WHERE {_NOT_QUEUED}
"""
# Scores written outside a score run (`scores.write_score_table`'s default): their turns,
# which may be pending now (an error, another version, a stale hash).
QUEUE_WRITTEN = f"""
INSERT INTO score_queue
SELECT DISTINCT turn_id, 'score', now() FROM {{written}}
WHERE {_NOT_QUEUED}
"""
# Labels, before the upsert of `_new_labels`: the cases new or changed in what a join or
# a label_hash reads (0010_turn_cases.sql: its id, text and fields).
_LABEL_READS = ("input_norm", "canary", "ideal_response", "match_mode", "expected_tools",
                "expected_tools_mode", "should_decline")
QUEUE_CASE_CHANGES = f"""
CREATE OR REPLACE TEMP TABLE _changed_cases AS
SELECT n.case_id FROM _new_labels AS n LEFT JOIN labels AS l ON l.case_id = n.case_id
WHERE l.case_id IS NULL
   OR row({", ".join(f"n.{c}" for c in _LABEL_READS)})
      IS DISTINCT FROM row({", ".join(f"l.{c}" for c in _LABEL_READS)})
"""
# Labels: the turns joining a changed case (before the upsert, and again after it).
QUEUE_CASE_TURNS = f"""
INSERT INTO score_queue
SELECT DISTINCT turn_id, 'case', now() FROM turn_cases()
WHERE case_id IN (SELECT case_id FROM _changed_cases) AND {_NOT_QUEUED}
"""
HAS_CHANGED_CASES = "SELECT EXISTS (SELECT 1 FROM _changed_cases)"

# The score runner's side. `_pending` is `score_pending.CREATE_PENDING`'s table.
REFILL_QUEUE = f"""
INSERT INTO score_queue SELECT DISTINCT turn_id, 'scan', now() FROM _pending WHERE {_NOT_QUEUED}
"""
CLEAR_SCOPE = "DELETE FROM score_queue_scope; DELETE FROM score_queue_off"
DROP_SCOPE = """
DELETE FROM score_queue_scope WHERE scorer IN (SELECT scorer FROM _scope);
DELETE FROM score_queue_off WHERE scorer IN (SELECT scorer FROM _scope)
"""
# (Bound parameters only in a script's last statement.)
INSERT_SCOPE = """
INSERT INTO score_queue_off SELECT scorer, agent FROM _off;
INSERT INTO score_queue_scope SELECT scorer, version, labels, $bucket FROM _scope
"""
DROP_UNKNOWN_SCOPE = """
DELETE FROM score_queue_scope WHERE scorer NOT IN (SELECT scorer FROM _known);
DELETE FROM score_queue_off WHERE scorer NOT IN (SELECT scorer FROM _known)
"""
_BUCKETS = 1_000_000
# Each queued turn still present, with each scorer of the scope that it is pending on:
# `score_pending.INSERT_PENDING`'s rule (`score_stale`, migration 0013), per scorer its own
# version, sample and agents. The queue's scores are picked first: a hash join of every
# score with the queue's turns took twice as long (bench/night.py at 200k turns).
QUEUE_PAIRS = f"""
CREATE OR REPLACE TEMP TABLE _queue_pairs AS
SELECT t.turn_id, b.scorer, s.turn_id IS NOT NULL AS prior, c.case_id, c.label_hash,
       t.content_hash
FROM (SELECT turn_id, content_hash, turn_agent(agent_name, service_name) AS agent FROM turns
      WHERE turn_id IN (SELECT turn_id FROM score_queue)) AS t
CROSS JOIN score_queue_scope AS b
LEFT JOIN _turn_cases c ON c.turn_id = t.turn_id
LEFT JOIN (SELECT * FROM scores WHERE turn_id IN (SELECT turn_id FROM score_queue)) AS s
  ON s.turn_id = t.turn_id AND s.scorer = b.scorer
WHERE CASE WHEN b.sample_bucket IS NULL THEN true
           ELSE md5_number(t.turn_id) % {_BUCKETS} < b.sample_bucket END
  AND NOT EXISTS (SELECT 1 FROM score_queue_off AS o
                  WHERE o.scorer = b.scorer AND o.agent IS NOT DISTINCT FROM t.agent)
  AND (s.turn_id IS NULL OR s.scorer_version <> b.version OR s.status = 'error'
       OR score_stale(s.content_hash, t.content_hash, c.label_hash)
       OR (b.labels AND NOT contains(s.content_hash, ':')))
"""
DROP_CLEAN = "DELETE FROM score_queue WHERE turn_id NOT IN (SELECT turn_id FROM _queue_pairs)"
PENDING_FROM_QUEUE = f"""
INSERT INTO _pending
SELECT turn_id, scorer, prior, case_id, label_hash, content_hash FROM _queue_pairs
WHERE scorer IN (SELECT scorer FROM _scope)
  AND CASE WHEN $bucket IS NULL THEN true ELSE md5_number(turn_id) % {_BUCKETS} < $bucket END
"""
# Turns with a pending pair of the scope that this run does not score: they stay queued.
KEPT = """
CREATE OR REPLACE TEMP TABLE _kept AS
SELECT DISTINCT q.turn_id FROM _queue_pairs AS q
WHERE NOT EXISTS (SELECT 1 FROM _pending AS p WHERE p.turn_id = q.turn_id
                  AND p.scorer = q.scorer)
"""
# In a batch's transaction, after its scores (`{written}`) are written: its turns whose
# every pending pair now has a current score leave.
# Current: not an error, and not stale for the turn as `_pending` found it (its
# content_hash and case; neither moves under the writer lock): a score recovered from a
# dead run may have been computed from an older turn, and its turn must stay queued.
DEQUEUE = """
DELETE FROM score_queue WHERE turn_id IN (
    SELECT p.turn_id FROM _pending AS p
    LEFT JOIN {written} AS w ON w.turn_id = p.turn_id AND w.scorer = p.scorer
    WHERE p.turn_id IN (SELECT turn_id FROM {written})
      AND p.turn_id NOT IN (SELECT turn_id FROM _kept)
    GROUP BY p.turn_id HAVING bool_and(coalesce(
        w.status <> 'error' AND NOT score_stale(w.content_hash, p.content_hash, p.label_hash),
        false)))
"""


@dataclass(frozen=True, slots=True)
class RunScope:
    """What a run scores: its scorers (name -> version, whether it reads labels), its
    sample bucket (None: every turn) and, per scorer, the agents switched off."""

    scorers: Mapping[str, tuple[str, bool]]
    bucket: int | None
    off: Mapping[str, frozenset[str | None]]


def queue_loaded_turns(con: duckdb.DuckDBPyConnection) -> None:
    """Ingest: queue `_changed_turns`. (A turn gone leaves at the next run: a queued turn
    gone has nothing pending.)"""
    con.execute(QUEUE_LOADED_TURNS)


def queue_turns(con: duckdb.DuckDBPyConnection, turn_ids: Sequence[str], *,
                reason: str = "edit") -> None:
    """Queue `turn_ids`: for a writer of turns or scores other than ingest and the score
    runner (a test's loader, a bench's copies), in the writer's transaction if it has one."""
    con.execute(QUEUE_TURNS, {"turns": list(turn_ids), "reason": reason})


def queue_written(con: duckdb.DuckDBPyConnection, written: str) -> None:
    """Queue the turns of the scores in `written` (a table or view on `con`): what
    `scores.write_score_table` runs in its transaction for a writer outside a score run."""
    con.execute(QUEUE_WRITTEN.format(written=quote_ident(written)))


def dequeue(con: duckdb.DuckDBPyConnection, written: str) -> None:
    """A score run's `scores.Settle`: in the batch's transaction, its turns whose pending
    pairs all have a current score in `written` (the batch's rows) leave the queue."""
    con.execute(DEQUEUE.format(written=quote_ident(written)))


def forget_scope(con: duckdb.DuckDBPyConnection) -> None:
    """After writes the queue cannot follow (SQL by hand on labels, turns or scores): no
    scorer keeps a scope, so the next run takes the full pass and refills the queue."""
    con.execute(CLEAR_SCOPE)


def queue_case_changes(con: duckdb.DuckDBPyConnection) -> None:
    """Labels, before upserting `_new_labels`: find the changed cases, queue their turns
    as joined now. `request_norms` must be current (the text join reads it)."""
    con.execute(QUEUE_CASE_CHANGES)
    if con.execute(HAS_CHANGED_CASES).fetchall()[0][0]:
        con.execute(QUEUE_CASE_TURNS)


def queue_case_turns(con: duckdb.DuckDBPyConnection) -> None:
    """Labels, after the upsert: queue the turns joining a changed case now."""
    if con.execute(HAS_CHANGED_CASES).fetchall()[0][0]:
        con.execute(QUEUE_CASE_TURNS)
    con.execute("DROP TABLE _changed_cases")


def trust(con: duckdb.DuckDBPyConnection, run: RunScope) -> bool:
    """Whether every chosen scorer runs inside the queue's scope (a warehouse that never
    had a full pass, upgraded or new, has none)."""
    scope = {name: (version, bucket) for name, version, bucket in
             con.execute(SELECT_SCOPE).fetchall()}
    off: dict[str, set[str | None]] = {}
    for name, agent in con.execute(SELECT_OFF).fetchall():
        off.setdefault(name, set()).add(agent)

    def inside(name: str, version: str) -> bool:
        if name not in scope or scope[name][0] != version:
            return False
        bucket = scope[name][1]
        wider = bucket is not None and (run.bucket is None or run.bucket > bucket)
        return not wider and off.get(name, set()) <= run.off.get(name, frozenset())

    return all(inside(n, v) for n, (v, _) in run.scorers.items())


def refill(con: duckdb.DuckDBPyConnection, run: RunScope, known: Sequence[str]) -> None:
    """After the full pass filled `_pending`: queue its turns and make the run's scope
    its scorers' own, in one transaction."""
    with _scope_tables(con, run, known), transaction(con):
        con.execute(REFILL_QUEUE)
        con.execute(DROP_SCOPE)
        con.execute(INSERT_SCOPE, {"bucket": run.bucket})


def derive(con: duckdb.DuckDBPyConnection, run: RunScope, known: Sequence[str], *,
           fill: bool) -> None:
    """The queue's pending pairs (`_queue_pairs`); drops queued turns with none; with
    `fill`, puts the run's in `_pending` (before the per-agent choice drops its own)."""
    with _scope_tables(con, run, known):
        con.execute(DROP_UNKNOWN_SCOPE)
        con.execute(QUEUE_PAIRS)
        con.execute(DROP_CLEAN)
        if fill:
            con.execute(PENDING_FROM_QUEUE, {"bucket": run.bucket})


def keep_unscored(con: duckdb.DuckDBPyConnection) -> None:
    """Once `_pending` is final: `_kept`, the queued turns this run cannot dequeue."""
    con.execute(KEPT)
    con.execute("DROP TABLE _queue_pairs")


@contextmanager
def _scope_tables(con: duckdb.DuckDBPyConnection, run: RunScope, known: Sequence[str]
                  ) -> Iterator[None]:
    """`_scope` (the run's scorers), `_off` (their agents switched off) and `_known` (the
    registered scorers), registered on `con` for the block."""
    names = sorted(run.scorers)
    off = [(n, a) for n in names for a in sorted(run.off.get(n, ()), key=str)]
    tables = {
        "_scope": pa.table({
            "scorer": pa.array(names, pa.string()),
            "version": pa.array([run.scorers[n][0] for n in names], pa.string()),
            "labels": pa.array([run.scorers[n][1] for n in names], pa.bool_())}),
        "_off": pa.table({"scorer": pa.array([n for n, _ in off], pa.string()),
                          "agent": pa.array([a for _, a in off], pa.string())}),
        "_known": pa.table({"scorer": pa.array(sorted(known), pa.string())}),
    }
    for name, table in tables.items():
        con.register(name, table)
    try:
        yield
    finally:
        for name in tables:
            con.unregister(name)
