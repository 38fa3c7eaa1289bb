"""The `turnscore` command. Each command lives in its own module; this file only wires them."""

from __future__ import annotations

import logging
import signal
import sys
from types import FrameType

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
    signal.signal(signal.SIGTERM, _terminated)


def _terminated(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (a scheduler stopping the job) as Ctrl-C: the run in progress records
    itself as interrupted and nothing half-written is committed."""
    raise KeyboardInterrupt("SIGTERM")


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


def main() -> None:
    """The console script: `app`, run so that a usage error (a misspelt option, a bad
    value) is seen here. It is shown as click shows it, and under `--json` its failure
    also goes on stdout, as every other failure does (`options.exit_on_error`), so that a
    caller parsing stdout always finds one document."""
    try:  # typer 0.2x vendors click, and its public names do not include this base class
        from typer._click.exceptions import ClickException
    except ImportError:
        from click.exceptions import ClickException  # type: ignore[assignment]

    try:
        code = app(standalone_mode=False)
    except ClickException as exc:
        exc.show()
        if "--json" in sys.argv[1:]:
            from turnscore.cli.options import print_json

            print_json({"outcome": "failed", "error": exc.format_message(),
                        "exit_code": exc.exit_code})
        sys.exit(exc.exit_code)
    except typer.Abort:
        print("Aborted!", file=sys.stderr)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
