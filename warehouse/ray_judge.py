"""LLM-judged scoring on a Ray cluster: one gate for the run, engines on every worker.

The limits in `[judge]` (concurrency, requests and tokens per minute) are the endpoint's,
and the budget (`--max-calls`, `--max-cost`) is the run's, however many workers judge. So
one small named actor, the run's `JudgeGate`, holds what the engines share: the run's
`shared.Ledger` (calls, spend, the stop), one `shared.LocalLimits` per endpoint (its turn
slots and its `RateLimiter`) and the judge cache (the warehouse's replies for the run's
judges, read once by the driver, plus the replies paid for during the run). Each worker of
the actor pool (`ray_score.JudgedBatches`) runs the same `JudgeEngine` as a local run over
batches of pending turns, with the gate behind the engine's narrow interfaces
(`GateLedger`, `GateLimits`, `GateCache`): one implementation of judging, wherever it runs.

- A turn holds one of its endpoint's `concurrency` slots on the gate while judged, so
  requests in flight at the endpoint never pass it, on any number of nodes. A worker that
  dies holding slots gives them back: the gate asks the holders of the slots a turn waits
  for whether they are alive (`REAP_S`). Holders are worker *incarnations*, not actor ids:
  Ray restarts a killed pool actor under the same id, so a ping would find the restarted
  one alive while the dead one's slots stayed taken, and the dead one's `take` calls still
  queued on the gate would each win a slot that nobody gives back (the run then hung with
  every slot held by no one). A restarted worker registers a new incarnation, which
  retires the old one: its slots come back, and a slot its queued `take` wins later is
  handed straight back.
- Once the budget is spent, the gate's ledger refuses every `start`, so no worker sends a
  new turn; turns in flight finish (the local rule). A batch that begins after the stop is
  not scored at all, as the local runner stops after the batch that stopped it.
- A reply paid for on one worker is a cache hit on every other; the driver drains the new
  replies from the gate as batches finish and puts them in the warehouse's `judge_cache`
  (`DuckDBJudgeCache.put_all`), as a local run puts them as they arrive.

Not shared: the structured-output form an endpoint takes (`structured.FormatState`) is
learnt by each worker (one rejected request per worker and endpoint at most).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import duckdb
import pyarrow as pa

from turnscore.scorers.judge.config import Budget, JudgeConfig, load_judge_settings
from turnscore.scorers.judge.engine import CachedReply
from turnscore.scorers.judge.shared import Ledger, LocalLimits, Stop
from turnscore.scorers.judged import SPECS
from turnscore.warehouse.judge_cache import DuckDBJudgeCache

__all__ = ["REAP_S", "GateCache", "GateLedger", "GateLimits", "JudgeGate", "drain_into",
           "prior_replies", "run_judges"]

log = logging.getLogger(__name__)

REAP_S = 2.0
"""How long a turn waits for a slot before the gate asks the slots' holders if they live."""
PING_S = 1.0
PRIOR_REPLIES = """
SELECT cache_key, scorer, model, prompt_version, reply::VARCHAR AS reply, input_tokens,
       output_tokens
FROM judge_cache WHERE list_contains($judges, scorer || chr(31) || model || chr(31)
                                     || prompt_version)
"""


def run_judges(judge_table: Mapping[str, object], scorers: Sequence[str]
               ) -> list[tuple[str, str, str]]:
    """(scorer, judge id, prompt version) of each chosen scorer an LLM judges: the cache
    rows the run can hit."""
    settings = load_judge_settings(dict(judge_table), known_scorers=tuple(SPECS))
    out = []
    for name in scorers:
        config = settings.for_scorer(name)
        if name in SPECS and config.is_llm:
            out.append((name, config.judge_id, SPECS[name].prompt.version))
    return out


def prior_replies(con: duckdb.DuckDBPyConnection, judges: Sequence[tuple[str, str, str]]
                  ) -> pa.Table:
    """The warehouse's cached replies of `judges`, for the gate."""
    keys = ["\x1f".join(j) for j in judges]
    return con.sql(PRIOR_REPLIES, params={"judges": keys}).to_arrow_table()


