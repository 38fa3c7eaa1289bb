"""`turnscore query SQL_OR_VIEW`: a view by name or any read-only SQL (DESIGN §8).

Thin: the work is `turnscore.warehouse.query.run_query`; this module renders the rows.
`--format json` writes one array of objects; `jsonl` one object per line; `parquet`
needs `--out`. Exit codes: 0 rows written, 2 the input was not a read-only query,
1 no warehouse, or the query ran past its timeout or memory limit.
"""

from __future__ import annotations

import csv
import io
import math
import os
import sys
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any
from uuid import UUID

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from turnscore.cli.options import (
    DEFAULT_WAREHOUSE,
    EXIT_USAGE,
    Config,
    Warehouse,
    exit_on_error,
    warehouse_of,
)
from turnscore.errors import TurnscoreError
from turnscore.warehouse.config import load_config
from turnscore.warehouse.query import (
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TIMEOUT_S,
    QueryLimits,
    QueryResult,
    run_query,
)


class Format(StrEnum):
    TABLE = "table"
    CSV = "csv"
    JSON = "json"
    JSONL = "jsonl"
    PARQUET = "parquet"


def query_cli(
    sql_or_view: Annotated[str, typer.Argument(help="A view name (see `turnscore views`) "
                                                    "or one read-only SQL statement.")],
    output_format: Annotated[Format, typer.Option("--format", "-f", help="Output format.")
                             ] = Format.TABLE,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write to FILE instead of "
                                             "standard output.")] = None,
    published: Annotated[bool, typer.Option(
        "--published", help="Read the snapshot the last run published (views are tables "
                            "there: fast on large warehouses) instead of the live "
                            "warehouse.")] = False,
    memory_limit: Annotated[str | None, typer.Option(
        "--memory-limit", envvar="TURNSCORE_QUERY_MEMORY_LIMIT",
        help="Memory the query may use: a size (4GB) or a share of the RAM (25%). "
             "Default: [query] memory_limit, else 25%.")] = None,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", envvar="TURNSCORE_QUERY_TIMEOUT", min=0.001,
        help="Seconds before the query is stopped. Default: [query] timeout_s, else 300.")
    ] = None,
    warehouse: Warehouse = DEFAULT_WAREHOUSE,
    config: Config = None,
) -> None:
    """Run a view by name, or any read-only SQL, against the warehouse."""
    err = Console(stderr=True)
    if output_format is Format.PARQUET and out is None:
        err.print("[red]error:[/red] --format parquet needs --out FILE")
        raise typer.Exit(EXIT_USAGE)
    with exit_on_error(err):
        settings = load_config(config)
        limits = QueryLimits(
            memory_limit=memory_limit or settings.query_memory_limit or DEFAULT_MEMORY_LIMIT,
            timeout_s=timeout or settings.query_timeout_s or DEFAULT_TIMEOUT_S)
        result = run_query(warehouse_of(warehouse, settings), sql_or_view,
                           published=published, limits=limits)
    if result.snapshot and not published:
        err.print(f"note: a run holds the live warehouse; read the snapshot {result.database}")
    with exit_on_error(err):
        _write(result, output_format, out)


def _write(result: QueryResult, output_format: Format, out: Path | None) -> None:
    if output_format is Format.PARQUET:
        assert out is not None
        _atomic_write(out, lambda tmp: pq.write_table(result.table, tmp))
    elif output_format is Format.TABLE and out is None:
        Console().print(_rich_table(result))
    else:
        text = render(result.table, output_format)
        if out is None:
            sys.stdout.write(text)
        else:
            _atomic_write(out, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        # SUMs of integers come back as DECIMAL(38,0): keep them numbers in JSON.
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _json(value: Any) -> bytes:
    return orjson.dumps(value, default=_json_default, option=orjson.OPT_NON_STR_KEYS)


def _cell(value: Any) -> str:
    """A CSV/table cell: nested values as JSON, times as ISO 8601, null as empty."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return _json(value).decode()
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    return str(value)


def render(table: pa.Table, output_format: Format) -> str:
    """Rows as text in `output_format` (table, csv, json or jsonl)."""
    rows = table.to_pylist()
    if output_format is Format.JSON:
        return _json(rows).decode() + "\n"
    if output_format is Format.JSONL:
        return "".join(_json(r).decode() + "\n" for r in rows)
    if output_format is Format.CSV:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(table.column_names)
        writer.writerows([_cell(v) for v in r.values()] for r in rows)
        return buf.getvalue()
    buf = io.StringIO()
    Console(file=buf, width=200, no_color=True).print(_rich_table_of(table))
    return buf.getvalue()


def _rich_table(result: QueryResult) -> Table:
    return _rich_table_of(result.table, title=result.relation)


def _rich_table_of(table: pa.Table, title: str | None = None) -> Table:
    out = Table(title=escape(title) if title else None, caption=f"{table.num_rows:,} rows")
    for name in table.column_names:
        out.add_column(escape(name), overflow="fold")
    for row in table.to_pylist():
        out.add_row(*(escape(_shown(v)) for v in row.values()))
    return out


def _shown(value: Any) -> str:
    """A table cell for reading: floats to 4 decimals (2.5714, not 2.5714285714285716);
    csv, json and jsonl keep every digit."""
    if isinstance(value, float) and math.isfinite(value) and value != int(value):
        if abs(value) < 0.001:
            return f"{value:.3g}"
        return f"{value:.4f}".rstrip("0").rstrip(".")
    return _cell(value)


def _atomic_write(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:  # a missing folder, no permission, a full disk
        raise TurnscoreError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
