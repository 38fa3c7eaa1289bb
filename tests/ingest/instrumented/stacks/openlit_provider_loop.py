"""Raw-client agent loops on model providers' own SDKs under OpenLIT (`openlit.init`, content
captured, metrics off; it instruments every library it finds installed, and reuses the
global providers `providers()` sets): `openlit-google-genai` (the loop of
`google_genai_loop`), `openlit-mistralai` (`mistralai` 1.x's `chat.complete`/`chat.stream`,
`mistralai_loop.mistral_complete` on plain dict messages), `openlit-bedrock` (boto3's
Converse, the loop of `bedrock_loop`; no stream: OpenLIT's `converse_stream` wrapper ends
its span only when the response itself is iterated, and the documented `response["stream"]`
is the raw event stream, so no span is ever exported) and `openlit-litellm`
(`litellm.completion` on the server's chat completions, `litellm_loop.litellm_complete`);
`-stream` streams each model call and puts the answer back together. The chat-shaped loops
are `driver.tool_loop`."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.driver import tool_loop
from tests.ingest.instrumented.stacks import bedrock_loop, google_genai_loop
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.litellm_loop import litellm_complete
from tests.ingest.instrumented.stacks.mistralai_loop import mistral_complete


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
            from mistralai import Mistral  # 1.x: OpenLIT 1.45 wraps `mistralai.chat`, gone in 2.0

            mistral = Mistral(api_key="test-key", server_url=base_url.removesuffix("/v1"))
            tool_loop(mistral_complete(mistral, stream), scenario, named_results=True)
        elif stack.startswith("openlit-bedrock"):
            bedrock_loop.converse(bedrock_loop.client(base_url), scenario, stream=stream)
        else:
            tool_loop(litellm_complete(base_url, stream), scenario)
            import litellm

            # LiteLLM's callbacks run on its logging thread pool (as litellm_loop).
            litellm.utils.executor.shutdown(wait=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
