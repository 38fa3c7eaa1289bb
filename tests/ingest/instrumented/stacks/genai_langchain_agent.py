"""LangChain v1's agent (`langchain.agents.create_agent`, the same agent and conversation as
`langchain_v1_agent`) under the OTel project's GenAI framework instrumentation
(`opentelemetry-instrumentation-genai-langchain`, from opentelemetry-python-genai, on
`opentelemetry-util-genai`: invoke_agent, chat and execute_tool spans in the newest GenAI
semantic conventions, content in `gen_ai.input.messages` / `gen_ai.output.messages`), content
captured on spans only (`genai-langchain`, the mode `span_only`), on spans and as
`gen_ai.client.inference.operation.details` log events (`-span-and-event`), or in those
events alone (`-event-only`: util-genai's `EVENT_ONLY` keeps content off every span, the
execute_tool spans' arguments and results too; `_invocation.py`,
`_should_capture_content_on_span`). A stack
named `...-openai...` turns the same project's OpenAI client instrumentation
(`opentelemetry-instrumentation-genai-openai`) on as well: two instrumentations of one
family, the framework's chat span and the client's each reporting one model call. Each
`-stream` drives the agent with `agent.stream(..., stream_mode="messages")`. `genai-langgraph`
runs LangGraph's prebuilt ReAct agent instead (`langgraph_agent`'s), and
`genai-langgraph-supervisor` the multi-agent scenarios on `langgraph-supervisor`
(`langgraph_supervisor_agent`'s)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.ingest.instrumented.stacks import langchain_v1_agent, langgraph_agent
from tests.ingest.instrumented.stacks import langgraph_supervisor_agent as supervisor
from tests.ingest.instrumented.stacks.common import main, providers


def converse(base_url: str, stack: str, scenario: str) -> None:
    if stack.startswith("genai-langgraph-supervisor"):
        supervisor.converse(base_url, stack, scenario)
    elif stack.startswith("genai-langgraph"):
        langgraph_agent.converse(base_url, stack, scenario)
    else:
        langchain_v1_agent.converse(base_url, stack, scenario)


def content_mode(stack: str) -> None:
    """util-genai's content mode the stack's name says (`-span-and-event`, `-event-only`,
    `-no-content`: util-genai's default; else the driver's `span_only`), the
    operation.details events on for all but `span_only`."""
    for mode in ("span_and_event", "event_only", "no_content"):
        if f"-{mode.replace('_', '-')}" in stack:
            os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = mode
            os.environ["OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT"] = "true"


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    content_mode(stack)
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )
        if "-openai" in stack:
            from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(
                tracer_provider=tracer_provider, logger_provider=logger_provider
            )
        converse(base_url, stack, scenario)


ENV = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
