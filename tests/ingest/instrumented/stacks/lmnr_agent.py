"""Laminar's SDK (`lmnr`): `Laminar.initialize` makes its own tracer and logger providers
and instruments every library it finds installed (its forks of OpenLLMetry's
instrumentations and its own, each span stamped with `lmnr.*` attributes by its span
processor). Laminar exports only through its own OTLP exporters, so here they post to a
loopback OTLP/HTTP receiver (`_Receiver`) that writes each request body, the
`ExportTraceServiceRequest` (or logs request) the exporter sent, as the harness's files.
The raw OpenAI loop (`lmnr-openai`, `-stream`: `driver.converse`, run by `lmnr_loop`) or
LangGraph's prebuilt ReAct agent on `ChatOpenAI` (`lmnr-langgraph`, `-stream`:
`langgraph_agent.converse`)."""

from __future__ import annotations

import gzip
import itertools
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.ingest.instrumented.stacks.common import main


class _Receiver(ThreadingHTTPServer):
    """OTLP/HTTP on 127.0.0.1: each POST to /v1/traces or /v1/logs written as one file."""

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


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    receiver = _Receiver(out, scenario)
    thread = threading.Thread(target=receiver.serve_forever, daemon=True)
    thread.start()
    try:
        from lmnr import Laminar

        Laminar.initialize(project_api_key="test-key", base_url="http://127.0.0.1",
                           http_port=receiver.server_address[1], force_http=True)  # fmt: skip
        try:
            if "-langgraph" in stack:
                from tests.ingest.instrumented.stacks.langgraph_agent import converse as agent

                agent(base_url, stack, scenario)
            else:
                import openai

                from tests.ingest.instrumented.driver import converse

                client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
                converse(client, scenario, stack.endswith("-stream"))
        finally:
            Laminar.shutdown()
    finally:
        receiver.shutdown()
        receiver.server_close()


ENV = {"LMNR_BASE_URL": "http://127.0.0.1"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
