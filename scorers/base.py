"""The scorer protocol, the `Score` record and the registry (DESIGN §5).

A scorer is a function over a batch of turns (with their labelled cases) that returns one
`Score` per turn, registered with `@scorer(name=..., version=..., kind=...)`. Failing to
score is data: `Score.error(...)`, never an exception that stops the batch. A case without
the label a scorer needs gives `Score.inconclusive(...)`, never a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

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
