"""A Strands `Agent` on its default model provider, Amazon Bedrock (`BedrockModel`: boto3's
ConverseStream, or Converse with `-nostream`), pointed at the scripted server with dummy
credentials and a fixed region; traced by Strands itself with the latest GenAI conventions
(`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`); `-botocore` adds the OTel
contrib botocore instrumentation under it, message content captured (Strands does not read
that switch), so each model call is reported twice, by Strands and by the client."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.scenarios import SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.bedrock_loop import MODEL, REGION
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        if stack.endswith("-botocore"):
            from opentelemetry.instrumentation.botocore import BotocoreInstrumentor

            BotocoreInstrumentor().instrument(
                tracer_provider=tracer_provider, logger_provider=logger_provider
            )
        import boto3
        from botocore.config import Config
        from strands import Agent, tool
        from strands.models.bedrock import BedrockModel

        session = boto3.Session(aws_access_key_id="test-key",
                                aws_secret_access_key="test-secret", region_name=REGION)
        model = BedrockModel(
            boto_session=session, endpoint_url=base_url, model_id=MODEL,
            boto_client_config=Config(retries={"max_attempts": 1}),
            streaming=not stack.endswith("-nostream"),
        )  # fmt: skip
        conversation = f"sess-{stack}-{scenario}"
        agent = Agent(
            model=model, tools=[tool(fn) for fn in FUNCTIONS], system_prompt=SYSTEM_PROMPT,
            name=AGENT_NAME, callback_handler=None,
            trace_attributes={"session.id": conversation,
                              "gen_ai.conversation.id": conversation},
        )  # fmt: skip
        for turn in SCENARIOS[scenario].turns:
            agent(turn.request)


ENV = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
       "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
