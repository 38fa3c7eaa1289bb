"""`turnscore judge check`: is each configured judge reachable, how fast, structured output?"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

import orjson
import typer

from turnscore.cli.options import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Config, Json
from turnscore.errors import ConfigError
from turnscore.warehouse.config import load_config

if TYPE_CHECKING:
    from turnscore.scorers.judge.check import JudgeCheck

app = typer.Typer(help="LLM judges: check their configuration.", no_args_is_help=True)


@app.callback()
def _judge() -> None:
    """LLM judges (configured in the [judge] table of turnscore.toml)."""


@app.command("check")
def check_cli(config: Config = None, json: Json = False) -> None:
    """Judge a sample turn with each configured judge; report model, latency, structured output."""
    # Imported here: the judge and every scorer are a second that `turnscore --help` and
    # the other commands need not pay.
    from turnscore.scorers.judge.check import check_judges
    from turnscore.scorers.judge.config import load_judge_settings
    from turnscore.scorers.judged import SAMPLE_TURN, SPECS

    try:
        table = load_config(config).judge
        settings = load_judge_settings(table, known_scorers=tuple(SPECS))
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    results = check_judges(settings, SPECS, SAMPLE_TURN)
    if json:
        typer.echo(orjson.dumps([asdict(r) for r in results]).decode())
    else:
        for r in results:
            typer.echo(_line(r))
    raise typer.Exit(EXIT_OK if all(r.ok for r in results) else EXIT_FAILED)


def _line(r: JudgeCheck) -> str:
    who = f"{', '.join(r.scorers)}: {r.judge}"
    if r.base_url is None:
        return f"{who} (rules judge, offline; no endpoint configured)"
    notes = "".join(f"\n  note: {n}" for n in r.notes)
    if not r.ok:
        return f"{who} at {r.base_url}: FAILED: {r.error}{notes}"
    structured = ("not supported (prompt only)" if r.structured_output == "prompt"
                  else f"works ({r.structured_output})")
    return (f"{who} at {r.base_url}: ok in {r.latency_ms:.0f} ms; model {r.model}; "
            f"structured output {structured}; sample verdict {r.verdict}{notes}")
