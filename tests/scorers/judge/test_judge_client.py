"""The chat client against the scripted server: retries, Retry-After, timeouts, limits."""

from __future__ import annotations

import asyncio
import email.utils
import time
from dataclasses import replace

import pytest

from tests.scorers.judge.scripted import Reply, ScriptedJudge, chat
from turnscore.scorers.judge.client import (
    ChatClient,
    JudgeRequestError,
    RateLimiter,
    parse_retry_after,
)
from turnscore.scorers.judge.config import JudgeConfig

MESSAGES = [{"role": "user", "content": "hi"}]


def complete(config: JudgeConfig, sleeps: list[float] | None = None,
             env: dict[str, str] | None = None, **kw: object):
    async def fake_sleep(s: float) -> None:
        assert sleeps is not None
        sleeps.append(s)

    async def go():
        client = ChatClient(config, env=env or {}, **({"sleep": fake_sleep} if sleeps is not None
                                                      else {}))
        async with client:
            return await client.complete(MESSAGES, **kw)  # type: ignore[arg-type]
    return asyncio.run(go())


def test_ok_reply_carries_content_usage_and_auth(judge_server: ScriptedJudge,
                                                  fast_config: JudgeConfig) -> None:
    judge_server.script(Reply(body=chat("hello", usage=(12, 3))))
    reply = complete(fast_config, env={"TEST_JUDGE_KEY": "sk-test"})
    assert (reply.content, reply.input_tokens, reply.output_tokens, reply.attempts) == (
        "hello", 12, 3, 1)
    req = judge_server.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == "Bearer sk-test"
    assert req.body["model"] == "scripted-judge" and req.body["temperature"] == 0.0
    assert req.body["max_tokens"] == 1024 and "response_format" not in req.body


def test_no_key_means_no_authorization_header(judge_server: ScriptedJudge,
                                              fast_config: JudgeConfig) -> None:
    complete(fast_config, env={})
    assert "Authorization" not in judge_server.requests[0].headers


@pytest.mark.parametrize("header", ["7", "HTTP-DATE"])
def test_429_waits_what_retry_after_says(judge_server: ScriptedJudge, fast_config: JudgeConfig,
                                         header: str) -> None:
    if header == "HTTP-DATE":
        header = email.utils.formatdate(time.time() + 30, usegmt=True)
    judge_server.script(Reply(429, {"error": "slow down"}, {"Retry-After": header}),
                        Reply(body=chat("ok")))
    sleeps: list[float] = []
    reply = complete(fast_config, sleeps)
    assert reply.content == "ok" and reply.attempts == 2
    assert len(sleeps) == 1
    expected = 7.0 if header == "7" else 30.0
    assert expected - 2 <= sleeps[0] <= expected


def test_500s_are_retried_with_jittered_exponential_backoff(judge_server: ScriptedJudge,
                                                            fast_config: JudgeConfig) -> None:
    config = replace(fast_config, max_retries=3, backoff_s=1.0, backoff_max_s=100.0)
    judge_server.script(Reply(500, "boom"), Reply(502, "bad"), Reply(503, "busy"),
                        Reply(body=chat("ok")))
    sleeps: list[float] = []
    reply = complete(config, sleeps)
    assert reply.attempts == 4 and len(judge_server.requests) == 4
    for attempt, slept in enumerate(sleeps, start=1):
        base = 2 ** (attempt - 1)
        assert base * 0.5 <= slept <= base


def test_gives_up_after_max_retries(judge_server: ScriptedJudge, fast_config: JudgeConfig) -> None:
    judge_server.default = lambda body: Reply(500, "always broken")
    with pytest.raises(JudgeRequestError, match=r"HTTP 500: always broken.*after 3 attempts"
                       ) as err:
        complete(fast_config, [])
    assert err.value.attempts == 3 and len(judge_server.requests) == 3


def test_retry_after_beyond_the_limit_is_not_waited_for(judge_server: ScriptedJudge,
                                                       fast_config: JudgeConfig) -> None:
    judge_server.script(Reply(429, "later", {"Retry-After": "3600"}))
    sleeps: list[float] = []
    with pytest.raises(JudgeRequestError, match="beyond retry_after_max_s"):
        complete(fast_config, sleeps)
    assert sleeps == [] and len(judge_server.requests) == 1


def test_400_is_not_retried(judge_server: ScriptedJudge, fast_config: JudgeConfig) -> None:
    judge_server.script(Reply(400, {"error": "bad model"}))
    with pytest.raises(JudgeRequestError, match="HTTP 400") as err:
        complete(fast_config, [])
    assert err.value.attempts == 1 and len(judge_server.requests) == 1


def test_timeouts_are_retried_then_reported(judge_server: ScriptedJudge,
                                            fast_config: JudgeConfig) -> None:
    config = replace(fast_config, timeout_s=0.2, max_retries=1)
    judge_server.default = lambda body: Reply(body=chat("late"), delay_s=1.0)
    started = time.monotonic()
    with pytest.raises(JudgeRequestError, match=r"timed out after 0.2 s.*2 attempts"):
        complete(config)
    assert time.monotonic() - started < 1.5


def test_timeout_then_success(judge_server: ScriptedJudge, fast_config: JudgeConfig) -> None:
    config = replace(fast_config, timeout_s=0.2)
    judge_server.script(Reply(body=chat("late"), delay_s=0.6), Reply(body=chat("on time")))
    assert complete(config).content == "on time"


def test_non_completion_body_is_an_error(judge_server: ScriptedJudge,
                                         fast_config: JudgeConfig) -> None:
    judge_server.script(Reply(body="<html>proxy error</html>"))
    with pytest.raises(JudgeRequestError, match="not a chat completion"):
        complete(fast_config)


def test_response_format_and_tools_are_sent(judge_server: ScriptedJudge,
                                            fast_config: JudgeConfig) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "v", "schema": {"type": "object"}}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    complete(fast_config, response_format=fmt, tools=tools)
    body = judge_server.requests[0].body
    assert body["response_format"] == fmt and body["tools"] == tools


def test_rate_limiter_spaces_requests_per_minute_and_tokens() -> None:
    now = [0.0]
    waits: list[float] = []

    async def sleep(s: float) -> None:
        waits.append(s)
        now[0] += s

    async def go() -> None:
        rpm = RateLimiter(2, None, clock=lambda: now[0], sleep=sleep)
        for _ in range(3):
            await rpm.acquire(10)
        assert waits == [60.0]
        waits.clear()
        tpm = RateLimiter(None, 1000, clock=lambda: now[0], sleep=sleep)
        await tpm.acquire(600)
        now[0] += 5
        await tpm.acquire(600)
        assert waits == [55.0]
    asyncio.run(go())


@pytest.mark.parametrize(("value", "expected"), [
    ("0", 0.0), ("12", 12.0), (" 3 ", 3.0), ("-5", 0.0), ("soon", None), (None, None),
    ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
])
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value) == expected
