"""Score and view benchmark: judge-free scoring throughput, then view latency.

    python bench/score.py [--turns 1000000] [--scores-rows 10000000] [--batch-size 10000]
                          [--templates N] [--repeats 5] [--out bench/out] [--quick] [--skip-scoring]
                          [--skip-views]

1. Synthetic turns (`bench/common.py`: tools with JSON Schemas, 0-5 calls, answers of
   100-1,500 characters, labels for a share) are written straight into a fresh warehouse.
   By default every turn is drawn afresh (--templates: fewer distinct turns, repeated).
2. Baseline, same run: the time to read every turn out of DuckDB into Arrow. Then one
   `score_turns` run scores the five judge-free scorers (as `turnscore score`, without
   publishing a snapshot), printed with the run's breakdown (seconds inside each scorer,
   reading turns, writing scores) in turns/s and as multiples of the baseline.
   Target: all five over 1M turns in under a minute (scaled to --turns).
3. Judged rows (tool_usage, tractability, rules-v1 shaped details) are added for every
   turn and the snapshot is published as a run publishes it (`publish_snapshot`: copy,
   each shipped view materialised as a table, Parquet exports); its time is printed per
   stage. Dashboards read that snapshot, so the targets apply there: each view (a table
   in `published.duckdb`) is timed cold (a fresh read-only connection, first query; no
   other connection to the file open) and warm (median of --repeats). Row-grain views
   (one row per turn or call) are timed as
   `SELECT count(*), count(col1), count(col2), ... FROM view` ("counts": every column
   read, nothing transferred), the others as a full fetch into Arrow ("fetch").
   Baseline: `SELECT scorer, count(*), avg(value) FROM scores GROUP BY scorer`.
   Targets: warm < 100 ms and cold < 250 ms at --turns scored turns. A "counts" row that
   fails names its slowest column. Also timed: a dashboard's typical read, one day of
   `turns_scored` (`WHERE day = $day`), and other dashboard reads of it (a page of the
   newest turns of a week, ILIKE search over a day and over all days, an aggregate per
   day and agent), informational. A second table times the live views in
   `warehouse.duckdb` (ad-hoc SQL on the freshest data; warm only, informational).
4. More turns and score rows are added until `scores` holds --scores-rows rows, and
   publishing and the views are timed again. Target: warm < 250 ms.

These are benchmarks, not timed tests: machines are shared and noisy, so compare the
ratios to the baselines of the same run. `--quick` is a smoke run on tiny sizes;
`--skip-scoring` writes the judge-free scorers' rows with SQL instead of running them
(same rows per turn, for iterating on views and publishing); `--skip-views` stops after
the scoring benchmark.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

sys.path.insert(0, str(Path(__file__).parent))
from common import SyntheticTurns, machine

from turnscore.queries import load_views
from turnscore.scorers import REGISTRY
from turnscore.warehouse.db import DB_FILE, open_warehouse
from turnscore.warehouse.publish import publish_snapshot
from turnscore.warehouse.score_run import DEFAULT_BATCH_SIZE, score_turns

SCORERS = ("tool_grounding", "answer_correctness", "tool_call_accuracy", "groundedness",
           "call_validity")
SCORE_TARGET_S_PER_M = 60.0
WARM_MS, COLD_MS, WARM_LARGE_MS = 100.0, 250.0, 250.0
ROW_GRAIN = frozenset({"turns_scored", "turn_scores", "tool_calls"})
BASELINE_SQL = "SELECT scorer, count(*), avg(value) FROM scores GROUP BY scorer"
# A dashboard's typical read: one day's turns with their scores (the middle day of the data).
ONE_DAY_SQL = "SELECT * FROM turns_scored WHERE day = $day"
# Other reads dashboards make of `turns_scored` (informational: no target, but a change to
# how the snapshot stores it must not make them slower). $day is the middle day.
DASHBOARD_READS = {
    "page of a week": "SELECT turn_id, started_at, agent, status, request, final_answer, "
                      "tool_usage, tractability FROM turns_scored "
                      "WHERE day BETWEEN $day - 6 AND $day ORDER BY started_at DESC LIMIT 50",
    "search a day": "SELECT turn_id, started_at, request, final_answer FROM turns_scored "
                    "WHERE day = $day AND (request ILIKE $text OR final_answer ILIKE $text)",
    "search all days": "SELECT count(*) FROM turns_scored WHERE final_answer ILIKE $text",
    "per day and agent": "SELECT day, agent, count(*), avg(tool_usage), avg(tractability), "
                         "sum(call_errors) FROM turns_scored GROUP BY ALL",
}
SEARCH_TEXT = "%lisbon%"
MIDDLE_DAY = "SELECT min(day) + CAST((max(day) - min(day)) / 2 AS INTEGER) FROM turns_scored"
READ_ALL = "SELECT * FROM turns"

# Judged scores shaped like the rules judge's (`scorers/judge/rules.py`), so the views
# that unpack their details do real work.
INSERT_TOOL_USAGE = """
INSERT INTO scores (turn_id, scorer, scorer_version, status, value, label, explanation,
                    details, judge, attempts, content_hash, run_id, scored_at)
