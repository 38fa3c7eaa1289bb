"""A raw-client agent loop on Google's `google-genai` SDK (`client.models.generate_content`
with function declarations, automatic function calling off: the loop runs the tools the
model asks for and sends their results back as `functionResponse` parts, `output` or `error`
as the Gemini API documents them) against the scripted server's Gemini route, under one
instrumentation of that SDK per stack: the OTel contrib one (on opentelemetry-util-genai, in
each of its content-capture modes), OpenInference's, OpenLLMetry's. A `-stream` stack calls
`generate_content_stream` (`:streamGenerateContent?alt=sse`) and puts the model's turn back
together from its chunks (text pieces joined, function calls as they came) for the
history."""

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
ENVS |= {f"{stack}-stream": ENVS[stack] for stack in (
    "google-genai-otel-spans", "google-genai-openinference", "google-genai-openllmetry")}


def _instrument(stack: str, tracer_provider: Any, logger_provider: Any) -> None:
    if stack.startswith("google-genai-otel"):
        from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor

        GoogleGenAiSdkInstrumentor().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )
    elif stack.startswith("google-genai-openinference"):
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


def _streamed(chunks: Any) -> Any:
    """A stream read to its end, as the model's content its chunks spell."""
    from google.genai import types

    text: list[str] = []
    calls: list[Any] = []
    for chunk in chunks:
        text += [p.text for p in chunk.candidates[0].content.parts or () if p.text]
        calls += chunk.function_calls or []
    parts = [types.Part(text="".join(text))] if text else []
    return types.Content(role="model", parts=parts + [
        types.Part(function_call=c) for c in calls])  # fmt: skip


def converse(client: Any, scenario: str, stream: bool) -> None:
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
            if stream:
                said = _streamed(client.models.generate_content_stream(
                    model=GEMINI_MODEL, contents=contents, config=config))  # fmt: skip
            else:
                said = client.models.generate_content(
                    model=GEMINI_MODEL, contents=contents, config=config
                ).candidates[0].content
            contents.append(said)
            calls = [p.function_call for p in said.parts or () if p.function_call]
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
        converse(client, scenario, stack.endswith("-stream"))


if __name__ == "__main__":
    stack = sys.argv[1]
    sys.exit(main(sys.argv[1:], ENVS[stack], run))
