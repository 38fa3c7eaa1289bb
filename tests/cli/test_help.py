"""`--help` reads as written: markup-looking text survives, summaries are not cut."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from turnscore.cli.main import app

runner = CliRunner()


def _help(*args: str) -> str:
    result = runner.invoke(app, [*args, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())  # the layout's wrapping is not under test


@pytest.mark.parametrize(("command", "text"), [
    ("nightly", "the LLM judge when [judge] has a base_url"),
    ("score", "the LLM judge configured in [judge] (llm)"),
])
def test_bracketed_names_are_shown(command: str, text: str) -> None:
    assert text in _help(command)


def test_every_command_summary_reads_as_one_paragraph() -> None:
    # Rich markup kept a docstring's line breaks, cutting summaries mid-sentence.
    top = _help().replace("│", " ")
    top = " ".join(top.split())
    for command in app.registered_commands:
        doc = command.callback.__doc__ if command.callback else None
        assert doc, command.name
        first = " ".join(doc.split("\n\n")[0].split())
        assert first.replace("`", "") in top, command.name