SELECT turn_id, 'tool_usage', '1', CASE WHEN len(tools) = 0 THEN 'not_run' ELSE 'scored' END,
       CASE WHEN len(tools) = 0 THEN NULL ELSE (hash(turn_id) % 11)::DOUBLE END, NULL,
       'synthetic assessment',
       to_json({calls: list_transform(calls, lambda c: {
                    call_id: c.call_id, tool: c.name, choice_ok: hash(c.call_id) % 7 <> 0,
                    arguments_ok: c.status <> 'error',
                    problem: CASE WHEN c.status = 'error' THEN 'invalid arguments' END}),
                call_needed: len(calls) = 0 AND hash(turn_id) % 3 = 0,
                matched_tool: CASE WHEN len(calls) = 0 AND len(tools) > 0
                                   THEN tools[1].name END}),
       'rules-v1', 0, content_hash, 'bench', started_at
FROM turns WHERE turn_id NOT IN (SELECT turn_id FROM scores WHERE scorer = 'tool_usage')
"""
INSERT_TRACTABILITY = """
INSERT INTO scores (turn_id, scorer, scorer_version, status, value, label, explanation,
                    details, judge, attempts, content_hash, run_id, scored_at)
SELECT turn_id, 'tractability', '1', 'scored', (hash(turn_id || 'x') % 11)::DOUBLE, NULL,
       'synthetic assessment',
       to_json({request_kind: ['lookup', 'arithmetic', 'booking', 'how-to', 'chit-chat']
                               [(hash(request) % 5 + 1)::BIGINT],
                missing_capability: CASE WHEN hash(turn_id) % 4 = 0 THEN 'live prices' END,
                strain_signs: CASE WHEN hash(turn_id) % 5 = 0 THEN ['hedging'] ELSE [] END}),
       'rules-v1', 0, content_hash, 'bench', started_at
FROM turns WHERE turn_id NOT IN (SELECT turn_id FROM scores WHERE scorer = 'tractability')
"""
# --skip-scoring: judge-free rows of every status, without running the scorers.
INSERT_CODE_SCORES = """
INSERT INTO scores (turn_id, scorer, scorer_version, status, value, label, explanation,
                    details, judge, attempts, content_hash, run_id, scored_at)
SELECT turn_id, $scorer, '1', ['scored', 'scored', 'scored', 'inconclusive', 'not_run']
                              [(hash(turn_id || $scorer) % 5 + 1)::BIGINT],
       CASE WHEN hash(turn_id || $scorer) % 5 < 3 THEN (hash(turn_id) % 2)::DOUBLE END,
       NULL, NULL, NULL, NULL, 0, content_hash, 'bench', started_at
FROM turns
"""
# Score rows for turns added to reach --scores-rows: copies of scored turns' rows.
COPY_SCORES = """
INSERT INTO scores
SELECT n.turn_id, s.scorer, s.scorer_version, s.status, s.value, s.label, s.explanation,
       s.details, s.judge, s.prompt_sha, s.input_tokens, s.output_tokens, s.cost_usd,
       s.latency_ms, s.attempts, s.error, n.content_hash, s.run_id, s.scored_at
