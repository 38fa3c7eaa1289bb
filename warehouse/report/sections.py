"""The report's sections, each from `ReportData` to one `<section>` of HTML.

A section with nothing to show says so in a note; it never fails. Sections about single
turns (the lowest scores, data quality) live in `turn_sections.py`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from turnscore.warehouse.report import charts
from turnscore.warehouse.report.data import LOW_SCORE, TRACTABILITY, USAGE, ReportData
from turnscore.warehouse.report.markup import (
    Cell,
    Markup,
    esc,
    ms,
    note,
    num,
    pct,
    section,
    table,
    usd,
)

NO_JUDGED = "No judged scores (Tool Usage, Tractability) in this period: run `turnscore score`."


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    value: float | None
    previous: float | None
    fmt: Callable[[float | None], str]
    higher_is_better: bool | None
    """None: a volume, neither good nor bad."""


def headline_metrics(data: ReportData) -> list[Metric]:
    t, p = data.totals, data.previous_totals

    def mean(scorer: str, *, previous: bool = False, zeros: bool = False) -> float | None:
        row = data.stat(scorer, previous=previous)
        if row is None:
            return None
        return row.zero_share if zeros else row.mean_value

    def both(scorer: str, zeros: bool = False) -> tuple[float | None, float | None]:
        return mean(scorer, zeros=zeros), mean(scorer, previous=True, zeros=zeros)

    def count(v: float | None) -> str:
        return num(None if v is None else int(v))

    def score(v: float | None) -> str:
        return num(v, 1)

    cost = sum(r.cost_usd or 0.0 for r in data.judge_cost)
    previous_cost = sum(r.cost_usd or 0.0 for r in data.previous_judge_cost) \
        if data.previous_totals.turns else None
    return [
        Metric("turns", t.turns, p.turns, count, None),
        Metric("conversations", t.conversations, p.conversations, count, None),
        Metric("tool calls", t.tool_calls, p.tool_calls, count, None),
        Metric("tool error rate", _ratio(t.tool_errors, t.tool_calls),
               _ratio(p.tool_errors, p.tool_calls), pct, False),
        Metric("failed turns", t.failed_turns + t.incomplete_turns,
               p.failed_turns + p.incomplete_turns, count, False),
        Metric("Tool Usage (mean)", *both(USAGE), score, True),
        Metric("Tractability (mean)", *both(TRACTABILITY), score, True),
        Metric("canary pass rate", *both("tool_grounding"), pct, True),
        Metric("correctness rate", *both("answer_correctness"), pct, True),
        Metric("hallucination rate", *both("groundedness", zeros=True), pct, False),
        Metric("judge cost", cost, previous_cost, usd, False),
    ]


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _delta(m: Metric, previous_label: str) -> str:
    if m.value is None or m.previous is None:
        return '<span class="delta none">no previous data</span>'
    diff = m.value - m.previous
    if abs(diff) < 1e-9:
        return f'<span class="delta same">no change vs {esc(previous_label)}</span>'
    shown = m.fmt(abs(diff)) if m.fmt is not pct else f"{abs(diff) * 100:.1f} pts"
    kind = "none" if m.higher_is_better is None else (
        "better" if (diff > 0) == m.higher_is_better else "worse")
    arrow = "▲" if diff > 0 else "▼"
    return (f'<span class="delta {kind}">{arrow} {esc(shown)} vs '
            f"{esc(m.fmt(m.previous))}</span>")


def headline(data: ReportData) -> str:
    if data.totals.turns == 0:
        return section("headline", "Headline", "", note(
            f"No turns started in {data.period.label()}: nothing to report."))
    cards = []
    for m in headline_metrics(data):
        # With no turns before, "0 failed turns then" would be a comparison with nothing.
        delta = _delta(m, data.previous.label()) if data.previous_totals.turns else \
            '<span class="delta none">no previous data</span>'
        cards.append(f'<div class="card"><div class="name">{esc(m.name)}</div>'
                     f'<div class="value">{esc(m.fmt(m.value))}</div>{delta}</div>')
    lead = (f"{data.period.label()} compared with the {data.previous.days} day(s) before "
            f"({data.previous.label()}).")
    return section("headline", "Headline", lead, f'<div class="cards">{"".join(cards)}</div>')


def tool_usage(data: ReportData) -> str:
    lead = ("Mean Tool Usage (0-10, judged on the request, tools and calls) per tool, over the "
            f"turns that called it, and per agent; red bars are below {LOW_SCORE:g}.")
    tools = [r for r in data.tool_usage if r.turns_called]
    by_tool = charts.mean_bars("chart-usage-tool", [r.tool for r in tools],
                               [r.mean_usage_called for r in tools],
                               [r.scored_called for r in tools], title="by tool (turns called)")
    agents = [r for r in data.stats if r.scorer == USAGE and not r.is_total and r.scored]
    by_agent = charts.mean_bars("chart-usage-agent", [r.agent or "" for r in agents],
                                [r.mean_value for r in agents], [r.scored for r in agents],
                                title="by agent (turns scored)")
    if by_tool is None and by_agent is None:
        return section("tool-usage", "Tool Usage", lead, note(NO_JUDGED))
    rows: list[list[Cell]] = [
        [r.tool, r.turns_available, r.turns_called, r.calls, r.mean_usage_called,
         r.mean_usage_not_called, pct(r.low_share_called), r.flagged_calls]
        for r in data.tool_usage
    ]
    tbl = table(["tool", "turns available", "turns called", "calls", "mean usage (called)",
                 "mean usage (not called)", "low share (called)", "calls judged wrong"],
                rows, numeric=(6,))
    return section("tool-usage", "Tool Usage", lead, by_tool or note("No tool was called."),
                   by_agent or note(NO_JUDGED), tbl)


def _suggestion(usage: float, tractability: float) -> str:
    low_u, low_t = usage < LOW_SCORE, tractability < LOW_SCORE
    if low_u and low_t:
        return "both: fix the agent and extend the tool set"
    if low_u:
        return "fix the agent (it misuses tools that fit)"
    if low_t:
        return "extend the tool set (the requests outgrow it)"
    return "nothing"


def quadrant(data: ReportData) -> str:
    lead = ("Each turn by Tool Usage (did the agent use its tools well?) against Tractability "
            "(can its tool set serve the request?); the quadrant says what to fix.")
    chart = charts.quadrant("chart-quadrant", data.quadrant)
    if chart is None:
        return section("quadrant", "Tool Usage against Tractability", lead, note(NO_JUDGED))
    rows: list[list[Cell]] = []
    for agent in sorted({p.agent for p in data.quadrant}):
        pts = [p for p in data.quadrant if p.agent == agent]
        quads = Counter(_suggestion(p.usage, p.tractability) for p in pts)
        mean_u = sum(p.usage for p in pts) / len(pts)
        mean_t = sum(p.tractability for p in pts) / len(pts)
        rows.append([agent, len(pts), mean_u, mean_t, quads["nothing"],
                     quads[_suggestion(0, 10)], quads[_suggestion(10, 0)],
                     quads[_suggestion(0, 0)], _suggestion(mean_u, mean_t)])
    tbl = table(["agent", "turns", "mean usage", "mean tractability", "fine", "fix agent",
                 "extend tools", "both", "suggests"], rows)
    return section("quadrant", "Tool Usage against Tractability", lead, chart, tbl)


def distributions(data: ReportData) -> str:
    lead = "How the scored turns spread over each scorer's scale."
    judged = charts.judged_histogram("chart-dist-judged", data.distribution)
    coded = charts.pass_fail("chart-dist-code", data.distribution)
    if judged is None and coded is None:
        return section("distributions", "Score distributions", lead,
                       note("No scored turns in this period."))
    return section("distributions", "Score distributions", lead, judged or note(NO_JUDGED),
                   coded or note("No code scorer scored a turn in this period."))


def trends(data: ReportData) -> str:
    lead = f"Per UTC day, {data.trend_period.label()}."
    chart = charts.trends("chart-trends", data.daily_turns, data.daily_scores)
    if chart is None:
        return section("trends", "Trends per day", lead,
                       note(f"No turns in {data.trend_period.label()}."))
    unscored = "" if data.daily_scores else note("No scored turns on these days.")
    return section("trends", "Trends per day", lead, chart, unscored)


def rates(data: ReportData) -> str:
    lead = ("Canary pass rate (tool_grounding), correctness (answer_correctness), tool-call "
            "accuracy and hallucination rate (share of turns whose answer has a specific no "
            "tool result or request supports: groundedness = 0), over the turns each scorer "
            "could score.")
    agents = data.agents
    series = []
    for scorer, name, zeros in charts.RATE_SERIES:
        values = []
        for agent in agents:
            row = data.stat(scorer, agent)
            values.append(None if row is None or not row.scored else
                          row.zero_share if zeros else row.mean_value)
        series.append((name, values))
    chart = charts.rate_bars("chart-rates", agents, series)
    if chart is None:
        return section("rates", "Canary, correctness and hallucination", lead,
                       note("No labelled or code-scored turns in this period."))
    rows: list[list[Cell]] = []
    for who in [None, *agents]:
        row_cells: list[Cell] = [who or "all agents"]
        for scorer, _, zeros in charts.RATE_SERIES:
            st = data.stat(scorer, who)
            value = None if st is None or not st.scored else (
                st.zero_share if zeros else st.mean_value)
            row_cells.append(f"{pct(value)} (n={st.scored if st else 0})")
        rows.append(row_cells)
    tbl = table(["agent", *(name for _, name, _ in charts.RATE_SERIES)], rows,
                numeric=(1, 2, 3, 4))
    return section("rates", "Canary, correctness and hallucination", lead, chart, tbl)


def tool_errors(data: ReportData) -> str:
    lead = "Per tool: calls that failed, calls with no result, and execution latency."
    chart = charts.tool_errors("chart-tool-errors", data.tool_errors)
    if chart is None:
        return section("tool-errors", "Tool errors and latency", lead,
                       note("No tool calls in this period."))
    rows: list[list[Cell]] = [
        [r.tool, r.calls, r.errors, pct(r.errors / r.calls), r.no_result, ms(r.p50_ms),
         ms(r.p95_ms), ms(r.max_ms), r.common_error]
        for r in data.tool_errors
    ]
    tbl = table(["tool", "calls", "errors", "error rate", "no result", "p50", "p95", "max",
                 "most common error"], rows, numeric=(3, 5, 6, 7))
    return section("tool-errors", "Tool errors and latency", lead, chart, tbl)


def judge_cost(data: ReportData) -> str:
    lead = ("Judged scores by scorer and judge: tokens, cost and latency. The rules judge "
            "(rules-v1) is offline and costs nothing; cached replies cost nothing again.")
    if not data.judge_cost:
        return section("judge-cost", "Judge cost", lead, note("No judged scores in this period."))
    rows: list[list[Cell]] = [
        [r.scorer, r.judge, r.rows, r.input_tokens, r.output_tokens, usd(r.cost_usd),
         ms(r.mean_latency_ms), r.attempts]
        for r in data.judge_cost
    ]
    total = sum(r.cost_usd or 0.0 for r in data.judge_cost)
    rows.append([Markup("<strong>total</strong>"), "", sum(r.rows for r in data.judge_cost),
                 None, None, usd(total), None, None])
    tbl = table(["scorer", "judge", "scores", "input tokens", "output tokens", "cost",
                 "mean latency", "attempts"], rows, numeric=(5, 6))
    return section("judge-cost", "Judge cost", lead, tbl)
