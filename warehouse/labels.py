"""Loading labelled cases into the warehouse's `labels` table.

`load_labels` reads each file (`turnscore.scorers.labels.read_labels`), upserts the good
rows by `case_id` in one transaction (a later file wins over an earlier one for the same
id), records a `labels` run, and reports how the cases meet the turns already loaded:

- a turn joins the case whose `case_id` equals its own, else the cases whose
  `input_norm` equals its normalised request (the same rule as the score run);
- a loaded case that no turn joins is *unmatched* (not an error: its turns may arrive
  later);
- a turn joined by text to two or more cases is *ambiguous*; scoring uses the case with
  the smallest case_id, so give such cases ids and put the ids on the spans.

The join is SQL, the `turn_cases` macro (migration 0010), so the score run can find,
set-based, the turns whose case is new, changed or gone. Texts meet as md5s of the
normalised text: `labels` keeps `input_norm`, and `request_norms` keeps each turn's
normalised request, normalised by polars (`scorers.text`, the one implementation) once
per turn content (`refresh_request_norms`, before each join).

A case's `label_hash` (the `label_hashes` macro) is a fingerprint of what scorers read of
it (`LABEL_FIELDS` and its id), computed in SQL from the row whenever the join is (so a
case edited with SQL counts too). A scorer that reads labels folds the label_hash of its
turn's case into the hash its score records (the `scored_hash` macro:
`<turn content_hash>:<label_hash>`, '' for no case): when the turn's case now has
another hash, the score is stale like one of changed content (the `score_staleness` macro,
which the runner and `score_coverage` read). Rows written before this rule (no
`:`) are rescored once by the runner.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa

from turnscore.scorers.base import Case
from turnscore.scorers.labels import LabelError, LabelWarning, read_labels
from turnscore.scorers.text import normalize_expr, normalize_series
from turnscore.warehouse.db import open_warehouse, record_commit, transaction, writer_lock
from turnscore.warehouse.label_schema import LABEL_COLUMNS
from turnscore.warehouse.runs import (
    Outcome,
    RunKind,
    close_interrupted_runs,
    finish_run,
    start_run,
)
from turnscore.warehouse.score_queue import queue_case_changes, queue_case_turns

log = logging.getLogger(__name__)

MAX_LISTED = 50
"""Unmatched case ids and ambiguous turns listed in a report; the counts are complete."""

LABEL_FIELDS = ("canary", "ideal_response", "match_mode", "expected_tools",
                "expected_tools_mode", "should_decline")
"""The label fields scorers may read (a scorer names those it reads in `reads`); with the
case id, what `label_hash` covers (the `label_hashes` macro spells them in SQL; a test
checks they agree). `input` only joins, `tags` are for people."""
_COLUMNS = [f.name for f in LABEL_COLUMNS]
_READ = [c for c in _COLUMNS if c != "loaded_at"]
"""The columns written from `_new_labels` (all but `loaded_at`, stamped here)."""
UPSERT_LABELS = f"""
INSERT INTO labels ({", ".join(_COLUMNS)})
SELECT {", ".join(_READ)}, now()
FROM _new_labels
ON CONFLICT (case_id) DO UPDATE SET
{", ".join(f"{c} = EXCLUDED.{c}" for c in _COLUMNS if c != "case_id")}
"""
SELECT_EXISTING_IDS = """
SELECT case_id FROM labels WHERE case_id IN (SELECT case_id FROM _new_labels)
"""

# Turns whose request_norms row is missing or from older content.
SELECT_UNNORMED = """
SELECT t.turn_id, t.content_hash, t.request FROM turns AS t
WHERE NOT EXISTS (SELECT 1 FROM request_norms AS n
                  WHERE n.turn_id = t.turn_id AND n.content_hash = t.content_hash)
"""
UPSERT_NORMS = """
INSERT OR REPLACE INTO request_norms
SELECT turn_id, content_hash, md5_number(norm) FROM _norms
"""
COUNT_NORMS_AND_TURNS = "SELECT (SELECT count(*) FROM request_norms), (SELECT count(*) FROM turns)"
DELETE_ORPHAN_NORMS = """
DELETE FROM request_norms WHERE turn_id NOT IN (SELECT turn_id FROM turns)
"""
_NORM_BATCH = 100_000

# Every (turn, case) that joins by text: turns whose case_id names no case.
_TEXT_MATCHES = """
SELECT t.turn_id, x.case_id
FROM turns AS t
JOIN request_norms AS n ON n.turn_id = t.turn_id AND n.content_hash = t.content_hash
JOIN (SELECT md5_number(input_norm) AS norm_md5, case_id FROM labels) AS x
  ON x.norm_md5 = n.norm_md5