FROM (SELECT turn_id, content_hash, row_number() OVER () - 1 AS k FROM turns
      WHERE turn_id NOT IN (SELECT turn_id FROM scores)) AS n
JOIN (SELECT turn_id, row_number() OVER () - 1 AS k FROM turns
      WHERE turn_id IN (SELECT turn_id FROM scores)) AS o ON o.k = n.k % $scored
JOIN scores AS s ON s.turn_id = o.turn_id
"""


def main(argv: list[str] | None = None) -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    args = _options(argv)
    out = Path(args.out)
    wh = out / "score-warehouse"
    shutil.rmtree(wh, ignore_errors=True)
    results: dict[str, Any] = {"machine": machine(), "options": vars(args)}
    print("machine:", json.dumps(results["machine"]))

    synthetic = SyntheticTurns(min(args.turns, args.templates or args.turns))
    con = open_warehouse(wh)
    started = time.perf_counter()
    synthetic.insert_labels(con)
    synthetic.insert(con, args.turns)
    con.close()
    print(f"\nloaded {args.turns:,} synthetic turns in {time.perf_counter() - started:.1f} s")

    if args.skip_scoring:
        _code_scores(wh)
    else:
        results["scoring"] = _scoring(wh, args)
    if args.skip_views:
        _finish(results, out, wh, args)
        return 0
    con = open_warehouse(wh)
    con.execute(INSERT_TOOL_USAGE)
    con.execute(INSERT_TRACTABILITY)
    for view in load_views(REGISTRY.values()):
        con.execute(view.create_sql())
    rows = _count(con, "SELECT count(*) FROM scores")
    con.close()
    results["views_small"] = _views(wh, args, f"{args.turns:,} scored turns, {rows:,} score rows",
                                    WARM_MS, COLD_MS)

    needed = -(-args.scores_rows // 7) - args.turns
    if needed > 0:
        con = open_warehouse(wh)
        synthetic.insert(con, needed)
        con.execute(COPY_SCORES, {"scored": args.turns})
        rows = _count(con, "SELECT count(*) FROM scores")
        turns = _count(con, "SELECT count(*) FROM turns")
        con.execute("CHECKPOINT")
        con.close()
        results["views_large"] = _views(wh, args, f"{turns:,} turns, {rows:,} score rows",
                                        WARM_LARGE_MS, None)
    _finish(results, out, wh, args)
    return 0


def _finish(results: dict[str, Any], out: Path, wh: Path, args: argparse.Namespace) -> None:
    (out / "score-results.json").write_text(json.dumps(results, indent=2, default=str))
    print(f"\nresults: {out / 'score-results.json'}")
    if not args.keep:
        shutil.rmtree(wh, ignore_errors=True)


def _options(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--turns", type=int, default=1_000_000)
    p.add_argument("--scores-rows", type=int, default=10_000_000)
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    p.add_argument("--templates", type=int, default=None,
                   help="distinct synthetic turns the turns are drawn from (default: "
                        "--turns, every turn its own; fewer let call_validity's cache of "
                        "repeated calls hit far more than real traffic would)")
    p.add_argument("--repeats", type=int, default=5, help="warm runs per view (median)")
    p.add_argument("--out", default="bench/out")
    p.add_argument("--keep", action="store_true", help="keep the benchmark warehouse")
    p.add_argument("--quick", action="store_true", help="smoke run: tiny sizes")
    p.add_argument("--skip-views", action="store_true",
                   help="stop after the scoring benchmark (no views, no publishing)")
    p.add_argument("--skip-scoring", action="store_true",
                   help="no scoring runs: judge-free score rows are written with SQL")
    args = p.parse_args(argv)
    if args.quick:
        args.turns, args.scores_rows = min(args.turns, 2000), min(args.scores_rows, 30_000)
        args.templates, args.repeats = min(args.templates or 300, 300), min(args.repeats, 3)
    return args


def _scoring(wh: Path, args: argparse.Namespace) -> dict[str, Any]:
    """All five judge-free scorers in ONE `score_turns` run (what `turnscore score` and the
    nightly run do: each batch is read once and written once), with the run's own
    breakdown: seconds inside each scorer, reading the pending turns, writing scores."""
    con = duckdb.connect(str(wh / DB_FILE), read_only=True)
    base = _seconds(lambda: _drain(con, READ_ALL, args.batch_size))
    con.close()
    print(f"\n== judge-free scoring, {args.turns:,} turns, batch {args.batch_size:,} ==")
    print(f"baseline: read every turn into Arrow: {base:.2f} s "
          f"({args.turns / base:,.0f} turns/s)")
    started = time.perf_counter()
    report = score_turns(wh, scorers=list(SCORERS), batch_size=args.batch_size,
                         publish_snapshot=False)
    total = time.perf_counter() - started
    if report.written != len(SCORERS) * args.turns:
        raise RuntimeError(f"wrote {report.written:,} scores, expected "
                           f"{len(SCORERS) * args.turns:,}")
    # Writing overlaps scoring the next batch: only the wait for it adds to the run.
    parts = {**{name: report.scorer_seconds[name] for name in SCORERS},
             "(wait for reads)": report.read_seconds,
             "(write wait)": report.write_wait_seconds,
             "(checkpoint)": report.checkpoint_seconds}
    if report.workers == 1:
        parts["(rest of the run)"] = total - sum(parts.values())
    else:  # the scorers' seconds are summed over the workers, which overlap
        print(f"scored on {report.workers} worker processes: a scorer's seconds are summed "
              "over them")
    print(f"{'part of the run':<20} {'seconds':>9} {'turns/s':>10} {'x baseline':>11}")
    for name, seconds in parts.items():
        rate = f"{args.turns / seconds:>10,.0f}" if seconds > 0 else f"{'-':>10}"
        print(f"{name:<20} {seconds:>9.2f} {rate} {seconds / base:>11.1f}")
    target = SCORE_TARGET_S_PER_M * args.turns / 1_000_000
    verdict = "PASS" if total < target else "FAIL"
    print(f"{'all five, one run':<20} {total:>9.2f} {args.turns / total:>10,.0f} "
          f"{total / base:>11.1f}")
    print(f"(on other threads: reading turns {report.read_ahead_seconds:.2f} s, "
          f"writing scores {report.write_seconds:.2f} s)")
    print(f"target: all five in < {target:.1f} s ({SCORE_TARGET_S_PER_M:.0f} s per 1M turns)"
          f": {verdict}")
    return {"baseline_read_s": base, "per_scorer_s": report.scorer_seconds,
            "read_s": report.read_seconds, "read_ahead_s": report.read_ahead_seconds,
            "write_s": report.write_seconds, "checkpoint_s": report.checkpoint_seconds,
            "write_wait_s": report.write_wait_seconds, "total_s": total,
            "turns": args.turns, "rows_written": report.written, "target_s": target,
            "workers": report.workers,
            "pass": total < target}


def _code_scores(wh: Path) -> None:
    con = open_warehouse(wh)
    for name in SCORERS:
        con.execute(INSERT_CODE_SCORES, {"scorer": name})
    con.close()
    print("\njudge-free scoring skipped: rows written with SQL")


def _views(wh: Path, args: argparse.Namespace, scale: str, warm_target: float,
           cold_target: float | None) -> dict[str, Any]:
    names = [v.name for v in load_views(REGISTRY.values())]
    print(f"\n== publishing at {scale} ==")
    published = publish_snapshot(wh)
    stages = published.seconds
    views_s = sum(v for k, v in stages.items() if k.startswith("view "))
    total = sum(stages.values())
    print(f"publish: {total:.1f} s (copy {stages['copy']:.1f} s, materialise "
          f"{len(published.views)} views {views_s:.1f} s, Parquet {stages['parquet']:.1f} s, "
          f"checkpoint {stages['checkpoint']:.1f} s)")
    out: dict[str, Any] = {"scale": scale, "publish_s": total, "publish_stages_s": stages}
    out.update(_published_views(str(published.path), names, args, warm_target, cold_target,
                                stages))
    out["live"] = _live_views(str(wh / DB_FILE), names, args)
    return out


def _published_views(db: str, names: list[str], args: argparse.Namespace, warm_target: float,
                     cold_target: float | None, stages: dict[str, float]) -> dict[str, Any]:
    print(f"\n-- views in {Path(db).name} (materialised tables) --")
    queries, rows = _queries(db, names)
    # Cold first, with no other connection to the file open: the Python client shares one
    # database (and its buffer pool) between connections to the same file.
    base_cold = _cold(db, BASELINE_SQL, fetch=True)
    cold = {name: _cold(db, sql, fetch) for name, (sql, fetch) in queries.items()}
    con = duckdb.connect(db, read_only=True)
    day = {"day": con.execute(MIDDLE_DAY).fetchall()[0][0]}
    con.close()
    day_cold = _cold(db, ONE_DAY_SQL, True, day)
    searched = {**day, "text": SEARCH_TEXT}
    reads_cold = {name: _cold(db, sql, True, _params(sql, searched))
                  for name, sql in DASHBOARD_READS.items()}
    con = duckdb.connect(db, read_only=True)
    base_warm = _warm(con, BASELINE_SQL, True, args.repeats)
    print(f"baseline ({BASELINE_SQL}): cold {base_cold:.0f} ms, warm {base_warm:.0f} ms")
    targets = f"warm < {warm_target:.0f} ms" + (f", cold < {cold_target:.0f} ms"
                                                  if cold_target else "")
    print(f"targets: {targets}")
    print(f"{'view':<26} {'query':<6} {'rows':>10} {'cold ms':>8} {'warm ms':>8} "
          f"{'x base':>7} {'publish s':>10}  result")
    out: dict[str, Any] = {"baseline_cold_ms": base_cold, "baseline_warm_ms": base_warm,
                           "views": {}}
    for name, (sql, fetch) in queries.items():
        warm = _warm(con, sql, fetch, args.repeats)
        ok = warm < warm_target and (cold_target is None or cold[name] < cold_target)
        built = stages.get(f"view {name}", 0.0)
        print(f"{name:<26} {'fetch' if fetch else 'counts':<6} {rows[name]:>10,} "
              f"{cold[name]:>8.0f} {warm:>8.0f} {warm / base_warm:>7.1f} {built:>10.1f}  "
              f"{'PASS' if ok else 'FAIL'}", flush=True)
        out["views"][name] = {"query": "fetch" if fetch else "counts", "rows": rows[name],
                              "cold_ms": cold[name], "warm_ms": warm, "publish_s": built,
                              "pass": ok}
        if not ok and not fetch:
            column, ms = _slowest_column(con, name, args.repeats)
            print(f"{'':<26} slowest column: {column}, warm {ms:.0f} ms on its own")
            out["views"][name]["slowest_column"] = {"column": column, "warm_ms": ms}
    day_warm = _warm(con, ONE_DAY_SQL, True, args.repeats, day)
    day_rows = len(con.execute(ONE_DAY_SQL, day).fetchall())
    con.close()
    passed = sum(v["pass"] for v in out["views"].values())
    print(f"{passed} of {len(names)} views meet the targets")
    print(f"one day of turns_scored ({ONE_DAY_SQL}, {day_rows:,} rows): "
          f"cold {day_cold:.0f} ms, warm {day_warm:.0f} ms")
    out["one_day"] = {"rows": day_rows, "cold_ms": day_cold, "warm_ms": day_warm}
    out["dashboard"] = _dashboard_reads(db, args, searched, reads_cold)
    return out


def _dashboard_reads(db: str, args: argparse.Namespace, params: dict[str, Any],
                     cold: dict[str, float]) -> dict[str, Any]:
    print(f"dashboard reads of turns_scored (day {params['day']}, text {params['text']!r}):")
    con = duckdb.connect(db, read_only=True)
    out: dict[str, Any] = {}
    try:
        for name, sql in DASHBOARD_READS.items():
            bound = _params(sql, params)
            warm = _warm(con, sql, True, args.repeats, bound)
            rows = con.sql(sql, params=bound).to_arrow_table().num_rows
            print(f"  {name:<18} {rows:>8,} rows  cold {cold[name]:>5.0f} ms  "
                  f"warm {warm:>5.0f} ms")
            out[name] = {"sql": sql, "rows": rows, "cold_ms": cold[name], "warm_ms": warm}
    finally:
        con.close()
    return out


def _params(sql: str, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters `sql` names (DuckDB rejects unused named parameters)."""
    return {k: v for k, v in params.items() if f"${k}" in sql}


