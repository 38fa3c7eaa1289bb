"""What the report shows, read from the warehouse into typed rows.

`load_report_data` runs every query of `sql.py` for one period (and the headline queries
for the period before it, of the same length) and returns a `ReportData`. Nothing here
formats or renders; an empty list is a section with no data, which the renderer says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Generic, TypeVar

import duckdb

from turnscore.scorers import REGISTRY
from turnscore.warehouse.report import sql

USAGE = "tool_usage"
TRACTABILITY = "tractability"
LOW_SCORE = 5.0
"""Judged scores below this are low: the rubrics' bands 0-4 ("poor fit", "wrong tool")."""
LOWEST_LIMIT = 10
LISTED_LIMIT = 50
"""Rows of each data-quality list the report reads and shows (the totals are counted)."""
TREND_MIN_DAYS = 14
"""A one-night report still plots two weeks of trend, ending with its night."""

_PARAM = re.compile(r"\$([a-z_]+)")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Period:
    """UTC days `start`..`end`, both included."""

    start: date
    end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    @property
    def start_ts(self) -> datetime:
        return datetime.combine(self.start, time(0), UTC)

    @property
    def end_ts(self) -> datetime:
        """Exclusive: midnight after `end`."""
        return datetime.combine(self.end + timedelta(days=1), time(0), UTC)

    def previous(self) -> Period:
        """The period of the same length just before this one."""
        return Period(self.start - timedelta(days=self.days), self.start - timedelta(days=1))

    def widened(self, min_days: int) -> Period:
        """This period, extended backwards to at least `min_days` days."""
        if self.days >= min_days:
            return self
        return Period(self.end - timedelta(days=min_days - 1), self.end)

    def label(self) -> str:
        return self.start.isoformat() if self.days == 1 else f"{self.start} to {self.end}"


@dataclass(frozen=True, slots=True)
class TurnTotals:
    turns: int
    conversations: int
    agents: int
    failed_turns: int
    incomplete_turns: int
    tool_calls: int
    tool_errors: int


@dataclass(frozen=True, slots=True)
class ScorerStat:
    is_total: bool
    """True for the row over all agents (then `agent` is None)."""
    agent: str | None
    scorer: str
    rows: int
    scored: int
    mean_value: float | None
    zero_share: float | None
    low_share: float | None
    inconclusive: int
    not_run: int
    errors: int


@dataclass(frozen=True, slots=True)
class ToolUsageRow:
    tool: str
    turns_available: int
    turns_called: int
    calls: int
    scored_called: int
    mean_usage_called: float | None
    mean_usage_not_called: float | None
    low_share_called: float | None
    flagged_calls: int


@dataclass(frozen=True, slots=True)
class QuadrantPoint:
    turn_id: str
    agent: str
    usage: float
    tractability: float


@dataclass(frozen=True, slots=True)
class DistributionBin:
    scorer: str
    value: float
    n: int


@dataclass(frozen=True, slots=True)
class DailyScore:
    day: date
    scorer: str
    scored: int
    mean_value: float
    zero_share: float


@dataclass(frozen=True, slots=True)
class DailyTurns:
    day: date
    turns: int
    failed_turns: int
    tool_calls: int
    tool_errors: int


@dataclass(frozen=True, slots=True)
class ToolErrorRow:
    tool: str
    calls: int
    errors: int
    no_result: int
    p50_ms: float | None
    p95_ms: float | None
    max_ms: float | None
    common_error: str | None


@dataclass(frozen=True, slots=True)
class JudgeCostRow:
    scorer: str
    judge: str
    rows: int
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    mean_latency_ms: float | None
    attempts: int | None


@dataclass(frozen=True, slots=True)
class CallView:
    name: str
    arguments: str | None
    result: str | None
    error: str | None
    status: str


@dataclass(frozen=True, slots=True)
class ScoreView:
    scorer: str
    status: str
    value: float | None
    explanation: str | None
    details: str | None
    """JSON text, as stored."""


