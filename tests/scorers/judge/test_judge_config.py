"""The `[judge]` table: inheritance, environment overrides, and errors at configuration time."""

from __future__ import annotations

import pytest

from turnscore.errors import ConfigError
from turnscore.scorers.judge.config import Budget, JudgeConfig, load_judge_settings
from turnscore.scorers.judged import SPECS, make_judge_runner

TABLE = {
    "base_url": "https://judge.example/v1/", "model": "small", "api_key_env": "MY_KEY",
    "concurrency": 8, "requests_per_minute": 500, "tokens_per_minute": 200000, "timeout_s": 60,
    "price_input_per_mtok": 0.4, "price_output_per_mtok": 1.6, "tools": [],
    "tractability": {"model": "big", "tools": ["fetch_url"]},
}


def test_per_scorer_tables_inherit_unset_keys() -> None:
    settings = load_judge_settings(TABLE, env={}, known_scorers=tuple(SPECS))
    default, tract = settings.default, settings.for_scorer("tractability")
    assert default.base_url == "https://judge.example/v1" and default.model == "small"
    assert (tract.model, tract.tools, tract.concurrency, tract.price_input_per_mtok) == (
        "big", ("fetch_url",), 8, 0.4)
    assert settings.for_scorer("tool_usage") == default
    assert default.temperature == 0.0 and default.is_llm and default.judge_id == "small"
    assert default.api_key({"MY_KEY": "k"}) == "k" and default.api_key({}) is None
    assert default.cost(1_000_000, 500_000) == pytest.approx(0.4 + 0.8)


def test_environment_overrides_the_file_for_every_scorer() -> None:
    env = {"TURNSCORE_JUDGE_BASE_URL": "http://127.0.0.1:9/v1", "TURNSCORE_JUDGE_MODEL": "m"}
    settings = load_judge_settings(TABLE, env=env)
    for cfg in (settings.default, settings.for_scorer("tractability")):
        assert (cfg.base_url, cfg.model) == ("http://127.0.0.1:9/v1", "m")
    only_env = load_judge_settings({}, env=env)
    assert only_env.default.is_llm


def test_no_table_means_the_rules_judge() -> None:
    settings = load_judge_settings(None, env={})
    assert not settings.default.is_llm and settings.default.judge_id == "rules-v1"
    assert JudgeConfig(model="m").judge_id == "rules-v1"  # no endpoint: still rules


@pytest.mark.parametrize(("table", "message"), [
    ({"tools": ["fetch_url", "shell"]}, r"unknown judge tool\(s\) shell; known: fetch_url"),
    ({"tractability": {"tools": ["nope"]}}, r"\[judge.tractability\]: unknown judge tool"),
    ({"modle": "x"}, "unknown key 'modle'; known: api_key_env, api_key_header, backoff_max_s"),
    ({"api_key": "sk-secret"}, "environment variable"),
    ({"concurrency": 0}, "concurrency = 0 is not valid"),
    ({"timeout_s": "fast"}, "timeout_s = 'fast' is not valid"),
    ({"structured_output": "yes"}, "structured_output"),
    ({"tool_usgae": {"model": "x"}}, r"\[judge.tool_usgae\]: no judged scorer.*tool_usage"),
])
def test_bad_tables_fail_naming_the_key_and_choices(table: dict[str, object],
                                                    message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_judge_settings(table, env={}, known_scorers=tuple(SPECS))


def test_make_judge_runner_validates_a_raw_table() -> None:
    with pytest.raises(ConfigError, match="unknown judge tool"):
        make_judge_runner({"tools": ["rm_rf"]}, Budget(), env={})
    with make_judge_runner({"tractability": {"model": "x"}}, Budget(), env={}) as runner:
        assert runner.judge_for("tractability") == "rules-v1"  # a model without an endpoint


def test_a_missing_api_key_fails_before_any_turn() -> None:
    table = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "NO_SUCH_KEY"}
    with pytest.raises(ConfigError, match="NO_SUCH_KEY \\(api_key_env\\) is not set"):
        make_judge_runner(table, Budget(), env={})
    with make_judge_runner(table, Budget(), env={"NO_SUCH_KEY": "k"}) as runner:
        assert runner.judge_for("tool_usage") == "m"
