"""The scorer protocol, the `Score` record and the registry (DESIGN §5).

A scorer is ONE function over a batch of turns, registered with
`@scorer(name=..., version=..., kind=...)`:

    fn(turns: Turns, cases: Sequence[Case | None]) -> pl.DataFrame | Sequence[Score | None]

with a keyword `judge` too for kind 'judge'. `turns` is the batch: columnar
(`turns.frame`, a polars DataFrame, one row per turn, columns named as the `Turn` fields;
`tools` and `calls` are lists of structs) and, decoded on first use, a sequence of
`Turn`s; `cases` are the turns' labelled cases, in order. The verdicts come back one per
turn in batch order, as columns (`SCORE_COLUMNS`: status, value, label, explanation,
details as JSON text; a judged scorer adds `JUDGE_COLUMNS`: judge id, prompt hash,
usage, error) or as `Score`s. A null status (a None score) leaves the turn pending: a
judge that stopped for its budget. The built-in code scorers are columnar: one
implementation each, over the frame.

Every scorer is called the same way, `Scorer.score(turns, cases, judge=...)`, as
inspect_scout's pattern and model-graded scanners share one signature: the run's judge
reaches the judged scorers (which use the offline rules judge without one).

Failing to score is data: `Score.failed(...)` (an `error` row), never an exception that
stops the batch; if the function raises, `Scorer.score` scores the batch turn by turn, so
one bad turn is one `error` row. A case without the label a scorer needs gives
`Score.inconclusive(...)`, never a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, Protocol, TypeVar, overload

import orjson
import polars as pl
import pyarrow as pa

from turnscore.ingest.turn import Call, Tool, Turn, turns_to_arrow


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


class JudgeStop(Protocol):
    @property
    def message(self) -> str: ...


class JudgeBatch(Protocol):
    """What a judge returns for one batch (`turnscore.scorers.judge.BatchResult`)."""

    @property
    def scores(self) -> Sequence[Score | None]:
        """One entry per turn; None leaves that turn pending (not judged this run)."""

    @property
    def stop(self) -> JudgeStop | None:
        """Set when the run must stop (budget reached, repeated failures)."""

    @property
    def notes(self) -> Sequence[str]:
        """What the judge learnt about its endpoints so far (a structured-output fallback)."""


Judge = Callable[[str, Sequence[Turn], Sequence[Case | None]], JudgeBatch]
"""An LLM judge for the judged scorers: `(scorer name, turns, cases) -> JudgeBatch`
(`JudgeEngine.run`, `warehouse.judge_batch.BatchJudge.run`)."""


class Turns(Sequence[Turn]):
    """A batch of turns as scorers get it: columnar (`frame`) and, decoded on first use,
    a sequence of `Turn`s (for scorers that need the objects: the judges render them)."""

    __slots__ = ("_decoded", "frame")

    def __init__(self, frame: pl.DataFrame) -> None:
        self.frame = frame
        """One row per turn, columns named as the `Turn` fields (more are ignored)."""
        self._decoded: list[Turn] | None = None

    @classmethod
    def of(cls, turns: Sequence[Turn] | pl.DataFrame) -> Turns:
        if isinstance(turns, Turns):
            return turns
        if isinstance(turns, pl.DataFrame):
            return cls(turns)
        frame = pl.from_arrow(turns_to_arrow(turns))
        assert isinstance(frame, pl.DataFrame)
        found = cls(frame)
        found._decoded = list(turns)
        return found

    def take(self, at: Sequence[int]) -> Turns:
        """The turns at `at`, in that order."""
        if len(at) == len(self) and list(at) == list(range(len(self))):
            return self
        return Turns(self.frame[list(at)])

    @property
    def turns(self) -> list[Turn]:
        if self._decoded is None:
            self._decoded = turns_of(self.frame)
        return self._decoded

    def __len__(self) -> int:
        return self.frame.height

    @overload
    def __getitem__(self, i: int) -> Turn: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Turn]: ...
    def __getitem__(self, i: int | slice) -> Turn | Sequence[Turn]:
        return self.turns[i]

    def __iter__(self) -> Iterator[Turn]:
        return iter(self.turns)


Verdicts = pl.DataFrame | Sequence[Score | None]
"""What a scorer returns: `SCORE_COLUMNS` (and `JUDGE_COLUMNS`), or `Score`s."""


class ScoreFn(Protocol):
    """A scorer's function; one of kind 'judge' also takes `judge` (keyword)."""

    def __call__(self, turns: Turns, cases: Sequence[Case | None], /) -> Verdicts: ...


