"""Publish stress: readers opening `published.duckdb` in a loop through back-to-back publishes.

    python bench/publish_stress.py [--publishes 2000] [--readers 2] [--turns 300]
                                   [--batch 5] [--out bench/out] [--full]
    python bench/publish_stress.py --no-op-runs 20 [--no-op-turns 200000] [--extra-tables 20]
    python bench/publish_stress.py --night 10000 [--night-base 200000]

A small synthetic warehouse (`bench/common.py`) is published over and over with the real
`publish_snapshot`, as runs publish it; before each publish, --batch turns are added with
one score each, so every snapshot differs. Meanwhile --readers processes loop: connect
read-only to `published.duckdb`, read, close. Each read checks that it saw one whole
snapshot: `turns`, `scores` and the materialised `turns_scored` table hold the same number
of rows. Prints publishes, publish time, reads, errors (with the first messages) and torn
reads; exits 1 when a reader met any error or torn read, so it can gate a change to how
snapshots are written or swapped.

`--no-op-runs N` measures instead what a score run with nothing to do pays to learn whether
the snapshot is current, on a bigger warehouse (--no-op-turns turns, each scored, plus
--extra-tables tables of that many rows, as a warehouse with more history has): the
commit-stamp check (`publish.snapshot_behind`, two counts) against the fingerprint it
replaced (count and max of every lineage column of every table in both databases, kept
below as `fingerprint_behind`, the baseline), each N times in the same run, then a whole
no-op `score_turns` with each check. Prints medians and the ratio.

`--night N` measures a night's publish (issue 15): a warehouse of --night-base turns,
each with five code scores, published; then a night of N new turns on a new UTC day, each
scored, published twice from the same state: in full (a copy of the warehouse with the
previous snapshot and exports removed: the baseline) and incrementally (from the previous
snapshot). Prints both publishes' stages, the ratio, and how many Parquet files the
incremental publish linked (unchanged, no bytes written) and wrote.

Not a timed test: it takes long (0.8-1.5 s per publish on a busy 2-core machine, the
readers competing: 2,000 publishes ~30-50 min). Seen here with DuckDB 2.0.1: table-by-
table copies 0 errors in 16,595 reads over 500 publishes; byte copies of the live file
7 errors in 107,167 reads over 2,000 (see the comment in `publish._publish`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).parent))
from common import SyntheticTurns, machine

from turnscore.warehouse import score_run
from turnscore.warehouse.db import open_warehouse, quote_ident
from turnscore.warehouse.publish import (
    ATTACH_READ_ONLY,
    DETACH,
    PUBLISHED_DB,
    publish_snapshot,
    snapshot_behind,
)

# One judge-free score for each turn that has none: scores and turns grow together.
SCORE_NEW_TURNS = """
INSERT INTO scores (turn_id, scorer, scorer_version, status, value, attempts, content_hash,
                    run_id, scored_at)
SELECT turn_id, 'call_validity', '1', 'scored', 1.0, 0, content_hash, 'stress', started_at
FROM turns WHERE turn_id NOT IN (SELECT turn_id FROM scores)
"""

# --night: five scores for every turn that has none, values from the turn id.
NIGHT_SCORERS = ("tool_grounding", "answer_correctness", "tool_call_accuracy", "groundedness",
                 "call_validity")
SCORE_NIGHT = """
INSERT INTO scores (turn_id, scorer, scorer_version, status, value, attempts, content_hash,
                    run_id, scored_at)
SELECT t.turn_id, s.scorer, '1', 'scored', (hash(t.turn_id || s.scorer) % 2)::DOUBLE, 0,
       t.content_hash, $run, now()
FROM turns AS t CROSS JOIN (SELECT unnest($scorers::VARCHAR[]) AS scorer) AS s
WHERE t.turn_id NOT IN (SELECT turn_id FROM scores)
"""
# The night's turns (the ones not scored yet) start on a day after every other turn's,
# stamped with the night's ingest id, as a night's ingest would.
MOVE_NIGHT = """
UPDATE turns SET started_at = $day + to_microseconds((hash(turn_id) % 86400000000)::BIGINT),
                 ingest_id = $run
