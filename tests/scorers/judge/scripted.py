"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for judge tests.

Real HTTP over real sockets: each request is recorded (path, headers, JSON body) and answered
from a queue of scripted replies, or by `default` when the queue is empty. The `ENDPOINTS`
defaults play how real servers treat `response_format` (from their docs and issue trackers):

- `accepts_schema`: OpenAI, Azure OpenAI (api-version 2024-08-01-preview and later), vLLM,
  Ollama 0.5+ and llama.cpp's server honour `json_schema` and reply with the bare object.
- `rejects_schema`: OpenAI models without structured outputs answer 400
  `{"error": {"message": "Invalid parameter: 'response_format' of type 'json_schema' is not
  supported with this model.", "type": "invalid_request_error", "param": "response_format"}}`;
  older Azure api-versions say so the same way.
- `json_object_only`: servers with JSON mode but no schema support (older llama.cpp and
  LM Studio builds, many proxies) reject `json_schema` with a 400 whose message names it,
  llama.cpp style (`{"error": {"code": 400, "message": ..., "type": "invalid_request_error"}}`,
  no `param`), and honour `{"type": "json_object"}`.
- `ignores_format`: older Ollama builds (before its structured outputs) and some proxies
  drop the field and reply as the prompt asks, prose around the JSON.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from turnscore.ingest.turn import Call, Tool, Turn


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None
    """A dict is sent as JSON, a str as is."""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    trickle_s: float = 0.0
    """Send the body one byte at a time, this long apart (a slow or hostile server)."""


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def system(self) -> str:
        return str(self.body["messages"][0]["content"])

    @property
    def user(self) -> str:
        return str(self.body["messages"][1]["content"])


def chat(content: str | None, *, tool_calls: list[dict[str, Any]] | None = None,
         usage: tuple[int, int] | None = (1000, 100)) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {"id": "x", "object": "chat.completion", "model": "scripted-judge",
                            "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if tool_calls else "stop"}]}
    if usage:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1]}
    return body


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str = "tc1") -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def verdict_for(body: dict[str, Any], score: float = 8) -> dict[str, Any]:
    """A valid verdict for whichever judged scorer sent `body` (read from its system prompt)."""
    system = body["messages"][0]["content"]
    verdict: dict[str, Any] = {"assessment": "Looks reasonable."}
    if "**Tool Usage**" in system:
        verdict |= {"calls": [], "call_needed": None}
    elif "**Tractability**" in system:
        verdict |= {"request_kind": "interpretive", "missing_capability": None,
                    "strain_signs": []}
    else:
        verdict |= {"claims": [{"claim": "x", "supported": True, "source": "request"}]}
    return verdict | {"score": score}


def prose_verdict(body: dict[str, Any], score: float = 8) -> Reply:
    """A reply as the prompt alone asks for it: a line of prose, then the verdict."""
    return Reply(body=chat("Here is my verdict.\n" + json.dumps(verdict_for(body, score))))


def accepts_schema(body: dict[str, Any]) -> Reply:
    return Reply(body=chat(json.dumps(verdict_for(body))))


def rejects_schema(body: dict[str, Any]) -> Reply:
    if "response_format" in body:
        kind = body["response_format"]["type"]
        return Reply(400, {"error": {
            "message": f"Invalid parameter: 'response_format' of type '{kind}' is not "
                       "supported with this model.",
            "type": "invalid_request_error", "param": "response_format", "code": None}})
    return prose_verdict(body)


def json_object_only(body: dict[str, Any]) -> Reply:
    kind = body.get("response_format", {}).get("type")
    if kind == "json_schema":
        return Reply(400, {"error": {"code": 400, "type": "invalid_request_error",
                                     "message": "json_schema is not supported; use json_object"}})
    return accepts_schema(body) if kind == "json_object" else prose_verdict(body)


def ignores_format(body: dict[str, Any]) -> Reply:
    return prose_verdict(body)


ENDPOINTS: dict[str, Callable[[dict[str, Any]], Reply]] = {
    "accepts_schema": accepts_schema, "rejects_schema": rejects_schema,
    "json_object_only": json_object_only, "ignores_format": ignores_format}


class ScriptedJudge:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self.replies: queue.Queue[Reply] = queue.Queue()
        self.default: Callable[[dict[str, Any]], Reply] = accepts_schema
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = json.loads(raw or b"{}")
                with judge._lock:
                    judge.requests.append(Recorded(self.path, dict(self.headers), body))
                    judge.in_flight += 1
                    judge.max_in_flight = max(judge.max_in_flight, judge.in_flight)
                try:
                    reply = judge.replies.get_nowait()
                except queue.Empty:
                    reply = judge.default(body)
                time.sleep(reply.delay_s)
                with judge._lock:
                    judge.in_flight -= 1
                data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    if "Transfer-Encoding" in reply.headers:  # chunked: no length declared
                        self.end_headers()
                        raw = data.encode()
                        for i in range(0, len(raw), 4096):
                            part = raw[i:i + 4096]
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                        self.wfile.write(b"0\r\n\r\n")
                        return
                    self.send_header("Content-Length", str(len(data.encode())))
                    self.end_headers()
                    if reply.trickle_s:
                        for i in range(len(data)):
                            self.wfile.write(data[i:i + 1].encode())
                            self.wfile.flush()
                            time.sleep(reply.trickle_s)
                    else:
                        self.wfile.write(data.encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, *replies: Reply) -> None:
        for r in replies:
            self.replies.put(r)

    def __enter__(self) -> ScriptedJudge:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


T0 = datetime(2026, 1, 1, tzinfo=UTC)
KEY_ENV = {"TEST_JUDGE_KEY": "sk-test"}
"""The environment the judge tests run with: the key `fast_config` names."""


def make_turn(spec: dict[str, Any], turn_id: str = "t") -> Turn:
    """A turn from case-file fields (tool parameters and call arguments may be objects)."""
    fields = dict(spec)
    fields["tools"] = tuple(Tool(**_as_text(t, "parameters")) for t in fields.get("tools", ()))
    fields["calls"] = tuple(Call(**_as_text(c, "arguments")) for c in fields.get("calls", ()))
    fields.setdefault("request", "a request")
    fields.setdefault("status", "ok")
    fields.setdefault("tools_source", "declared" if fields["tools"] else "none")
    return Turn(turn_id=turn_id, trace_id="tr", conversation_id="c", turn_index=0,
                started_at=T0, ended_at=T0, duration_ms=0.0, **fields)


def _as_text(spec: dict[str, Any], key: str) -> dict[str, Any]:
    out = dict(spec)
    if out.get(key) is not None and not isinstance(out[key], str):
        out[key] = json.dumps(out[key])
    return out
