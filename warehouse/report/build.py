"""`turnscore report` as a library call: the warehouse in, one self-contained HTML file out.

The period is whole UTC days, both ends included. Without dates it is the last day that
has turns (the night a nightly run just scored); see `resolve_period` for one date.
Headline numbers are compared with the period of the same length just before.

The page inlines plotly.js once and embeds every chart's data, and its Content Security
Policy forbids any fetch, so it opens offline and can be mailed or archived as one file.
The warehouse is opened read-only; while a run holds it, the published snapshot is read.
"""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from importlib import metadata, resources
from pathlib import Path
from string import Template

from turnscore.warehouse.errors import InvalidOption
from turnscore.warehouse.query import open_for_reading
from turnscore.warehouse.report import charts, sections, turn_sections
from turnscore.warehouse.report.data import (
    USAGE,
    Period,
    ReportData,
    data_range,
    load_report_data,
)
from turnscore.warehouse.report.markup import esc

log = logging.getLogger(__name__)

TEMPLATE = "template.html"
_NAV = (
    ("headline", "Headline"), ("tool-usage", "Tool Usage"), ("quadrant", "Usage × Tractability"),
    ("distributions", "Distributions"), ("trends", "Trends"), ("rates", "Rates"),
    ("tool-errors", "Tool errors"), ("judge-cost", "Judge cost"), ("lowest", "Lowest turns"),
    ("data-quality", "Data quality"),
)


@dataclass(frozen=True, slots=True)
class ReportSummary:
    out: Path
    database: Path
    """The file read: the live warehouse, or the published snapshot while a run held it."""
    snapshot: bool
    start: date
    end: date
    turns: int
    previous_turns: int
    scored_turns: int
    """The most turns any one scorer scored in the period."""
    empty_sections: tuple[str, ...]
    """Sections that show a "no data" note instead of charts."""
    bytes: int

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        out.update(out=str(self.out), database=str(self.database), start=self.start.isoformat(),
                   end=self.end.isoformat(), empty_sections=list(self.empty_sections))
        return out


def resolve_period(bounds: tuple[date, date] | None, start: date | None,
                   end: date | None) -> Period:
    """The period to report on; `bounds` are the first and last days with turns.

    No dates: the last day with turns (today when there are none). Only `end`: that day.
    Only `start`: from it to the last day with turns (or just that day, if later).
    """
    if start is not None and end is not None and start > end:
        raise InvalidOption(f"--start {start} is after --end {end}")
    last = bounds[1] if bounds is not None else None
    if start is None and end is None:
        day = last or datetime.now(UTC).date()
        return Period(day, day)
    if start is None:
        assert end is not None
        return Period(end, end)
    if end is None:
        return Period(start, max(start, last) if last is not None else start)
    return Period(start, end)


def build_report(warehouse_dir: Path, *, start: date | None = None, end: date | None = None,
                 out: Path) -> ReportSummary:
    """Write the HTML report for `start`..`end` (UTC days, inclusive) to `out`."""
    con, database, snapshot = open_for_reading(warehouse_dir)
    try:
        period = resolve_period(data_range(con), start, end)
        data = load_report_data(con, period)
    finally:
        con.close()
    page = render_page(data, database=database, snapshot=snapshot)
    _write_atomically(out, page)
    summary = ReportSummary(
        out=out, database=database, snapshot=snapshot, start=period.start, end=period.end,
        turns=data.totals.turns, previous_turns=data.previous_totals.turns,
        scored_turns=max((r.scored for r in data.stats if r.is_total), default=0),
        empty_sections=empty_sections(data), bytes=len(page.encode("utf-8")),
    )
    log.info("report for %s: %d turns, %d bytes -> %s", period.label(), summary.turns,
             summary.bytes, out)
    return summary


def empty_sections(data: ReportData) -> tuple[str, ...]:
    usage = data.stat(USAGE)
    no_usage = usage is None or not usage.scored
    empty = {
        "headline": data.totals.turns == 0,
        "tool-usage": no_usage,
        "quadrant": not data.quadrant,
        "distributions": not data.distribution,
        "trends": not data.daily_turns,
        "rates": not any(r.scored for r in data.stats if r.scorer in
                         {s for s, _, _ in charts.RATE_SERIES}),
        "tool-errors": not data.tool_errors,
        "judge-cost": not data.judge_cost,
        "lowest": not data.lowest,
    }
    return tuple(name for name, _ in _NAV if empty.get(name, False))


def render_page(data: ReportData, *, database: Path, snapshot: bool) -> str:
    template = Template(resources.files("turnscore.warehouse.report").joinpath(TEMPLATE)
                        .read_text("utf-8"))
    body = "\n".join((
        sections.headline(data), sections.tool_usage(data), sections.quadrant(data),
        sections.distributions(data), sections.trends(data), sections.rates(data),
        sections.tool_errors(data), sections.judge_cost(data), turn_sections.lowest(data),
        turn_sections.data_quality(data),
    ))
    title = f"turnscore report · {data.period.label()}"
    t = data.totals
    subtitle = (f"{t.turns:,} turns · {t.conversations:,} conversations · {t.agents:,} agents"
                f" · UTC days {data.period.label()}")
    source = f"{database} (published snapshot: a run held the live warehouse)" if snapshot \
        else str(database)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return template.substitute(
        title=esc(title), subtitle=esc(subtitle), version=esc(_version()),
        nav="".join(f'<a href="#{a}">{esc(label)}</a>' for a, label in _NAV),
        body=body, plotly_js=charts.plotly_js(),
        footer=esc(f"Generated {generated} by turnscore {_version()} from {source}."),
    )


def _version() -> str:
    try:
        return metadata.version("turnscore")
    except metadata.PackageNotFoundError:
        return "unknown"


def _write_atomically(out: Path, page: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        os.fchmod(fd, 0o644)  # a report is for sharing; mkstemp would make it owner-only
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(page)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
