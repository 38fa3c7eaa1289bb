"""Fixtures for the judge tests: the scripted judge server and a fast judge config."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.scorers.judge.scripted import ScriptedJudge
from turnscore.scorers.judge.config import JudgeConfig


@pytest.fixture
def judge_server() -> Iterator[ScriptedJudge]:
    with ScriptedJudge() as server:
        yield server


@pytest.fixture
def fast_config(judge_server: ScriptedJudge) -> JudgeConfig:
    """Short timeouts and backoff so failure tests stay fast; one request at a time."""
    return JudgeConfig(base_url=judge_server.url, model="scripted-judge",
                       api_key_env="TEST_JUDGE_KEY", timeout_s=0.5, concurrency=1,
                       backoff_s=0.01, backoff_max_s=0.02, max_retries=2,
                       price_input_per_mtok=1.0, price_output_per_mtok=4.0,
                       max_consecutive_failures=3)
