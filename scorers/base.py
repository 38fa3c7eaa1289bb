"""The scorer protocol, the `Score` record and the registry (DESIGN §5).

A scorer is a function over a batch of turns (with their labelled cases) that returns one
`Score` per turn, registered with `@scorer(name=..., version=..., kind=...)`. Failing to
score is data: `Score.error(...)`, never an exception that stops the batch. A case without
the label a scorer needs gives `Score.inconclusive(...)`, never a failure.

A code scorer may also register a *columnar* entry point with `@columnar(name)`: a
function over the batch as a polars DataFrame (one row per turn, columns named as the
`Turn` fields; `tools` and `calls` are lists of structs) and the cases, returning the
verdicts as columns (`SCORE_COLUMNS`: status, value, label, explanation, and details as
JSON text) instead of `Score` objects. The score runner prefers it: the batch is then
never decoded into `Turn`s for that scorer, and rows go to the warehouse as Arrow. Its
results must be exactly what `fn` gives (the scorer table tests check both), and `fn`
stays the reference and the fallback: if the columnar function raises, the batch is
scored with `fn`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol, TypeVar

import orjson
import polars as pl
import pyarrow as pa

from turnscore.ingest.turn import Turn


class Status(StrEnum):
    SCORED = "scored"
    INCONCLUSIVE = "inconclusive"
    NOT_RUN = "not_run"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Case:
    """A labelled case joined to a turn. Fields absent from the label file are None."""

    case_id: str
    input: str
    canary: tuple[str, ...] | None = None
    ideal_response: str | None = None
    match_mode: str | None = None
    expected_tools: tuple[str, ...] | None = None
    expected_tools_mode: str | None = None
    should_decline: bool | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Usage:
    """What judging a turn cost."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class Score:
    """One scorer's verdict on one turn."""

    status: Status
    value: float | None = None
    """0-1 for code scorers, 0-10 for judged ones; None unless scored."""
    label: str | None = None
    """Short verdict: 'pass', 'fail', 'grounded', ...."""
    explanation: str | None = None
    """Why: for judged scorers the assessment, written before the score."""
    details: dict[str, object] = field(default_factory=dict)
    """Structured evidence (JSON): per-call verdicts, missing canaries, ..."""
    judge: str | None = None
    """Model id, 'rules-v1', or None for code scorers."""
    prompt_sha: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None

    @classmethod
    def scored(
        cls,
        value: float,
        label: str | None = None,
        explanation: str | None = None,
        details: dict[str, object] | None = None,
        **kw: object,
    ) -> Score:
        return cls(Status.SCORED, value, label, explanation, details or {}, **kw)  # type: ignore[arg-type]

    @classmethod
    def inconclusive(cls, why: str, **kw: object) -> Score:
        return cls(Status.INCONCLUSIVE, explanation=why, **kw)  # type: ignore[arg-type]

    @classmethod
    def not_run(cls, why: str, **kw: object) -> Score:
        return cls(Status.NOT_RUN, explanation=why, **kw)  # type: ignore[arg-type]

    @classmethod
    def failed(cls, error: str, **kw: object) -> Score:
        """The scorer could not score this turn (an `error` row, retried next run)."""
        return cls(Status.ERROR, error=error, **kw)  # type: ignore[arg-type]


class ScoreFn(Protocol):
    def __call__(self, turns: Sequence[Turn], cases: Sequence[Case | None]) -> list[Score]: ...


class ColumnsFn(Protocol):
    def __call__(self, turns: pl.DataFrame, cases: Sequence[Case | None]) -> pl.DataFrame: ...


SCORE_COLUMNS: dict[str, type[pl.DataType]] = {
    "status": pl.String, "value": pl.Float64, "label": pl.String, "explanation": pl.String,
    "details": pl.String,
}
"""What a columnar scorer returns, one row per turn in batch order."""
NO_CASE = "no labelled case for this turn"
"""The explanation of a case-based scorer's verdict on a turn without a case."""


def details_json(details: dict[str, object]) -> str:
    """`Score.details` as written to the warehouse (one encoding for both entry points)."""
    return orjson.dumps(details, default=str).decode()


NO_DETAILS = details_json({})
"""The details of a verdict that has none."""


def score_columns(scores: Sequence[Score]) -> pl.DataFrame:
    """`scores` as `SCORE_COLUMNS`. Only code scores fit: judge, usage and error have no
    column, so a score that sets them is refused."""
    plain = Usage()
    for s in scores:
        if s.judge is not None or s.prompt_sha is not None or s.usage != plain or s.error:
            raise ValueError(f"a columnar scorer cannot return {s!r}")
    return pl.DataFrame(
        {"status": [str(s.status) for s in scores], "value": [s.value for s in scores],
         "label": [s.label for s in scores], "explanation": [s.explanation for s in scores],
         "details": [details_json(s.details) for s in scores]},
        schema=SCORE_COLUMNS,
    )


