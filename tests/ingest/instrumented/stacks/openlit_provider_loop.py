"""Raw-client agent loops on model providers' own SDKs under OpenLIT (`openlit.init`, content
captured, metrics off; it instruments every library it finds installed, and reuses the
global providers `providers()` sets): `openlit-google-genai` (the loop of
`google_genai_loop`), `openlit-mistralai` (`mistralai` 1.x's `chat.complete`/`chat.stream`,
the loop of `provider_sdk_loop`), `openlit-bedrock` (boto3's Converse, the loop of
`bedrock_loop`; no stream: OpenLIT's `converse_stream` wrapper ends its span only when the
response itself is iterated, and the documented `response["stream"]` is the raw event
stream, so no span is ever exported) and `openlit-litellm` (`litellm.completion` on the
server's chat completions); `-stream` streams each model call and puts the answer back
together."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks import bedrock_loop, google_genai_loop, provider_sdk_loop
from tests.ingest.instrumented.stacks.common import main, providers


def _mistral(base_url: str, stream: bool) -> provider_sdk_loop.Complete:
    from mistralai import Mistral  # 1.x: OpenLIT 1.45 wraps `mistralai.chat`, gone in 2.0

    client = Mistral(api_key="test-key", server_url=base_url.removesuffix("/v1"))

    def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if stream:
            return provider_sdk_loop._mistral_streamed(
                client.chat.stream(model=MODEL, messages=messages, tools=TOOLS))
        said = client.chat.complete(model=MODEL, messages=messages, tools=TOOLS).choices[0].message
        calls = [provider_sdk_loop._call(c) for c in said.tool_calls or ()]
        return {"role": "assistant", "content": said.content} | (
            {"tool_calls": calls} if calls else {})

    return complete


def _litellm(base_url: str, scenario: str, stream: bool) -> None:
    import litellm

    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            request = {"model": f"openai/{MODEL}", "api_base": base_url, "api_key": "test-key",
                       "messages": messages, "tools": TOOLS, "num_retries": 0}
            if stream:
                chunks = list(litellm.completion(**request, stream=True,
                                                 stream_options={"include_usage": True}))
                reply = litellm.stream_chunk_builder(chunks, messages=messages)
            else:
                reply = litellm.completion(**request)
            message = reply.choices[0].message
            calls = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in message.tool_calls or ()
            ]  # fmt: skip
            said: dict[str, Any] = {"role": "assistant", "content": message.content}
            messages.append(said | ({"tool_calls": calls} if calls else {}))
            if not calls:
                break
            for call in calls:
                text, _ = run_tool(call["function"]["name"], call["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    stream = stack.endswith("-stream")
    with providers(stack, out, scenario):
        import openlit

        openlit.init(application_name=stack, capture_message_content=True, disable_metrics=True)
        if stack.startswith("openlit-google-genai"):
            from google import genai
            from google.genai import types

            client = genai.Client(api_key="test-key",
                                  http_options=types.HttpOptions(base_url=base_url))
            google_genai_loop.converse(client, scenario, stream)
        elif stack.startswith("openlit-mistralai"):
            provider_sdk_loop.converse(_mistral(base_url, stream), scenario)
        elif stack.startswith("openlit-bedrock"):
            bedrock_loop.converse(bedrock_loop.client(base_url), scenario, stream=stream)
        else:
            _litellm(base_url, scenario, stream)
            import litellm

            # LiteLLM's callbacks run on its logging thread pool (as litellm_loop).
            litellm.utils.executor.shutdown(wait=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
