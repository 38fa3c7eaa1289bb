"""`turnscore judge check`: one tiny request to each configured judge.

Reports, per distinct endpoint and model, whether it answered, how fast, and whether
structured output (`response_format: json_schema`) works there. A judge that rejects the
schema request (HTTP 4xx) is asked again without it, so "reachable, no structured output"
is told apart from "unreachable".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

import orjson

from turnscore.scorers.judge.client import ChatClient, JudgeRequestError
from turnscore.scorers.judge.config import JudgeConfig, JudgeSettings

_PING = [{"role": "system", "content": 'Reply with exactly this JSON object: {"ok": true}'},
         {"role": "user", "content": "ping"}]
_FORMAT = {"type": "json_schema", "json_schema": {"name": "ping", "strict": True, "schema": {
    "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
    "additionalProperties": False}}}


@dataclass(frozen=True, slots=True)
class JudgeCheck:
    scorers: tuple[str, ...]
    judge: str
    """The model id, or 'rules-v1' where no endpoint is configured."""
    base_url: str | None
    ok: bool
    latency_ms: float | None = None
    structured_output: bool | None = None
    error: str | None = None


def check_judges(settings: JudgeSettings, scorers: tuple[str, ...],
                 env: Mapping[str, str] | None = None) -> list[JudgeCheck]:
    groups: dict[tuple[str | None, str | None], tuple[JudgeConfig, list[str]]] = {}
    for name in scorers:
        cfg = settings.for_scorer(name)
        key = (cfg.base_url, cfg.model) if cfg.is_llm else (None, None)
        groups.setdefault(key, (cfg, []))[1].append(name)
    return [_check(cfg, tuple(names), env) for cfg, names in groups.values()]


def _check(config: JudgeConfig, scorers: tuple[str, ...], env: Mapping[str, str] | None
           ) -> JudgeCheck:
    if not config.is_llm:
        return JudgeCheck(scorers, config.judge_id, None, ok=True)
    config = replace(config, max_tokens=min(config.max_tokens, 64), tools=())

    async def ask(fmt: Mapping[str, object] | None) -> tuple[str | None, float]:
        async with ChatClient(config, env=env) as client:
            started = time.monotonic()
            reply = await client.complete(_PING, response_format=fmt)
            return reply.content, (time.monotonic() - started) * 1000

    base = JudgeCheck(scorers, config.judge_id, config.base_url, ok=False)
    try:
        content, latency = asyncio.run(ask(_FORMAT))
        return replace(base, ok=True, latency_ms=latency, structured_output=_is_ok(content))
    except JudgeRequestError as exc:
        if "HTTP 4" not in str(exc) or "HTTP 429" in str(exc):
            return replace(base, error=str(exc))
    try:
        _, latency = asyncio.run(ask(None))
        return replace(base, ok=True, latency_ms=latency, structured_output=False)
    except JudgeRequestError as exc:
        return replace(base, error=str(exc))


def _is_ok(content: str | None) -> bool:
    try:
        return orjson.loads(content or "") == {"ok": True}
    except orjson.JSONDecodeError:
        return False