class JudgeGate:
    """The run's shared judging state (run as an async Ray actor: a caller waiting for a
    slot or the rate limit does not hold up the others)."""

    def __init__(self, budget: Budget, prior: pa.Table) -> None:
        self.ledger = Ledger(budget)
        self.limits: dict[JudgeConfig, LocalLimits] = {}
        self.held: dict[JudgeConfig, Counter[str]] = {}
        self.holders: dict[str, Any] = {}
        self.incarnation: dict[str, str] = {}
        """Each pool actor's live incarnation (holder), by actor id."""
        self.retired: set[str] = set()
        """Holders known dead: whatever they take is handed back at once."""
        self.reaped: dict[JudgeConfig, float] = {}
        self.judged: Counter[str] = Counter()
        """Turns each worker judged (sent to the endpoint), for the run's log."""
        self.cache = {row["cache_key"]: CachedReply(
            row["scorer"], row["model"], row["prompt_version"], row["reply"],
            row["input_tokens"], row["output_tokens"]) for row in prior.to_pylist()}
        self.new: list[tuple[str, CachedReply]] = []

    def _of(self, config: JudgeConfig) -> LocalLimits:
        if config not in self.limits:
            self.limits[config] = LocalLimits(config)
            self.held[config] = Counter()
        return self.limits[config]

    async def register(self, actor: str, holder: str, handle: Any) -> None:
        """Incarnation `holder` of pool actor `actor` starts; one Ray restarted retires
        the incarnation before it."""
        before = self.incarnation.get(actor)
        if before is not None and before != holder:
            self._retire(before)
        self.incarnation[actor] = holder
        self.holders[holder] = handle

    def _retire(self, holder: str) -> None:
        self.retired.add(holder)
        self.holders.pop(holder, None)
        for config, held in self.held.items():
            n = held.pop(holder, 0)
            if n > 0:
                log.warning("judge worker %s died holding %d slot(s); taken back", holder, n)
            for _ in range(n):
                self.limits[config].turn().release()

    async def take(self, config: JudgeConfig, holder: str) -> None:
        slots = self._of(config).turn()
        while True:
            try:
                await asyncio.wait_for(slots.acquire(), REAP_S)
                break
            except TimeoutError:
                await self._reap(config)
        if holder in self.retired:  # a dead worker's call, still queued here: no one's slot
            slots.release()
            return
        self.held[config][holder] += 1
        self.judged[holder] += 1

    async def give(self, config: JudgeConfig, holder: str) -> None:
        if self.held[config][holder] > 0:  # not when retired meanwhile
            self.held[config][holder] -= 1
            self.limits[config].turn().release()

    async def _reap(self, config: JudgeConfig) -> None:
        """Give back the slots of holders that died (a killed worker never says `give`);
        once per `REAP_S` however many turns wait."""
        import ray

        now = time.monotonic()
        if now - self.reaped.get(config, 0.0) < REAP_S:
            return
        self.reaped[config] = now
        for holder, n in list(self.held[config].items()):
            handle = self.holders.get(holder)
            if n <= 0 or handle is None:
                continue
            try:  # not retried: a dead or restarting worker's slots are no one's
                ping = handle.__ray_ready__.options(max_task_retries=0).remote()
                await asyncio.wait_for(ping, PING_S)
            except TimeoutError:
                continue  # busy judging: alive
            except ray.exceptions.RayError:
                self._retire(holder)

    async def workers(self) -> dict[str, int]:
        return dict(self.judged)

    async def acquire(self, config: JudgeConfig, tokens: int) -> None:
        await self._of(config).acquire(tokens)

    async def start(self) -> bool:
        return self.ledger.start()

    async def settle(self, cost_usd: float, verdict: bool, model: str | None,
                     max_failures: int) -> None:
        self.ledger.settle(cost_usd, verdict=verdict, model=model, max_failures=max_failures)

    async def spend(self, cost_usd: float) -> None:
        self.ledger.spend(cost_usd)

    async def state(self) -> tuple[Stop | None, int, float]:
        return self.ledger.stop, self.ledger.calls, self.ledger.cost_usd

    async def get(self, key: str) -> CachedReply | None:
        return self.cache.get(key)

    async def put(self, key: str, entry: CachedReply) -> None:
        if key not in self.cache:
            self.cache[key] = entry
            self.new.append((key, entry))

    async def drain(self) -> list[tuple[str, CachedReply]]:
        """The replies put since the last drain (for the warehouse's `judge_cache`)."""
        out, self.new = self.new, []
        return out


class GateLedger:
    """`shared.RunLedger` over the gate: every worker's engine counts against one budget."""

    def __init__(self, gate: Any) -> None:
        import ray

        self._gate, self._get = gate, ray.get

    def _state(self) -> tuple[Stop | None, int, float]:
        state: tuple[Stop | None, int, float] = self._get(self._gate.state.remote())
        return state

    @property
    def stop(self) -> Stop | None:
        return self._state()[0]

    @property
    def calls(self) -> int:
        return self._state()[1]

    @property
    def cost_usd(self) -> float:
        return self._state()[2]

    def start(self) -> bool:
        started: bool = self._get(self._gate.start.remote())
        return started

    def settle(self, cost_usd: float, *, verdict: bool, model: str | None,
               max_failures: int) -> None:
        self._get(self._gate.settle.remote(cost_usd, verdict, model, max_failures))

    def spend(self, cost_usd: float) -> None:
        self._get(self._gate.spend.remote(cost_usd))


class GateLimits:
    """`shared.EndpointLimits` of one endpoint, over the gate."""

    def __init__(self, gate: Any, config: JudgeConfig, holder: str) -> None:
        self._gate, self._config, self._holder = gate, config, holder

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        await self._gate.take.remote(self._config, self._holder)
        try:
            yield
        finally:
            await self._gate.give.remote(self._config, self._holder)

    async def acquire(self, tokens: int) -> None:
        await self._gate.acquire.remote(self._config, tokens)


class GateCache:
    """`engine.JudgeCache` over the gate: a reply paid for on any worker is a hit on all."""

    def __init__(self, gate: Any) -> None:
        import ray

        self._gate, self._get = gate, ray.get

    def get(self, key: str) -> CachedReply | None:
        hit: CachedReply | None = self._get(self._gate.get.remote(key))
        return hit

    def put(self, key: str, entry: CachedReply) -> None:
        self._get(self._gate.put.remote(key, entry))


def drain_into(con: duckdb.DuckDBPyConnection, gate: Any, run_id: str) -> int:
    """Put the gate's new replies in the warehouse's `judge_cache`; how many."""
    import ray

    entries: list[tuple[str, CachedReply]] = ray.get(gate.drain.remote())
    DuckDBJudgeCache(con, run_id).put_all(entries)
    return len(entries)