WHERE NOT EXISTS (SELECT 1 FROM labels AS l WHERE l.case_id = t.case_id)
"""
SELECT_MATCHED_IDS = f"""
SELECT l.case_id FROM turns AS t JOIN labels AS l ON l.case_id = t.case_id
UNION
SELECT case_id FROM ({_TEXT_MATCHES})
"""
SELECT_AMBIGUOUS = f"""
SELECT turn_id, list(case_id ORDER BY case_id) AS case_ids
FROM ({_TEXT_MATCHES}) GROUP BY turn_id HAVING count(*) > 1 ORDER BY turn_id
"""

_LABEL_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "case_id": pl.String, "input": pl.String, "canary": pl.List(pl.String),
    "ideal_response": pl.String, "match_mode": pl.String, "expected_tools": pl.List(pl.String),
    "expected_tools_mode": pl.String, "should_decline": pl.Boolean, "tags": pl.List(pl.String),
    "source": pl.String,
}


@dataclass(frozen=True, slots=True)
class AmbiguousTurn:
    turn_id: str
    case_ids: tuple[str, ...]
    """Every case the turn's request text matches, sorted; scoring uses the first."""


@dataclass(frozen=True, slots=True)
class LabelsReport:
    run_id: str
    outcome: str
    """`ok`, `partial` (some rows or files were bad) or `failed` (nothing loaded)."""
    files: int = 0
    cases_read: int = 0
    cases_new: int = 0
    cases_updated: int = 0
    errors: tuple[LabelError, ...] = ()
    warnings: tuple[LabelWarning, ...] = ()
    """Rows loaded with something to fix: an unknown mode (scored with the scorer's
    default), a field that is no label field (ignored). Not errors: the outcome stays."""
    unmatched_cases: int = 0
    """Loaded cases that no turn in the warehouse joins (yet)."""
    unmatched_case_ids: tuple[str, ...] = ()
    """The first `MAX_LISTED` of them."""
    ambiguous_turns: int = 0
    ambiguous: tuple[AmbiguousTurn, ...] = field(default=())
    """The first `MAX_LISTED` turns whose request matches two or more cases."""
    seconds: float = 0.0
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["errors"] = [str(e) for e in self.errors]
        out["warnings"] = [str(w) for w in self.warnings]
        return out


@dataclass(frozen=True, slots=True)
class TurnMatches:
    """How the turns in the warehouse meet the labels table."""

    matched_case_ids: frozenset[str]
    ambiguous: tuple[AmbiguousTurn, ...]


def load_labels(warehouse_dir: Path, paths: Sequence[Path], *, case_id_attribute: str,
                wait: bool = False) -> LabelsReport:
    """Read label files and upsert their cases; raises `WarehouseBusy` if another run
    holds the warehouse. `case_id_attribute` is recorded with the run: it is the span
    attribute whose value ingest put in `turns.case_id`."""
    started = time.monotonic()
    cases: dict[str, tuple[Case, str]] = {}
    errors: list[LabelError] = []
    warnings: list[LabelWarning] = []
    read = 0
    for path in paths:
        file_cases, file_errors = read_labels(path, warnings)
        errors.extend(file_errors)
        read += len(file_cases)
        for case in file_cases:
            cases[case.case_id] = (case, str(path))

    with writer_lock(warehouse_dir, wait=wait):
        con = open_warehouse(warehouse_dir)
        try:
            close_interrupted_runs(con)
            config = {"paths": [str(p) for p in paths], "case_id_attribute": case_id_attribute}
            run_id = start_run(con, RunKind.LABELS, config)
            try:
                refresh_request_norms(con)  # before: the upsert queues turns joined by text
                new, updated = _upsert(con, list(cases.values()), run_id)
                matches = match_turns(con)
            except duckdb.Error as exc:
                log.error("labels run %s failed: %s", run_id, exc)
                report = LabelsReport(run_id, Outcome.FAILED.value, files=len(paths),
                                      cases_read=read, errors=tuple(errors),
                                      seconds=time.monotonic() - started, error=str(exc))
                finish_run(con, run_id, Outcome.FAILED, _summary(report), report.error)
                return report
            unmatched = sorted(set(cases) - matches.matched_case_ids)
            outcome = Outcome.OK
            if errors:
                outcome = Outcome.PARTIAL if cases else Outcome.FAILED
            report = LabelsReport(
                run_id, outcome.value, files=len(paths), cases_read=read, cases_new=new,
                cases_updated=updated, errors=tuple(errors), warnings=tuple(warnings),
                unmatched_cases=len(unmatched),
                unmatched_case_ids=tuple(unmatched[:MAX_LISTED]),
                ambiguous_turns=len(matches.ambiguous), ambiguous=matches.ambiguous[:MAX_LISTED],
                seconds=time.monotonic() - started,
            )
            finish_run(con, run_id, outcome, _summary(report))
            return report
        finally:
            con.close()


