"""OpenAI-compatible chat-completions client for judges, over httpx.

Promises: 429, 5xx, timeouts and connection failures are retried `max_retries` times with
exponential backoff and jitter, waiting what Retry-After says when the server says it (up to
`retry_after_max_s`); other 4xx fail at once. Requests are spaced to stay under requests and
tokens per minute (tokens estimated from the request size plus `max_tokens`), and at most
`concurrency` are in flight. Failures raise `JudgeRequestError` carrying the attempts made.

`timeout_s` is one deadline per attempt over connecting, sending and reading the whole reply
(a server trickling bytes cannot stretch it), and a reply over `max_reply_bytes` fails the
attempt without being read further.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

import httpx
import orjson

from turnscore.scorers.judge.config import JudgeConfig

log = logging.getLogger(__name__)

Message = dict[str, object]
"""A chat message: JSON by nature."""
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ChatReply:
    content: str | None
    tool_calls: tuple[ToolCallRequest, ...]
    message: Message
    """The assistant message as returned, to send back in a tool loop."""
    input_tokens: int | None
    output_tokens: int | None
    latency_ms: float
    attempts: int
    model: str | None = None


class JudgeRequestError(Exception):
    """The judge could not be reached or kept failing; the message says how."""

    def __init__(self, message: str, *, attempts: int, latency_ms: float,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.latency_ms = latency_ms
        self.status = status
        """The HTTP status of a refused request (4xx other than 429), else None."""

    @property
    def rejects_format(self) -> bool:
        """A 400/422 naming the structured-output request: the endpoint does not take it.
        OpenAI and Azure set `param: response_format`; vLLM, llama.cpp and LM Studio only
        say it in the message, naming `response_format`, `json_schema` or `json_object`."""
        text = str(self).lower()
        return self.status in (400, 422) and any(
            word in text for word in ("response_format", "json_schema", "json_object"))


class _ReplyTooLarge(Exception):
    pass


class Limiter(Protocol):
    """What spaces a client's requests: `RateLimiter`, or an endpoint's limits shared with
    other clients (`shared.EndpointLimits`)."""

    async def acquire(self, tokens: int) -> None: ...


@dataclass(slots=True)
class RateLimiter:
    """Sliding one-minute window over requests and estimated tokens."""

    requests_per_minute: int | None
    tokens_per_minute: int | None
    clock: Callable[[], float] = time.monotonic
    sleep: Sleep = asyncio.sleep
    _events: deque[tuple[float, int]] = field(default_factory=deque)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def acquire(self, tokens: int) -> None:
        async with self._lock:  # held while waiting: callers go in arrival order
            while True:
                now = self.clock()
                while self._events and self._events[0][0] <= now - 60:
                    self._events.popleft()
                used = sum(t for _, t in self._events)
                rpm_ok = (self.requests_per_minute is None
                          or len(self._events) < self.requests_per_minute)
                tpm_ok = (self.tokens_per_minute is None or not self._events
                          or used + tokens <= self.tokens_per_minute)
                if rpm_ok and tpm_ok:
                    self._events.append((now, tokens))
                    return
                await self.sleep(max(self._events[0][0] + 60 - now, 0.01))


class ChatClient:
    """One judge endpoint. Use as `async with ChatClient(config) as client:`."""

    def __init__(self, config: JudgeConfig, *, env: Mapping[str, str] | None = None,
                 sleep: Sleep = asyncio.sleep, rng: Callable[[], float] = random.random,
                 limiter: Limiter | None = None) -> None:
        if not config.is_llm:
            raise ValueError("ChatClient needs a judge with base_url and model")
        self.config = config
        self._key = config.api_key(env)
        self._sleep = sleep
        self._rng = rng
        self._limiter: Limiter = limiter or RateLimiter(
            config.requests_per_minute, config.tokens_per_minute, sleep=sleep)
        self._slots = asyncio.Semaphore(config.concurrency)
        self._http: httpx.AsyncClient | None = None

    async def __aenter__(self) -> ChatClient:
        cfg = self.config
        headers = dict(cfg.headers)
        if self._key:
            bearer = cfg.api_key_header.lower() == "authorization"
            headers[cfg.api_key_header] = f"Bearer {self._key}" if bearer else self._key
        # The per-operation timeout only backs up the deadline in `_attempt`.
        self._http = httpx.AsyncClient(headers=headers, params=dict(cfg.query_params),
                                       timeout=cfg.timeout_s, trust_env=False)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.aclose()

    @property
    def http(self) -> httpx.AsyncClient:
        """The endpoint's connection pool, with its auth headers and query parameters, for
        the other OpenAI endpoints a judge uses (Files and Batches: `scorers.judge.batch`)."""
        assert self._http is not None, "use ChatClient as an async context manager"
        return self._http

    def request_body(self, messages: Sequence[Message], *,
                     response_format: Mapping[str, object] | None = None,
                     tools: Sequence[Mapping[str, object]] | None = None) -> dict[str, object]:
        body: dict[str, object] = {"model": self.config.model, "messages": list(messages),
                                   "temperature": self.config.temperature,
                                   "max_tokens": self.config.max_tokens}
        if response_format is not None:
            body["response_format"] = dict(response_format)
        if tools:
            body["tools"] = [dict(t) for t in tools]
        return body

    async def complete(self, messages: Sequence[Message], *,
                       response_format: Mapping[str, object] | None = None,
                       tools: Sequence[Mapping[str, object]] | None = None) -> ChatReply:
        body = self.request_body(messages, response_format=response_format, tools=tools)
        payload = orjson.dumps(body)
        estimate = len(payload) // 4 + self.config.max_tokens
        async with self._slots:
            return await self._post_with_retries(payload, estimate)

    async def _post_with_retries(self, payload: bytes, estimate: int) -> ChatReply:
        assert self._http is not None, "use ChatClient as an async context manager"
        cfg = self.config
        url = f"{cfg.base_url}/chat/completions"
        started = time.monotonic()
        attempt = 0
        problem = ""
        while True:
            attempt += 1
            await self._limiter.acquire(estimate)
            retry_after: float | None = None
            try:
                status, headers, content = await self._attempt(url, payload)
            except (TimeoutError, httpx.TimeoutException):
                problem = f"timed out after {cfg.timeout_s:g} s"
            except httpx.TransportError as exc:
                problem = f"connection failed: {type(exc).__name__}: {exc}"
            except _ReplyTooLarge:
                problem = f"reply larger than max_reply_bytes ({cfg.max_reply_bytes})"
            else:
                if status == 200:
                    return self._reply(content, attempt, started)
                text = content.decode(errors="replace")
                problem = f"HTTP {status}: {text[:300]}"
                if status != 429 and status < 500:
                    raise JudgeRequestError(problem, attempts=attempt, latency_ms=_ms(started),
                                            status=status)
                retry_after = parse_retry_after(headers.get("retry-after"))
            if attempt > cfg.max_retries:
                break
            if retry_after is not None and retry_after > cfg.retry_after_max_s:
                problem += f" (Retry-After {retry_after:g} s is beyond retry_after_max_s)"
                break
            delay = retry_after if retry_after is not None else self._backoff(attempt)
            log.info("judge %s: %s; retrying in %.2f s", cfg.model, problem, delay)
            await self._sleep(delay)
        raise JudgeRequestError(f"{problem} (gave up after {attempt} attempts)",
                                attempts=attempt, latency_ms=_ms(started))

    async def _attempt(self, url: str, payload: bytes) -> tuple[int, httpx.Headers, bytes]:
        """One request under one deadline; the body is read in chunks up to the size cap."""
        assert self._http is not None
        cap = self.config.max_reply_bytes
        async with asyncio.timeout(self.config.timeout_s):
            async with self._http.stream("POST", url, content=payload,
                                         headers={"Content-Type": "application/json"}) as resp:
                declared = resp.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > cap:
                    raise _ReplyTooLarge
                chunks: list[bytes] = []
                size = 0
                async for chunk in resp.aiter_bytes():  # decoded: the cap is on what is held
                    size += len(chunk)
                    if size > cap:
                        raise _ReplyTooLarge
                    chunks.append(chunk)
                return resp.status_code, resp.headers, b"".join(chunks)

    def _backoff(self, attempt: int) -> float:
        base = min(self.config.backoff_max_s, self.config.backoff_s * 2 ** (attempt - 1))
        return base * (0.5 + self._rng() / 2)

    def _reply(self, raw: bytes, attempt: int, started: float) -> ChatReply:
        try:
            data = orjson.loads(raw)
            message = data["choices"][0]["message"]
            if not isinstance(message, dict):
                raise TypeError("message is not an object")
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
            text = raw[:200].decode(errors="replace")
            raise JudgeRequestError(f"not a chat completion ({exc}): {text}",
                                    attempts=attempt, latency_ms=_ms(started)) from None
        calls: list[ToolCallRequest] = []
        raw_calls = message.get("tool_calls") or []
        for raw in raw_calls if isinstance(raw_calls, list) else [raw_calls]:
            fn = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(raw, dict) or not isinstance(fn, dict):
                raise JudgeRequestError(f"malformed tool call in the reply: {excerpt_of(raw)}",
                                        attempts=attempt, latency_ms=_ms(started))
            arguments = fn.get("arguments") or "{}"
            if not isinstance(arguments, str):  # some servers send the object itself
                arguments = orjson.dumps(arguments).decode()
            calls.append(ToolCallRequest(str(raw.get("id", "")), str(fn.get("name", "")),
                                         arguments))
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        content = message.get("content")
        return ChatReply(
            content=content if isinstance(content, str) else None,
            tool_calls=tuple(calls), message=message,
            input_tokens=_int(usage.get("prompt_tokens")),
            output_tokens=_int(usage.get("completion_tokens")),
            latency_ms=_ms(started), attempts=attempt,
            model=data.get("model") if isinstance(data.get("model"), str) else None)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def excerpt_of(value: object, limit: int = 200) -> str:
    return orjson.dumps(value, default=str).decode()[:limit]


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000