@dataclass(frozen=True, slots=True)
class Scorer:
    name: str
    version: str
    kind: str
    """'code' or 'judge'."""
    reads: tuple[str, ...]
    """Turn fields (and labels) the scorer reads; documentation and a test check it."""
    description: str
    fn: ScoreFn
    columns: ColumnsFn | None = None
    """The columnar entry point, if any (see the module docstring)."""

    def score(self, turns: Sequence[Turn], cases: Sequence[Case | None]) -> list[Score]:
        """Score a batch. If the scorer raises, the batch is retried turn by turn, so one
        bad turn becomes one `error` row and the others are still scored."""
        try:
            out = self.fn(turns, cases)
            if len(out) != len(turns):
                raise RuntimeError(f"{self.name} returned {len(out)} scores for {len(turns)} turns")
            return out
        except Exception:
            results = []
            for t, c in zip(turns, cases, strict=True):
                try:
                    results.extend(self.fn([t], [c]))
                except Exception as exc:  # failure is data, not a stopped batch
                    results.append(Score.failed(f"{type(exc).__name__}: {exc}"))
            return results

    def score_frame(self, turns: pl.DataFrame, cases: Sequence[Case | None]) -> pl.DataFrame:
        """Score a batch through the columnar entry point; raises if there is none or it
        fails (the caller falls back to `score`)."""
        if self.columns is None:
            raise TypeError(f"{self.name} has no columnar entry point")
        out = self.columns(turns, cases)
        if out.height != turns.height:
            raise RuntimeError(f"{self.name} returned {out.height} rows for {turns.height} turns")
        out = out.select(pl.col(n).cast(t) for n, t in SCORE_COLUMNS.items())
        # Checked here, where a bad column still falls back to `fn`: past this point it
        # would fail the whole batch's write.
        bad = out.filter(~pl.col("status").is_in([s.value for s in Status])
                         | pl.col("status").is_null())
        if bad.height:
            raise ValueError(f"{self.name} returned status {bad['status'][0]!r}")
        return out


REGISTRY: dict[str, Scorer] = {}


def scorer(
    *, name: str, version: str, kind: str, reads: tuple[str, ...], description: str
) -> Callable[[ScoreFn], ScoreFn]:
    """Register a batch scoring function under `name`."""

    def register(fn: ScoreFn) -> ScoreFn:
        if name in REGISTRY:
            raise ValueError(f"scorer {name!r} is registered twice")
        REGISTRY[name] = Scorer(name, version, kind, reads, description, fn)
        return fn

    return register


def columnar(name: str) -> Callable[[ColumnsFn], ColumnsFn]:
    """Register the columnar entry point of the scorer `name` (registered before)."""

    def register(fn: ColumnsFn) -> ColumnsFn:
        REGISTRY[name] = replace(REGISTRY[name], columns=fn)
        return fn

    return register


def cased_columns(cases: Sequence[Case | None],
                  score: Callable[[list[int]], pl.DataFrame]) -> pl.DataFrame:
    """Columns for a scorer that finds every turn without a case inconclusive: those rows
    are whole constant columns, and `score(indices)` gives the `SCORE_COLUMNS` of the
    turns that have one (`score_columns` turns `Score`s into them), in that order."""
    n = len(cases)
    cols = {"status": pl.repeat(Status.INCONCLUSIVE.value, n, eager=True, dtype=pl.String),
            "value": pl.repeat(None, n, eager=True, dtype=pl.Float64),
            "label": pl.repeat(None, n, eager=True, dtype=pl.String),
            "explanation": pl.repeat(NO_CASE, n, eager=True, dtype=pl.String),
            "details": pl.repeat(NO_DETAILS, n, eager=True, dtype=pl.String)}
    at = [i for i, c in enumerate(cases) if c is not None]
    if at:
        scored = score(at)
        for name, column in cols.items():
            column.scatter(at, scored.get_column(name))
    return pl.DataFrame(cols, schema=SCORE_COLUMNS)


_T = TypeVar("_T")


def nested_records(column: pl.Series | pa.Array | pa.ChunkedArray, names: Sequence[str],
                   make: Callable[..., _T]) -> list[tuple[_T, ...]]:
    """A list-of-structs column (`calls`, `tools`) as, per row, `make(*fields)` for each
    item, over the struct fields `names` only; a null list is empty. Decoded field by
    field through Arrow: building a dict per item first costs more than the scorers."""
    arr: Any = column.to_arrow() if isinstance(column, pl.Series) else column
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    values = arr.flatten()  # respects the slice offset, unlike `.values`
    items = [make(*f) for f in zip(*(values.field(n).to_pylist() for n in names), strict=True)]
    out: list[tuple[_T, ...]] = []
    start = 0
    for length in arr.value_lengths().fill_null(0).to_pylist():
        out.append(tuple(items[start:start + length]))
        start += length
    return out
