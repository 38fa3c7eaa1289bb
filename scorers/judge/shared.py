"""What all of one score run's judging shares: the run's budget and stops, and each
endpoint's limits.

`Ledger` keeps the budget (`--max-calls`, `--max-cost`) and the consecutive-failure rule;
`LocalLimits` keeps an endpoint's concurrency (turns in flight) and its requests and tokens
per minute (`client.RateLimiter`). `JudgeEngine` reaches them only through the narrow
interfaces `RunLedger` and `EndpointLimits`, so the same engine runs in one process (these
local objects) or on many Ray workers at once, where one actor holds these same objects for
the whole cluster (`turnscore.warehouse.ray_judge`): the limits in `[judge]` are the
endpoint's, not a worker's.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from turnscore.scorers.judge.client import RateLimiter
from turnscore.scorers.judge.config import Budget, JudgeConfig

log = logging.getLogger(__name__)


class StopReason(StrEnum):
    MAX_CALLS = "max_calls"
    MAX_COST = "max_cost"
    FAILURES = "consecutive_failures"


@dataclass(frozen=True, slots=True)
class Stop:
    reason: StopReason
    message: str


class RunLedger(Protocol):
    """The run's budget and stop, as the engine uses it (one per run, however many
    engines judge the run's turns)."""

    @property
    def stop(self) -> Stop | None: ...

    @property
    def calls(self) -> int: ...

    @property
    def cost_usd(self) -> float: ...

    def start(self) -> bool:
        """Count one turn sent to a judge, or refuse (the run has stopped)."""
        ...

    def settle(self, cost_usd: float, *, verdict: bool, model: str | None,
               max_failures: int) -> None:
        """A started turn ended: what it cost, and whether the judge gave a verdict."""
        ...

    def spend(self, cost_usd: float) -> None:
        """Cost paid outside a started turn (a batch result collected)."""
        ...


class EndpointLimits(Protocol):
    """One judge endpoint's limits, as the engine and its client use them."""

    def turn(self) -> AbstractAsyncContextManager[object]:
        """Held while one turn is judged: at most `concurrency` at once."""
        ...

    async def acquire(self, tokens: int) -> None:
        """Wait until one more request of about `tokens` fits the per-minute limits."""
        ...


class Ledger:
    """`RunLedger` in this process: calls, spend and the stop of one run."""

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget or Budget()
        self.calls = 0
        self.cost_usd = 0.0
        self._stop: Stop | None = None
        self._failures = 0

    @property
    def stop(self) -> Stop | None:
        return self._stop

    def start(self) -> bool:
        if self._stop is None:
            b = self.budget
            if b.max_calls is not None and self.calls >= b.max_calls:
                self._stop = Stop(StopReason.MAX_CALLS, f"call budget reached ({self.calls} of "
                                  f"--max-calls {b.max_calls})")
            elif b.max_cost_usd is not None and self.cost_usd >= b.max_cost_usd:
                self._stop = Stop(StopReason.MAX_COST, f"cost budget reached "
                                  f"(${self.cost_usd:.4f} of --max-cost ${b.max_cost_usd:g})")
            if self._stop is not None:
                log.warning("judging stopped: %s; the rest stays pending", self._stop.message)
        if self._stop is not None:
            return False
        self.calls += 1
        return True

    def settle(self, cost_usd: float, *, verdict: bool, model: str | None,
               max_failures: int) -> None:
        self.cost_usd += cost_usd
        if verdict:
            self._failures = 0
            return
        self._failures += 1
        if self._failures >= max_failures and self._stop is None:
            self._stop = Stop(StopReason.FAILURES, f"{self._failures} turns in a row got no "
                              f"verdict from {model}; the rest stays pending")
            log.warning("judging stopped: %s", self._stop.message)

    def spend(self, cost_usd: float) -> None:
        self.cost_usd += cost_usd


class LocalLimits:
    """`EndpointLimits` in this process."""

    def __init__(self, config: JudgeConfig) -> None:
        self._slots = asyncio.Semaphore(config.concurrency)
        self._limiter = RateLimiter(config.requests_per_minute, config.tokens_per_minute)

    def turn(self) -> asyncio.Semaphore:
        return self._slots

    async def acquire(self, tokens: int) -> None:
        await self._limiter.acquire(tokens)
