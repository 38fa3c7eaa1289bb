"""The `scores` contract (DESIGN §4), defined once: one row per (turn, scorer).

`SCORE_FIELDS` is the source: the writer's Arrow schema and column lists
(`warehouse.scores`), the README table (`python -m turnscore.docs`) and the check of the
migrated `scores` and `scores_history` tables (`tests/warehouse/test_db.py`) are derived
from it. The migrations that made the tables are history and stay as written; a change
here fails that test until a new migration makes the tables match.
"""

from __future__ import annotations

import pyarrow as pa

from turnscore.ingest.schema import Field

TS = pa.timestamp("us", tz="UTC")

SCORE_FIELDS: tuple[Field, ...] = (
    Field("turn_id", pa.string(), False, "The scored turn (`turns.turn_id`)."),
    Field("scorer", pa.string(), False, "Scorer name; with turn_id, the primary key."),
    Field("scorer_version", pa.string(), False, "Scorer version (judged: `<rules logic>/<prompt version>`); another one makes the row stale."),
    Field("status", pa.string(), False, "`scored`, `inconclusive` (a label the scorer needs is missing), `not_run` (nothing to judge) or `error` (retried next run)."),
    Field("value", pa.float64(), True, "0-1 for code scorers, 0-10 for judged ones; null unless scored."),
    Field("label", pa.string(), True, "Short verdict: `pass`, `fail`, `grounded`, a rubric band, ..."),
    Field("explanation", pa.string(), True, "Why; for judged scorers the assessment, written before the score."),
    Field("details", pa.string(), True, "Structured evidence (JSON): per-call verdicts, missing canaries, ..."),
    Field("judge", pa.string(), True, "Model id, `rules-v1`, or null for code scorers."),
    Field("prompt_sha", pa.string(), True, "Hash of the judge prompt used."),
    Field("input_tokens", pa.int64(), True, "Judge input tokens."),
    Field("output_tokens", pa.int64(), True, "Judge output tokens."),
    Field("cost_usd", pa.float64(), True, "What judging the turn cost."),
    Field("latency_ms", pa.float64(), True, "Judge latency."),
    Field("attempts", pa.int32(), False, "Judge requests made (retries included); 0 for code scorers."),
    Field("error", pa.string(), True, "Why scoring failed (status `error`)."),
    Field("content_hash", pa.string(), False, "What the score was computed from: the turn's content_hash, and for a scorer that reads labels `:` and its case's label_hash (the `scored_hash` macro)."),
    Field("run_id", pa.string(), False, "Score run that wrote the row."),
    Field("scored_at", TS, False, "When the row was written, UTC."),
)
HISTORY_FIELDS: tuple[Field, ...] = (
    *SCORE_FIELDS,
    Field("replaced_at", TS, False, "When a newer score replaced the row (`scores_history`)."),
)
"""`scores_history`: replaced rows of `scores`, with when they were replaced."""
COLUMNS: tuple[str, ...] = tuple(f.name for f in SCORE_FIELDS)
"""The `scores` columns in table order: what writers and copies to history name."""
JSON_COLUMNS = frozenset({"details"})
"""Columns stored as DuckDB JSON (text in Arrow)."""
