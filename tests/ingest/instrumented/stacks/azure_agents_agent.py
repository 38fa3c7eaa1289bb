"""An app on the Azure AI Foundry Agents service (`azure-ai-agents`' `AgentsClient`): the
model runs server-side (the scripted service, `azure_agents_service.py`); the client creates
an agent with the scenario's tools and instructions, one thread for the scenario, and for
each user message a message and a run; it runs the tools the run asks for
(`requires_action` with `submit_tool_outputs`) and submits their outputs until the run
completes, then lists the thread's messages oldest first and reads the assistant's answer,
as the SDK's samples do. Traced by the SDK's own `AIAgentsInstrumentor` (azure-core's
OpenTelemetry tracing plugin).

- `azure-ai-agents`: the manual loop (`runs.create`, `runs.get` polls,
  `runs.submit_tool_outputs` with each tool's JSON result), content recording on
  (`AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED`, read by `instrument()`);
- `-nocontent`: the same, content recording off;
- `-steps`: the manual loop, content on, and after each run the app lists the run's steps
  (`run_steps.list`, as the SDK's tool samples print them), whose events are the only
  place the tracing records the calls a run asked for (`gen_ai.run_step.tool_calls`);
- `-auto`: `runs.create_and_process` with the functions enabled as auto function calls
  (`enable_auto_function_calls`: the SDK derives each tool's definition from the function
  and runs it itself, sending `str()` of what it returns). Each function returns its result
  as JSON text, as the SDK's samples' functions do: 1.1.0's `create_and_process` parses
  every output as JSON to look for an `"error"` key and fails on one that parses to a
  number (the calculator's `395`: `_has_errors_in_toolcalls_output`, TypeError).

The SDK requires a `TokenCredential`: a static one, and a policy that only adds its token
(azure-core's bearer policy refuses plain HTTP, and the service is on 127.0.0.1).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import ALL_SCENARIOS, MODEL, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS

_PENDING = ("queued", "in_progress", "requires_action")
_EXPIRES = 4_102_444_800


class _StaticCredential:
    """A `TokenCredential` that never asks anyone: one token, valid far ahead."""

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        from azure.core.credentials import AccessToken

        return AccessToken("test-token", _EXPIRES)


def _as_json(function: Callable[..., Any]) -> Callable[..., str]:
    """The function, returning its result as JSON text; its name, docstring and signature
    kept (the SDK derives the tool's definition from them)."""

    @functools.wraps(function)
    def returning_json(*args: Any, **kwargs: Any) -> str:
        return json.dumps(function(*args, **kwargs))

    return returning_json


def _client(base_url: str) -> Any:
    from azure.ai.agents import AgentsClient
    from azure.core.pipeline.policies import SansIOHTTPPolicy

    credential = _StaticCredential()

    class _Bearer(SansIOHTTPPolicy):  # type: ignore[misc]
        def on_request(self, request: Any) -> None:
            token = credential.get_token("https://ai.azure.com/.default").token
            request.http_request.headers["Authorization"] = f"Bearer {token}"

    return AgentsClient(endpoint=base_url, credential=credential, authentication_policy=_Bearer())


def _manual_run(client: Any, thread_id: str, agent_id: str) -> Any:
    """Poll the run; run the tools it asks for and submit their outputs."""
    run = client.runs.create(thread_id=thread_id, agent_id=agent_id)
    while run.status in _PENDING:
        run = client.runs.get(thread_id=thread_id, run_id=run.id)
        if run.status == "requires_action":
            outputs = [{"tool_call_id": c.id,
                        "output": run_tool(c.function.name, c.function.arguments)[0]}
                       for c in run.required_action.submit_tool_outputs.tool_calls]  # fmt: skip
            run = client.runs.submit_tool_outputs(thread_id=thread_id, run_id=run.id,
                                                  tool_outputs=outputs)  # fmt: skip
    return run


def _answer(client: Any, thread_id: str) -> str | None:
    from azure.ai.agents.models import ListSortOrder

    said = None
    for message in client.messages.list(thread_id=thread_id, order=ListSortOrder.ASCENDING):
        if message.role == "assistant" and message.text_messages:
            said = message.text_messages[-1].text.value
    return said


def converse(client: Any, stack: str, scenario: str) -> None:
    auto = stack.endswith("-auto")
    if auto:
        from azure.ai.agents.models import FunctionTool

        functions = FunctionTool({_as_json(f) for f in FUNCTIONS})
        client.enable_auto_function_calls(functions)
        agent = client.create_agent(model=MODEL, name=AGENT_NAME, instructions=SYSTEM_PROMPT,
                                    tools=functions.definitions)  # fmt: skip
    else:
        agent = client.create_agent(model=MODEL, name=AGENT_NAME, instructions=SYSTEM_PROMPT,
                                    tools=TOOLS)  # fmt: skip
    thread = client.threads.create()
    for turn in ALL_SCENARIOS[scenario].turns:
        client.messages.create(thread_id=thread.id, role="user", content=turn.request)
        if auto:
            run = client.runs.create_and_process(thread_id=thread.id, agent_id=agent.id,
                                                 polling_interval=0)  # fmt: skip
        else:
            run = _manual_run(client, thread.id, agent.id)
        if run.status != "completed":
            raise RuntimeError(f"run {run.id} ended {run.status}")
        if stack.endswith("-steps"):
            for step in client.run_steps.list(thread_id=thread.id, run_id=run.id):
                print(json.dumps({"step": step.id, "type": step.type}))
        print(json.dumps({"answer": _answer(client, thread.id)}))


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        from azure.ai.agents.telemetry import AIAgentsInstrumentor
        from azure.core.settings import settings

        settings.tracing_implementation = "opentelemetry"
        instrumentor = AIAgentsInstrumentor()
        instrumentor.instrument()
        try:
            with _client(base_url) as client:
                converse(client, stack, scenario)
        finally:
            instrumentor.uninstrument()


def _env(stack: str) -> dict[str, str]:
    content = "false" if "-nocontent" in stack else "true"
    return {"AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED": content,
            "AZURE_SDK_TRACING_IMPLEMENTATION": "opentelemetry"}  # fmt: skip


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], _env(sys.argv[1]), run))
