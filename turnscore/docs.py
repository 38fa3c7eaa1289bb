"""Regenerate the README's derived tables: `python -m turnscore.docs`."""

from __future__ import annotations

import re
from pathlib import Path

from turnscore.ingest.schema import markdown_table

README = Path(__file__).resolve().parents[1] / "README.md"


def sections() -> dict[str, str]:
    return {"turn-schema": markdown_table()}


def regenerate(readme: Path = README) -> None:
    text = readme.read_text()
    for name, body in sections().items():
        text = re.sub(
            rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)",
            lambda m, body=body: f"{m.group(1)}{body}\n{m.group(2)}",
            text,
            flags=re.S,
        )
    readme.write_text(text)


if __name__ == "__main__":
    regenerate()
