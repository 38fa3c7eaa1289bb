"""The SQL views (DESIGN §6): one view per `queries/<name>.sql`, plus the generated
`turn_scores`.

Each file starts with a comment block that `load_views` parses::

    -- grain: one row per tool call
    -- columns:
    --   turn_id      the turn that made the call
    --   tool         tool name
    SELECT ...

The view's name is the file's stem. A column named `*` means "and more columns" (for
example one per registered scorer); `turnscore views` shows it as such, and the test
that pins declared against actual columns treats it as open-ended.

Row order: a view whose header has an `-- order: day, scorer` line returns its rows in
that order (the ORDER BY is added around the file's SELECT, from that line, so the order
is declared once and `turnscore views` and the README show it); the snapshot stores its
table in that order too. A view without one (the per-turn and per-call views, where
sorting a million rows on every read would cost more than it gives) returns rows in no
particular order: sort in the query that reads it.

The agent rule, once: a turn's agent is its `agent_name`, else its resource's
`service.name` (`service_name`). Every view and every other query of the package spells
it `turn_agent(agent_name, service_name)`, a DuckDB macro defined once in
`turnscore.warehouse.db.MACROS` (re-exported here) and created with the views
(`create_macros`: by every writer's `open_warehouse` and by `refresh_views`, as TEMP
macros on the package's read-only connections); a test fails when a copy of the rule
appears anywhere else.

`turn_scores` (one row per turn, one column per scorer) is generated from the scorer
registry by `turn_scores_sql`, because DuckDB cannot PIVOT on data values inside a view.
Scorer names are literals inside that generated SQL: a view definition cannot take
bound parameters, so names go through `_literal` and `quote_ident` instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol

from turnscore.errors import TurnscoreError
from turnscore.warehouse.db import AGENT_MACRO, MACROS, Macro, create_macros, quote_ident

TURN_SCORES = "turn_scores"

DESIGN_SCORERS: tuple[tuple[str, str], ...] = (
    ("tool_usage", "judge"),
    ("tractability", "judge"),
    ("tool_grounding", "code"),
    ("answer_correctness", "code"),
    ("tool_call_accuracy", "code"),
    ("groundedness", "code"),
    ("call_validity", "code"),
)
"""The scorers DESIGN §4 names: `turn_scores` always has their columns, registered or not,
so views over them bind before any judged score exists."""

_HEADER_KEY = re.compile(r"^--\s*(grain|columns|order)\s*:\s*(.*)$")
_COLUMN = re.compile(r"^--\s+(\*|[A-Za-z_][A-Za-z0-9_]*)\s+(.*\S)\s*$")


class ViewHeaderError(TurnscoreError):
    """A `queries/*.sql` file whose header comment is missing or malformed."""


class ScorerLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ViewColumn:
    name: str
    description: str


@dataclass(frozen=True, slots=True)
class View:
    name: str
    grain: str
    """What one row is."""
    columns: tuple[ViewColumn, ...]
    sql: str
    """The SELECT, header included; `CREATE OR REPLACE VIEW name AS` goes in front."""
    path: Path | None
    """The `.sql` file; None for generated views."""
    order: str | None = None
    """The header's `-- order:` line (an ORDER BY list over the view's columns); None:
    rows come in no particular order."""

    def select_sql(self) -> str:
        """The view's SELECT, ordered by `order` when it has one."""
        body = self.sql.strip().rstrip(";")
        if self.order is None:
            return body
        # Around the file's SELECT, so its ORDER BY can only name the view's own columns.
        return f"SELECT * FROM (\n{body}\n) AS {quote_ident(self.name)}\nORDER BY {self.order}"

    def create_sql(self, *, temp: bool = False) -> str:
        kind = "TEMP VIEW" if temp else "VIEW"
        return f"CREATE OR REPLACE {kind} {quote_ident(self.name)} AS\n{self.select_sql()}"


def load_views(scorers: Iterable[ScorerLike] | None = None) -> list[View]:
    """Every view: `turn_scores` (from `scorers`, default the registry) then the files,
    ordered so that a view comes after the views it reads."""
    if scorers is None:
        from turnscore.scorers import REGISTRY

        scorers = REGISTRY.values()
    files = []
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(".sql"):
            path = Path(str(entry))
            files.append(parse_view(path.stem, entry.read_text("utf-8"), path))
    return _ordered([turn_scores_view(scorers), *sorted(files, key=lambda v: v.name)])


