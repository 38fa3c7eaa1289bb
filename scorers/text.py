"""Text normalisation shared by the correctness scorer and the label join.

`normalized` means: lowercase, punctuation removed (every character that is neither a
letter, a mark, a digit nor whitespace: symbols go too; the underscore and other
connectors count as punctuation), runs of whitespace
collapsed to one space, ends trimmed. "It's  1,000!" -> "its 1000".

There is one implementation, the polars expression `normalize_expr`; `normalize_text`
runs that same expression on one value. Two implementations (Python `re` and the Rust
regex engine behind polars) disagree on what `\\w` and `\\s` cover for some Unicode
characters, and a label joined by one and a turn by the other would then silently fail
to match.
"""

from __future__ import annotations

import polars as pl

_PUNCTUATION = r"[^\w\s]|\p{Pc}"
# Same result as `\s+` -> " ", but a lone space (most of them) is not rewritten.
_WHITESPACE = r"[^\S ]\s*|\s\s+"


def normalize_expr(expr: pl.Expr) -> pl.Expr:
    """`expr` (a string column) normalised; nulls stay null."""
    return (
        expr.str.to_lowercase()
        .str.replace_all(_PUNCTUATION, "")
        .str.replace_all(_WHITESPACE, " ")
        .str.strip_chars()
    )


def normalize_series(values: pl.Series) -> pl.Series:
    """A string Series normalised, vectorised."""
    return pl.select(normalize_expr(pl.lit(values))).to_series().alias(values.name)


def normalize_text(s: str) -> str:
    """One string normalised (see the module docstring)."""
    out = normalize_series(pl.Series("s", [s], dtype=pl.String))[0]
    return str(out)
