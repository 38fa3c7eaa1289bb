"""Record every stack's scenarios into `tests/fixtures/stacks/` (`make stack-fixtures`).

    python -m tests.ingest.instrumented.stacks.record [STACK ...]

For each stack whose environment exists (`.stacks/<stack>/`, made by the Makefile from
`requirements-<stack>.txt`, or for a Node stack from `js/<stack>/package.json` and its lock),
each scenario runs its driver in that environment against one `StackServer`. A scenario's
folder gets the OTLP protobuf files the SDK exported, the wire records (`wire.json`) and the
turns derived from them (`expected.json`); the stack's folder gets the versions that ran
(`versions.json`). A folder is replaced whole, only after
its driver succeeded, so a failed recording leaves the committed one as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.ingest.instrumented.scenarios import (
    ALL_SCENARIOS,
    MODEL,
    MULTI_AGENT,
    SCENARIOS,
    SYSTEM_PROMPT,
    TOOLS,
)
from tests.ingest.instrumented.stacks.expect import expected_turns
from tests.ingest.instrumented.stacks.wire import StackServer

ROOT = Path(__file__).resolve().parents[4]
VENVS = ROOT / ".stacks"
FIXTURES = ROOT / "tests" / "fixtures" / "stacks"
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Stack:
    name: str
    driver: str
    """Module under tests.ingest.instrumented.stacks."""
    api: str
    """The model API the stack calls: 'openai' (base URL ends in /v1), 'anthropic', 'gemini',
    'bedrock', 'ollama', 'cohere', or 'azure-agents' (the Azure AI Agents service, whose
    runs' model steps are chat-completions exchanges: `azure_agents_service.py`)."""
    distributions: tuple[str, ...]
    """Whose versions `versions.json` records."""
    venv: str = ""
    """The environment under .stacks/ (from requirements-<venv>.txt); the stack's name if
    empty. Stacks that differ only in configuration share one."""
    scenarios: tuple[str, ...] = tuple(SCENARIOS)
    """What it runs: `SCENARIOS`, or the multi-agent ones it opts in to (`MULTI_AGENT`)."""
    runtime: str = "python"
    """'python', or 'node': the driver is `js/<driver>.mjs`, its packages (npm names in
    `distributions`) in `.stacks/<env>/node_modules`."""

    @property
    def environment(self) -> str:
        return self.venv or self.name


STACKS: dict[str, Stack] = {
    s.name: s
    for s in (
        Stack("anthropic-openinference", "anthropic_loop", "anthropic",
              ("anthropic", "openinference-instrumentation-anthropic",
               "openinference-instrumentation", "opentelemetry-sdk")),
        Stack("anthropic-openllmetry", "anthropic_loop", "anthropic",
              ("anthropic", "opentelemetry-instrumentation-anthropic", "opentelemetry-sdk")),
        Stack("llamaindex-openinference", "llamaindex_agent", "openai",
              ("llama-index-core", "llama-index-llms-openai", "openai",
               "openinference-instrumentation-llama-index", "opentelemetry-sdk")),
        Stack("smolagents-openinference", "smolagents_agent", "openai",
              ("smolagents", "openai", "openinference-instrumentation-smolagents",
               "opentelemetry-sdk")),
        Stack("langgraph-openllmetry", "langgraph_agent", "openai",
              ("langgraph", "langchain-core", "langchain-openai", "openai",
               "opentelemetry-instrumentation-langchain", "opentelemetry-sdk")),
        Stack("strands-latest", "strands_agent", "openai",
              ("strands-agents", "openai", "opentelemetry-sdk")),
        *(Stack(name, "adk_agent", "gemini",
                ("google-adk", "google-genai", "opentelemetry-sdk"), venv="adk")
          for name in ("adk-spans", "adk-events", "adk-legacy")),
        Stack("pydantic-ai-logfire", "pydantic_ai_agent", "openai",
              ("pydantic-ai-slim", "logfire", "openai", "opentelemetry-sdk")),
        *(Stack(name, "anthropic_logfire", "anthropic",
                ("anthropic", "logfire", "opentelemetry-sdk"), venv="anthropic-logfire")
          for name in ("anthropic-logfire", "anthropic-logfire-v1", "anthropic-logfire-stream",
                       "anthropic-logfire-stream-v1")),
        *(Stack(name, "openai_loop", "openai",
                ("openai", "openinference-instrumentation-openai",
                 "opentelemetry-instrumentation-openai", "opentelemetry-instrumentation-openai-v2",
                 "opentelemetry-sdk"), venv="openai-multi")
          for name in ("openai-openinference-openllmetry", "openai-three-instrumentations",
                       "openai-three-instrumentations-stream")),
        *(Stack(name, "langgraph_agent", "openai",
                ("langgraph", "langchain-core", "langchain-openai", "openai",
                 "openinference-instrumentation-langchain",
                 "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
                venv="langgraph-openinference-mixed")
          for name in ("langgraph-openinference-mixed", "langgraph-openinference-mixed-stream")),
        *(Stack(name, "langgraph_agent", "openai",
                ("langgraph", "langchain-core", "langchain-openai", "openai",
                 "openinference-instrumentation-langchain",
                 "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai",
                 "opentelemetry-sdk"), venv="langgraph-openinference-otel")
          for name in ("langgraph-openinference-otel", "langgraph-openinference-otel-stream")),
        *(Stack(name, "langgraph_agent", "anthropic",
                ("langgraph", "langchain-core", "langchain-anthropic", "anthropic",
                 "openinference-instrumentation-langchain",
                 "openinference-instrumentation-anthropic", "opentelemetry-sdk"),
                venv="langgraph-anthropic-openinference")
          for name in ("langgraph-anthropic-openinference",
                       "langgraph-anthropic-openinference-stream")),
        *(Stack(name, "azure_agents_agent", "azure-agents",
                ("azure-ai-agents", "azure-core", "azure-core-tracing-opentelemetry",
                 "opentelemetry-sdk"), venv="azure-ai-agents")
          for name in ("azure-ai-agents", "azure-ai-agents-nocontent", "azure-ai-agents-auto",
                       "azure-ai-agents-steps")),
        Stack("llamaindex-openinference-openllmetry", "llamaindex_agent", "openai",
              ("llama-index-core", "llama-index-llms-openai", "openai",
               "openinference-instrumentation-llama-index",
               "opentelemetry-instrumentation-openai", "opentelemetry-sdk")),
        Stack("smolagents-openinference-openai", "smolagents_agent", "openai",
              ("smolagents", "openai", "openinference-instrumentation-smolagents",
               "openinference-instrumentation-openai", "opentelemetry-sdk")),
        Stack("autogen-agentchat", "autogen_agent", "openai",
              ("autogen-agentchat", "autogen-core", "autogen-ext", "openai",
               "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai",
               "opentelemetry-sdk")),
        Stack("agent-framework", "agent_framework_agent", "openai",
              ("agent-framework-core", "agent-framework-openai", "openai", "opentelemetry-sdk")),
        Stack("semantic-kernel", "semantic_kernel_agent", "openai",
              ("semantic-kernel", "openai", "opentelemetry-sdk")),
        Stack("openai-agents-otel", "openai_agents_otel_agent", "openai",
              ("openai-agents", "openai", "opentelemetry-instrumentation-openai-agents-v2",
               "opentelemetry-sdk")),
        Stack("litellm-otel", "litellm_loop", "openai", ("litellm", "opentelemetry-sdk")),
        Stack("openlit-openai", "openlit_loop", "openai",
              ("openlit", "openai", "opentelemetry-sdk")),
        Stack("openai-agents-openinference", "openai_agents_agent", "openai",
              ("openai-agents", "openai", "openinference-instrumentation-openai-agents",
               "openinference-instrumentation", "opentelemetry-sdk")),
        *(Stack(name, "crewai_agent", "openai",
                ("crewai", "openai", "openinference-instrumentation-crewai",
                 "openinference-instrumentation-openai", "opentelemetry-sdk"),
                venv="crewai-openinference")
          for name in ("crewai-openinference", "crewai-openinference-sequential")),
        Stack("agno-openinference", "agno_agent", "openai",
              ("agno", "openai", "openinference-instrumentation-agno", "opentelemetry-sdk")),
        Stack("anthropic-openinference-stream", "anthropic_loop", "anthropic",
              ("anthropic", "openinference-instrumentation-anthropic",
               "openinference-instrumentation", "opentelemetry-sdk"),
              venv="anthropic-openinference"),
        Stack("anthropic-openllmetry-stream", "anthropic_loop", "anthropic",
              ("anthropic", "opentelemetry-instrumentation-anthropic", "opentelemetry-sdk"),
              venv="anthropic-openllmetry"),
        Stack("langgraph-openllmetry-stream", "langgraph_agent", "openai",
              ("langgraph", "langchain-core", "langchain-openai", "openai",
               "opentelemetry-instrumentation-langchain", "opentelemetry-sdk"),
              venv="langgraph-openllmetry"),
        Stack("llamaindex-openllmetry", "llamaindex_agent", "openai",
              ("llama-index-core", "llama-index-llms-openai", "openai",
               "opentelemetry-instrumentation-llamaindex", "opentelemetry-instrumentation-openai",
               "opentelemetry-sdk")),
        Stack("pydantic-ai-otel", "pydantic_ai_agent", "openai",
              ("pydantic-ai-slim", "openai", "opentelemetry-sdk")),
        Stack("haystack-openinference", "haystack_agent", "openai",
              ("haystack-ai", "openai", "openinference-instrumentation-haystack",
               "openinference-instrumentation", "opentelemetry-sdk")),
        Stack("adk-openinference", "adk_agent", "gemini",
              ("google-adk", "google-genai", "openinference-instrumentation-google-adk",
               "openinference-instrumentation", "opentelemetry-sdk")),
        *(Stack(name, "bedrock_loop", "bedrock",
                ("boto3", "botocore", "opentelemetry-instrumentation-botocore",
                 "opentelemetry-sdk"), venv="bedrock-botocore")
          for name in ("bedrock-botocore", "bedrock-botocore-stream")),
        *(Stack(name, "strands_bedrock_agent", "bedrock",
                ("strands-agents", "boto3", "botocore", "opentelemetry-sdk"),
                venv="strands-bedrock")
          for name in ("strands-bedrock", "strands-bedrock-nostream")),
        Stack("strands-bedrock-botocore", "strands_bedrock_agent", "bedrock",
              ("strands-agents", "boto3", "botocore", "opentelemetry-instrumentation-botocore",
               "opentelemetry-sdk")),
        *(Stack(name, "langfuse_agent", "openai",
                ("langfuse", "openai", "opentelemetry-sdk"), venv="langfuse")
          for name in ("langfuse-openai", "langfuse-openai-stream")),
        Stack("langfuse-langgraph", "langfuse_agent", "openai",
              ("langfuse", "langgraph", "langchain-core", "langchain-openai", "openai",
               "opentelemetry-sdk"), venv="langfuse"),
        *(Stack(name, "langsmith_agent", "openai",
                ("langsmith", "langgraph", "langchain-core", "langchain-openai", "openai",
                 "opentelemetry-sdk"), venv="langsmith-otel")
          for name in ("langsmith-otel", "langsmith-otel-stream")),
        *(Stack(name, "langfuse_agent", "openai",
                ("langfuse", "openai", "opentelemetry-sdk"), venv="langfuse-v3")
          for name in ("langfuse-v3-openai", "langfuse-v3-openai-stream")),
        Stack("langfuse-v3-langgraph", "langfuse_agent", "openai",
              ("langfuse", "langgraph", "langchain-core", "langchain-openai", "openai",
               "opentelemetry-sdk"), venv="langfuse-v3"),
        *(Stack(name, "mlflow_agent", "openai", ("mlflow", "openai", "opentelemetry-sdk"),
                venv="mlflow")
          for name in ("mlflow-openai", "mlflow-openai-stream", "mlflow-openai-genai")),
        *(Stack(name, "mlflow_agent", "openai",
                ("mlflow", "langgraph", "langchain-core", "langchain-openai", "openai",
                 "opentelemetry-sdk"), venv="mlflow")
          for name in ("mlflow-langgraph", "mlflow-langgraph-stream", "mlflow-langgraph-genai")),
        Stack("mlflow-openai-agents", "mlflow_agent", "openai",
              ("mlflow", "openai-agents", "openai", "opentelemetry-sdk"), venv="mlflow"),
        *(Stack(name, "traceloop_loop", "openai",
                ("traceloop-sdk", "openai", "opentelemetry-instrumentation-openai",
                 "opentelemetry-sdk"), venv="traceloop-sdk")
          for name in ("traceloop-sdk", "traceloop-sdk-stream")),
        Stack("openai-agents-openllmetry", "openai_agents_openllmetry_agent", "openai",
              ("openai-agents", "openai", "opentelemetry-instrumentation-openai-agents",
               "opentelemetry-sdk")),
        Stack("openai-agents-openllmetry-openai", "openai_agents_openllmetry_agent", "openai",
              ("openai-agents", "openai", "opentelemetry-instrumentation-openai-agents",
               "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
              venv="openai-agents-openllmetry"),
        *(Stack(name, "crewai_openllmetry_agent", "openai",
                ("crewai", "openai", "opentelemetry-instrumentation-crewai",
                 "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
                venv="crewai-openllmetry")
          for name in ("crewai-openllmetry", "crewai-openllmetry-sequential")),
        Stack("langchain-agentexecutor-openllmetry", "langchain_agent", "openai",
              ("langchain-classic", "langchain-core", "langchain-openai", "openai",
               "opentelemetry-instrumentation-langchain", "opentelemetry-sdk")),
        Stack("litellm-openinference", "litellm_loop", "openai",
              ("litellm", "openinference-instrumentation-litellm",
               "openinference-instrumentation", "opentelemetry-sdk")),
        Stack("autogen-openinference", "autogen_agent", "openai",
              ("autogen-agentchat", "autogen-ext", "openai",
               "openinference-instrumentation-autogen-agentchat",
               "openinference-instrumentation", "opentelemetry-sdk")),
        Stack("pydantic-ai-openinference", "pydantic_ai_agent", "openai",
              ("pydantic-ai-slim", "openai", "openinference-instrumentation-pydantic-ai",
               "opentelemetry-sdk")),
        *(Stack(name, "openai_agents_handoff", "openai",
                ("openai-agents", "openai", "openinference-instrumentation-openai-agents",
                 "openinference-instrumentation", "opentelemetry-sdk"),
                venv="openai-agents-openinference", scenarios=tuple(MULTI_AGENT))
          for name in ("openai-agents-openinference-handoff",
                       "openai-agents-openinference-as-tool",
                       "openai-agents-openinference-handoff-nested")),
        *(Stack(name, "openai_agents_handoff", "openai",
                ("openai-agents", "openai", "opentelemetry-instrumentation-openai-agents-v2",
                 "opentelemetry-sdk"),
                venv="openai-agents-otel", scenarios=tuple(MULTI_AGENT))
          for name in ("openai-agents-otel-handoff", "openai-agents-otel-as-tool")),
        Stack("langgraph-supervisor", "langgraph_supervisor_agent", "openai",
              ("langgraph", "langgraph-supervisor", "langchain-core", "langchain-openai", "openai",
               "opentelemetry-instrumentation-langchain", "opentelemetry-sdk"),
              scenarios=tuple(MULTI_AGENT)),
        *(Stack(name, "strands_as_tool_agent", "openai",
                ("strands-agents", "openai", "opentelemetry-sdk"), venv="strands-latest",
                scenarios=tuple(MULTI_AGENT))
          for name in ("strands-as-tool", "strands-as-tool-delegate")),
        Stack("adk-handoff", "adk_handoff_agent", "gemini",
              ("google-adk", "google-genai", "opentelemetry-sdk"), venv="adk",
              scenarios=tuple(MULTI_AGENT)),
        *(Stack(name, "bedrock_loop", "bedrock",
                ("boto3", "botocore", "opentelemetry-instrumentation-bedrock",
                 "opentelemetry-sdk"), venv="bedrock-openllmetry")
          for name in ("bedrock-openllmetry", "bedrock-openllmetry-stream",
                       "bedrock-openllmetry-events")),
        *(Stack(name, "groq_loop", "openai",
                ("groq", "opentelemetry-instrumentation-groq", "opentelemetry-sdk"),
                venv="groq-openllmetry")
          for name in ("groq-openllmetry", "groq-openllmetry-stream")),
        Stack("mistralai-openllmetry", "mistralai_loop", "openai",
              ("mistralai", "opentelemetry-instrumentation-mistralai", "opentelemetry-sdk")),
        Stack("haystack-openllmetry", "haystack_agent", "openai",
              ("haystack-ai", "openai", "opentelemetry-instrumentation-haystack",
               "opentelemetry-instrumentation-openai", "opentelemetry-sdk")),
        *(Stack(name, "bedrock_loop", "bedrock",
                ("boto3", "botocore", "openinference-instrumentation-bedrock",
                 "openinference-instrumentation", "opentelemetry-sdk"),
                venv="bedrock-openinference")
          for name in ("bedrock-openinference", "bedrock-openinference-stream")),
        Stack("groq-openinference", "provider_sdk_loop", "openai",
              ("groq", "openinference-instrumentation-groq", "openinference-instrumentation",
               "opentelemetry-sdk")),
        Stack("mistralai-openinference", "provider_sdk_loop", "openai",
              ("mistralai", "openinference-instrumentation-mistralai",
               "openinference-instrumentation", "opentelemetry-sdk")),
        *(Stack(name, "openai_agents_mcp_agent", "openai",
                ("openai-agents", "openai", "mcp", "openinference-instrumentation-openai-agents",
                 "openinference-instrumentation-mcp", "openinference-instrumentation",
                 "opentelemetry-sdk"), venv="openai-agents-mcp")
          for name in ("openai-agents-mcp", "openai-agents-mcp-unlinked")),
        Stack("openai-agents-mcp-openllmetry", "openai_agents_mcp_agent", "openai",
              ("openai-agents", "openai", "mcp", "opentelemetry-instrumentation-openai-agents",
               "opentelemetry-instrumentation-mcp", "opentelemetry-sdk")),
        *(Stack(name, "google_genai_loop", "gemini",
                ("google-genai", "opentelemetry-instrumentation-google-genai",
                 "opentelemetry-util-genai", "opentelemetry-sdk"), venv="google-genai-otel")
          for name in ("google-genai-otel-spans", "google-genai-otel-events")),
        Stack("google-genai-openinference", "google_genai_loop", "gemini",
              ("google-genai", "openinference-instrumentation-google-genai",
               "openinference-instrumentation", "opentelemetry-sdk"), venv="google-genai"),
        Stack("google-genai-openllmetry", "google_genai_loop", "gemini",
              ("google-genai", "opentelemetry-instrumentation-google-generativeai",
               "opentelemetry-sdk"), venv="google-genai"),
        *(Stack(name, "openai_v2_loop", "openai",
                ("openai", "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai",
                 "opentelemetry-sdk"), venv="openai-v2")
          for name in ("openai-v2-spans", "openai-v2-events", "openai-v2-span-and-event",
                       "openai-v2-span-and-event-stream")),
        *(Stack(name, "genai_clients_loop", "openai",
                ("openai", "opentelemetry-instrumentation-genai-openai",
                 "opentelemetry-util-genai", "opentelemetry-sdk"), venv="genai-clients")
          for name in ("genai-openai-spans", "genai-openai-spans-stream",
                       "genai-openai-spans-emit-event", "genai-openai-events",
                       "genai-openai-events-stream", "genai-openai-span-and-event",
                       "genai-openai-span-and-event-stream", "genai-openai-responses",
                       "genai-openai-responses-stream", "genai-openai-responses-events",
                       "genai-openai-responses-events-stream",
                       "genai-openai-responses-span-and-event", "genai-openai-raw-response",
                       "genai-openai-raw-response-stream",
                       "genai-openai-responses-stream-helper")),
        *(Stack(name, "genai_clients_loop", "anthropic",
                ("anthropic", "opentelemetry-instrumentation-genai-anthropic",
                 "opentelemetry-util-genai", "opentelemetry-sdk"), venv="genai-clients")
          for name in ("genai-anthropic", "genai-anthropic-stream", "genai-anthropic-events",
                       "genai-anthropic-events-stream", "genai-anthropic-span-and-event",
                       "genai-anthropic-create-stream")),
        *(Stack(name, "genai_clients_loop", "bedrock",
                ("boto3", "botocore", "opentelemetry-instrumentation-genai-bedrock",
                 "opentelemetry-util-genai", "opentelemetry-sdk"), venv="genai-clients")
          for name in ("genai-bedrock", "genai-bedrock-stream", "genai-bedrock-events",
                       "genai-bedrock-events-stream", "genai-bedrock-span-and-event")),
        Stack("google-genai-otel-span-and-event", "google_genai_loop", "gemini",
              ("google-genai", "opentelemetry-instrumentation-google-genai",
               "opentelemetry-util-genai", "opentelemetry-sdk"), venv="google-genai-otel"),
        Stack("openai-v2-legacy-events", "openai_v2_loop", "openai",
              ("openai", "opentelemetry-instrumentation-openai-v2", "opentelemetry-sdk"),
              venv="openai-multi"),
        *(Stack(name, "openai_loop", "openai",
                ("openai", "openinference-instrumentation-openai", "openinference-instrumentation",
                 "opentelemetry-sdk"), venv="openai-multi")
          for name in ("openai-responses-openinference", "openai-responses-openinference-stream")),
        *(Stack(name, "openai_loop", "openai",
                ("openai", "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
                venv="openai-multi")
          for name in ("openai-responses-openllmetry", "openai-responses-openllmetry-stream")),
        Stack("openai-agents-openinference-responses", "openai_agents_agent", "openai",
              ("openai-agents", "openai", "openinference-instrumentation-openai-agents",
               "openinference-instrumentation", "opentelemetry-sdk"),
              venv="openai-agents-openinference"),
        Stack("openai-agents-openllmetry-responses", "openai_agents_openllmetry_agent", "openai",
              ("openai-agents", "openai", "opentelemetry-instrumentation-openai-agents",
               "opentelemetry-sdk"), venv="openai-agents-openllmetry"),
        Stack("openai-agents-openinference-responses-stream", "openai_agents_agent", "openai",
              ("openai-agents", "openai", "openinference-instrumentation-openai-agents",
               "openinference-instrumentation", "opentelemetry-sdk"),
              venv="openai-agents-openinference"),
        Stack("openai-agents-openllmetry-responses-stream", "openai_agents_openllmetry_agent",
              "openai", ("openai-agents", "openai", "opentelemetry-instrumentation-openai-agents",
                         "opentelemetry-sdk"), venv="openai-agents-openllmetry"),
        *(Stack(name, "openai_agents_handoff", "openai",
                ("openai-agents", "openai", "openinference-instrumentation-openai-agents",
                 "openinference-instrumentation", "opentelemetry-sdk"),
                venv="openai-agents-openinference", scenarios=tuple(MULTI_AGENT))
          for name in ("openai-agents-openinference-responses-handoff",
                       "openai-agents-openinference-responses-as-tool")),
        Stack("openai-agents-openllmetry-openai-responses", "openai_agents_openllmetry_agent",
              "openai", ("openai-agents", "openai", "opentelemetry-instrumentation-openai-agents",
                         "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
              venv="openai-agents-openllmetry"),
        *(Stack(name, "langgraph_agent", "openai",
                ("openlit", "langgraph", "langchain-core", "langchain-openai", "openai",
                 "opentelemetry-sdk"), venv="openlit-langgraph")
          for name in ("openlit-langgraph", "openlit-langgraph-stream")),
        *(Stack(name, "anthropic_loop", "anthropic", ("openlit", "anthropic", "opentelemetry-sdk"),
                venv="openlit-anthropic")
          for name in ("openlit-anthropic", "openlit-anthropic-stream")),
        *(Stack(name, "openai_agents_agent", "openai",
                ("openlit", "openai-agents", "openai", "opentelemetry-sdk"),
                venv="openlit-openai-agents")
          for name in ("openlit-openai-agents", "openlit-openai-agents-stream")),
        Stack("openlit-crewai", "crewai_agent", "openai",
              ("openlit", "crewai", "openai", "opentelemetry-sdk")),
        *(Stack(name, "azure_inference_loop", "openai",
                ("azure-ai-inference", "azure-core", "azure-core-tracing-opentelemetry",
                 "opentelemetry-sdk"), venv="azure-ai-inference")
          for name in ("azure-ai-inference", "azure-ai-inference-stream")),
        *(Stack(name, "vercel_ai", "openai",
                ("ai", "@ai-sdk/openai", "@ai-sdk/otel", "@opentelemetry/sdk-trace"),
                venv="vercel-ai", runtime="node")
          for name in ("vercel-ai", "vercel-ai-stream", "vercel-ai-legacy",
                       "vercel-ai-legacy-stream")),
        *(Stack(name, "vercel_ai", "openai",
                ("ai", "@ai-sdk/openai", "@opentelemetry/sdk-trace"),
                venv="vercel-ai-v6", runtime="node")
          for name in ("vercel-ai-v6", "vercel-ai-v6-stream")),
        *(Stack(name, "mastra_agent", "openai",
                ("@mastra/core", "@mastra/observability", "@mastra/otel-exporter",
                 "@ai-sdk/openai", "@opentelemetry/exporter-trace-otlp-proto"),
                venv="mastra", runtime="node")
          for name in ("mastra", "mastra-stream")),
        *(Stack(name, "openai_agents_js", "openai",
                ("@openai/agents", "openai", "@arizeai/openinference-instrumentation-openai",
                 "@opentelemetry/sdk-trace"),
                venv="openai-agents-js", runtime="node")
          for name in ("openai-agents-js-openinference",
                       "openai-agents-js-openinference-stream")),
        *(Stack(name, "openai_agents_js", "openai",
                ("@openai/agents", "openai", "@traceloop/instrumentation-openai",
                 "@opentelemetry/sdk-trace"),
                venv="openai-agents-js", runtime="node")
          for name in ("openai-agents-js-openllmetry", "openai-agents-js-openllmetry-stream")),
        *(Stack(name, "vercel_ai", "openai",
                ("ai", "@ai-sdk/openai", "@ai-sdk/otel", "@arizeai/openinference-vercel",
                 "@opentelemetry/sdk-trace-node"),
                venv="vercel-ai-openinference", runtime="node")
          for name in ("vercel-ai-openinference", "vercel-ai-openinference-stream")),
        Stack("langgraph-js-openinference", "langgraph_js", "openai",
              ("@langchain/langgraph", "@langchain/core", "@langchain/openai",
               "@arizeai/openinference-instrumentation-langchain", "@opentelemetry/sdk-trace"),
              venv="langgraph-js", runtime="node"),
        Stack("google-genai-otel-spans-stream", "google_genai_loop", "gemini",
              ("google-genai", "opentelemetry-instrumentation-google-genai",
               "opentelemetry-util-genai", "opentelemetry-sdk"), venv="google-genai-otel"),
        Stack("google-genai-openinference-stream", "google_genai_loop", "gemini",
              ("google-genai", "openinference-instrumentation-google-genai",
               "openinference-instrumentation", "opentelemetry-sdk"), venv="google-genai"),
        Stack("google-genai-openllmetry-stream", "google_genai_loop", "gemini",
              ("google-genai", "opentelemetry-instrumentation-google-generativeai",
               "opentelemetry-sdk"), venv="google-genai"),
        Stack("mistralai-openinference-stream", "provider_sdk_loop", "openai",
              ("mistralai", "openinference-instrumentation-mistralai",
               "openinference-instrumentation", "opentelemetry-sdk"),
              venv="mistralai-openinference"),
        Stack("mistralai-openllmetry-stream", "mistralai_loop", "openai",
              ("mistralai", "opentelemetry-instrumentation-mistralai", "opentelemetry-sdk"),
              venv="mistralai-openllmetry"),
        Stack("beeai-openinference", "beeai_agent", "openai",
              ("beeai-framework", "litellm", "openinference-instrumentation-beeai",
               "openinference-instrumentation", "opentelemetry-sdk")),
        Stack("openai-responses-openllmetry-call-ids", "openai_loop", "openai",
              ("openai", "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
              venv="openai-multi"),
        Stack("autogen-swarm", "autogen_swarm_agent", "openai",
              ("autogen-agentchat", "autogen-core", "autogen-ext", "openai",
               "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai",
               "opentelemetry-sdk"), venv="autogen-agentchat", scenarios=tuple(MULTI_AGENT)),
        Stack("autogen-swarm-openinference", "autogen_swarm_agent", "openai",
              ("autogen-agentchat", "autogen-ext", "openai",
               "openinference-instrumentation-autogen-agentchat",
               "openinference-instrumentation", "opentelemetry-sdk"),
              venv="autogen-openinference", scenarios=tuple(MULTI_AGENT)),
        Stack("agent-framework-handoff", "agent_framework_handoff_agent", "openai",
              ("agent-framework-core", "agent-framework-openai", "agent-framework-orchestrations",
               "openai", "opentelemetry-sdk"), scenarios=tuple(MULTI_AGENT)),
        Stack("semantic-kernel-handoff", "semantic_kernel_handoff_agent", "openai",
              ("semantic-kernel", "openai", "opentelemetry-sdk"), venv="semantic-kernel",
              scenarios=tuple(MULTI_AGENT)),
        Stack("llamaindex-openinference-handoff", "llamaindex_handoff_agent", "openai",
              ("llama-index-core", "llama-index-llms-openai", "openai",
               "openinference-instrumentation-llama-index", "opentelemetry-sdk"),
              venv="llamaindex-openinference", scenarios=tuple(MULTI_AGENT)),
        Stack("smolagents-openinference-managed", "smolagents_managed_agent", "openai",
              ("smolagents", "openai", "openinference-instrumentation-smolagents",
               "opentelemetry-sdk"), venv="smolagents-openinference",
              scenarios=tuple(MULTI_AGENT)),
        Stack("agno-openinference-team", "agno_team_agent", "openai",
              ("agno", "openai", "openinference-instrumentation-agno", "opentelemetry-sdk"),
              venv="agno-openinference", scenarios=tuple(MULTI_AGENT)),
        Stack("autogen-as-tool", "autogen_swarm_agent", "openai",
              ("autogen-agentchat", "autogen-core", "autogen-ext", "openai",
               "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai",
               "opentelemetry-sdk"), venv="autogen-agentchat", scenarios=tuple(MULTI_AGENT)),
        Stack("autogen-as-tool-openinference", "autogen_swarm_agent", "openai",
              ("autogen-agentchat", "autogen-ext", "openai",
               "openinference-instrumentation-autogen-agentchat",
               "openinference-instrumentation", "opentelemetry-sdk"),
              venv="autogen-openinference", scenarios=tuple(MULTI_AGENT)),
        Stack("agent-framework-as-tool", "agent_framework_handoff_agent", "openai",
              ("agent-framework-core", "agent-framework-openai", "openai", "opentelemetry-sdk"),
              venv="agent-framework-handoff", scenarios=tuple(MULTI_AGENT)),
        *(Stack(name, "ollama_loop", "ollama",
                ("ollama", "opentelemetry-instrumentation-ollama", "opentelemetry-sdk"),
                venv="ollama-openllmetry")
          for name in ("ollama-openllmetry", "ollama-openllmetry-stream")),
        *(Stack(name, "ollama_loop", "ollama", ("openlit", "ollama", "opentelemetry-sdk"),
                venv="openlit-providers")
          for name in ("openlit-ollama", "openlit-ollama-stream")),
        *(Stack(name, "langgraph_ollama_agent", "ollama",
                ("langgraph", "langchain-core", "langchain-ollama", "ollama",
                 "openinference-instrumentation-langchain", "opentelemetry-sdk"),
                venv="langgraph-ollama-openinference")
          for name in ("langgraph-ollama-openinference", "langgraph-ollama-openinference-stream")),
        *(Stack(name, "openlit_provider_loop", "gemini",
                ("openlit", "google-genai", "opentelemetry-sdk"), venv="openlit-providers")
          for name in ("openlit-google-genai", "openlit-google-genai-stream")),
        *(Stack(name, "openlit_provider_loop", "openai",
                ("openlit", "mistralai", "opentelemetry-sdk"), venv="openlit-providers")
          for name in ("openlit-mistralai", "openlit-mistralai-stream")),
        *(Stack(name, "openlit_provider_loop", "bedrock",
                ("openlit", "boto3", "botocore", "opentelemetry-sdk"), venv="openlit-providers")
          for name in ("openlit-bedrock",)),
        *(Stack(name, "openlit_provider_loop", "openai",
                ("openlit", "litellm", "openai", "opentelemetry-sdk"), venv="openlit-providers")
          for name in ("openlit-litellm", "openlit-litellm-stream")),
        *(Stack(name, "cohere_loop", "cohere", ("openlit", "cohere", "opentelemetry-sdk"),
                venv="openlit-providers")
          for name in ("openlit-cohere", "openlit-cohere-stream")),
        *(Stack(name, "cohere_loop", "cohere",
                ("cohere", "opentelemetry-instrumentation-cohere", "opentelemetry-sdk"),
                venv="cohere-openllmetry")
          for name in ("cohere-openllmetry", "cohere-openllmetry-stream")),
        Stack("pydantic-ai-otel-stream", "pydantic_ai_agent", "openai",
              ("pydantic-ai-slim", "openai", "opentelemetry-sdk"), venv="pydantic-ai-otel"),
        Stack("pydantic-ai-openinference-stream", "pydantic_ai_agent", "openai",
              ("pydantic-ai-slim", "openai", "openinference-instrumentation-pydantic-ai",
               "opentelemetry-sdk"), venv="pydantic-ai-openinference"),
        Stack("pydantic-ai-logfire-stream", "pydantic_ai_agent", "openai",
              ("pydantic-ai-slim", "logfire", "openai", "opentelemetry-sdk"),
              venv="pydantic-ai-logfire"),
        Stack("litellm-otel-stream", "litellm_loop", "openai", ("litellm", "opentelemetry-sdk"),
              venv="litellm-otel"),
        Stack("litellm-openinference-stream", "litellm_loop", "openai",
              ("litellm", "openinference-instrumentation-litellm",
               "openinference-instrumentation", "opentelemetry-sdk"),
              venv="litellm-openinference"),
        Stack("smolagents-openinference-stream", "smolagents_agent", "openai",
              ("smolagents", "openai", "openinference-instrumentation-smolagents",
               "opentelemetry-sdk"), venv="smolagents-openinference"),
        Stack("agno-openinference-stream", "agno_agent", "openai",
              ("agno", "openai", "openinference-instrumentation-agno", "opentelemetry-sdk"),
              venv="agno-openinference"),
        Stack("semantic-kernel-stream", "semantic_kernel_agent", "openai",
              ("semantic-kernel", "openai", "opentelemetry-sdk"), venv="semantic-kernel"),
        Stack("agent-framework-stream", "agent_framework_agent", "openai",
              ("agent-framework-core", "agent-framework-openai", "openai", "opentelemetry-sdk"),
              venv="agent-framework"),
        Stack("autogen-agentchat-stream", "autogen_agent", "openai",
              ("autogen-agentchat", "autogen-core", "autogen-ext", "openai",
               "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai",
               "opentelemetry-sdk"), venv="autogen-agentchat"),
        Stack("haystack-openinference-stream", "haystack_agent", "openai",
              ("haystack-ai", "openai", "openinference-instrumentation-haystack",
               "openinference-instrumentation", "opentelemetry-sdk"),
              venv="haystack-openinference"),
        Stack("crewai-openinference-stream", "crewai_agent", "openai",
              ("crewai", "openai", "openinference-instrumentation-crewai",
               "openinference-instrumentation-openai", "opentelemetry-sdk"),
              venv="crewai-openinference"),
        Stack("smolagents-openinference-openai-stream", "smolagents_agent", "openai",
              ("smolagents", "openai", "openinference-instrumentation-smolagents",
               "openinference-instrumentation-openai", "opentelemetry-sdk"),
              venv="smolagents-openinference-openai"),
        Stack("autogen-openinference-stream", "autogen_agent", "openai",
              ("autogen-agentchat", "autogen-ext", "openai",
               "openinference-instrumentation-autogen-agentchat",
               "openinference-instrumentation", "opentelemetry-sdk"),
              venv="autogen-openinference"),
        Stack("haystack-openllmetry-stream", "haystack_agent", "openai",
              ("haystack-ai", "openai", "opentelemetry-instrumentation-haystack",
               "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
              venv="haystack-openllmetry"),
        Stack("openlit-crewai-stream", "crewai_agent", "openai",
              ("openlit", "crewai", "openai", "opentelemetry-sdk"), venv="openlit-crewai"),
        *(Stack(name, "openai_js_loop", "openai",
                ("openai", "@traceloop/instrumentation-openai", "@opentelemetry/sdk-trace"),
                venv="openai-agents-js", runtime="node")
          for name in ("openai-js-openllmetry", "openai-js-openllmetry-stream")),
        *(Stack(name, "openai_js_loop", "openai",
                ("openai", "@arizeai/openinference-instrumentation-openai",
                 "@opentelemetry/sdk-trace"),
                venv="openai-agents-js", runtime="node")
          for name in ("openai-js-openinference", "openai-js-openinference-stream")),
        *(Stack(name, "openai_js_loop", "openai",
                ("openai", "@opentelemetry/instrumentation-openai", "@opentelemetry/sdk-trace",
                 "@opentelemetry/sdk-logs"), venv="openai-js-otel", runtime="node")
          for name in ("openai-js-otel", "openai-js-otel-stream", "openai-js-otel-responses",
                       "openai-js-otel-responses-stream", "openai-js-otel-nocontent",
                       "openai-js-otel-responses-nocontent")),
        *(Stack(name, "openai_js_loop", "openai",
                ("openai", "@elastic/opentelemetry-instrumentation-openai",
                 "@opentelemetry/sdk-trace-node", "@opentelemetry/sdk-logs"),
                venv="openai-js-elastic", runtime="node")
          for name in ("openai-js-elastic", "openai-js-elastic-stream")),
        *(Stack(name, "openai_agents_js", "openai",
                ("@openai/agents", "openai", "@opentelemetry/instrumentation-openai",
                 "@opentelemetry/sdk-trace", "@opentelemetry/sdk-logs"),
                venv="openai-agents-js-otel", runtime="node")
          for name in ("openai-agents-js-otel", "openai-agents-js-otel-stream",
                       "openai-agents-js-otel-responses",
                       "openai-agents-js-otel-responses-stream")),
        Stack("langgraph-js-openinference-stream", "langgraph_js", "openai",
              ("@langchain/langgraph", "@langchain/core", "@langchain/openai",
               "@arizeai/openinference-instrumentation-langchain", "@opentelemetry/sdk-trace"),
              venv="langgraph-js", runtime="node"),
        *(Stack(name, "langgraph_js", "openai",
                ("@langchain/langgraph", "@langchain/core", "@langchain/openai",
                 "@traceloop/instrumentation-langchain", "@opentelemetry/sdk-trace"),
                venv="langgraph-js", runtime="node")
          for name in ("langgraph-js-openllmetry", "langgraph-js-openllmetry-stream")),
        *(Stack(name, "anthropic_js_loop", "anthropic",
                ("@anthropic-ai/sdk", "@traceloop/instrumentation-anthropic",
                 "@opentelemetry/sdk-trace"), venv="anthropic-js-openllmetry", runtime="node")
          for name in ("anthropic-js-openllmetry", "anthropic-js-openllmetry-stream")),
        *(Stack(name, "anthropic_js_loop", "anthropic",
                ("@anthropic-ai/sdk", "@arizeai/openinference-instrumentation-anthropic",
                 "@opentelemetry/sdk-trace"), venv="anthropic-js", runtime="node")
          for name in ("anthropic-js-openinference", "anthropic-js-openinference-stream")),
        # The Anthropic SDKs tracing themselves, no instrumentation (their `open_telemetry`
        # option; Node: `js/anthropic_js_loop.mjs` with none patched in).
        *(Stack(name, "anthropic_sdk_loop", "anthropic", ("anthropic", "opentelemetry-sdk"),
                venv="anthropic-sdk-otel")
          for name in ("anthropic-sdk-otel", "anthropic-sdk-otel-stream",
                       "anthropic-sdk-otel-conversation", "anthropic-sdk-otel-metadata",
                       "anthropic-sdk-otel-tool-runner")),
        *(Stack(name, "anthropic_js_loop", "anthropic",
                ("@anthropic-ai/sdk", "@opentelemetry/sdk-trace"), venv="anthropic-js",
                runtime="node")
          for name in ("anthropic-js-sdk-otel", "anthropic-js-sdk-otel-stream")),
        *(Stack(name, "mistralai_sdk_loop", "openai", ("mistralai", "opentelemetry-sdk"),
                venv="mistralai-sdk-otel")
          for name in ("mistralai-sdk-otel", "mistralai-sdk-otel-stream")),
        *(Stack(name, "vercel_ai", "openai",
                ("ai", "@ai-sdk/openai", "@ai-sdk/otel", "@langfuse/otel",
                 "@opentelemetry/sdk-trace-node"),
                venv="vercel-ai-langfuse", runtime="node")
          for name in ("vercel-ai-langfuse", "vercel-ai-langfuse-stream")),
        *(Stack(name, "vercel_ai", "openai",
                ("ai", "@ai-sdk/openai", "@traceloop/node-server-sdk",
                 "@opentelemetry/sdk-trace-node"),
                venv="vercel-ai-traceloop", runtime="node")
          for name in ("vercel-ai-traceloop", "vercel-ai-traceloop-stream")),
        *(Stack(name, "openai_js_loop", "openai",
                ("openai", "@langfuse/openai", "@langfuse/tracing", "@langfuse/otel",
                 "@opentelemetry/sdk-trace-node"),
                venv="langfuse-js", runtime="node")
          for name in ("langfuse-js-openai", "langfuse-js-openai-stream")),
        *(Stack(name, "openai_js_loop", "openai",
                ("openai", "openlit", "@opentelemetry/sdk-trace-node"),
                venv="openlit-js", runtime="node")
          for name in ("openlit-js-openai", "openlit-js-openai-stream")),
        # Google's ADK for TypeScript (`js/adk_js.mjs`): an `LlmAgent` on ADK's Gemini model,
        # traced by ADK's own `gcp.vertex.agent` spans.
        *(Stack(name, "adk_js", "gemini",
                ("@google/adk", "@google/genai", "@opentelemetry/sdk-trace-node"),
                venv="adk-js", runtime="node")
          for name in ("adk-js", "adk-js-stream")),
        # Strands' TypeScript SDK (`js/strands_js.mjs`), traced by Strands itself.
        *(Stack(name, "strands_js", "openai",
                ("@strands-agents/sdk", "openai", "@opentelemetry/sdk-trace-node"),
                venv="strands-js", runtime="node")
          for name in ("strands-js", "strands-js-latest", "strands-js-responses")),
        # VoltAgent (`js/voltagent_agent.mjs`), traced by its own observability.
        *(Stack(name, "voltagent_agent", "openai",
                ("@voltagent/core", "ai", "@ai-sdk/openai", "@opentelemetry/sdk-trace-base"),
                venv="voltagent", runtime="node")
          for name in ("voltagent", "voltagent-stream")),
        *(Stack(name, "genkit_agent", "openai",
                ("genkit", "@genkit-ai/compat-oai", "openai", "@opentelemetry/sdk-trace-base"),
                venv="genkit", runtime="node",
                scenarios=tuple(n for n in SCENARIOS if n != "tool_error"))
          for name in ("genkit", "genkit-stream")),
        *(Stack(name, "logfire_openai", "openai", ("openai", "logfire", "opentelemetry-sdk"),
                venv="logfire-openai")
          for name in ("logfire-openai", "logfire-openai-stream", "logfire-openai-responses",
                       "logfire-openai-responses-stream")),
        *(Stack(name, "logfire_openai", "openai",
                ("openai-agents", "openai", "logfire", "opentelemetry-sdk"),
                venv="logfire-openai")
          for name in ("logfire-openai-agents", "logfire-openai-agents-stream",
                       "logfire-openai-agents-responses",
                       "logfire-openai-agents-responses-stream")),
        *(Stack(name, "langfuse_export", "openai",
                ("langfuse", "openai-agents", "openai",
                 "openinference-instrumentation-openai-agents", "openinference-instrumentation",
                 "opentelemetry-sdk"), venv="langfuse-agents")
          for name in ("langfuse-openai-agents", "langfuse-openai-agents-responses")),
        Stack("langfuse-observe", "langfuse_export", "openai",
              ("langfuse", "openai", "opentelemetry-sdk"), venv="langfuse-agents"),
        *(Stack(name, "agentops_sdk", "openai", ("agentops", "openai", "opentelemetry-sdk"),
                venv="agentops")
          for name in ("agentops-openai", "agentops-openai-stream")),
        Stack("agentops-openai-agents", "agentops_sdk", "openai",
              ("agentops", "openai-agents", "openai", "opentelemetry-sdk"), venv="agentops"),
        *(Stack(name, "edot_openai_loop", "openai",
                ("openai", "elastic-opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
                venv="edot-openai")
          for name in ("edot-openai", "edot-openai-stream")),
        *(Stack(name, "langtrace_loop", "openai",
                ("langtrace-python-sdk", "openai", "opentelemetry-sdk"), venv="langtrace")
          for name in ("langtrace-openai", "langtrace-openai-stream")),
        Stack("langtrace-langgraph", "langtrace_agent", "openai",
              ("langtrace-python-sdk", "langgraph", "langchain-core", "langchain-openai",
               "openai", "opentelemetry-sdk"), venv="langtrace"),
        *(Stack(name, "lmnr_loop", "openai", ("lmnr", "openai", "opentelemetry-sdk"),
                venv="lmnr")
          for name in ("lmnr-openai", "lmnr-openai-stream")),
        Stack("pipecat", "pipecat_agent", "openai", ("pipecat-ai", "openai", "opentelemetry-sdk")),
        *(Stack(name, "langwatch_loop", "openai", ("langwatch", "openai", "opentelemetry-sdk"),
                venv="langwatch")
          for name in ("langwatch-openai", "langwatch-openai-stream")),
        *(Stack(name, "judgeval_loop", "openai", ("judgeval", "openai", "opentelemetry-sdk"),
                venv="judgeval")
          for name in ("judgeval-openai", "judgeval-openai-stream")),
        *(Stack(name, "lmnr_agent", "openai",
                ("lmnr", "langgraph", "langchain-core", "langchain-openai", "openai",
                 "opentelemetry-sdk"), venv="lmnr")
          for name in ("lmnr-langgraph", "lmnr-langgraph-stream")),
        *(Stack(name, "phoenix_agent", "openai",
                ("arize-phoenix-otel", "openinference-instrumentation-langchain",
                 "openinference-instrumentation-openai", "openinference-instrumentation",
                 "langgraph", "langchain-core", "langchain-openai", "openai",
                 "opentelemetry-sdk"), venv="phoenix-langgraph")
          for name in ("phoenix-langgraph", "phoenix-langgraph-stream")),
        Stack("dspy-openinference", "dspy_agent", "openai",
              ("dspy", "litellm", "openinference-instrumentation-dspy", "opentelemetry-sdk")),
        Stack("mlflow-dspy", "mlflow_dspy_agent", "openai",
              ("mlflow", "dspy", "litellm", "opentelemetry-sdk")),
        Stack("crewai-openinference-hierarchical", "crewai_hierarchical_agent", "openai",
              ("crewai", "openai", "openinference-instrumentation-crewai",
               "openinference-instrumentation-openai", "opentelemetry-sdk"),
              venv="crewai-openinference", scenarios=tuple(MULTI_AGENT)),
        Stack("crewai-openllmetry-hierarchical", "crewai_hierarchical_agent", "openai",
              ("crewai", "openai", "opentelemetry-instrumentation-crewai",
               "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
              venv="crewai-openllmetry", scenarios=tuple(MULTI_AGENT)),
        *(Stack(name, "agno_team_agent", "openai",
                ("agno", "openai", "openinference-instrumentation-agno", "opentelemetry-sdk"),
                venv="agno-openinference", scenarios=tuple(MULTI_AGENT))
          for name in ("agno-openinference-team-coordinate", "agno-openinference-team-route")),
        Stack("ag2-openinference", "ag2_agent", "openai",
              ("ag2", "openai", "openinference-instrumentation-ag2",
               "openinference-instrumentation-openai", "opentelemetry-sdk")),
        Stack("dspy-openinference-json", "dspy_agent", "openai",
              ("dspy", "litellm", "openinference-instrumentation-dspy", "opentelemetry-sdk"),
              venv="dspy-openinference"),
        Stack("camel-openinference", "camel_agent", "openai",
              ("camel-ai", "openai", "openinference-instrumentation-openai",
               "opentelemetry-sdk")),
        Stack("openlit-ag2", "ag2_agent", "openai",
              ("ag2", "openlit", "openai", "opentelemetry-sdk")),
        Stack("agno-openllmetry-team-coordinate", "agno_team_agent", "openai",
              ("agno", "openai", "opentelemetry-instrumentation-agno",
               "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
              venv="agno-openllmetry", scenarios=tuple(MULTI_AGENT)),
        Stack("claude-agent-sdk-openinference", "claude_agent_sdk_agent", "anthropic",
              ("claude-agent-sdk", "openinference-instrumentation-claude-agent-sdk",
               "openinference-instrumentation", "opentelemetry-sdk")),
        *(Stack(name, "claude_agent_sdk_agent", "anthropic", ("claude-agent-sdk",),
                venv="claude-agent-sdk-openinference")
          for name in ("claude-code-otel", "claude-code-otel-raw", "claude-code-otel-logs",
                       "claude-code-otel-logs-raw")),
        # Gemini CLI's own telemetry (`js/gemini_cli.mjs`): the scenario's tools from an MCP
        # server, each turn a `gemini -p` run resuming the session.
        Stack("gemini-cli-otel", "gemini_cli", "gemini", ("@google/gemini-cli",),
              venv="gemini-cli", runtime="node"),
        # Qwen Code's own telemetry (`js/qwen_code.mjs`), a Gemini CLI fork on the OpenAI API:
        # the scenario's tools from an MCP server, each turn a run continuing the session.
        Stack("qwen-code-otel", "qwen_code", "openai", ("@qwen-code/qwen-code",),
              venv="qwen-code", runtime="node"),
        # OpenCode with its OpenTelemetry option (`js/opencode.mjs`): the AI SDK's spans, the
        # scripted server an OpenAI-compatible provider, tools from an MCP server.
        Stack("opencode-otel", "opencode", "openai", ("opencode-ai",),
              venv="opencode", runtime="node"),
        # Codex CLI's own telemetry (`js/codex_cli.mjs`): `codex exec`, the scenario's tools
        # from an MCP server, each turn resuming the session.
        Stack("codex-cli-otel", "codex_cli", "openai", ("@openai/codex",),
              venv="codex-cli", runtime="node"),
        # The same CLI's telemetry through OpenInference's interceptor
        # (`codex-otlp-interceptor`, openinference-instrumentation-codex 0.5.2, pinned in
        # `requirements-codex-cli-openinference.txt`): its `codex.turn` traces alone.
        Stack("codex-cli-openinference", "codex_cli", "openai", ("@openai/codex",),
              venv="codex-cli", runtime="node"),
        Stack("openlit-llamaindex", "llamaindex_agent", "openai",
              ("openlit", "llama-index-core", "llama-index-llms-openai", "openai",
               "opentelemetry-sdk")),
        *(Stack(name, "agno_agent", "openai", ("openlit", "agno", "openai", "opentelemetry-sdk"),
                venv="openlit-agno")
          for name in ("openlit-agno", "openlit-agno-stream")),
        Stack("openlit-smolagents", "smolagents_agent", "openai",
              ("openlit", "smolagents", "openai", "opentelemetry-sdk")),
        *(Stack(name, "together_loop", "openai",
                ("together", "openinference-instrumentation-together", "opentelemetry-sdk"),
                venv="together-openinference")
          for name in ("together-openinference", "together-openinference-stream")),
        *(Stack(name, "together_loop", "openai",
                ("together", "opentelemetry-instrumentation-together", "opentelemetry-sdk"),
                venv="together-openllmetry")
          for name in ("together-openllmetry", "together-openllmetry-stream")),
        Stack("instructor-openinference", "instructor_loop", "openai",
              ("instructor", "openai", "openinference-instrumentation-instructor",
               "openinference-instrumentation-openai", "opentelemetry-sdk")),
        *(Stack(name, "vertexai_loop", "gemini",
                ("google-cloud-aiplatform", "openinference-instrumentation-vertexai",
                 "opentelemetry-sdk"), venv="vertexai")
          for name in ("vertexai-openinference", "vertexai-openinference-stream")),
        # OpenLLMetry's Vertex AI instrumentation (0.62) reads a response's
        # `candidates[0].text` outside its error guard, which raises into the app for an
        # answer calling a function: only no_tool runs (vertexai_loop's docstring).
        *(Stack(name, "vertexai_loop", "gemini",
                ("google-cloud-aiplatform", "opentelemetry-instrumentation-vertexai",
                 "opentelemetry-sdk"), venv="vertexai", scenarios=("no_tool",))
          for name in ("vertexai-openllmetry", "vertexai-openllmetry-stream")),
        *(Stack(name, "translated_loop", "openai",
                ("openai", "opentelemetry-instrumentation-openai",
                 "openinference-instrumentation-openllmetry", "openinference-instrumentation",
                 "opentelemetry-sdk"), venv="openllmetry-openinference-translated")
          for name in ("openllmetry-openinference-translated",
                       "openllmetry-openinference-translated-stream")),
        *(Stack(name, "translated_loop", "openai",
                ("openai", "openlit", "openinference-instrumentation-openlit",
                 "openinference-instrumentation", "opentelemetry-sdk"),
                venv="openlit-openinference-translated")
          for name in ("openlit-openinference-translated",
                       "openlit-openinference-translated-stream")),
        Stack("strands-openinference-translated", "strands_translated_agent", "openai",
              ("strands-agents", "openai", "openinference-instrumentation-strands-agents",
               "openinference-instrumentation", "opentelemetry-sdk")),
        *(Stack(name, "langgraph_translated_agent", "openai",
                ("langgraph", "langchain-core", "langchain-openai", "openai",
                 "opentelemetry-instrumentation-langchain",
                 "openinference-instrumentation-openllmetry", "opentelemetry-sdk"),
                venv="langgraph-openllmetry-openinference-translated")
          for name in ("langgraph-openllmetry-openinference-translated",
                       "langgraph-openllmetry-openinference-translated-stream")),
        Stack("strands-openinference-translated-latest", "strands_translated_agent", "openai",
              ("strands-agents", "openai", "openinference-instrumentation-strands-agents",
               "openinference-instrumentation", "opentelemetry-sdk"),
              venv="strands-openinference-translated"),
        Stack("adk-openllmetry", "adk_agent", "gemini",
              ("google-adk", "google-genai", "opentelemetry-instrumentation-google-generativeai",
               "opentelemetry-sdk")),
        *(Stack(name, "pydantic_ai_agent", "openai",
                ("pydantic-ai-slim", "openai", "openinference-instrumentation-pydantic-ai",
                 "openinference-instrumentation-openai", "opentelemetry-sdk"),
                venv="pydantic-ai-openinference-openai")
          for name in ("pydantic-ai-openinference-openai",
                       "pydantic-ai-openinference-openai-stream")),
        *(Stack(name, "semantic_kernel_agent", "openai",
                ("semantic-kernel", "openai", "openinference-instrumentation-openai",
                 "opentelemetry-sdk"), venv="semantic-kernel-openinference-openai")
          for name in ("semantic-kernel-openinference-openai",
                       "semantic-kernel-openinference-openai-stream")),
        *(Stack(name, "haystack_agent", "openai",
                ("openlit", "haystack-ai", "openai", "opentelemetry-sdk"),
                venv="openlit-haystack")
          for name in ("openlit-haystack", "openlit-haystack-stream")),
        Stack("openlit-dspy", "dspy_agent", "openai",
              ("openlit", "dspy", "litellm", "opentelemetry-sdk")),
        *(Stack(name, "pydantic_ai_agent", "openai",
                ("openlit", "pydantic-ai", "pydantic-ai-slim", "openai", "opentelemetry-sdk"),
                venv="openlit-pydantic-ai")
          for name in ("openlit-pydantic-ai", "openlit-pydantic-ai-stream")),
        Stack("openlit-adk", "adk_agent", "gemini",
              ("openlit", "google-adk", "google-genai", "opentelemetry-sdk")),
        Stack("openlit-strands", "strands_agent", "openai",
              ("openlit", "strands-agents", "openai", "opentelemetry-sdk")),
        Stack("agentops-crewai", "agentops_sdk", "openai",
              ("agentops", "crewai", "openai", "opentelemetry-sdk")),
        # Older releases still common in production, each pinned (`requirements-<venv>.txt`)
        # and named `<stack>-<version tag>`.
        *(Stack(name, "openai_loop", "openai",
                ("openai", "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
                venv="openai-openllmetry-0.33")
          for name in ("openai-openllmetry-0.33", "openai-openllmetry-0.33-stream")),
        *(Stack(name, "openai_loop", "openai",
                ("openai", "openinference-instrumentation-openai", "opentelemetry-sdk"),
                venv="openai-openinference-0.1.12")
          for name in ("openai-openinference-0.1.12", "openai-openinference-0.1.12-stream")),
        Stack("langgraph-openinference-0.1.29", "langgraph_agent", "openai",
              ("langgraph", "langchain-core", "langchain-openai", "openai",
               "openinference-instrumentation-langchain", "opentelemetry-sdk")),
        Stack("langgraph-openllmetry-0.33", "langgraph_agent", "openai",
              ("langgraph", "langchain-core", "langchain-openai", "openai",
               "opentelemetry-instrumentation-langchain", "opentelemetry-sdk")),
        Stack("openai-agents-openinference-0.0", "openai_agents_agent", "openai",
              ("openai-agents", "openai", "openinference-instrumentation-openai-agents",
               "opentelemetry-sdk")),
        *(Stack(name, "pydantic_ai_agent", "openai",
                ("pydantic-ai-slim", "openai", "opentelemetry-sdk"), venv="pydantic-ai-otel-0.4")
          for name in ("pydantic-ai-otel-0.4", "pydantic-ai-otel-0.4-logs")),
        *(Stack(name, "logfire_openai", "openai",
                ("openai", "logfire", "opentelemetry-sdk"), venv="logfire-openai-2.11")
          for name in ("logfire-openai-2.11", "logfire-openai-2.11-stream")),
        Stack("strands-1.0", "strands_agent", "openai",
              ("strands-agents", "openai", "opentelemetry-sdk")),
        Stack("smolagents-openinference-1.9", "smolagents_agent", "openai",
              ("smolagents", "openai", "openinference-instrumentation-smolagents",
               "opentelemetry-sdk")),
        Stack("openlit-openai-1.26", "openlit_loop", "openai",
              ("openlit", "openai", "opentelemetry-sdk")),
        # Two instrumentations at once: a framework's own telemetry, or one vendor's, with
        # another's client instrumentation beside it.
        *(Stack(name, "pydantic_ai_agent", "openai",
                ("pydantic-ai-slim", "openai", "opentelemetry-instrumentation-openai",
                 "opentelemetry-sdk"), venv="pydantic-ai-otel-openllmetry")
          for name in ("pydantic-ai-otel-openllmetry", "pydantic-ai-otel-openllmetry-stream")),
        Stack("strands-openinference-openai", "strands_agent", "openai",
              ("strands-agents", "openai", "openinference-instrumentation-openai",
               "opentelemetry-sdk"), venv="strands-openai-instrumented"),
        Stack("strands-openllmetry-openai", "strands_agent", "openai",
              ("strands-agents", "openai", "opentelemetry-instrumentation-openai",
               "opentelemetry-sdk"), venv="strands-openai-instrumented"),
        *(Stack(name, "agent_framework_agent", "openai",
                ("agent-framework-core", "agent-framework-openai", "openai",
                 "openinference-instrumentation-openai", "opentelemetry-sdk"),
                venv="agent-framework-openai-instrumented")
          for name in ("agent-framework-openinference-openai",
                       "agent-framework-openinference-openai-stream")),
        *(Stack(name, "agent_framework_agent", "openai",
                ("agent-framework-core", "agent-framework-openai", "openai",
                 "opentelemetry-instrumentation-openai", "opentelemetry-sdk"),
                venv="agent-framework-openai-instrumented")
          for name in ("agent-framework-openllmetry-openai",
                       "agent-framework-openllmetry-openai-stream")),
        Stack("adk-openinference-genai", "adk_agent", "gemini",
              ("google-adk", "google-genai", "openinference-instrumentation-google-genai",
               "opentelemetry-sdk")),
        *(Stack(name, "langchain_v1_agent", "openai",
                ("langchain", "langgraph", "langchain-core", "langchain-openai", "openai",
                 "openinference-instrumentation-langchain", "opentelemetry-sdk"),
                venv="langchain-v1")
          for name in ("langchain-v1-openinference", "langchain-v1-openinference-stream")),
        *(Stack(name, "langchain_v1_agent", "openai",
                ("langchain", "langgraph", "langchain-core", "langchain-openai", "openai",
                 "opentelemetry-instrumentation-langchain", "opentelemetry-sdk"),
                venv="langchain-v1")
          for name in ("langchain-v1-openllmetry", "langchain-v1-openllmetry-stream")),
        *(Stack(name, "langchain_v1_agent", "openai",
                ("langchain", "langgraph", "langchain-core", "langchain-openai", "openai",
                 "openinference-instrumentation-langchain",
                 "opentelemetry-instrumentation-langchain", "opentelemetry-sdk"),
                venv="langchain-v1")
          for name in ("langchain-v1-openinference-openllmetry",
                       "langchain-v1-openinference-openllmetry-stream")),
        Stack("crewai-openllmetry-openinference-openai", "crewai_openllmetry_agent", "openai",
              ("crewai", "openai", "opentelemetry-instrumentation-crewai",
               "openinference-instrumentation-openai", "opentelemetry-sdk"),
              venv="crewai-openllmetry-openinference"),
        *(Stack(name, "langgraph_js", "openai",
                ("@langchain/langgraph", "@langchain/core", "@langchain/openai", "openai",
                 "@arizeai/openinference-instrumentation-langchain",
                 "@arizeai/openinference-instrumentation-openai", "@opentelemetry/sdk-trace"),
                venv="langgraph-js-openai", runtime="node")
          for name in ("langgraph-js-openinference-openai",
                       "langgraph-js-openinference-openai-stream")),
        *(Stack(name, "langgraph_js", "openai",
                ("@langchain/langgraph", "@langchain/core", "@langchain/openai", "openai",
                 "@traceloop/instrumentation-langchain", "@traceloop/instrumentation-openai",
                 "@opentelemetry/sdk-trace"),
                venv="langgraph-js-openai", runtime="node")
          for name in ("langgraph-js-openllmetry-openai",
                       "langgraph-js-openllmetry-openai-stream")),
        Stack("openai-agents-openllmetry-openinference-openai", "openai_agents_openllmetry_agent",
              "openai", ("openai-agents", "openai", "opentelemetry-instrumentation-openai-agents",
                         "openinference-instrumentation-openai", "opentelemetry-sdk"),
              venv="openai-agents-openllmetry-openinference"),
        # The OTel project's GenAI framework instrumentations (opentelemetry-python-genai, on
        # opentelemetry-util-genai); `-openai` turns its OpenAI client instrumentation on too.
        *(Stack(name, "genai_langchain_agent", "openai",
                ("langchain", "langgraph", "langchain-core", "langchain-openai", "openai",
                 "opentelemetry-instrumentation-genai-langchain", "opentelemetry-util-genai",
                 "opentelemetry-sdk"),
                venv="genai-langchain")
          for name in ("genai-langchain", "genai-langchain-stream",
                       "genai-langchain-span-and-event", "genai-langchain-event-only",
                       "genai-langchain-no-content")),
        *(Stack(name, "genai_langchain_agent", "openai",
                ("langchain", "langgraph", "langchain-core", "langchain-openai", "openai",
                 "opentelemetry-instrumentation-genai-langchain",
                 "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai",
                 "opentelemetry-sdk"),
                venv="genai-langchain")
          for name in ("genai-langchain-openai", "genai-langchain-openai-stream")),
        *(Stack(name, "genai_langchain_agent", "openai",
                ("langgraph", "langchain-core", "langchain-openai", "openai",
                 "opentelemetry-instrumentation-genai-langchain", "opentelemetry-util-genai",
                 "opentelemetry-sdk"),
                venv="genai-langchain")
          for name in ("genai-langgraph", "genai-langgraph-stream")),
        Stack("genai-langgraph-supervisor", "genai_langchain_agent", "openai",
              ("langgraph", "langgraph-supervisor", "langchain-core", "langchain-openai",
               "openai", "opentelemetry-instrumentation-genai-langchain",
               "opentelemetry-util-genai", "opentelemetry-sdk"),
              venv="genai-langchain", scenarios=tuple(MULTI_AGENT)),
        *(Stack(name, "genai_openai_agents_agent", "openai",
                ("openai-agents", "openai", "opentelemetry-instrumentation-genai-openai-agents",
                 "opentelemetry-util-genai", "opentelemetry-sdk"),
                venv="genai-openai-agents")
          for name in ("genai-openai-agents",)),
        *(Stack(name, "genai_openai_agents_agent", "openai",
                ("openai-agents", "openai", "opentelemetry-instrumentation-genai-openai-agents",
                 "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai",
                 "opentelemetry-sdk"),
                venv="genai-openai-agents")
          for name in ("genai-openai-agents-openai", "genai-openai-agents-openai-stream",
                       "genai-openai-agents-openai-responses",
                       "genai-openai-agents-openai-responses-stream",
                       "genai-openai-agents-openai-responses-event-only")),
        *(Stack(name, "openai_agents_handoff", "openai",
                ("openai-agents", "openai", "opentelemetry-instrumentation-genai-openai-agents",
                 "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai",
                 "opentelemetry-sdk"),
                venv="genai-openai-agents", scenarios=tuple(MULTI_AGENT))
          for name in ("genai-openai-agents-openai-handoff", "genai-openai-agents-openai-as-tool")),
        *(Stack(name, "genai_framework_agent", "openai",
                ("llama-index-core", "llama-index-llms-openai", "openai",
                 "opentelemetry-instrumentation-genai-llama-index", "opentelemetry-util-genai",
                 "opentelemetry-sdk",
                 *(("opentelemetry-instrumentation-genai-openai",) if "-openai" in name else ())),
                venv="genai-llama-index")
          for name in ("genai-llama-index", "genai-llama-index-openai")),
        *(Stack(name, "genai_framework_agent", "openai",
                ("agno", "openai", "opentelemetry-instrumentation-genai-agno",
                 "opentelemetry-util-genai", "opentelemetry-sdk",
                 *(("opentelemetry-instrumentation-genai-openai",) if "-openai" in name else ())),
                venv="genai-agno")
          for name in ("genai-agno", "genai-agno-stream", "genai-agno-openai",
                       "genai-agno-openai-stream")),
        Stack("genai-llama-index-openai-handoff", "genai_framework_agent", "openai",
              ("llama-index-core", "llama-index-llms-openai", "openai",
               "opentelemetry-instrumentation-genai-llama-index",
               "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai",
               "opentelemetry-sdk"),
              venv="genai-llama-index", scenarios=tuple(MULTI_AGENT)),
        *(Stack(name, "genai_framework_agent", "openai",
                ("agno", "openai", "opentelemetry-instrumentation-genai-agno",
                 "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai",
                 "opentelemetry-sdk"),
                venv="genai-agno", scenarios=tuple(MULTI_AGENT))
          for name in ("genai-agno-openai-team", "genai-agno-openai-team-coordinate")),
        # DSPy's calls never reach the OpenAI SDK (its default LM engine), so the OpenAI
        # client instrumentation would add nothing: no `-openai` stack.
        *(Stack(name, "genai_framework_agent", "openai",
                ("dspy", "litellm", "opentelemetry-instrumentation-genai-dspy",
                 "opentelemetry-util-genai", "opentelemetry-sdk"),
                venv="genai-dspy")
          for name in ("genai-dspy", "genai-dspy-json")),
        *(Stack(name, "genai_framework_agent", "openai",
                ("smolagents", "openai", "opentelemetry-instrumentation-genai-smolagents",
                 "opentelemetry-util-genai", "opentelemetry-sdk",
                 *(("opentelemetry-instrumentation-genai-openai",) if "-openai" in name else ())),
                venv="genai-smolagents")
          for name in ("genai-smolagents", "genai-smolagents-stream", "genai-smolagents-openai",
                       "genai-smolagents-openai-stream")),
        # LlamaIndex's own OTel integration (`llama-index-observability-otel`).
        *(Stack(name, "llamaindex_otel_agent", "openai",
                ("llama-index-core", "llama-index-llms-openai", "openai",
                 "llama-index-observability-otel", "opentelemetry-sdk"),
                venv="llamaindex-otel")
          for name in ("llamaindex-otel", "llamaindex-otel-stream")),
        # Mirascope v2's own OTel GenAI instrumentation (`mirascope.ops`).
        *(Stack(name, "mirascope_loop", "openai",
                ("mirascope", "openai", "opentelemetry-sdk"), venv="mirascope-otel")
          for name in ("mirascope-otel", "mirascope-otel-stream")),
        # langchain-azure-ai's OTel GenAI tracer, a LangChain callback, on LangChain v1.
        *(Stack(name, "langchain_azure_ai_agent", "openai",
                ("langchain", "langgraph", "langchain-core", "langchain-openai", "openai",
                 "langchain-azure-ai", "opentelemetry-sdk"), venv="langchain-azure-ai")
          for name in ("langchain-azure-ai", "langchain-azure-ai-stream")),
    )
}  # fmt: skip


def python_of(stack: str) -> Path:
    return VENVS / STACKS[stack].environment / "bin" / "python"


def installed(stack: str) -> bool:
    env = VENVS / STACKS[stack].environment
    return (env / "node_modules" if STACKS[stack].runtime == "node" else python_of(stack)).exists()


def versions(stack: Stack) -> dict[str, str]:
    if stack.runtime == "node":
        modules = VENVS / stack.environment / "node_modules"
        return {d: json.loads((modules / d / "package.json").read_text())["version"]
                for d in stack.distributions}  # fmt: skip
    code = (
        "import importlib.metadata as m, json, sys; "
        "print(json.dumps({d: m.version(d) for d in sys.argv[1:]}))"
    )
    out = subprocess.run([str(python_of(stack.name)), "-c", code, *stack.distributions],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout)


def drive(
    server: StackServer, stack: Stack, scenario: str, folder: Path
) -> subprocess.CompletedProcess[str]:
    # OpenAI clients take the base URL with its /v1; Anthropic's and Gemini's add their own.
    base = server.base_url(stack.name, scenario) + ("/v1" if stack.api == "openai" else "")
    if stack.runtime == "node":
        return _drive_node(stack, scenario, base, folder)
    module = f"tests.ingest.instrumented.stacks.{stack.driver}"
    return subprocess.run(
        [str(python_of(stack.name)), "-m", module, stack.name, scenario, base, str(folder)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _drive_node(
    stack: Stack, scenario: str, base: str, folder: Path
) -> subprocess.CompletedProcess[str]:
    # Node resolves a script's bare imports from the script's own folder up; run through a
    # link in the environment (`--preserve-symlinks-main` keeps the link's path), they
    # resolve in its node_modules.
    drivers = VENVS / stack.environment / "drivers"
    if not drivers.is_symlink():
        with contextlib.suppress(FileExistsError):  # scenarios run in parallel make it too
            drivers.symlink_to(HERE / "js", target_is_directory=True)
    script = {
        "requests": [t.request for t in ALL_SCENARIOS[scenario].turns],
        "system": SYSTEM_PROMPT, "model": MODEL, "tools": TOOLS,
    }  # fmt: skip
    return subprocess.run(
        ["node", "--preserve-symlinks", "--preserve-symlinks-main",
         str(drivers / f"{stack.driver}.mjs"), stack.name, scenario, base, str(folder)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "TURNSCORE_SCENARIO": json.dumps(script)},
    )  # fmt: skip


def record(stack: Stack, server: StackServer, into: Path, scenario: str) -> str | None:
    """Record one scenario into `into/<scenario>`; the error text when the driver failed."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / scenario
        proc = drive(server, stack, scenario, folder)
        if proc.returncode != 0:
            return proc.stderr[-3000:]
        wire = [w.as_json() for w in server.wire_of(stack.name, scenario)]
        (folder / "wire.json").write_text(json.dumps(wire, indent=1) + "\n")
        expected = expected_turns(scenario, wire)
        (folder / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
        target = into / scenario
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(folder, target)
    return None


def main(argv: list[str]) -> int:
    names = argv or [s for s in STACKS if installed(s)]
    failed = 0
    with StackServer() as server:
        for name in names:
            stack = STACKS[name]
            into = FIXTURES / name
            into.mkdir(parents=True, exist_ok=True)
            with ThreadPoolExecutor(max_workers=2) as pool:
                errors = dict(zip(stack.scenarios, pool.map(
                    lambda s, stack=stack, into=into: record(stack, server, into, s),
                    stack.scenarios,
                ), strict=True))  # fmt: skip
            for scenario, error in errors.items():
                if error:
                    failed += 1
                    print(f"{name}/{scenario}: driver failed\n{error}", file=sys.stderr)
            (into / "versions.json").write_text(json.dumps(versions(stack), indent=1) + "\n")
            print(f"{name}: {sum(e is None for e in errors.values())}/{len(errors)} recorded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
