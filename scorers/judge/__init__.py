"""The judge behind the judged scorers: configuration, client, prompts, parsing, the rules
judge, the engine that runs them over batches, and judge tools.

The judged scorers themselves (and `make_judge_runner`) live in `turnscore.scorers.judged`.
"""

from turnscore.scorers.judge.config import (
    RULES_JUDGE,
    Budget,
    JudgeConfig,
    JudgeSettings,
    load_judge_settings,
)
from turnscore.scorers.judge.engine import (
    BatchResult,
    CachedReply,
    JudgeCache,
    JudgeEngine,
    JudgeSpec,
    MemoryCache,
)
from turnscore.scorers.judge.shared import Stop, StopReason

__all__ = ["RULES_JUDGE", "BatchResult", "Budget", "CachedReply", "JudgeCache", "JudgeConfig",
           "JudgeEngine", "JudgeSettings", "JudgeSpec", "MemoryCache", "Stop", "StopReason",
           "load_judge_settings"]
