"""The `turnscore` command. Each command lives in its own module; this file only wires them."""

from __future__ import annotations

import logging

import typer

app = typer.Typer(
    name="turnscore",
    help="How well do your LLM agents use their tools? Ingest OTel spans, score turns, query.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Markdown joins a docstring's wrapped lines; rich mode kept its line breaks.
    rich_markup_mode="markdown",
)


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log details.")) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


def _register() -> None:
    # Imported here so `turnscore --help` stays one module per command.
    from turnscore.cli.demo import demo_cli
    from turnscore.cli.ingest import ingest_cli
    from turnscore.cli.judge import app as judge_app
    from turnscore.cli.labels import labels_cli
    from turnscore.cli.nightly import nightly_cli
    from turnscore.cli.query import query_cli
    from turnscore.cli.report import report_cli
    from turnscore.cli.score import score_cli
    from turnscore.cli.views import views_cli

    app.command("ingest")(ingest_cli)
    app.command("labels")(labels_cli)
    app.command("nightly")(nightly_cli)
    app.command("demo")(demo_cli)
    app.command("score")(score_cli)
    app.command("query")(query_cli)
    app.command("views")(views_cli)
    app.command("report")(report_cli)
    app.add_typer(judge_app, name="judge")


_register()
