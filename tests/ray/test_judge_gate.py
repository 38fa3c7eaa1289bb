"""The judge gate's slot bookkeeping, as a plain object in one event loop (no cluster):
what a worker Ray restarts under the same actor id does to the slots of the one it replaces.

The cluster test (`test_ray_judge`) kills a real worker; this pins the rule it depends on,
case by case, where a failure names the slot that leaked."""

from __future__ import annotations

import asyncio

import pyarrow as pa
import pytest

from turnscore.scorers.judge.config import Budget, JudgeConfig
from turnscore.warehouse.ray_judge import JudgeGate

CONFIG = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", concurrency=2)
NO_PRIOR = pa.table({name: pa.array([], pa.string()) for name in (
    "cache_key", "scorer", "model", "prompt_version", "reply")}
    | {"input_tokens": pa.array([], pa.int64()), "output_tokens": pa.array([], pa.int64())})


def free_slots(gate: JudgeGate) -> int:
    return gate.limits[CONFIG].turn()._value


async def taken_within(gate: JudgeGate, holder: str, seconds: float = 0.2) -> bool:
    try:
        await asyncio.wait_for(gate.take(CONFIG, holder), seconds)
    except TimeoutError:
        return False
    return True


def test_a_restarted_worker_retires_the_dead_incarnation_and_its_queued_takes() -> None:
    async def scenario() -> None:
        gate = JudgeGate(Budget(), NO_PRIOR)
        await gate.register("actor-1", "actor-1/a", handle=None)
        assert await taken_within(gate, "actor-1/a")
        assert await taken_within(gate, "actor-1/a")
        # The worker dies with both slots and a third turn queued on the gate for a slot.
        queued = asyncio.ensure_future(gate.take(CONFIG, "actor-1/a"))
        await asyncio.sleep(0.05)
        assert not queued.done()
        # Ray restarts it under the same actor id: the new incarnation registers.
        await gate.register("actor-1", "actor-1/b", handle=None)
        await queued  # won a slot, handed straight back: the dead worker never gives it
        assert free_slots(gate) == 2
        assert gate.held[CONFIG]["actor-1/a"] == 0
        # The new incarnation gets the endpoint's whole concurrency, and no more.
        assert await taken_within(gate, "actor-1/b")
        assert await taken_within(gate, "actor-1/b")
        assert not await taken_within(gate, "actor-1/b")
        # A late `give` from the dead one (a reply in flight at the kill) frees nothing.
        await gate.give(CONFIG, "actor-1/a")
        assert free_slots(gate) == 0

    asyncio.run(scenario())


@pytest.mark.parametrize("again", ["actor-1/a", "actor-2/a"])
def test_registering_the_live_incarnation_or_another_actor_retires_nothing(again: str
                                                                          ) -> None:
    async def scenario() -> None:
        gate = JudgeGate(Budget(), NO_PRIOR)
        await gate.register("actor-1", "actor-1/a", handle=None)
        assert await taken_within(gate, "actor-1/a")
        await gate.register(again.split("/")[0], again, handle=None)
        assert gate.held[CONFIG]["actor-1/a"] == 1 and free_slots(gate) == 1
        await gate.give(CONFIG, "actor-1/a")
        assert free_slots(gate) == 2

    asyncio.run(scenario())