def _live_views(db: str, names: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """The views as views in the live warehouse: warm only, for information."""
    print(f"\n-- live views in {Path(db).name} (informational, warm) --")
    queries, _ = _queries(db, names)
    repeats = min(args.repeats, 3)
    con = duckdb.connect(db, read_only=True)
    base = _warm(con, BASELINE_SQL, True, repeats)
    print(f"baseline: warm {base:.0f} ms")
    print(f"{'view':<26} {'query':<6} {'warm ms':>8} {'x base':>7}")
    out: dict[str, Any] = {"baseline_warm_ms": base, "views": {}}
    for name, (sql, fetch) in queries.items():
        warm = _warm(con, sql, fetch, repeats)
        print(f"{name:<26} {'fetch' if fetch else 'counts':<6} {warm:>8.0f} {warm / base:>7.1f}",
              flush=True)
        out["views"][name] = {"warm_ms": warm}
    con.close()
    return out


def _slowest_column(con: duckdb.DuckDBPyConnection, name: str,
                    repeats: int) -> tuple[str, float]:
    """Which column's `count(column)` costs most: what a failing "counts" row is made of."""
    columns = [row[0] for row in con.execute(f'DESCRIBE "{name}"').fetchall()]
    times = {c: _warm(con, f'SELECT count("{c}") FROM "{name}"', False, repeats)
             for c in columns}
    slowest = max(times, key=lambda c: times[c])
    return slowest, times[slowest]


def _queries(db: str, names: list[str]) -> tuple[dict[str, tuple[str, bool]], dict[str, int]]:
    """Per view: the timed SQL and whether it fetches; and its row count."""
    con = duckdb.connect(db, read_only=True)
    try:
        queries = {name: (f'SELECT * FROM "{name}"', True) if name not in ROW_GRAIN
                   else (_count_all(con, name), False) for name in names}
        return queries, {name: _rows(con, name) for name in names}
    finally:
        con.close()


def _run(con: duckdb.DuckDBPyConnection, sql: str, fetch: bool,
         params: dict[str, Any] | None = None) -> None:
    if fetch:
        con.sql(sql, params=params).to_arrow_table()
    else:
        con.execute(sql, params).fetchall()


def _cold(db: str, sql: str, fetch: bool, params: dict[str, Any] | None = None) -> float:
    con = duckdb.connect(db, read_only=True)
    try:
        return _seconds(lambda: _run(con, sql, fetch, params)) * 1000
    finally:
        con.close()


def _warm(con: duckdb.DuckDBPyConnection, sql: str, fetch: bool, repeats: int,
          params: dict[str, Any] | None = None) -> float:
    _run(con, sql, fetch, params)
    return statistics.median(_seconds(lambda: _run(con, sql, fetch, params)) * 1000
                             for _ in range(repeats))


def _count_all(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """`count(*)` plus `count(column)` of every column: each column is computed (a bare
    `count(*)` lets DuckDB drop the joins and columns it does not need), nothing is
    transferred."""
    columns = [row[0] for row in con.execute(f'DESCRIBE "{name}"').fetchall()]
    counts = ", ".join(f'count("{c}")' for c in columns)
    return f'SELECT count(*), {counts} FROM "{name}"'


def _rows(con: duckdb.DuckDBPyConnection, name: str) -> int:
    return _count(con, f'SELECT count(*) FROM "{name}"')


def _count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    return int(con.execute(sql).fetchall()[0][0])


def _drain(con: duckdb.DuckDBPyConnection, sql: str, batch_size: int) -> None:
    for _ in con.sql(sql).to_arrow_reader(batch_size):
        pass


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    raise SystemExit(main())
