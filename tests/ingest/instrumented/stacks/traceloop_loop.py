"""The raw OpenAI client loop (`driver.converse`) under `traceloop-sdk`, OpenLLMetry's SDK, as
an application instruments its own code with it: `Traceloop.init` (which instruments the
openai client) and its decorators: a `@workflow` for the conversation, an `@agent` running
the loop, a `@task` per model step, each tool function a `@tool` called with the model's
arguments. The turns of a scenario share one session (an association property).
`Traceloop.init` gets the harness's file exporter, unbatched, with its own telemetry, metrics
and logs off: nothing leaves the machine. One configuration streams."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented import driver, scenarios
from tests.ingest.instrumented.export import FileSpanExporter
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main

STREAMED = {"traceloop-sdk-stream"}


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    from traceloop.sdk import Traceloop
    from traceloop.sdk.decorators import agent, task, tool, workflow

    Traceloop.init(
        app_name=f"stack-{stack}", exporter=FileSpanExporter(out, scenario),
        disable_batch=True, telemetry_enabled=False,
        resource_attributes={"service.name": f"stack-{stack}"},
    )  # fmt: skip
    import openai

    # The loop's own functions, decorated where they are looked up: each tool as the app
    # defines it (its arguments as keyword arguments), each model step.
    for name, fn in list(scenarios.TOOL_FUNCTIONS.items()):
        scenarios.TOOL_FUNCTIONS[name] = tool(name=name)(fn)
    driver._complete = task(name="model_step")(driver._complete)  # type: ignore[assignment]

    @agent(name=AGENT_NAME)
    def assistant(client: Any) -> None:
        driver.converse(client, scenario, stack in STREAMED)

    @workflow(name="chat_session")
    def session() -> None:
        assistant(openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0))

    Traceloop.set_association_properties({"session_id": f"sess-{stack}-{scenario}"})
    session()  # unbatched: every span is in its file when it ends


ENV = {
    "TRACELOOP_TRACE_CONTENT": "true",
    "TRACELOOP_METRICS_ENABLED": "false",
    "TRACELOOP_LOGGING_ENABLED": "false",
}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
