"""Hold a warehouse's writer lock from another process, as a concurrent run would.

The lock is re-entrant within one process, so a test that wants "busy" needs a second one.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_HOLD = """
import sys, time
from pathlib import Path
from turnscore.warehouse.db import writer_lock
with writer_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


@contextmanager
def held_by_another_process(warehouse: Path) -> Iterator[int]:
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(warehouse)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder.pid
    finally:
        holder.kill()
        holder.wait()
