"""MLflow tracing's DSPy autolog (`mlflow.dspy.autolog()`: its DSPy callback makes a span of
each module, predictor, adapter, LM and tool call) over the DSPy `ReAct` of `dspy_agent`,
exported over OTLP by MLflow's own tracer provider as `mlflow_agent` sets it up
(`mlflow-dspy`)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ingest.instrumented.stacks import dspy_agent
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.mlflow_agent import ENV, _mlflow_exports_to


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario):
        _mlflow_exports_to(out, scenario)
        import mlflow
        import mlflow.tracing.provider as mlflow_provider

        try:
            mlflow.dspy.autolog()
            dspy_agent.converse(base_url, scenario)
        finally:
            mlflow_provider.provider.get().shutdown()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {**ENV, **dspy_agent._ENV}, run))