WHERE turn_id NOT IN (SELECT turn_id FROM scores)
"""

READER = textwrap.dedent("""
    import json, os, sys, duckdb
    path, stop = sys.argv[1], sys.argv[2]
    CHECK = ("SELECT (SELECT count(*) FROM turns), (SELECT count(*) FROM scores), "
             "(SELECT count(*) FROM turns_scored)")
    reads, torn, errors = 0, 0, []
    while not os.path.exists(stop):
        try:
            con = duckdb.connect(path, read_only=True)
            try:
                turns, scores, scored = con.execute(CHECK).fetchall()[0]
            finally:
                con.close()
            reads += 1
            torn += not (turns == scores == scored)
        except Exception as exc:  # every failure counts: that is what this measures
            errors.append(repr(exc)[:200])
    print(json.dumps({"reads": reads, "torn": torn, "errors": len(errors),
                      "first_errors": errors[:3]}), flush=True)
""")


# The baseline of --no-op-runs: `snapshot_behind` before the commit stamp (session 6).
BASE_TABLES = """
SELECT table_name FROM duckdb_tables()
WHERE NOT temporary AND database_name = ? AND schema_name = 'main' AND table_name <> 'runs'
ORDER BY table_name
"""
STAMP_COLUMNS = """
SELECT column_name FROM duckdb_columns()
WHERE database_name = ? AND schema_name = 'main' AND table_name = ?
  AND (column_name IN ('run_id', 'ingest_id')
       OR (suffix(column_name, '_at') AND data_type LIKE 'TIMESTAMP%'))
