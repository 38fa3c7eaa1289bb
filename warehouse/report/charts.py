"""The report's charts: plotly figures rendered as HTML fragments.

Each function returns a `<div>` plus the `<script>` that draws it, or None when there is
nothing to draw (the caller then prints a "no data" note). plotly.js itself is inlined once
by the page (`plotly_js`), so the file opens offline.

Agent content reaches charts only as labels (agent and tool names): plotly renders a
small HTML subset in labels, so every label is HTML-escaped first and shows as typed.
"""

from __future__ import annotations

import html
import zlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import plotly.offline
from plotly.subplots import make_subplots

from turnscore.warehouse.report.data import (
    LOW_SCORE,
    TRACTABILITY,
    USAGE,
    DailyScore,
    DailyTurns,
    DistributionBin,
    QuadrantPoint,
    ToolErrorRow,
    scale_of,
)

_CONFIG = {"displaylogo": False, "responsive": True,
           "modeBarButtonsToRemove": ["sendDataToCloud", "lasso2d", "select2d"]}
_LAYOUT: dict[str, Any] = {
    "template": "plotly_white",
    "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
    "font": {"family": "system-ui, -apple-system, Segoe UI, sans-serif", "size": 12},
    "legend": {"orientation": "h", "y": -0.15},
}
# Pass, partial and fail on the 0-1 scale, and one colour per series elsewhere.
GOOD, MIDDLE, BAD = "#2a9d8f", "#e9c46a", "#e76f51"
RATE_SERIES = (
    ("tool_grounding", "canary pass rate", False),
    ("answer_correctness", "correctness rate", False),
    ("tool_call_accuracy", "tool-call accuracy", False),
    ("groundedness", "hallucination rate", True),
)
"""(scorer, label, plot the share of zeros instead of the mean)."""


def plotly_js() -> str:
    """plotly.js, minified, to inline once in the page."""
    return plotly.offline.get_plotlyjs()


def label(text: str) -> str:
    """A chart label that shows exactly `text` (plotly would render tags in it)."""
    return html.escape(text, quote=False)


def _render(fig: go.Figure, div_id: str, height: int) -> str:
    fig.update_layout(**_LAYOUT, height=height)
    return str(pio.to_html(fig, full_html=False, include_plotlyjs=False, config=_CONFIG,
                           div_id=div_id, default_width="100%", default_height=f"{height}px",
                           validate=True))


def mean_bars(div_id: str, names: Sequence[str], means: Sequence[float | None],
              counts: Sequence[int], *, title: str, top: float = 10.0) -> str | None:
    """Horizontal bars of a mean score per name, each labelled with its count."""
    shown = [(n, m, c) for n, m, c in zip(names, means, counts, strict=True) if m is not None]
    if not shown:
        return None
    shown.reverse()  # plotly draws the first bar at the bottom
    fig = go.Figure(go.Bar(
        x=[m for _, m, _ in shown], y=[label(n) for n, _, _ in shown], orientation="h",
        text=[f"{m:.1f}  (n={c})" for _, m, c in shown], textposition="auto",
        marker_color=[BAD if m < LOW_SCORE * top / 10 else GOOD for _, m, _ in shown],
        hovertemplate="%{y}: %{x:.2f}<extra></extra>",
    ))
    fig.update_layout(title=title, xaxis={"range": [0, top]})
    return _render(fig, div_id, 90 + 34 * len(shown))


