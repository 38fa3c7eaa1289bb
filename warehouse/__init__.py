"""The warehouse: the DuckDB file, its migrations, scores, runs and published snapshots.

Writers hold `writer_lock` and use `open_warehouse`; readers use the published snapshot
(`turnscore.warehouse.publish.publish`; not re-exported here, because a function named like
its module would hide the module) or `run_query`, which never meets a writer's lock.
"""

from turnscore.warehouse.db import migrate, open_readonly, open_warehouse, quote_ident, writer_lock
from turnscore.warehouse.errors import (
    InvalidOption,
    MigrationError,
    QueryRejected,
    UnknownScorer,
    WarehouseBusy,
    WarehouseError,
    WarehouseMissing,
)
from turnscore.warehouse.query import QueryResult, run_query
from turnscore.warehouse.runs import Outcome, RunKind, finish_run, start_run
from turnscore.warehouse.score_run import ScorerCounts, ScoreReport, score_turns
from turnscore.warehouse.scores import ScoreRow, write_scores

__all__ = [
    "InvalidOption",
    "MigrationError",
    "Outcome",
    "QueryRejected",
    "QueryResult",
    "RunKind",
    "ScoreReport",
    "ScoreRow",
    "ScorerCounts",
    "UnknownScorer",
    "WarehouseBusy",
    "WarehouseError",
    "WarehouseMissing",
    "finish_run",
    "migrate",
    "open_readonly",
    "open_warehouse",
    "quote_ident",
    "run_query",
    "score_turns",
    "start_run",
    "write_scores",
    "writer_lock",
]
