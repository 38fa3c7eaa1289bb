"""The agents of `llamaindex_agent`, `agno_agent`, `dspy_agent` and `smolagents_agent` (the
same agent and conversation each), under the OTel project's GenAI instrumentation of their
framework (`opentelemetry-instrumentation-genai-<framework>`, from opentelemetry-python-genai,
on `opentelemetry-util-genai`: invoke_agent, chat and execute_tool spans in the newest GenAI
semantic conventions), content captured on spans (`span_only`). A stack named
`genai-<framework>-openai...` turns the same project's OpenAI client instrumentation
(`opentelemetry-instrumentation-genai-openai`) on as well: two instrumentations of one
family, each seeing the model calls. `-stream` streams where the driver it borrows does;
`-handoff` (LlamaIndex) and `-team...` (Agno) run the multi-agent scenarios of
`llamaindex_handoff_agent` and `agno_team_agent`; `genai-dspy-json` configures DSPy's
`JSONAdapter` (as `dspy-openinference-json`)."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Callable
from pathlib import Path

from tests.ingest.instrumented.stacks.common import main, providers


def _llama_index(base_url: str, stack: str, scenario: str) -> None:
    if "-handoff" in stack:
        from tests.ingest.instrumented.stacks.llamaindex_handoff_agent import converse
    else:
        from tests.ingest.instrumented.stacks.llamaindex_agent import converse
    asyncio.run(converse(base_url, scenario))


def _agno(base_url: str, stack: str, scenario: str) -> None:
    if "-team" in stack:
        from tests.ingest.instrumented.stacks.agno_team_agent import converse as team
    else:
        from tests.ingest.instrumented.stacks.agno_agent import converse as team
    team(base_url, stack, scenario)


def _dspy(base_url: str, stack: str, scenario: str) -> None:
    from tests.ingest.instrumented.stacks.dspy_agent import converse

    converse(base_url, scenario, stack.endswith("-json"))


def _smolagents(base_url: str, stack: str, scenario: str) -> None:
    from tests.ingest.instrumented.stacks.smolagents_agent import converse

    converse(base_url, scenario, stack.endswith("-stream"))


# framework: (its instrumentation's module and instrumentor, how its agent converses)
FRAMEWORKS: dict[str, tuple[str, str, Callable[[str, str, str], None]]] = {
    "llama-index": ("opentelemetry.instrumentation.genai.llama_index", "LlamaIndexInstrumentor",
                    _llama_index),
    "agno": ("opentelemetry.instrumentation.genai.agno", "AgnoInstrumentor", _agno),
    "dspy": ("opentelemetry.instrumentation.genai.dspy", "DSPyInstrumentor", _dspy),
    "smolagents": ("opentelemetry.instrumentation.genai.smolagents", "SmolagentsInstrumentor",
                   _smolagents),
}  # fmt: skip


def _framework(stack: str) -> str:
    return next(f for f in FRAMEWORKS if stack.startswith(f"genai-{f}"))


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    framework = _framework(stack)
    module, instrumentor, converse = FRAMEWORKS[framework]
    with providers(stack, out, scenario) as (tracer_provider, logger_provider):
        getattr(importlib.import_module(module), instrumentor)().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )
        if stack.startswith(f"genai-{framework}-openai"):
            from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(
                tracer_provider=tracer_provider, logger_provider=logger_provider
            )
        converse(base_url, stack, scenario)


ENV = {
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
    "AGNO_TELEMETRY": "false",
    # as dspy_agent's: DSPy's disk cache outside the repository, LiteLLM's bundled prices
    "DSPY_CACHEDIR": "/tmp/dspy-stack-cache",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