def quadrant(div_id: str, points: Sequence[QuadrantPoint]) -> str | None:
    """Tool Usage (x) against Tractability (y): turns as dots, each agent's mean as a ring."""
    if not points:
        return None
    by_agent: dict[str, list[QuadrantPoint]] = defaultdict(list)
    for p in points:
        by_agent[p.agent].append(p)
    fig = go.Figure()
    palette = pio.templates["plotly_white"].layout.colorway
    for i, (agent, pts) in enumerate(sorted(by_agent.items())):
        color = palette[i % len(palette)]
        # Scores are whole numbers, so identical points would hide each other: spread them.
        jitter = [((zlib.crc32(p.turn_id.encode()) % 41) - 20) / 100 for p in pts]
        fig.add_trace(go.Scatter(
            x=[p.usage + j for p, j in zip(pts, jitter, strict=True)],
            y=[p.tractability - j for p, j in zip(pts, jitter, strict=True)],
            mode="markers", name=label(agent), legendgroup=label(agent),
            marker={"color": color, "size": 7, "opacity": 0.45},
            customdata=[p.turn_id for p in pts],
            hovertemplate="turn %{customdata}<br>usage %{x:.0f}, tractability %{y:.0f}"
                          "<extra>%{fullData.name}</extra>",
        ))
        mean_u = sum(p.usage for p in pts) / len(pts)
        mean_t = sum(p.tractability for p in pts) / len(pts)
        fig.add_trace(go.Scatter(
            x=[mean_u], y=[mean_t], mode="markers+text", text=[label(agent)],
            # Alternate label sides: agents with similar means would print over each other.
            textposition="top center" if i % 2 == 0 else "bottom center",
            legendgroup=label(agent), showlegend=False,
            marker={"color": color, "size": 16, "symbol": "circle-open", "line": {"width": 3}},
            hovertemplate=f"{label(agent)} mean (n={len(pts)})<br>usage %{{x:.1f}}, "
                          "tractability %{y:.1f}<extra></extra>",
        ))
    split = LOW_SCORE
    for quad_x, quad_y, text in (
        (2.5, 9.8, "fix the agent"), (7.5, 9.8, "fine"),
        (2.5, 0.2, "fix the agent and extend the tools"), (7.5, 0.2, "extend the tool set"),
    ):
        fig.add_annotation(x=quad_x, y=quad_y, text=text, showarrow=False,
                           font={"color": "#6c757d", "size": 12})
    fig.add_shape(type="line", x0=split, x1=split, y0=-0.5, y1=10.5, line={"dash": "dot"})
    fig.add_shape(type="line", y0=split, y1=split, x0=-0.5, x1=10.5, line={"dash": "dot"})
    fig.update_layout(title="Tool Usage against Tractability (per turn; rings: agent means)",
                      xaxis={"title": "Tool Usage (0-10)", "range": [-0.5, 10.5]},
                      yaxis={"title": "Tractability (0-10)", "range": [-0.5, 10.5]})
    return _render(fig, div_id, 520)


def judged_histogram(div_id: str, bins: Sequence[DistributionBin]) -> str | None:
    """How many turns got each 0-10 score, one bar series per judged scorer."""
    judged = sorted({b.scorer for b in bins if scale_of(b.scorer) > 1})
    if not judged:
        return None
    fig = go.Figure()
    for scorer in judged:
        counts: dict[int, int] = defaultdict(int)
        for b in bins:
            if b.scorer == scorer:
                counts[round(b.value)] += b.n
        xs = sorted(counts)
        fig.add_trace(go.Bar(x=xs, y=[counts[x] for x in xs], name=label(scorer),
                             text=[counts[x] for x in xs], textposition="outside"))
    fig.update_layout(barmode="group", title="Judged scores (turns per score)",
                      xaxis={"title": "score", "dtick": 1, "range": [-0.5, 10.5]},
                      yaxis={"title": "turns"})
    return _render(fig, div_id, 380)


def pass_fail(div_id: str, bins: Sequence[DistributionBin]) -> str | None:
    """0-1 scorers: turns that passed, partly passed and failed, stacked."""
    coded = sorted({b.scorer for b in bins if scale_of(b.scorer) <= 1}, reverse=True)
    if not coded:
        return None
    fig = go.Figure()
    for name, low, high, color in (("pass (1)", 1.0, 1.0, GOOD), ("partial", 0.0, 1.0, MIDDLE),
                                   ("fail (0)", 0.0, 0.0, BAD)):
        ns = [sum(b.n for b in bins if b.scorer == s and _within(b.value, low, high))
              for s in coded]
        fig.add_trace(go.Bar(y=[label(s) for s in coded], x=ns, orientation="h", name=name,
                             marker_color=color, text=[n or "" for n in ns],
                             textposition="inside"))
    fig.update_layout(barmode="stack", title="Code scorers (turns scored)",
                      xaxis={"title": "turns"})
    return _render(fig, div_id, 120 + 40 * len(coded))


