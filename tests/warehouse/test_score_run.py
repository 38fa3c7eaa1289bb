"""score_turns on a real warehouse: what is pending, sampling, labels, judge stops, runs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb
import orjson
import polars as pl
import pytest

from tests.lockholder import held_by_another_process
from tests.warehouse.turn_factory import (
    answer_length,
    case_echo,
    changed,
    load_turns,
    make_turn,
    query,
    registered,
)
from turnscore.ingest.turn import Turn
from turnscore.scorers.base import REGISTRY, Case, Score, ScoreFn, Scorer, Turns
from turnscore.scorers.judge.engine import CachedReply, JudgeCache
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.errors import UnknownScorer, WarehouseBusy
from turnscore.warehouse.score_run import DEFAULT_BATCH_SIZE, JUDGED_BATCH_SIZE, score_turns
from turnscore.warehouse.scores import write_scores


@pytest.fixture
def wh(tmp_path: Path) -> Path:
    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(i) for i in range(25)])
    con.close()
    return tmp_path


@pytest.fixture
def length() -> Iterator[str]:
    with registered("t_length", answer_length) as name:
        yield name


def test_first_run_scores_everything_then_nothing_is_pending(wh: Path, length: str) -> None:
    seen: list[tuple[int, int]] = []
    first = score_turns(wh, scorers=[length], batch_size=10,
                        progress=lambda d, t: seen.append((d, t)))
    assert (first.turns_in_scope, first.pending_before, first.written) == (25, 25, 25)
    assert first.scorers[0].scored == 25 and first.outcome.value == "ok"
    assert seen == [(10, 25), (20, 25), (25, 25)]
    assert first.published is not None and Path(first.published).is_file()

    second = score_turns(wh, scorers=[length])
    assert second.nothing_to_do and second.written == 0
    assert query(wh, "SELECT count(*), count(DISTINCT turn_id) FROM scores") == [(25, 25)]
    assert query(wh, "SELECT count(*) FROM scores_history") == [(0,)]
    runs = query(wh, "SELECT run_id, kind, outcome, summary FROM runs ORDER BY started_at")
    assert [(r[0], r[1], r[2]) for r in runs] == [(first.run_id, "score", "ok"),
                                                   (second.run_id, "score", "ok")]
    summary = orjson.loads(str(runs[1][3]))
    assert summary["nothing_to_do"] is True and summary["pending_before"] == 0


def test_changed_content_and_new_version_make_scores_stale(wh: Path, length: str) -> None:
    score_turns(wh, scorers=[length])
    con = open_warehouse(wh)
    load_turns(con, [changed(make_turn(3), "a much longer answer")])
    con.close()
    report = score_turns(wh, scorers=[length])
    assert report.pending_before == 1
    assert query(wh, "SELECT value FROM scores WHERE turn_id = 'turn-00003'") == [(20.0,)]
    assert query(wh, "SELECT turn_id, value FROM scores_history") == [("turn-00003", 4.0)]

    REGISTRY[length] = Scorer(length, "2", "code", ("final_answer",), "v2", answer_length)
    bumped = score_turns(wh, scorers=[length])
    assert bumped.pending_before == 25
    assert query(wh, "SELECT DISTINCT scorer_version FROM scores") == [("2",)]
    assert query(wh, "SELECT count(*) FROM scores_history") == [(26,)]


def test_errors_are_retried_and_rescore_redoes_everything(wh: Path, length: str) -> None:
    con = open_warehouse(wh)
    load_turns(con, [make_turn(7, final_answer="boom"), make_turn(8, final_answer=None)])
    con.close()
    first = score_turns(wh, scorers=[length])
    c = first.scorers[0]
    assert (c.scored, c.inconclusive, c.error) == (23, 1, 1)
    assert first.outcome.value == "partial"
    assert query(wh, "SELECT error FROM scores WHERE status = 'error'") == [
        ("ValueError: cannot score turn-00007",)]
    retry = score_turns(wh, scorers=[length])
    assert retry.pending_before == 1 and retry.scorers[0].error == 1
    again = score_turns(wh, scorers=[length], rescore=True)
    assert again.pending_before == 25
    assert query(wh, "SELECT count(*) FROM scores") == [(25,)]


def test_sampling_is_deterministic_and_nested(tmp_path: Path, length: str) -> None:
    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(i) for i in range(400)])
    con.close()
    small = score_turns(tmp_path, scorers=[length], sample=0.25, publish_snapshot=False)
    assert 60 < small.turns_in_scope < 140 and small.pending_before == small.turns_in_scope
    picked = set(query(tmp_path, "SELECT turn_id FROM scores"))
    assert score_turns(tmp_path, scorers=[length], sample=0.25).nothing_to_do
    larger = score_turns(tmp_path, scorers=[length], sample=0.5, publish_snapshot=False)
    assert larger.turns_in_scope > small.turns_in_scope
    assert larger.pending_before == larger.turns_in_scope - small.turns_in_scope
    assert picked < set(query(tmp_path, "SELECT turn_id FROM scores"))


def test_turns_join_labels_by_case_id_else_normalised_text(tmp_path: Path) -> None:
    con = open_warehouse(tmp_path)
    load_turns(con, [
        make_turn(0, case_id="case-a", request="anything"),
        make_turn(1, request="What's the  WEATHER in Paris?!"),
        make_turn(2, case_id="no-such-case", request="whats the weather in paris"),
        make_turn(3, request="unlabelled"),
    ])
    con.execute("""
        INSERT INTO labels (case_id, input, input_norm, canary, expected_tools, tags, source,
                            run_id)
        VALUES ('case-a', 'x', 'x', ['c1', 'c2'], NULL, ['t'], 'l.jsonl', 'r'),
               ('case-p', 'Whats the weather in Paris', 'whats the weather in paris', NULL,
                ['get_weather'], [], 'l.jsonl', 'r')""")
    con.close()
    with registered("t_case", case_echo) as name:
        score_turns(tmp_path, scorers=[name])
    rows = query(tmp_path, "SELECT turn_id, status, label, details FROM scores ORDER BY turn_id")
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("turn-00000", "scored", "case-a"), ("turn-00001", "scored", "case-p"),
        ("turn-00002", "scored", "case-p"), ("turn-00003", "not_run", None)]
    assert orjson.loads(str(rows[0][3])) == {"canary": ["c1", "c2"], "expected_tools": [],
                                             "tags": ["t"]}
    assert orjson.loads(str(rows[1][3]))["expected_tools"] == ["get_weather"]


@dataclass(frozen=True, slots=True)
class Stop:
    message: str


@dataclass(frozen=True, slots=True)
class Judged:
    scores: Sequence[Score | None]
    stop: Stop | None
    notes: Sequence[str] = ()


class BudgetRunner:
    """Judges two turns per call, then reports the budget spent after `calls` calls."""

    def __init__(self, calls: int) -> None:
        self.left = calls

    def __call__(self, scorer: str, turns: Sequence[Turn],
                 cases: Sequence[Case | None]) -> Judged:
        self.left -= 1
        out: list[Score | None] = [Score.scored(5.0, judge="m") for _ in turns[:2]]
        out += [None] * (len(turns) - 2)
        return Judged(out, Stop("cost budget of $0.01 reached") if self.left == 0 else None)


def test_a_judge_runner_can_stop_the_run_leaving_the_rest_pending(
        wh: Path, length: str) -> None:
    with registered("t_judge", answer_length, kind="judge") as judge:
        report = score_turns(wh, scorers=[judge, length], batch_size=5,
                             judge_runner=BudgetRunner(calls=2))
        assert report.stopped_reason == "cost budget of $0.01 reached"
        assert report.outcome.value == "partial"
        counts = {c.scorer: c.written for c in report.scorers}
        assert counts == {judge: 4, length: 10}  # two batches of five
        assert query(wh, f"SELECT count(*) FROM scores WHERE scorer = '{judge}' "
                      "AND judge = 'm'") == [(4,)]
        rest = score_turns(wh, scorers=[judge, length])  # no runner: the scorer's own fn
        assert {c.scorer: c.pending_before for c in rest.scorers} == {judge: 21, length: 15}
    assert query(wh, "SELECT count(*) FROM scores") == [(50,)]


def test_batches_are_small_only_when_an_llm_judge_scores(wh: Path, length: str) -> None:
    # A batch is the unit of progress and of a write: 10,000 judge calls would leave a
    # progress bar still for most of an hour.
    with registered("t_judge", answer_length, kind="judge") as judge:
        score_turns(wh, scorers=[length])
        score_turns(wh, scorers=[judge], judge_runner=BudgetRunner(calls=99))
        score_turns(wh, scorers=[judge], rescore=True)  # no runner: the rules function
    sizes = query(wh, "SELECT config->>'batch_size' FROM runs WHERE kind = 'score' "
                   "ORDER BY started_at")
    assert sizes == [(str(DEFAULT_BATCH_SIZE),), (str(JUDGED_BATCH_SIZE),),
                     (str(DEFAULT_BATCH_SIZE),)]


def test_unknown_scorer_lists_the_known_ones(wh: Path, length: str) -> None:
    with pytest.raises(UnknownScorer, match="t_length"):
        score_turns(wh, scorers=["nope"])


def test_a_second_writer_is_refused(wh: Path, length: str) -> None:
    with held_by_another_process(wh), pytest.raises(WarehouseBusy):
        score_turns(wh, scorers=[length])


def test_a_failed_run_is_recorded(wh: Path) -> None:
    def explode(turns: Sequence[Turn], cases: Sequence[Case | None]) -> list[Score]:
        raise KeyboardInterrupt

    with registered("t_explode", explode) as name, pytest.raises(KeyboardInterrupt):
        score_turns(wh, scorers=[name])
    assert query(wh, "SELECT outcome, error FROM runs") == [("interrupted", "KeyboardInterrupt: ")]
    assert query(wh, "SELECT count(*) FROM scores") == [(0,)]


def test_reader_of_the_snapshot_sees_scores(wh: Path, length: str) -> None:
    report = score_turns(wh, scorers=[length])
    assert report.published is not None
    con = duckdb.connect(report.published, read_only=True)
    assert con.execute("SELECT count(*) FROM scores").fetchall() == [(25,)]


def test_a_judge_factory_gets_the_warehouse_cache(wh: Path) -> None:
    entry = CachedReply("t_judge", "m-1", "p1", '{"score": 7}', 10, 2)

    def factory(cache: JudgeCache) -> BudgetRunner:
        assert cache.get("k1") is None
        cache.put("k1", entry)
        cache.put("k1", entry)  # a second put of the same key is harmless
        assert cache.get("k1") == entry
        return BudgetRunner(calls=100)

    with registered("t_judge", answer_length, kind="judge") as judge:
        report = score_turns(wh, scorers=[judge], judge_factory=factory)
    assert report.scorers[0].scored == 2  # the runner judges two turns per batch
    assert query(wh, "SELECT cache_key, reply->>'score' FROM judge_cache") == [("k1", "7")]


def test_a_broken_view_leaves_the_scores_and_makes_the_run_partial(
        wh: Path, length: str, monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclass(frozen=True, slots=True)
    class BadView:
        name: str = "broken_view"
        sql: str = "SELECT no_such_column FROM scores"

    monkeypatch.setattr("turnscore.warehouse.publish.shipped_views", lambda: [BadView()])
    report = score_turns(wh, scorers=[length])
    assert report.publish_error is not None and "broken_view" in report.publish_error
    assert report.published is None and report.outcome.value == "partial"
    assert query(wh, "SELECT count(*) FROM scores") == [(25,)]
    assert query(wh, "SELECT outcome FROM runs") == [("partial",)]


def test_a_scorer_disabled_for_an_agent_is_not_run_nor_pending_on_its_turns(
        tmp_path: Path, length: str) -> None:
    from dataclasses import replace

    agents = ["billing", "support", None]
    turns = [replace(make_turn(i), agent_name=agents[i % 3]).with_hash() for i in range(9)]
    con = open_warehouse(tmp_path)
    load_turns(con, turns)
    con.close()

    def choose(agent: str | None) -> list[str]:
        return [] if agent == "billing" else [length]

    report = score_turns(tmp_path, scorers=[length], scorers_for_agent=choose)
    assert (report.pending_before, report.written) == (6, 6)
    scored = query(tmp_path, f"SELECT t.agent_name, count(*) FROM scores s JOIN turns t USING "
                          f"(turn_id) WHERE s.scorer = '{length}' GROUP BY ALL ORDER BY ALL")
    assert scored == [("support", 3), (None, 3)]
    again = score_turns(tmp_path, scorers=[length], scorers_for_agent=choose)
    assert again.nothing_to_do


CODE_SCORERS = ["answer_correctness", "call_validity", "groundedness", "tool_call_accuracy",
                "tool_grounding"]
_COMPARED = ("turn_id, scorer, scorer_version, status, value, label, explanation, "
             "details::VARCHAR, judge, prompt_sha, input_tokens, output_tokens, cost_usd, "
             "latency_ms, attempts, error, content_hash")


@pytest.fixture
def labelled(tmp_path: Path) -> Path:
    """Turns of every shape the judge-free scorers see, some joined to labelled cases."""
    con = open_warehouse(tmp_path)
    turns = [make_turn(i, case_id=f"case-{i % 4}" if i % 3 else None,
                       final_answer=None if i % 7 == 0 else f"It is sunny in Paris, {i} C.")
             for i in range(40)]
    load_turns(con, turns)
    con.execute("""
        INSERT INTO labels (case_id, input, input_norm, canary, ideal_response, match_mode,
                            expected_tools, expected_tools_mode, should_decline, source, run_id)
        VALUES ('case-1', 'a', 'a', ['sunny'], 'it is sunny', 'contains', ['get_weather'],
                'exact', NULL, 'l', 'r'),
               ('case-2', 'b', 'b', ['rain', ''], 'Sunny.', 'exact', NULL, NULL, true, 'l', 'r'),
               ('case-3', 'c', 'c', NULL, NULL, 'odd', ['x', 'get_weather'], 'ordered', NULL,
                'l', 'r')""")
    con.close()
    return tmp_path


def test_the_code_scorers_score_over_the_batch_frame(labelled: Path) -> None:
    report = score_turns(labelled, scorers=CODE_SCORERS, batch_size=7)
    assert report.written == 5 * 40 and report.errors == 0
    assert set(report.scorer_seconds) == set(CODE_SCORERS)
    assert report.read_seconds > 0 and report.write_seconds > 0
    assert {r[0] for r in query(labelled, "SELECT DISTINCT status FROM scores")} == {
        "scored", "inconclusive", "not_run"}


def _raises(turns: Turns, cases: Sequence[Case | None]) -> pl.DataFrame:
    raise ValueError("scorer bug")


def _bad_status(turns: Turns, cases: Sequence[Case | None]) -> pl.DataFrame:
    return pl.DataFrame({"status": ["scored_"] * len(turns)}).with_columns(
        value=pl.lit(1.0), label=pl.lit("x"), explanation=pl.lit("x"), details=pl.lit("{}"))


@pytest.mark.parametrize("broken", [_raises, _bad_status], ids=["raises", "bad-status"])
def test_a_failing_scorer_gives_error_rows_turn_by_turn(
        wh: Path, length: str, monkeypatch: pytest.MonkeyPatch, broken: ScoreFn) -> None:
    monkeypatch.setitem(REGISTRY, length, replace(REGISTRY[length], fn=broken))
    report = score_turns(wh, scorers=[length], batch_size=10)
    assert (report.written, report.errors) == (25, 25)
    assert query(wh, "SELECT count(*) FROM scores WHERE status = 'error' AND error LIKE "
                 "'%Error: %'") == [(25,)]


def test_a_write_failing_on_the_writer_thread_fails_the_run_after_whole_batches(
        wh: Path, length: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes overlap scoring the next batch; a failed one still stops the run, and the
    batches committed before it stay."""
    calls: list[int] = []

    def flaky(*args: object, **kwargs: object) -> int:
        calls.append(1)
        if len(calls) == 2:
            raise duckdb.IOException("disk full")
        return write_scores(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("turnscore.warehouse.score_write.write_scores", flaky)
    seen: list[tuple[int, int]] = []
    with pytest.raises(duckdb.IOException):
        score_turns(wh, scorers=[length], batch_size=10,
                    progress=lambda d, t: seen.append((d, t)))
    assert seen == [(10, 25)]
    assert query(wh, "SELECT count(*) FROM scores") == [(10,)]
    assert query(wh, "SELECT outcome, error FROM runs") == [("failed", "IOException: disk full")]


def test_a_read_failing_on_the_reader_thread_fails_the_run_after_whole_batches(
        wh: Path, length: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next batch is read while one is scored; a failed read still stops the run on
    the runner's thread, and the batches read before it are scored and committed."""
    from turnscore.warehouse import score_input

    reads: list[int] = []
    real = score_input._cases

    def flaky(*args: Any) -> list[Case | None]:
        reads.append(1)
        if len(reads) == 2:
            raise duckdb.IOException("read failed")
        return real(*args)

    monkeypatch.setattr(score_input, "_cases", flaky)
    with pytest.raises(duckdb.IOException, match="read failed"):
        score_turns(wh, scorers=[length], batch_size=10)
    assert query(wh, "SELECT count(*) FROM scores") == [(10,)]
    assert query(wh, "SELECT outcome, error FROM runs") == [("failed", "IOException: read failed")]
    rerun = score_turns(wh, scorers=[length], batch_size=10)
    assert (rerun.pending_before, rerun.written) == (15, 15)