SCORE_COLUMNS: dict[str, type[pl.DataType]] = {
    "status": pl.String, "value": pl.Float64, "label": pl.String, "explanation": pl.String,
    "details": pl.String,
}
"""What every scorer returns, one row per turn in batch order."""
JUDGE_COLUMNS: dict[str, type[pl.DataType]] = {
    "judge": pl.String, "prompt_sha": pl.String, "input_tokens": pl.Int64,
    "output_tokens": pl.Int64, "cost_usd": pl.Float64, "latency_ms": pl.Float64,
    "attempts": pl.Int32, "error": pl.String,
}
"""What a judged scorer returns besides (a code scorer's are null, attempts 0)."""
VERDICT_COLUMNS: dict[str, type[pl.DataType]] = {**SCORE_COLUMNS, **JUDGE_COLUMNS}
"""`Scorer.score`'s columns: the verdict part of a `scores` row."""
NO_CASE = "no labelled case for this turn"
"""The explanation of a case-based scorer's verdict on a turn without a case."""


def details_json(details: dict[str, object]) -> str:
    """`Score.details` as written to the warehouse."""
    return orjson.dumps(details, default=str).decode()


NO_DETAILS = details_json({})
"""The details of a verdict that has none."""


_PENDING = Score(None)  # type: ignore[arg-type]
"""A turn left pending: its row's status is null."""


def score_columns(found: Sequence[Score | None]) -> pl.DataFrame:
    """`found` as `VERDICT_COLUMNS` (None: a null status, the turn left pending)."""
    scores = [_PENDING if s is None else s for s in found]
    return pl.DataFrame(
        {"status": [None if s.status is None else str(s.status) for s in scores],
         "value": [s.value for s in scores], "label": [s.label for s in scores],
         "explanation": [s.explanation for s in scores],
         "details": [details_json(s.details) for s in scores],
         "judge": [s.judge for s in scores], "prompt_sha": [s.prompt_sha for s in scores],
         "input_tokens": [s.usage.input_tokens for s in scores],
         "output_tokens": [s.usage.output_tokens for s in scores],
         "cost_usd": [s.usage.cost_usd for s in scores],
         "latency_ms": [s.usage.latency_ms for s in scores],
         "attempts": [s.usage.attempts for s in scores], "error": [s.error for s in scores]},
        schema=VERDICT_COLUMNS,
    )


def scores_of(columns: pl.DataFrame) -> list[Score | None]:
    """`VERDICT_COLUMNS` as `Score`s (None where the status is null: left pending)."""
    out: list[Score | None] = []
    for r in columns.iter_rows(named=True):
        if r["status"] is None:
            out.append(None)
            continue
        usage = Usage(r["input_tokens"], r["output_tokens"], r["cost_usd"], r["latency_ms"],
                      r["attempts"])
        out.append(Score(Status(r["status"]), r["value"], r["label"], r["explanation"],
                         orjson.loads(r["details"]) if r["details"] else {}, r["judge"],
                         r["prompt_sha"], usage, r["error"]))
    return out


_TURN_NAMES = tuple(f.name for f in fields(Turn))
_TOOL_NAMES = tuple(f.name for f in fields(Tool))
_CALL_NAMES = tuple(f.name for f in fields(Call))


