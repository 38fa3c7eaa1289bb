"""The command starts without importing what only some commands use: every scorer, polars,
the judge client and the ingest pipeline are imported by the commands that run them."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("turnscore.scorers", "turnscore.ingest.pipeline", "polars", "httpx")


def test_the_cli_imports_no_library_it_may_not_need() -> None:
    code = ("import sys, turnscore.cli.main; "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
