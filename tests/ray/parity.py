"""What the Ray tests compare: a warehouse's rows, lineage paths made relative to the input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pyarrow.fs as pafs

from turnscore.warehouse.db import DB_FILE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SHARED_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


def upload(folder: Path, endpoint: str, bucket: str, prefix: str) -> int:
    """Copy every file under `folder` to s3://bucket/prefix/<relative path>."""
    fs = pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", region="us-east-1",
                           access_key="testing", secret_key="testing")
    n = 0
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with fs.open_output_stream(f"{bucket}/{prefix}/{path.relative_to(folder)}") as fh:
                fh.write(path.read_bytes())
            n += 1
    return n


def _rows(con: duckdb.DuckDBPyConnection, sql: str, prefix: str) -> list[tuple[Any, ...]]:
    out = []
    for row in con.execute(sql).fetchall():
        out.append(tuple(v.replace(prefix, "") if isinstance(v, str) else v for v in row))
    return sorted(out, key=repr)


def warehouse_rows(warehouse: Path, prefix: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every turn (all columns but the run id), input error (once: a file that gave only
    errors is reported again by every run, by either engine) and ingested file, with
    `prefix` (where the input was read from) cut out of the paths; and every score."""
    con = duckdb.connect(str(warehouse / DB_FILE), read_only=True)
    try:
        cols = [c[0] for c in con.execute("DESCRIBE turns").fetchall() if c[0] != "ingest_id"]
        score_cols = [c[0] for c in con.execute("DESCRIBE scores").fetchall()
                      if c[0] not in ("run_id", "scored_at", "latency_ms")]
        return {
            "turns": _rows(con, f"SELECT {', '.join(cols)} FROM turns", prefix),
            "errors": _rows(con, "SELECT DISTINCT source, position, trace_id, span_id, message "
                                 "FROM ingest_errors", prefix),
            "files": _rows(con, "SELECT file_key, path, bytes, spans, logs "
                                "FROM ingested_files", prefix),
            "scores": _rows(con, f"SELECT {', '.join(score_cols)} FROM scores", prefix),
        }
    finally:
        con.close()
