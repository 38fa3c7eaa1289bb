"""A LlamaIndex `FunctionAgent` (its default: streaming) on the OpenAI LLM, under
OpenInference, alone or (`llamaindex-openinference-openllmetry`) with OpenLLMetry's OpenAI
instrumentation recording the client under it, or under OpenLLMetry alone
(`llamaindex-openllmetry`: its LlamaIndex instrumentation, which makes no span of an `OpenAI`
LLM's own and leaves the model calls to its OpenAI instrumentation, installed beside it as
`Traceloop.init` does), or under OpenLIT (`openlit-llamaindex`: `openlit.init`, its
LlamaIndex and OpenAI instrumentations at once); one `Context` carries the conversation
across a scenario's turns."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, openlit_or, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


async def converse(base_url: str, scenario: str) -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.core.workflow import Context
    from llama_index.llms.openai import OpenAI

    llm = OpenAI(model=MODEL, api_base=base_url, api_key="test-key", max_retries=0)
    agent = FunctionAgent(
        name=AGENT_NAME, description="Answers with the tools.", system_prompt=SYSTEM_PROMPT,
        tools=[FunctionTool.from_defaults(fn) for fn in FUNCTIONS], llm=llm,
    )  # fmt: skip
    ctx = Context(agent)
    for turn in SCENARIOS[scenario].turns:
        await agent.run(turn.request, ctx=ctx)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    if stack.startswith("openlit"):
        with openlit_or(stack, out, scenario, lambda _: None):
            asyncio.run(converse(base_url, scenario))
        return
    with providers(stack, out, scenario) as (tracer_provider, _):
        if stack == "llamaindex-openllmetry":
            from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor as Traceloop
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor

            Traceloop().instrument(tracer_provider=tracer_provider)
            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
            asyncio.run(converse(base_url, scenario))
            return
        from openinference.instrumentation import using_session
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        LlamaIndexInstrumentor().instrument(tracer_provider=tracer_provider)
        if stack == "llamaindex-openinference-openllmetry":
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        with using_session(f"sess-{stack}-{scenario}"):
            asyncio.run(converse(base_url, scenario))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {"TRACELOOP_TRACE_CONTENT": "true"}, run))
