"""`turnscore demo` as a library call: generate the sample, run the nightly job, read it back.

`run_demo` writes the demo's traces and labels into `<workdir>/exports`, a `turnscore.toml`
into `<workdir>` that points at them (warehouse `<workdir>/warehouse`, report
`<workdir>/warehouse/report.html`), runs `run_nightly` on that config, then reads the
per-policy numbers from the warehouse's views with the SQL below. Nothing is recomputed
in Python: the rates are the `grounding_and_correctness` view's (weighted by scored turns
over its days), the means come from `turns_scored`, and the quadrant and its suggestion
from `usage_vs_tractability`'s quadrant definitions.

The warehouse of an earlier demo in the same folder is removed first (only when the
folder carries the demo's marker file), so the tables always describe one demo; a folder
without the marker that already has a `turnscore.toml`, `warehouse` or `exports` is refused.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from turnscore.demo.generate import generate_demo
from turnscore.demo.questions import CLASSIC_IDS, QUESTIONS
from turnscore.errors import ConfigError
from turnscore.warehouse.config import load_config
from turnscore.warehouse.nightly import NightlyProgress, NightlyReport, run_nightly
from turnscore.warehouse.query import open_for_reading

__all__ = ["CLASSIC_POLICIES", "ClassicRow", "DemoReport", "PolicyMetrics", "run_demo"]

log = logging.getLogger(__name__)

CONFIG_FILE = "turnscore.toml"
EXPORTS_DIR = "exports"
WAREHOUSE_DIR = "warehouse"
REPORT_FILE = "report.html"
MARKER = ".turnscore-demo"
CLASSIC_POLICIES = ("good", "wrong_tool", "hallucinating")

# Per policy: the four rates from `grounding_and_correctness` (one row per agent and day,
# so each rate is re-weighted by the turns it was computed over), the two judged means
# from `turns_scored`, and the quadrant of the two means by `usage_vs_tractability`'s
# own definitions (high: 5 or more).
POLICY_METRICS = """
WITH rates AS (
    SELECT
        agent,
        sum(call_accuracy_rate * call_accuracy_scored) / nullif(sum(call_accuracy_scored), 0)
            AS tool_call_accuracy,
        sum(hallucination_rate * groundedness_scored) / nullif(sum(groundedness_scored), 0)
            AS hallucination_rate,
        sum(canary_pass_rate * canary_scored) / nullif(sum(canary_scored), 0)
            AS canary_pass_rate,
        sum(correctness_rate * correctness_scored) / nullif(sum(correctness_scored), 0)
            AS answer_correctness
    FROM grounding_and_correctness
    GROUP BY agent
),
means AS (
    SELECT agent, count(*) AS turns, avg(tool_usage) AS mean_tool_usage,
           avg(tractability) AS mean_tractability
    FROM turns_scored
    GROUP BY agent
),
quadrants AS (
    SELECT DISTINCT quadrant, usage_high, tractability_high, suggests
    FROM usage_vs_tractability
)
SELECT m.agent, m.turns, r.tool_call_accuracy, r.hallucination_rate, r.canary_pass_rate,
       r.answer_correctness, m.mean_tool_usage, m.mean_tractability, q.quadrant, q.suggests
FROM means AS m
LEFT JOIN rates AS r ON r.agent IS NOT DISTINCT FROM m.agent
LEFT JOIN quadrants AS q
    ON q.usage_high = (m.mean_tool_usage >= 5)
   AND q.tractability_high = (m.mean_tractability >= 5)
ORDER BY m.agent
"""

# The classic example: tool-call accuracy and hallucination rate on five plain questions.
CLASSIC_METRICS = """
SELECT
    agent,
    count(*) AS turns,
    avg(tool_call_accuracy) AS tool_call_accuracy,
    avg(CASE WHEN groundedness = 0 THEN 1.0 ELSE 0.0 END)
        FILTER (WHERE groundedness IS NOT NULL) AS hallucination_rate
FROM turns_scored
WHERE request IN (SELECT unnest($questions::VARCHAR[]))
  AND agent IN (SELECT unnest($policies::VARCHAR[]))
