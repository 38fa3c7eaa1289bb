"""What the ingest tests share: the benchmark's traffic generator, and an ingest folder's
turn and span rows in a form two folders can be compared by."""

from __future__ import annotations

import importlib.util
from dataclasses import astuple
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow.parquet as pq

from turnscore.ingest.store import TurnStore

BENCH = Path(__file__).resolve().parents[2] / "bench" / "ingest.py"


@cache
def load_module(name: str, path: Path) -> ModuleType:
    """A script outside the packages (bench/, tests/fixtures/), imported from its path."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_ingest() -> ModuleType:
    """`bench/ingest.py` (real OTel SDK agent traffic: `Generator`, `generate`)."""
    return load_module("bench_ingest", BENCH)


def turn_rows(out: Path) -> list[tuple[Any, ...]]:
    return sorted(astuple(t) for t in TurnStore(out, "read").read_all())


def span_rows(out: Path) -> list[tuple[Any, ...]]:
    """Every stored span and log row, whatever part files hold them."""
    rows: list[tuple[Any, ...]] = []
    for path in sorted((out / "spans").rglob("part-*.parquet")):
        rows += [tuple(r.values()) for r in pq.read_table(path).to_pylist()]
    return sorted(rows, key=repr)
