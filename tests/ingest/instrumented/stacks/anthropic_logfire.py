"""The raw Anthropic tool loop of `anthropic_loop` under Logfire's `instrument_anthropic()`:
`anthropic-logfire` in the attribute format Logfire defaults to (5.x: OTel GenAI
attributes, `request_data` only the model), `anthropic-logfire-v1` in the legacy one
(`version=1`: the whole request body in `request_data`, the answer in `response_data`),
`anthropic-logfire-stream` and `-stream-v1` in those formats with every call streamed
(`messages.stream()`, consumed to its final message; the scripted server answers with the
Messages API's server-sent events)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.stacks.anthropic_loop import converse
from tests.ingest.instrumented.stacks.common import main
from tests.ingest.instrumented.stacks.logfire_setup import logfire_configured

VERSIONS = {"anthropic-logfire": None, "anthropic-logfire-v1": 1, "anthropic-logfire-stream": None,
            "anthropic-logfire-stream-v1": 1}


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with logfire_configured(stack, out, scenario) as logfire:
        import anthropic

        version = VERSIONS[stack]
        logfire.instrument_anthropic(**({} if version is None else {"version": version}))
        client = anthropic.Anthropic(base_url=base_url, api_key="test-key", max_retries=0)
        converse(client, scenario, stream=stack.startswith("anthropic-logfire-stream"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