def turns_of(batch: pl.DataFrame | pa.RecordBatch | pa.Table) -> list[Turn]:
    """A batch's rows as `Turn`s (extra columns are ignored), decoded column by column:
    for scorers that need the objects (the judges render them)."""
    if isinstance(batch, pl.DataFrame):
        batch = batch.to_arrow()
    columns: list[list[Any]] = []
    for name in _TURN_NAMES:
        if name == "tools":
            columns.append(nested_records(batch.column(name), _TOOL_NAMES, Tool))
        elif name == "calls":
            columns.append(nested_records(batch.column(name), _CALL_NAMES, Call))
        elif name == "issues":
            columns.append([tuple(v or ()) for v in batch.column(name).to_pylist()])
        else:
            columns.append(batch.column(name).to_pylist())
    return [Turn(*row) for row in zip(*columns, strict=True)]


_STATUSES = [s.value for s in Status]


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

    def score(self, turns: Turns | Sequence[Turn] | pl.DataFrame,
              cases: Sequence[Case | None], *, judge: Judge | None = None) -> pl.DataFrame:
        """The verdicts on a batch, as `VERDICT_COLUMNS`; `judge` reaches a judged scorer
        (None: the rules judge). If the function raises or returns what no score is, the
        batch is scored turn by turn, so one bad turn is one `error` row and the others
        are still scored."""
        batch = Turns.of(turns)
        try:
            found = (self.fn(batch, cases, judge=judge)  # type: ignore[call-arg]
                     if self.kind == "judge" else self.fn(batch, cases))
            return self._checked(found, len(batch))
        except Exception as exc:
            if len(batch) == 1:
                return score_columns([Score.failed(f"{type(exc).__name__}: {exc}")])
            if len(batch) == 0:
                raise
        return pl.concat([self.score(batch.take([i]), [cases[i]], judge=judge)
                          for i in range(len(batch))])

    def score_turns(self, turns: Sequence[Turn], cases: Sequence[Case | None], *,
                    judge: Judge | None = None) -> list[Score | None]:
        """`score`, as `Score`s (tests, notebooks)."""
        return scores_of(self.score(turns, cases, judge=judge))

    def _checked(self, found: Verdicts, height: int) -> pl.DataFrame:
        out = found if isinstance(found, pl.DataFrame) else score_columns(found)
        if out.height != height:
            raise RuntimeError(f"{self.name} returned {out.height} rows for {height} turns")
        missing = {n: t for n, t in JUDGE_COLUMNS.items() if n not in out.columns}
        if missing:
            out = out.with_columns(
                pl.lit(0 if n == "attempts" else None, t).alias(n) for n, t in missing.items())
        out = out.select(pl.col(n).cast(t) for n, t in VERDICT_COLUMNS.items())
        bad = out.filter(~pl.col("status").is_in(_STATUSES))
        if bad.height:
            raise ValueError(f"{self.name} returned status {bad['status'][0]!r}")
        return out


REGISTRY: dict[str, Scorer] = {}


def scorer(
    *, name: str, version: str, kind: str, reads: tuple[str, ...], description: str
) -> Callable[[ScoreFn], ScoreFn]:
    """Register a scorer's batch function under `name`."""

    def register(fn: ScoreFn) -> ScoreFn:
        if name in REGISTRY:
            raise ValueError(f"scorer {name!r} is registered twice")
        REGISTRY[name] = Scorer(name, version, kind, reads, description, fn)
        return fn

    return register


def cased_columns(cases: Sequence[Case | None],
                  score: Callable[[list[int], list[Case]], pl.DataFrame]) -> pl.DataFrame:
    """Columns for a scorer that finds every turn without a case inconclusive: those rows
    are whole constant columns, and `score(indices, their_cases)` gives the `SCORE_COLUMNS`
    of the turns that have one (`score_columns` turns `Score`s into them), in that order."""
    n = len(cases)
    cols = {"status": pl.repeat(Status.INCONCLUSIVE.value, n, eager=True, dtype=pl.String),
            "value": pl.repeat(None, n, eager=True, dtype=pl.Float64),
            "label": pl.repeat(None, n, eager=True, dtype=pl.String),
            "explanation": pl.repeat(NO_CASE, n, eager=True, dtype=pl.String),
            "details": pl.repeat(NO_DETAILS, n, eager=True, dtype=pl.String)}
    at = [i for i, c in enumerate(cases) if c is not None]
    if at:
        scored = score(at, [c for c in cases if c is not None])
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
