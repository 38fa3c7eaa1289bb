"""A raw-client agent loop on boto3's Bedrock Runtime Converse API (tools in `toolConfig`,
`toolUse` blocks answered by `toolResult` blocks, a failure as `status: error`), under the
official OTel contrib botocore instrumentation with message content captured, under
OpenLLMetry's Bedrock instrumentation (`bedrock-openllmetry*`, prompts traced; `-events`
opts into its per-message log records instead of span attributes), or under OpenInference's
(`bedrock-openinference*`), which wraps the client's `converse` and `converse_stream`;
`-stream` calls `converse_stream` and assembles each answer from its events. Dummy
credentials and a fixed region: the client signs its requests for a server that does not
check them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
REGION = "us-east-1"
TOOL_CONFIG = {
    "tools": [
        {"toolSpec": {"name": t["function"]["name"], "description": t["function"]["description"],
                      "inputSchema": {"json": t["function"]["parameters"]}}}
        for t in TOOLS
    ]
}  # fmt: skip


def client(base_url: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "bedrock-runtime", region_name=REGION, endpoint_url=base_url,
        aws_access_key_id="test-key", aws_secret_access_key="test-secret",
        config=Config(retries={"max_attempts": 1}),
    )  # fmt: skip


def _assembled(events: Any) -> dict[str, Any]:
    """A ConverseStream read to its end, as the message the events spell."""
    content: list[dict[str, Any]] = []
    block: dict[str, Any] = {}
    arguments = ""
    for event in events:
        if "contentBlockStart" in event:
            block = {"toolUse": dict(event["contentBlockStart"]["start"]["toolUse"])}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]["delta"]
            if "text" in delta:
                block["text"] = block.get("text", "") + delta["text"]
            else:
                arguments += delta["toolUse"]["input"]
        elif "contentBlockStop" in event:
            if "toolUse" in block:
                block["toolUse"]["input"] = json.loads(arguments or "{}")
            content.append(block)
            block, arguments = {}, ""
    return {"role": "assistant", "content": content}


def _reply(bedrock: Any, messages: list[dict[str, Any]], stream: bool) -> dict[str, Any]:
    request = {"modelId": MODEL, "system": [{"text": SYSTEM_PROMPT}], "messages": messages,
               "toolConfig": TOOL_CONFIG, "inferenceConfig": {"maxTokens": 1024}}  # fmt: skip
    if stream:
        return _assembled(bedrock.converse_stream(**request)["stream"])
    return dict(bedrock.converse(**request)["output"]["message"])


def converse(bedrock: Any, scenario: str, stream: bool = False) -> None:
    messages: list[dict[str, Any]] = []
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": [{"text": turn.request}]})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            message = _reply(bedrock, messages, stream)
            messages.append(message)
            uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
            if not uses:
                break
            results = []
            for use in uses:
                text, failed = run_tool(use["name"], json.dumps(use["input"]))
                results.append({"toolResult": {"toolUseId": use["toolUseId"],
                                               "content": [{"text": text}],
                                               "status": "error" if failed else "success"}})
            messages.append({"role": "user", "content": results})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        if stack.startswith("bedrock-openllmetry"):
            from opentelemetry.instrumentation.bedrock import BedrockInstrumentor

            BedrockInstrumentor(use_attributes="-events" not in stack).instrument(
                tracer_provider=tracer_provider, logger_provider=logger_provider
            )
        elif stack.startswith("bedrock-openinference"):
            from openinference.instrumentation.bedrock import BedrockInstrumentor

            BedrockInstrumentor().instrument(tracer_provider=tracer_provider)
        else:
            from opentelemetry.instrumentation.botocore import BotocoreInstrumentor

            BotocoreInstrumentor().instrument(
                tracer_provider=tracer_provider, logger_provider=logger_provider
            )
        converse(client(base_url), scenario, stream=stack.endswith("-stream"))


ENV = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
       "TRACELOOP_TRACE_CONTENT": "true"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