@dataclass(frozen=True, slots=True)
class LowTurn:
    rank: int
    turn_id: str
    agent: str
    started_at: datetime
    request: str
    calls: tuple[CallView, ...]
    final_answer: str | None
    status: str
    usage: float | None
    tractability: float | None
    scores: tuple[ScoreView, ...]
    """Both judged scores and every code scorer that gave the turn a 0."""


@dataclass(frozen=True, slots=True)
class IngestErrorRow:
    source: str
    position: str | None
    trace_id: str | None
    span_id: str | None
    message: str
    recorded_at: datetime


@dataclass(frozen=True, slots=True)
class ErroredScore:
    turn_id: str
    scorer: str
    attempts: int
    error: str | None


@dataclass(frozen=True, slots=True)
class FailedTurn:
    turn_id: str
    agent: str
    status: str
    error: str | None


@dataclass(frozen=True, slots=True)
class TurnIssueRow:
    agent: str
    convention: str
    issue: str
    """One of `turnscore.ingest.assemble.ISSUES`."""
    turns: int


@dataclass(frozen=True, slots=True)
class RunProblem:
    run_id: str
    kind: str
    started_at: datetime
    outcome: str | None
    """None: the run has not finished (or died without being marked)."""
    error: str | None


@dataclass(frozen=True, slots=True)
class Listed(Generic[T]):
    """The first rows of a list that may be long (a night with a million bad spans), and
    how many rows there are in all: the report reads only what it shows."""

    rows: tuple[T, ...]
    total: int


@dataclass(frozen=True, slots=True)
class ReportData:
    period: Period
    previous: Period
    trend_period: Period
    totals: TurnTotals
    previous_totals: TurnTotals
    stats: tuple[ScorerStat, ...]
    previous_stats: tuple[ScorerStat, ...]
    tool_usage: tuple[ToolUsageRow, ...]
    quadrant: tuple[QuadrantPoint, ...]
    distribution: tuple[DistributionBin, ...]
    daily_scores: tuple[DailyScore, ...]
    daily_turns: tuple[DailyTurns, ...]
    tool_errors: tuple[ToolErrorRow, ...]
    judge_cost: tuple[JudgeCostRow, ...]
    previous_judge_cost: tuple[JudgeCostRow, ...]
    lowest: tuple[LowTurn, ...]
    ingest_errors: Listed[IngestErrorRow]
    errored_scores: Listed[ErroredScore]
    failed_turns: Listed[FailedTurn]
    turn_issues: tuple[TurnIssueRow, ...]
    run_problems: Listed[RunProblem]

    def stat(self, scorer: str, agent: str | None = None, *,
             previous: bool = False) -> ScorerStat | None:
        """The stats of `scorer` over all agents (agent None) or for one agent."""
        for row in self.previous_stats if previous else self.stats:
            if row.scorer == scorer and row.agent == agent and row.is_total == (agent is None):
                return row
        return None

    @property
    def agents(self) -> list[str]:
        return sorted({row.agent for row in self.stats if row.agent is not None})


def scale_of(scorer: str) -> float:
    """The top of a scorer's scale: 10 for judged scorers, 1 for code scorers."""
    registered = REGISTRY.get(scorer)
    return 10.0 if registered is not None and registered.kind == "judge" else 1.0


def data_range(con: duckdb.DuckDBPyConnection) -> tuple[date, date] | None:
    """First and last UTC day with turns, or None for an empty warehouse."""
    first, last, n = _one(con, sql.DATA_RANGE, {})
    if not n:
        return None
    return first.astimezone(UTC).date(), last.astimezone(UTC).date()