def _within(value: float, low: float, high: float) -> bool:
    """`[low, high]` when low == high (exactly 0 or 1), else the open interval between."""
    return value == low if low == high else low < value < high


def trends(div_id: str, days: Sequence[DailyTurns], scores: Sequence[DailyScore]) -> str | None:
    """Per day: turns and failures; judged means; canary, correctness, hallucination rates."""
    if not days:
        return None
    # Without scores only the volume panel has anything to show.
    panels = ("turns and tool errors", "judged means (0-10)", "rates (0-1)")[:3 if scores else 1]
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=panels)
    x = [d.day.isoformat() for d in days]
    fig.add_trace(go.Bar(x=x, y=[d.turns for d in days], name="turns",
                         marker_color="#8ab6d6"), row=1, col=1)
    fig.add_trace(go.Bar(x=x, y=[d.tool_errors for d in days], name="tool errors",
                         marker_color=BAD), row=1, col=1)
    for scorer, row in ((USAGE, 2), (TRACTABILITY, 2)):
        pts = [s for s in scores if s.scorer == scorer]
        if pts:
            fig.add_trace(go.Scatter(x=[s.day.isoformat() for s in pts],
                                     y=[s.mean_value for s in pts], mode="lines+markers",
                                     name=label(scorer)), row=row, col=1)
    for scorer, name, zeros in RATE_SERIES:
        pts = [s for s in scores if s.scorer == scorer]
        if pts:
            fig.add_trace(go.Scatter(
                x=[s.day.isoformat() for s in pts],
                y=[s.zero_share if zeros else s.mean_value for s in pts],
                mode="lines+markers", name=name), row=3, col=1)
    if scores:
        fig.update_yaxes(range=[0, 10.5], row=2, col=1)
        fig.update_yaxes(range=[0, 1.05], tickformat=".0%", row=3, col=1)
    fig.update_xaxes(type="category")
    return _render(fig, div_id, 640 if scores else 280)


def rate_bars(div_id: str, agents: Sequence[str],
              rates: Sequence[tuple[str, Sequence[float | None]]]) -> str | None:
    """Grouped bars: one group per agent, one bar per rate (0-1)."""
    if not agents or all(v is None for _, values in rates for v in values):
        return None
    fig = go.Figure()
    for name, values in rates:
        fig.add_trace(go.Bar(
            x=[label(a) for a in agents], y=[v if v is not None else 0 for v in values],
            name=name, text=["n/a" if v is None else f"{v:.0%}" for v in values],
            textposition="outside"))
    fig.update_layout(barmode="group", title="Rates per agent",
                      yaxis={"range": [0, 1.15], "tickformat": ".0%"})
    return _render(fig, div_id, 420)


def tool_errors(div_id: str, rows: Sequence[ToolErrorRow]) -> str | None:
    """Per tool: error rate (bars) and p50 / p95 latency (markers, second axis)."""
    if not rows:
        return None
    tools = [label(r.tool) for r in rows]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Bar(x=tools, y=[r.errors / r.calls for r in rows], name="error rate",
                         marker_color=BAD,
                         text=[f"{r.errors}/{r.calls}" for r in rows], textposition="outside"),
                  secondary_y=False)
    for name, values, symbol in (("p50 ms", [r.p50_ms for r in rows], "circle"),
                                 ("p95 ms", [r.p95_ms for r in rows], "diamond")):
        fig.add_trace(go.Scatter(x=tools, y=values, name=name, mode="markers",
                                 marker={"size": 12, "color": "#1d3557", "symbol": symbol}),
                      secondary_y=True)
    fig.update_yaxes(title="error rate", tickformat=".0%", rangemode="tozero", secondary_y=False)
    fig.update_yaxes(title="latency (ms)", rangemode="tozero", secondary_y=True)
    fig.update_layout(title="Tool errors and latency")
    return _render(fig, div_id, 380)
