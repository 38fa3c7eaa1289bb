"""The raw Anthropic tool loop of `anthropic_loop` under Logfire's `instrument_anthropic()`:
`anthropic-logfire` in the attribute format Logfire defaults to (5.x: OTel GenAI
attributes, `request_data` only the model), `anthropic-logfire-v1` in the legacy one
(`version=1`: the whole request body in `request_data`, the answer in `response_data`),
`anthropic-logfire-stream` and `-stream-v1` in those formats with every call streamed
(`messages.stream()`, consumed to its final message).

The scripted server answers Anthropic requests as JSON only, so for the streamed stack the
client's transport asks it without `stream` and serves the SDK the answer as the Messages
API's server-sent events (message_start, a content block's start, delta and stop per block,
message_delta with the stop reason and output tokens, message_stop): the SDK and Logfire
see a real stream, the wire the answer it spells."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.stacks.anthropic_loop import converse
from tests.ingest.instrumented.stacks.common import main
from tests.ingest.instrumented.stacks.logfire_setup import logfire_configured

VERSIONS = {"anthropic-logfire": None, "anthropic-logfire-v1": 1, "anthropic-logfire-stream": None,
            "anthropic-logfire-stream-v1": 1}


def _events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**usage, "output_tokens": 0}}  # fmt: skip
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opened, delta = {"type": "text", "text": ""}, {"type": "text_delta",
                                                          "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": opened}
        yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                      "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "usage": {"output_tokens":
                                                                usage["output_tokens"]},
                            "delta": {"stop_reason": message["stop_reason"],
                                      "stop_sequence": message.get("stop_sequence")}}
    yield "message_stop", {"type": "message_stop"}


def _streaming_client(base_url: str) -> Any:
    import anthropic
    import httpx2

    inner = httpx2.HTTPTransport()

    class SseFromJson(httpx2.BaseTransport):
        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            body = json.loads(request.read())
            if not body.pop("stream", False):
                return inner.handle_request(request)
            headers = {k: v for k, v in request.headers.items() if k.lower() != "content-length"}
            plain = httpx2.Request(request.method, request.url, headers=headers,
                                   content=json.dumps(body).encode())  # fmt: skip
            answer = inner.handle_request(plain)
            answer.read()
            if answer.status_code != 200:
                return answer
            sse = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n"
                          for name, data in _events(answer.json()))  # fmt: skip
            return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                                   content=sse.encode(), request=request)  # fmt: skip

    return anthropic.Anthropic(base_url=base_url, api_key="test-key", max_retries=0,
                               http_client=httpx2.Client(transport=SseFromJson()))  # fmt: skip


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with logfire_configured(stack, out, scenario) as logfire:
        import anthropic

        version = VERSIONS[stack]
        logfire.instrument_anthropic(**({} if version is None else {"version": version}))
        if stack.startswith("anthropic-logfire-stream"):
            converse(_streaming_client(base_url), scenario, stream=True)
            return
        client = anthropic.Anthropic(base_url=base_url, api_key="test-key", max_retries=0)
        converse(client, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
