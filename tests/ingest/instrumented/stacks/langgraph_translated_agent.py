"""LangGraph's prebuilt ReAct agent on `ChatOpenAI` (as `langgraph_agent`; `-stream` streams
the chat model's tokens) under OpenLLMetry's LangChain instrumentation, its spans translated
into OpenInference by `openinference-instrumentation-openllmetry`'s
`OpenInferenceSpanProcessor`, put ahead of the exporter (`translated_loop._first`). The
processor replaces a workflow, task, agent or tool span's attributes with its own
(`openinference.span.kind`, `input.value`, `output.value`, a tool's `tool.*`) and adds its
`llm.*` beside a chat span's `gen_ai.*`.

The translator's pins hold the LangChain instrumentation at 0.53.3, whose `create_react_agent`
wrapper iterates the tools argument (`patch.py`, `create_agent_wrapper`): the agent's
`ToolNode` (which tells the model every tool error) is given as one that iterates its tools
(`langgraph_agent.converse`, for a `-translated` stack).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.langgraph_agent import converse
from tests.ingest.instrumented.stacks.translated_loop import _first


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation.openllmetry import OpenInferenceSpanProcessor
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        _first(tracer_provider, OpenInferenceSpanProcessor())
        LangchainInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, stack, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {"TRACELOOP_TRACE_CONTENT": "true"}, run))
