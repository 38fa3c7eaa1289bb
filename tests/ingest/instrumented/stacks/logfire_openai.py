"""The OpenAI SDK and the OpenAI Agents SDK under Logfire's own instrumentation, Logfire
configured as `logfire_setup` does (no account, nothing sent, the harness's file exporters on
Logfire's providers), in the attribute format Logfire defaults to:

- `logfire-openai` / `-stream`: `logfire.instrument_openai()` over the raw chat completions
  tool loop (`driver.converse`), every call streamed or not;
- `logfire-openai-responses` / `-stream`: the same over the Responses API loop
  (`openai_loop.converse_responses`);
- `logfire-openai-agents` / `-stream`: `logfire.instrument_openai_agents()` (Logfire wraps
  the SDK's trace provider: one Logfire span per SDK span; the SDK's own processor, its
  export to OpenAI, is removed) over `openai_agents_agent.converse`, its agent on
  `OpenAIChatCompletionsModel`, each turn run or streamed;
- `logfire-openai-agents-responses` / `-stream`: the same agent on the SDK's default
  `OpenAIResponsesModel`.
The agents stacks instrument the OpenAI client too (`instrument_openai()`), as Logfire's
documentation pairs them: Logfire then records nothing of its own under the agent's model
spans, which must not double the calls.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.ingest.instrumented.stacks.common import main
from tests.ingest.instrumented.stacks.logfire_setup import logfire_configured


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    stream = stack.endswith("-stream")
    with logfire_configured(stack, out, scenario) as logfire:
        import openai

        if stack.startswith("logfire-openai-agents"):
            from agents import set_trace_processors

            from tests.ingest.instrumented.stacks.openai_agents_agent import converse

            set_trace_processors([])  # the SDK's own export to OpenAI: nothing sent
            logfire.instrument_openai_agents()
            logfire.instrument_openai()
            asyncio.run(converse(base_url, scenario, "-responses" in stack, stream))
            return
        logfire.instrument_openai()
        client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
        if "-responses" in stack:
            from tests.ingest.instrumented.stacks.openai_loop import converse_responses

            converse_responses(client, scenario, stream)
        else:
            from tests.ingest.instrumented.driver import converse

            converse(client, scenario, stream)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
