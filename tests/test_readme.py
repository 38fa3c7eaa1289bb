"""The README's generated tables must match the code they are generated from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from turnscore import docs

README = Path(__file__).resolve().parents[1] / "README.md"


def _section(name: str) -> str:
    text = README.read_text()
    match = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    assert match, f"README has no {name} section"
    return match.group(1).strip()


@pytest.mark.parametrize("name", sorted(docs.sections()))
def test_generated_section_matches_the_code(name: str) -> None:
    assert _section(name) == docs.sections()[name], (
        f"README section {name!r} drifted: run `python -m turnscore.docs` to regenerate"
    )


def test_quick_start_is_two_commands() -> None:
    text = README.read_text()
    block = re.search(r"## Quick start\s+```bash\n(.*?)```", text, re.S)
    assert block
    commands = [line for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]


def test_ray_section_commands_use_real_options() -> None:
    """Every `--option` in the Ray section's commands is an option of its command."""
    from typer.main import get_command

    from turnscore.cli.main import app

    text = README.read_text()
    block = re.search(r"## Running on a Ray cluster against object storage\s+.*?```bash\n(.*?)```",
                      text, re.S)
    assert block, "README has no Ray section with commands"
    group = get_command(app)
    checked = 0
    for line in block.group(1).splitlines():
        words = line.split()
        if words[:1] != ["turnscore"]:
            continue
        command = group.commands[words[1]]  # type: ignore[attr-defined]
        known = {opt for p in command.params for opt in p.opts}
        for word in words[2:]:
            if word.startswith("--"):
                assert word in known, f"{line!r}: {word} is not an option of {words[1]}"
                checked += 1
    assert checked >= 6
