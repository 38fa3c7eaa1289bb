"""What AgentOps' SDK sends: `agentops.init()` without an AgentOps account (no API key, so
no authentication and no JWT), its span exporter (OTLP/HTTP protobuf) pointed at a receiver
on 127.0.0.1 (`otlp_receiver`) that writes each request body it is POSTed as the recording's
file, unchanged.

- `agentops-openai` / `-stream`: the raw chat completions tool loop (`driver.converse`)
  under the OpenAI instrumentation `agentops.init()` turns on, each call streamed or not;
- `agentops-openai-agents`: the OpenAI Agents SDK agent of `openai_agents_agent` on
  `OpenAIChatCompletionsModel`, under AgentOps' Agents SDK instrumentation;
- `agentops-crewai`: the one-agent crew of `crewai_agent` (its own environment), under
  AgentOps' CrewAI instrumentation and its OpenAI one (CrewAI calls the openai SDK), CrewAI's
  own telemetry off as there.
The run's spans sit under the trace `init()` starts (`auto_start_session`), ended with
`agentops.end_trace()` when the scenario is done.

Nothing leaves the machine: AgentOps' metrics exporter has a fixed endpoint on its hosted
service (agentops `sdk/core.py`, `setup_telemetry`: `metrics_endpoint` is not among the
settings `Config` passes), so every request not addressed to 127.0.0.1 goes through a proxy
on 127.0.0.1 (`HTTPS_PROXY`), this receiver, which refuses it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.ingest.instrumented.stacks.common import main
from tests.ingest.instrumented.stacks.crewai_agent import _ENV as CREWAI_ENV
from tests.ingest.instrumented.stacks.otlp_receiver import receiver


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with receiver(out, scenario) as url:
        os.environ.update({
            "AGENTOPS_EXPORTER_ENDPOINT": f"{url}/v1/traces",
            "AGENTOPS_API_ENDPOINT": url,
            "AGENTOPS_APP_URL": url,
            "AGENTOPS_ENV_DATA_OPT_OUT": "true",  # no host facts in the committed export
            "AGENTOPS_LOG_SESSION_REPLAY_URL": "false",
            "HTTPS_PROXY": url, "HTTP_PROXY": url,
            "NO_PROXY": "127.0.0.1,localhost",
        })  # fmt: skip
        if stack.startswith("agentops-openai-agents"):
            import agents  # noqa: F401  # imported before init(), as an app's imports are
        elif stack.startswith("agentops-crewai"):
            import crewai  # noqa: F401

        import agentops
        from opentelemetry import trace

        agentops.init(trace_name=f"{stack}-{scenario}")
        if stack.startswith("agentops-openai-agents"):
            from tests.ingest.instrumented.stacks.openai_agents_agent import converse

            asyncio.run(converse(base_url, scenario))
        elif stack.startswith("agentops-crewai"):
            from tests.ingest.instrumented.stacks.crewai_agent import converse as crew

            crew(base_url, stack, scenario)
        else:
            import openai

            from tests.ingest.instrumented.driver import converse as loop

            client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
            loop(client, scenario, stack.endswith("-stream"))
        agentops.end_trace()
        provider = trace.get_tracer_provider()
        provider.force_flush()  # type: ignore[attr-defined]


# Its log file (agentops.log in the working directory, on by default) is not the export.
ENV = {"AGENTOPS_LOGGING_TO_FILE": "false", **CREWAI_ENV}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
