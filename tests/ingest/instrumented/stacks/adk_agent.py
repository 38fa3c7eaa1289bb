"""A Google ADK `LlmAgent` on ADK's native Gemini model (google-genai) against the scripted
server's Gemini route, traced by ADK itself. Three stacks share this driver and one
environment: content in spans, content in log records, and ADK's legacy schema (version 1:
`call_llm` spans with `gcp.vertex.agent.*`); a fourth (`adk-openinference`, its own
environment) adds OpenInference's Google ADK instrumentation to ADK's own tracing, as an
application following OpenInference's instructions has both; `adk-openllmetry` (its own
environment) adds OpenLLMetry's Google Generative AI instrumentation on the google-genai
client below ADK's default tracing, a client instrumentation beside the framework's own
spans; `openlit-adk` (its own environment) runs it under `openlit.init`, OpenLIT's Google
ADK and Google AI Studio (google-genai) instrumentations beside ADK's own tracing;
`adk-openinference-genai` (its own environment) adds OpenInference's google-genai
instrumentation on the client below ADK's default tracing (no ADK instrumentation). The
agent's tool-error callback tells the model the error, as the other frameworks do (ADK's
default raises it out of the run)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS
from tests.ingest.instrumented.stacks.wire import GEMINI_MODEL

APP, USER = "corpus", "user"

ENVS: dict[str, dict[str, str]] = {
    "adk-spans": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
    "adk-events": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY"},
    "adk-legacy": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"},
    "adk-openinference": {},
    "adk-openllmetry": {},
    "openlit-adk": {},
    "adk-openinference-genai": {},
}


def _tool_error(
    tool: Any, args: dict[str, Any], tool_context: Any, error: Exception
) -> dict[str, Any]:
    return {"error": f"{type(error).__name__}: {error}"}


async def converse(base_url: str, stack: str, scenario: str) -> None:
    from google.adk.agents import LlmAgent
    from google.adk.models.google_llm import Gemini
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    agent = LlmAgent(
        name=AGENT_NAME, model=Gemini(model=GEMINI_MODEL, base_url=base_url),
        instruction=SYSTEM_PROMPT, tools=list(FUNCTIONS), on_tool_error_callback=_tool_error,
    )  # fmt: skip
    runner = InMemoryRunner(agent=agent, app_name=APP)
    session = f"sess-{stack}-{scenario}"
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=session)
    for turn in SCENARIOS[scenario].turns:
        message = types.Content(role="user", parts=[types.Part(text=turn.request)])
        async for _ in runner.run_async(user_id=USER, session_id=session, new_message=message):
            pass


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        if stack == "adk-openinference":
            from openinference.instrumentation.google_adk import GoogleADKInstrumentor

            GoogleADKInstrumentor().instrument(tracer_provider=tracer_provider)
        elif stack == "adk-openllmetry":
            from opentelemetry.instrumentation.google_generativeai import (
                GoogleGenerativeAiInstrumentor,
            )

            GoogleGenerativeAiInstrumentor().instrument(tracer_provider=tracer_provider)
        elif stack == "adk-openinference-genai":
            from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor

            GoogleGenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        elif stack == "openlit-adk":
            import openlit

            openlit.init(application_name=stack, capture_message_content=True,
                         disable_metrics=True)  # fmt: skip
        asyncio.run(converse(base_url, stack, scenario))


if __name__ == "__main__":
    stack = sys.argv[1]
    sys.exit(main(sys.argv[1:], {"GOOGLE_API_KEY": "test-key", **ENVS[stack]}, run))
