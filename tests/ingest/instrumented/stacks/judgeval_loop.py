"""Judgment Labs' tracer (`judgeval`), OTel-based: `Tracer.init` makes a tracer provider of
its own whose `JudgmentSpanProcessor` exports over OTLP/HTTP to `<api_url>/otel/v1/traces`,
emitting an observed span once when its input is recorded (a partial update, no end) and
again when it ends, each emission numbered (`judgment.update_id`); `@Tracer.observe`
makes a span of a kind (`judgment.span_kind`) with the call's arguments and return value
(`judgment.input`, `judgment.output`); `Tracer.wrap(client)` makes each chat completion an
`OPENAI_API_CALL` span (`gen_ai.prompt`: the request's keyword arguments as JSON,
`gen_ai.completion`: the response as JSON, or a stream's text); `Tracer.set_session_id`
propagates `judgment.session_id` to the spans below.

The agent: each user message a `@Tracer.observe(span_type="agent")` run of the raw OpenAI
tool loop (`driver._complete` on the wrapped client, streamed for `-stream`), its tools
`@Tracer.observe(span_type="tool")` functions, the conversation's history kept across
runs and its id the session. Judgment exports only through its own exporter, so `api_url`
is a loopback OTLP/HTTP receiver (`otlp_receiver`) that writes the harness's files; the
project id `Tracer.init` would ask Judgment's API for is cached first, as
`resolve_project_id` caches it. Importing `judgeval` asks PyPI for its newest version
(`utils/version_check.py`): every request not addressed to 127.0.0.1 goes through the
receiver as a proxy (`HTTPS_PROXY`), which refuses it.

    judgeval-openai, judgeval-openai-stream
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented import scenarios
from tests.ingest.instrumented.driver import _complete
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main
from tests.ingest.instrumented.stacks.otlp_receiver import receiver

ORGANIZATION = "org-test"
PROJECT_ID = "proj-test"


def _converse(stack: str, scenario: str, base_url: str) -> None:
    import openai
    from judgeval import Tracer

    client = Tracer.wrap(openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0))
    stream = stack.endswith("-stream")
    tools = {name: Tracer.observe(fn, span_type="tool")
             for name, fn in scenarios.TOOL_FUNCTIONS.items()}  # fmt: skip
    history: list[dict[str, Any]] = [{"role": "system", "content": scenarios.SYSTEM_PROMPT}]

    def run_tool(name: str, arguments: str) -> str:
        """What the model is told: the tool's result as JSON text, or what it raised."""
        try:
            result = tools[name](**json.loads(arguments))
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        return result if isinstance(result, str) else json.dumps(result)

    @Tracer.observe(span_type="agent", span_name=AGENT_NAME)
    def research_assistant(question: str) -> str:
        Tracer.set_session_id(f"sess-{stack}-{scenario}")
        history.append({"role": "user", "content": question})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            message = _complete(client, history, stream)
            history.append(message)
            if not message.get("tool_calls"):
                return str(message.get("content") or "")
            for call in message["tool_calls"]:
                fn = call["function"]
                history.append({"role": "tool", "tool_call_id": call["id"],
                                "content": run_tool(fn["name"], fn["arguments"])})  # fmt: skip
        raise RuntimeError("the turn did not end")

    for turn in scenarios.SCENARIOS[scenario].turns:
        research_assistant(turn.request)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with receiver(out, scenario) as url:
        # Anything not addressed to 127.0.0.1 goes to the receiver as its proxy, which
        # refuses it: nothing leaves the machine.
        os.environ.update({"HTTPS_PROXY": url, "HTTP_PROXY": url,
                           "NO_PROXY": "127.0.0.1,localhost"})  # fmt: skip
        from judgeval import Tracer
        from judgeval.utils import resolve

        project = f"stack-{stack}"
        resolve._project_id_cache[ORGANIZATION, project] = PROJECT_ID
        Tracer.init(project_name=project, api_key="test-key", organization_id=ORGANIZATION,
                    api_url=url)  # fmt: skip
        try:
            _converse(stack, scenario, base_url)
        finally:
            Tracer.shutdown()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
