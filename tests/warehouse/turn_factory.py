"""Turns and scorers for warehouse tests: real `Turn` records loaded into a real DuckDB."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import orjson

from turnscore.ingest.turn import Call, Tool, Turn, turns_to_arrow
from turnscore.scorers.base import REGISTRY, Case, Judge, Score, ScoreFn, Turns, Verdicts, scorer
from turnscore.warehouse import score_queue
from turnscore.warehouse.db import open_warehouse

T0 = datetime(2026, 1, 30, 2, 0, tzinfo=UTC)


def make_turn(i: int, *, request: str | None = None, case_id: str | None = None,
              final_answer: str | None = "done") -> Turn:
    started = T0 + timedelta(minutes=i)
    return Turn(
        turn_id=f"turn-{i:05d}", trace_id=f"trace-{i:05d}", conversation_id=f"conv-{i // 3}",
        turn_index=i % 3, started_at=started, ended_at=started + timedelta(seconds=2),
        duration_ms=2000.0, status="ok", request=request or f"What is the weather in city {i}?",
        tools=(Tool("get_weather", "Weather for a city", '{"type": "object"}'),),
        tools_source="declared",
        calls=(Call("get_weather", call_id=f"c{i}", arguments='{"city": "x"}', result="sunny",
                    started_at=started, duration_ms=10.0),),
        final_answer=final_answer, llm_calls=2, input_tokens=100, output_tokens=20,
        case_id=case_id, convention="test", attributes="{}", ingest_id="ingest-test",
        source="test.json",
    ).with_hash()


def load_turns(con: duckdb.DuckDBPyConnection, turns: Sequence[Turn]) -> None:
    """Insert or replace turns, as a re-ingest would, and queue them for scoring as it does
    (`score_queue.queue_turns`)."""
    table = turns_to_arrow(turns)
    con.register("_new_turns", table)
    con.execute("DELETE FROM turns WHERE turn_id IN (SELECT turn_id FROM _new_turns)")
    con.execute("INSERT INTO turns SELECT * FROM _new_turns")
    score_queue.queue_turns(con, [t.turn_id for t in turns], reason="turn")
    con.unregister("_new_turns")


def changed(turn: Turn, final_answer: str) -> Turn:
    return replace(turn, final_answer=final_answer).with_hash()


def _judged(fn: ScoreFn, name: str) -> ScoreFn:
    """A test scorer of kind 'judge': the run's judge scores when there is one, as in
    `scorers.judged`."""
    def score(turns: Turns, cases: Sequence[Case | None], *, judge: Judge | None = None
              ) -> Verdicts:
        if judge is None:
            return fn(turns, cases)
        return judge(name, turns.turns, cases).scores
    return score  # type: ignore[return-value]


@contextmanager
def registered(name: str, fn: ScoreFn, *, version: str = "1", kind: str = "code"
               ) -> Iterator[str]:
    """Register a scorer for the duration of a test."""
    scorer(name=name, version=version, kind=kind, reads=("final_answer",),
           description=f"test scorer {name}")(_judged(fn, name) if kind == "judge" else fn)
    try:
        yield name
    finally:
        REGISTRY.pop(name, None)


def answer_length(turns: Sequence[Turn], cases: Sequence[Case | None]) -> list[Score]:
    """Scores the answer length; inconclusive without an answer; fails on 'boom'."""
    out = []
    for t in turns:
        if t.final_answer is None:
            out.append(Score.inconclusive("no final answer"))
        elif t.final_answer == "boom":
            raise ValueError(f"cannot score {t.turn_id}")
        else:
            out.append(Score.scored(float(len(t.final_answer)), label="len",
                                    details={"answer": t.final_answer}))
    return out


def case_echo(turns: Sequence[Turn], cases: Sequence[Case | None]) -> list[Score]:
    """Records which labelled case each turn joined to."""
    return [Score.not_run("no case") if c is None
            else Score.scored(1.0, label=c.case_id,
                              details={"canary": list(c.canary or ()),
                                       "expected_tools": list(c.expected_tools or ()),
                                       "tags": list(c.tags)})
            for c in cases]


def query(wh: Path, sql: str) -> list[tuple[object, ...]]:
    """`sql`'s rows from the warehouse in `wh`, on a connection of its own."""
    con = open_warehouse(wh)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def write_jsonl(path: Path, rows: Sequence[object]) -> Path:
    """A labels file: one JSON object per line; a str row is written as it is (bad rows)."""
    path.write_text("".join((r if isinstance(r, str) else orjson.dumps(r).decode()) + "\n"
                            for r in rows))
    return path
