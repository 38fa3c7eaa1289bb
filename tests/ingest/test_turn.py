"""The `Turn` record: its content hash is pinned, its Arrow form round-trips."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from turnscore.ingest.turn import Call, Tool, Turn, content_hash, turns_from_arrow, turns_to_arrow

T = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _turn(**changes: object) -> Turn:
    base = Turn(
        turn_id="t1",
        trace_id="a" * 32,
        conversation_id="c1",
        turn_index=0,
        started_at=T,
        ended_at=T,
        duration_ms=12.5,
        status="ok",
        request="Weather in Paris?",
        tools=(
            Tool("get_weather", "Current weather.", '{"type":"object"}'),
            Tool("search", None, None),
        ),
        tools_source="declared",
        calls=(
            Call("get_weather", "call_1", '{"city":"Paris"}', "18C", None, "ok", 0, T, 3.0),
            Call("search", None, None, None, "boom", "error", 1, None, None),
        ),
        final_answer="18C in Paris.",
        llm_calls=2,
        case_id="case-7",
        system_instructions="Be brief.",
        attributes='{"k":"v"}',
    )
    return base if not changes else Turn(**{**_fields(base), **changes})


def _fields(turn: Turn) -> dict[str, object]:
    return {name: getattr(turn, name) for name in Turn.__dataclass_fields__}


def test_content_hash_is_pinned() -> None:
    # Stored turns carry this hash and scores compare it: a new formula would make every
    # stored turn's scores stale. Change it only on purpose, with a migration note.
    assert content_hash(_turn()) == "a09271b592000342ffe8dd1df7bcc1f1"


@pytest.mark.parametrize(
    "change",
    [
        {"request": "Weather in Rome?"},
        {"system_instructions": None},
        {"final_answer": None},
        {"status": "error"},
        {"case_id": None},
        {"tools": (Tool("get_weather", "Current weather.", '{"type":"object"}'),)},
        {"calls": (Call("get_weather", "call_1", '{"city":"Rome"}', "18C"),)},
    ],
    ids=lambda c: next(iter(c)),
)
def test_content_hash_follows_what_scorers_read(change: dict[str, object]) -> None:
    assert content_hash(_turn(**change)) != content_hash(_turn())


@pytest.mark.parametrize(
    "change",
    [
        {"turn_id": "t2"},
        {"started_at": datetime(2026, 1, 1, tzinfo=UTC)},
        {"llm_calls": 9},
        {"attributes": "{}"},
        {"calls": (
            Call("get_weather", "call_1", '{"city":"Paris"}', "18C", None, "ok", 0, None, 9.0),
            Call("search", None, None, None, "boom", "error", 1, T, 1.0),
        )},
    ],
    ids=lambda c: next(iter(c)),
)
def test_content_hash_ignores_the_rest(change: dict[str, object]) -> None:
    assert content_hash(_turn(**change)) == content_hash(_turn())


def test_arrow_round_trip() -> None:
    turns = [_turn().with_hash(), _turn(turn_id="t2", tools=(), calls=()).with_hash()]
    assert list(turns_from_arrow(turns_to_arrow(turns))) == turns


def test_rows_hold_every_field() -> None:
    # The Arrow rows are spelled out for speed: a field added to Tool or Call must be too.
    from dataclasses import fields

    from turnscore.ingest.turn import _call_row, _tool_row

    turn = _turn()
    assert list(_tool_row(turn.tools[0])) == [f.name for f in fields(Tool)]
    assert list(_call_row(turn.calls[0])) == [f.name for f in fields(Call)]
