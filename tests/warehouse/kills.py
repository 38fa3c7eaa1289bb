"""Killing a child process at a chosen point, as a crash would: no cleanup runs."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def sigkill_at(code: str, args: list[str], line: str) -> None:
    """Run `python -c code args...` from the repository root, wait for it to print `line`
    (the point it holds at), then SIGKILL it."""
    child = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                             text=True, cwd=ROOT)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == line
    finally:
        child.send_signal(signal.SIGKILL)
        returncode = child.wait()
    assert returncode == -signal.SIGKILL
