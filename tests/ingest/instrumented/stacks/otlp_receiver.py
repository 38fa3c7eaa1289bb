"""An OTLP/HTTP receiver on 127.0.0.1 for a stack whose SDK exports over the network
(AgentOps, Laminar, Phoenix's `register`): each request body POSTed to a path ending
`/v1/traces` or `/v1/logs` (gzip or deflate undone) is written unchanged as the
recording's file, laid out as `export.py`'s file exporters lay theirs
(`<prefix>-NNN.traces.pb`, `<prefix>-NNN.logs.pb`, numbered per kind); an OTLP/JSON body
(`Content-Type: application/json`, as Node's `exporter-*-otlp-http` send) as
`<prefix>-NNN.traces.json` / `.logs.json`. A body sent in chunks (no `Content-Length`,
`Transfer-Encoding: chunked`, as Node's exporters do) is read whole.

A POST to any other path is answered 200 and dropped (an SDK's calls to its hosted service);
a CONNECT, a request for anywhere else when the receiver is also the stack's HTTPS proxy, is
refused, so nothing leaves the machine. Standard library only: it runs in a stack's venv.
"""

from __future__ import annotations

import gzip
import itertools
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_KINDS = {"/v1/traces": "traces", "/v1/logs": "logs"}


@contextmanager
def receiver(out: Path, prefix: str) -> Iterator[str]:
    """Serve until the block ends; its URL (`http://127.0.0.1:PORT`, no path)."""
    out.mkdir(parents=True, exist_ok=True)
    numbers = {kind: itertools.count() for kind in _KINDS.values()}
    lock = threading.Lock()  # the server's threads take numbers from the same counters

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self._body()
            encoding = self.headers.get("Content-Encoding")
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            kind = next((k for path, k in _KINDS.items() if self.path.endswith(path)), None)
            if kind and body:
                json_body = (self.headers.get("Content-Type") or "").startswith("application/json")
                with lock:
                    suffix = "json" if json_body else "pb"
                    path = out / f"{prefix}-{next(numbers[kind]):03}.{kind}.{suffix}"
                path.write_bytes(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _body(self) -> bytes:
            if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()  # the CRLF after each chunk
            while self.rfile.readline().strip():  # trailers, up to the blank line
                pass
            return b"".join(chunks)

        def do_CONNECT(self) -> None:
            self.send_error(403, "nothing leaves this machine")

        def log_message(self, format: str, *args: object) -> None:
            pass

    with loopback(Handler) as url:
        yield url


@contextmanager
def loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` served on 127.0.0.1 until the block ends; its URL (no path)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
