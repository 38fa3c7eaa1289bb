"""ReadAhead: the pending batches, read one ahead on a worker thread."""

from __future__ import annotations

import threading
from collections.abc import Generator

import pytest

from turnscore.warehouse.score_input import ReadAhead


def _numbers(n: int, ran_on: list[str], closed_on: list[str]) -> Generator[int, None, None]:
    try:
        for i in range(n):
            ran_on.append(threading.current_thread().name)
            yield i
    finally:
        closed_on.append(threading.current_thread().name)


def test_batches_come_in_order_read_one_ahead_on_one_worker() -> None:
    ran_on: list[str] = []
    closed_on: list[str] = []
    reader = ReadAhead(_numbers(5, ran_on, closed_on), frame=False)  # type: ignore[arg-type]
    assert [next(reader), next(reader)] == [0, 1]
    assert len(ran_on) <= 3  # the two returned and at most one ahead
    reader.close()
    assert len(ran_on) == 3
    assert len(set(ran_on + closed_on)) == 1  # one thread, and not the caller's
    assert ran_on[0] != threading.current_thread().name
    assert list(reader) == []


def test_reading_to_the_end_then_closing() -> None:
    ran_on: list[str] = []
    closed_on: list[str] = []
    reader = ReadAhead(_numbers(3, ran_on, closed_on), frame=False)  # type: ignore[arg-type]
    assert list(reader) == [0, 1, 2]
    reader.close()
    assert closed_on == ran_on[:1] and reader.seconds > 0


def test_a_failed_read_raises_on_the_callers_thread() -> None:
    def failing() -> Generator[int, None, None]:
        yield 1
        raise OSError("disk gone")

    reader = ReadAhead(failing(), frame=False)  # type: ignore[arg-type]
    assert next(reader) == 1
    with pytest.raises(OSError, match="disk gone"):
        next(reader)
    reader.close()
