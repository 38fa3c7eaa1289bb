"""An incremental night at two warehouse sizes, stage by stage, in one run.

    python bench/night.py [--turns 1000000] [--seed-turns 2000] [--night-turns 10000]
                          [--out bench/out/night] [--keep]

Two warehouses are built, then the same night (`--night-turns` new turns of new sessions,
a day after the old ones, as OTLP JSONL made by `bench/ingest.py`'s generator) is run into
each with `run_nightly` (ingest, labels, score with every registered scorer and the rules
judge, views, report, publish), and every stage is timed:

* small: the seed, `--seed-turns` turns made by the real pipeline (OTLP files, a real
  nightly: ingest, labels, scoring, publish);
* large: the seed scaled to `--turns` by copying its stored rows with fresh ids (DuckDB
  `INSERT ... SELECT` over `range`: the seed's `turns`, `scores`, `request_norms` rows,
  and its `turns/` Parquet files, each copy a new part file, key-indexed; and its
  `score_queue` rows, so the queue stays complete for the copies), not hand-typed rows.
  `spans/` stays the seed's: copies of 8M spans would cost more disk and time than the
  rest, and the night reads spans back only for traces it rebuilds.

`--built DIR` keeps the input and both warehouses in DIR (built on the first run, about
four minutes for 1M turns) and copies them for each later run.

The night's stages (times from the stage functions `run_nightly` calls, wrapped here):
`ingest: read+assemble` (the ingest pipeline: decoding, Parquet stores), `ingest: load`
(`load_batch`: the warehouse upsert), `labels`, `score: pending` (`queue_pending`),
`score: score+write` (the rest of the score run), `views`, `report`, `publish`. The ratio
column is the large warehouse's time over the small one's: a stage that costs what the
new data costs stays near 1. Also printed: old Parquet files (under `turns/`, `spans/`)
rewritten or removed by the night (target 0), and the bytes the publish wrote.
Target (issue 15): the night into the large warehouse under 5 s.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import duckdb
import orjson

DAY_NS = 86_400 * 1_000_000_000
NIGHT_SESSIONS_FROM = 50_000_000
"""Session numbers of the night: no new turn continues an old conversation."""
SPANS_PER_TURN = 8
SPANS_PER_FILE = 8_000
LABELLED_EVERY = 10
"""Every tenth seed turn's request gets a labelled case (joined by request text)."""
TARGET_S = 5.0
STAGES = ("ingest: read+assemble", "ingest: load", "labels", "score: pending",
          "score: score+write", "views", "report", "publish")

# Scaling the seed: copy k of every row, with ids made fresh from the old id and k.
_FRESH = "md5({col} || '#' || k::VARCHAR)"
SCALE_TURNS = """
INSERT INTO turns ({columns})
SELECT {select} FROM turns AS t, range($first, $last) AS r(k)
WHERE t.ingest_id <> 'scaled'
"""
SCALE_SCORES = """
INSERT INTO scores
SELECT {fresh_turn}, s.* EXCLUDE (turn_id) FROM scores AS s
JOIN turns AS t USING (turn_id), range($first, $last) AS r(k)
WHERE t.ingest_id <> 'scaled'
"""
SCALE_NORMS = """
INSERT INTO request_norms
SELECT {fresh_turn}, n.content_hash, n.norm_md5 FROM request_norms AS n
JOIN turns AS t USING (turn_id), range($first, $last) AS r(k)
WHERE t.ingest_id <> 'scaled'
"""
# The copies' queue rows: a copy has what its seed turn has pending (its scores, text and
# case are the seed's), so the score queue stays complete without a full pass.
SCALE_QUEUE = """
INSERT INTO score_queue
SELECT DISTINCT {fresh_turn}, q.reason, q.enqueued_at FROM score_queue AS q
JOIN turns AS t USING (turn_id), range($first, $last) AS r(k)
WHERE t.ingest_id <> 'scaled'
"""
COPY_TURN_FILE = """
COPY (SELECT {select} FROM read_parquet($file) AS t, range($first, $last) AS r(k))
TO '{out}' (FORMAT parquet)
"""
SEED_TURNS = "SELECT count(*) FROM turns WHERE ingest_id <> 'scaled'"
COUNT_TURNS = "SELECT count(*) FROM turns"
COPIES_PER_STEP = 25


