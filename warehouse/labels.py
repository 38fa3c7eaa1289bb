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

from turnscore.scorers.base import Case
from turnscore.scorers.labels import LabelError, read_labels
from turnscore.scorers.text import normalize_expr
from turnscore.warehouse.db import open_warehouse, writer_lock
from turnscore.warehouse.runs import (
    Outcome,
    RunKind,
    close_interrupted_runs,
    finish_run,
    start_run,
)

log = logging.getLogger(__name__)

MAX_LISTED = 50
"""Unmatched case ids and ambiguous turns listed in a report; the counts are complete."""

UPSERT_LABELS = """
INSERT INTO labels (case_id, input, input_norm, canary, ideal_response, match_mode,
                    expected_tools, expected_tools_mode, should_decline, tags, source,
                    run_id, loaded_at)
SELECT case_id, input, input_norm, canary, ideal_response, match_mode, expected_tools,
       expected_tools_mode, should_decline, tags, source, run_id, now()
FROM _new_labels
ON CONFLICT (case_id) DO UPDATE SET
    input = EXCLUDED.input, input_norm = EXCLUDED.input_norm, canary = EXCLUDED.canary,
    ideal_response = EXCLUDED.ideal_response, match_mode = EXCLUDED.match_mode,
    expected_tools = EXCLUDED.expected_tools,
    expected_tools_mode = EXCLUDED.expected_tools_mode,
    should_decline = EXCLUDED.should_decline, tags = EXCLUDED.tags, source = EXCLUDED.source,
    run_id = EXCLUDED.run_id, loaded_at = EXCLUDED.loaded_at
"""
SELECT_EXISTING_IDS = """
SELECT case_id FROM labels WHERE case_id IN (SELECT case_id FROM _new_labels)
"""
SELECT_TURN_KEYS = "SELECT turn_id, case_id, request FROM turns"
SELECT_LABEL_KEYS = "SELECT case_id, input_norm FROM labels"

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
    read = 0
    for path in paths:
        file_cases, file_errors = read_labels(path)
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
                cases_updated=updated, errors=tuple(errors), unmatched_cases=len(unmatched),
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
        con.execute("BEGIN TRANSACTION")
        try:
            existing = len(con.execute(SELECT_EXISTING_IDS).fetchall())
            con.execute(UPSERT_LABELS)
            con.execute("COMMIT")
        except duckdb.Error:
            con.execute("ROLLBACK")
            raise
    finally:
        con.unregister("_new_labels")
    return len(cases) - existing, existing


def _list(values: tuple[str, ...] | None) -> list[str] | None:
    return None if values is None else list(values)


def match_turns(con: duckdb.DuckDBPyConnection) -> TurnMatches:
    """Join every turn to the labels: by case_id, else by normalised request text."""
    turns = pl.DataFrame(con.sql(SELECT_TURN_KEYS).to_arrow_table())
    labels = pl.DataFrame(con.sql(SELECT_LABEL_KEYS).to_arrow_table())
    if turns.is_empty() or labels.is_empty():
        return TurnMatches(frozenset(), ())
    by_id = turns.join(labels.select("case_id"), on="case_id", how="inner")
    by_text = (
        turns.join(by_id.select("turn_id"), on="turn_id", how="anti")
        .with_columns(normalize_expr(pl.col("request")).alias("input_norm"))
        .join(labels.rename({"case_id": "label_id"}), on="input_norm", how="inner")
    )
    matched = set(by_id["case_id"].to_list()) | set(by_text["label_id"].to_list())
    multi = (
        by_text.group_by("turn_id")
        .agg(pl.col("label_id").sort().alias("case_ids"))
        .filter(pl.col("case_ids").list.len() > 1)
        .sort("turn_id")
    )
    ambiguous = tuple(AmbiguousTurn(t, tuple(ids)) for t, ids in multi.iter_rows())
    return TurnMatches(frozenset(matched), ambiguous)
