"""Finding a score run's pending (turn, scorer) pairs, whichever engine scores them.

A pair is pending when the turn has no score from that scorer, or the score came from
another scorer version, or is an `error` (errors are retried), or is stale (the
`score_stale` macro, migration 0013). `queue_pending` reads them from the score queue's
turns when the queue stands for the full pass (`score_queue`), else by the full pass over
every turn in scope (`INSERT_PENDING`), which refills the queue; `--rescore` makes every
pair of the scope pending, by the full pass. Moved out of `score_run` with the queue, to
keep that module to the run itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import duckdb
import pyarrow as pa

from turnscore.scorers.base import REGISTRY, Scorer
from turnscore.warehouse import score_queue
from turnscore.warehouse.labels import LABEL_FIELDS, refresh_request_norms
from turnscore.warehouse.score_queue import RunScope

_SAMPLE_BUCKETS = 1_000_000

CREATE_PENDING = """
CREATE OR REPLACE TEMP TABLE _pending (turn_id VARCHAR, scorer VARCHAR, prior BOOLEAN,
                                       case_id VARCHAR, label_hash VARCHAR, content_hash VARCHAR)
"""
# The turns that join a case, with the case and its label_hash (the `turn_cases` macro,
# migration 0010), read once per run; none without labels.
CREATE_TURN_CASES = "CREATE OR REPLACE TEMP TABLE _turn_cases AS SELECT * FROM turn_cases()"
CREATE_NO_TURN_CASES = """
CREATE OR REPLACE TEMP TABLE _turn_cases (turn_id VARCHAR, case_id VARCHAR, label_hash VARCHAR)
"""
HAS_LABELS = "SELECT EXISTS (SELECT 1 FROM labels)"
# The full pass (run when the score queue cannot stand for it, see `score_queue`): every
# chosen scorer's pending pairs in one pass: each turn in scope meets the run's
# scorers (`_run_scorers`: name, version, whether it reads labels) and its score from
# each. Staleness is the `score_stale` macro (migration 0013), the rule `score_coverage`
# counts by. `labels` (the scorer reads labels) adds only the rows such a scorer wrote
# before scores recorded the case they read (no ':' in the hash): rescored once.
_RUN_SCORERS = "_run_scorers"
INSERT_PENDING = f"""
INSERT INTO _pending
SELECT t.turn_id, r.scorer, s.turn_id IS NOT NULL, c.case_id, c.label_hash, t.content_hash
FROM (SELECT turn_id, content_hash FROM turns
      WHERE $sample IS NULL OR md5_number(turn_id) % {_SAMPLE_BUCKETS} < $sample) AS t
CROSS JOIN {_RUN_SCORERS} AS r
LEFT JOIN _turn_cases c ON c.turn_id = t.turn_id
LEFT JOIN scores s ON s.turn_id = t.turn_id AND s.scorer = r.scorer
WHERE $rescore OR s.turn_id IS NULL OR s.scorer_version <> r.version OR s.status = 'error'
   OR score_stale(s.content_hash, t.content_hash, c.label_hash)
   OR (r.labels AND NOT contains(s.content_hash, ':'))