def _summary(report: LabelsReport) -> dict[str, object]:
    summary = report.to_json()
    summary["errors"] = len(report.errors)
    summary["warnings"] = len(report.warnings)
    summary.pop("ambiguous")
    summary.pop("unmatched_case_ids")
    return summary


def _upsert(con: duckdb.DuckDBPyConnection, cases: list[tuple[Case, str]],
            run_id: str) -> tuple[int, int]:
    if not cases:
        return 0, 0
    frame = pl.DataFrame(
        [{"case_id": c.case_id, "input": c.input, "canary": _list(c.canary),
          "ideal_response": c.ideal_response, "match_mode": c.match_mode,
          "expected_tools": _list(c.expected_tools), "expected_tools_mode": c.expected_tools_mode,
          "should_decline": c.should_decline, "tags": list(c.tags), "source": src}
         for c, src in cases],
        schema=_LABEL_SCHEMA,
    ).with_columns(normalize_expr(pl.col("input")).alias("input_norm"),
                   pl.lit(run_id).alias("run_id"))
    con.register("_new_labels", frame.to_arrow())
    try:
        with transaction(con):
            existing = len(con.execute(SELECT_EXISTING_IDS).fetchall())
            queue_case_changes(con)  # the turns of changed cases, as joined before
            con.execute(UPSERT_LABELS)
            queue_case_turns(con)  # and after
            record_commit(con, run_id)
    finally:
        con.unregister("_new_labels")
    return len(cases) - existing, existing


def _list(values: tuple[str, ...] | None) -> list[str] | None:
    return None if values is None else list(values)


def refresh_request_norms(con: duckdb.DuckDBPyConnection) -> int:
    """Bring `request_norms` up to date with `turns`: normalise the requests of the turns
    it lacks or has from older content, drop the rows of turns gone. Returns the number
    of requests normalised (most runs: only the turns ingested since the last one)."""
    done = 0
    cur = con.cursor()  # a stream on `cur`, writes on `con`
    try:
        for batch in cur.sql(SELECT_UNNORMED).to_arrow_reader(_NORM_BATCH):
            if batch.num_rows == 0:
                continue
            norms = pa.table({
                "turn_id": batch.column("turn_id"),
                "content_hash": batch.column("content_hash"),
                "norm": normalize_series(pl.Series("r", batch.column("request"),
                                                   dtype=pl.String)).to_arrow(),
            })
            con.register("_norms", norms)
            try:
                con.execute(UPSERT_NORMS)
            finally:
                con.unregister("_norms")
            done += batch.num_rows
    finally:
        cur.close()
    # Every turn has its row now, so any excess is rows of turns rebuilt away.
    norms_count, turns_count = con.execute(COUNT_NORMS_AND_TURNS).fetchall()[0]
    if norms_count > turns_count:
        con.execute(DELETE_ORPHAN_NORMS)
    return done


def match_turns(con: duckdb.DuckDBPyConnection) -> TurnMatches:
    """Join every turn to the labels: by case_id, else by normalised request text.
    `request_norms` must be up to date (`refresh_request_norms`)."""
    matched = frozenset(r[0] for r in con.execute(SELECT_MATCHED_IDS).fetchall())
    ambiguous = tuple(AmbiguousTurn(turn_id, tuple(ids))
                      for turn_id, ids in con.execute(SELECT_AMBIGUOUS).fetchall())
    return TurnMatches(matched, ambiguous)
