"""The warehouse: the DuckDB file, its migrations, scores, runs and published snapshots.

Writers hold `writer_lock` and use `open_warehouse`; readers use the published snapshot
(`turnscore.warehouse.publish.publish`; not re-exported here, because a function named like
its module would hide the module) or `run_query`, which never meets a writer's lock.

Scoring's and querying's names are imported on first use (PEP 562), not with the
package: an ingest imports `turnscore.warehouse.ingest_run`, and through this package it
would pay for the scorers, polars, pandas and the judge client too (a third of a second
and more at every run's start, measured).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
from turnscore.warehouse.runs import Outcome, RunKind, finish_run, start_run

if TYPE_CHECKING:
    from turnscore.warehouse.query import QueryResult, run_query
    from turnscore.warehouse.score_run import ScorerCounts, ScoreReport, score_turns
    from turnscore.warehouse.scores import ScoreRow, write_scores

_LAZY = {
    "QueryResult": "query",
    "run_query": "query",
    "ScorerCounts": "score_run",
    "ScoreReport": "score_run",
    "score_turns": "score_run",
    "ScoreRow": "scores",
    "write_scores": "scores",
}
"""The names imported on first use, and their modules."""

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


def __getattr__(name: str) -> Any:
    """A name of `_LAZY`, imported from its module on first use; or one of those modules,
    which importing the package used to import too."""
    module = _LAZY.get(name, name)
    if module not in _LAZY.values():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = importlib.import_module(f"{__name__}.{module}")
    if name in _LAZY:
        value = getattr(value, name)
    globals()[name] = value
    return value
