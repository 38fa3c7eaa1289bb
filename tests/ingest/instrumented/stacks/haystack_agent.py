"""A Haystack `Agent` on `OpenAIChatGenerator` (the server's chat completions), its tools made
from the functions' signatures and docstrings, under OpenInference's Haystack
instrumentation, or (`haystack-openllmetry`) under OpenLLMetry's Haystack instrumentation
with OpenLLMetry's OpenAI instrumentation below it, as `traceloop-sdk` turns both on. The
next turn continues the conversation: the previous run's messages without its system message
(the Agent puts its `system_prompt` first on every run) and the new user message. A failing
tool reaches the model as the tool result's error, as the Agent does unless told to raise.
`haystack-openinference-stream` and `haystack-openllmetry-stream` give the Agent a
`streaming_callback`, so its generator streams every model call (chunk by chunk to the
callback, as a UI printing them). `openlit-haystack` (and its `-stream`) runs the same Agent
under `openlit.init` (OpenLIT's Haystack and OpenAI instrumentations at once).

The components are imported before instrumenting, as an application imports them: the
instrumentor wraps the `run` of the classes registered by then (and of those a `Pipeline`
runs); an `Agent` run on its own is not a pipeline."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import main, openlit_or, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def _chunk(chunk: Any) -> None:
    """A streaming callback that shows nothing: the stream is what matters here."""


def converse(base_url: str, scenario: str, stream: bool = False) -> None:
    from haystack.components.agents import Agent
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.dataclasses import ChatMessage, ChatRole
    from haystack.tools import create_tool_from_function
    from haystack.utils import Secret

    generator = OpenAIChatGenerator(
        model=MODEL, api_base_url=base_url, api_key=Secret.from_token("test-key"), max_retries=0,
    )  # fmt: skip
    agent = Agent(
        chat_generator=generator, tools=[create_tool_from_function(fn) for fn in FUNCTIONS],
        system_prompt=SYSTEM_PROMPT, max_agent_steps=4,
        streaming_callback=_chunk if stream else None,
    )  # fmt: skip
    agent.warm_up()
    history: list[Any] = []
    for turn in SCENARIOS[scenario].turns:
        result = agent.run(messages=[*history, ChatMessage.from_user(turn.request)])
        history = [m for m in result["messages"] if not m.is_from(ChatRole.SYSTEM)]


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    # Haystack's packages import lazily: naming the classes imports (registers) them.
    from haystack.components.agents import Agent  # noqa: F401
    from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: F401

    if stack.startswith("openlit"):
        with openlit_or(stack, out, scenario, lambda _: None):
            converse(base_url, scenario, stack.endswith("-stream"))
        return
    with providers(stack, out, scenario) as (tracer_provider, _):
        if stack.startswith("haystack-openllmetry"):
            from opentelemetry.instrumentation.haystack import HaystackInstrumentor as Traceloop
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor

            Traceloop().instrument(tracer_provider=tracer_provider)
            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        else:
            from openinference.instrumentation.haystack import HaystackInstrumentor

            HaystackInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, scenario, stack.endswith("-stream"))


ENV = {"TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
