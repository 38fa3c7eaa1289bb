"""LangGraph's prebuilt ReAct agent on `ChatOpenAI`; a checkpointer thread carries the
conversation across turns. Instrumented by OpenLLMetry's LangChain instrumentation
(`langgraph-openllmetry`; `-stream` drives it with `agent.stream(..., stream_mode="messages")`,
so the chat model streams its tokens), or by two vendors at once
(`langgraph-openinference-mixed`, `-stream`): OpenInference's LangChain instrumentation for
the framework and OpenLLMetry's OpenAI instrumentation for the client under it, each
recording every model call (`langgraph-openinference-otel`, `-stream`: the OTel contrib
OpenAI instrumentation for the client instead; `langgraph-anthropic-openinference`,
`-stream`: `ChatAnthropic` under OpenInference's LangChain and Anthropic instrumentations);
or by OpenLIT (`openlit-langgraph`,
`-stream`), whose one `openlit.init` instruments LangGraph, LangChain and the OpenAI
client under them at once, exporting through the global provider `providers()` set (as
`openlit_loop`)."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def converse(base_url: str, stack: str, scenario: str) -> None:
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import ToolNode, create_react_agent

    if "-anthropic-" in stack:
        from langchain_anthropic import ChatAnthropic

        llm = ChatAnthropic(model_name="claude-sonnet-4-5", base_url=base_url,
                            api_key="test-key", max_retries=0)  # type: ignore[call-arg]
    else:
        from langchain_openai import ChatOpenAI

        llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="test-key", max_retries=0)
    # LangGraph's default passes only invocation errors back to the model; the corpus's
    # runs told the model every tool error, as `handle_tool_errors=True` does.
    node: type[Any] = ToolNode
    if "-translated" in stack:
        # The translator pins OpenLLMetry's LangChain instrumentation at 0.53.3, whose
        # `create_react_agent` wrapper iterates the tools argument (`patch.py`).
        class IterableNode(ToolNode):  # type: ignore[misc]
            def __iter__(self) -> Iterator[Any]:
                return iter(self.tools_by_name.values())

        node = IterableNode
    tools = node([tool(fn) for fn in FUNCTIONS], handle_tool_errors=True)
    if "prompt" in inspect.signature(create_react_agent).parameters:
        agent = create_react_agent(
            llm, tools, prompt=SYSTEM_PROMPT, name=AGENT_NAME,
            checkpointer=InMemorySaver(),
        )  # fmt: skip
    else:  # LangGraph 0.2 (a `-0.x` stack): the system prompt was `state_modifier`, no name
        agent = create_react_agent(llm, tools, state_modifier=SYSTEM_PROMPT,
                                   checkpointer=InMemorySaver())  # fmt: skip
    config = {"configurable": {"thread_id": f"sess-{stack}-{scenario}"}}
    for turn in SCENARIOS[scenario].turns:
        said = {"messages": [{"role": "user", "content": turn.request}]}
        if stack.endswith("-stream"):
            for _ in agent.stream(said, config, stream_mode="messages"):  # token by token
                pass
        else:
            agent.invoke(said, config)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        if stack.startswith("openlit-"):
            import openlit

            openlit.init(application_name=stack, capture_message_content=True,
                         disable_metrics=True)
        elif stack.startswith("langgraph-openinference-mixed"):
            from openinference.instrumentation.langchain import LangChainInstrumentor
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor

            LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        elif stack.startswith("langgraph-anthropic-openinference"):
            from openinference.instrumentation.anthropic import AnthropicInstrumentor
            from openinference.instrumentation.langchain import LangChainInstrumentor

            LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
            AnthropicInstrumentor().instrument(tracer_provider=tracer_provider)
        elif stack.startswith("langgraph-openinference-0."):  # an old release, alone
            from openinference.instrumentation.langchain import LangChainInstrumentor

            LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
        elif stack.startswith("langgraph-openinference-otel"):
            from openinference.instrumentation.langchain import LangChainInstrumentor
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as V2

            LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
            V2().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
        else:
            from opentelemetry.instrumentation.langchain import LangchainInstrumentor

            LangchainInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, stack, scenario)


# openai-v2's newest conventions, content on its spans and in its log records both.
_OTEL = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
         "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_AND_EVENT"}

if __name__ == "__main__":
    otel = sys.argv[1].startswith("langgraph-openinference-otel")
    sys.exit(main(sys.argv[1:], {"TRACELOOP_TRACE_CONTENT": "true", **(_OTEL if otel else {})},
                  run))