GROUP BY agent
"""
DAY_RANGE = "SELECT min(day), max(day) FROM turns_scored"


@dataclass(frozen=True, slots=True)
class PolicyMetrics:
    policy: str
    turns: int
    tool_call_accuracy: float | None
    """Share of turns (with expected tools) that called the expected tools."""
    hallucination_rate: float | None
    """Share of groundedness-scored turns with an unsupported specific (value 0)."""
    canary_pass_rate: float | None
    answer_correctness: float | None
    mean_tool_usage: float | None
    """0-10; from the rules judge unless an LLM judge is configured."""
    mean_tractability: float | None
    quadrant: str | None
    suggests: str | None


@dataclass(frozen=True, slots=True)
class ClassicRow:
    policy: str
    turns: int
    tool_call_accuracy: float | None
    hallucination_rate: float | None


@dataclass(frozen=True, slots=True)
class DemoReport:
    workdir: Path
    config: Path
    warehouse: Path
    report: Path
    nightly: NightlyReport
    policies: tuple[PolicyMetrics, ...]
    classic: tuple[ClassicRow, ...]
    """In `CLASSIC_POLICIES` order."""
    first_day: date | None
    last_day: date | None
    """The UTC days the demo's turns span."""

    def to_json(self) -> dict[str, object]:
        return {
            "workdir": str(self.workdir), "config": str(self.config),
            "warehouse": str(self.warehouse), "report": str(self.report),
            "nightly": self.nightly.to_json(),
            "policies": [_row_json(p) for p in self.policies],
            "classic": [_row_json(c) for c in self.classic],
            "first_day": self.first_day.isoformat() if self.first_day else None,
            "last_day": self.last_day.isoformat() if self.last_day else None,
        }


def _row_json(row: PolicyMetrics | ClassicRow) -> dict[str, object]:
    return {name: getattr(row, name) for name in row.__slots__}


def classic_questions() -> tuple[str, ...]:
    by_id = {q.id: q.input for q in QUESTIONS}
    return tuple(by_id[i] for i in CLASSIC_IDS)


def run_demo(workdir: Path, *, seed: int = 7, days: int = 7, today: date | None = None,
             progress: NightlyProgress | None = None) -> DemoReport:
    """Generate the demo into `workdir`, run the nightly job on it, read the key numbers."""
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    warehouse = workdir / WAREHOUSE_DIR
    if not (workdir / MARKER).exists():
        # The demo replaces these: never someone's own config or warehouse.
        taken = [n for n in (CONFIG_FILE, WAREHOUSE_DIR, EXPORTS_DIR) if (workdir / n).exists()]
        if taken:
            raise ConfigError(f"{workdir} already has {', '.join(taken)} and is not a demo "
                              "folder; give the demo a new or empty folder (--dir)")
    elif warehouse.exists():
        shutil.rmtree(warehouse)
    (workdir / MARKER).write_text("written by `turnscore demo`; the folder may be replaced\n")
    files = generate_demo(workdir / EXPORTS_DIR, seed=seed, days=days, today=today)
    config_path = _write_config(workdir, files.traces, files.labels)
    # The demo's own folder only: TURNSCORE_WAREHOUSE must not point it elsewhere.
    config = load_config(config_path, env={})
    nightly = run_nightly(config, progress=progress)
    if nightly.failed_stage is not None:
        log.error("demo nightly failed at %s: %s", nightly.failed_stage, nightly.problems)
    policies, classic, (first, last) = _read_metrics(warehouse)
    return DemoReport(workdir, config_path, warehouse, config.report or warehouse / REPORT_FILE,
                      nightly, policies, classic, first, last)


def _write_config(workdir: Path, traces: list[Path], labels: Path) -> Path:
    def rel(p: Path) -> str:
        # JSON string syntax is valid TOML basic-string syntax for these plain paths.
        return json.dumps(str(p.resolve().relative_to(workdir)))

    text = "\n".join([
        "# Written by `turnscore demo`: the bundled sample's nightly configuration.",
        f"warehouse = {json.dumps(WAREHOUSE_DIR)}",
        f"sources = [{', '.join(rel(p) for p in traces)}]",
        f"labels = [{rel(labels)}]",
        f"report = {json.dumps(f'{WAREHOUSE_DIR}/{REPORT_FILE}')}",
        "",
    ])
    path = workdir / CONFIG_FILE
    path.write_text(text)
    return path


def _read_metrics(warehouse: Path) -> tuple[tuple[PolicyMetrics, ...], tuple[ClassicRow, ...],
                                            tuple[date | None, date | None]]:
    con, _, _ = open_for_reading(warehouse)
    try:
        first, last = con.execute(DAY_RANGE).fetchone() or (None, None)
        policies = tuple(PolicyMetrics(*row) for row in con.execute(POLICY_METRICS).fetchall())
        rows = con.execute(CLASSIC_METRICS, {"questions": list(classic_questions()),
                                             "policies": list(CLASSIC_POLICIES)}).fetchall()
    finally:
        con.close()
    by_policy = {row[0]: ClassicRow(*row) for row in rows}
    classic = tuple(by_policy.get(p, ClassicRow(p, 0, None, None)) for p in CLASSIC_POLICIES)
    return policies, classic, (first, last)
