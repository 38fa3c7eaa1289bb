"""One real judge call per judged scorer, only where a live endpoint is configured."""

from __future__ import annotations

import os

import pytest

from tests.scorers.judge.scripted import make_turn
from turnscore.scorers.base import Status
from turnscore.scorers.judge.config import Budget, JudgeConfig, JudgeSettings
from turnscore.scorers.judged import make_judge_runner

pytestmark = pytest.mark.live_judge

URL = os.environ.get("TURNSCORE_LIVE_JUDGE_BASE_URL")


@pytest.mark.skipif(not URL, reason="set TURNSCORE_LIVE_JUDGE_BASE_URL to run")
@pytest.mark.parametrize("scorer", ["tool_usage", "tractability", "groundedness_judge"])
def test_live_judge_returns_a_verdict(scorer: str) -> None:
    config = JudgeConfig(base_url=URL, model=os.environ.get("TURNSCORE_LIVE_JUDGE_MODEL",
                                                            "gpt-4.1-mini"),
                         api_key_env=os.environ.get("TURNSCORE_LIVE_JUDGE_KEY_ENV",
                                                    "OPENAI_API_KEY"),
                         timeout_s=60, max_retries=2)
    turn = make_turn({
        "request": "What's the weather in Paris?",
        "tools": [{"name": "get_weather", "description": "Weather for a city.",
                   "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                  "required": ["city"]}}],
        "calls": [{"call_id": "a", "name": "get_weather", "arguments": {"city": "Paris"},
                   "result": "18C, sunny"}],
        "final_answer": "It's 18C and sunny in Paris."})
    with make_judge_runner(JudgeSettings(config), Budget(max_calls=3)) as runner:
        [score] = runner.run(scorer, [turn]).scores
    assert score is not None and score.status == Status.SCORED, score
    assert score.value is not None and 0 <= score.value <= 10 and score.explanation
