"""Choosing the judge for a score run: the offline rules judge or a configured LLM judge.

`score` and `nightly` both go through `llm_judge_for`, so "is an LLM judge configured?" and
"what does `--judge llm` without one say?" have one answer.
"""

from __future__ import annotations

from collections.abc import Mapping

from turnscore.errors import ConfigError
from turnscore.scorers.judge.config import Budget, load_judge_settings
from turnscore.scorers.judge.engine import JudgeEngine
from turnscore.scorers.judged import SPECS, make_judge_runner
from turnscore.warehouse.config import JudgeMode as JudgeMode
from turnscore.warehouse.judge_batch import BatchJudge, batched
from turnscore.warehouse.judge_cache import DuckDBJudgeCache
from turnscore.warehouse.score_run import JudgeRunner


class LlmJudge:
    """A judge factory for `score_turns`: builds the LLM judge runner over the warehouse's
    judge cache once the run has opened the database (with `BatchJudge` in front when some
    judge is batched). Close it when the run is done."""

    def __init__(self, table: Mapping[str, object], budget: Budget) -> None:
        self.table, self.budget = dict(table), budget
        self.engine: JudgeEngine | None = None
        self.batches: BatchJudge | None = None

    def __call__(self, cache: DuckDBJudgeCache) -> JudgeRunner:
        engine = make_judge_runner(self.table, self.budget, cache)
        self.engine = engine
        if not batched(engine.settings) or cache.run_id is None:
            return engine.run
        self.batches = BatchJudge(engine, cache, cache.con, cache.run_id)
        return self.batches.run

    def close(self) -> None:
        if self.batches is not None:
            self.batches.close()
        if self.engine is not None:
            self.engine.close()


def llm_judge_for(judge_table: Mapping[str, object], mode: JudgeMode,
                  budget: Budget) -> LlmJudge | None:
    """The LLM judge to use, or None for the rules judge.

    `auto` uses an LLM judge when `[judge]` (or TURNSCORE_JUDGE_BASE_URL) configures one;
    `llm` insists on it; `rules` never uses one. Raises `ConfigError` naming the problem.
    """
    if mode == "rules":
        return None
    if mode not in ("auto", "llm"):
        raise ConfigError(f"judge mode {mode!r} is not one of auto, rules, llm")
    settings = load_judge_settings(dict(judge_table), known_scorers=tuple(SPECS))
    configured = settings.default.is_llm or any(settings.for_scorer(n).is_llm for n in SPECS)
    if not configured:
        if mode == "llm":
            raise ConfigError("--judge llm needs [judge] base_url and model in turnscore.toml "
                              "(or TURNSCORE_JUDGE_BASE_URL / TURNSCORE_JUDGE_MODEL); see the "
                              "README's Judges section")
        return None
    return LlmJudge(judge_table, budget)