def parse_view(name: str, text: str, path: Path | None = None) -> View:
    """A view from its file text; raises `ViewHeaderError` naming the file and line."""
    where = str(path or name)
    grain: str | None = None
    order: str | None = None
    columns: list[ViewColumn] = []
    in_columns = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("--"):
            break
        key = _HEADER_KEY.match(stripped)
        if key:
            in_columns = key.group(1) == "columns"
            if key.group(1) == "grain":
                grain = key.group(2).strip()
            elif key.group(1) == "order":
                order = key.group(2).strip() or None
            continue
        if in_columns:
            col = _COLUMN.match(stripped)
            if col is None:
                raise ViewHeaderError(f"{where}:{number}: expected '--   column  description', "
                                      f"got {stripped!r}")
            columns.append(ViewColumn(col.group(1), col.group(2)))
    if not grain:
        raise ViewHeaderError(f"{where}: the header has no '-- grain: ...' line")
    if not columns:
        raise ViewHeaderError(f"{where}: the header lists no columns under '-- columns:'")
    return View(name, grain, tuple(columns), text, path, order)


def _scorer_columns(scorers: Iterable[ScorerLike]) -> list[tuple[str, str]]:
    """DESIGN's scorers in their order, then any other registered ones by name."""
    known = dict(DESIGN_SCORERS)
    extra = {s.name: s.kind for s in scorers if s.name not in known}
    return [*DESIGN_SCORERS, *sorted(extra.items())]


def turn_scores_sql(scorers: Iterable[ScorerLike]) -> str:
    """The wide `turn_scores` SELECT: turn_id, then per scorer its value (NULL unless
    status is 'scored'), and `<scorer>_explanation` for judged scorers."""
    # max(CASE ...) rather than max(...) FILTER (...): the same rows (max skips NULLs),
    # and about a quarter faster over millions of scores.
    select = ["turn_id"]
    for name, kind in _scorer_columns(scorers):
        lit = _literal(name)
        select.append(f"max(CASE WHEN scorer = {lit} AND status = 'scored' THEN value END) "
                      f"AS {quote_ident(name)}")
        if kind == "judge":
            select.append(f"max(CASE WHEN scorer = {lit} THEN explanation END) "
                          f"AS {quote_ident(name + '_explanation')}")
    body = ",\n       ".join(select)
    return f"SELECT {body}\nFROM scores\nGROUP BY turn_id"


def turn_scores_view(scorers: Iterable[ScorerLike]) -> View:
    scorers = list(scorers)
    columns = [ViewColumn("turn_id", "the turn")]
    for name, kind in _scorer_columns(scorers):
        columns.append(ViewColumn(name, f"{name} value ({'0-10' if kind == 'judge' else '0-1'}),"
                                        " NULL unless scored"))
        if kind == "judge":
            columns.append(ViewColumn(f"{name}_explanation", f"{name} assessment"))
    grain = "one row per turn that has any score"
    header = "\n".join([f"-- grain: {grain}", "-- columns:",
                        *(f"--   {c.name}  {c.description}" for c in columns)])
    return View(TURN_SCORES, grain, tuple(columns), f"{header}\n{turn_scores_sql(scorers)}", None)


def _ordered(views: list[View]) -> list[View]:
    """Dependencies first (a view reads another when the SQL names it as a word)."""
    by_name = {v.name: v for v in views}
    done: dict[str, View] = {}

    def visit(view: View, path: tuple[str, ...]) -> None:
        if view.name in done:
            return
        if view.name in path:
            raise ViewHeaderError(f"views read each other in a cycle: {' -> '.join(path)}")
        body = "\n".join(ln for ln in view.sql.splitlines() if not ln.strip().startswith("--"))
        for other in by_name:
            if other != view.name and re.search(rf"\b{re.escape(other)}\b", body):
                visit(by_name[other], (*path, view.name))
        done[view.name] = view

    for view in views:
        visit(view, ())
    return list(done.values())


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


__all__ = ["AGENT_MACRO", "DESIGN_SCORERS", "MACROS", "TURN_SCORES", "Macro", "View",
           "ViewColumn", "ViewHeaderError", "create_macros", "load_views", "parse_view",
           "turn_scores_sql", "turn_scores_view"]
