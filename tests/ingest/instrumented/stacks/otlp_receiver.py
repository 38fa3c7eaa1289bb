"""A loopback OTLP/HTTP receiver for SDKs that export only through their own OTLP exporters
(Laminar, Phoenix's `register`): each POST to `/v1/traces` or `/v1/logs` on 127.0.0.1 is
written as the harness's file exporters write theirs (`<prefix>-NNN.traces.pb`, the
`Export*ServiceRequest` the exporter sent, decompressed)."""

from __future__ import annotations

import gzip
import itertools
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Receiver(ThreadingHTTPServer):
    def __init__(self, out: Path, prefix: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.out, self.prefix = out, prefix
        self.numbers = {"traces": itertools.count(), "logs": itertools.count()}
        self.lock = threading.Lock()
        out.mkdir(parents=True, exist_ok=True)


class _Handler(BaseHTTPRequestHandler):
    server: _Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        encoding = self.headers.get("Content-Encoding", "")
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        kind = "traces" if self.path.endswith("/v1/traces") else "logs"
        if body:
            with self.server.lock:
                n = next(self.server.numbers[kind])
            (self.server.out / f"{self.server.prefix}-{n:03}.{kind}.pb").write_bytes(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def receiving(out: Path, prefix: str) -> Iterator[int]:
    """The receiver's port, while it runs; stopped after the block (flush the SDK first)."""
    receiver = _Receiver(out, prefix)
    thread = threading.Thread(target=receiver.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver.server_address[1]
    finally:
        receiver.shutdown()
        receiver.server_close()
