"""A CAMEL (`camel-ai`) `ChatAgent` with the scenario's tools, on CAMEL's OpenAI-compatible
model backend (chat completions through the openai SDK), one `step` per user turn; the agent
keeps the conversation in its memory across turns and runs the calls the model asks for
itself (a failing tool's error told to the model as the result). Its token counter is one
of the app's (four characters a token): CAMEL's default for OpenAI models loads tiktoken's
encodings from the network. No instrumentation covers
CAMEL itself: the export is OpenInference's OpenAI instrumentation's model calls
(`camel-openinference`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def converse(base_url: str, scenario: str) -> None:
    from camel.agents import ChatAgent
    from camel.models import ModelFactory
    from camel.toolkits import FunctionTool
    from camel.types import ModelPlatformType
    from camel.utils import BaseTokenCounter

    class Counter(BaseTokenCounter):  # type: ignore[misc]
        def count_tokens_from_messages(self, messages: list[Any]) -> int:
            return len(json.dumps(messages, default=str)) // 4

        def encode(self, text: str) -> list[int]:
            return [ord(c) for c in text]

        def decode(self, token_ids: list[int]) -> str:
            return "".join(chr(t) for t in token_ids)

    model = ModelFactory.create(model_platform=ModelPlatformType.OPENAI_COMPATIBLE_MODEL,
                                model_type=MODEL, url=base_url, api_key="test-key",
                                token_counter=Counter())  # fmt: skip
    agent = ChatAgent(system_message=SYSTEM_PROMPT, model=model,
                      tools=[FunctionTool(fn) for fn in FUNCTIONS])  # fmt: skip
    for turn in SCENARIOS[scenario].turns:
        agent.step(turn.request)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        with using_session(f"sess-{stack}-{scenario}"):
            converse(base_url, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {"CAMEL_TELEMETRY": "false"}, run))
