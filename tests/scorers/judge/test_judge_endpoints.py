"""What real endpoints do, played by the scripted server: structured output accepted,
rejected, JSON mode only or ignored; replies that drop fields; 429s; Azure's two URL forms;
a reply trickled byte by byte; an oversized reply."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.scorers.judge.scripted import (
    ENDPOINTS,
    KEY_ENV,
    Reply,
    ScriptedJudge,
    chat,
)
from tests.scorers.judge.test_judge_engine import runner, weather_turn
from tests.scorers.judge.test_judge_warehouse import _score, _warehouse
from turnscore.errors import ConfigError
from turnscore.scorers.base import Status
from turnscore.scorers.judge.client import ChatClient, JudgeRequestError
from turnscore.scorers.judge.config import Budget, JudgeConfig, load_judge_settings
from turnscore.scorers.judge.engine import MemoryCache
from turnscore.warehouse.db import open_warehouse
from turnscore.warehouse.publish import refresh_views


def _formats(server: ScriptedJudge) -> list[str]:
    return [r.body.get("response_format", {}).get("type", "prompt") for r in server.requests]


@pytest.mark.parametrize(("endpoint", "first_turn", "later"), [
    ("accepts_schema", ["json_schema"], "json_schema"),
    ("rejects_schema", ["json_schema", "json_object", "prompt"], "prompt"),
    ("json_object_only", ["json_schema", "json_object"], "json_object"),
    ("ignores_format", ["json_schema"], "prompt"),
])
def test_auto_structured_output_settles_on_what_the_endpoint_takes(
        judge_server: ScriptedJudge, fast_config: JudgeConfig, endpoint: str,
        first_turn: list[str], later: str) -> None:
    judge_server.default = ENDPOINTS[endpoint]
    with runner(fast_config) as r:
        first = r.run("tool_usage", [weather_turn(0)])
        second = r.run("tractability", [weather_turn(1), weather_turn(2)])
    scores = [*first.scores, *second.scores]
    assert all(s is not None and s.status == Status.SCORED and s.value == 8.0 for s in scores)
    assert all(s is not None and "missing" not in s.details for s in scores)
    assert _formats(judge_server) == [*first_turn, later, later]
    if endpoint == "accepts_schema":
        assert second.notes == ()
        fmt = judge_server.requests[0].body["response_format"]
        assert fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["name"] == "tool_usage_verdict"
    else:  # said once, and kept for the rest of the run
        assert len(second.notes) == len(first_turn) - (0 if endpoint == "ignores_format" else 1)
        assert all("for the rest of the run" in n and "scripted-judge" in n
                   for n in second.notes)
    if endpoint == "ignores_format":  # the note says what was seen
        assert "prose before its JSON ('Here is my verdict.')" in second.notes[0]


def test_a_cut_off_or_empty_reply_does_not_drop_structured_output(
        judge_server: ScriptedJudge, fast_config: JudgeConfig) -> None:
    judge_server.script(Reply(body=chat('{"assessment": "The agent called get_wea')),
                        Reply(body=chat("")))
    with runner(fast_config) as r:
        result = r.run("tool_usage", [weather_turn(i) for i in range(3)])
    bad1, bad2, good = result.scores
    assert bad1 is not None and bad1.status == Status.ERROR
    assert bad2 is not None and bad2.status == Status.ERROR
    assert good is not None and good.status == Status.SCORED
    assert _formats(judge_server) == ["json_schema"] * 3 and result.notes == ()


@pytest.mark.parametrize("prose", ["I cannot do that.", "I'm sorry, but I can't help with "
                                   "grading this conversation {as asked}."])
def test_a_reply_of_prose_alone_does_not_drop_structured_output(
        judge_server: ScriptedJudge, fast_config: JudgeConfig, prose: str) -> None:
    # A refusal has no JSON at all: it says nothing about whether the format was applied.
    judge_server.script(Reply(body=chat(prose)))
    with runner(fast_config) as r:
        result = r.run("tool_usage", [weather_turn(i) for i in range(3)])
    refused, *rest = result.scores
    assert refused is not None and refused.status == Status.ERROR
    assert all(s is not None and s.status == Status.SCORED for s in rest)
    assert _formats(judge_server) == ["json_schema"] * 3 and result.notes == ()


@pytest.mark.parametrize(("structured", "sent"), [(True, "json_schema"), (False, "prompt")])
def test_structured_output_true_or_false_forces_one_form(
        judge_server: ScriptedJudge, fast_config: JudgeConfig, structured: bool,
        sent: str) -> None:
    judge_server.default = ENDPOINTS["rejects_schema"]
    with runner(replace(fast_config, structured_output=structured)) as r:
        result = r.run("tool_usage", [weather_turn(0), weather_turn(1)])
    assert _formats(judge_server) == [sent, sent]
    status = Status.ERROR if structured else Status.SCORED
    assert all(s is not None and s.status == status for s in result.scores)
    assert result.notes == ()


def test_the_fallback_is_said_once_in_the_score_run_summary(
        judge_server: ScriptedJudge, fast_config: JudgeConfig, tmp_path: Path) -> None:
    judge_server.default = ENDPOINTS["rejects_schema"]
    report = _score(_warehouse(tmp_path), fast_config, Budget())
    assert report.errors == 0 and report.written == 8
    assert len(report.judge_notes) == 2  # json_schema rejected, then json_object rejected
    assert "rejected response_format json_schema (HTTP 400)" in report.judge_notes[0]
    assert "using the prompt alone" in report.judge_notes[1]
    assert json.loads(json.dumps(report.to_json()))["judge_notes"] == list(report.judge_notes)


MINIMAL = json.dumps({"assessment": "Reasonable use of the weather tool.", "score": 7})


@pytest.mark.parametrize("scorer", ["tool_usage", "tractability", "groundedness_judge"])
def test_assessment_and_score_alone_are_a_score(judge_server: ScriptedJudge,
                                                fast_config: JudgeConfig, scorer: str) -> None:
    # What many models send when the prompt's extra fields are not enforced.
    judge_server.default = lambda body: Reply(body=chat(MINIMAL))
    cache = MemoryCache()
    with runner(fast_config, cache=cache) as r:
        [score] = r.run(scorer, [weather_turn()]).scores
        [again] = r.run(scorer, [weather_turn()]).scores  # from the cache
    missing = {"tool_usage": ["calls", "call_needed"],
               "tractability": ["request_kind", "missing_capability", "strain_signs"],
               "groundedness_judge": ["claims"]}[scorer]
    for s in (score, again):
        assert s is not None and (s.status, s.value, s.label) == (Status.SCORED, 7.0, "7-8")
        assert s.explanation == "Reasonable use of the weather tool."
        assert s.details == {"missing": missing}
    assert len(judge_server.requests) == 1 and len(cache.entries) == 1


def test_malformed_fields_are_recorded_as_missing_and_valid_ones_kept(
        judge_server: ScriptedJudge, fast_config: JudgeConfig) -> None:
    reply = {"assessment": "Exact arithmetic by hand.", "request_kind": "arithmetic",
             "missing_capability": 42, "strain_signs": "rows counted one by one", "score": 4}
    judge_server.default = lambda body: Reply(body=chat(json.dumps(reply)))
    with runner(fast_config) as r:
        [score] = r.run("tractability", [weather_turn()]).scores
    assert score is not None and score.status == Status.SCORED and score.value == 4.0
    assert score.details == {"request_kind": "arithmetic",
                             "missing": ["missing_capability", "strain_signs"]}


def test_per_call_verdicts_are_kept_when_valid(judge_server: ScriptedJudge,
                                               fast_config: JudgeConfig) -> None:
    calls = [{"call_id": "c1", "tool": "get_weather", "choice_ok": True,
              "arguments_ok": False, "problem": "no date"}]
    judge_server.script(
        Reply(body=chat(json.dumps({"assessment": "a", "calls": calls, "score": 6}))),
        Reply(body=chat(json.dumps({"assessment": "b", "calls": [{"tool": 3}], "score": 5,
                                    "call_needed": "maybe"}))))
    with runner(fast_config) as r:
        good, bad = r.run("tool_usage", [weather_turn(0), weather_turn(1)]).scores
    assert good is not None and good.details == {"calls": calls, "missing": ["call_needed"]}
    assert bad is not None and bad.status == Status.SCORED and bad.value == 5.0
    assert bad.details == {"missing": ["calls", "call_needed"]}


def test_an_unusable_reply_is_one_error_row_asked_once_per_run(
        judge_server: ScriptedJudge, fast_config: JudgeConfig) -> None:
    judge_server.default = lambda body: Reply(body=chat('{"verdict": "fine", "rating": 9}'))
    cache = MemoryCache()
    with runner(fast_config, cache=cache) as r:
        [score] = r.run("tool_usage", [weather_turn()]).scores
    assert score is not None and score.status == Status.ERROR
    assert score.error is not None and '{"verdict": "fine"' in score.error  # the excerpt
    assert len(judge_server.requests) == 1 and cache.entries == {}  # not retried in this run
    with runner(fast_config, cache=cache) as r:  # the next run asks again
        r.run("tool_usage", [weather_turn()])
    assert len(judge_server.requests) == 2


def test_429s_in_the_mix_still_get_everything_scored(
        judge_server: ScriptedJudge, fast_config: JudgeConfig) -> None:
    judge_server.script(Reply(429, {"error": {"message": "Rate limit reached"}},
                              {"Retry-After": "0.05"}),
                        Reply(429, {"error": {"message": "Rate limit reached"}}))
    judge_server.default = lambda body: Reply(body=chat(MINIMAL))
    with runner(replace(fast_config, concurrency=2)) as r:
        result = r.run("tool_usage", [weather_turn(i) for i in range(4)])
    assert all(s is not None and s.status == Status.SCORED and s.value == 7.0
               for s in result.scores)
    assert sum(s.usage.attempts for s in result.scores if s is not None) == 6
    assert result.stop is None and len(judge_server.requests) == 6


@pytest.mark.parametrize("body", [
    "<html><body>502 Bad Gateway</body></html>", "", "{\"choices\": []}", "null"])
def test_garbage_completions_are_error_rows(judge_server: ScriptedJudge,
                                            fast_config: JudgeConfig, body: str) -> None:
    judge_server.script(Reply(body=body))
    with runner(fast_config) as r:
        bad, good = r.run("tool_usage", [weather_turn(0), weather_turn(1)]).scores
    assert bad is not None and bad.status == Status.ERROR and "not a chat completion" in (
        bad.error or "")
    assert good is not None and good.status == Status.SCORED


def test_azure_deployment_url_with_api_version_and_api_key_header(
        judge_server: ScriptedJudge) -> None:
    settings = load_judge_settings({
        "base_url": judge_server.url + "/openai/deployments/gpt-4o-judge",
        "model": "gpt-4o", "api_key_env": "AZURE_KEY", "api_key_header": "api-key",
        "query_params": {"api-version": "2024-10-21"},
        "headers": {"x-ms-client-request-id": "turnscore"}}, env={})
    config = replace(settings.default, timeout_s=2.0)
    reply = _complete(config, {"AZURE_KEY": "az-secret"})
    assert reply.content is not None
    [req] = judge_server.requests
    assert req.path == ("/v1/openai/deployments/gpt-4o-judge/chat/completions"
                        "?api-version=2024-10-21")
    assert req.headers["api-key"] == "az-secret" and "Authorization" not in req.headers
    assert req.headers["x-ms-client-request-id"] == "turnscore"


def test_azure_v1_url_with_bearer_key(judge_server: ScriptedJudge) -> None:
    config = JudgeConfig(base_url=judge_server.url + "/openai/v1", model="gpt-4o-deployment",
                         api_key_env="AZURE_KEY", timeout_s=2.0)
    _complete(config, {"AZURE_KEY": "az-secret"})
    [req] = judge_server.requests
    assert req.path == "/v1/openai/v1/chat/completions"
    assert req.headers["Authorization"] == "Bearer az-secret"
    assert req.body["model"] == "gpt-4o-deployment"


def test_headers_and_query_params_come_from_tables_per_scorer() -> None:
    settings = load_judge_settings({
        "base_url": "https://x.test/v1", "model": "m", "headers": {"X-Team": "evals"},
        "tractability": {"query_params": {"api-version": "preview"}}}, env={},
        known_scorers=("tool_usage", "tractability"))
    assert settings.default.headers == (("X-Team", "evals"),)
    assert settings.for_scorer("tractability").query_params == (("api-version", "preview"),)
    assert settings.for_scorer("tractability").headers == (("X-Team", "evals"),)
    assert settings.default.structured_output == "auto"
    for bad, message in (({"headers": {"api-key": "sk-in-a-file"}}, "must not carry the key"),
                         ({"headers": {"X": 1}}, "table of strings"),
                         ({"structured_output": "sometimes"}, "structured_output")):
        with pytest.raises(ConfigError, match=message):
            load_judge_settings(bad, env={})


def _complete(config: JudgeConfig, env: dict[str, str]) -> Any:
    async def go() -> Any:
        async with ChatClient(config, env=env) as client:
            return await client.complete([{"role": "user", "content": "hi"}])
    return asyncio.run(go())


def test_timeout_is_one_deadline_for_a_trickled_reply(judge_server: ScriptedJudge,
                                                      fast_config: JudgeConfig) -> None:
    # Each byte comes well within the timeout; the whole reply would take over 30 s.
    judge_server.script(Reply(body=chat(MINIMAL), trickle_s=0.1))
    config = replace(fast_config, timeout_s=1.0, max_retries=0)
    started = time.monotonic()
    with pytest.raises(JudgeRequestError, match="timed out after 1 s"):
        _complete(config, KEY_ENV)
    assert time.monotonic() - started < 2.5


def test_a_reply_over_the_size_cap_fails_without_being_read(
        judge_server: ScriptedJudge, fast_config: JudgeConfig) -> None:
    judge_server.default = lambda body: Reply(body=chat("x" * 50_000))
    config = replace(fast_config, max_reply_bytes=10_000, max_retries=0)
    with pytest.raises(JudgeRequestError, match="larger than max_reply_bytes"):
        _complete(config, KEY_ENV)
    with runner(config) as r:
        [score] = r.run("tool_usage", [weather_turn()]).scores
    assert score is not None and score.status == Status.ERROR


def test_a_reply_without_content_length_is_capped_while_streaming(
        judge_server: ScriptedJudge, fast_config: JudgeConfig) -> None:
    judge_server.script(Reply(body=chat("y" * 50_000), headers={"Transfer-Encoding": "chunked"}))
    config = replace(fast_config, max_reply_bytes=10_000, max_retries=0)
    with pytest.raises(JudgeRequestError, match="larger than max_reply_bytes"):
        _complete(config, KEY_ENV)


def test_warehouse_rows_of_minimal_verdicts_show_in_judge_cost(
        judge_server: ScriptedJudge, fast_config: JudgeConfig, tmp_path: Path) -> None:
    judge_server.default = lambda body: Reply(body=chat(MINIMAL))
    folder = _warehouse(tmp_path)
    report = _score(folder, fast_config, Budget())
    assert report.errors == 0
    con = open_warehouse(folder)
    try:
        refresh_views(con)
        got = con.execute("SELECT sum(scored), sum(partial), sum(errors) FROM judge_cost "
                          "WHERE judge = 'scripted-judge'").fetchall()
    finally:
        con.close()
    assert got == [(8, 8, 0)]
