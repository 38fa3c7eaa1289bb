"""MLflow tracing's autologging exported over OTLP: `mlflow.openai.autolog()` over the raw
OpenAI tool loop (`mlflow-openai`; `-stream` streams every call) and over an OpenAI Agents
SDK agent on chat completions (`mlflow-openai-agents`, the SDK's tracing processor), and
`mlflow.langchain.autolog()` over LangGraph's prebuilt ReAct agent (`mlflow-langgraph`;
`-stream` streams it by messages). `-genai` stacks turn on MLflow's translation of its spans
to the GenAI conventions at export (`MLFLOW_ENABLE_OTEL_GENAI_SEMCONV`).

MLflow keeps its own tracer provider; with `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` set and no
trace destination, it gives that provider only its `OtelSpanProcessor` (no tracking store:
mlflow `tracing/provider.py`, `_get_span_processors`). The processor's exporter is the
harness's file exporter in place of the OTLP one `get_otlp_exporter()` would build for the
(never contacted) 127.0.0.1 endpoint: the same protobuf a collector would receive, from
MLflow's own processor, which drops the trace metadata (the session among it) and copies
only user tags onto the root span.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from tests.ingest.instrumented import driver
from tests.ingest.instrumented.export import FileSpanExporter
from tests.ingest.instrumented.stacks import langgraph_agent, openai_agents_agent
from tests.ingest.instrumented.stacks.common import main, providers


def _mlflow_exports_to(out: Path, scenario: str) -> None:
    import mlflow.tracing.provider as mlflow_provider

    mlflow_provider.get_otlp_exporter = lambda: FileSpanExporter(out, f"{scenario}-mlflow")


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    if stack.endswith("-genai"):
        os.environ["MLFLOW_ENABLE_OTEL_GENAI_SEMCONV"] = "true"
    with providers(stack, out, scenario):
        _mlflow_exports_to(out, scenario)
        import mlflow
        import mlflow.tracing.provider as mlflow_provider

        try:
            if stack.startswith("mlflow-langgraph"):
                mlflow.langchain.autolog()
                langgraph_agent.converse(base_url, stack, scenario)
            elif stack == "mlflow-openai-agents":
                # Exclusive: the SDK's own exporter to OpenAI's backend goes.
                mlflow.openai.autolog(disable_openai_agent_tracer=True)
                asyncio.run(openai_agents_agent.converse(base_url, scenario))
            else:
                import openai

                mlflow.openai.autolog()
                client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
                driver.converse(client, scenario, stack.endswith("-stream"))
        finally:
            mlflow_provider.provider.get().shutdown()


ENV = {
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces",
    # Nothing is logged to a tracking store, but autolog may still open one: keep it local.
    "MLFLOW_TRACKING_URI": "sqlite:///" + os.path.join(tempfile.mkdtemp(), "mlflow.db"),
}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
