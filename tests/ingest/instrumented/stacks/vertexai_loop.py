"""A raw-client agent loop on the Vertex AI SDK's `GenerativeModel` (google-cloud-aiplatform's
`vertexai` package, deprecated since June 2025 but still shipped), with function
declarations, under one instrumentation of it per stack: OpenInference's (it wraps the
GAPIC client's methods, so it sees the `GenerateContentRequest` and its response) or
OpenLLMetry's (it wraps `GenerativeModel.generate_content`), plain and `-stream`. OpenLLMetry's
(opentelemetry-instrumentation-vertexai 0.62 `__init__.py`) records a response's text as
`response.candidates[0].text`, a stream's as each chunk's `.text`, outside its error guard:
for an answer that calls a function the SDK raises there ("Cannot get the Candidate text"),
into the app, so its stacks run only the scenario with no tool call.

The loop runs the tools the model asks for and sends their results back as
`function_response` parts (`output` or `error`, as the Gemini API documents them), each
naming the call it answers by id. It uses `vertexai.preview.generative_models`: the GA
module converts every request to the v1 API, whose `FunctionCall` and `FunctionResponse`
have no `id` (the server's ids would be dropped and no result could name its call); the
preview module's v1beta1 keeps them. Credentials are anonymous, the transport REST.

The SDK's REST paths are Vertex's (`/<version>/projects/<p>/locations/<l>/publishers/google/
models/<model>:generateContent`), and a REST stream is one JSON array of responses
(`$alt=json`), not server-sent events; the scripted server speaks the Gemini API's paths
and `alt=sse` stream. So the SDK's endpoint is a loopback forwarder in this process
(`_Forwarder`) that maps each path onto the server's Gemini route and re-frames a stream's
events as the array: the request and each response body pass through unchanged."""

from __future__ import annotations

import json
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import SCENARIOS, SYSTEM_PROMPT, TOOLS
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.google_genai_loop import _run
from tests.ingest.instrumented.stacks.otlp_receiver import loopback
from tests.ingest.instrumented.stacks.wire import GEMINI_MODEL

ENV = {"TRACELOOP_TRACE_CONTENT": "true"}


@contextmanager
def _forwarder(base_url: str) -> Iterator[str]:
    """A loopback endpoint for the SDK that posts each request to the server's Gemini route
    (`<base>/<version>/models/<model>:<method>`); yields its `http://host:port`."""

    class Forward(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            path = self.path.split("?")[0].strip("/").split("/")
            version, (model, method) = path[0], path[-1].split(":")
            stream = method == "streamGenerateContent"
            url = f"{base_url}/{version}/models/{model}:{method}" + ("?alt=sse" if stream else "")
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = urllib.request.Request(
                url, data=body, headers={"Content-Type": "application/json"})  # fmt: skip
            with urllib.request.urlopen(request) as answer:
                raw = answer.read()
            if stream:
                chunks = [json.loads(line[len(b"data: "):])
                          for line in raw.splitlines() if line.startswith(b"data: ")]  # fmt: skip
                raw = json.dumps(chunks).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with loopback(Forward) as url:
        yield url


def _instrument(stack: str, tracer_provider: Any) -> None:
    if stack.startswith("vertexai-openinference"):
        from openinference.instrumentation.vertexai import VertexAIInstrumentor

        VertexAIInstrumentor().instrument(tracer_provider=tracer_provider)
    else:
        from opentelemetry.instrumentation.vertexai import VertexAIInstrumentor as Traceloop

        Traceloop().instrument(tracer_provider=tracer_provider)


def _streamed(chunks: Any) -> Any:
    """A stream read to its end, as the model's content its chunks spell."""
    from vertexai.preview.generative_models import Content, Part

    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for chunk in chunks:
        for part in chunk.candidates[0].content.to_dict().get("parts") or ():
            text += [part["text"]] if part.get("text") else []
            calls += [part] if "function_call" in part else []
    parts = [Part.from_text("".join(text))] if text else []
    return Content(role="model", parts=parts + [Part.from_dict(c) for c in calls])


def _arguments(args: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as its JSON said them: a protobuf Struct holds every number as a
    double, so `top_k: 2` comes back 2.0 (a slice index it cannot be)."""
    return {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in args.items()}


def converse(scenario: str, stream: bool) -> None:
    from vertexai.preview.generative_models import (
        Content,
        FunctionDeclaration,
        GenerativeModel,
        Part,
        Tool,
    )

    declarations = [
        FunctionDeclaration(name=t["function"]["name"], description=t["function"]["description"],
                            parameters=t["function"]["parameters"])
        for t in TOOLS
    ]  # fmt: skip
    model = GenerativeModel(GEMINI_MODEL, system_instruction=SYSTEM_PROMPT,
                            tools=[Tool(function_declarations=declarations)])  # fmt: skip
    contents: list[Any] = []
    for turn in SCENARIOS[scenario].turns:
        contents.append(Content(role="user", parts=[Part.from_text(turn.request)]))
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            if stream:
                said = _streamed(model.generate_content(contents, stream=True))
            else:
                said = model.generate_content(contents).candidates[0].content
            contents.append(said)
            calls = [p["function_call"] for p in said.to_dict().get("parts") or ()
                     if "function_call" in p]  # fmt: skip
            if not calls:
                break
            contents.append(Content(role="user", parts=[
                Part.from_dict({"function_response": {
                    "id": c.get("id"), "name": c["name"],
                    "response": _run(c["name"], _arguments(c.get("args") or {}))}})
                for c in calls
            ]))  # fmt: skip


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _), _forwarder(base_url) as url:
        _instrument(stack, tracer_provider)
        import vertexai
        from google.auth.credentials import AnonymousCredentials

        vertexai.init(project="turnscore-stacks", location="us-central1",
                      credentials=AnonymousCredentials(), api_endpoint=url,
                      api_transport="rest")  # fmt: skip
        converse(scenario, stack.endswith("-stream"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
