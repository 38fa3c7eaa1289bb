"""Score and view benchmark: judge-free scoring throughput, then view latency.

    python bench/score.py [--turns 1000000] [--scores-rows 10000000] [--batch-size 5000]
                          [--repeats 5] [--out bench/out] [--quick]

1. Synthetic turns (`bench/common.py`: tools with JSON Schemas, 0-5 calls, answers of
   100-1,500 characters, labels for a share) are written straight into a fresh warehouse.
2. Baseline, same run: the time to read every turn out of DuckDB into Arrow. Then
   `score_turns` runs once per judge-free scorer (as `turnscore score --scorer NAME`,
   without publishing a snapshot); each is printed in turns/s and as a multiple of the
   baseline. Target: all five over 1M turns in under a minute (scaled to --turns).
3. Judged rows (tool_usage, tractability, rules-v1 shaped details) are added for every
   turn, the shipped views (`turnscore.queries.load_views()`) are created, and each is
   timed cold (a fresh read-only connection, first query) and warm (median of
   --repeats). Row-grain views (one row per turn or call) are timed as
   `SELECT count(*), count(col1), count(col2), ... FROM view` ("counts": every column
   computed, nothing transferred), the others as a full fetch into Arrow ("fetch").
   Baseline: `SELECT scorer, count(*), avg(value) FROM scores GROUP BY scorer`.
   Targets: warm < 100 ms and cold < 250 ms at --turns scored turns.
4. More turns and score rows are added until `scores` holds --scores-rows rows, and the
   views are timed again. Target: warm < 250 ms.

These are benchmarks, not timed tests: machines are shared and noisy, so compare the
ratios to the baselines of the same run. `--quick` is a smoke run on tiny sizes.
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
from turnscore.warehouse.score_run import score_turns

SCORERS = ("tool_grounding", "answer_correctness", "tool_call_accuracy", "groundedness",
           "call_validity")
SCORE_TARGET_S_PER_M = 60.0
WARM_MS, COLD_MS, WARM_LARGE_MS = 100.0, 250.0, 250.0
ROW_GRAIN = frozenset({"turns_scored", "turn_scores", "tool_calls"})
BASELINE_SQL = "SELECT scorer, count(*), avg(value) FROM scores GROUP BY scorer"
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

    synthetic = SyntheticTurns(min(args.turns, args.templates))
    con = open_warehouse(wh)
    started = time.perf_counter()
    synthetic.insert_labels(con)
    synthetic.insert(con, args.turns)
    con.close()
    print(f"\nloaded {args.turns:,} synthetic turns in {time.perf_counter() - started:.1f} s")

    results["scoring"] = _scoring(wh, args)
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
    (out / "score-results.json").write_text(json.dumps(results, indent=2, default=str))
    print(f"\nresults: {out / 'score-results.json'}")
    if not args.keep:
        shutil.rmtree(wh, ignore_errors=True)
    return 0


def _options(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--turns", type=int, default=1_000_000)
    p.add_argument("--scores-rows", type=int, default=10_000_000)
    p.add_argument("--batch-size", type=int, default=5000)
    p.add_argument("--templates", type=int, default=20_000,
                   help="distinct synthetic turns the turns are drawn from")
    p.add_argument("--repeats", type=int, default=5, help="warm runs per view (median)")
    p.add_argument("--out", default="bench/out")
    p.add_argument("--keep", action="store_true", help="keep the benchmark warehouse")
    p.add_argument("--quick", action="store_true", help="smoke run: tiny sizes")
    args = p.parse_args(argv)
    if args.quick:
        args.turns, args.scores_rows = min(args.turns, 2000), min(args.scores_rows, 30_000)
        args.templates, args.repeats = min(args.templates, 300), min(args.repeats, 3)
    return args


def _scoring(wh: Path, args: argparse.Namespace) -> dict[str, Any]:
    con = duckdb.connect(str(wh / DB_FILE), read_only=True)
    base = _seconds(lambda: _drain(con, READ_ALL, args.batch_size))
    con.close()
    print(f"\n== judge-free scoring, {args.turns:,} turns, batch {args.batch_size:,} ==")
    print(f"baseline: read every turn into Arrow: {base:.2f} s "
          f"({args.turns / base:,.0f} turns/s)")
    print(f"{'scorer':<20} {'seconds':>9} {'turns/s':>10} {'x baseline':>11}")
    per: dict[str, float] = {}
    for name in SCORERS:
        per[name] = _seconds(lambda n=name: score_turns(  # type: ignore[misc]
            wh, scorers=[n], batch_size=args.batch_size, publish_snapshot=False))
        print(f"{name:<20} {per[name]:>9.2f} {args.turns / per[name]:>10,.0f} "
              f"{per[name] / base:>11.1f}", flush=True)
    total = sum(per.values())
    target = SCORE_TARGET_S_PER_M * args.turns / 1_000_000
    verdict = "PASS" if total < target else "FAIL"
    print(f"{'all five':<20} {total:>9.2f} {args.turns / total:>10,.0f} {total / base:>11.1f}")
    print(f"target: all five in < {target:.1f} s ({SCORE_TARGET_S_PER_M:.0f} s per 1M turns)"
          f": {verdict}")
    return {"baseline_read_s": base, "per_scorer_s": per, "total_s": total,
            "turns": args.turns, "target_s": target, "pass": total < target}


def _views(wh: Path, args: argparse.Namespace, scale: str, warm_target: float,
           cold_target: float | None) -> dict[str, Any]:
    db = str(wh / DB_FILE)
    names = [v.name for v in load_views(REGISTRY.values())]
    print(f"\n== views at {scale} ==")
    base_cold = _cold(db, BASELINE_SQL, fetch=True)
    con = duckdb.connect(db, read_only=True)
    base_warm = _warm(con, BASELINE_SQL, True, args.repeats)
    print(f"baseline ({BASELINE_SQL}): cold {base_cold:.0f} ms, warm {base_warm:.0f} ms")
    targets = f"warm < {warm_target:.0f} ms" + (f", cold < {cold_target:.0f} ms"
                                                  if cold_target else "")
    print(f"targets: {targets}")
    print(f"{'view':<26} {'query':<6} {'rows':>10} {'cold ms':>8} {'warm ms':>8} "
          f"{'x base':>7}  result")
    out: dict[str, Any] = {"scale": scale, "baseline_cold_ms": base_cold,
                           "baseline_warm_ms": base_warm, "views": {}}
    for name in names:
        fetch = name not in ROW_GRAIN
        sql = f'SELECT * FROM "{name}"' if fetch else _count_all(con, name)
        cold = _cold(db, sql, fetch)
        warm = _warm(con, sql, fetch, args.repeats)
        rows = _rows(con, name)
        ok = warm < warm_target and (cold_target is None or cold < cold_target)
        print(f"{name:<26} {'fetch' if fetch else 'counts':<6} {rows:>10,} {cold:>8.0f} "
              f"{warm:>8.0f} {warm / base_warm:>7.1f}  {'PASS' if ok else 'FAIL'}", flush=True)
        out["views"][name] = {"query": "fetch" if fetch else "counts", "rows": rows,
                              "cold_ms": cold, "warm_ms": warm, "pass": ok}
    con.close()
    passed = sum(v["pass"] for v in out["views"].values())
    print(f"{passed} of {len(names)} views meet the targets")
    return out


def _run(con: duckdb.DuckDBPyConnection, sql: str, fetch: bool) -> None:
    if fetch:
        con.sql(sql).to_arrow_table()
    else:
        con.execute(sql).fetchall()


def _cold(db: str, sql: str, fetch: bool) -> float:
    con = duckdb.connect(db, read_only=True)
    try:
        return _seconds(lambda: _run(con, sql, fetch)) * 1000
    finally:
        con.close()


def _warm(con: duckdb.DuckDBPyConnection, sql: str, fetch: bool, repeats: int) -> float:
    _run(con, sql, fetch)
    return statistics.median(_seconds(lambda: _run(con, sql, fetch)) * 1000
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
