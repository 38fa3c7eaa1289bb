"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1.

Requests go to `/<library>/<scenario>/v1/chat/completions`; the server finds the turn by
the newest user message and the step by the assistant messages after it, answers with that
step of the scenario (plain JSON, or server-sent events when the request streams: each
chunk's choice says `"finish_reason": null` until the last, as OpenAI's do and as strict
clients such as mistralai's require; a tool call's arguments come in pieces, except to the
mistralai SDK (user agent `mistral-client-python/<version>`), which gets each call whole in
one delta as Mistral's API sends it: its chunk model requires a name on every tool-call
delta), and
records every exchange so the test can derive the expected turns from the wire. Tool call
ids differ per library, as they differ per run with a real model: with the same ids, two
libraries' identical conversations would continue each other's message history.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.ingest.instrumented.scenarios import SCENARIOS, SERVED_MODEL, Step


@dataclass(frozen=True)
class Exchange:
    library: str
    scenario: str
    turn: int
    step: int
    request: dict[str, Any]
    message: dict[str, Any]
    """The assistant message the server answered with."""
    usage: dict[str, int]


class ScriptedServer:
    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        """The request handler; a server that speaks more routes extends it."""
        return _handler(self)

    def base_url(self, library: str, scenario: str) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}/{library}/{scenario}/v1"

    def of(self, library: str, scenario: str) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if (e.library, e.scenario) == (library, scenario)]

    def answer(self, library: str, scenario: str, body: dict[str, Any]) -> Exchange:
        messages = body["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        requests = [t.request for t in SCENARIOS[scenario].turns]
        turn = requests.index(_text(messages[last_user]["content"]))
        step = sum(m["role"] == "assistant" for m in messages[last_user:])
        prefix = hashlib.sha256(f"{library}/{scenario}/{turn}/{step}".encode()).hexdigest()[:12]
        message = _message(SCENARIOS[scenario].turns[turn].steps[step], prefix)
        usage = {
            "prompt_tokens": len(json.dumps(messages)) // 4,
            "completion_tokens": len(json.dumps(message)) // 4,
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        exchange = Exchange(library, scenario, turn, step, body, message, usage)
        with self._lock:
            self.exchanges.append(exchange)
        return exchange


def _text(content: str | list[dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content)


def _message(step: Step, id_prefix: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.text}
    if step.calls:
        message["tool_calls"] = [
            {
                "id": f"call_{id_prefix}{k}",
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for k, c in enumerate(step.calls)
        ]
    return message


def _completion(exchange: Exchange) -> dict[str, Any]:
    finish = "tool_calls" if exchange.message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{exchange.library}-{exchange.scenario}-{exchange.turn}{exchange.step}",
        "object": "chat.completion",
        "created": 1_780_000_000,
        "model": SERVED_MODEL,
        "choices": [{"index": 0, "message": exchange.message, "finish_reason": finish}],
        "usage": exchange.usage,
    }


def _chunks(
    exchange: Exchange, with_usage: bool, whole_calls: bool = False
) -> Iterator[dict[str, Any]]:
    whole = _completion(exchange)
    base = {k: whole[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    message = exchange.message
    if message["content"] is not None:
        words = message["content"].split(" ")
        for i, word in enumerate(words):
            delta = {"content": word if i == 0 else " " + word}
            yield base | {"choices": [{"index": 0, "delta": {"role": "assistant", **delta},
                                       "finish_reason": None}]}  # fmt: skip
    for k, call in enumerate(message.get("tool_calls", ())):
        fn = call["function"]
        head = {"index": k, "id": call["id"], "type": "function",
                "function": {"name": fn["name"], "arguments": ""}}  # fmt: skip
        half = len(fn["arguments"]) // 2
        pieces = [{"index": k, "function": {"arguments": fn["arguments"][:half]}},
                  {"index": k, "function": {"arguments": fn["arguments"][half:]}}]  # fmt: skip
        if whole_calls:
            head["function"]["arguments"], pieces = fn["arguments"], []
        for delta in (head, *pieces):
            yield base | {"choices": [{"index": 0, "delta": {"tool_calls": [delta]},
                                       "finish_reason": None}]}  # fmt: skip
    finish = whole["choices"][0]["finish_reason"]
    yield base | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    if with_usage:
        yield base | {"choices": [], "usage": exchange.usage}


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            parts = self.path.strip("/").split("/")
            if len(parts) != 5 or parts[2:] != ["v1", "chat", "completions"]:
                self.send_error(404, f"no route {self.path}")
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            exchange = server.answer(parts[0], parts[1], body)
            if body.get("stream"):
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                mistral = self.headers.get("User-Agent", "").startswith("mistral-client")
                self._stream(exchange, usage, mistral)
            else:
                self._send(json.dumps(_completion(exchange)).encode())

        def _send(self, payload: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _stream(self, exchange: Exchange, with_usage: bool, whole_calls: bool) -> None:
            # HTTP/1.0: the body ends when the connection closes, as servers without
            # chunked encoding do it.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in _chunks(exchange, with_usage, whole_calls):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