def load_report_data(con: duckdb.DuckDBPyConnection, period: Period, *,
                     lowest_limit: int = LOWEST_LIMIT) -> ReportData:
    prev = period.previous()
    trend = period.widened(TREND_MIN_DAYS)
    p = _params(period, limit=lowest_limit)
    pp = _params(prev)
    return ReportData(
        period=period,
        previous=prev,
        trend_period=trend,
        totals=TurnTotals(*_one(con, sql.TURN_TOTALS, p)),
        previous_totals=TurnTotals(*_one(con, sql.TURN_TOTALS, pp)),
        stats=_rows(con, sql.SCORER_STATS, p, ScorerStat),
        previous_stats=_rows(con, sql.SCORER_STATS, pp, ScorerStat),
        tool_usage=_rows(con, sql.TOOL_USAGE_BY_TOOL, p, ToolUsageRow),
        quadrant=_rows(con, sql.USAGE_VS_TRACTABILITY, p, QuadrantPoint),
        distribution=_rows(con, sql.SCORE_DISTRIBUTION, p, DistributionBin),
        daily_scores=_rows(con, sql.DAILY_SCORES, _params(trend), DailyScore),
        daily_turns=_rows(con, sql.DAILY_TURNS, _params(trend), DailyTurns),
        tool_errors=_rows(con, sql.TOOL_ERRORS, p, ToolErrorRow),
        judge_cost=_rows(con, sql.JUDGE_COST, p, JudgeCostRow),
        previous_judge_cost=_rows(con, sql.JUDGE_COST, pp, JudgeCostRow),
        lowest=tuple(_low_turn(row) for row in _fetch(con, sql.LOWEST_TURNS, p)),
        ingest_errors=_listed(con, sql.INGEST_ERRORS, p, IngestErrorRow),
        errored_scores=_listed(con, sql.ERRORED_SCORES, p, ErroredScore),
        failed_turns=_listed(con, sql.FAILED_TURNS, p, FailedTurn),
        turn_issues=_rows(con, sql.TURN_ISSUES, p, TurnIssueRow),
        run_problems=_listed(con, sql.RUN_PROBLEMS, p, RunProblem),
    )


def _params(period: Period, **extra: object) -> dict[str, object]:
    return {"start": period.start_ts, "end": period.end_ts, "usage": USAGE,
            "tractability": TRACTABILITY, "low": LOW_SCORE, **extra}


def _fetch(con: duckdb.DuckDBPyConnection, query: str,
           params: Mapping[str, object]) -> list[tuple[Any, ...]]:
    # DuckDB rejects named parameters a statement does not use, so bind only its own.
    used = set(_PARAM.findall(query))
    return con.execute(query, {k: v for k, v in params.items() if k in used}).fetchall()


def _one(con: duckdb.DuckDBPyConnection, query: str,
         params: Mapping[str, object]) -> tuple[Any, ...]:
    rows = _fetch(con, query, params)
    return rows[0]


def _rows(con: duckdb.DuckDBPyConnection, query: str, params: Mapping[str, object],
          cls: type[T]) -> tuple[T, ...]:
    return tuple(cls(*row) for row in _fetch(con, query, params))


def _listed(con: duckdb.DuckDBPyConnection, query: str, params: Mapping[str, object],
            cls: type[T], limit: int = LISTED_LIMIT) -> Listed[T]:
    total = _one(con, sql.count_of(query), params)[0]
    rows = _rows(con, sql.first_rows(query), {**params, "listed": limit}, cls)
    return Listed(rows, total)


def _low_turn(row: Sequence[Any]) -> LowTurn:
    (rank, turn_id, agent, started_at, request, calls, final_answer, status, usage,
     tractability, scores) = row
    return LowTurn(
        rank=rank, turn_id=turn_id, agent=agent, started_at=started_at, request=request,
        calls=tuple(CallView(c["name"], c["arguments"], c["result"], c["error"], c["status"])
                    for c in calls),
        final_answer=final_answer, status=status, usage=usage, tractability=tractability,
        scores=tuple(ScoreView(s["scorer"], s["status"], s["value"], s["explanation"],
                               s["details"]) for s in scores or ()),
    )