def _bench_ingest() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_ingest", Path(__file__).with_name("ingest.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--turns", type=int, default=1_000_000, help="the large warehouse")
    p.add_argument("--seed-turns", type=int, default=2_000, help="the small warehouse")
    p.add_argument("--night-turns", type=int, default=10_000)
    p.add_argument("--out", type=Path, default=Path("bench/out/night"))
    p.add_argument("--keep", action="store_true", help="keep the warehouses after the night")
    p.add_argument("--built", type=Path, default=None,
                   help="a folder keeping the built warehouses and inputs: built there on the "
                        "first run, copied from there by later runs (same options)")
    args = p.parse_args(argv)
    shutil.rmtree(args.out, ignore_errors=True)
    built = args.built or args.out / "built"
    stamp = built / "options.json"
    options = json.dumps([args.turns, args.seed_turns, args.night_turns])
    if not (stamp.exists() and stamp.read_text() == options):
        shutil.rmtree(built, ignore_errors=True)
        _build(built, args)
        stamp.write_text(options)
    small, large = args.out / "small", args.out / "large"
    for name, wh in (("small", small), ("large", large)):
        shutil.copytree(built / name, wh, symlinks=True)
    night_dir, labels_file = built / "night-input", built / "labels.jsonl"

    results: dict[str, Any] = {"options": {k: str(v) for k, v in vars(args).items()}}
    for name, wh in (("small", small), ("large", large)):
        results[name] = _night(wh, night_dir / "jsonl", labels_file)
        print(f"night into {name} ({results[name]['turns_before']:,} turns): "
              f"{results[name]['seconds']:.1f} s")
    _print(results)
    (args.out / "night-results.json").write_text(json.dumps(results, indent=2))
    if not args.keep:
        for wh in (small, large):
            shutil.rmtree(wh, ignore_errors=True)
        if args.built is None:
            shutil.rmtree(built, ignore_errors=True)
    return 0


def _build(built: Path, args: argparse.Namespace) -> None:
    """The night's input, the seed (small) and the scaled (large) warehouse, under `built`."""
    bench = _bench_ingest()
    clock = time.perf_counter()
    seed_dir, night_dir = built / "seed-input", built / "night-input"
    gen = bench.Generator(seed=99)
    bench.generate(seed_dir, args.seed_turns * SPANS_PER_TURN, SPANS_PER_FILE, gen, ("jsonl",))
    night = bench.Generator(seed=1234)
    night.sessions, night.now = NIGHT_SESSIONS_FROM, gen.now + DAY_NS
    bench.generate(night_dir, args.night_turns * SPANS_PER_TURN, SPANS_PER_FILE, night,
                   ("jsonl",))
    print(f"generated seed and night input in {time.perf_counter() - clock:.1f} s")
    small, large = built / "small", built / "large"
    clock = time.perf_counter()
    _seed(small, seed_dir / "jsonl", built / "labels.jsonl")
    print(f"seed warehouse (real nightly): {_count(small)} turns in "
          f"{time.perf_counter() - clock:.1f} s")
    shutil.copytree(small, large, symlinks=True)
    clock = time.perf_counter()
    _scale(large, args.turns)
    print(f"large warehouse: {_count(large)} turns, scaled in "
          f"{time.perf_counter() - clock:.1f} s")


def _seed(wh: Path, inputs: Path, labels_file: Path) -> None:
    from turnscore.warehouse.config import Config
    from turnscore.warehouse.db import open_warehouse
    from turnscore.warehouse.ingest_run import run_ingest
    from turnscore.warehouse.nightly import run_nightly

    report = run_ingest([inputs], wh)
    if report.outcome != "ok":
        raise RuntimeError(f"seed ingest: {report.outcome} {report.error}")
    # Labels for a share of the seed's requests (joined by text), as a team would label
    # cases from traffic it has seen; the night loads the same file again.
    con = open_warehouse(wh)
    try:
        rows = con.execute("SELECT request, final_answer FROM turns ORDER BY turn_id").fetchall()
    finally:
        con.close()
    with open(labels_file, "wb") as fh:
        for i, (request, answer) in enumerate(rows[::LABELLED_EVERY]):
            words = (answer or "").split()
            fh.write(orjson.dumps({"case_id": f"case-{i:05d}", "input": request,
                                   "canary": words[:1] or None,
                                   "ideal_response": answer, "match_mode": "contains"}) + b"\n")
    night = run_nightly(Config(warehouse=wh, labels=(labels_file,), report=wh / "report.html"))
    if night.outcome.value not in ("ok", "partial"):
        raise RuntimeError(f"seed nightly: {night.outcome} {night.problems}")


