"""Sections about single turns and rows: the lowest-scoring turns and data quality.

These show agent content (requests, tool arguments and results, answers) and judge
explanations verbatim, so every string goes through `esc`.
"""

from __future__ import annotations

from typing import Any

import orjson

from turnscore.warehouse.report.data import (
    LOW_SCORE,
    TRACTABILITY,
    USAGE,
    CallView,
    Listed,
    LowTurn,
    ReportData,
    ScoreView,
    scale_of,
)
from turnscore.warehouse.report.markup import (
    Cell,
    esc,
    note,
    num,
    pill,
    section,
    table,
    text_block,
)
from turnscore.warehouse.report.sections import NO_JUDGED

_CLIP = 600


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= _CLIP:
        return text
    return text[:_CLIP] + f"… ({len(text) - _CLIP:,} more characters)"


def _calls(calls: tuple[CallView, ...]) -> str:
    if not calls:
        return '<span class="nodata">no tool calls</span>'
    rows: list[list[Cell]] = []
    for c in calls:
        outcome = c.error if c.status == "error" else c.result
        rows.append([c.name, _clip(c.arguments), c.status, _clip(outcome)])
    return table(["tool", "arguments", "status", "result / error"], rows)


def _details_lines(score: ScoreView) -> list[str]:
    """The parts of a judged score's details worth reading next to its explanation."""
    try:
        details = orjson.loads(score.details) if score.details else {}
    except orjson.JSONDecodeError:
        return []
    if not isinstance(details, dict):
        return []
    lines = []
    if score.scorer == USAGE:
        calls = details.get("calls")
        for verdict in calls if isinstance(calls, list) else []:
            if isinstance(verdict, dict) and verdict.get("problem"):
                lines.append(f"call {verdict.get('tool')}: {verdict['problem']}")
    elif score.scorer == TRACTABILITY:
        if details.get("request_kind"):
            lines.append(f"request kind: {details['request_kind']}")
        if details.get("missing_capability"):
            lines.append(f"missing capability: {details['missing_capability']}")
        signs = details.get("strain_signs") or []
        # An LLM judge without structured output may send one sign as a bare string.
        lines.extend(f"strain: {sign}" for sign in (signs if isinstance(signs, list) else [signs]))
    return [str(line) for line in lines]


def _score_line(score: ScoreView) -> str:
    top = scale_of(score.scorer)
    if score.value is None:
        badge = pill(f"{score.scorer}: {score.status}")
    else:
        bad = score.value < (LOW_SCORE if top > 1 else 1)
        badge = pill(f"{score.scorer}: {score.value:g}",
                     "bad" if bad else "good")
    extra = "".join(f"<li>{esc(line)}</li>" for line in _details_lines(score))
    return (f"<li>{badge} {esc(score.explanation or '')}"
            f"{f'<ul>{extra}</ul>' if extra else ''}</li>")


def _turn(turn: LowTurn) -> str:
    why = "".join(_score_line(s) for s in turn.scores)
    title = (f"#{turn.rank} · {turn.agent} · Tool Usage {num(turn.usage, 0)} · "
             f"Tractability {num(turn.tractability, 0)}")
    return (
        f'<div class="turn" id="turn-{esc(turn.turn_id)}"><h3>{esc(title)}</h3><dl>'
        f"<dt>turn</dt><dd><code>{esc(turn.turn_id)}</code> · "
        f"{esc(turn.started_at.strftime('%Y-%m-%d %H:%M:%S UTC'))} · status {esc(turn.status)}"
        f"</dd><dt>request</dt><dd>{text_block(_clip(turn.request))}</dd>"
        f"<dt>calls</dt><dd>{_calls(turn.calls)}</dd>"
        f"<dt>answer</dt><dd>{text_block(_clip(turn.final_answer), '(no final answer)')}</dd>"
        f"<dt>why</dt><dd><ul>{why}</ul></dd></dl></div>"
    )


def lowest(data: ReportData) -> str:
    lead = ("The turns with the lowest judged score (the lower of Tool Usage and "
            "Tractability), with the judges' assessments and every code scorer that failed them.")
    if not data.lowest:
        return section("lowest", "Lowest-scoring turns", lead, note(NO_JUDGED))
    return section("lowest", "Lowest-scoring turns", lead,
                   "".join(_turn(t) for t in data.lowest))


def _shown(listed: Listed[Any]) -> str:
    if listed.total <= len(listed.rows):
        return ""
    return f'<p class="lead">Showing the first {len(listed.rows)} of {listed.total:,}.</p>'


def data_quality(data: ReportData) -> str:
    lead = ("What could not be read or scored. Ingest errors and runs are those recorded "
            "from the period's start to a day after its end.")
    parts = []
    coverage: list[list[Cell]] = [
        [r.scorer, r.rows, r.scored, r.inconclusive, r.not_run, r.errors]
        for r in data.stats if r.is_total
    ]
    parts.append("<h3>Score coverage</h3>")
    parts.append(table(["scorer", "turns", "scored", "inconclusive", "not run", "errors"],
                       coverage) if coverage else note("No scores in this period."))

    parts.append(f"<h3>Ingest errors ({data.ingest_errors.total:,})</h3>")
    parts.append(_shown(data.ingest_errors))
    parts.append(table(
        ["source", "position", "trace", "span", "message"],
        [[e.source, e.position, e.trace_id, e.span_id, e.message]
         for e in data.ingest_errors.rows],
    ) if data.ingest_errors.rows else note("No ingest errors."))

    parts.append(f"<h3>Errored scores ({data.errored_scores.total:,})</h3>")
    parts.append(_shown(data.errored_scores))
    parts.append(table(
        ["turn", "scorer", "attempts", "error"],
        [[s.turn_id, s.scorer, s.attempts, _clip(s.error)]
         for s in data.errored_scores.rows],
    ) if data.errored_scores.rows else note("No errored scores."))

    parts.append(f"<h3>Failed and incomplete turns ({data.failed_turns.total:,})</h3>")
    parts.append(_shown(data.failed_turns))
    parts.append(table(
        ["turn", "agent", "status", "error"],
        [[t.turn_id, t.agent, t.status, _clip(t.error)] for t in data.failed_turns.rows],
    ) if data.failed_turns.rows else note("Every turn completed."))

    parts.append("<h3>Turns with issues</h3>")
    parts.append(table(
        ["agent", "convention", "issue", "turns"],
        [[r.agent, r.convention, r.issue, r.turns] for r in data.turn_issues],
    ) if data.turn_issues else note("Assembly trusted every turn: requests, answers and "
                                     "calls were all captured."))

    parts.append(f"<h3>Runs not ok ({data.run_problems.total:,})</h3>")
    parts.append(_shown(data.run_problems))
    parts.append(table(
        ["run", "kind", "started", "outcome", "error"],
        [[r.run_id, r.kind, r.started_at.strftime("%Y-%m-%d %H:%M UTC"),
          r.outcome or "unfinished", _clip(r.error)] for r in data.run_problems.rows],
    ) if data.run_problems.rows else note("Every run finished ok."))
    return section("data-quality", "Data quality", lead, *parts)
