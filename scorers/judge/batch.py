"""The OpenAI-compatible Batch API for judges (OpenAI, Azure OpenAI): request lines, the
Files and Batches calls, and the two clients through which the engine's one judging path
serves batches.

A batch is a JSONL file of `/chat/completions` requests, uploaded with `POST /files`
(purpose `batch`) and run by `POST /batches` (completion window 24 h); `GET /batches/{id}`
tells when it ended, and `GET /files/{id}/content` gives the output file (one line per
request that got a reply) and the error file (one line per request that did not, e.g.
`batch_expired`). Lines carry the request's `custom_id`, never its order.

The engine renders, caches, parses and builds scores; batches only change where a request
goes and where its reply comes from:
- `CaptureClient.complete` builds the request body the synchronous client would send and
  raises `engine.Deferred`, so the engine leaves the turn pending and the body is kept for
  the batch file;
- `ReplayClient.complete` returns the reply a finished batch holds for the turn (or raises
  `JudgeRequestError` with the batch's reason), so the engine parses and scores it as if it
  had just arrived.

Paths: OpenAI, vLLM and the Azure `/openai/v1` form put `files` and `batches` beside
`chat/completions` under the base URL, and batch lines name `/v1/chat/completions`. An
Azure deployment URL (`.../openai/deployments/NAME`) keeps them at `.../openai/files` and
`.../openai/batches` (the client's query parameters, such as `api-version`, ride along),
and its lines name `/chat/completions` with the deployment as `model`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson

from turnscore.scorers.judge.client import ChatClient, ChatReply, JudgeRequestError, Message
from turnscore.scorers.judge.config import JudgeConfig
from turnscore.scorers.judge.engine import Deferred
from turnscore.scorers.judge.parse import excerpt

log = logging.getLogger(__name__)

COMPLETION_WINDOW = "24h"
METADATA_KEY = "turnscore_batch"
"""The batch metadata key holding our own batch key: how a batch whose id was never
recorded (a crash right after creating it) is found again."""
IN_PROGRESS = frozenset({"validating", "in_progress", "finalizing", "cancelling"})
ENDED = frozenset({"completed", "expired", "cancelled", "failed"})
UPLOAD_TIMEOUT_S = 300.0
LIST_PAGE = 100


@dataclass(frozen=True, slots=True)
class Route:
    root: str
    """Where `files` and `batches` live."""
    endpoint: str
    """The path batch lines and the batch name for chat completions."""


def route(base_url: str) -> Route:
    parts = urlsplit(base_url.rstrip("/"))
    head, deployment, _ = parts.path.partition("/openai/deployments/")
    if deployment:
        return Route(urlunsplit(parts._replace(path=head + "/openai")), "/chat/completions")
    azure = parts.path.endswith("/openai/v1") and parts.hostname is not None and (
        parts.hostname.endswith(".azure.com"))
    return Route(base_url.rstrip("/"), "/chat/completions" if azure else "/v1/chat/completions")


def batch_priced(config: JudgeConfig) -> JudgeConfig:
    """`config` priced as a batch request (configured, else half the synchronous price).
    Its replies are already paid for, so collecting them never stops on failures."""
    price_in = config.batch_price_input_per_mtok
    price_out = config.batch_price_output_per_mtok
    return replace(config,
                   price_input_per_mtok=config.price_input_per_mtok / 2 if price_in is None
                   else price_in,
                   price_output_per_mtok=config.price_output_per_mtok / 2 if price_out is None
                   else price_out,
                   max_consecutive_failures=2**31)


def custom_id(scorer: str, turn_id: str, content_hash: str) -> str:
    return f"{scorer}/{turn_id}/{content_hash}"


def request_line(cid: str, endpoint: str, body: Mapping[str, object]) -> bytes:
    return orjson.dumps({"custom_id": cid, "method": "POST", "url": endpoint,
                         "body": dict(body)}) + b"\n"


@dataclass(frozen=True, slots=True)
class LineResult:
    custom_id: str
    reply: str | None
    """The chat-completion body (JSON text) of a request that got a reply."""
    error: str | None
    """Why it got none (the error file's code and message, or the HTTP status)."""


def parse_results(content: bytes, where: str) -> Iterator[LineResult]:
    """The lines of an output or error file; a line that cannot be read is logged and
    skipped (its request then counts as ended without a result)."""
    for number, raw in enumerate(content.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = orjson.loads(raw)
            cid = line["custom_id"]
            if not isinstance(cid, str):
                raise TypeError("custom_id is not a string")
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            log.warning("%s line %d: not a batch result line (%s): %s", where, number, exc,
                        excerpt(raw.decode(errors="replace"), 120))
            continue
        response, error = line.get("response"), line.get("error")
        if isinstance(error, dict):
            yield LineResult(cid, None, f"{error.get('code')}: {error.get('message')}")
        elif not isinstance(response, dict) or response.get("status_code") != 200:
            status = response.get("status_code") if isinstance(response, dict) else None
            body = response.get("body") if isinstance(response, dict) else response
            yield LineResult(cid, None, f"HTTP {status}: {excerpt(orjson.dumps(body).decode())}")
        else:
            yield LineResult(cid, orjson.dumps(response.get("body")).decode(), None)


@dataclass(frozen=True, slots=True)
class BatchStatus:
    batch_id: str
    status: str
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: str | None = None
    """The batch's own errors (a batch that failed validation)."""
    turnaround_ms: float | None = None
    """Creation to completion, as the provider reports it."""


class BatchApiError(Exception):
    """A Files or Batches call failed; `definite` when the endpoint refused it (a 4xx other
    than 429), so retrying the same request cannot help."""

    def __init__(self, message: str, *, definite: bool) -> None:
        super().__init__(message)
        self.definite = definite


class BatchApi:
    """The Files and Batches endpoints of one judge, over its (entered) `ChatClient`'s
    connection pool: same auth headers, extra headers and query parameters."""

    def __init__(self, client: ChatClient) -> None:
        self._http = client.http
        self.route = route(client.config.base_url or "")

    async def upload(self, content: bytes) -> str:
        data = await self._call("POST", "/files", data={"purpose": "batch"},
                                files={"file": ("turnscore-batch.jsonl", content,
                                                "application/jsonl")},
                                timeout=UPLOAD_TIMEOUT_S)
        if not isinstance(data.get("id"), str):
            raise BatchApiError(f"POST /files: no file id in {excerpt(str(data), 200)}",
                                definite=False)
        return str(data["id"])

    async def create(self, file_id: str, key: str) -> BatchStatus:
        data = await self._call("POST", "/batches", json={
            "input_file_id": file_id, "endpoint": self.route.endpoint,
            "completion_window": COMPLETION_WINDOW, "metadata": {METADATA_KEY: key}})
        return _status(data)

    async def get(self, batch_id: str) -> BatchStatus:
        return _status(await self._call("GET", f"/batches/{batch_id}"))

    async def find(self, key: str, since: datetime) -> BatchStatus | None:
        """The batch created with our `key`, looking back to `since` (newest first)."""
        after: str | None = None
        while True:
            params = {"limit": str(LIST_PAGE)} | ({"after": after} if after else {})
            page = await self._call("GET", "/batches", params=params)
            listed = page.get("data")
            batches = [b for b in listed if isinstance(b, dict)] if isinstance(listed, list) else []
            for b in batches:
                if (b.get("metadata") or {}).get(METADATA_KEY) == key:
                    return _status(b)
            oldest = min((b.get("created_at") or 0 for b in batches), default=0)
            if not page.get("has_more") or not batches or oldest < since.timestamp() - 3600:
                return None
            after = str(batches[-1]["id"])

    async def content(self, file_id: str) -> bytes:
        resp = await self._send("GET", f"/files/{file_id}/content", timeout=UPLOAD_TIMEOUT_S)
        return resp.content

    async def _call(self, method: str, path: str, **kwargs: object) -> dict[str, object]:
        resp = await self._send(method, path, **kwargs)
        try:
            data = orjson.loads(resp.content)
        except orjson.JSONDecodeError:
            data = None
        if not isinstance(data, dict):
            raise BatchApiError(f"{method} {path}: not a JSON object: {resp.text[:200]}",
                                definite=True)
        return data

    async def _send(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        url = self.route.root + path
        try:
            resp = await self._http.request(method, url, **kwargs)  # type: ignore[arg-type]
        except httpx.HTTPError as exc:
            raise BatchApiError(f"{method} {path}: {type(exc).__name__}: {exc}",
                                definite=False) from exc
        if resp.status_code != 200:
            definite = resp.status_code != 429 and resp.status_code < 500
            raise BatchApiError(f"{method} {path}: HTTP {resp.status_code}: {resp.text[:300]}",
                                definite=definite)
        return resp


def _status(data: Mapping[str, object]) -> BatchStatus:
    if not isinstance(data.get("id"), str):
        # Not definite: a batch may exist all the same (found again by its metadata key).
        raise BatchApiError(f"not a batch object: {excerpt(str(data), 200)}", definite=False)
    errors = data.get("errors")
    listed = errors.get("data") if isinstance(errors, dict) else None
    message = "; ".join(f"{e.get('code')}: {e.get('message')}" for e in listed
                        if isinstance(e, dict)) if isinstance(listed, list) else None
    created, ended = data.get("created_at"), data.get("completed_at") or data.get("expired_at")
    turnaround = ((ended - created) * 1000.0 if isinstance(created, int | float)
                  and isinstance(ended, int | float) else None)
    return BatchStatus(str(data["id"]), str(data.get("status")),
                       _str(data.get("output_file_id")), _str(data.get("error_file_id")),
                       message or None, turnaround)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class _OfflineClient(ChatClient):
    """A `ChatClient` that opens no connection: its `complete` never reaches the endpoint."""

    async def __aenter__(self) -> _OfflineClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass


class CaptureClient(_OfflineClient):
    """Keeps each request body instead of sending it (see the module docstring)."""

    def __init__(self, config: JudgeConfig, *, env: Mapping[str, str] | None = None) -> None:
        super().__init__(config, env=env)
        self.captured: list[dict[str, object]] = []

    async def complete(self, messages: Sequence[Message], *,
                       response_format: Mapping[str, object] | None = None,
                       tools: Sequence[Mapping[str, object]] | None = None) -> ChatReply:
        self.captured.append(self.request_body(messages, response_format=response_format,
                                               tools=tools))
        raise Deferred


@dataclass(frozen=True, slots=True)
class Replay:
    """What a finished batch holds for one request."""

    reply: str | None
    error: str | None
    turnaround_ms: float | None = None


class ReplayClient(_OfflineClient):
    """Answers with `current`, the finished batch's result for the turn being scored."""

    def __init__(self, config: JudgeConfig, *, env: Mapping[str, str] | None = None) -> None:
        super().__init__(config, env=env)
        self.current: Replay | None = None

    async def complete(self, messages: Sequence[Message], *,
                       response_format: Mapping[str, object] | None = None,
                       tools: Sequence[Mapping[str, object]] | None = None) -> ChatReply:
        result, self.current = self.current, None  # one reply per request, never reused
        latency = (result.turnaround_ms if result else None) or 0.0
        if result is None or result.reply is None:
            why = result.error if result else "no batch result for this request"
            raise JudgeRequestError(f"batch request failed: {why}", attempts=1,
                                    latency_ms=latency)
        # The synchronous client's own reading of a chat completion: one parser for both.
        reply = self._reply(result.reply.encode(), 1, 0.0)
        return replace(reply, latency_ms=latency)