"""
# Per-agent scorer choice: drop the pairs whose scorer is not enabled for the turn's agent
# (the agent is the warehouse's `turn_agent` macro, as in the views).
SELECT_AGENTS = "SELECT DISTINCT turn_agent(agent_name, service_name) FROM turns"
DELETE_DISABLED_PENDING = """
DELETE FROM _pending AS p
WHERE NOT EXISTS (
    SELECT 1 FROM turns AS t
    JOIN _enabled AS e ON e.agent IS NOT DISTINCT FROM turn_agent(t.agent_name, t.service_name)
    WHERE t.turn_id = p.turn_id AND e.scorer = p.scorer
)
"""
COUNT_TURNS_IN_SCOPE = (
    f"SELECT count(*) FROM turns WHERE $sample IS NULL "
    f"OR md5_number(turn_id) % {_SAMPLE_BUCKETS} < $sample"
)


ScorersForAgent = Callable[[str | None], Sequence[str]]
"""The scorers to run on an agent's turns (`Config.scorers_for`); the agent is the turn's
agent name, else its service name."""



def queue_pending(con: duckdb.DuckDBPyConnection, chosen: Sequence[Scorer], rescore: bool,
                  sample: float | None, scorers_for_agent: ScorersForAgent | None
                  ) -> tuple[int, tuple[tuple[str | None, str], ...], dict[str, int]]:
    """Fill `_pending` with the run's (turn, scorer) pairs, whichever engine scores them:
    from the score queue's turns when it stands for the full pass (`score_queue.trust`),
    else by the full pass, which refills the queue; `rescore` always takes the full pass.

    Returns the turns in scope, the (agent, scorer) pairs switched off, and the pending
    pairs per scorer.
    """
    bucket = None if sample is None else round(sample * _SAMPLE_BUCKETS)
    in_scope = con.execute(COUNT_TURNS_IN_SCOPE, {"sample": bucket}).fetchall()[0][0]
    _join_cases(con)
    con.execute(CREATE_PENDING)
    names = [s.name for s in chosen]
    enabled, disabled = (None, ()) if scorers_for_agent is None else _agent_choice(
        con, scorers_for_agent, names)
    run = RunScope({s.name: (s.version, reads_labels(s)) for s in chosen}, bucket,
                   {n: frozenset(a for a, m in disabled if m == n) for n in names})
    known = sorted(REGISTRY)
    trusted = score_queue.trust(con, run)
    if not trusted:
        _full_pass(con, chosen, bucket, False, enabled)
        score_queue.refill(con, run, known)
    if rescore:
        con.execute(CREATE_PENDING)
        _full_pass(con, chosen, bucket, True, enabled)
    from_queue = trusted and not rescore
    score_queue.derive(con, run, known, fill=from_queue)
    if from_queue and enabled is not None:
        _drop_disabled(con, enabled)
    score_queue.keep_unscored(con)
    pending = dict(con.execute("SELECT scorer, count(*) FROM _pending GROUP BY scorer").fetchall())
    return in_scope, disabled, pending


def _full_pass(con: duckdb.DuckDBPyConnection, chosen: Sequence[Scorer], bucket: int | None,
               rescore: bool, enabled: list[tuple[str | None, str]] | None) -> None:
    con.register(_RUN_SCORERS, pa.table({
        "scorer": pa.array([s.name for s in chosen], pa.string()),
        "version": pa.array([s.version for s in chosen], pa.string()),
        "labels": pa.array([reads_labels(s) for s in chosen], pa.bool_()),
    }))
    try:
        con.execute(INSERT_PENDING, {"sample": bucket, "rescore": rescore})
    finally:
        con.unregister(_RUN_SCORERS)
    if enabled is not None:
        _drop_disabled(con, enabled)


def reads_labels(s: Scorer) -> bool:
    """Whether `s` reads labels: its scores then record the case they read."""
    return any(f in LABEL_FIELDS for f in s.reads)


def _join_cases(con: duckdb.DuckDBPyConnection) -> None:
    """`_turn_cases`: each turn's case now, set-based (see `labels.TURN_CASES`)."""
    if con.execute(HAS_LABELS).fetchall()[0][0]:
        refresh_request_norms(con)
        con.execute(CREATE_TURN_CASES)
    else:  # nothing to join: and no request needs normalising
        con.execute(CREATE_NO_TURN_CASES)


def _agent_choice(con: duckdb.DuckDBPyConnection, scorers_for_agent: ScorersForAgent,
                  run: Sequence[str]
                  ) -> tuple[list[tuple[str | None, str]], tuple[tuple[str | None, str], ...]]:
    """The (agent, scorer) pairs enabled, and those switched off of the scorers the run
    chose (`run`): a scorer nobody selected is not "disabled", and would otherwise be
    listed, all its turns disabled, by `score_coverage`, which shows a scorer switched off
    for every agent."""
    agents: list[str | None] = [row[0] for row in con.execute(SELECT_AGENTS).fetchall()]
    enabled = [(agent, name) for agent in agents for name in scorers_for_agent(agent)]
    on = set(enabled)
    off = tuple((agent, name) for agent in agents for name in sorted(run)
                if (agent, name) not in on)
    return enabled, off


def _drop_disabled(con: duckdb.DuckDBPyConnection, enabled: list[tuple[str | None, str]]
                   ) -> None:
    """Drop the pending pairs of scorers not enabled for the turn's agent."""
    con.register("_enabled", pa.table({
        "agent": pa.array([a for a, _ in enabled], pa.string()),
        "scorer": pa.array([n for _, n in enabled], pa.string()),
    }))
    try:
        con.execute(DELETE_DISABLED_PENDING)
    finally:
        con.unregister("_enabled")
