"""`--engine`, `--ray-address` and `--data-root`: where `ingest`, `score` and `nightly` run
(DESIGN §7).

Declared once for the three commands. The local engine is the default and needs nothing
beyond turnscore; `--engine ray` needs the `ray` extra (`pip install 'turnscore[ray]'`).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class Engine(StrEnum):
    LOCAL = "local"
    RAY = "ray"


EngineOption = Annotated[Engine, typer.Option(
    "--engine", envvar="TURNSCORE_ENGINE",
    help="Where the work runs: this machine's processes (local), or Ray Data tasks on a "
         "Ray cluster (ray; needs `pip install 'turnscore[ray]'`).")]
RayAddress = Annotated[str | None, typer.Option(
    "--ray-address", envvar="TURNSCORE_RAY_ADDRESS",
    help="With --engine ray: the cluster to run on (HOST:PORT of its head); default: a "
         "local Ray started for the run.")]
DataRoot = Annotated[str | None, typer.Option(
    "--data-root", envvar="TURNSCORE_DATA_ROOT",
    help="With --engine ray: where spans/, turns/ and scores/ Parquet go (s3://, gs://, "
         "file:// or a folder); default: ray-data/ in the warehouse folder.")]

DEFAULT_DATA_ROOT = "ray-data"
"""Under the warehouse folder, when `--data-root` is not given."""


def data_root_of(option: str | None, warehouse: Path) -> str:
    return option or str(warehouse / DEFAULT_DATA_ROOT)