def _scale(wh: Path, turns: int) -> None:
    """Copy the seed's rows (DuckDB tables and `turns/` Parquet) until `wh` holds about
    `turns` turns."""
    from turnscore.ingest.schema import TURN_FIELDS
    from turnscore.ingest.store import sync_indexes
    from turnscore.warehouse.db import open_warehouse, quote_ident

    fresh = {"turn_id", "trace_id", "conversation_id"}
    columns = [f.name for f in TURN_FIELDS]
    select = ", ".join((_FRESH.format(col=f"t.{c}") if c in fresh
                        else "'scaled'" if c == "ingest_id" else f"t.{quote_ident(c)}")
                       + f" AS {quote_ident(c)}" for c in columns)
    con = open_warehouse(wh)
    try:
        seed = con.execute(SEED_TURNS).fetchall()[0][0]
        copies = max(1, -(-turns // seed))
        fresh_turn = _FRESH.format(col="t.turn_id")
        for first in range(1, copies, COPIES_PER_STEP):
            last = min(copies, first + COPIES_PER_STEP)
            bounds = {"first": first, "last": last}
            con.execute(SCALE_TURNS.format(columns=", ".join(map(quote_ident, columns)),
                                           select=select), bounds)
            con.execute(SCALE_SCORES.format(fresh_turn=fresh_turn), bounds)
            con.execute(SCALE_NORMS.format(fresh_turn=fresh_turn), bounds)
            con.execute(SCALE_QUEUE.format(fresh_turn=fresh_turn), bounds)
        con.execute("CHECKPOINT")
        files = sorted((wh / "turns").rglob("*.parquet"))
        for file in files:
            for first in range(1, copies, COPIES_PER_STEP):
                last = min(copies, first + COPIES_PER_STEP)
                out = file.with_name(f"part-scaled{first:05d}-{file.stem}.parquet")
                con.execute(COPY_TURN_FILE.format(select=select, out=str(out)),
                            {"file": str(file), "first": first, "last": last})
    finally:
        con.close()
    sync_indexes(wh)


def _count(wh: Path) -> int:
    con = duckdb.connect(str(wh / "warehouse.duckdb"), read_only=True)
    try:
        return int(con.execute(COUNT_TURNS).fetchall()[0][0])
    finally:
        con.close()


def _parquet_files(root: Path) -> dict[Path, tuple[int, int, int]]:
    out = {}
    for folder in ("turns", "spans"):
        for path in (root / folder).rglob("*.parquet"):
            st = path.stat()
            out[path] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


@contextmanager
def _timed(seconds: dict[str, float]) -> Iterator[Callable[[ModuleType, str, str], None]]:
    """Wrap module functions so each call adds its wall time to `seconds[stage]`."""
    undo: list[tuple[ModuleType, str, Any]] = []

    def wrap(module: ModuleType, name: str, stage: str) -> None:
        original = getattr(module, name)

        @functools.wraps(original)
        def timed(*a: Any, **kw: Any) -> Any:
            clock = time.perf_counter()
            try:
                return original(*a, **kw)
            finally:
                seconds[stage] = seconds.get(stage, 0.0) + time.perf_counter() - clock

        undo.append((module, name, original))
        setattr(module, name, timed)

    try:
        yield wrap
    finally:
        for module, name, original in reversed(undo):
            setattr(module, name, original)


def _night(wh: Path, inputs: Path, labels_file: Path) -> dict[str, Any]:
    from turnscore.warehouse import ingest_run, nightly, publish, score_run
    from turnscore.warehouse.config import Config

    before_turns = _count(wh)
    before = _parquet_files(wh)
    seconds: dict[str, float] = {}
    publish_stages: dict[str, float] = {}
    snapshot = publish.publish_snapshot

    def publish_snapshot(*a: Any, **kw: Any) -> Any:
        published = snapshot(*a, **kw)
        publish_stages.update(published.seconds)
        return published

    publish.publish_snapshot = publish_snapshot  # type: ignore[assignment]
    with _timed(seconds) as wrap:
        wrap(ingest_run, "ingest_paths", "ingest: read+assemble")
        wrap(ingest_run, "load_batch", "ingest: load")
        wrap(nightly, "load_labels", "labels")
        wrap(score_run, "queue_pending", "score: pending")
        wrap(score_run, "_run", "score: run")
        wrap(nightly, "_refresh_views", "views")
        wrap(nightly, "build_report", "report")
        wrap(nightly, "publish", "publish")
        clock = time.perf_counter()
        report = nightly.run_nightly(Config(warehouse=wh, sources=(inputs,),
                                            labels=(labels_file,),
                                            report=wh / "report.html"))
        total = time.perf_counter() - clock
    publish.publish_snapshot = snapshot  # type: ignore[assignment]
    # One line per kind of step: views materialised, table deltas applied (incremental).
    for prefix, label in (("view ", "materialise views"), ("delta ", "table deltas")):
        total_of = sum(v for k, v in publish_stages.items() if k.startswith(prefix))
        publish_stages = {k: v for k, v in publish_stages.items() if not k.startswith(prefix)}
        if total_of:
            publish_stages[label] = total_of
    seconds["score: score+write"] = seconds.pop("score: run") - seconds["score: pending"]
    after = _parquet_files(wh)
    changed = [str(p) for p, key in before.items() if after.get(p) != key]
    published = wh / "published"
    return {
        "turns_before": before_turns, "seconds": total, "stages": seconds,
        "publish_stages": publish_stages,
        "outcome": report.outcome.value, "problems": list(report.problems),
        "new_turns": report.ingest.turns_new if report.ingest else 0,
        "pairs_scored": report.score.written if report.score else 0,
        "scorer_seconds": report.score.scorer_seconds if report.score else {},
        "old_parquet_files": len(before), "old_parquet_rewritten": len(changed),
        "rewritten_examples": changed[:5],
        "warehouse_mb": (wh / "warehouse.duckdb").stat().st_size / 1e6,
        "published_db_mb": (wh / "published.duckdb").stat().st_size / 1e6,
        "published_parquet_mb": sum(f.stat().st_size for f in published.rglob("*"))
        / 1e6 if published.exists() else 0.0,
    }


def _print(results: dict[str, Any]) -> None:
    small, large = results["small"], results["large"]
    print(f"\n{'stage':<24} {'small s':>9} {'large s':>9} {'ratio':>7}")
    print(f"{'(turns before)':<24} {small['turns_before']:>9,} {large['turns_before']:>9,}")
    for stage in STAGES:
        a, b = small["stages"].get(stage, 0.0), large["stages"].get(stage, 0.0)
        ratio = f"{b / a:>7.1f}" if a > 0 else f"{'-':>7}"
        print(f"{stage:<24} {a:>9.2f} {b:>9.2f} {ratio}")
    for stage in large["publish_stages"]:
        a, b = small["publish_stages"].get(stage, 0.0), large["publish_stages"][stage]
        ratio = f"{b / a:>7.1f}" if a > 0 else f"{'-':>7}"
        print(f"{'  publish: ' + stage:<24} {a:>9.2f} {b:>9.2f} {ratio}")
    other = {k: r["seconds"] - sum(r["stages"].values()) for k, r in (("s", small),
                                                                       ("l", large))}
    print(f"{'(rest)':<24} {other['s']:>9.2f} {other['l']:>9.2f}")
    print(f"{'night, total':<24} {small['seconds']:>9.2f} {large['seconds']:>9.2f} "
          f"{large['seconds'] / small['seconds']:>7.1f}")
    warehouse_part = large["seconds"] - large["stages"].get("ingest: read+assemble", 0.0)
    print(f"night into the large warehouse: {large['seconds']:.1f} s "
          f"({warehouse_part:.1f} s outside read+assemble); target < {TARGET_S:.0f} s: "
          f"{'PASS' if large['seconds'] < TARGET_S else 'FAIL'}")
    for name, r in (("small", small), ("large", large)):
        inside = ", ".join(f"{k} {v:.1f}" for k, v in sorted(
            r["scorer_seconds"].items(), key=lambda kv: -kv[1]))
        print(f"{name}: seconds inside each scorer: {inside}")
        print(f"{name}: {r['new_turns']:,} new turns, {r['pairs_scored']:,} pairs scored, "
              f"outcome {r['outcome']}; old Parquet files {r['old_parquet_files']:,}, "
              f"rewritten or removed {r['old_parquet_rewritten']}; warehouse "
              f"{r['warehouse_mb']:,.0f} MB, published.duckdb {r['published_db_mb']:,.0f} MB, "
              f"published/ {r['published_parquet_mb']:,.0f} MB")


if __name__ == "__main__":
    raise SystemExit(main())