ORDER BY column_name
"""
HAS_TABLE = """
SELECT 1 FROM duckdb_tables()
WHERE database_name = ? AND schema_name = 'main' AND table_name = ?
"""
ALIAS = "_bench_snapshot"


def fingerprint_behind(wh: Path, con: duckdb.DuckDBPyConnection) -> bool:
    """The check the commit stamp replaced: per table, count and max stamps, both sides."""
    live = con.execute("SELECT current_database()").fetchall()[0][0]
    con.execute(ATTACH_READ_ONLY.format(alias=quote_ident(ALIAS)), [str(wh / PUBLISHED_DB)])
    try:
        for (table,) in con.execute(BASE_TABLES, [live]).fetchall():
            if _fingerprint(con, live, table) != _fingerprint(con, ALIAS, table):
                return True
        return False
    finally:
        con.execute(DETACH.format(alias=quote_ident(ALIAS)))


def _fingerprint(con: duckdb.DuckDBPyConnection, database: str, table: str
                 ) -> tuple[object, ...] | None:
    if not con.execute(HAS_TABLE, [database, table]).fetchall():
        return None
    columns = con.execute(STAMP_COLUMNS, [database, table]).fetchall()
    stamps = "".join(f", max({quote_ident(c)})::VARCHAR" for (c,) in columns)
    row = con.execute(f"SELECT count(*){stamps} FROM {quote_ident(database)}.main."
                      f"{quote_ident(table)}").fetchone()
    return tuple(row) if row else None


def no_op_runs(args: argparse.Namespace) -> int:
    """Median seconds of the two checks, and of a whole no-op score run with each."""
    wh = Path(args.out) / "no-op-warehouse"
    shutil.rmtree(wh, ignore_errors=True)
    print("machine:", json.dumps(machine()))
    con = open_warehouse(wh)
    SyntheticTurns(1000).insert(con, args.no_op_turns)
    for i in range(args.extra_tables):  # more history: tables the old check scanned too
        con.execute(f"CREATE TABLE {quote_ident(f'history_{i:02d}')} AS "
                    "SELECT turn_id, ingest_id, started_at AS recorded_at FROM turns")
    con.close()
    first = score_run.score_turns(wh, scorers=["call_validity"])
    assert first.published, first
    print(f"warehouse: {args.no_op_turns:,} turns scored, {args.extra_tables} extra tables "
          f"of as many rows, {_size(wh) / 1e6:.0f} MB")
    con = open_warehouse(wh)
    try:
        checks = {"fingerprint (before)": fingerprint_behind,
                  "commit stamp (after)": snapshot_behind}
        timings = {name: _timed(lambda f=fn: f(wh, con), args.no_op_runs, expect=False)
                   for name, fn in checks.items()}
    finally:
        con.close()
    runs = {}
    for name, fn in checks.items():
        score_run.snapshot_behind = fn  # type: ignore[attr-defined]
        runs[name] = _timed(lambda: score_run.score_turns(wh, scorers=["call_validity"]),
                            max(3, args.no_op_runs // 5), expect=None)
    score_run.snapshot_behind = snapshot_behind  # type: ignore[attr-defined]
    before, after = (timings[n] for n in checks)
    print(f"check, median of {args.no_op_runs}: " + ", ".join(
        f"{n} {t * 1000:.1f} ms" for n, t in timings.items()) + f"; ratio {before / after:.1f}x")
    run_before, run_after = (runs[n] for n in checks)
    print("whole no-op score run, median: " + ", ".join(
        f"{n} {t:.3f} s" for n, t in runs.items()) + f"; ratio {run_before / run_after:.2f}x")
    if not args.keep:
        shutil.rmtree(wh, ignore_errors=True)
    return 0


def night(args: argparse.Namespace) -> int:
    """A night's publish, in full and incrementally, from the same warehouse."""
    from datetime import timedelta

    from common import DAYS, T0

    root = Path(args.out) / "night"
    shutil.rmtree(root, ignore_errors=True)
    wh, full = root / "incremental", root / "full"
    print("machine:", json.dumps(machine()))
    synthetic = SyntheticTurns(1000)
    con = open_warehouse(wh)
    try:
        synthetic.insert(con, args.night_base)
        con.execute(SCORE_NIGHT, {"run": "base", "scorers": list(NIGHT_SCORERS)})
        started = time.perf_counter()
        first = publish_snapshot(wh, con=con)
        print(f"warehouse: {args.night_base:,} turns, {len(NIGHT_SCORERS)} scores each; "
              f"first publish (full) {time.perf_counter() - started:.1f} s")
        synthetic.insert(con, args.night)
        con.execute(MOVE_NIGHT, {"day": T0 + timedelta(days=DAYS + 1), "run": "night"})
        con.execute(SCORE_NIGHT, {"run": "night", "scorers": list(NIGHT_SCORERS)})
        con.execute("CHECKPOINT")
    finally:
        con.close()
    assert not first.incremental
    shutil.copytree(wh, full, symlinks=True)
    for old in [full / PUBLISHED_DB, full / "published", *full.glob(".published-*")]:
        if old.is_symlink() or old.is_file():
            old.unlink()
        else:
            shutil.rmtree(old)
    results = {}
    for name, folder in (("full (before)", full), ("incremental (after)", wh)):
        previous = _version_files(folder)
        started = time.perf_counter()
        published = publish_snapshot(folder)
        total = time.perf_counter() - started
        assert published.incremental == (folder == wh), published
        results[name] = total
        stages = _stages(published.seconds)
        print(f"{name}: {total:.2f} s  " + ", ".join(f"{k} {v:.2f}" for k, v in stages.items()))
        top = sorted(published.seconds.items(), key=lambda kv: -kv[1])[:10]
        print("  slowest steps: " + ", ".join(f"{k} {v:.2f}" for k, v in top))
        if published.incremental:
            print(f"  views updated for the night's keys: {', '.join(published.updated)}")
            print("  views recomputed whole: " + ", ".join(
                f"{v} {published.seconds.get(f'view {v}', 0):.2f} s"
                for v in published.recomputed))
            now = _version_files(folder)
            linked = [f for f, ino in now.items() if previous.get(f) == ino]
            written = [f for f in now if f not in linked]
            print(f"  Parquet files: {len(linked)} linked, {len(written)} written "
                  f"({sum((folder / 'published' / f).stat().st_size for f in written) / 1e6:.1f}"
                  f" MB): {', '.join(sorted(written)[:12])}{' ...' if len(written) > 12 else ''}")
            print(f"  old files rewritten: {sum(1 for f in written if f in previous)}")
    before, after = results.values()
    print(f"night of {args.night:,} into {args.night_base:,}: full {before:.2f} s, "
          f"incremental {after:.2f} s; ratio {before / after:.1f}x")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def _stages(seconds: Mapping[str, float]) -> dict[str, float]:
    """The publish's stages, the per-table deltas and per-view times summed."""
    out: dict[str, float] = {}
    for key, value in seconds.items():
        group = key.split(" ", 1)[0] if key.startswith(("delta ", "view ")) else key
        out[group] = out.get(group, 0.0) + value
    return out


