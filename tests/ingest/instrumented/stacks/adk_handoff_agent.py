"""Two Google ADK `LlmAgent`s on ADK's native Gemini model against the scripted server's
Gemini route, traced by ADK itself (content in spans, as `adk-spans`): a triage agent whose
sub-agent is the weather specialist, reached by ADK's `transfer_to_agent` tool (the model
names the agent; ADK then runs it on the same session, the same user message). The
specialist may not transfer back, so the next user message goes to the triage agent again.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import (
    ALL_SCENARIOS,
    SPECIALIST_AGENT,
    SPECIALIST_PROMPT,
    SPECIALIST_TOOLS,
    TRIAGE_AGENT,
    TRIAGE_PROMPT,
)
from tests.ingest.instrumented.stacks.adk_agent import APP, USER, _tool_error
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS
from tests.ingest.instrumented.stacks.wire import GEMINI_MODEL


async def converse(base_url: str, stack: str, scenario: str) -> None:
    from google.adk.agents import LlmAgent
    from google.adk.models.google_llm import Gemini
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    model = Gemini(model=GEMINI_MODEL, base_url=base_url)
    specialist = LlmAgent(
        name=SPECIALIST_AGENT, model=model, instruction=SPECIALIST_PROMPT,
        description="Answers weather questions.",
        tools=[fn for fn in FUNCTIONS if fn.__name__ in SPECIALIST_TOOLS],
        on_tool_error_callback=_tool_error,
        disallow_transfer_to_parent=True, disallow_transfer_to_peers=True,
    )  # fmt: skip
    triage = LlmAgent(name=TRIAGE_AGENT, model=model, instruction=TRIAGE_PROMPT,
                      sub_agents=[specialist])  # fmt: skip
    runner = InMemoryRunner(agent=triage, app_name=APP)
    session = f"sess-{stack}-{scenario}"
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=session)
    for turn in ALL_SCENARIOS[scenario].turns:
        message = types.Content(role="user", parts=[types.Part(text=turn.request)])
        async for _ in runner.run_async(user_id=USER, session_id=session, new_message=message):
            pass


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        asyncio.run(converse(base_url, stack, scenario))


ENV = {
    "GOOGLE_API_KEY": "test-key",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
