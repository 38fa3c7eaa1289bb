"""`turnscore demo`: the bundled sample, end to end, offline (DESIGN §8).

Thin: the work is `turnscore.demo.run.run_demo`. Exit codes as for `turnscore nightly`.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from turnscore.cli.options import EXIT_FOR_OUTCOME, Json, exit_on_error, print_json

if TYPE_CHECKING:
    from turnscore.demo.run import DemoReport


def demo_cli(
    directory: Annotated[Path, typer.Option(
        "--dir", help="Folder for the demo's exports, config, warehouse and report.")
    ] = Path("turnscore-demo"),
    json_output: Json = False,
) -> None:
    """Generate simulated agent traces with the OTel SDK, run the nightly job on them, and
    print what each agent policy does well and badly."""
    # Imported here: the library's imports (every scorer, polars, the judge client) are
    # a second that `turnscore --help` and the other commands need not pay.
    from turnscore.demo.run import run_demo

    console = Console()
    with exit_on_error(Console(stderr=True)):
        if json_output:
            report = run_demo(directory)
        else:
            with console.status("generating traces and running the nightly job..."):
                report = run_demo(directory)
    if json_output:
        print_json(report.to_json())
    else:
        print_demo(report, console)
    raise typer.Exit(EXIT_FOR_OUTCOME[report.nightly.outcome])


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _mean(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _short(quadrant: str | None) -> str:
    if quadrant is None:
        return "-"
    return quadrant.replace(" tractability", " tract.")


def print_demo(report: DemoReport, console: Console) -> None:
    policies = Table(title="Per policy (agent)", box=box.SIMPLE_HEAD)
    for name in ("policy", "turns", "calls", "halluc", "canary", "correct", "usage", "tract"):
        policies.add_column(name, justify="left" if name == "policy" else "right",
                            no_wrap=True)
    quadrants = Table(title="Usage × Tractability quadrant (high: 5 or more)",
                      box=box.SIMPLE_HEAD)
    quadrants.add_column("policy", no_wrap=True)
    quadrants.add_column("quadrant", no_wrap=True)
    quadrants.add_column("suggests")
    for p in report.policies:
        policies.add_row(escape(p.policy), str(p.turns), _rate(p.tool_call_accuracy),
                         _rate(p.hallucination_rate), _rate(p.canary_pass_rate),
                         _rate(p.answer_correctness), _mean(p.mean_tool_usage),
                         _mean(p.mean_tractability))
        quadrants.add_row(escape(p.policy), escape(_short(p.quadrant)),
                          escape(p.suggests or "-"))
    policies.caption = ("rates 0-1: calls = tool-call accuracy, halluc = hallucination rate, "
                        "canary = canary pass rate, correct = answer correctness; means 0-10: "
                        f"usage = Tool Usage, tract = Tractability ({report.nightly.judge} judge)")
    console.print(policies)
    console.print(quadrants)

    classic = Table(title="The classic example: five plain questions", box=box.SIMPLE_HEAD)
    for name in ("policy", "tool-call accuracy", "hallucination rate"):
        classic.add_column(name, justify="left" if name == "policy" else "right")
    for c in report.classic:
        classic.add_row(escape(c.policy), _rate(c.tool_call_accuracy),
                        _rate(c.hallucination_rate))
    console.print(classic)

    wh = shlex.quote(str(report.warehouse))
    out = shlex.quote(str(report.workdir / "report-all-days.html"))
    start = f" --start {report.first_day.isoformat()}" if report.first_day else ""
    console.print(f"\nReport:    {escape(str(report.report))}", soft_wrap=True)
    console.print(f"Warehouse: {escape(str(report.warehouse))}", soft_wrap=True)
    console.print("\nTry next:")
    for command in (f"turnscore query tool_usage_by_agent --warehouse {wh}",
                    "turnscore views",
                    f"turnscore report --warehouse {wh}{start} --out {out}"):
        console.print(f"  {escape(command)}", highlight=False, soft_wrap=True)
    if report.nightly.problems:
        console.print(f"[yellow]nightly problems:[/yellow] "
                      f"{escape('; '.join(report.nightly.problems))}")
