"""`IngestSettings`: what the ingest stages need to know beyond the input, in one object.

Built once (from `turnscore.toml` and the command line, `warehouse.config.Config.
ingest_settings`) and passed whole, rather than each setting threaded through every call.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from turnscore.ingest.formats import DEFAULT_LIMITS, Limits

__all__ = ["DEFAULT_GROUP_BYTES", "IngestSettings", "workers_from_env"]

logger = logging.getLogger(__name__)

DEFAULT_GROUP_BYTES = 32 << 20
"""File bytes read per group; decoded records take a few times this in memory."""


@dataclass(frozen=True, slots=True)
class IngestSettings:
    case_id_attribute: str | None = None
    """The span attribute holding the labelled-case key (`Turn.case_id`)."""
    limits: Limits = DEFAULT_LIMITS
    """How far a compressed file may expand (`formats.Limits`)."""
    workers: int | None = None
    """Processes sharing the partitions; None: `pipeline.default_workers()`."""
    group_bytes: int = DEFAULT_GROUP_BYTES
    """File bytes read per group (`turnscore.ingest.pipeline`)."""


def workers_from_env(name: str, most: int) -> int:
    """Worker processes: `$name` when set (a number, at least 1), else the cores up to
    `most`. Ingest and judge-free scoring both size their pools by it."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return min(os.cpu_count() or 1, most)
    try:
        return max(1, int(raw))
    except ValueError:
        logger.warning("%s=%r is not a number; using 1 worker", name, raw)
        return 1
