"""Regenerate the README's derived tables: `python -m turnscore.docs`.

Each table is generated from the code that defines the thing (the turn, score and label
contracts, the scorer registry, the view files, the typer app); `tests/test_readme.py`
fails when the README drifts from them.
"""

from __future__ import annotations

from pathlib import Path

import typer.main

from turnscore.ingest.schema import markdown_table
from turnscore.queries import load_views
from turnscore.scorers import REGISTRY
from turnscore.warehouse.label_schema import LABEL_COLUMNS
from turnscore.warehouse.score_schema import SCORE_FIELDS

README = Path(__file__).resolve().parents[1] / "README.md"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def commands_table() -> str:
    from turnscore.cli.main import app

    rows = ["| command | does |", "|---|---|"]
    group = typer.main.get_group(app)
    for name, cmd in sorted(group.commands.items()):
        subs = getattr(cmd, "commands", None)
        if subs:
            for sub_name, sub in sorted(subs.items()):
                rows.append(
                    f"| `turnscore {name} {sub_name}` | {_cell(sub.get_short_help_str(200))} |"
                )
        else:
            rows.append(f"| `turnscore {name}` | {_cell(cmd.get_short_help_str(200))} |")
    return "\n".join(rows)


def scorers_table() -> str:
    rows = ["| scorer | kind | version | reads | what it says |", "|---|---|---|---|---|"]
    for s in sorted(REGISTRY.values(), key=lambda s: (s.kind != "judge", s.name)):
        reads = ", ".join(s.reads)
        rows.append(f"| `{s.name}` | {s.kind} | {s.version} | {reads} | {_cell(s.description)} |")
    return "\n".join(rows)


def views_table() -> str:
    rows = ["| view | grain | row order | columns |", "|---|---|---|---|"]
    for v in sorted(load_views(), key=lambda v: v.name):
        cols = ", ".join(f"`{c.name}`" for c in v.columns)
        order = f"`{v.order}`" if v.order else "unspecified"
        rows.append(f"| `{v.name}` | {_cell(v.grain)} | {order} | {cols} |")
    return "\n".join(rows)


def sections() -> dict[str, str]:
    return {
        "commands": commands_table(),
        "scorers": scorers_table(),
        "views": views_table(),
        "turn-schema": markdown_table(),
        "score-schema": markdown_table(SCORE_FIELDS),
        "label-schema": markdown_table(LABEL_COLUMNS),
    }


def regenerate(readme: Path = README) -> None:
    text = readme.read_text()
    for name, body in sections().items():
        start, end = f"<!-- {name}:start -->\n", f"<!-- {name}:end -->"
        before, found, rest = text.partition(start)
        if not found:
            raise SystemExit(f"README has no {start.strip()} marker")
        text = before + start + body + "\n" + rest[rest.index(end):]
    readme.write_text(text)


if __name__ == "__main__":
    regenerate()
