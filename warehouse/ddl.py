"""DuckDB DDL derived from an Arrow-typed contract (`turnscore.ingest.schema.Field`).

The `turns` migration is generated from `TURN_FIELDS` with `create_table_sql` and frozen
as a `.sql` file, because a migration is history: once applied to someone's warehouse it
must never change. `tests/warehouse/test_db.py` checks that the migrated `turns` table
still matches `TURN_FIELDS`; when the contract changes, that test fails and the fix is a
new migration (`python -m turnscore.warehouse.ddl` prints the current DDL to start from),
named in `ADDED_COLUMNS` when it adds a column.
"""

from __future__ import annotations

import pyarrow as pa

from turnscore.ingest.schema import TURN_FIELDS, Field
from turnscore.warehouse.db import quote_ident

_SIMPLE: dict[pa.DataType, str] = {
    pa.string(): "VARCHAR",
    pa.large_string(): "VARCHAR",
    pa.bool_(): "BOOLEAN",
    pa.int8(): "TINYINT",
    pa.int16(): "SMALLINT",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.float32(): "FLOAT",
    pa.float64(): "DOUBLE",
    pa.binary(): "BLOB",
    pa.date32(): "DATE",
}


def duckdb_type(t: pa.DataType) -> str:
    """The DuckDB type an Arrow type loads as (struct fields keep their order)."""
    if t in _SIMPLE:
        return _SIMPLE[t]
    if pa.types.is_timestamp(t):
        return "TIMESTAMP WITH TIME ZONE" if t.tz else "TIMESTAMP"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"{duckdb_type(t.value_type)}[]"
    if pa.types.is_struct(t):
        inner = ", ".join(
            f"{quote_ident(t.field(i).name)} {duckdb_type(t.field(i).type)}"
            for i in range(t.num_fields)
        )
        return f"STRUCT({inner})"
    raise TypeError(f"no DuckDB type for Arrow type {t}")


def columns_of(fields: tuple[Field, ...], json: frozenset[str] = frozenset()
               ) -> list[tuple[str, str, bool]]:
    """(name, DuckDB type, nullable) of each field, as `information_schema.columns` spells
    them once migrated (`json`: the fields stored as JSON). What a contract's table check
    compares with."""
    return [(f.name, "JSON" if f.name in json else duckdb_type(f.type), f.nullable)
            for f in fields]


def create_table_sql(table: str, fields: tuple[Field, ...], primary_key: str) -> str:
    """`CREATE TABLE` for a contract; nullability follows each field."""
    cols = [
        f"    {quote_ident(f.name)} {duckdb_type(f.type)}{'' if f.nullable else ' NOT NULL'}"
        for f in fields
    ]
    cols.append(f"    PRIMARY KEY ({quote_ident(primary_key)})")
    return f"CREATE TABLE {quote_ident(table)} (\n" + ",\n".join(cols) + "\n);\n"


ADDED_COLUMNS: dict[str, str] = {"issues": "0009_turn_issues.sql"}
"""`turns` columns added after `0001_turns.sql`, each by the migration named."""


def turns_ddl(*, first: bool = False) -> str:
    """The `turns` DDL of the contract; with `first`, without `ADDED_COLUMNS` (what
    `0001_turns.sql` froze)."""
    fields = tuple(f for f in TURN_FIELDS if not (first and f.name in ADDED_COLUMNS))
    return create_table_sql("turns", fields, "turn_id")


if __name__ == "__main__":
    print(turns_ddl(), end="")
