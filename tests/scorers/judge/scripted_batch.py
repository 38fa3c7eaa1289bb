"""A scripted OpenAI-compatible Files + Batches server on 127.0.0.1, for batch judge tests.

Real HTTP over real sockets. `POST /v1/files` (multipart, purpose=batch) stores the upload;
`POST /v1/batches` creates a batch in `validating`; `GET /v1/batches[/{id}]` reports it;
`GET /v1/files/{id}/content` serves uploads and result files. Batches move only when the
test says so: `finish` answers every line with the chat server's reply scripting
(`scripted.ScriptedJudge`'s `default` and queued `Reply`s, as if each line had been posted
to /chat/completions), except the custom ids it is told to fail; `expire` and `cancel` do
the same for the first `done` lines and put the rest in the error file, as OpenAI does.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import queue
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.scorers.judge.scripted import Recorded, Reply, ScriptedJudge


class ScriptedBatches(ScriptedJudge):
    """The chat server's scripting (`default`, `script`, `requests`) plus Files and Batches.
    Chat completions posted directly are still answered, by the parent's handler."""

    def __init__(self) -> None:
        super().__init__()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.calls: list[Recorded] = []
        """Every Files/Batches request (path with query, headers; body for JSON posts)."""
        self.drop_create_reply = False
        """Create the next batch but close the connection without answering (a crash)."""
        self.refuse_upload: int | None = None
        """Answer the next upload with this status."""
        self.refuse_create: int | None = None
        """Answer the next batch creation with this status, creating nothing."""
        self._counter = 0
        chat_handler = self.server.RequestHandlerClass
        server = self

        class Handler(chat_handler):  # type: ignore[misc, valid-type]
            def do_GET(self) -> None:
                server._record(self, {})
                parts = urlsplit(self.path)
                path = parts.path.removeprefix("/v1").removeprefix("/openai")
                if path == "/batches":
                    limit = int(parse_qs(parts.query).get("limit", ["20"])[0])
                    data = sorted(server.batches.values(), key=lambda b: -b["created_at"])
                    after = parse_qs(parts.query).get("after", [None])[0]
                    if after:
                        ids = [b["id"] for b in data]
                        data = data[ids.index(after) + 1:]
                    self._send(200, {"object": "list", "data": data[:limit],
                                     "has_more": len(data) > limit})
                elif path.startswith("/batches/") and path[9:] in server.batches:
                    self._send(200, server.batches[path[9:]])
                elif path.startswith("/files/") and path.endswith("/content"):
                    content = server.files.get(path[7:-8])
                    if content is None:
                        self._send(404, {"error": {"message": "no such file"}})
                    else:
                        self._send_raw(200, content)
                else:
                    self._send(404, {"error": {"message": f"no route {path}"}})

            def do_POST(self) -> None:
                path = urlsplit(self.path).path.removeprefix("/v1").removeprefix("/openai")
                if path.endswith("/chat/completions"):
                    return super().do_POST()
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if path == "/files":
                    server._record(self, {})
                    if server.refuse_upload is not None:
                        status, server.refuse_upload = server.refuse_upload, None
                        return self._send(status, {"error": {"message": "upload refused"}})
                    fields = _multipart(self.headers["Content-Type"], raw)
                    assert fields["purpose"] == b"batch", fields
                    file_id = server._new_id("file")
                    server.files[file_id] = fields["file"]
                    return self._send(200, {"id": file_id, "object": "file",
                                            "purpose": "batch", "bytes": len(fields["file"])})
                if path == "/batches":
                    body = json.loads(raw)
                    server._record(self, body)
                    if server.refuse_create is not None:
                        status, server.refuse_create = server.refuse_create, None
                        return self._send(status, {"error": {"message": "try later"}})
                    batch = server._create(body)
                    if server.drop_create_reply:
                        server.drop_create_reply = False
                        self.close_connection = True
                        return None
                    return self._send(200, batch)
                return self._send(404, {"error": {"message": f"no route {path}"}})

            def _send(self, status: int, body: Any) -> None:
                self._send_raw(status, json.dumps(body).encode(), "application/json")

            def _send_raw(self, status: int, data: bytes,
                          kind: str = "application/octet-stream") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server.RequestHandlerClass = Handler

    def _record(self, handler: Any, body: dict[str, Any]) -> None:
        with self._lock:
            self.calls.append(Recorded(handler.path, dict(handler.headers), body))

    def _new_id(self, kind: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{kind}-{self._counter}"

    def _create(self, body: dict[str, Any]) -> dict[str, Any]:
        assert body["completion_window"] == "24h" and body["input_file_id"] in self.files
        batch_id = self._new_id("batch")
        batch = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                 "input_file_id": body["input_file_id"], "completion_window": "24h",
                 "status": "validating", "output_file_id": None, "error_file_id": None,
                 "created_at": 1_700_000_000 + self._counter, "completed_at": None,
                 "metadata": body.get("metadata") or {}, "errors": None,
                 "request_counts": {"total": len(self.lines(batch_id, body)),
                                    "completed": 0, "failed": 0}}
        self.batches[batch_id] = batch
        return batch

    def lines(self, batch_id: str, body: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The request lines of a batch's input file."""
        file_id = (body or self.batches[batch_id])["input_file_id"]
        return [json.loads(line) for line in self.files[file_id].splitlines() if line.strip()]

    def run(self, batch_id: str) -> None:
        """Validating -> in progress: what a poll then sees."""
        self.batches[batch_id]["status"] = "in_progress"

    def finish(self, batch_id: str, *, fail: set[str] = frozenset(),  # type: ignore[assignment]
               status: str = "completed", done: int | None = None,
               error_code: str = "server_error") -> None:
        """End a batch: the first `done` lines (all by default) get the scripted reply,
        except the custom ids in `fail`; the rest get `error_code` in the error file."""
        lines = self.lines(batch_id)
        done = len(lines) if done is None else done
        out, err = [], []
        for n, line in enumerate(lines):
            cid = line["custom_id"]
            if n >= done or cid in fail:
                code = error_code if n >= done else "server_error"
                err.append({"id": f"req-{n}", "custom_id": cid, "response": None,
                            "error": {"code": code, "message": f"scripted {code}"}})
                continue
            reply = self._reply_for(line["body"])
            entry = {"id": f"req-{n}", "custom_id": cid,
                     "response": {"status_code": reply.status, "request_id": f"r{n}",
                                  "body": reply.body}, "error": None}
            (out if reply.status == 200 else err).append(entry)
        batch = self.batches[batch_id]
        for entries, field in ((out, "output_file_id"), (err, "error_file_id")):
            if entries:
                file_id = self._new_id("file")
                self.files[file_id] = "".join(json.dumps(e) + "\n" for e in entries).encode()
                batch[field] = file_id
        batch["status"] = status
        batch["completed_at" if status == "completed" else f"{status}_at"] = (
            batch["created_at"] + 3600)
        batch["request_counts"] = {"total": len(lines), "completed": len(out),
                                   "failed": len(err)}

    def fail_validation(self, batch_id: str, message: str) -> None:
        batch = self.batches[batch_id]
        batch["status"] = "failed"
        batch["errors"] = {"object": "list",
                           "data": [{"code": "invalid_request", "message": message}]}

    def _reply_for(self, body: dict[str, Any]) -> Reply:
        try:
            return self.replies.get_nowait()
        except queue.Empty:
            return self.default(body)


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    out = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        out[str(name)] = part.get_payload(decode=True)
    return out


