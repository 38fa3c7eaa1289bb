"""Small HTML building blocks: escaping, number formats, tables, notes.

Every piece of text that reaches the page goes through `esc` (directly or via `table`),
so agent content (requests, answers, tool arguments, names) always renders as text.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Markup:
    """HTML that is already safe (built here from escaped parts); `table` keeps it as is."""

    html: str


Cell = str | int | float | None | Markup


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def num(value: float | int | None, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}" if value in (0, 1) else f"{value:.1%}"


def ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f} ms"


def usd(value: float | None) -> str:
    if value is None:
        return "–"
    # Judge calls cost fractions of a cent; show them rather than round them to $0.00.
    return f"${value:,.4f}" if 0 < value < 1 else f"${value:,.2f}"


def note(text: str) -> str:
    """The "no data" line an empty section shows instead of a chart or table."""
    return f'<p class="nodata">{esc(text)}</p>'


def text_block(text: str | None, missing: str = "(not captured)") -> str:
    if text is None:
        return f'<span class="nodata">{esc(missing)}</span>'
    return f'<div class="text">{esc(text)}</div>'


def pill(text: str, kind: str = "") -> str:
    return f'<span class="pill {esc(kind)}">{esc(text)}</span>'


def _cell(value: Cell) -> str:
    if isinstance(value, Markup):
        return f"<td>{value.html}</td>"
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return f"<td>{esc('–' if value is None else value)}</td>"
    return f'<td class="num">{esc(num(value))}</td>'


def table(headers: Sequence[str], rows: Iterable[Sequence[Cell]], *,
          numeric: Sequence[int] = ()) -> str:
    """A table; `numeric` columns (by index) are right-aligned even when pre-formatted."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for i, value in enumerate(row):
            cell = _cell(value)
            if i in numeric and cell.startswith("<td>"):
                cell = '<td class="num">' + cell[4:]
            cells.append(cell)
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def section(anchor: str, title: str, lead: str, *parts: str) -> str:
    return (f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>'
            f'<p class="lead">{esc(lead)}</p>{"".join(parts)}</section>')