def _version_files(folder: Path) -> dict[str, int]:
    link = folder / "published"
    if not link.is_dir():
        return {}
    target = link.resolve()
    return {str(p.relative_to(target)): p.stat().st_ino for p in target.rglob("*")
            if p.is_file()}


def _timed(work: object, times: int, *, expect: bool | None) -> float:
    seconds = []
    for _ in range(times):
        started = time.perf_counter()
        result = work()  # type: ignore[operator]
        seconds.append(time.perf_counter() - started)
        if expect is not None:
            assert result is expect, "the snapshot should be current"
        elif getattr(result, "published", None):
            raise AssertionError("a no-op run published: the snapshot was not current")
    return statistics.median(seconds)


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    args = _options(argv)
    if args.no_op_runs:
        return no_op_runs(args)
    if args.night:
        return night(args)
    wh = Path(args.out) / "stress-warehouse"
    shutil.rmtree(wh, ignore_errors=True)
    print("machine:", json.dumps(machine()))
    synthetic = SyntheticTurns(min(args.turns, 1000))
    con = open_warehouse(wh)
    synthetic.insert(con, args.turns)
    con.execute(SCORE_NEW_TURNS)
    publish_snapshot(wh, con=con)
    print(f"warehouse: {args.turns:,} turns")

    stop = wh / "stop-readers"
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(wh / PUBLISHED_DB),
                                 str(stop)], stdout=subprocess.PIPE, text=True)
               for _ in range(args.readers)]
    seconds: list[float] = []
    try:
        for i in range(args.publishes):
            synthetic.insert(con, args.batch)
            con.execute(SCORE_NEW_TURNS)
            started = time.perf_counter()
            publish_snapshot(wh, con=con, full=args.full)
            seconds.append(time.perf_counter() - started)
            if (i + 1) % 250 == 0:
                print(f"  {i + 1:,} publishes, median {statistics.median(seconds):.3f} s")
    finally:
        stop.touch()
        results = [json.loads(r.communicate(timeout=120)[0]) for r in readers]
        con.close()
    reads = sum(r["reads"] for r in results)
    errors = sum(r["errors"] for r in results)
    torn = sum(r["torn"] for r in results)
    print(f"publishes: {len(seconds):,}, median {statistics.median(seconds):.3f} s, "
          f"max {max(seconds):.3f} s")
    print(f"readers: {args.readers}, reads: {reads:,}, errors: {errors}, torn reads: {torn}")
    for r in results:
        for message in r["first_errors"]:
            print("  error:", message)
    if not args.keep:
        shutil.rmtree(wh, ignore_errors=True)
    return 1 if errors or torn else 0


def _options(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--publishes", type=int, default=2000)
    p.add_argument("--readers", type=int, default=2, help="reader processes")
    p.add_argument("--turns", type=int, default=300, help="turns in the warehouse at start")
    p.add_argument("--batch", type=int, default=5, help="turns added before each publish")
    p.add_argument("--out", default="bench/out")
    p.add_argument("--keep", action="store_true", help="keep the stress warehouse")
    p.add_argument("--no-op-runs", type=int, default=0,
                   help="instead: time the no-op run's staleness check this many times")
    p.add_argument("--no-op-turns", type=int, default=200_000,
                   help="turns in the --no-op-runs warehouse")
    p.add_argument("--extra-tables", type=int, default=20,
                   help="extra tables of --no-op-turns rows in the --no-op-runs warehouse")
    p.add_argument("--full", action="store_true",
                   help="stress: publish in full every time (the baseline: from empty, "
                        "not from a copy of the previous snapshot)")
    p.add_argument("--night", type=int, default=0,
                   help="instead: time a night of this many new turns, published in full "
                        "and incrementally")
    p.add_argument("--night-base", type=int, default=200_000,
                   help="turns in the --night warehouse before the night")
    return p.parse_args(argv)


if __name__ == "__main__":
    raise SystemExit(main())
