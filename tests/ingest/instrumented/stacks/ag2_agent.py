"""AG2 (the AutoGen 0.2 fork) two-agent tool use, one chat per user turn: the assistant
(`research_assistant`, a `ConversableAgent` on AG2's OpenAI client, chat completions) is
offered the scenario's tools and the user proxy executes them (`register_function(caller=,
executor=)`); the proxy sends the request, runs the calls the assistant asks for, hands it
the results, and ends the chat at the assistant's first answer without tool calls. The next
turn continues the same chat (`clear_history=False`).

`ag2-openinference`: under OpenInference's AG2 instrumentation (its agent and tool spans)
and its OpenAI instrumentation beside it (AG2's client calls the openai SDK).
`openlit-ag2`: under OpenLIT, whose one `openlit.init` instruments AG2 and the OpenAI client
under it, exporting through the global provider `providers()` set (as `openlit_loop`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def converse(base_url: str, scenario: str) -> None:
    from autogen import ConversableAgent, register_function

    llm_config = {"config_list": [{"api_type": "openai", "model": MODEL, "base_url": base_url,
                                   "api_key": "test-key", "max_retries": 0}],
                  "cache_seed": None}  # fmt: skip

    def answered(message: dict[str, Any]) -> bool:
        return not message.get("tool_calls")

    assistant = ConversableAgent(AGENT_NAME, system_message=SYSTEM_PROMPT,
                                 llm_config=llm_config, human_input_mode="NEVER")  # fmt: skip
    proxy = ConversableAgent("user", llm_config=False, human_input_mode="NEVER",
                             is_termination_msg=answered, max_consecutive_auto_reply=6)  # fmt: skip
    for fn in FUNCTIONS:
        register_function(fn, caller=assistant, executor=proxy, name=fn.__name__,
                          description=(fn.__doc__ or "").strip().split("\n")[0])  # fmt: skip
    for k, turn in enumerate(SCENARIOS[scenario].turns):
        proxy.initiate_chat(assistant, message=turn.request, clear_history=k == 0,
                            silent=True)  # fmt: skip


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        if stack.startswith("openlit-"):
            import openlit

            openlit.init(application_name=stack, capture_message_content=True,
                         disable_metrics=True)
            converse(base_url, scenario)
            return
        from openinference.instrumentation.ag2 import AG2Instrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor

        AG2Instrumentor().instrument(tracer_provider=tracer_provider)
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        converse(base_url, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {"AUTOGEN_USE_DOCKER": "False"}, run))
