"""A raw-client agent loop on Google's `google-genai` SDK (`client.models.generate_content`
with function declarations, automatic function calling off: the loop runs the tools the
model asks for and sends their results back as `functionResponse` parts, `output` or `error`
as the Gemini API documents them) against the scripted server's Gemini route, under one
instrumentation of that SDK per stack: the OTel contrib one (on opentelemetry-util-genai, in
each of its content-capture modes), OpenInference's, OpenLLMetry's. Not streamed: the
server's Gemini route answers `generateContent` only."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import (
    SCENARIOS,
    SYSTEM_PROMPT,
    TOOL_FUNCTIONS,
    TOOLS,
)
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.wire import GEMINI_MODEL

_LATEST = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}
ENVS: dict[str, dict[str, str]] = {
    "google-genai-otel-spans": {
        **_LATEST, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
    "google-genai-otel-events": {
        **_LATEST, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY"},
    "google-genai-otel-span-and-event": {
        **_LATEST, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_AND_EVENT"},
    "google-genai-openinference": {},
    "google-genai-openllmetry": {"TRACELOOP_TRACE_CONTENT": "true"},
}  # fmt: skip


def _instrument(stack: str, tracer_provider: Any, logger_provider: Any) -> None:
    if stack.startswith("google-genai-otel"):
        from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor

        GoogleGenAiSdkInstrumentor().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )
    elif stack == "google-genai-openinference":
        from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor

        GoogleGenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    else:
        from opentelemetry.instrumentation.google_generativeai import (
            GoogleGenerativeAiInstrumentor,
        )

        GoogleGenerativeAiInstrumentor().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )


def _run(name: str, args: dict[str, Any]) -> dict[str, Any]:
    try:
        return {"output": TOOL_FUNCTIONS[name](**args)}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def converse(client: Any, scenario: str) -> None:
    from google.genai import types

    declarations = [
        types.FunctionDeclaration(
            name=t["function"]["name"], description=t["function"]["description"],
            parameters_json_schema=t["function"]["parameters"],
        ) for t in TOOLS
    ]  # fmt: skip
    config = types.GenerateContentConfig(
        system_instruction=SYSTEM_PROMPT,
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents: list[Any] = []
    for turn in SCENARIOS[scenario].turns:
        contents.append(types.Content(role="user", parts=[types.Part(text=turn.request)]))
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            reply = client.models.generate_content(
                model=GEMINI_MODEL, contents=contents, config=config
            )
            contents.append(reply.candidates[0].content)
            calls = reply.function_calls or []
            if not calls:
                break
            contents.append(types.Content(role="user", parts=[
                types.Part(function_response=types.FunctionResponse(
                    id=c.id, name=c.name, response=_run(c.name or "", dict(c.args or {}))))
                for c in calls
            ]))  # fmt: skip


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        _instrument(stack, tracer_provider, logger_provider)
        from google import genai
        from google.genai import types

        client = genai.Client(api_key="test-key", http_options=types.HttpOptions(base_url=base_url))
        converse(client, scenario)


if __name__ == "__main__":
    stack = sys.argv[1]
    sys.exit(main(sys.argv[1:], ENVS[stack], run))
