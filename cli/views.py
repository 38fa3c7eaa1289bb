"""`turnscore views`: the views with their grain and columns (DESIGN §8).

Thin: the views come from `turnscore.queries.load_views`.
"""

from __future__ import annotations

import sys

import orjson
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from turnscore.cli.options import Json
from turnscore.queries import load_views


def views_cli(json_output: Json = False) -> None:
    """List the views you can `turnscore query` by name, with their grain and columns."""
    views = load_views()
    if json_output:
        data = [{"name": v.name, "grain": v.grain, "order": v.order,
                 "columns": [{"name": c.name, "description": c.description} for c in v.columns]}
                for v in views]
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    table = Table(title="views", show_lines=True)
    table.add_column("view", style="bold")
    table.add_column("grain")
    table.add_column("order")
    table.add_column("columns")
    for v in views:
        cols = "\n".join(f"{escape(c.name)}  [dim]{escape(c.description)}[/dim]"
                         for c in v.columns)
        table.add_row(escape(v.name), escape(v.grain), escape(v.order or "unspecified"), cols)
    Console().print(table)
