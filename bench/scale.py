"""Scale benchmark: one export through the local engine and through Ray on 1 and 2 nodes.

    python bench/scale.py [--spans 20000] [--spans-per-file 2000] [--out bench/out]

The export is `bench/ingest.py`'s (real OTel SDK spans, OTLP/JSON, sessions straddling
files). It is ingested and then scored (judge-free scorers and the rules judge) three
ways, each into a fresh warehouse:
- the local engine (`run_ingest`, `score_turns`), the baseline;
- `--engine ray` against a Ray cluster of one node (a head started with `ray start`),
  input and data root on a moto S3 server on 127.0.0.1;
- the same with a second node (`ray start --address`), one CPU each.
Printed per run: seconds, spans/s, turns/s, scored turns/s; the Ray ingest's stage times
and shuffle volume; the ratios to the local engine and the 2-node/1-node scaling ratio.
Then a model of 10 and 100 nodes from the measured stage costs (see `model`).

Judged scoring (`--judged-turns`, 0 to skip): turns scored by `tractability` through an
LLM judge, the scripted OpenAI-compatible server of tests/scorers/judge on 127.0.0.1
answering every request after a fixed latency, with `[judge] concurrency` C: local, Ray
on 1 node and on 2. Printed: requests/s while judging (first to last request at the
server), the most requests in flight the server saw, and the bound C / latency. The bound
is the endpoint's, shared by every worker, so more nodes do not raise it.

These are benchmarks, not timed tests: machines are shared and noisy, so read the ratios
of one run. On a machine with fewer cores than nodes + driver + S3 server, the nodes
share cores, and the 2-node figure measures scheduling overhead more than scaling.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.ray's cluster and S3
sys.path.insert(0, str(Path(__file__).parent))

from ingest import Generator, generate  # bench/ingest.py
from tests.ray.cluster import ray_cluster
from tests.ray.parity import upload
from tests.ray.s3server import make_bucket, s3_server
from tests.scorers.judge.scripted import Reply, ScriptedJudge, accepts_schema
from tests.warehouse.turn_factory import load_turns, make_turn
from turnscore.scorers.judge.config import Budget
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.ingest_run import run_ingest
from turnscore.warehouse.judging import LlmJudge
from turnscore.warehouse.ray_engine import RayIngest
from turnscore.warehouse.ray_run import run_ray_ingest
from turnscore.warehouse.ray_score import run_ray_score
from turnscore.warehouse.score_run import score_turns

ROOT = Path(__file__).resolve().parents[1]
PARALLEL_STAGES = ("read", "trace pass", "assemble")
"""Stages whose work is spread over the nodes; the rest run on the driver."""


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def run_local(files: Path, out: Path) -> dict[str, Any]:
    wh = out / "wh-local"
    ingest, ingest_s = _timed(lambda: run_ingest([files], wh))
    score, score_s = _timed(lambda: score_turns(wh, publish_snapshot=False))
    return {"engine": "local", "ingest_s": ingest_s, "score_s": score_s,
            "spans": ingest.spans, "turns": ingest.turns_new,
            "scores": score.written}


def run_ray(nodes: int, bucket: str, out: Path, prefix: str = "in") -> dict[str, Any]:
    wh = out / f"wh-ray{nodes}-{prefix}"
    data_root = f"s3://{bucket}/data-{nodes}-{prefix}"
    jobs: list[RayIngest] = []
    with ray_cluster(workers=nodes - 1) as cluster:
        os.environ["RAY_AUTH_MODE"] = "disabled"
        ingest, ingest_s = _timed(lambda: run_ray_ingest(
            [f"s3://{bucket}/{prefix}/"], wh, data_root, ray_address=cluster.address,
            on_job=jobs.append))
        score, score_s = _timed(lambda: run_ray_score(
            wh, data_root, ray_address=cluster.address, publish_snapshot=False))
    job = jobs[0]
    return {"engine": f"ray x{nodes}", "ingest_s": ingest_s, "score_s": score_s,
            "spans": ingest.spans, "turns": ingest.turns_new, "scores": score.written,
            "stages": dict(job.seconds), "shuffled_bytes": job.shuffled_bytes,
            "partitions": job.partitions, "traces": len(job.traces)}


def model(one: dict[str, Any], nodes: int, spans: int) -> dict[str, float]:
    """Ingest seconds for `spans` on `nodes` nodes, from the 1-node run's stage costs.

    T(N) = serial * s + parallel * s / N + shuffle(s, N), per span s, where
    - parallel: the stages spread over the nodes (read, trace pass, assemble);
    - serial: the rest, on the driver: connecting, the partition plan (one union-find
      over every trace's keys), the commit, and the DuckDB load of the turns (one
      machine, one file);
    - shuffle: every record crosses the network twice (by trace bucket, by partition);
      at N nodes a share (N-1)/N leaves its node, over N links of 1 GB/s.
    Both per-span costs include the run's fixed start-up costs (Ray's task start-up,
    connecting), so at a small `--spans` they are upper bounds: the model is pessimistic
    about speed, and the driver's share is what stops the scaling.
    """
    parallel = sum(one["stages"].get(k, 0.0) for k in PARALLEL_STAGES) / one["spans"]
    serial = (one["ingest_s"] / one["spans"]) - parallel
    per_span_bytes = one["shuffled_bytes"] / one["spans"]
    shuffle = per_span_bytes * spans * (nodes - 1) / nodes / (1e9 * nodes)
    total = serial * spans + parallel * spans / nodes + shuffle
    return {"seconds": total, "serial_share": serial * spans / total,
            "parallel_us_per_span": parallel * 1e6, "serial_us_per_span": serial * 1e6,
            "shuffle_s": shuffle}


def judged(turns: int, latency_s: float, concurrency: int, out: Path) -> list[dict[str, Any]]:
    """Requests/s of judged scoring, local and on Ray with 1 and 2 nodes (module doc)."""
    results = []
    for engine, nodes in (("local", 0), ("ray x1", 1), ("ray x2", 2)):
        wh = out / f"wh-judged-{nodes}"
        con = open_warehouse(wh)
        load_turns(con, [make_turn(i) for i in range(turns)])
        con.close()
        with ScriptedJudge() as server:
            seen: list[float] = []

            def reply(body: dict[str, Any], seen: list[float] = seen) -> Reply:
                seen.append(time.monotonic())
                return Reply(body=accepts_schema(body).body, delay_s=latency_s)

            server.default = reply
            judge = LlmJudge({"base_url": server.url, "model": "scripted-judge",
                              "concurrency": concurrency}, Budget())
            start = time.perf_counter()
            if nodes == 0:
                report = score_turns(wh, scorers=["tractability"], judge_factory=judge,
                                     publish_snapshot=False)
                judge.close()
            else:
                with ray_cluster(workers=nodes - 1) as cluster:
                    os.environ["RAY_AUTH_MODE"] = "disabled"
                    start = time.perf_counter()  # the cluster's start is not the run's
                    report = run_ray_score(wh, str(wh / "data"), scorers=["tractability"],
                                           ray_address=cluster.address, llm_judge=judge,
                                           publish_snapshot=False)
            seconds = time.perf_counter() - start
            span = (seen[-1] - seen[0]) if len(seen) > 1 else 0.0
            results.append({"engine": engine, "requests": len(server.requests),
                            "judging_s": span + latency_s, "run_s": seconds,
                            "max_in_flight": server.max_in_flight,
                            "written": report.written})
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=20_000)
    parser.add_argument("--spans-per-file", type=int, default=2_000)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "scale")
    parser.add_argument("--judged-turns", type=int, default=300)
    parser.add_argument("--judge-latency", type=float, default=0.1)
    parser.add_argument("--judge-concurrency", type=int, default=4)
    parser.add_argument("--only-judged", action="store_true",
                        help="Skip the ingest and judge-free runs.")
    args = parser.parse_args(argv)
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    if args.judged_turns:
        bound = args.judge_concurrency / args.judge_latency
        rows = judged(args.judged_turns, args.judge_latency, args.judge_concurrency, args.out)
        print(f"judged scoring: {args.judged_turns} turns (tractability), judge latency "
              f"{args.judge_latency:g} s, concurrency {args.judge_concurrency}: bound "
              f"{bound:.0f} requests/s")
        print(f"{'engine':8} {'requests':>8} {'judging s':>9} {'req/s':>6} {'of bound':>8} "
              f"{'in flight':>9} {'run s':>6}")
        for r in rows:
            rate = r["requests"] / r["judging_s"]
            print(f"{r['engine']:8} {r['requests']:8} {r['judging_s']:9.2f} {rate:6.1f} "
                  f"{rate / bound:8.0%} {r['max_in_flight']:9} {r['run_s']:6.1f}")
        (args.out / "judged.json").write_text(json.dumps(rows, indent=2))
        if args.only_judged:
            return 0
    files = generate(args.out / "export", args.spans, args.spans_per_file, Generator(),
                     formats=("json",))["json"]
    print(f"export: {args.spans:,} spans in {len(files)} OTLP/JSON files; "
          f"{os.cpu_count()} cores on this machine")
    results = [run_local(args.out / "export" / "json", args.out)]
    with s3_server() as endpoint:
        make_bucket(endpoint, "scale")
        upload(args.out / "export" / "json", endpoint, "scale", "in")
        results += [run_ray(1, "scale", args.out), run_ray(2, "scale", args.out)]
    base = results[0]
    print(f"\n{'engine':10} {'ingest s':>9} {'spans/s':>9} {'turns/s':>8} {'score s':>8} "
          f"{'scored/s':>9} {'x local':>8}")
    for r in results:
        r["spans_per_s"] = r["spans"] / r["ingest_s"]
        r["turns_per_s"] = r["turns"] / r["ingest_s"]
        r["scored_per_s"] = r["scores"] / r["score_s"] if r["score_s"] else 0.0
        print(f"{r['engine']:10} {r['ingest_s']:9.1f} {r['spans_per_s']:9,.0f} "
              f"{r['turns_per_s']:8,.0f} {r['score_s']:8.1f} {r['scored_per_s']:9,.0f} "
              f"{r['spans_per_s'] / base['spans_per_s']:8.2f}")
    one, two = results[1], results[2]
    print(f"\nscaling 2 nodes / 1 node: ingest {two['spans_per_s'] / one['spans_per_s']:.2f}x, "
          f"score {two['scored_per_s'] / max(one['scored_per_s'], 1e-9):.2f}x")
    for r in (one, two):
        print(f"{r['engine']} stages (s): {r['stages']}; {r['shuffled_bytes'] / 1e6:.1f} MB "
              f"shuffled ({r['shuffled_bytes'] / r['spans']:.0f} B/span), "
              f"{r['partitions']} partitions, {r['traces']:,} traces")
    night = 100_000_000  # ~ 100 GB of OTLP/JSON at ~1 KB per span
    first = model(one, 1, night)
    print(f"\nmodel from the 1-node run's stages: "
          f"{first['parallel_us_per_span']:.0f} us/span spread over nodes, "
          f"{first['serial_us_per_span']:.0f} us/span on the driver; "
          f"{night:,} spans a night:")
    for nodes in (1, 2, 10, 100):
        m = model(one, nodes, night)
        print(f"  {nodes:3} nodes: ~{m['seconds'] / 3600:7.2f} h ingest, "
              f"driver share {m['serial_share']:.0%}, shuffle {m['shuffle_s']:,.0f} s")
    (args.out / "results.json").write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
