"""Committed real exports of agent stacks the corpus never showed, ingested and compared with
the wire, field by field.

`make stack-fixtures` recorded each stack (installed unmodified from PyPI into its own
`.stacks/<stack>/` environment) against the scripted server of
`tests/ingest/instrumented/stacks/wire.py`; `tests/fixtures/stacks/<stack>/<scenario>/` holds
the OTLP protobuf files the OTel SDK exported, the wire records (`wire.json`) and the turns
derived from them (`expected.json`). CI installs none of these frameworks: it reads the files.

Where a stack's telemetry really lacks a field, `KNOWN_GAPS` says why and the test proves
the value is nowhere in the export. Where the value is in the export but ingestion does not
recover it yet, `NOT_YET` marks the case as a strict xfail, so a fix that makes it pass
shows and its entry is removed. The recovery table:
`python -m tests.ingest.instrumented.stacks.check`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.instrumented.scenarios import MULTI_AGENT, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.check import (
    Recording,
    compare,
    load,
    recorded,
    rederived,
    turns_right,
)
from tests.ingest.instrumented.stacks.common import AGENT_NAME
from tests.ingest.instrumented.stacks.expect import FIELDS, expected_turns
from tests.ingest.instrumented.stacks.record import FIXTURES, STACKS, drive, installed
from tests.ingest.instrumented.stacks.wire import StackServer
from tests.ingest.test_instrumented import export_text, in_raw

RECORDED = recorded()


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Recording]:
    done: dict[tuple[str, str], Recording] = {}

    def get(stack: str, scenario: str) -> Recording:
        if (stack, scenario) not in done:
            out = tmp_path_factory.mktemp(f"{stack}-{scenario}")
            done[stack, scenario] = load(stack, scenario, out)
        return done[stack, scenario]

    return get


@dataclass(frozen=True)
class Gap:
    stack: str
    case: str
    """A scenario, `scenario#turn`, or '*' for all."""
    field: str
    """One of FIELDS, or "turns": the scenario's turn list (`test_one_turn_per_request`)."""
    reason: str
    absent: Callable[[Recording, int], list[str]]
    """Texts of the recording's expected turn `int` that must appear nowhere in the export
    for the gap to be real."""


def _never_called(rec: Recording, index: int) -> list[str]:
    """Descriptions of the tools no turn of the recording called."""
    called = {c["name"] for x in rec.expected for c in x["calls"]}
    return [d for name, d, _ in rec.expected[index]["tools"] if name not in called]


def _structured_results(rec: Recording, index: int) -> list[str]:
    """The JSON text of the turn's structured tool results (a number may be anywhere)."""
    return [json.dumps(c["result"]) for c in rec.expected[index]["calls"]
            if isinstance(c["result"], dict | list)]


def _repr_results(rec: Recording, index: int) -> list[str]:
    """The turn's results the model was sent as a Python repr (a dict's or a list's)."""
    return [c["result"] for c in rec.expected[index]["calls"]
            if isinstance(c["result"], str) and c["result"].startswith(("{'", "[{'"))]


_NOT_SEEN: dict[str, Callable[[Recording, int], list[str]]] = {
    # No model call's response id: the turn list is checked by its model calls too.
    "turns": lambda rec, index: ["chatcmpl-"],
    "request": lambda rec, index: [rec.expected[index]["request"]],
    "system_prompt": lambda rec, index: [rec.expected[index]["system_prompt"][:60]],
    "tools": lambda rec, index: [d.split("\n")[0] for _, d, _ in rec.expected[index]["tools"]],
    "final_answer": lambda rec, index: [rec.expected[index]["final_answer"]],
    "llm_calls": lambda rec, index: ["chatcmpl-"],
    "usage": lambda rec, index: ["gen_ai.usage"],
}
"""What a stack that records no model call lacks, field by field, as texts the export must
not hold."""


def _no_model_call(stack: str, why: str, fields: tuple[str, ...]) -> tuple[Gap, ...]:
    """The gaps of a framework instrumentation that leaves its model calls to a client
    instrumentation nobody installed: every field only a model call records."""
    return tuple(Gap(stack, "*", field, why, _NOT_SEEN[field]) for field in fields)


def _itemized_outputs(rec: Recording, index: int) -> list[str]:
    """The turn's results the model was sent as several text items (a Responses API
    `function_call_output` whose `output` is a list), their texts joined as the expected
    result joins them."""
    ids = {c["id"] for c in rec.expected[index]["calls"]}
    out = []
    for exchange in rec.wire:
        for item in exchange["request"].get("input") or ():
            given = item.get("output") if isinstance(item, dict) else None
            if item.get("call_id") in ids and isinstance(given, list) and len(given) > 1:
                out.append("".join(p.get("text") or "" for p in given))
    return sorted(set(out))


CALLS = ("call.id", "call.name", "call.arguments", "call.result", "call.is_error")
_CODEX = ("codex-cli-otel", "codex-cli-openinference")
WITH_TOOLS = ("single_tool", "parallel_tools", "tool_error", "multi_turn")

_OPENAI_V2 = ("openai-v2-spans", "openai-v2-events", "openai-v2-span-and-event",
              "openai-v2-span-and-event-stream", "openai-v2-legacy-events")

_GENAI_OPENAI_CHAT = ("genai-openai-spans", "genai-openai-spans-stream",
                      "genai-openai-spans-emit-event", "genai-openai-events",
                      "genai-openai-events-stream", "genai-openai-span-and-event",
                      "genai-openai-span-and-event-stream", "genai-openai-raw-response",
                      "genai-openai-raw-response-stream")
_GENAI_OPENAI_RESPONSES = ("genai-openai-responses", "genai-openai-responses-stream",
                           "genai-openai-responses-events", "genai-openai-responses-events-stream",
                           "genai-openai-responses-span-and-event",
                           "genai-openai-responses-stream-helper")
_GENAI_ANTHROPIC = ("genai-anthropic", "genai-anthropic-stream", "genai-anthropic-events",
                    "genai-anthropic-events-stream", "genai-anthropic-span-and-event",
                    "genai-anthropic-create-stream")
_GENAI_BEDROCK = ("genai-bedrock", "genai-bedrock-stream", "genai-bedrock-events",
                  "genai-bedrock-events-stream", "genai-bedrock-span-and-event")
"""The OTel project's official GenAI instrumentations (opentelemetry-python-genai 1.3b0, on
util-genai 1.3b0) on raw client loops, by API."""

_LOGFIRE_AGENTS = ("logfire-openai-agents", "logfire-openai-agents-stream",
                   "logfire-openai-agents-responses", "logfire-openai-agents-responses-stream")
_SCRUBBED_TEXT = {"request": "Search the docs for 'authentication'",
                  "call.arguments": '"authentication"',
                  "call.result": "Send your API key as a bearer token",
                  "final_answer": "Authentication uses bearer API keys"}  # fmt: skip
"""What Logfire's scrubbing took from the multi_turn scenario's first turn."""
_OTEL_JS_OPENAI = ("openai-js-otel", "openai-js-otel-stream", "openai-js-otel-responses",
                   "openai-js-otel-responses-stream", "openai-js-elastic",
                   "openai-js-elastic-stream", "openai-agents-js-otel",
                   "openai-agents-js-otel-stream", "openai-agents-js-otel-responses",
                   "openai-agents-js-otel-responses-stream")
"""Stacks whose telemetry is the OTel JS OpenAI instrumentation's (or Elastic's) alone: a
raw client loop, or the OpenAI Agents JS SDK with its own tracing off."""
_OTEL_JS_NOCONTENT = ("openai-js-otel-nocontent", "openai-js-otel-responses-nocontent")
_ANTHROPIC_SDK_CONTENT = ("anthropic-sdk-otel", "anthropic-sdk-otel-stream",
                          "anthropic-sdk-otel-conversation", "anthropic-sdk-otel-tool-runner",
                          "anthropic-js-sdk-otel", "anthropic-js-sdk-otel-stream")
"""The Anthropic SDKs tracing themselves alone, content mode "content"."""


def _request(rec: Recording, index: int) -> list[str]:
    return [rec.expected[index]["request"]]


def _answer(rec: Recording, index: int) -> list[str]:
    return [rec.expected[index]["final_answer"]]


def _argument_values(rec: Recording, index: int) -> list[str]:
    """The string values of the turn's calls' arguments."""
    return [v for c in rec.expected[index]["calls"] for v in c["arguments"].values()
            if isinstance(v, str)]


def _result_texts(rec: Recording, index: int) -> list[str]:
    """The turn's tool results: a text as it is, a structured one as JSON."""
    return [c["result"] if isinstance(c["result"], str) else json.dumps(c["result"])
            for c in rec.expected[index]["calls"]]
_AZURE_AGENTS = ("azure-ai-agents", "azure-ai-agents-nocontent", "azure-ai-agents-auto",
                 "azure-ai-agents-steps")
"""The Azure AI Agents service's client, `azure-ai-agents`, traced by its own
AIAgentsInstrumentor (`azure_agents_agent.py`)."""


def _quoted_names(rec: Recording, index: int) -> list[str]:
    """The turn's called tools' names as a JSON text would hold them (the request and the
    answer name some of them in prose)."""
    return [f'"{c["name"]}"' for c in rec.expected[index]["calls"]]


def _argument_objects(rec: Recording, index: int) -> list[str]:
    """The turn's calls' arguments as JSON objects (their values are quoted in the request
    and the answer, their names in the tools' results)."""
    return [json.dumps(c["arguments"]) for c in rec.expected[index]["calls"]]


_STRANDS_JS = ("strands-js", "strands-js-latest", "strands-js-responses")

_VOLTAGENT = ("voltagent", "voltagent-stream")
KNOWN_GAPS: tuple[Gap, ...] = (
    # The Azure AI Agents service's client tracing (azure-ai-agents 1.1.0
    # `telemetry/_ai_agents_instrumentor.py`): start_create_agent_span and
    # start_thread_run_span take the tools (`_tools`, `_toolset`) and record none of them.
    *(Gap(stack, "*", "tools",
          "azure-ai-agents' AIAgentsInstrumentor records no tool definition: create_agent "
          "and start_thread_run spans take the tools and drop them (`_tools` unused)",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in _AZURE_AGENTS),
    # The calls the run asks for (`required_action.submit_tool_outputs.tool_calls`) are read
    # by the app from the run that get_thread_run returns, whose span records only the run's
    # status, id, model and usage (`set_end_run`); only a run-step listing or a stream's
    # run-step event would record them (`_add_tool_call_event`), and these apps do neither
    # (`-steps` lists the steps). The submitted outputs keep only the call id
    # (`_add_tool_message_events`).
    *(Gap(stack, case, field,
          "azure-ai-agents' tracing records the calls a run asks for nowhere unless the app "
          "lists the run's steps: get_thread_run keeps status and usage, submit_tool_outputs "
          "only each output's call id (and content)", absent)
      for stack in _AZURE_AGENTS if stack != "azure-ai-agents-steps" for case in WITH_TOOLS
      for field, absent in (("call.name", _quoted_names), ("call.arguments", _argument_objects))),
    # Content recording off: every gen_ai.event.content body keeps only its role (messages)
    # or the call id (tool outputs).
    *(Gap("azure-ai-agents-nocontent", "*", field,
          "content recording off (AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED=false): "
          "the message events keep only their role, the tool outputs only their call id",
          _NOT_SEEN[field])
      for field in ("request", "system_prompt", "final_answer")),
    *(Gap("azure-ai-agents-nocontent", case, "call.result",
          "content recording off: a tool output event keeps only its call id", _result_texts)
      for case in WITH_TOOLS),
    # LlamaIndex's OTel integration drops a streamed call's end event (it comes after the
    # span closed): the last answer is only in the run's StopEvent summary, cut at 200
    # characters (llama-index-workflows `_event_summary.py`).
    *(Gap("llamaindex-otel-stream", case, "final_answer",
          "LlamaIndex's OTel integration drops a streamed call's LLMChatEndEvent; the answer "
          "is only in the run's workflow.output summary, cut at 200 characters before the "
          "text's end", _NOT_SEEN["final_answer"])
      for case in ("parallel_tools", "tool_error", "multi_turn#0")),
    # Mirascope 2.8's GenAI instrumentation records its own tool schema (`ToolSchema`
    # parameters, `$defs` null and no `type`: mirascope `ops/_internal/instrumentation/llm/
    # common.py`), not the one its OpenAI encoder sends (`type: object`, no `$defs`).
    *(Gap(stack, "*", "tools",
          "Mirascope's gen_ai.tool.definitions carry its own parameter schema, not the one "
          "sent (its OpenAI encoder adds `type: object` and drops the null `$defs`): the "
          "schema the model saw is nowhere", lambda rec, index: ['"type":"object"',
                                                                '"type": "object"'])
      for stack in ("mirascope-otel", "mirascope-otel-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "Mirascope makes no tool span, and its messages (gen_ai.input.messages' "
          "tool_call_response, mirascope.response.messages' tool_output) keep a failed "
          "tool's result text without its ToolOutput error: the failure is only in the text",
          lambda rec, index: ["is_error", "exception.type", "ToolExecutionError"])
      for stack in ("mirascope-otel", "mirascope-otel-stream")),
    Gap("anthropic-openllmetry", "tool_error", "call.is_error",
        "a raw client loop has no tool span, and OpenLLMetry's gen_ai.input.messages keep the "
        "tool_result's text but drop its is_error flag: the failure is only in the text",
        lambda rec, index: ["is_error", "exception.type"]),
    Gap("strands-latest", "*", "tools",
        "Strands 1.62 with the latest opt-in names the agent's tools (gen_ai.agent.tools) but "
        "defines only the called ones, on their execute_tool spans (gen_ai.tool.description, "
        "gen_ai.tool.json_schema): the others' descriptions and schemas are nowhere",
        _never_called),
    Gap("pydantic-ai-logfire", "tool_error", "call.result",
        "Pydantic AI sends a failed tool's return (ToolFailed) to an OpenAI chat model wrapped "
        "as {\"error\": ...}; its telemetry (execute_tool and the next chat span's "
        "tool_call_response) records the failure text alone",
        lambda rec, index: ['{"error":', '{"error": ']),
    Gap("anthropic-logfire", "tool_error", "call.is_error",
        "a raw client loop has no tool span, and Logfire 5's default format (version 2: OTel "
        "GenAI messages) converts a tool_result to a tool_call_response without its is_error "
        "flag: the failure is only in the text (version 1's request_data keeps it)",
        lambda rec, index: ["is_error", "exception.type"]),
    Gap("anthropic-logfire-stream", "tool_error", "call.is_error",
        "as anthropic-logfire: the default format's tool_call_response has no is_error flag",
        lambda rec, index: ["is_error", "exception.type"]),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and a chat completions tool message has no "
          "error flag: the failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openai-openinference-openllmetry", "openai-three-instrumentations",
                    "openai-three-instrumentations-stream", "litellm-otel",
                    "openai-openllmetry-0.33", "openai-openllmetry-0.33-stream",
                    "openai-openinference-0.1.12", "openai-openinference-0.1.12-stream",
                    "logfire-openai-2.11", "logfire-openai-2.11-stream")),
    Gap("autogen-agentchat", "*", "tools",
        "AutoGen 0.7 describes only the tools it ran (gen_ai.tool.description on execute_tool, "
        "no schema) and the OTel OpenAI instrumentation (openai-v2 2.4b0) records no "
        "gen_ai.tool.definitions: the others' descriptions and every schema are nowhere",
        _never_called),
    Gap("openai-agents-otel", "*", "tools",
        "the official OTel bridge of the OpenAI Agents SDK (openai-agents-v2 0.1.0) records no "
        "gen_ai.tool.definitions and no description: only a called tool's name, on its "
        "execute_tool span", _never_called),
    # The OTel JS OpenAI instrumentation and Elastic's, which it was donated from, read a
    # request's messages (and a Responses call's `instructions`), never its `tools`
    # (`@opentelemetry/instrumentation-openai` 0.22.0 `_startChatCompletionsSpan`,
    # `_startResponsesSpan`; `@elastic/opentelemetry-instrumentation-openai` 0.5.1 the same).
    *(Gap(stack, "*", "tools",
          "the OTel JS OpenAI instrumentation (and Elastic's) records no tool definitions: "
          "tools are named only by the calls the model made, no description or schema",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in _OTEL_JS_OPENAI),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and the tool message (gen_ai.tool.message "
          "event, or a Responses function_call_output as a tool_call_response part) has no "
          "error flag: the failure is only in the text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in (*_OTEL_JS_OPENAI, *_OTEL_JS_NOCONTENT)),
    # The same instrumentation with content capture off, its default: the messages' roles,
    # the calls' ids and names, and (Responses) the instructions; no text, argument or result.
    *(Gap(stack, "*", field, "content capture off: the instrumentation records no message "
          "text (`captureMessageContent` false)", absent)
      for stack in _OTEL_JS_NOCONTENT
      for field, absent in (("turns", _request), ("request", _request), ("final_answer", _answer),
                            ("tools", lambda rec, index: [
                                d for _, d, _ in rec.expected[index]["tools"]]))),
    *(Gap(stack, case, field, "content capture off: no tool call's arguments, no tool "
          "message's content", absent)
      for stack in _OTEL_JS_NOCONTENT for case in WITH_TOOLS
      for field, absent in (("call.arguments", _argument_values),
                            ("call.result", _result_texts))),
    Gap("openai-js-otel-nocontent", "*", "system_prompt",
        "content capture off: the gen_ai.system.message event's body is empty (a Responses "
        "call's instructions are on its span regardless)", lambda rec, index: [SYSTEM_PROMPT]),
    Gap("openlit-openai", "tool_error", "call.is_error",
        "a raw client loop has no tool span, and OpenLIT's tool_call_response part keeps the "
        "result's text only: the failure is only in the text",
        lambda rec, index: ["is_error", "exception.type"]),
    *(Gap(stack, "*", "tools",
          "the Agents SDK's chat-completions generation span records messages, not the tools "
          "sent (openai-agents `models/openai_chatcompletions.py`), and OpenInference's agent "
          "span names no tools: only the called ones are defined, on their TOOL spans",
          _never_called)
      for stack in ("openai-agents-openinference", "openai-agents-openinference-0.0")),
    Gap("anthropic-openllmetry-stream", "tool_error", "call.is_error",
        "as anthropic-openllmetry: gen_ai.input.messages keep a tool_result's text, not its "
        "is_error flag", lambda rec, index: ["is_error", "exception.type"]),
    Gap("pydantic-ai-otel", "tool_error", "call.result",
        "as pydantic-ai-logfire: the {\"error\": ...} wrapping of a ToolFailed return is the "
        "OpenAI model's, after telemetry recorded the failure text alone",
        lambda rec, index: ['{"error":', '{"error": ']),
    *(Gap(stack, "*", "tools",
          "the OTel contrib botocore instrumentation (0.66b2) records nothing of a Converse "
          "request's toolConfig: tools are named only by the calls the model made, no "
          "description or schema anywhere",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in ("bedrock-botocore", "bedrock-botocore-stream")),
    *(Gap(stack, "*", "tools",
          "as strands-latest: Strands 1.62 defines only the called tools, on their execute_tool "
          "spans; the BedrockModel sends the rest in toolConfig, which its chat spans do not "
          "record", _never_called)
      for stack in ("strands-bedrock", "strands-bedrock-nostream", "strands-bedrock-botocore")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop under @observe() has no tool observation, and the chat "
          "completions tool message in the next generation's input has no error flag: the "
          "failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("langfuse-openai", "langfuse-openai-stream", "langfuse-v3-openai",
                    "langfuse-v3-openai-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and MLflow's OpenAI autolog records the chat "
          "completions request, whose tool message has no error flag: the failure is only in "
          "the result's text", lambda rec, index: ["is_error", "exception.type"])
      for stack in ("mlflow-openai", "mlflow-openai-stream", "mlflow-openai-genai")),
    # OpenLLMetry's Agents SDK processor reads a model call's output, usage and tools from
    # the span data's `response` (opentelemetry-instrumentation-openai-agents 0.62.4
    # `_hooks.py` `_end_generation_span`), which only a Responses model's span has: a chat
    # completions model's GenerationSpanData (output, usage, no tools) gets its input alone.
    Gap("openai-agents-openllmetry", "*", "tools",
        "the Agents SDK's chat-completions generation span carries no tools and OpenLLMetry's "
        "processor reads tools from a Responses `response` only: a called tool's name alone, "
        "on its tool span", lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]]),
    # The same processor with its MCP instrumentation beside it (`openai-agents-mcp-
    # openllmetry`): the tools come from the MCP `tools/list` span, the rest is as lacking.
    *(Gap(stack, "*", "usage",
          "OpenLLMetry's processor reads usage from a Responses `response` only; a chat "
          "completions generation span's usage dict is dropped",
          lambda rec, index: ["gen_ai.usage.input_tokens", "prompt_tokens", "input_tokens"])
      for stack in ("openai-agents-openllmetry", "openai-agents-mcp-openllmetry")),
    *(Gap(stack, case, "final_answer",
          "OpenLLMetry's processor reads a model call's output from a Responses `response` "
          "only: a chat completions generation span has no output, and the last answer of a "
          "conversation is replayed nowhere",
          lambda rec, index: [rec.expected[index]["final_answer"]])
      for stack in ("openai-agents-openllmetry", "openai-agents-mcp-openllmetry")
      for case in ("single_tool", "parallel_tools", "no_tool", "tool_error", "multi_turn#1")),
    *(Gap(stack, "tool_error", "call.is_error",
          "OpenLLMetry's CrewAI instrumentation makes no tool span, and CrewAI sends a failed "
          "tool's error as the tool message's text (`Error executing tool: ...`), which has "
          "no error flag: the failure is only in the text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("crewai-openllmetry", "crewai-openllmetry-sequential",
                    "crewai-openllmetry-openinference-openai")),
    Gap("langchain-agentexecutor-openllmetry", "tool_error", "call.is_error",
        "an AgentExecutor hands a handled ToolException's text to the model as a plain "
        "observation (no ToolMessage status): the tool span ends in success and the failure "
        "is only in the text", lambda rec, index: ["is_error", "exception.type"]),
    Gap("litellm-openinference", "tool_error", "call.is_error",
        "a raw client loop has no tool span, and a chat completions tool message has no error "
        "flag: the failure is only in the result's text",
        lambda rec, index: ["is_error", "exception.type"]),
    Gap("autogen-openinference", "*", "tools",
        "OpenInference's AutoGen AgentChat instrumentation (0.1.22) records no tools on the "
        "model-client span (no llm.tools) and AutoGen's own spans describe only the tools that "
        "ran, with no schema (its TOOL span's tool.parameters are the call's arguments): the "
        "others' descriptions and every schema are nowhere", _never_called),
    Gap("pydantic-ai-openinference", "tool_error", "call.result",
        "as pydantic-ai-otel: the {\"error\": ...} wrapping of a ToolFailed return is the "
        "OpenAI model's, after telemetry (and the OpenInference processor copying it) recorded "
        "the failure text alone", lambda rec, index: ['{"error":', '{"error": ']),
    *(Gap(stack, "*", "tools",
          "as openai-agents-otel: the OTel bridge (openai-agents-v2 0.1.0) defines no tool, not "
          "even the handoff's transfer tool or the agent offered as a tool: names only, from "
          "execute_tool spans and the calls", lambda rec, index: [
              d for _, d, _ in rec.expected[index]["tools"]])
      for stack in ("openai-agents-otel-handoff", "openai-agents-otel-as-tool")),
    *(Gap(stack, "*", "tools",
          "OpenInference's openai-agents 2.6.0 renders the SDK's handoff span as a TOOL span "
          "`handoff to <agent>` holding only the two agents' names (input.value, "
          "output.value): the transfer tool's description and schema are nowhere (the "
          "chat-completions generation span records no tools)",
          lambda rec, index: [d for n, d, _ in rec.expected[index]["tools"]
                              if n.startswith("transfer_to_")])
      for stack in ("openai-agents-openinference-handoff",
                    "openai-agents-openinference-handoff-nested")),
    # OpenLLMetry 0.62's Bedrock instrumentation turns a toolResult into a tool_call_response
    # of its text alone, its status dropped (opentelemetry-instrumentation-bedrock
    # `span_utils.py` `_converse_content_to_parts`).
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and OpenLLMetry's Bedrock instrumentation keeps "
          "a toolResult's text but not its status: the failure is only in the text",
          lambda rec, index: ['"status": "error"', '"status":"error"', "exception.type"])
      for stack in ("bedrock-openllmetry", "bedrock-openllmetry-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and a chat completions tool message has no "
          "error flag: the failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("groq-openllmetry", "groq-openllmetry-stream")),
    # OpenLLMetry 0.62's Mistral AI instrumentation records each prompt message's content and
    # role and each choice's content, role and finish reason, nothing else: no tools, no
    # tool_calls, no tool_call_id (opentelemetry-instrumentation-mistralai `__init__.py`
    # `_set_input_attributes`, `_set_response_attributes`); the SDK's own span (mistralai
    # `extra/observability/otel.py`) carries metadata and usage only.
    Gap("mistralai-openllmetry", "*", "tools",
        "OpenLLMetry's Mistral AI instrumentation (0.62) records no tools of the request, and "
        "the SDK's own span none either", lambda rec, index: [
            d for _, d, _ in rec.expected[index]["tools"]]),
    *(Gap("mistralai-openllmetry", case, field,
          "OpenLLMetry's Mistral AI instrumentation (0.62) records no tool_calls, of a choice "
          "or of a replayed assistant message: no call's id, name or arguments is anywhere",
          lambda rec, index: [c["id"] for c in rec.expected[index]["calls"]])
      for case in WITH_TOOLS for field in ("call.id", "call.name", "call.arguments",
                                           "call.is_error")),
    Gap("haystack-openllmetry", "tool_error", "call.is_error",
        "OpenLLMetry instruments Haystack's generators, not its tools, and the Agent sends a "
        "failed tool's error to the model as the tool message's text, which has no error "
        "flag: the failure is only in the text",
        lambda rec, index: ["is_error", "exception.type"]),
    *(Gap(stack, "tool_error", "call.is_error",
          "as openlit-openai: a raw client loop has no tool span, and OpenLIT's "
          "tool_call_response part keeps a tool_result's text, not its is_error flag",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openlit-anthropic", "openlit-anthropic-stream")),
    # OpenLIT fills usage with its own estimate when the provider sent none (openlit
    # `instrumentation/langchain/utils.py` and `instrumentation/openai/utils.py`,
    # `common_chat_logic`: `general_tokens`, ceil(len(text) / 2)), under the same
    # gen_ai.usage.* keys.
    Gap("openlit-langgraph-stream", "*", "usage",
        "langchain-openai streams without usage (no stream_options): the wire has none, and "
        "the export's gen_ai.usage.* are OpenLIT's length estimate, not told apart from "
        "counted usage", lambda rec, index: []),
    Gap("openlit-openai-agents-stream", "*", "usage",
        "the Agents SDK's chat completions model streams without usage here: the wire has "
        "none, and the export's gen_ai.usage.* are OpenLIT's length estimate",
        lambda rec, index: []),
    Gap("openlit-crewai", "tool_error", "call.is_error",
        "OpenLIT's CrewAI instrumentation makes no tool span for a native tool call, and "
        "CrewAI sends a failed tool's error as the tool message's text, which has no error "
        "flag: the failure is only in the text",
        lambda rec, index: ["is_error", "exception.type"]),
    *(Gap(stack, "*", "tools",
          "the Azure AI Inference SDK's tracing (azure-ai-inference 1.0.0b9 `tracing.py`) "
          "records the request's messages and the choices, never its tools: named only by "
          "the calls the model made",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in ("azure-ai-inference", "azure-ai-inference-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and a chat completions tool message has no "
          "error flag: the failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("groq-openinference", "mistralai-openinference", "azure-ai-inference",
                    "azure-ai-inference-stream")),
    *(Gap(stack, "*", "tools",
          "the Agents SDK's chat-completions generation span records no tools, and "
          "OpenInference's mcp_tools span (the SDK's MCP list-tools span) only their names: "
          "only the called tools are described, on their TOOL spans", _never_called)
      for stack in ("openai-agents-mcp", "openai-agents-mcp-unlinked")),
    *(Gap(stack, "*", "tools",
          "openai-v2 records no tools: 2.4b0 never sets the invocation's tool_definitions "
          "(opentelemetry-python-contrib instrumentation-genai/opentelemetry-instrumentation-"
          "openai-v2 patch.py), in any capture mode, and 2.3b0's v1.30 events have no place "
          "for them: no tool's description or schema",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in _OPENAI_V2),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw chat-completions loop has no tool span and a tool message no error flag: the "
          "failure is only in the tool_call_response's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in _OPENAI_V2),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and neither a chat tool message nor a Responses "
          "function_call_output has an error flag: the failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in _GENAI_OPENAI_CHAT + _GENAI_OPENAI_RESPONSES),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and util-genai's ToolCallResponsePart has only "
          "`response` and `id` (util/genai/types.py): the genai anthropic and bedrock "
          "instrumentations (messages_extractors.py, extractors.py) keep a tool_result's "
          "content, or a toolResult's, but drop its is_error flag, or its status: the failure "
          "is only in the text", lambda rec, index: ["is_error", "exception.type"])
      for stack in _GENAI_ANTHROPIC + _GENAI_BEDROCK),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and a Responses function_call_output has no "
          "error flag: the failure is only in the output's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openai-responses-openinference", "openai-responses-openinference-stream",
                    "openai-responses-openllmetry", "openai-responses-openllmetry-stream")),
    *(Gap(stack, "tool_error", "call.result",
          "the AI SDK's OpenAI chat provider sends a failed tool's error-text output wrapped as "
          "{\"error\": ...} (@ai-sdk/openai `chat/convert-to-openai-chat-messages.ts`); its "
          "telemetry (execute_tool/ai.toolCall, the next call's messages) has the text alone",
          lambda rec, index: ['{"error":', '{\\"error\\":'])
      for stack in ("vercel-ai", "vercel-ai-stream", "vercel-ai-legacy",
                    "vercel-ai-legacy-stream", "vercel-ai-openinference",
                    "vercel-ai-openinference-stream")),
    *(Gap(stack, "*", "tools",
          "Mastra's OTel exporter (1.4) names the agent's tools on its invoke_agent span "
          "(gen_ai.tool.definitions: names only) and describes only a called tool, on its "
          "execute_tool span (gen_ai.tool.description); no schema anywhere",
          _never_called)
      for stack in ("mastra", "mastra-stream")),
    *(Gap(stack, "tool_error", "call.result",
          "as vercel-ai: the AI SDK's OpenAI chat model Mastra runs on sends a thrown tool's "
          "error as {\"error\": ...}; Mastra's execute_tool span has the message alone "
          "(error.message), and its model-inference spans record no input",
          lambda rec, index: ['{"error":', '{\\"error\\":'])
      for stack in ("mastra", "mastra-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "the Agents SDK for JS exports no OTel spans of its own (its tracing goes to OpenAI's "
          "platform), so there is no tool span; the tool message says only 'An error occurred "
          "while running the tool' and has no error flag",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openai-agents-js-openinference", "openai-agents-js-openinference-stream",
                    "openai-agents-js-openllmetry", "openai-agents-js-openllmetry-stream")),
    Gap("openai-agents-js-openllmetry-stream", "*", "usage",
        "OpenLLMetry's JS OpenAI instrumentation (0.27.0, its chat stream wrapper) builds a "
        "streamed result from the choices' deltas and sets usage only by estimating it "
        "(enrichTokens, off by default): the usage chunk is never read",
        lambda rec, index: ["gen_ai.usage", "prompt_tokens", "input_tokens"]),
    Gap("openai-agents-js-openinference-stream", "*", "usage",
        "OpenInference's JS OpenAI instrumentation (4.2.7, `consumeChatCompletionStreamChunks`) "
        "skips every chunk without choices, so the final usage chunk the Agents SDK asks for "
        "(stream_options.include_usage) is never read: no token counts on streamed calls",
        lambda rec, index: ["llm.token_count", "prompt_tokens", "completion_tokens"]),
    # OpenLLMetry 0.62's google-generativeai sets a stream's response attributes from its
    # last chunk alone, as if Gemini's chunks were cumulative (opentelemetry-instrumentation-
    # google-generativeai `__init__.py` `_build_from_streaming_response`): the text's last
    # piece, the last chunk's function call. The whole answer is nowhere unless a later
    # request replays it.
    *(Gap("google-genai-openllmetry-stream", case, "final_answer",
          "OpenLLMetry's google-generativeai (0.62) records a stream's last chunk as its "
          "output: the answer's last piece; the whole text is in no attribute",
          lambda rec, index: [rec.expected[index]["final_answer"]])
      for case in ("single_tool", "parallel_tools", "no_tool", "tool_error", "multi_turn#1")),
    Gap("mistralai-openinference-stream", "tool_error", "call.is_error",
        "a raw client loop has no tool span, and a chat completions tool message has no "
        "error flag: the failure is only in the result's text",
        lambda rec, index: ["is_error", "exception.type"]),
    Gap("mistralai-openllmetry-stream", "*", "tools",
        "as mistralai-openllmetry: OpenLLMetry's Mistral AI instrumentation (0.62) records no "
        "tools of the request, and the SDK's own span none either", lambda rec, index: [
            d for _, d, _ in rec.expected[index]["tools"]]),
    *(Gap("mistralai-openllmetry-stream", case, field,
          "as mistralai-openllmetry: no tool_calls of a streamed choice or of a replayed "
          "assistant message are recorded: no call's id, name or arguments is anywhere",
          lambda rec, index: [c["id"] for c in rec.expected[index]["calls"]])
      for case in WITH_TOOLS for field in ("call.id", "call.name", "call.arguments",
                                           "call.is_error")),
    # opentelemetry-instrumentation-mistralai 0.62 `_accumulate_streaming_response` starts a
    # stream's usage at zero and adds only what chunks report.
    # BeeAI sends a tool's schema made strict (`use_strict_tool_schema`, default on:
    # `additionalProperties: false` added); OpenInference's BeeAI processor records the
    # tool's own input schema (openinference-instrumentation-beeai `processors/chat.py`,
    # `get_tools`).
    Gap("beeai-openinference", "*", "tools",
        "the request's tool schemas carry the `additionalProperties: false` BeeAI's strict "
        "mode adds; the export's llm.tools are the tools' schemas before it",
        lambda rec, index: ["additionalProperties"]),
    Gap("openai-responses-openllmetry-call-ids", "tool_error", "call.is_error",
        "as openai-responses-openllmetry: a Responses function_call_output has no error flag",
        lambda rec, index: ["is_error", "exception.type"]),
    Gap("autogen-swarm", "handoff", "tools",
        "as autogen-agentchat: AutoGen 0.7's execute_tool spans name and describe the tools "
        "that ran (the handoff tool too) with no schema, and openai-v2 2.4b0 records no "
        "gen_ai.tool.definitions: no schema is anywhere",
        lambda rec, index: ['"required"', '"properties"']),
    Gap("autogen-swarm-openinference", "handoff", "tools",
        "OpenInference's AutoGen AgentChat instrumentation (0.1.22) records a model call's "
        "llm.tools only for the handoff tools; the specialist's get_weather schema is nowhere "
        "(its TOOL span's tool.parameters are the call's arguments)",
        lambda rec, index: ['"enum"']),
    Gap("semantic-kernel-handoff", "handoff", "tools",
        "Semantic Kernel 1.45 records gen_ai.tool.definitions from an agent's own plugins; the "
        "orchestration's Handoff plugin (added to a clone of the agent's kernel) is named only "
        "(sk.available_functions) and described only where it ran (execute_tool): "
        "complete_task, never called, has no description or schema anywhere",
        lambda rec, index: ["Complete the task with a summary", "task_summary"]),
    *(Gap(stack, "handoff", "tools",
          "AgentTool's schema (task) is nowhere: AutoGen's execute_tool span names and "
          "describes the tool it ran, and neither openai-v2 2.4b0 nor OpenInference's AutoGen "
          "AgentChat instrumentation (llm.tools only for handoff tools) records it",
          lambda rec, index: ['"additionalProperties"', '"title"'])
      for stack in ("autogen-as-tool", "autogen-as-tool-openinference")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and an Ollama tool message has no error flag: "
          "the failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("ollama-openllmetry", "ollama-openllmetry-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "as openlit-openai: a raw client loop has no tool span, and OpenLIT's "
          "tool_call_response part keeps the result's text only",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openlit-ollama", "openlit-ollama-stream")),
    # Ollama's API gives a tool call no id, and the `ollama` client's Message model keeps
    # none of a replayed call or tool message (ollama `_types.py` Message.ToolCall): the
    # wire's calls have no id. ChatOllama names each call with a uuid of its own
    # (langchain-ollama `chat_models.py` `_get_tool_calls_from_response`), which LangChain's
    # messages and so the export carry: the ingested id is the framework's, the wire's None.
    *(Gap(stack, case, "call.id",
          "Ollama's calls have no id on the wire; the export's (and the turn's) is the uuid "
          "ChatOllama gave the call, which never reaches the wire",
          lambda rec, index: [])
      for stack in ("langgraph-ollama-openinference", "langgraph-ollama-openinference-stream")
      for case in WITH_TOOLS),
    # The `ollama` client's Tool model has no `default` for a property (ollama `_types.py`
    # Tool.Function.Parameters.Property): the wire's schemas lose the defaults LangChain's
    # tools declare, which OpenInference records with the tools (llm.tools).
    *(Gap(stack, "*", "tools",
          "the ollama client drops each property's `default` from the tool schemas it sends; "
          "the export has LangChain's schemas with them",
          lambda rec, index: ['"top_k": {"type": "integer"}', '"top_k":{"type":"integer"}'])
      for stack in ("langgraph-ollama-openinference", "langgraph-ollama-openinference-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "as openlit-openai: a raw client loop has no tool span, and OpenLIT's "
          "tool_call_response part keeps the result's text only",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openlit-google-genai", "openlit-google-genai-stream", "openlit-mistralai",
                    "openlit-mistralai-stream", "openlit-litellm", "openlit-litellm-stream")),
    # OpenLIT's google-genai instrumentation (1.45, `google_ai_studio/utils.py`) records the
    # request's contents and config's system instruction, never its tools: a called tool is
    # named by its call (gen_ai.tool.name), with no description or schema.
    *(Gap(stack, "*", "tools",
          "OpenLIT's google-genai instrumentation records no tool definitions: only called "
          "tools' names, without description or schema",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in ("openlit-google-genai", "openlit-google-genai-stream")),
    # OpenLIT's Bedrock instrumentation (1.45, `bedrock/utils.py`) keeps a Converse
    # message's text blocks only: no toolUse or toolResult block in the input or output
    # messages, gen_ai.tool.definitions '[]' on its log record, no gen_ai.tool.* keys.
    Gap("openlit-bedrock", "*", "tools",
        "OpenLIT's Bedrock Converse instrumentation records the tools as an empty list",
        lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]]),
    *(Gap("openlit-bedrock", case, field,
          "OpenLIT's Bedrock Converse instrumentation keeps only text blocks: the model's "
          "toolUse blocks and the toolResult blocks sent back are nowhere",
          lambda rec, index: [c["id"] for c in rec.expected[index]["calls"]])
      for case in WITH_TOOLS for field in CALLS),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and a Cohere tool message has no error flag: "
          "the failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openlit-cohere", "openlit-cohere-stream", "cohere-openllmetry",
                    "cohere-openllmetry-stream")),
    *(Gap(stack, "tool_error", "call.result",
          "as pydantic-ai-otel: the {\"error\": ...} wrapping of a ToolFailed return is the "
          "OpenAI model's, after telemetry recorded the failure text alone",
          lambda rec, index: ['{"error":', '{"error": '])
      for stack in ("pydantic-ai-otel-stream", "pydantic-ai-openinference-stream",
                    "pydantic-ai-logfire-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and a chat completions tool message has no "
          "error flag: the failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("litellm-otel-stream", "litellm-openinference-stream")),
    Gap("autogen-agentchat-stream", "*", "tools",
        "as autogen-agentchat: AutoGen describes only the tools it ran (no schema) and the OTel "
        "OpenAI instrumentation records no gen_ai.tool.definitions", _never_called),
    Gap("autogen-openinference-stream", "*", "tools",
        "as autogen-openinference: no llm.tools on the model-client span, and AutoGen's own "
        "spans describe only the tools that ran, with no schema", _never_called),
    # autogen-ext's OpenAIChatCompletionClient.create_stream ends a stream that sent no usage
    # with RequestUsage(prompt_tokens=0, completion_tokens=0); OpenInference's AutoGen
    # instrumentation records the CreateResult's usage as llm.token_count.*.
    Gap("haystack-openllmetry-stream", "tool_error", "call.is_error",
        "as haystack-openllmetry: no tool span, and the failed tool's error reaches the model as "
        "the tool message's text, which has no error flag",
        lambda rec, index: ["is_error", "exception.type"]),
    Gap("openlit-crewai-stream", "tool_error", "call.is_error",
        "as openlit-crewai: no tool span for a native tool call, and CrewAI sends a failed "
        "tool's error as the tool message's text, which has no error flag",
        lambda rec, index: ["is_error", "exception.type"]),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and a chat completions tool message has no "
          "error flag: the failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openai-js-openllmetry", "openai-js-openllmetry-stream",
                    "openai-js-openinference", "openai-js-openinference-stream",
                    "openlit-js-openai", "openlit-js-openai-stream")),
    Gap("openai-js-openllmetry-stream", "*", "usage",
        "as openai-agents-js-openllmetry-stream: OpenLLMetry's JS OpenAI stream wrapper (0.27.0) "
        "never reads the usage chunk (usage only estimated, enrichTokens, off by default)",
        lambda rec, index: ["gen_ai.usage", "prompt_tokens", "input_tokens"]),
    Gap("openai-js-openinference-stream", "*", "usage",
        "as openai-agents-js-openinference-stream: OpenInference's JS OpenAI instrumentation "
        "(4.2.7) skips the usage chunk, which has no choices",
        lambda rec, index: ["llm.token_count", "prompt_tokens", "completion_tokens"]),
    # @traceloop/instrumentation-langchain 0.27.0's callback handler records a chat model's
    # messages as text parts only and no invocation params but the model name.
    *(Gap(stack, "*", "tools",
          "OpenLLMetry's LangChain.js handler (0.27.0) records no tools: no "
          "gen_ai.tool.definitions, and the chain spans' entity input/output hold messages only",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in ("langgraph-js-openllmetry", "langgraph-js-openllmetry-stream")),
    # @traceloop/instrumentation-anthropic 0.27.0 sets no tool attributes on its chat span,
    # and its tool_call_response parts keep a tool_result's content, not its is_error.
    *(Gap(stack, "*", "tools",
          "OpenLLMetry's JS Anthropic instrumentation (0.27.0) records no request tools (no "
          "gen_ai.tool.definitions), and the SDK's own span none either",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in ("anthropic-js-openllmetry", "anthropic-js-openllmetry-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and OpenLLMetry's JS Anthropic "
          "instrumentation's tool_call_response keeps a tool_result's content, not is_error",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("anthropic-js-openllmetry", "anthropic-js-openllmetry-stream")),
    *(Gap(stack, "tool_error", "call.result",
          "as vercel-ai: the AI SDK's OpenAI chat provider sends a failed tool's error-text "
          "output wrapped as {\"error\": ...}; its telemetry has the text alone",
          lambda rec, index: ['{"error":', '{\\"error\\":'])
      for stack in ("vercel-ai-langfuse", "vercel-ai-langfuse-stream")),
    # @genkit-ai/compat-oai 1.42 `model.ts` `toOpenAITool` sends a tool's name and input
    # schema only; Genkit's model span records its GenerateRequest before that conversion.
    *(Gap(stack, "*", "tools",
          "Genkit's OpenAI-compatible plugin (1.42) sends tools without their descriptions; "
          "the model span's genkit:input is the request before the plugin converts it, so the "
          "export says more than the wire (nothing to prove absent)",
          lambda rec, index: [])
      for stack in ("genkit", "genkit-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and Logfire 5's default format (OTel GenAI "
          "messages) has no error flag on a tool message: the failure is only in the text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("logfire-openai", "logfire-openai-stream", "logfire-openai-responses",
                    "logfire-openai-responses-stream")),
    *(Gap(stack, "*", "tools",
          "the Agents SDK's chat-completions generation span records messages, not the tools "
          "sent, and Logfire's agent span names the tools only (`tools`); its Function spans "
          "carry no description: no description or schema is anywhere",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in ("logfire-openai-agents", "logfire-openai-agents-stream")),
    *(Gap(stack, "multi_turn#0", field,
          "Logfire's scrubbing (on as it ships) replaced the whole value of every Agents SDK "
          "span attribute matching 'auth' (the request, the answer, the search result; the "
          "query inside the arguments) with `[Scrubbed due to 'auth']`; only Logfire's own "
          "gen_ai.* messages are exempt, and the agents bridge writes none",
          lambda rec, index, field=field: [_SCRUBBED_TEXT[field]])
      for stack in _LOGFIRE_AGENTS
      for field in ("request", "call.arguments", "call.result", "final_answer")),
    *(Gap(stack, "parallel_tools", "call.result",
          "Logfire's scrubbing replaced the search result the model saw (its repr, in the next "
          "call's input) whole, and the snippet inside the Function span's output, for 'API "
          "key': the result's text is nowhere",
          lambda rec, index: ["Each API key may send 60 requests per minute."])
      for stack in _LOGFIRE_AGENTS),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and AgentOps' OpenAI instrumentation flattens a "
          "tool message's text alone: the failure is only in the text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("agentops-openai", "agentops-openai-stream")),
    Gap("langfuse-openai-agents", "*", "tools",
        "as openai-agents-openinference, whose spans Langfuse's processor exports unchanged: "
        "only the called tools are defined, on their TOOL spans", _never_called),
    *(Gap(stack, "*", "tools",
          "EDOT's OpenAI instrumentation (1.2.0) records no tool definitions, on its span or "
          "in its events: only the called tools' names, in the choices' tool_calls",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in ("edot-openai", "edot-openai-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and EDOT's gen_ai.tool.message event keeps a "
          "tool message's content and id alone: the failure is only in the text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("edot-openai", "edot-openai-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and Langtrace's prompt keeps a tool message as "
          "the app sent it (content and tool_call_id): the failure is only in the text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("langtrace-openai",)),
    *(Gap("langtrace-openai-stream", case, "final_answer",
          "Langtrace's stream wrapper, when the request sent tools, collects only the calls' "
          "argument deltas (utils/llm.py, build_streaming_response): the answer's text is "
          "recorded as \"\", and no later request replays it",
          lambda rec, index: [rec.expected[index]["final_answer"]])
      for case in ("single_tool", "parallel_tools", "tool_error", "no_tool", "multi_turn#1")),
    *(Gap("langtrace-langgraph", case, "call.arguments",
          "Langtrace writes LangChain values through clean_empty, which drops every number "
          "inside a dict (the AI message's tool_calls args lose top_k), and its OpenAI span's "
          "prompt replaces LangChain's assistant message by [{\"id\": \"\", \"type\": \"\"}]",
          lambda rec, index: [f'"top_k": {c["arguments"]["top_k"]}'
                              for c in rec.expected[index]["calls"] if "top_k" in c["arguments"]])
      for case in ("parallel_tools", "multi_turn#0")),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and Laminar's gen_ai.input.messages keep a tool "
          "message as the app sent it (content and tool_call_id): the failure is only in the "
          "text", lambda rec, index: ["is_error", "exception.type"])
      for stack in ("lmnr-openai", "lmnr-openai-stream")),
    # DSPy's ReAct names its tool in the completion's text: a step's call has no id on the
    # wire, and the DSPy convention synthesizes `{tool}_{step}` to join it to its result.
    *(Gap(stack, case, "call.id",
          "ReAct's calls are text fields with no id; the turn's is the DSPy convention's "
          "`{tool}_{step}`", lambda rec, index: [])
      for stack in ("dspy-openinference", "dspy-openinference-json", "mlflow-dspy",
                    "openlit-dspy", "genai-dspy", "genai-dspy-json")
      for case in WITH_TOOLS),
    # OpenInference's DSPy instrumentation wraps `LM.__call__`, which returns the
    # completions' texts: its LLM spans carry no token counts (openinference-
    # instrumentation-dspy `__init__.py` `_LMCallWrapper`).
    *(Gap(stack, "*", "usage",
          "OpenInference's DSPy LM spans record no token counts",
          lambda rec, index: ["llm.token_count", "prompt_tokens", "completion_tokens"])
      for stack in ("dspy-openinference", "dspy-openinference-json")),
    # No instrumentation covers CAMEL: its model calls alone, the tool run by the agent in
    # between (camel `agents/chat_agent.py`), its failure only the tool message's text.
    Gap("camel-openinference", "tool_error", "call.is_error",
        "no span runs CAMEL's tools, and a chat completions tool message has no error flag: "
        "the failure is only in the result's text",
        lambda rec, index: ["is_error", "exception.type"]),
    Gap("openlit-ag2", "tool_error", "call.is_error",
        "OpenLIT's AG2 instrumentation makes no span of a tool's execution, and AG2 sends a "
        "failed tool's error as the tool message's text, which has no error flag",
        lambda rec, index: ["is_error", "execute_tool"]),
    # OpenInference's Claude Agent SDK instrumentation sees the SDK's messages, not the CLI's
    # requests: one AGENT span a response (the prompt, each AssistantMessage, the result's
    # usage) and a TOOL span a tool_use (openinference-instrumentation-claude-agent-sdk
    # `_wrappers.py`); what the CLI sent the model is nowhere.
    Gap("claude-agent-sdk-openinference", "*", "system_prompt",
        "the instrumentation records neither the SDK's system_prompt option nor the CLI's "
        "system blocks", lambda rec, index: [SYSTEM_PROMPT, "x-anthropic-billing-header"]),
    Gap("claude-agent-sdk-openinference", "*", "tools",
        "the instrumentation records no tool definitions: only a called tool's name and "
        "arguments, on its TOOL span",
        lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]]),
    Gap("claude-agent-sdk-openinference", "*", "llm_calls",
        "no span per model call: the AGENT span lists the SDK's AssistantMessages (one a "
        "content block, so parallel calls are two) and no response id",
        lambda rec, index: [w["response"]["id"] for w in rec.wire if w["turn"] == index]),
    Gap("claude-agent-sdk-openinference", "*", "usage",
        "with Claude Code 2.1.277 or newer the instrumentation sums each AssistantMessage's "
        "usage, which the CLI sends before the stream's message_delta gives the output tokens "
        "(the ResultMessage's are right, and dropped): completion is 0",
        lambda rec, index: [f'"llm.token_count.completion": {rec.expected[index]["usage"][1]}']),
    # Claude Code's own telemetry without OTEL_LOG_RAW_API_BODIES (conventions/claude_code.py):
    # no record or span holds a request's system blocks or tools.
    *(Gap(stack, "*", "system_prompt",
          "without raw API bodies Claude Code's telemetry records no system prompt",
          lambda rec, index: [SYSTEM_PROMPT, "x-anthropic-billing-header"])
      for stack in ("claude-code-otel", "claude-code-otel-logs")),
    *(Gap(stack, "*", "tools",
          "without raw API bodies Claude Code's telemetry records no tool definitions: only a "
          "called tool's names, on its tool span or `tool_result` record",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in ("claude-code-otel", "claude-code-otel-logs")),
    # Codex CLI logs no model output text (its `codex.sse_event` records name each SSE
    # event's kind, not its text), nor the request's instructions or tools; OpenInference's
    # interceptor of that telemetry has nothing more (its turn span's output is a
    # `{"output_captured": false, ...}` placeholder).
    *(gap for stack in _CODEX for gap in (
        Gap(stack, "*", "final_answer",
            "Codex CLI's telemetry records no assistant text: its sse_event records carry the "
            "event kind only (`otel.log_agent_responses` logs only a message the response "
            "marks `phase: final_answer`, which the scripted server does not send)",
            lambda rec, index: [rec.expected[index]["final_answer"]]),
        Gap(stack, "*", "system_prompt",
            "Codex CLI's telemetry records no instructions",
            lambda rec, index: [rec.expected[index]["system_prompt"][:60]]),
        Gap(stack, "*", "tools",
            "Codex CLI's telemetry records no tool definitions (a called tool's name only)",
            _never_called),
    )),
    # Qwen Code's telemetry (0.24.4) records the request's contents (`request_text`, Gemini's
    # form) but not its system instruction or tool declarations: no span or record holds
    # them (a called tool's name and description only, on its tool span).
    Gap("qwen-code-otel", "*", "system_prompt",
        "Qwen Code's telemetry records no system instruction: its api_request record's "
        "request_text is the request's contents alone",
        lambda rec, index: [rec.expected[index]["system_prompt"][:60]]),
    Gap("qwen-code-otel", "*", "tools",
        "Qwen Code's telemetry records no tool declarations (a called tool's name and "
        "description only, on its `qwen-code.tool` span)", _never_called),
    # Codex sends a tool's output as the Responses API's content items (its `Wall time`
    # header one, an MCP tool's text another); its `codex.tool_result` record's `output`
    # joins them with a newline, so where there were several, the items as the model got
    # them (whose texts the expected result joins with nothing) are nowhere.
    *(Gap(stack, case, "call.result",
          "Codex CLI's tool_result record joins an output's content items with a newline: "
          "the items the model was sent are nowhere", _itemized_outputs)
      for stack in _CODEX for case in ("parallel_tools", "tool_error")),
    # Claude Code with its traces off (the default): a tool's output is only the tool
    # span's `tool.output` event (OTEL_LOG_TOOL_CONTENT), and without traces there is no
    # tool span; without raw API bodies no record holds it (a failure's text is the
    # `tool_result` record's `error`, so tool_error has it).
    *(Gap("claude-code-otel-logs", case, "call.result",
          "with traces off no record of Claude Code's holds a tool's output: it is the tool "
          "span's `tool.output` event, or a raw request body's", _structured_results)
      for case in ("single_tool", "parallel_tools", "multi_turn")),
    # OpenLIT over a LlamaIndex FunctionAgent: its LlamaIndex instrumentation wraps the base
    # `LLM` methods (which the OpenAI LLM overrides) and RAG components, never the agent
    # workflow or its tools (openlit `instrumentation/llamaindex/__init__.py`): the export is
    # its OpenAI instrumentation's streamed chat spans alone.
    Gap("openlit-llamaindex", "*", "usage",
        "LlamaIndex's OpenAI LLM streams without usage (no stream_options): the wire has none, "
        "and the export's gen_ai.usage.* are OpenLIT's length estimate", lambda rec, index: []),
    Gap("openlit-llamaindex", "tool_error", "call.is_error",
        "no span runs the agent's tools, and a chat completions tool message has no error "
        "flag: the failure is only in the result's text",
        lambda rec, index: ["is_error", "execute_tool"]),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and a chat completions tool message has no "
          "error flag: the failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("together-openinference", "together-openinference-stream",
                    "instructor-openinference")),
    # OpenLLMetry's Together instrumentation (0.62, on together 1: `span_utils.py`) records
    # each prompt message's role and text content and a choice's, nothing else: no tools,
    # no tool_calls of a choice or of a replayed assistant message, no tool_call_id.
    *(Gap(stack, "*", "tools",
          "OpenLLMetry's Together instrumentation (0.62) records no tools of the request",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in ("together-openllmetry", "together-openllmetry-stream")),
    *(Gap(stack, case, field,
          "OpenLLMetry's Together instrumentation (0.62) records no tool_calls, of a choice or "
          "of a replayed assistant message: no call's id, name or arguments is anywhere",
          lambda rec, index: [c["id"] for c in rec.expected[index]["calls"]])
      for stack in ("together-openllmetry", "together-openllmetry-stream")
      for case in WITH_TOOLS for field in ("call.id", "call.name", "call.arguments",
                                           "call.is_error")),
    # Its `_wrap` hands a stream to `_handle_response` as if it were the response and ends
    # the span before the stream is read: a streamed call has its prompt and no output.
    *(Gap("together-openllmetry-stream", case, "final_answer",
          "OpenLLMetry's Together instrumentation (0.62) ends a streamed call's span before "
          "the stream is read: no completion is recorded, and no later request replays this "
          "answer", lambda rec, index: [rec.expected[index]["final_answer"]])
      for case in ("single_tool", "parallel_tools", "no_tool", "tool_error", "multi_turn#1")),
    # OpenLLMetry's Vertex AI instrumentation (0.62 `span_utils.py`) records the positional
    # arguments of generate_content as user prompts and the answer's text: the model's
    # system instruction and tools are the GenerativeModel's, and it records neither.
    *(Gap(stack, "no_tool", field,
          "OpenLLMetry's Vertex AI instrumentation (0.62) records generate_content's contents "
          "alone: not the model's system instruction nor its tools", absent)
      for stack in ("vertexai-openllmetry", "vertexai-openllmetry-stream")
      for field, absent in (
          ("system_prompt", lambda rec, index: [rec.expected[index]["system_prompt"]]),
          ("tools", lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]]))),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and a chat completions tool message has no "
          "error flag (in either convention the translator leaves on the span): the failure is "
          "only in the result's text", lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openllmetry-openinference-translated",
                    "openllmetry-openinference-translated-stream")),
    *(Gap(stack, "tool_error", "call.is_error",
          "as openlit-openai: a raw client loop has no tool span, OpenLIT's tool_call_response "
          "part keeps the result's text only (the translator adds no error either)",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openlit-openinference-translated",
                    "openlit-openinference-translated-stream")),
    *(Gap(stack, "*", "tools",
          "as strands-latest: Strands names the agent's tools (gen_ai.agent.tools, which the "
          "translator turns into llm.tools with a stand-in description) but defines only the "
          "called ones, on their execute_tool spans; the others' descriptions and schemas are "
          "nowhere", _never_called)
      for stack in ("strands-openinference-translated",
                    "strands-openinference-translated-latest")),
    # OpenLIT over a Haystack Agent: its Haystack instrumentation's generator spans and its
    # OpenAI instrumentation's chat spans; no span runs the Agent's tools (ToolInvoker).
    *(Gap(stack, "tool_error", "call.is_error",
          "as haystack-openllmetry: no span runs the tools, and the Agent sends a failed tool's "
          "error as the tool message's text, which has no error flag",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("openlit-haystack", "openlit-haystack-stream")),
    Gap("openlit-haystack-stream", "*", "usage",
        "Haystack's OpenAIChatGenerator streams without usage here: the wire has none, and the "
        "export's gen_ai.usage.* are OpenLIT's length estimate", lambda rec, index: []),
    # OpenLIT over ADK 2.13: ADK writes its tool definitions with `parameters` null (on
    # generate_content and in its records), OpenLIT's create_agent span names and describes
    # them, its Google AI Studio span defines none.
    Gap("openlit-adk", "*", "tools",
        "ADK 2.13's gen_ai.tool.definitions have no schema (parameters null) and OpenLIT's "
        "create_agent definitions are names and descriptions: the schemas (ADK's "
        "`<tool>Params` objects) are nowhere",
        lambda rec, index: [f"{name}Params" for name, _, _ in rec.expected[index]["tools"]]),
    # Older releases still common in production.
    Gap("openai-openllmetry-0.33-stream", "*", "usage",
        "OpenLLMetry's OpenAI instrumentation 0.33 never reads a stream's usage chunk: a "
        "streamed call's tokens are only estimated with tiktoken, and only when token "
        "enrichment is on (`chat_wrappers.py`, `_build_from_streaming_response`)",
        lambda rec, index: ["gen_ai.usage", "prompt_tokens", "llm.usage.total_tokens"]),
    Gap("strands-1.0", "*", "tools",
        "Strands 1.0 names the agent's tools (gen_ai.agent.tools) and defines none: no "
        "description or schema on any span, not even a called tool's execute_tool span",
        lambda rec, index: [d.split("\n")[0] for _, d, _ in rec.expected[index]["tools"]]),
    # OpenLIT 1.26 records a request's prompt as a transcript and, whenever tools were sent,
    # the completion as the stand-in `Function called with tools`: no tools, no calls.
    Gap("openlit-openai-1.26", "*", "tools",
        "OpenLIT 1.26 records no tools of a chat request (only its sampling parameters)",
        lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]]),
    *(Gap("openlit-openai-1.26", case, field,
          "OpenLIT 1.26 records a completion that called tools as `Function called with "
          "tools`, its calls (ids, names, arguments) nowhere, and renders their replay in the "
          "next prompt as `assistant: None`: no call of the turn is recorded",
          lambda rec, index: [c["id"] for c in rec.expected[index]["calls"]])
      for case in WITH_TOOLS
      for field in ("call.id", "call.name", "call.arguments", "call.is_error")),
    *(Gap("openlit-openai-1.26", case, "final_answer",
          "OpenLIT 1.26 records any completion of a request that sent tools (every call of "
          "this loop) as the stand-in `Function called with tools`: the answer is nowhere",
          lambda rec, index: [rec.expected[index]["final_answer"]])
      for case in ("single_tool", "parallel_tools", "no_tool", "tool_error", "multi_turn#1")),
    # The OTel project's GenAI framework instrumentations alone (opentelemetry-python-genai
    # 1.3b0), where they leave the model calls to a client instrumentation (`_no_model_call`).
    *_no_model_call("genai-openai-agents",
                    "the GenAI Agents SDK instrumentation alone is a tracing processor that "
                    "turns the SDK's trace, agent and function spans into invoke_workflow, "
                    "invoke_agent and execute_tool spans, and by design nothing of a model call "
                    "(`processor.py`: 'LLM-level spans ... are not emitted here'): no request, "
                    "instructions, tool definitions or answer",
                    ("turns", "request", "system_prompt", "tools", "final_answer", "llm_calls",
                     "usage")),
    *(Gap("genai-openai-agents", case, "call.id",
          "the SDK's function span has no call id, so its execute_tool span has none either "
          "(no gen_ai.tool.call.id), and no model call's messages hold one",
          lambda rec, index: [c["id"] for c in rec.expected[index]["calls"]])
      for case in WITH_TOOLS),
    *_no_model_call("genai-llama-index",
                    "the GenAI LlamaIndex instrumentation is a span handler for "
                    "'LlamaIndex-owned agent, tool, and retrieval operations' (`_handler.py`, "
                    "`LlamaIndexSpanHandler`): no span of the LLM's calls",
                    ("turns", "llm_calls")),
    Gap("genai-llama-index", "*", "tools",
        "the agent span's gen_ai.tool.definitions are the tools' own schemas; the OpenAI LLM "
        "sends each with `additionalProperties: false` added, and no span of a model call "
        "records what it sent", lambda rec, index: ["additionalProperties"]),
    *(gap for stack in ("genai-agno", "genai-agno-stream")
      for gap in _no_model_call(stack,
                     "the GenAI Agno instrumentation wraps the agent's run and its tools' "
                     "execution (`patch.py`, `patch_agent`), no model call; the agent's "
                     "instructions are not recorded (only a run's `additional_instructions`)",
                     ("turns", "system_prompt", "llm_calls", "usage"))),
    *(gap for stack in ("genai-smolagents", "genai-smolagents-stream")
      for gap in _no_model_call(stack,
                     "the GenAI smolagents instrumentation 1.2b0 records no API-backed "
                     "model's calls (left to the client's instrumentation) and 'Tool calls are "
                     "not instrumented yet' (`__init__.py`): the agent's run alone",
                     ("turns", "system_prompt", "llm_calls", "usage"))),
    *(Gap(stack, case, field,
          "the GenAI smolagents instrumentation 1.2b0 records neither the tools' runs ('Tool "
          "calls are not instrumented yet') nor the model calls that asked for them",
          lambda rec, index: [c["id"] for c in rec.expected[index]["calls"]])
      for stack in ("genai-smolagents", "genai-smolagents-stream")
      for case in WITH_TOOLS
      for field in CALLS),
    # util-genai's default content mode (NO_CONTENT): no messages, tool definitions, tool
    # arguments or results on any span (`_invocation.py`, `should_capture_content`). What is
    # left is the turns' structure: each model call, each tool's name, call id and failure.
    *(Gap("genai-langchain-no-content", "*", field,
          "util-genai captures no content by default: " + what, absent)
      for field, what, absent in (
          ("turns", "the requests are nowhere (one turn a run, every model call in it)",
           _NOT_SEEN["request"]),
          ("request", "the request is nowhere", _NOT_SEEN["request"]),
          ("system_prompt", "the instructions are nowhere", _NOT_SEEN["system_prompt"]),
          ("tools", "no gen_ai.tool.definitions; a called tool's name and description are on "
           "its execute_tool span", _never_called),
          ("final_answer", "the answer is nowhere", _NOT_SEEN["final_answer"]))),
    *(Gap("genai-langchain-no-content", case, field,
          "util-genai captures no content by default: no gen_ai.tool.call.arguments or "
          "gen_ai.tool.call.result (a failed tool's exception message is its status)",
          lambda rec, index: ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"])
      for case in WITH_TOOLS for field in ("call.arguments", "call.result")),
    *(Gap("genai-langchain-no-content", "parallel_tools", field,
          "the model's order of its parallel calls is only in its output messages, not "
          "captured by default; the execute_tool spans start in the order LangGraph's tool "
          "node ran them", lambda rec, index: ["gen_ai.output.messages"])
      for field in ("call.id", "call.name")),
    # The frameworks send a structured result to the model as its Python repr (str()); a
    # GenAI execute_tool span records the object itself (util-genai `object_to_any_value`,
    # JSON), and where no model call is recorded the repr is nowhere.
    *(Gap(stack, case, "call.result",
          "the model was sent the result's Python repr, which no span records (the "
          "execute_tool span has the object as JSON)", _repr_results)
      for stack in ("genai-openai-agents", "genai-llama-index", "genai-agno", "genai-agno-stream")
      for case in ("parallel_tools", "multi_turn#0")),
    Gap("langgraph-openllmetry-0.33", "*", "tools",
        "OpenLLMetry's LangChain instrumentation 0.33 records no tools on a chat model's span "
        "(no llm.request.functions) and a tool span's entity input is its arguments only: "
        "the tools' descriptions and schemas are nowhere, a called tool named by its span",
        lambda rec, index: [d.split("\n")[0] for _, d, _ in rec.expected[index]["tools"]]),
    # The Anthropic SDKs tracing themselves (`anthropic` 2.17 `lib/_tracing/`,
    # `@anthropic-ai/sdk` 1.17 `lib/internal/tracing/`), content mode "content": each call's
    # messages and system instructions as GenAI JSON, no gen_ai.tool.definitions at all, and a
    # tool_result's `is_error` dropped (`_content.py` `ToolCallResponsePart`: id and response).
    *(Gap(stack, "*", "tools",
          "the SDK's spans record no tool definitions (no gen_ai.tool.definitions; "
          "`_attributes.py` has none): only the called tools are named, by the calls; "
          "the tool runner's execute_tool spans describe the called ones", _never_called)
      for stack in _ANTHROPIC_SDK_CONTENT),
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and the SDK's tool_call_response part keeps a "
          "tool_result's id and content, not its is_error: the failure is only in the text",
          lambda rec, index: ["is_error"])
      for stack in _ANTHROPIC_SDK_CONTENT if not stack.endswith("-tool-runner")),
    # The Mistral AI SDK tracing itself (mistralai 3.8 `extra/observability/otel.py`, on the
    # global provider): each chat call's span with GenAI JSON messages and tool definitions.
    *(Gap(stack, "tool_error", "call.is_error",
          "a raw client loop has no tool span, and a chat completions tool message has no "
          "error flag: the failure is only in the result's text",
          lambda rec, index: ["is_error", "exception.type"])
      for stack in ("mistralai-sdk-otel", "mistralai-sdk-otel-stream")),
    # Its default content mode, metadata_only: each call's span has the model, usage,
    # response id and stop reason, nothing it was sent or said.
    *(Gap("anthropic-sdk-otel-metadata", "*", field,
          "content mode metadata_only (the SDK's default): no message, instruction or tool "
          "definition on any span", _NOT_SEEN[field])
      for field in ("request", "system_prompt", "tools", "final_answer")),
    Gap("anthropic-sdk-otel-metadata", "no_tool", "turns",
        "content mode metadata_only: the one call's turn has no request to be checked by",
        _NOT_SEEN["request"]),
    *(Gap("anthropic-sdk-otel-metadata", case, field,
          "content mode metadata_only: no tool call or result is recorded, and a raw "
          "client loop has no tool span", absent)
      for case in WITH_TOOLS
      for field, absent in (
          ("call.id", lambda rec, index: [c["id"] for c in rec.expected[index]["calls"]]),
          ("call.name", lambda rec, index: [c["name"] for c in rec.expected[index]["calls"]]),
          ("call.arguments", _argument_values),
          # A number alone (1024) may be any attribute's (max_tokens).
          ("call.result", lambda rec, index: [
              t for t in _result_texts(rec, index) if not t.isdigit()]),
          ("call.is_error", lambda rec, index: ["is_error"]))),
    # Strands for TypeScript (`@strands-agents/sdk` 1.19): its invoke_agent span names the
    # agent's tools (gen_ai.agent.tools) and defines none; the Agent passes its tracer no
    # `toolsConfig`, so even the gen_ai_tool_definitions opt-in records nothing
    # (src/telemetry/tracer.ts `startAgentSpan`, src/agent/agent.ts).
    *(Gap(stack, "*", "tools",
          "Strands TS names the agent's tools (gen_ai.agent.tools) and defines none: no "
          "description or schema on any span, the gen_ai_tool_definitions opt-in included",
          lambda rec, index: [d for _, d, _ in rec.expected[index]["tools"]])
      for stack in _STRANDS_JS),
    # Its OpenAI adapters send a failed tool's result as `[ERROR] <text>` (chat-adapter.ts,
    # responses-adapter.ts); its spans keep the toolResult's text and `status: error`.
    *(Gap(stack, "tool_error", "call.result",
          "Strands TS's OpenAI adapters prefix a failed tool's result with [ERROR] on the "
          "wire; its spans record the text without it (and the error status apart)",
          lambda rec, index: ["[ERROR]"])
      for stack in _STRANDS_JS),
    # Its chat completions adapter closes content blocks only at `finish_reason`, and
    # `streamAggregated` (src/models/model.ts) keeps one tool-use block at a time: of
    # parallel calls streamed one after another (as OpenAI streams them, one index each),
    # only the last is kept. The model's other calls are never run, never answered and
    # never recorded (the next request replays the last call alone).
    *(Gap(stack, "parallel_tools", field,
          "Strands TS's chat completions adapter keeps only the last of parallel streamed "
          "tool calls: the others are in no span, never run or answered",
          lambda rec, index: [c["id"] for c in rec.expected[index]["calls"]
                              if c["result"] is None])
      for stack in ("strands-js", "strands-js-latest")
      for field in ("call.id", "call.name", "call.arguments", "call.result", "call.is_error")),
    # VoltAgent (`@voltagent/core` 2.10, `conventions.voltagent`): one `llm:<operation>` span
    # over the whole step loop, tools' parameters as zod's definition, a failed tool's
    # message alone (src/agent/agent.ts).
    *(Gap(stack, "*", "tools",
          "VoltAgent records a tool's parameters as zod's internal definition (tool.parameters, "
          "agent.stateSnapshot), never the JSON Schema the model was sent",
          lambda rec, index: ["json-schema.org", "additionalProperties"])
      for stack in _VOLTAGENT),
    *(Gap(stack, case, field,
          "VoltAgent's llm span covers the whole generateText/streamText step loop: how many "
          "model calls it made is nowhere", lambda rec, index: [])
      for stack in _VOLTAGENT
      for case in ("single_tool", "parallel_tools", "tool_error", "multi_turn")
      for field in ("llm_calls", "turns")),

)  # fmt: skip


@dataclass(frozen=True)
class NotYet:
    """Cases the export has the values for but today's ingestion gets wrong: strict xfails,
    so a fix that makes one pass fails here until its entry is removed."""

    stack: str
    cases: tuple[str, ...]
    """Scenarios, `scenario#turn`, or '*' for all."""
    fields: tuple[str, ...]
    """FIELDS, or "turns": the scenario's turn list (one turn per user request, every model
    call of the wire in one of them, no ingest error)."""
    reason: str


NOT_YET: tuple[NotYet, ...] = (
    # Judgment's span processor exports a live span before it ends (`emit_partial`: judgeval
    # 1.6.0 `trace/processors/judgment_span_processor.py`), each emission of the same span id
    # numbered `judgment.update_id`: an observed span once when its input is set (no output,
    # no status, its end its start) and again when it ends. Reading keeps the first copy of
    # a span id and reports the others (`ingest/inputs.py`, `_keep_first`; across batches the
    # stored copy, `conflicts`), so the partial copy stands for the span: the tool span's
    # ERROR status and output, the agent span's output are the later copy's.
    *(NotYet(stack, ("*",), ("turns",),
             "every emission after a live span's first is reported as a conflicting copy "
             "(judgment.update_id numbers them): the export's partial updates give ingest "
             "errors")
      for stack in ("judgeval-openai", "judgeval-openai-stream")),
    *(NotYet(stack, ("tool_error",), ("call.is_error",),
             "the failed tool span's ERROR status is on its final emission; ingest keeps the "
             "first, partial one (judgment.update_id 0)")
      for stack in ("judgeval-openai", "judgeval-openai-stream")),
    # azure-ai-agents 1.1.0's own tracing: every client operation a trace of its own, all
    # joined only by gen_ai.thread.id (the conversation): create_message with the user's
    # message (a gen_ai.user.message span event, `gen_ai.event.content`), start_thread_run
    # and each get_thread_run poll (the run's status and cumulative usage, no message),
    # submit_tool_outputs with gen_ai.tool.message events (content and call id), and
    # list_messages, a span per message listed (the answer a gen_ai.assistant.message event
    # with its gen_ai.thread.run.id). No span is a model call: the model ran in the service.
    # Ingest makes no turn of them: the rule needed is a thread's user message as the turn's
    # request, its run's submitted outputs as results, the run's assistant message as the
    # answer, the run's last polled usage as its usage. With the run's steps listed
    # (`-steps`), each list_run_steps span holds a step: a gen_ai.run_step.tool_calls event
    # with the calls (id, name, arguments as an object) and that model step's usage, or a
    # gen_ai.run_step.message_creation event naming the answer's message id. 1.1.0 swaps
    # the list_run_steps span's gen_ai.thread.id and gen_ai.thread.run.id (the events have
    # them right).
    *(NotYet(stack, ("*",), ("turns", *fields),
             "azure-ai-agents' operations are traces of their own joined only by "
             "gen_ai.thread.id and none is a model call: ingest makes no turn of the "
             "thread's user message, submitted outputs and listed answer")
      for stack, fields in (
          ("azure-ai-agents", ("request", "system_prompt", "call.id", "call.result",
                               "call.is_error", "final_answer", "llm_calls", "usage")),
          ("azure-ai-agents-auto", ("request", "system_prompt", "call.id", "call.result",
                                    "call.is_error", "final_answer", "llm_calls", "usage")),
          ("azure-ai-agents-steps", ("request", "system_prompt", "call.id", "call.name",
                                     "call.arguments", "call.result", "call.is_error",
                                     "final_answer", "llm_calls", "usage")),
          ("azure-ai-agents-nocontent", ("call.id", "call.is_error", "llm_calls", "usage")))),
    # A turn of no call: none of the call fields is missing from the export, only the turn.
    *(NotYet(stack, ("no_tool",), ("call.name", "call.arguments", "call.result"),
             "azure-ai-agents: ingest makes no turn of the thread (see above)")
      for stack in _AZURE_AGENTS),
    # VoltAgent tells the model a failed tool's error serialized whole (`{"error": true,
    # "name", "message", "stack"}`); its tool span records the message alone, and the text
    # the model saw is only in the `memory.write` span that persists the assistant message
    # (its tool part's `output.value`), which `conventions.voltagent` does not read.
    *(NotYet(stack, ("tool_error",), ("call.result",),
             "the failed tool's result as the model saw it is only in memory.write's "
             "persisted message, not read yet")
      for stack in _VOLTAGENT),
    # OpenCode 1.18.33 with `experimental.openTelemetry`: the Vercel AI SDK's spans
    # (`ai.streamText`, `.doStream`, `ai.toolCall`) among several hundred Effect spans of its
    # own a run, each `opencode run` a trace. `opencode run` exits before its exporter sends
    # its last spans: in this recording single_tool's export is whole, the others lack the
    # last model call's spans and the run's root (`Cli.run`), no_tool every AI SDK span.
    # Whether OpenCode can be made to flush (its exporter's settings) is not studied yet.
    NotYet("opencode-otel", ("parallel_tools", "no_tool", "tool_error", "multi_turn"),
           ("turns",),
           "`opencode run` exits before its exporter sends its last spans (the last model "
           "call's, the run's root): the turn is cut short, or (no_tool) not there"),
    NotYet("opencode-otel", ("no_tool",),
           ("request", "system_prompt", "tools", "call.id", "call.name", "call.arguments",
            "call.result", "call.is_error", "final_answer", "llm_calls", "usage"),
           "`opencode run` exited before its exporter sent any AI SDK span of this run"),
    NotYet("opencode-otel", ("parallel_tools", "tool_error", "multi_turn#1"),
           ("call.result", "final_answer", "llm_calls", "usage"),
           "the last model call's spans never left `opencode run` (no answer, no result as "
           "the model got it: `ai.toolCall.result` is OpenCode's `{title, metadata, output}` "
           "object)"),
    NotYet("opencode-otel", ("multi_turn#0",), ("final_answer", "llm_calls", "usage"),
           "the last model call's spans never left `opencode run`"),
    # OpenInference's interceptor of Codex CLI's telemetry (openinference-instrumentation-
    # codex 0.5.2, `native_otlp_interceptor.py`) makes one LLM span of a whole turn
    # (`codex.turn`: the prompt, the turn's token totals), each model request a
    # `codex.api_request` span event on it, no span.
    NotYet("codex-cli-openinference", ("single_tool", "parallel_tools", "tool_error",
                                       "multi_turn"), ("turns", "llm_calls"),
           "the turn is one LLM span (`codex.turn`), its model requests only its "
           "`codex.api_request` events: the turn counts one model call"),
    # A call whose dispatch span it read before the call's `codex.tool_result` record keeps
    # the span's name, the namespace and the tool run together (`mcp__toolssearch_docs`).
    NotYet("codex-cli-openinference", ("parallel_tools",), ("call.name",),
           "the interceptor names a tool span by Codex's dispatch span (`mcp__tools` and the "
           "tool's name run together) when that span came before the tool_result record"),
    # Gemini CLI's own telemetry (record-only turns, conventions/gemini_cli.py): the turn is
    # its prompt's records; the system prompt and tool definitions are only on its
    # `llm_call` spans (gen_ai.system_instructions, gen_ai.tool.definitions), traces of
    # their own that nothing joins to the prompt's (they name no prompt id; the session
    # as gen_ai.conversation.id); each response's `gen_ai.client.inference.operation.
    # details` record names no span and no prompt, only a response id no span reports:
    # an ingest error each.
    NotYet("openlit-openai-1.26", ("single_tool", "parallel_tools", "tool_error", "multi_turn"),
           ("call.result",),
           "OpenLIT 1.26 records no call, but the next prompt's transcript holds each result "
           "(`tool: 395`) after the replayed `assistant: None`: a result without a call to "
           "give it to (no id, no name), which linking does not make a call of"),
    NotYet("langgraph-openllmetry-0.33", ("tool_error",), ("call.is_error",),
           "OpenLLMetry's LangChain instrumentation 0.33 has no tool error handler: the failed "
           "tool's span has no status and no output, and the prompt's result (role `unknown`) "
           "no flag; the failure is only the ToolMessage's `status: error` inside the `tools` "
           "node's task span entity output, which nothing reads as a tool execution yet"),
    *(NotYet(stack, ("multi_turn#0",), ("final_answer",),
             "OpenLLMetry's Agents SDK processor records no output for a chat completions model "
             "call; the answer is in the next run's gen_ai.input.messages, but each run is its "
             "own trace without a conversation id, and with the first run's output missing no "
             "history key joins the two (assemble._replayed_answer reads it within a conversation)")
      for stack in ("openai-agents-openllmetry", "openai-agents-mcp-openllmetry")),
    NotYet("openai-agents-openinference-handoff-nested", ("handoff#0",), ("call.result",),
           "with nest_handoff_history the specialist is told the transfer's output only in "
           "summary text; the tool message holding it by call id is in the next turn's first "
           "model call (its replayed history), which linking does not read for this turn"),
    NotYet("openai-agents-openinference-handoff-nested", ("handoff#1",), ("call.result",),
           "the last turn's transfer output is only in the specialist's summary text (by the "
           "same tool and arguments the wire gives it); the handoff TOOL span's output.value "
           "is the agent's name alone"),
    NotYet("mistralai-openllmetry", WITH_TOOLS, ("call.result",),
           "the results are the next prompt's tool-role messages, but with no call recorded and "
           "no tool_call_id nothing links them: a call is not made from a bare result"),
    NotYet("openai-agents-mcp-unlinked", ("tool_error",), ("call.is_error",),
           "the failure is only on the MCP server's `tools/call get_weather` span (error.type "
           "tool_error), a trace of its own when the server extracts no trace context: nothing "
           "but the tool's name and the time joins it to the call"),
    NotYet("google-genai-openllmetry-stream", ("multi_turn#0",), ("final_answer",),
           "the recorded output is the last chunk's text; the whole answer is in the next "
           "turn's replayed history, which assembly does not prefer over the output: a replay "
           "that ends with the recorded answer is as often an app or framework adding to it "
           "(a speaker's name in front, a summary) as a stream cut to its last chunk"),
    NotYet("mistralai-openllmetry-stream", WITH_TOOLS, ("call.result",),
           "as mistralai-openllmetry: the results are the next prompt's tool-role messages, "
           "but with no call recorded and no tool_call_id nothing links them"),
    NotYet("semantic-kernel-handoff", ("handoff",), ("call.result",),
           "the transfer function returns nothing and Semantic Kernel records str(None), "
           "'None', as its gen_ai.tool.call.result; the wire never tells a result (expected "
           "null)"),
    NotYet("smolagents-openinference-managed", ("handoff",), ("tools",),
           "the managed agent's schema (task, additional_args) is only text in the manager's "
           "system prompt (its AGENT span names and describes it: smolagents.managed_agents); "
           "and expect.py counts the specialist's later requests in the main line (their "
           "newest user message is an `Observation:`, not the task), so get_weather, a "
           "sub-agent's tool, is expected too"),
    NotYet("langgraph-js-openllmetry", WITH_TOOLS, CALLS,
           "OpenLLMetry's LangChain.js handler (0.27.0) starts every span as a root (each its "
           "own trace) and flattens chat messages to text (no tool calls, no call ids); the "
           "calls are in the agent node's workflow span output (AIMessage tool_calls) and the "
           "execute_tool span's output (ToolMessage with tool_call_id), separate traces that "
           "grouping does not join to the chat spans' turn"),
    *(NotYet(stack, ("tool_error",), ("call.is_error",),
             "the failure is the ToolMessage's status (error) in the tools node's workflow "
             "span output, a root of its own; the execute_tool span (DynamicStructuredTool) "
             "names no call, and the client's tool message has no error flag")
      for stack in ("langgraph-js-openllmetry-openai", "langgraph-js-openllmetry-openai-stream")),
    NotYet("langgraph-js-openllmetry-stream", WITH_TOOLS, CALLS,
           "as langgraph-js-openllmetry: the calls only in root workflow and execute_tool "
           "spans of their own traces"),
    NotYet("anthropic-js-openllmetry-stream", WITH_TOOLS, ("call.arguments",),
           "OpenLLMetry's JS Anthropic instrumentation (0.27.0) records a streamed tool_use "
           "with the input it started with ({}), not the input_json_delta pieces; the next "
           "call's replayed history has each call's arguments whole (by id), which linking "
           "does not prefer over the recorded {}"),
    *(NotYet(stack, ("multi_turn",), ("turns",),
             "no value is missing from what the export has: Logfire's scrubbing took the first "
             "request whole (KNOWN_GAPS), so that turn's request is empty; the turn list has no "
             "gap form, so its check is a strict xfail here")
      for stack in _LOGFIRE_AGENTS),
    NotYet("langtrace-openai-stream", WITH_TOOLS, CALLS,
           "Langtrace's streamed completion (tools sent) keeps only the calls' argument texts, "
           "concatenated, as its content: no names, no ids; the ids and results are in the "
           "next prompt's tool messages, and its assistant entry is [{\"id\": \"\", \"type\": "
           "\"\"}]: no call is made from arguments alone and a bare result"),
    NotYet("claude-agent-sdk-openinference", ("*",), ("turns",),
           "no value is missing from what the export has: it has no model call spans "
           "(KNOWN_GAPS: llm_calls), so the turns count none; the turn list has no gap form"),
    # OpenLIT's Agno instrumentation, streamed: `Agent.run(stream=True)` returns a generator,
    # and OpenLIT's wrapper ends its invoke_agent span then, before any model call; the chat
    # and execute_tool spans are roots of traces of their own, with no conversation id, and
    # the streamed calls' operation-details records carry no trace or span id.
    *(NotYet("openlit-agno-stream", cases, fields,
             "the invoke_agent span (request, conversation id) ends before the run, apart from "
             "the model calls' own root traces, and the records holding the tools' schemas "
             "name no span (input errors): each request is an agent-only turn beside the turn "
             "of its model calls, whose tools have no schema")
      for cases, fields in ((("*",), ("turns", "tools", "final_answer", "llm_calls", "usage")),
                            (WITH_TOOLS, CALLS))),
    # OpenLIT over smolagents: its OpenAI chat spans, its smolagents execute_tool spans (the
    # call id smolagents makes, a uuid, not the model's), no span of the agent's run.
    *(NotYet(stack, WITH_TOOLS, ("call.result",),
             "as mistralai-openllmetry: the results are the next prompt's tool-role messages, "
             "but with no call recorded and no tool_call_id nothing links them")
      for stack in ("together-openllmetry", "together-openllmetry-stream")),
    NotYet("strands-openinference-translated", ("parallel_tools",), ("call.result",),
           "the Strands span processor folds a message's toolResult blocks into one tool "
           "message, the texts joined, under the last call's id (processor.py, "
           "_parse_message_content): the joined text is taken for that call's result over its "
           "execute_tool span's output.value, which has it alone (linking prefers the result "
           "the model saw)"),
    NotYet("openlit-dspy", ("multi_turn",), ("turns",),
           "the second turn splits in two: DSPy renders the conversation's History per "
           "signature, ReAct's steps replay the first answer as `next_thought: None ...` (the "
           "entry has none of ReAct's output fields), the extract step as the answer itself; "
           "each call is a trace of its own with no conversation id, and the extract call's "
           "history extends no ReAct step's, so it makes a turn of its own"),
    # AgentOps over CrewAI: with an agentic library active AgentOps uninstruments the model
    # providers (agentops `instrumentation/__init__.py`, `_uninstrument_providers`): its
    # CrewAI bridge's crew, task and agent spans are the whole export.
    *(NotYet("agentops-crewai", cases, fields,
             "no model call span (AgentOps uninstruments the OpenAI client when CrewAI is "
             "active): the task's span gives the request, the answer and the agent "
             "(conventions.agentops), but the task's whole conversation (system, user, tool "
             "calls with ids, results) is only the Python repr of CrewAI's "
             "TaskOutput.messages in the crew span's crewai.crew.tasks_output, its usage and "
             "request count only crewai.crew.usage_metrics and the crew span's "
             "gen_ai.usage.*; no convention reads them (the crew span is structure), and "
             "calls are made from model calls, of which the export has none")
      for cases, fields in ((("*",), ("turns", "system_prompt", "tools", "llm_calls",
                                      "usage")),
                            (WITH_TOOLS, CALLS))),
    NotYet("openlit-dspy", ("multi_turn#1",), ("final_answer", "llm_calls", "usage"),
           "as openlit-dspy multi_turn: the extracting call, which holds the answer, is a "
           "turn of its own"),
    # The Anthropic Python SDK alone, metadata_only (its default): each call a trace of its
    # own with only model, usage, response id and anthropic.message.stop_reason.
    NotYet("anthropic-sdk-otel-metadata", WITH_TOOLS, ("turns", "llm_calls", "usage"),
           "each call's span is a trace of its own with no message: every call is a turn of "
           "its own (a tool-using request splits into one per call, with that call's usage). "
           "What would join them is only anthropic.message.stop_reason tool_use on a call "
           "and the next call of the same service; no rule joins traces by that"),
    NotYet("anthropic-sdk-otel-tool-runner", ("tool_error",), ("call.is_error",),
           "the tool runner's execute_tool span (anthropic.custom_tool_use get_weather, "
           "error.type tool_error, status ERROR) is a trace of its own when the application "
           "asks the runner for the tool results (generate_tool_call_response) between "
           "iterations, outside the runner's span; nothing links it to the call by its "
           "gen_ai.tool.call.id, and the next call's tool_call_response part drops is_error"),
)  # fmt: skip


def _cases(scenario: str, index: int | None) -> list[str]:
    return [*([f"{scenario}#{index}"] if index is not None else []), scenario, "*"]


def gap(stack: str, scenario: str, index: int | None, field: str) -> Gap | None:
    cases = _cases(scenario, index)
    return next((g for g in KNOWN_GAPS
                 if g.stack == stack and g.case in cases and g.field == field), None)  # fmt: skip


def not_yet(stack: str, scenario: str, index: int | None, field: str) -> str | None:
    cases = _cases(scenario, index)
    hits = (
        n for n in NOT_YET if n.stack == stack and field in n.fields and set(cases) & set(n.cases)
    )
    return next((n.reason for n in hits), None)


def _xfail(stack: str, scenario: str, index: int | None, field: str) -> list[pytest.MarkDecorator]:
    reason = not_yet(stack, scenario, index, field)
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []


@dataclass(frozen=True)
class Form:
    """What a stack's export must look like, so that a re-recording with a version that
    changed its output form fails here instead of silently testing another form."""

    spans: frozenset[str] = frozenset()
    attributes: frozenset[str] = frozenset()
    log_events: frozenset[str] = frozenset()
    absent: frozenset[str] = frozenset()
    """Attributes that must not be there (the other form of the same library)."""


_SDK_SPAN = "anthropic.messages.create"
_JSON_MESSAGES = frozenset({"gen_ai.input.messages", "gen_ai.output.messages"})
_LANGFUSE = frozenset({"langfuse.observation.type", "langfuse.observation.input",
                       "langfuse.observation.output", "langfuse.observation.usage_details",
                       "session.id"})
_NOT_LANGFUSE = _JSON_MESSAGES | {"gen_ai.prompt", "llm.input_messages.0.message.role"}
_STREAM_LOG = frozenset({"streaming response from {request_data[model]!r} took {duration:.2f}s"})
_LANGFUSE_LANGGRAPH = frozenset({"handle", "research_assistant", "ChatOpenAI", "calculator",
                                 "tools"})
_VERCEL_LEGACY = frozenset({"ai.operationId", "ai.prompt.messages", "ai.prompt.tools",
                            "ai.response.toolCalls", "ai.toolCall.result",
                            "ai.telemetry.functionId"})
_DETAILS = frozenset({"gen_ai.client.inference.operation.details"})


def _genai_form(stack: str, spans: frozenset[str], attributes: frozenset[str] = frozenset(),
                absent: frozenset[str] = frozenset()) -> Form:
    """A genai-* stack's form by its content mode (the name says it, `genai_clients_loop`):
    content attributes on the span unless `-events`, operation-details records unless
    SPAN_ONLY without `-emit-event`."""
    content = _JSON_MESSAGES | {"gen_ai.tool.definitions"}
    on_span = "-events" not in stack
    records = "-event" in stack
    return Form(spans, attributes | {"gen_ai.provider.name"} | (content if on_span else set()),
                _DETAILS if records else frozenset(), absent | (set() if on_span else content))


FORMS: dict[str, Form] = {
    "anthropic-openinference": Form(
        frozenset({"messages.create", _SDK_SPAN}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "session.id", "gen_ai.response.id"}),
    ),
    "anthropic-openllmetry": Form(
        frozenset({"anthropic.chat", _SDK_SPAN}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.response.id"},
        absent=frozenset({"gen_ai.prompt.0.content"}),
    ),
    "llamaindex-openinference": Form(
        frozenset({"FunctionAgent.run", "OpenAI._prepare_chat_with_tools", "FunctionTool.acall",
                   "OpenAI.astream_chat"}),
        frozenset({"llm.input_messages.0.message.role", "session.id"}),
    ),
    "smolagents-openinference": Form(
        frozenset({"research_assistant.run", "OpenAIModel.generate", "FinalAnswerTool"}),
        frozenset({"llm.input_messages.0.message.role", "session.id"}),
    ),
    "langgraph-openllmetry": Form(
        frozenset({"ChatOpenAI.chat", "execute_tool calculator", "execute_task tools"}),
        _JSON_MESSAGES | {"traceloop.entity.input"},
    ),
    "strands-latest": Form(
        frozenset({"invoke_agent research_assistant", "chat", "execute_tool calculator"}),
        frozenset({"gen_ai.agent.tools", "gen_ai.tool.call.id", "gen_ai.conversation.id"}),
        absent=_JSON_MESSAGES,
    ),
    "adk-spans": Form(
        frozenset({"invoke_agent research_assistant", "generate_content gemini-2.5-flash"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions"},
        absent=frozenset({"gcp.vertex.agent.llm_request"}),
    ),
    "adk-events": Form(
        frozenset({"invoke_agent research_assistant", "generate_content gemini-2.5-flash"}),
        log_events=frozenset({"gen_ai.client.inference.operation.details"}),
        absent=_JSON_MESSAGES | {"gcp.vertex.agent.llm_request"},
    ),
    "adk-legacy": Form(
        frozenset({"invocation", "call_llm", "generate_content gemini-2.5-flash"}),
        frozenset({"gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response"}),
        frozenset({"gen_ai.user.message", "gen_ai.system.message", "gen_ai.choice"}),
    ),
    # ADK for TypeScript: ADK Python's legacy schema (`call_llm` with the Gemini JSON in
    # `gcp.vertex.agent.*`, camelCase), no `generate_content` span below it.
    **{stack: Form(
        frozenset({"invocation", "invoke_agent research_assistant", "call_llm",
                   "execute_tool calculator"}),
        frozenset({"gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response",
                   "gcp.vertex.agent.tool_call_args", "gcp.vertex.agent.tool_response"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions"},
    ) for stack in ("adk-js", "adk-js-stream")},
    # Strands for TypeScript: per-message span events by default (gen_ai.system), the
    # operation-details events with the latest opt-in (gen_ai.provider.name, the tool
    # call's arguments and result as attributes); no message attributes either way.
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "execute_agent_loop_cycle", "chat",
                   "execute_tool calculator"}),
        frozenset({"gen_ai.agent.tools", "gen_ai.tool.call.id", "system_prompt",
                   "gen_ai.system"}),
        absent=_JSON_MESSAGES | {"gen_ai.provider.name", "gen_ai.tool.definitions"},
    ) for stack in ("strands-js", "strands-js-responses")},
    "strands-js-latest": Form(
        frozenset({"invoke_agent research_assistant", "execute_agent_loop_cycle", "chat",
                   "execute_tool calculator"}),
        frozenset({"gen_ai.agent.tools", "gen_ai.tool.call.id", "gen_ai.provider.name",
                   "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}),
        absent=_JSON_MESSAGES | {"gen_ai.system", "gen_ai.tool.definitions"},
    ),
    # VoltAgent's own observability: the agent span named after the agent, its
    # `llm:<operation>` span, `tool.execution:<name>` spans; no GenAI attributes.
    **{stack: Form(
        frozenset({"research_assistant", llm, "tool.execution:calculator", "memory.read"}),
        frozenset({"entity.type", "span.type", "agent.instructions", "llm.messages",
                   "tool.call.id", "conversation.id"}),
        absent=_JSON_MESSAGES | {"gen_ai.operation.name"},
    ) for stack, llm in (("voltagent", "llm:generateText"),
                         ("voltagent-stream", "llm:streamText"))},
    "pydantic-ai-logfire": Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"pydantic_ai.all_messages", "model_request_parameters",
                          "logfire.json_schema", "logfire.msg", "gen_ai.tool.call.result"},
        absent=frozenset({"request_data", "logfire.msg_template"}),
    ),
    "anthropic-logfire": Form(
        frozenset({"Message with {request_data[model]!r}"}),
        _JSON_MESSAGES | {"request_data", "logfire.msg_template", "gen_ai.tool.definitions",
                          "gen_ai.system_instructions"},
        absent=frozenset({"response_data"}),
    ),
    "anthropic-logfire-v1": Form(
        frozenset({"Message with {request_data[model]!r}"}),
        frozenset({"request_data", "response_data", "logfire.msg_template"}),
        absent=_JSON_MESSAGES,
    ),
    "anthropic-logfire-stream": Form(
        frozenset({"Message with {request_data[model]!r}",
                   "streaming response from {request_data[model]!r} took {duration:.2f}s"}),
        _JSON_MESSAGES | {"request_data", "logfire.msg_template"},
        absent=frozenset({"response_data"}),
    ),
    "anthropic-logfire-stream-v1": Form(
        frozenset({"Message with {request_data[model]!r}",
                   "streaming response from {request_data[model]!r} took {duration:.2f}s"}),
        frozenset({"request_data", "response_data", "logfire.msg_template"}),
        absent=_JSON_MESSAGES,
    ),
    # One model call, one span per instrumentation, nested in one trace.
    "openai-openinference-openllmetry": Form(
        frozenset({"ChatCompletion", "openai.chat"}),
        _JSON_MESSAGES | {"llm.input_messages.0.message.role", "gen_ai.tool.definitions"},
    ),
    "openai-three-instrumentations": Form(
        frozenset({"ChatCompletion", "openai.chat", "chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"llm.input_messages.0.message.role", "gen_ai.system"},
        log_events=frozenset({"gen_ai.user.message", "gen_ai.system.message", "gen_ai.choice"}),
    ),
    "openai-three-instrumentations-stream": Form(
        frozenset({"ChatCompletion", "openai.chat", "chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"llm.input_messages.0.message.role", "gen_ai.is_streaming"},
        log_events=frozenset({"gen_ai.user.message", "gen_ai.choice"}),
    ),
    # OpenLLMetry's client spans start outside LangChain's context: a trace of their own.
    # Streamed, the LangChain span keeps no response id: only what both say, and when,
    # joins the client's (calls rule 3, a report apart).
    **{stack: Form(
        frozenset({"ChatOpenAI", "openai.chat", "calculator", "research_assistant"}),
        _JSON_MESSAGES | {"llm.input_messages.0.message.role", "gen_ai.response.id",
                          "output.value"},
    ) for stack in ("langgraph-openinference-mixed", "langgraph-openinference-mixed-stream")},
    # As -mixed, with the OTel contrib OpenAI instrumentation (openai-v2 on util-genai, its
    # newest conventions, content on the span and in an operation-details log record).
    **{stack: Form(
        frozenset({"ChatOpenAI", "chat gpt-4o-mini", "calculator", "research_assistant"}),
        _JSON_MESSAGES | {"llm.input_messages.0.message.role", "gen_ai.response.id",
                          "gen_ai.provider.name"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.system", "gen_ai.prompt.0.content"}),
    ) for stack in ("langgraph-openinference-otel", "langgraph-openinference-otel-stream")},
    # ChatAnthropic under OpenInference's LangChain tracer, and OpenInference's Anthropic
    # instrumentation over the SDK's own span of each call (`anthropic.messages.create`), in
    # a trace of their own. Streamed, OpenInference's span ends before the stream is read
    # (input only) and the LangChain span keeps no response id.
    **{stack: Form(
        frozenset({"ChatAnthropic", "messages.create", _SDK_SPAN, "calculator",
                   "research_assistant"}),
        frozenset({"llm.input_messages.0.message.role", "gen_ai.response.id", "input.value",
                   "session.id"}),
        absent=_JSON_MESSAGES,
    ) for stack in ("langgraph-anthropic-openinference",
                    "langgraph-anthropic-openinference-stream")},
    # Siblings: LlamaIndex's streamed span closes before the client's starts.
    "llamaindex-openinference-openllmetry": Form(
        frozenset({"FunctionAgent.run", "OpenAI.astream_chat", "openai.chat"}),
        _JSON_MESSAGES | {"llm.input_messages.0.message.role", "gen_ai.response.id"},
    ),
    # Nested: the client's span (tool results as `Observation:` user text) under the agent's.
    "smolagents-openinference-openai": Form(
        frozenset({"research_assistant.run", "OpenAIModel.generate", "ChatCompletion"}),
        frozenset({"llm.input_messages.0.message.role", "session.id"}),
    ),
    "autogen-agentchat": Form(
        frozenset({"create_agent research_assistant", "invoke_agent research_assistant",
                   "execute_tool calculator", "chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.tool.call.id", "gen_ai.tool.description"},
        absent=frozenset({"gen_ai.tool.definitions", "gen_ai.tool.call.arguments"}),
    ),
    "agent-framework": Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.tool.definitions",
                          "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"},
        frozenset({"gen_ai.user.message", "gen_ai.choice"}),
    ),
    "semantic-kernel": Form(
        frozenset({"invoke_agent research_assistant", "AutoFunctionInvocationLoop",
                   "chat gpt-4o-mini", "execute_tool tools-calculator"}),
        frozenset({"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                   "gen_ai.tool.call.result", "sk.available_functions"}),
        # The messages of each model call are log records, their JSON text the body.
        frozenset({"gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion", "gen_ai.response.prompt_tokens"}),
    ),
    "openai-agents-otel": Form(
        frozenset({"Agent workflow", "invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.tool.call.arguments",
                          "gen_ai.tool.call.result"},
        absent=frozenset({"gen_ai.tool.call.id", "gen_ai.tool.definitions"}),
    ),
    "litellm-otel": Form(
        frozenset({"litellm_request", "raw_gen_ai_request"}),
        _JSON_MESSAGES | {"gen_ai.completion.0.function_call.name", "llm.request.functions.0.name",
                          "litellm.call_id", "llm.openai.choices"},
    ),
    "openlit-openai": Form(
        frozenset({"chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.tool.args",
                          "gen_ai.tool.call.id", "openlit.agent.version_hash"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion"}),
    ),
    "openai-agents-openinference": Form(
        frozenset({"Agent workflow", "research_assistant", "turn", "generation", "calculator"}),
        frozenset({"llm.input_messages.0.message.role", "tool.parameters", "graph.node.id"}),
        absent=frozenset({"llm.tools.0.tool.json_schema", "session.id"}),
    ),
    "crewai-openinference": Form(
        frozenset({"research_assistant._execute_core", "ChatCompletion", "calculator.run"}),
        frozenset({"crew_inputs", "llm.input_messages.0.message.role",
                   "llm.tools.0.tool.json_schema", "graph.node.id", "session.id"}),
    ),
    "crewai-openinference-sequential": Form(
        frozenset({"research_assistant._execute_core", "editor._execute_core", "ChatCompletion",
                   "calculator.run"}),
        frozenset({"crew_inputs", "llm.input_messages.0.message.role", "graph.node.id",
                   "session.id"}),
    ),
    "agno-openinference": Form(
        frozenset({"research_assistant.run", "OpenAIChat.invoke", "calculator"}),
        frozenset({"agno.tools", "llm.input_messages.0.message.role",
                   "llm.tools.0.tool.json_schema", "graph.node.name", "session.id"}),
    ),
    "anthropic-openinference-stream": Form(
        frozenset({"messages.stream", _SDK_SPAN}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "llm.token_count.prompt", "session.id", "gen_ai.request.stream"}),
        absent=frozenset({"gen_ai.input.messages"}),
    ),
    "anthropic-openllmetry-stream": Form(
        frozenset({"anthropic.chat", _SDK_SPAN}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.usage.input_tokens",
                          "gen_ai.request.stream"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.input_messages.0.message.role"}),
    ),
    "langgraph-openllmetry-stream": Form(
        frozenset({"ChatOpenAI.chat", "execute_tool calculator", "invoke_agent research_assistant",
                   "research_assistant.workflow"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                          "gen_ai.task.input", "gen_ai.conversation.id"},
        absent=frozenset({"gen_ai.prompt.0.content"}),
    ),
    "llamaindex-openllmetry": Form(
        frozenset({"FunctionAgent.workflow", "BaseWorkflowAgent.task", "FunctionTool.task",
                   "openai.chat"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.is_streaming", "tool.arguments",
                          "traceloop.entity.input"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.input_messages.0.message.role"}),
    ),
    # Pydantic AI's own OTel spans without Logfire: the same keys as through Logfire (Pydantic
    # AI writes logfire.json_schema / logfire.msg itself), none of Logfire's SDK.
    "pydantic-ai-otel": Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"pydantic_ai.all_messages", "model_request_parameters",
                          "gen_ai.tool.definitions", "gen_ai.tool.call.result"},
        absent=frozenset({"logfire.span_type", "logfire.metrics", "request_data"}),
    ),
    # A standalone Agent: its run and each component it runs, OpenInference's attributes on
    # each; no Haystack tracer tags (haystack.*), no tool spans.
    "haystack-openinference": Form(
        frozenset({"Agent.run", "OpenAIChatGenerator.run", "ChatPromptBuilder.run"}),
        frozenset({"llm.input_messages.0.message.role", "input.value", "output.value",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.function.name"}),
        absent=frozenset({"haystack.component.input", "haystack.agent.step.llm.input"}),
    ),
    # OpenInference 1.0.5 suppresses ADK 2.13's generate_content spans but its call_llm spans
    # never start: every model call of a run writes onto ADK's invoke_agent span (the last
    # call's keys win; ADK's per-call operation.details log records stay one per call).
    "adk-openinference": Form(
        frozenset({"invocation [corpus]", "agent_run [research_assistant]",
                   "invoke_agent research_assistant", "execute_tool calculator"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "gen_ai.tool.definitions", "gen_ai.tool.call.id", "output.value",
                   "session.id"}),
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.input.messages", "gen_ai.tool.call.result",
                          "gcp.vertex.agent.llm_request"}),
    ),
    # One client span per Converse call (botocore's rpc.* keys beside the GenAI ones), its
    # messages the older per-message events as log records, bodies in Bedrock's own blocks.
    **{stack: Form(
        frozenset({"chat us.anthropic.claude-sonnet-4-5-20250929-v1:0"}),
        frozenset({"gen_ai.system", "gen_ai.usage.input_tokens", "rpc.method", "rpc.service"}),
        frozenset({"gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message",
                   "gen_ai.tool.message", "gen_ai.choice"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions"},
    ) for stack in ("bedrock-botocore", "bedrock-botocore-stream")},
    # Strands' own spans as on its OpenAI provider (gen_ai.provider.name is strands-agents
    # either way); streamed or not, the same keys.
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "chat", "execute_tool calculator"}),
        frozenset({"gen_ai.agent.tools", "gen_ai.tool.call.id", "gen_ai.provider.name",
                   "gen_ai.server.time_to_first_token"}),
        absent=_JSON_MESSAGES,
    ) for stack in ("strands-bedrock", "strands-bedrock-nostream")},
    # Each model call twice: Strands' chat span, and under it botocore's client span with the
    # per-message events (one logical call, the same request).
    "strands-bedrock-botocore": Form(
        frozenset({"invoke_agent research_assistant", "chat", "execute_tool calculator",
                   "chat us.anthropic.claude-sonnet-4-5-20250929-v1:0"}),
        frozenset({"gen_ai.agent.tools", "gen_ai.tool.call.id", "rpc.method"}),
        frozenset({"gen_ai.user.message", "gen_ai.tool.message", "gen_ai.choice"}),
        absent=_JSON_MESSAGES,
    ),
    # Langfuse 5 (OTel-based since v3): its drop-in OpenAI client's generations under an
    # @observe() span, the session propagated as session.id; nothing of another convention.
    **{stack: Form(
        frozenset({"OpenAI-generation", "conversation"}),
        _LANGFUSE | {"langfuse.observation.model.name", "langfuse.internal.is_app_root"},
        absent=_NOT_LANGFUSE,
    ) for stack in ("langfuse-openai", "langfuse-openai-stream")},
    # Langfuse's LangChain CallbackHandler: one observation per LangChain run (the graph,
    # its nodes, ChatOpenAI's generation, the tool), under the @observe() turn handler.
    "langfuse-langgraph": Form(
        _LANGFUSE_LANGGRAPH,
        _LANGFUSE | {"langfuse.observation.metadata.tool_call_id",
                     "langfuse.internal.is_app_root"},
        absent=_NOT_LANGFUSE,
    ),
    # LangSmith's OTel export (langsmith 0.15, the otel tracing mode): one span per LangChain
    # run, its inputs and outputs whole in gen_ai.prompt / gen_ai.completion, the run type in
    # langsmith.span.kind, LangGraph's thread in langsmith.metadata.thread_id.
    **{stack: Form(
        frozenset({"research_assistant", "ChatOpenAI", "calculator", "tools"}),
        frozenset({"langsmith.span.kind", "langsmith.metadata.thread_id", "gen_ai.prompt",
                   "gen_ai.completion", "gen_ai.tool.definitions", "gen_ai.tool.call.id"}),
        absent=_JSON_MESSAGES | {"langfuse.observation.type", "traceloop.entity.input"},
    ) for stack in ("langsmith-otel", "langsmith-otel-stream")},
    # Langfuse 3.15, the last v3: the same observations and keys, none of the internal
    # root marker v4 added (`langfuse.internal.is_app_root`).
    **{stack: Form(
        frozenset({"OpenAI-generation", "conversation"}),
        _LANGFUSE | {"langfuse.observation.model.name"},
        absent=_NOT_LANGFUSE | {"langfuse.internal.is_app_root"},
    ) for stack in ("langfuse-v3-openai", "langfuse-v3-openai-stream")},
    "langfuse-v3-langgraph": Form(
        _LANGFUSE_LANGGRAPH,
        _LANGFUSE | {"langfuse.observation.metadata.langgraph_node"},
        absent=_NOT_LANGFUSE | {"langfuse.internal.is_app_root"},
    ),
    # MLflow's own OTLP export: one CHAT_MODEL span per call, every value JSON-encoded, the
    # request's keyword arguments beside MLflow's keys; not the GenAI translation
    # (MLFLOW_ENABLE_OTEL_GENAI_SEMCONV).
    **{stack: Form(
        frozenset({"Completions"}),
        frozenset({"mlflow.spanType", "mlflow.spanInputs", "mlflow.spanOutputs",
                   "mlflow.chat.tools", "mlflow.chat.tokenUsage", "mlflow.message.format"}),
        absent=_JSON_MESSAGES | {"gen_ai.operation.name"},
    ) for stack in ("mlflow-openai", "mlflow-openai-stream")},
    # MLflow's LangChain tracer: a CHAIN span per runnable and graph node, CHAT_MODEL spans
    # with the request as role/content messages, TOOL spans with the call id beside the
    # arguments; LangChain's run metadata (the checkpointer thread) as a JSON attribute.
    "mlflow-langgraph": Form(
        frozenset({"research_assistant", "agent", "tools", "ChatOpenAI", "calculator"}),
        frozenset({"mlflow.spanType", "mlflow.spanInputs", "mlflow.spanOutputs",
                   "mlflow.chat.tools", "mlflow.chat.tokenUsage", "invocation_params",
                   "tool_call_id", "metadata"}),
        absent=_JSON_MESSAGES | {"gen_ai.operation.name", "session.id"},
    ),
    # The same, streamed by messages: each token a `new_token` span event on the chat span.
    "mlflow-langgraph-stream": Form(
        frozenset({"research_assistant", "agent", "tools", "ChatOpenAI", "calculator"}),
        frozenset({"mlflow.spanType", "mlflow.spanInputs", "mlflow.spanOutputs",
                   "mlflow.chat.tools", "invocation_params", "tool_call_id"}),
        absent=_JSON_MESSAGES | {"gen_ai.operation.name"},
    ),
    # MLFLOW_ENABLE_OTEL_GENAI_SEMCONV: MLflow's OTLP processor translates each span to the
    # GenAI conventions (mlflow `tracing/export/genai_semconv/`) and drops its own keys; the
    # integrations' extra attributes (request kwargs, LangChain's) stay JSON-encoded.
    "mlflow-openai-genai": Form(
        frozenset({"chat gpt-4o-mini-2024-07-18"}),
        _JSON_MESSAGES | {"gen_ai.operation.name", "gen_ai.tool.definitions",
                          "gen_ai.system_instructions", "tools"},
        absent=frozenset({"mlflow.spanType", "mlflow.spanInputs", "mlflow.chat.tools"}),
    ),
    "mlflow-langgraph-genai": Form(
        frozenset({"CHAIN", "chat gpt-4o-mini", "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.operation.name", "gen_ai.tool.definitions",
                          "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
                          "invocation_params", "tool_call_id"},
        absent=frozenset({"mlflow.spanType", "mlflow.spanInputs", "mlflow.chat.tools"}),
    ),
    # MLflow's Agents SDK tracing processor and its OpenAI client autolog at once: each model
    # call twice, the SDK's Generation (message lists in and out, no tools) over the client's
    # Completions (the request's kwargs); AgentRunner.run patched as the root.
    "mlflow-openai-agents": Form(
        frozenset({"AgentRunner.run", "Agent workflow", "research_assistant", "Generation",
                   "AsyncCompletions", "calculator"}),
        frozenset({"mlflow.spanType", "mlflow.spanInputs", "mlflow.spanOutputs",
                   "mlflow.chat.tools", "mlflow.chat.tokenUsage", "model_config",
                   "mlflow.openai.agent_run_root"}),
        absent=_JSON_MESSAGES | {"gen_ai.operation.name"},
    ),
    # traceloop-sdk's decorators around the raw client loop: workflow, agent, task and tool
    # spans with their entity input/output; the openai.chat spans in the GenAI JSON messages.
    **{stack: Form(
        frozenset({"chat_session.workflow", "research_assistant.agent", "model_step.task",
                   "calculator.tool", "openai.chat"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "traceloop.entity.input",
                          "traceloop.entity.output", "traceloop.span.kind",
                          "traceloop.association.properties.session_id"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.request.functions.0.name"}),
    ) for stack in ("traceloop-sdk", "traceloop-sdk-stream")},
    # OpenLLMetry's Agents SDK processor on a chat completions model: a model call's span
    # has its input messages alone (its output, usage and tools are read from a Responses
    # `response`, which a chat completions generation has not).
    "openai-agents-openllmetry": Form(
        frozenset({"Agent Workflow", "research_assistant.agent", "openai.response",
                   "calculator.tool"}),
        frozenset({"gen_ai.input.messages", "gen_ai.tool.call.arguments",
                   "gen_ai.tool.call.result", "traceloop.span.kind"}),
        absent=frozenset({"gen_ai.output.messages", "gen_ai.usage.input_tokens",
                          "gen_ai.tool.definitions"}),
    ),
    # With OpenLLMetry's OpenAI instrumentation beside it: each model call twice, the
    # processor's openai.response span (input only) over the client's openai.chat span.
    "openai-agents-openllmetry-openai": Form(
        frozenset({"Agent Workflow", "research_assistant.agent", "openai.response",
                   "openai.chat", "calculator.tool"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.usage.input_tokens",
                          "gen_ai.tool.call.result", "traceloop.span.kind"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.request.functions.0.name"}),
    ),
    # OpenLLMetry's CrewAI spans (crew, agent, task: no tool spans; CrewAI 1.x's native
    # OpenAI provider bypasses the LLM.call it wraps) over its OpenAI instrumentation's.
    **{stack: Form(
        frozenset({"crewai.workflow", "research_assistant.agent", "openai.chat",
                   "What is 17 * 23 + 4? Use the calculator..task"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "crewai.task.description",
                          "crewai.crew.tasks_output", "traceloop.entity.output",
                          "traceloop.span.kind"},
        absent=frozenset({"gen_ai.prompt.0.content", "input.value", "gen_ai.tool.name"}),
    ) for stack in ("crewai-openllmetry", "crewai-openllmetry-sequential")},
    # A classic AgentExecutor under OpenLLMetry's LangChain callback: the executor's workflow
    # span, a task span per runnable of the agent, tool spans; the streamed model's messages
    # have the role "unknown" (an AIMessageChunk).
    "langchain-agentexecutor-openllmetry": Form(
        frozenset({"research_assistant.workflow", "ChatOpenAI.chat", "execute_tool calculator",
                   "execute_task ToolsAgentOutputParser", "execute_task ChatPromptTemplate"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                          "gen_ai.task.input", "traceloop.entity.output"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.input_messages.0.message.role"}),
    ),
    # One LLM span per litellm.completion, named after the function; a tool message's
    # tool_call_id is not recorded (results pair with their calls by order).
    "litellm-openinference": Form(
        frozenset({"completion"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.id",
                   "llm.input_messages.3.message.content", "llm.cost.total", "session.id"}),
        absent=frozenset({"llm.input_messages.3.message.tool_call_id", "gen_ai.input.messages",
                          "litellm.call_id"}),
    ),
    # OpenInference's AGENT, LLM (the model client's create) and TOOL spans beside AutoGen's
    # own create_agent / invoke_agent / execute_tool; a tool result is a `function.N` JSON
    # item of a `function` message.
    "autogen-openinference": Form(
        frozenset({"invoke_agent research_assistant", "research_assistant.on_messages_stream",
                   "OpenAIChatCompletionClient.create", "research_assistant.calculator",
                   "execute_tool calculator"}),
        frozenset({"llm.input_messages.0.message.role", "llm.input_messages.3.function.0",
                   "tool.parameters", "graph.node.id", "gen_ai.tool.call.id"}),
        absent=frozenset({"llm.tools.0.tool.json_schema", "gen_ai.input.messages",
                          "session.id"}),
    ),
    # Pydantic AI's own OTel spans with OpenInference's attributes added on end (both
    # conventions on each span); each tool's name and description beside its parameters'
    # schema under llm.tools.N.tool.
    "pydantic-ai-openinference": Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"pydantic_ai.all_messages", "gen_ai.tool.definitions",
                          "llm.input_messages.0.message.role", "llm.tools.0.tool.name",
                          "llm.tools.0.tool.json_schema", "tool.parameters", "session.id"},
        absent=frozenset({"logfire.span_type", "request_data"}),
    ),
    # A handoff: the SDK's handoff span as an OpenInference TOOL span between the two agents'
    # AGENT spans, both under one workflow; the specialist's model calls replay the transfer.
    "openai-agents-openinference-handoff": Form(
        frozenset({"Agent workflow", "triage_agent", "weather_specialist", "generation",
                   "handoff to weather_specialist", "get_weather"}),
        frozenset({"llm.input_messages.0.message.role", "graph.node.parent_id", "agent.name"}),
        absent=frozenset({"llm.tools.0.tool.json_schema", "session.id"}),
    ),
    # An agent as a tool: the specialist's run (its own workflow CHAIN and AGENT span) nested
    # under the triage agent's TOOL span for it.
    "openai-agents-openinference-as-tool": Form(
        frozenset({"Agent workflow", "triage_agent", "weather_specialist", "generation",
                   "get_weather"}),
        frozenset({"llm.input_messages.0.message.role", "tool.parameters", "agent.name"}),
        absent=frozenset({"llm.tools.0.tool.json_schema", "graph.node.parent_id"}),
    ),
    "openai-agents-otel-handoff": Form(
        frozenset({"Agent workflow", "invoke_agent triage_agent", "invoke_agent weather_specialist",
                   "agent_handoff OpenAI Agent", "chat gpt-4o-mini", "execute_tool get_weather"}),
        _JSON_MESSAGES | {"gen_ai.handoff.from_agent", "gen_ai.handoff.to_agent",
                          "gen_ai.system_instructions", "gen_ai.tool.call.result"},
        absent=frozenset({"gen_ai.tool.call.id", "gen_ai.tool.definitions"}),
    ),
    # The specialist's invoke_agent span under the triage agent's execute_tool span for it.
    "openai-agents-otel-as-tool": Form(
        frozenset({"Agent workflow", "invoke_agent triage_agent", "invoke_agent weather_specialist",
                   "execute_tool weather_specialist", "execute_tool get_weather"}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.tool.call.arguments",
                          "gen_ai.tool.call.result"},
        absent=frozenset({"gen_ai.tool.call.id", "gen_ai.tool.definitions",
                          "gen_ai.handoff.from_agent"}),
    ),
    # LangGraph's supervisor under OpenLLMetry: the handoff tool's execute_tool span and a
    # `goto` span for the Command it returns; the specialist's subgraph a task of the
    # supervisor's graph (invoke_agent per agent under one LangGraph.workflow).
    "langgraph-supervisor": Form(
        frozenset({"invoke_agent LangGraph", "invoke_agent triage_agent",
                   "invoke_agent weather_specialist", "ChatOpenAI.chat",
                   "execute_tool transfer_to_weather_specialist", "goto weather_specialist",
                   "execute_tool get_weather"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions",
                          "langgraph.command.goto_node", "gen_ai.conversation.id"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.input_messages.0.message.role"}),
    ),
    # Strands' own spans, the specialist's run (invoke_agent) below the triage agent's
    # execute_tool span for it; with delegate=True no chat span after it.
    **{stack: Form(
        frozenset({"invoke_agent triage_agent", "invoke_agent weather_specialist", "chat",
                   "execute_tool weather_specialist", "execute_tool get_weather"}),
        frozenset({"gen_ai.agent.tools", "gen_ai.tool.call.id", "gen_ai.tool.call.result",
                   "gen_ai.conversation.id"}),
        absent=_JSON_MESSAGES,
    ) for stack in ("strands-as-tool", "strands-as-tool-delegate")},
    # As openai-agents-openinference-handoff; the specialist's model calls get the history
    # as one assistant summary message (no user message, no transfer call by id).
    "openai-agents-openinference-handoff-nested": Form(
        frozenset({"Agent workflow", "triage_agent", "weather_specialist", "generation",
                   "handoff to weather_specialist", "get_weather"}),
        frozenset({"llm.input_messages.0.message.role", "graph.node.parent_id", "agent.name"}),
        absent=frozenset({"llm.tools.0.tool.json_schema", "session.id"}),
    ),
    # ADK's own spans: per user message an invoke_workflow span over each agent's
    # invoke_agent (siblings: the specialist's is not under the triage agent's), the
    # transfer an execute_tool span of the triage agent's.
    "adk-handoff": Form(
        frozenset({"invoke_workflow triage_agent", "invoke_agent triage_agent",
                   "invoke_agent weather_specialist", "execute_tool transfer_to_agent",
                   "generate_content gemini-2.5-flash", "execute_tool get_weather"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions",
                          "gen_ai.conversation.id"},
        absent=frozenset({"gcp.vertex.agent.llm_request"}),
    ),
    # OpenLLMetry 0.62's Bedrock instrumentation: one client span per Converse call named for
    # the model id without its region and vendor, in the OTel GenAI JSON attributes (Bedrock
    # blocks turned into parts, toolConfig into flat definitions); no flattened prompts.
    **{stack: Form(
        frozenset({"chat claude-sonnet-4-5-20250929-v1:0"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions",
                          "gen_ai.provider.name"},
        absent=frozenset({"gen_ai.prompt.0.content", "rpc.method", "llm.request.type"}),
    ) for stack in ("bedrock-openllmetry", "bedrock-openllmetry-stream")},
    # OpenLLMetry 0.62's Groq instrumentation: one span per call, the OTel GenAI JSON
    # attributes, tool definitions in OpenAI's nested form as sent.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.provider.name",
                          "gen_ai.is_streaming"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.request.functions.0.name"}),
    ) for stack in ("groq-openllmetry", "groq-openllmetry-stream")},
    # OpenLLMetry 0.62's Mistral AI instrumentation: the legacy flattened prompt and
    # completion (content and role only) on `mistralai.chat`; beside it, in its own trace,
    # the SDK's own span of the HTTP call (metadata and usage, no content).
    "mistralai-openllmetry": Form(
        frozenset({"mistralai.chat", "chat_completion_v1_chat_completions_post"}),
        frozenset({"gen_ai.prompt.0.content", "gen_ai.prompt.0.role", "llm.request.type",
                   "gen_ai.completion.0.role", "mistral_ai.operation.id"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions", "llm.request.functions.0.name",
                                 "gen_ai.completion.0.tool_calls.0.name"},
    ),
    # OpenLLMetry's Haystack instrumentation (0.62) on Haystack 2.31: each generator run a
    # root `haystack.openai.chat` span (no Agent span: an Agent is not a Pipeline) whose only
    # completion is its output's key; OpenLLMetry's OpenAI span under it, in the OTel GenAI
    # JSON attributes, is the model call.
    "haystack-openllmetry": Form(
        frozenset({"haystack.openai.chat", "openai.chat"}),
        _JSON_MESSAGES | {"llm.request.type", "gen_ai.completion.0.content",
                          "gen_ai.tool.definitions"},
        absent=frozenset({"gen_ai.prompt.0.user", "input.value", "haystack.component.input"}),
    ),
    # The same with `use_attributes=False`: the span keeps the tool definitions and usage, the
    # messages go to per-message log records whose bodies are Bedrock's own blocks
    # (opentelemetry-instrumentation-bedrock `event_emitter.py` `emit_input_events_converse`).
    "bedrock-openllmetry-events": Form(
        frozenset({"chat claude-sonnet-4-5-20250929-v1:0"}),
        frozenset({"gen_ai.tool.definitions", "gen_ai.provider.name",
                   "gen_ai.usage.input_tokens"}),
        frozenset({"gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message",
                   "gen_ai.choice"}),
        absent=_JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.prompt.0.content"},
    ),
    # OpenInference's Bedrock instrumentation: one LLM span per Converse call, tools as the
    # Converse toolSpec JSON, the raw message list in input.value.
    "bedrock-openinference": Form(
        frozenset({"bedrock.converse"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.id", "input.value"}),
        absent=_JSON_MESSAGES,
    ),
    "bedrock-openinference-stream": Form(
        frozenset({"bedrock.converse_stream"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.id", "input.value"}),
        absent=_JSON_MESSAGES,
    ),
    "groq-openinference": Form(
        frozenset({"Completions"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.id", "llm.provider"}),
    ),
    # Mistral AI's flattened messages name no call ids and it records no llm.tools: both
    # only in the raw request and response (input.value, output.value).
    "mistralai-openinference": Form(
        frozenset({"MistralClient.chat"}),
        frozenset({"llm.input_messages.0.message.role", "input.value", "output.value",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.function.name"}),
        absent=frozenset({"llm.tools.0.tool.json_schema",
                          "llm.output_messages.0.message.tool_calls.0.tool_call.id"}),
    ),
    # The Agents SDK's spans under OpenInference (mcp_tools per run), the mcp SDK's own client
    # and server spans (the server's an execute_tool span, in the caller's trace or, unlinked,
    # in one of its own).
    **{stack: Form(
        frozenset({"Agent workflow", "research_assistant", "mcp_tools", "generation",
                   "calculator", "MCP send tools/call calculator", "tools/call calculator"}),
        frozenset({"openinference.span.kind", "tool.name", "tool.parameters",
                   "mcp.method.name", "gen_ai.tool.name"}),
        absent=frozenset({"llm.tools.0.tool.json_schema"}),
    ) for stack in ("openai-agents-mcp", "openai-agents-mcp-unlinked")},
    # The Agents SDK's spans under OpenLLMetry's processor, its MCP instrumentation's
    # client spans (`<method>.mcp`, a `<tool>.tool` span per tools/call under the SDK's own)
    # and, in the server's process, a `ResponseStreamWriter` span per response it sends.
    "openai-agents-mcp-openllmetry": Form(
        frozenset({"Agent Workflow", "research_assistant.agent", "openai.response",
                   "calculator.tool", "tools/list.mcp", "ResponseStreamWriter"}),
        frozenset({"traceloop.span.kind", "traceloop.entity.input", "traceloop.entity.output",
                   "gen_ai.input.messages", "gen_ai.tool.call.result", "mcp.response.value"}),
        absent=frozenset({"openinference.span.kind", "gen_ai.tool.definitions"}),
    ),
    # The OTel contrib google-genai instrumentation (util-genai): one parentless
    # generate_content span per call; SPAN_ONLY puts content on it (and still sends
    # content-less operation-details records), EVENT_ONLY on the records only.
    "google-genai-otel-spans": Form(
        frozenset({"generate_content gemini-2.5-flash"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions",
                          "server.address"},
        absent=frozenset({"gen_ai.usage.total_tokens"}),
    ),
    "google-genai-otel-events": Form(
        frozenset({"generate_content gemini-2.5-flash"}),
        frozenset({"gen_ai.provider.name", "server.address"}),
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions"},
    ),
    "google-genai-openinference": Form(
        frozenset({"GenerateContent"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
                   "output.value"}),
        absent=_JSON_MESSAGES,
    ),
    # OpenLLMetry's google-generativeai 0.62 instruments google-genai with the current
    # JSON attributes (not its legacy gen_ai.prompt.N), total tokens its own.
    "google-genai-openllmetry": Form(
        frozenset({"generate_content gemini-2.5-flash"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.usage.total_tokens"},
        absent=frozenset({"gen_ai.prompt.0.content", "server.address"}),
    ),
    # openai-v2 2.4b0 on util-genai with the latest opt-in: content on the chat span, on
    # operation-details log records, or both; no tool definitions in any mode.
    "openai-v2-spans": Form(
        frozenset({"chat gpt-4o-mini"}), _JSON_MESSAGES | {"gen_ai.provider.name"},
        absent=frozenset({"gen_ai.system", "gen_ai.tool.definitions"}),
    ),
    "openai-v2-events": Form(
        frozenset({"chat gpt-4o-mini"}), frozenset({"gen_ai.provider.name"}),
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=_JSON_MESSAGES | {"gen_ai.system"},
    ),
    **{stack: Form(
        frozenset({"chat gpt-4o-mini"}), _JSON_MESSAGES | {"gen_ai.provider.name"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.system", "gen_ai.tool.definitions"}),
    ) for stack in ("openai-v2-span-and-event", "openai-v2-span-and-event-stream")},
    "google-genai-otel-span-and-event": Form(
        frozenset({"generate_content gemini-2.5-flash"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions"},
        frozenset({"gen_ai.client.inference.operation.details"}),
    ),
    # The official genai instrumentations (util-genai 1.3b0): one chat span per model call, each
    # its own trace; content on it (SPAN_ONLY), on its operation-details record
    # (EVENT_ONLY), or both; `-emit-event` sends content-less records beside SPAN_ONLY's span.
    # Chat Completions keeps the system prompt among the input messages, Responses and the
    # others in gen_ai.system_instructions; Anthropic's SDK adds its own span.
    **{stack: _genai_form(stack, frozenset({"chat gpt-4o-mini"}),
                          absent=frozenset({"gen_ai.system", "openai.api.type"}))
       for stack in _GENAI_OPENAI_CHAT},
    **{stack: _genai_form(stack, frozenset({"chat gpt-4o-mini"}),
                          frozenset({"openai.api.type"}), absent=frozenset({"gen_ai.system"}))
       for stack in _GENAI_OPENAI_RESPONSES},
    **{stack: _genai_form(stack, frozenset({"chat claude-sonnet-4-5", _SDK_SPAN}),
                          frozenset({"anthropic.message.stop_reason"}))
       for stack in _GENAI_ANTHROPIC},
    **{stack: _genai_form(stack, frozenset({"chat us.anthropic.claude-sonnet-4-5-20250929-v1:0"}))
       for stack in _GENAI_BEDROCK},
    # openai-v2 2.3b0 alone, the old default: per-message log events, gen_ai.system.
    "openai-v2-legacy-events": Form(
        frozenset({"chat gpt-4o-mini"}), frozenset({"gen_ai.system"}),
        frozenset({"gen_ai.user.message", "gen_ai.system.message", "gen_ai.assistant.message",
                   "gen_ai.tool.message", "gen_ai.choice"}),
        absent=_JSON_MESSAGES | {"gen_ai.provider.name"},
    ),
    # The Responses API on the raw client: one span per model call, each its own trace.
    **{stack: Form(
        frozenset({"Response"}),
        frozenset({"llm.input_messages.1.message.role", "llm.tools.0.tool.json_schema",
                   "llm.token_count.prompt", "input.value", "output.value"}),
        absent=_JSON_MESSAGES,
    ) for stack in ("openai-responses-openinference", "openai-responses-openinference-stream")},
    **{stack: Form(
        frozenset({"openai.response"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.response.id", "gen_ai.is_streaming",
                          "gen_ai.usage.input_tokens"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.input_messages.0.message.role"}),
    ) for stack in ("openai-responses-openllmetry", "openai-responses-openllmetry-stream")},
    # The Agents SDK on its default OpenAIResponsesModel: the response span names the tools.
    **{stack: Form(
        frozenset({"Agent workflow", "research_assistant", "response", "calculator"}),
        frozenset({"llm.tools.0.tool.json_schema", "llm.input_messages.0.message.role",
                   "llm.token_count.prompt", "graph.node.id"}),
    ) for stack in ("openai-agents-openinference-responses",
                    "openai-agents-openinference-responses-stream")},
    **{stack: Form(
        frozenset({"Agent Workflow", "research_assistant.agent", "openai.response",
                   "calculator.tool"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.usage.input_tokens",
                          "gen_ai.response.id", "traceloop.span.kind"},
    ) for stack in ("openai-agents-openllmetry-responses",
                    "openai-agents-openllmetry-responses-stream")},
    # The handoff and agent-as-tool runs on OpenAIResponsesModel: `response` spans that name
    # the tools, the transfer tool's definition among them.
    "openai-agents-openinference-responses-handoff": Form(
        frozenset({"Agent workflow", "triage_agent", "weather_specialist", "response",
                   "handoff to weather_specialist", "get_weather"}),
        frozenset({"llm.input_messages.0.message.role", "graph.node.parent_id", "agent.name",
                   "llm.tools.0.tool.json_schema"}),
        absent=frozenset({"session.id"}),
    ),
    "openai-agents-openinference-responses-as-tool": Form(
        frozenset({"Agent workflow", "triage_agent", "weather_specialist", "response",
                   "get_weather"}),
        frozenset({"llm.input_messages.0.message.role", "tool.parameters", "agent.name",
                   "llm.tools.0.tool.json_schema"}),
        absent=frozenset({"graph.node.parent_id"}),
    ),
    # Both OpenLLMetry instrumentations (as Traceloop.init installs them): each model call
    # an `openai.response` span of the processor's over the client's, one response id.
    "openai-agents-openllmetry-openai-responses": Form(
        frozenset({"Agent Workflow", "research_assistant.agent", "openai.response",
                   "calculator.tool"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.response.id", "gen_ai.is_streaming",
                          "traceloop.span.kind"},
    ),
    # OpenLIT's one init over LangGraph: its LangGraph instrumentation's workflow and node
    # spans, its LangChain callback's chat and execute_tool spans (a tool's result the
    # printed ToolMessage), its OpenAI instrumentation's operation-details log records.
    **{stack: Form(
        frozenset({"invoke_workflow research_assistant", "invoke_agent agent",
                   "chat gpt-4o-mini", "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.result",
                          "gen_ai.graph.nodes", "gen_ai.application_name",
                          "telemetry.sdk.name"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion"}),
    ) for stack in ("openlit-langgraph", "openlit-langgraph-stream")},
    **{stack: Form(
        frozenset({"chat claude-sonnet-4-5"}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.tool.args",
                          "gen_ai.tool.call.id", "telemetry.sdk.name"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion"}),
    ) for stack in ("openlit-anthropic", "openlit-anthropic-stream")},
    **{stack: Form(
        frozenset({"invoke_workflow Agent workflow", "invoke_agent research_assistant",
                   "chat gpt-4o-mini", "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.result",
                          "gen_ai.application_name", "telemetry.sdk.name"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion"}),
    ) for stack in ("openlit-openai-agents", "openlit-openai-agents-stream")},
    # CrewAI's flow methods as invoke_agent spans under the AgentExecutor's workflow span;
    # the model calls from OpenLIT's OpenAI instrumentation; no tool span.
    "openlit-crewai": Form(
        frozenset({"invoke_workflow crew", "invoke_agent research_assistant",
                   "invoke_workflow AgentExecutor", "chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.crewai.crew.agents", "gen_ai.tool.args",
                          "telemetry.sdk.name"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion"}),
    ),
    # The SDK's own chat span (azure-core's tracing), content in the older per-message span
    # events, each body JSON text under gen_ai.event.content.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini"}),
        frozenset({"gen_ai.system", "gen_ai.response.id", "az.client_request_id"}),
        absent=_JSON_MESSAGES | {"gen_ai.prompt", "gen_ai.tool.definitions"},
    ) for stack in ("azure-ai-inference", "azure-ai-inference-stream")},
    # The AI SDK 7's OpenTelemetry integration (@ai-sdk/otel `OpenTelemetry`): GenAI spans,
    # invoke_agent > step N (agent_step) > chat and execute_tool; no ai.* keys.
    **{stack: Form(
        frozenset({"invoke_agent gpt-4o-mini", "step 1", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions",
                          "gen_ai.tool.call.id", "gen_ai.agent.name"},
        absent=frozenset({"ai.operationId", "ai.prompt.messages"}),
    ) for stack in ("vercel-ai", "vercel-ai-stream")},
    # Its LegacyOpenTelemetry: the ai.* spans of AI SDK 3-6 (ai.generateText >
    # ai.generateText.doGenerate > ai.toolCall), no GenAI message keys.
    # and AI SDK 6's built-in experimental_telemetry, the same form (its tool spans siblings
    # of the model calls, not below them; a tool call's input a JSON string, not an object).
    **{stack: Form(
        frozenset({"ai.generateText", "ai.generateText.doGenerate", "ai.toolCall"}),
        _VERCEL_LEGACY, absent=_JSON_MESSAGES,
    ) for stack in ("vercel-ai-legacy", "vercel-ai-v6")},
    **{stack: Form(
        frozenset({"ai.streamText", "ai.streamText.doStream", "ai.toolCall"}),
        _VERCEL_LEGACY, absent=_JSON_MESSAGES,
    ) for stack in ("vercel-ai-legacy-stream", "vercel-ai-v6-stream")},
    # Mastra's OTel exporter with the model-inference span (core 1.71, observability 1.17):
    # invoke_agent > model_generation > agent_step > chat (model_inference, output only) and
    # execute_tool; the run's input as mastra.agent_run.input.
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "model_generation gpt-4o-mini",
                   "agent_step research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        frozenset({"mastra.span.type", "mastra.agent_run.input", "gen_ai.output.messages",
                   "gen_ai.tool.definitions", "gen_ai.tool.call.id",
                   "gen_ai.system_instructions"}),
        absent=frozenset({"gen_ai.input.messages", "gen_ai.tool.input", "agent.id"}),
    ) for stack in ("mastra", "mastra-stream")},
    # The Agents SDK for JS under OpenInference's JS OpenAI instrumentation: one LLM span per
    # model call, each its own trace (no agent or tool span: the SDK's own tracing is not OTel).
    **{stack: Form(
        frozenset({"OpenAI Chat Completions"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.tools.0.tool.json_schema", "llm.output_messages.0.message.role"}),
        absent=_JSON_MESSAGES | {"session.id", "graph.node.parent_id"},
    ) for stack in ("openai-agents-js-openinference", "openai-agents-js-openinference-stream")},
    # AI SDK 7's GenAI spans with OpenInference's keys added by its span processor
    # (@arizeai/openinference-vercel 3.2): both conventions on every span.
    **{stack: Form(
        frozenset({"invoke_agent gpt-4o-mini", "step 1", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "openinference.span.kind",
                          "llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                          "tool.parameters"},
        absent=frozenset({"ai.operationId", "ai.prompt.messages"}),
    ) for stack in ("vercel-ai-openinference", "vercel-ai-openinference-stream")},
    # LangGraph.js's prebuilt ReAct agent under OpenInference's LangChain.js instrumentation:
    # the graph's CHAIN spans, ChatOpenAI LLM spans, TOOL spans named by the tool.
    "langgraph-js-openinference": Form(
        frozenset({"research_assistant", "agent", "tools", "ChatOpenAI", "calculator"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.output_messages.0.message.role", "tool.name", "metadata"}),
        absent=_JSON_MESSAGES | {"llm.output_messages.0.message.tool_calls.0.tool_call.id"},
    ),
    # The same under OpenLLMetry's JS OpenAI instrumentation: one `chat` span per model call
    # in the GenAI JSON message form, each its own trace.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.response.id"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.input_messages.0.message.role",
                          "session.id"}),
    ) for stack in ("openai-agents-js-openllmetry", "openai-agents-js-openllmetry-stream")},
    # The google-genai instrumentations over generate_content_stream: the contrib one marks
    # the request streamed, OpenInference names the span for the stream method.
    "google-genai-otel-spans-stream": Form(
        frozenset({"generate_content gemini-2.5-flash"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions",
                          "gen_ai.request.stream", "gen_ai.response.time_to_first_chunk"},
        absent=frozenset({"gen_ai.usage.total_tokens"}),
    ),
    "google-genai-openinference-stream": Form(
        frozenset({"GenerateContentStream"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
                   "output.value"}),
        absent=_JSON_MESSAGES,
    ),
    "google-genai-openllmetry-stream": Form(
        frozenset({"generate_content gemini-2.5-flash"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.usage.total_tokens"},
        absent=frozenset({"gen_ai.prompt.0.content", "server.address", "gen_ai.request.stream"}),
    ),
    # Mistral AI's chat.stream: OpenInference's span is the non-streamed one's, its
    # output.value the accumulated stream event ({"data": {choices}}).
    "mistralai-openinference-stream": Form(
        frozenset({"MistralClient.chat"}),
        frozenset({"llm.input_messages.0.message.role", "input.value", "output.value",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.function.name"}),
        absent=frozenset({"llm.tools.0.tool.json_schema",
                          "llm.output_messages.0.message.tool_calls.0.tool_call.id"}),
    ),
    "mistralai-openllmetry-stream": Form(
        frozenset({"mistralai.chat", "stream_chat"}),
        frozenset({"gen_ai.prompt.0.content", "gen_ai.completion.0.role", "llm.is_streaming"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions", "llm.request.functions.0.name",
                                 "gen_ai.completion.0.tool_calls.0.name"},
    ),
    # OpenInference's BeeAI instrumentation: spans from BeeAI's emitter events, the agent's
    # run an AGENT span named for it, each chat model call an LLM span named for its class
    # (tools as llm.tools), each tool run (final_answer too) a TOOL span.
    "beeai-openinference": Form(
        frozenset({"research_assistant", "OpenAIChatModel", "calculator", "final_answer"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.tools.0.tool.json_schema", "tool.name", "tool.json_schema",
                   "llm.invocation_parameters"}),
        absent=_JSON_MESSAGES,
    ),
    # OpenLLMetry's Responses span, the app sending its function calls back without the
    # output items' `fc_` ids: the input's tool calls say the call_id the output did not.
    "openai-responses-openllmetry-call-ids": Form(
        frozenset({"openai.response"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.response.id",
                          "gen_ai.usage.input_tokens"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.input_messages.0.message.role"}),
    ),
    # AutoGen's own spans (each agent's turn in the swarm an invoke_agent span in a trace of
    # its own, under the runtime's `autogen process` span) and openai-v2's chat spans; the
    # handoff an execute_tool span of the triage agent's.
    "autogen-swarm": Form(
        frozenset({"invoke_agent triage_agent", "invoke_agent weather_specialist",
                   "execute_tool transfer_to_weather_specialist", "chat gpt-4o-mini",
                   "execute_tool get_weather"}),
        _JSON_MESSAGES | {"gen_ai.agent.name", "gen_ai.tool.call.id", "messaging.operation"},
        absent=frozenset({"gen_ai.tool.definitions", "openinference.span.kind"}),
    ),
    # OpenInference's CHAIN span for the team's run over both agents' AGENT spans (the
    # specialist's graph.node.parent_id the triage agent), their LLM and TOOL spans.
    "autogen-swarm-openinference": Form(
        frozenset({"Swarm.run_stream", "triage_agent.on_messages_stream",
                   "weather_specialist.on_messages_stream", "OpenAIChatCompletionClient.create",
                   "triage_agent.transfer_to_weather_specialist",
                   "weather_specialist.get_weather"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "graph.node.parent_id", "participant_names", "gen_ai.tool.call.id"}),
        absent=_JSON_MESSAGES,
    ),
    # The workflow's invoke_workflow span per run over each agent's invoke_agent (its output
    # messages the run's new messages, tool results too: the handoff's only record of its
    # result, no execute_tool span for it) and their chat and execute_tool spans.
    "agent-framework-handoff": Form(
        frozenset({"invoke_workflow Handoff", "invoke_agent triage_agent",
                   "invoke_agent weather_specialist", "executor.process weather_specialist",
                   "chat gpt-4o-mini", "execute_tool get_weather"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions",
                          "gen_ai.workflow.name", "executor.type", "gen_ai.tool.call.result"},
        absent=frozenset({"gen_ai.conversation.id", "openinference.span.kind"}),
    ),
    # The in-process runtime's `agent_runtime` spans (each message processed in a trace of
    # its own, linked to its `create` span) over each agent's invoke_agent, the
    # AutoFunctionInvocationLoop, chat and execute_tool spans; content as log records.
    "semantic-kernel-handoff": Form(
        frozenset({"invoke_agent triage_agent", "invoke_agent weather_specialist",
                   "AutoFunctionInvocationLoop", "chat gpt-4o-mini",
                   "execute_tool Handoff-transfer_to_weather_specialist",
                   "execute_tool weather-get_weather"}),
        frozenset({"messaging.operation", "sk.available_functions", "gen_ai.tool.call.result",
                   "gen_ai.tool.definitions", "gen_ai.agent.name"}),
        absent=frozenset({"gen_ai.conversation.id", "openinference.span.kind"}),
    ),
    # The AgentWorkflow's CHAIN span per run over its steps (setup_agent, run_agent_step,
    # call_tool, ...), each agent's model calls and tool runs (the handoff a FunctionTool
    # TOOL span too) below them; the current agent only in the steps' dumped events.
    "llamaindex-openinference-handoff": Form(
        frozenset({"AgentWorkflow.run", "AgentWorkflow.setup_agent", "AgentWorkflow.call_tool",
                   "OpenAI._prepare_chat_with_tools", "OpenAI.astream_chat",
                   "FunctionTool.acall"}),
        frozenset({"llm.input_messages.0.message.role", "tool.parameters", "session.id"}),
        absent=_JSON_MESSAGES,
    ),
    # The manager's AGENT span (naming its managed agents) over its steps; the managed
    # agent's run an AGENT span nested in the manager's step, no TOOL span between.
    "smolagents-openinference-managed": Form(
        frozenset({"triage_agent.run", "weather_specialist.run", "OpenAIModel.generate",
                   "SimpleTool", "FinalAnswerTool"}),
        frozenset({"smolagents.managed_agents.0.name", "smolagents.managed_agents.0.description",
                   "llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "session.id"}),
        absent=_JSON_MESSAGES,
    ),
    # The team's AGENT span over its model calls, the delegation's TOOL span and, beside it
    # (not below it), the member's AGENT span (graph.node.parent_id the team's node).
    "agno-openinference-team": Form(
        frozenset({"triage_agent.run", "weather_specialist.run", "OpenAIChat.invoke",
                   "delegate_task_to_members", "get_weather"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "graph.node.parent_id", "agent.name", "session.id"}),
        absent=_JSON_MESSAGES,
    ),
    # AgentTool: the specialist's invoke_agent inside the triage agent's execute_tool span
    # for it, one trace per run; openai-v2's chat spans under AutoGen's.
    "autogen-as-tool": Form(
        frozenset({"invoke_agent triage_agent", "execute_tool weather_specialist",
                   "invoke_agent weather_specialist", "chat gpt-4o-mini",
                   "execute_tool get_weather"}),
        _JSON_MESSAGES | {"gen_ai.agent.name", "gen_ai.tool.call.id"},
        absent=frozenset({"gen_ai.tool.definitions", "openinference.span.kind"}),
    ),
    # The same under OpenInference: the specialist's AGENT span below the triage agent's
    # TOOL span for it.
    "autogen-as-tool-openinference": Form(
        frozenset({"triage_agent.on_messages_stream", "triage_agent.weather_specialist",
                   "weather_specialist.on_messages_stream", "OpenAIChatCompletionClient.create",
                   "weather_specialist.get_weather"}),
        frozenset({"llm.input_messages.0.message.role", "tool.parameters", "graph.node.id",
                   "gen_ai.tool.call.id"}),
        absent=_JSON_MESSAGES | {"llm.tools.0.tool.json_schema"},
    ),
    # Agent.as_tool: the specialist's invoke_agent inside the triage agent's execute_tool.
    "agent-framework-as-tool": Form(
        frozenset({"invoke_agent triage_agent", "execute_tool weather_specialist",
                   "invoke_agent weather_specialist", "chat gpt-4o-mini",
                   "execute_tool get_weather"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                          "gen_ai.tool.call.result", "gen_ai.agent.name"},
        absent=frozenset({"gen_ai.workflow.name", "openinference.span.kind"}),
    ),
    # OpenLLMetry's Ollama instrumentation (it wraps the client's `_request`): one
    # `ollama.chat` span per call, flattened prompts (a replayed call's name and arguments,
    # no id: Ollama's calls have none) and tools; the completion's tool calls are not
    # recorded, only its role and text.
    **{stack: Form(
        frozenset({"ollama.chat"}),
        frozenset({"gen_ai.prompt.0.content", "gen_ai.prompt.2.tool_calls.0.name",
                   "gen_ai.completion.0.role", "llm.request.functions.0.parameters",
                   "llm.is_streaming"}),
        absent=_JSON_MESSAGES | {"gen_ai.completion.0.tool_calls.0.name",
                                 "gen_ai.prompt.2.tool_calls.0.id"},
    ) for stack in ("ollama-openllmetry", "ollama-openllmetry-stream")},
    # OpenLIT over the ollama client: its GenAI JSON messages (a call's id empty: Ollama's
    # calls have none), the ollama provider named, and the HTTP POST spans of its own
    # HTTP client instrumentation.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini", "POST"}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.provider.name",
                          "gen_ai.request.stream",
                          "openlit.agent.version_hash"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion", "gen_ai.prompt.0.content"}),
    ) for stack in ("openlit-ollama", "openlit-ollama-stream")},
    # LangGraph's ReAct agent on ChatOllama under OpenInference's LangChain instrumentation:
    # the graph's CHAIN spans, a `ChatOllama` LLM span per call (llm.provider ollama, its
    # calls named by ChatOllama's own uuids), a TOOL span per call.
    **{stack: Form(
        frozenset({"research_assistant", "agent", "tools", "ChatOllama", "calculator"}),
        frozenset({"openinference.span.kind", "llm.provider", "llm.tools.0.tool.json_schema",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.id",
                   "llm.input_messages.3.message.tool_call_id", "session.id"}),
        absent=_JSON_MESSAGES | {"gen_ai.prompt.0.content"},
    ) for stack in ("langgraph-ollama-openinference", "langgraph-ollama-openinference-stream")},
    # OpenLIT over providers' own SDKs: one `chat <model>` span per call with the GenAI JSON
    # messages and an operation-details log record; the provider each names.
    **{stack: Form(
        frozenset({"chat gemini-2.5-flash"}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.provider.name",
                          "gen_ai.tool.call.arguments", "gen_ai.request.stream"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion", "gen_ai.tool.definitions"}),
    ) for stack in ("openlit-google-genai", "openlit-google-genai-stream")},
    "openlit-mistralai": Form(
        frozenset({"chat gpt-4o-mini", "chat_completion_v1_chat_completions_post", "POST"}),
        _JSON_MESSAGES | {"gen_ai.provider.name", "gen_ai.tool.call.id",
                          "openlit.agent.version_hash"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion"}),
    ),
    "openlit-mistralai-stream": Form(
        frozenset({"chat gpt-4o-mini", "stream_chat", "POST"}),
        _JSON_MESSAGES | {"gen_ai.provider.name", "gen_ai.tool.call.id", "gen_ai.request.stream",
                          "openlit.agent.version_hash"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion"}),
    ),
    "openlit-bedrock": Form(
        frozenset({"chat us.anthropic.claude-sonnet-4-5-20250929-v1:0", "POST"}),
        _JSON_MESSAGES | {"gen_ai.provider.name", "gen_ai.system_instructions",
                          "openlit.agent.version_hash"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.tool.name", "gen_ai.tool.definitions", "gen_ai.prompt"}),
    ),
    **{stack: Form(
        frozenset({"chat openai/gpt-4o-mini", "POST"}),
        _JSON_MESSAGES | {"gen_ai.provider.name", "gen_ai.tool.call.id", "gen_ai.request.stream",
                          "openlit.agent.version_hash"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion", "gen_ai.tool.definitions"}),
    ) for stack in ("openlit-litellm", "openlit-litellm-stream")},
    # OpenLIT over Cohere's v2 client: the tool plan as gen_ai.content.reasoning, apart from
    # the output messages.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini", "POST"}),
        _JSON_MESSAGES | {"gen_ai.provider.name", "gen_ai.tool.call.id", "gen_ai.request.stream",
                          "gen_ai.content.reasoning", "gen_ai.system_instructions"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion"}),
    ) for stack in ("openlit-cohere", "openlit-cohere-stream")},
    # OpenLLMetry's Cohere instrumentation (0.62, cohere 5.x): one `cohere.chat` span per
    # call of ClientV2.chat or chat_stream, flattened prompts (role and content only: a
    # replayed call and a result's call id are not recorded), the completion's content the
    # JSON of its blocks with the tool plan appended, its calls with ids.
    **{stack: Form(
        frozenset({"cohere.chat"}),
        frozenset({"gen_ai.system", "gen_ai.prompt.2.role", "gen_ai.completion.0.content",
                   "gen_ai.completion.0.tool_calls.0.id", "llm.request.functions.0.parameters"}),
        absent=_JSON_MESSAGES | {"gen_ai.prompt.2.tool_calls.0.id",
                                 "gen_ai.prompt.3.tool_call_id", "gen_ai.prompt.2.content"},
    ) for stack in ("cohere-openllmetry", "cohere-openllmetry-stream")},
    # Pydantic AI streamed (`run_stream_sync`): the same spans, each streamed chat span with
    # the time to its first chunk.
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"pydantic_ai.all_messages", "gen_ai.tool.definitions",
                          "gen_ai.client.operation.time_to_first_chunk", *extra},
        absent=frozenset({"request_data", *absent}),
    ) for stack, extra, absent in (
        ("pydantic-ai-otel-stream", {"model_request_parameters"},
         {"logfire.span_type", "logfire.metrics"}),
        ("pydantic-ai-openinference-stream",
         {"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema", "session.id"},
         {"logfire.span_type"}),
        ("pydantic-ai-logfire-stream", {"logfire.json_schema", "logfire.span_type"},
         {"logfire.msg_template"}),
    )},
    # LiteLLM streamed: its callback's span holds the request and the chunks' rebuilt
    # response, not the raw provider response (no llm.openai.*).
    "litellm-otel-stream": Form(
        frozenset({"litellm_request", "raw_gen_ai_request"}),
        _JSON_MESSAGES | {"gen_ai.completion.0.function_call.name", "llm.request.functions.0.name",
                          "litellm.call_id", "llm.is_streaming"},
        absent=frozenset({"llm.openai.choices"}),
    ),
    "litellm-openinference-stream": Form(
        frozenset({"completion"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.id", "session.id"}),
        absent=frozenset({"gen_ai.input.messages", "litellm.call_id"}),
    ),
    "smolagents-openinference-stream": Form(
        frozenset({"research_assistant.run", "OpenAIModel.generate_stream", "FinalAnswerTool"}),
        frozenset({"llm.input_messages.0.message.role", "llm.output_messages.0.message.role",
                   "session.id"}),
    ),
    "agno-openinference-stream": Form(
        frozenset({"research_assistant.run", "OpenAIChat.invoke_stream", "calculator"}),
        frozenset({"agno.tools", "llm.input_messages.0.message.role",
                   "llm.output_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "graph.node.name", "session.id"}),
    ),
    # Semantic Kernel streamed (`invoke_stream`): the same spans and message log records.
    "semantic-kernel-stream": Form(
        frozenset({"invoke_agent research_assistant", "AutoFunctionInvocationLoop",
                   "chat gpt-4o-mini", "execute_tool tools-calculator"}),
        frozenset({"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                   "gen_ai.tool.call.result", "sk.available_functions"}),
        frozenset({"gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion", "gen_ai.response.prompt_tokens"}),
    ),
    # Agent Framework streamed (`run(stream=True)`): the same spans and message events.
    "agent-framework-stream": Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.tool.definitions",
                          "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"},
        frozenset({"gen_ai.user.message", "gen_ai.choice"}),
    ),
    # AutoGen streamed (`model_client_stream`, `run_stream`): the same spans; the OTel OpenAI
    # instrumentation's chat span of a stream sent without usage has no usage or finish reason.
    "autogen-agentchat-stream": Form(
        frozenset({"create_agent research_assistant", "invoke_agent research_assistant",
                   "execute_tool calculator", "chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.tool.call.id", "gen_ai.tool.description"},
        absent=frozenset({"gen_ai.tool.definitions", "gen_ai.tool.call.arguments"}),
    ),
    # The Haystack Agent with a streaming callback: the same spans, the generator's output
    # the message it assembles from the chunks.
    "haystack-openinference-stream": Form(
        frozenset({"Agent.run", "OpenAIChatGenerator.run", "ChatPromptBuilder.run"}),
        frozenset({"llm.input_messages.0.message.role", "input.value", "output.value",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.function.name"}),
        absent=frozenset({"haystack.component.input", "haystack.agent.step.llm.input"}),
    ),
    # The one-agent crew streamed (`Crew(stream=True)`): the same spans, the OpenAI
    # instrumentation's ChatCompletion span recording each streamed call.
    "crewai-openinference-stream": Form(
        frozenset({"research_assistant._execute_core", "ChatCompletion", "calculator.run"}),
        frozenset({"crew_inputs", "llm.input_messages.0.message.role",
                   "llm.output_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "graph.node.id", "session.id"}),
    ),
    "smolagents-openinference-openai-stream": Form(
        frozenset({"research_assistant.run", "OpenAIModel.generate_stream", "ChatCompletion"}),
        frozenset({"llm.input_messages.0.message.role", "llm.output_messages.0.message.role",
                   "session.id"}),
    ),
    # AutoGen streamed under OpenInference: the model client's create_stream is the LLM span.
    "autogen-openinference-stream": Form(
        frozenset({"invoke_agent research_assistant", "research_assistant.on_messages_stream",
                   "OpenAIChatCompletionClient.create_stream", "research_assistant.calculator",
                   "execute_tool calculator"}),
        frozenset({"llm.input_messages.0.message.role", "tool.parameters", "graph.node.id",
                   "gen_ai.tool.call.id", "llm.token_count.prompt"}),
        absent=frozenset({"llm.tools.0.tool.json_schema", "gen_ai.input.messages",
                          "session.id"}),
    ),
    "haystack-openllmetry-stream": Form(
        frozenset({"haystack.openai.chat", "openai.chat"}),
        _JSON_MESSAGES | {"llm.request.type", "gen_ai.completion.0.content",
                          "gen_ai.tool.definitions", "gen_ai.is_streaming"},
        absent=frozenset({"gen_ai.prompt.0.user", "input.value", "haystack.component.input"}),
    ),
    # The one-agent crew streamed under OpenLIT: the same spans, the chat spans of streamed
    # calls (gen_ai.request.stream, time to first token).
    "openlit-crewai-stream": Form(
        frozenset({"invoke_workflow crew", "invoke_agent research_assistant",
                   "invoke_workflow AgentExecutor", "chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.crewai.crew.agents", "gen_ai.tool.args",
                          "gen_ai.request.stream", "gen_ai.server.time_to_first_token"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion"}),
    ),
    # A raw `openai` Node client loop under OpenLLMetry's JS OpenAI instrumentation (0.27): one
    # `chat` span per model call in the GenAI JSON form, each its own trace.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.response.id",
                          "gen_ai.provider.name"},
        absent=frozenset({"gen_ai.prompt.0.content", "llm.input_messages.0.message.role",
                          "session.id"}),
    ) for stack in ("openai-js-openllmetry", "openai-js-openllmetry-stream")},
    # The same loop under OpenInference's JS OpenAI instrumentation (4.2): one LLM span per
    # model call, flattened messages with call ids, the raw request as input.value.
    **{stack: Form(
        frozenset({"OpenAI Chat Completions"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.tools.0.tool.json_schema", "input.value",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.id"}),
        absent=_JSON_MESSAGES | {"session.id"},
    ) for stack in ("openai-js-openinference", "openai-js-openinference-stream")},
    # langgraph-js-openinference's form, the model's tokens streamed (`streamMode: messages`).
    "langgraph-js-openinference-stream": Form(
        frozenset({"research_assistant", "agent", "tools", "ChatOpenAI", "calculator"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.output_messages.0.message.role", "tool.name", "metadata"}),
        absent=_JSON_MESSAGES | {"llm.output_messages.0.message.tool_calls.0.tool_call.id"},
    ),
    # LangGraph.js under OpenLLMetry's LangChain.js handler (0.27): every span a root of its
    # own trace; `chat` spans in the GenAI JSON form (text parts only), `workflow` spans per
    # runnable (serialized LangChain messages as entity input/output), `execute_tool` named
    # for the tool's class.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini", "workflow CompiledStateGraph",
                   "execute_tool DynamicStructuredTool"}),
        _JSON_MESSAGES | {"traceloop.entity.input", "traceloop.entity.output",
                          "traceloop.workflow.name", "traceloop.span.kind"},
        absent=frozenset({"gen_ai.tool.definitions", "gen_ai.prompt.0.content",
                          "openinference.span.kind"}),
    ) for stack in ("langgraph-js-openllmetry", "langgraph-js-openllmetry-stream")},
    # The Anthropic Node SDK (1.x, its own tracing on: anthropic.messages.create, metadata
    # only) under OpenInference's JS Anthropic instrumentation (0.2): flattened messages, a
    # tool_result folded into its user message, the system prompt only in the raw request.
    **{stack: Form(
        frozenset({"Anthropic Messages", _SDK_SPAN}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "llm.invocation_parameters", "input.value", "gen_ai.response.id"}),
        absent=_JSON_MESSAGES,
    ) for stack in ("anthropic-js-openinference", "anthropic-js-openinference-stream")},
    # The Anthropic SDKs alone, tracing themselves: anthropic.messages.create CLIENT spans
    # with GenAI JSON content in content mode (the tool runner adds its invoke_agent and
    # execute_tool spans), model, usage and response id alone in metadata_only.
    **{stack: Form(
        frozenset({_SDK_SPAN}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.response.id",
                          "anthropic.message.stop_reason"},
        absent=frozenset({"gen_ai.tool.definitions", "llm.input_messages.0.message.role",
                          "gen_ai.prompt.0.content"}),
    ) for stack in ("anthropic-sdk-otel", "anthropic-sdk-otel-stream", "anthropic-js-sdk-otel",
                    "anthropic-js-sdk-otel-stream")},
    "anthropic-sdk-otel-conversation": Form(
        frozenset({_SDK_SPAN}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.conversation.id"},
        absent=frozenset({"gen_ai.tool.definitions"}),
    ),
    "anthropic-sdk-otel-tool-runner": Form(
        frozenset({_SDK_SPAN, "anthropic.messages.tool_runner",
                   "anthropic.custom_tool_use calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.call.id", "gen_ai.tool.call.arguments",
                          "anthropic.tool_result.content"},
        absent=frozenset({"gen_ai.tool.definitions"}),
    ),
    # The Mistral AI SDK alone (3.8), tracing itself on the global provider: `chat {model}`
    # spans of scope mistralai_sdk_tracer, GenAI JSON messages and tool definitions.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.provider.name",
                          "gen_ai.response.id"},
        absent=frozenset({"llm.input_messages.0.message.role", "gen_ai.prompt.0.content"}),
    ) for stack in ("mistralai-sdk-otel", "mistralai-sdk-otel-stream")},
    "anthropic-sdk-otel-metadata": Form(
        frozenset({_SDK_SPAN}),
        frozenset({"gen_ai.response.id", "gen_ai.usage.input_tokens",
                   "anthropic.message.stop_reason"}),
        absent=_JSON_MESSAGES | {"gen_ai.system_instructions"},
    ),
    # The last 0.x SDK (its own tracing too) under OpenLLMetry's JS Anthropic instrumentation
    # (0.27): `chat` spans in the GenAI JSON form, the system prompt as system_instructions.
    **{stack: Form(
        frozenset({"chat claude-sonnet-4-5", _SDK_SPAN}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.usage.input_tokens"},
        absent=frozenset({"gen_ai.tool.definitions", "gen_ai.prompt.0.content",
                          "llm.input_messages.0.message.role"}),
    ) for stack in ("anthropic-js-openllmetry", "anthropic-js-openllmetry-stream")},
    # AI SDK 7's GenAI spans through Langfuse's span processor (@langfuse/otel 5.11): its
    # filter keeps them all, it marks the root (langfuse.internal.is_app_root), and
    # propagateAttributes (@langfuse/tracing) puts the session on every span.
    **{stack: Form(
        frozenset({"invoke_agent gpt-4o-mini", "step 1", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions",
                          "gen_ai.tool.call.id", "gen_ai.agent.name", "session.id",
                          "langfuse.internal.is_app_root"},
        absent=frozenset({"ai.operationId", "ai.prompt.messages", "openinference.span.kind"}),
    ) for stack in ("vercel-ai-langfuse", "vercel-ai-langfuse-stream")},
    # AI SDK 6's `ai.*` spans through Traceloop's span processor (@traceloop/node-server-sdk
    # 0.27 `createSpanProcessor`): renamed `chat <model>` / `execute_tool <tool>`, messages
    # moved to the GenAI JSON keys, tool keys to `gen_ai.tool.call.*` and `traceloop.entity.*`;
    # `ai.operationId` kept, `ai.prompt.messages` and `ai.toolCall.*` gone.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini", "execute_tool calculator"}),
        _JSON_MESSAGES | {"ai.operationId", "gen_ai.tool.definitions", "gen_ai.tool.call.id",
                          "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
                          "traceloop.span.kind", "traceloop.entity.input"},
        absent=frozenset({"ai.prompt.messages", "ai.toolCall.name", "ai.toolCall.input",
                          "ai.toolCall.output", "ai.response.toolCalls"}),
    ) for stack in ("vercel-ai-traceloop", "vercel-ai-traceloop-stream")},
    # Langfuse's JS SDK v5: observeOpenAI's `OpenAI.chat` generations (the request's
    # messages and tools as input), `observe`d tool functions, the turn's `agent` observation.
    **{stack: Form(
        frozenset({"OpenAI.chat", "research_assistant", "calculator"}),
        _LANGFUSE | {"langfuse.observation.model.name", "langfuse.internal.is_app_root"},
        absent=_NOT_LANGFUSE,
    ) for stack in ("langfuse-js-openai", "langfuse-js-openai-stream")},
    # OpenLIT's Node SDK (1.15) on a raw `openai` client loop: one `chat <model>` span per
    # model call in the GenAI JSON form (a tool message's result as a text part, no id), each
    # its own trace, sent as OTLP/JSON beside `operation.details` log records.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions",
                          "gen_ai.response.id", "gen_ai.sdk.version"},
        log_events=_DETAILS,
        absent=frozenset({"gen_ai.prompt.0.content", "llm.input_messages.0.message.role",
                          "session.id"}),
    ) for stack in ("openlit-js-openai", "openlit-js-openai-stream")},
    # Genkit's own tracing (genkit 1.42, its NodeSDK on OTel JS 1.25): a flow span named for
    # the agent > generate util spans > the model action (named for the model, GenerateRequest
    # and GenerateResponse as genkit:input / genkit:output) and tool actions; no gen_ai keys.
    **{stack: Form(
        frozenset({"research_assistant", "generate", "local/gpt-4o-mini", "calculator"}),
        frozenset({"genkit:type", "genkit:metadata:subtype", "genkit:name", "genkit:input",
                   "genkit:output", "genkit:state", "genkit:path"}),
        absent=_JSON_MESSAGES | {"gen_ai.operation.name", "openinference.span.kind"},
    ) for stack in ("genkit", "genkit-stream")},
    # Logfire 5's instrument_openai (its default format, version 2): one span per request,
    # OTel GenAI messages beside a request_data of the model alone; a stream's call is the
    # `streaming response` log span.
    **{stack: Form(
        frozenset({"Chat Completion with {request_data[model]!r}"})
        | (_STREAM_LOG if stack.endswith("-stream") else frozenset()),
        _JSON_MESSAGES | {"request_data", "logfire.msg_template", "gen_ai.tool.definitions"},
        absent=frozenset({"response_data", "events"}),
    ) for stack in ("logfire-openai", "logfire-openai-stream")},
    **{stack: Form(
        frozenset({"Responses API with {gen_ai.request.model!r}"})
        | (_STREAM_LOG if stack.endswith("-stream") else frozenset()),
        _JSON_MESSAGES | {"request_data", "logfire.msg_template", "gen_ai.system_instructions",
                          "gen_ai.tool.definitions"},
        absent=frozenset({"response_data", "events"}),
    ) for stack in ("logfire-openai-responses", "logfire-openai-responses-stream")},
    # instrument_openai_agents: one span per SDK span, named by its message template, the
    # span data exported as attributes; instrument_openai records nothing under them.
    **{stack: Form(
        frozenset({"OpenAI Agents trace: {name}", "Agent run: {name!r}", "Function: {name}",
                   "Turn {turn} for agent research_assistant",
                   "Responses API with {gen_ai.request.model!r}" if "-responses" in stack
                   else "Chat completion with {gen_ai.request.model!r}"}),
        frozenset({"logfire.msg_template", "input", "output", "tools", "sdk_span_type",
                   *(("raw_input", "response") if "-responses" in stack
                     else ("request_data", "model_config"))}),
        absent=_JSON_MESSAGES,
    ) for stack in _LOGFIRE_AGENTS},
    # What Langfuse's span processor exports: OpenInference's Agents SDK spans as they are,
    # marked by the processor (its app root); `@observe` observations alone.
    "langfuse-openai-agents": Form(
        frozenset({"research_assistant", "generation", "turn", "calculator"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "tool.name", "langfuse.internal.is_app_root"}),
        absent=frozenset({"langfuse.observation.type", "llm.tools.0.tool.json_schema"}),
    ),
    "langfuse-openai-agents-responses": Form(
        frozenset({"research_assistant", "response", "turn", "calculator"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.tools.0.tool.json_schema", "tool.name",
                   "langfuse.internal.is_app_root"}),
        absent=frozenset({"langfuse.observation.type"}),
    ),
    "langfuse-observe": Form(
        frozenset({"research_assistant", "chat", "calculator"}),
        _LANGFUSE | {"langfuse.observation.model.name"},
        absent=_NOT_LANGFUSE | {"openinference.span.kind"},
    ),
    # What AgentOps POSTs: its fork of OpenLLMetry's OpenAI instrumentation (flattened
    # prompts and completions, tools as gen_ai.request.functions, a `tool_call.<name>` span
    # per requested call) under the session span `init()` starts; with the Agents SDK, its
    # processor's spans beside them (the generation's input flattened as one JSON text).
    **{stack: Form(
        frozenset({"openai.chat.completion", "tool_call.calculator",
                   f"{stack}-single_tool.session"}),
        frozenset({"gen_ai.prompt.0.role", "gen_ai.completion.0.role",
                   "gen_ai.request.functions.0.name", "agentops.span.kind", "tool.call.id"}),
        absent=_JSON_MESSAGES | {"llm.request.functions.0.name"},
    ) for stack in ("agentops-openai", "agentops-openai-stream")},
    "agentops-openai-agents": Form(
        frozenset({"openai.chat.completion", "generation", "turn", "research_assistant",
                   "calculator", "agentops-openai-agents-single_tool.session"}),
        frozenset({"gen_ai.prompt.0.content", "gen_ai.request.functions.0.name",
                   "agentops.span.kind", "agent.name", "agent.tools", "tool.result",
                   "tool.status"}),
        absent=_JSON_MESSAGES,
    ),
    # Elastic's EDOT OpenAI instrumentation: a `chat {model}` span (gen_ai.system, usage,
    # response id) and the v1.30 per-message events as log records of their own.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini"}), frozenset({"gen_ai.system", "gen_ai.response.id"}),
        frozenset({"gen_ai.user.message", "gen_ai.system.message", "gen_ai.assistant.message",
                   "gen_ai.tool.message", "gen_ai.choice"}),
        absent=_JSON_MESSAGES | {"gen_ai.provider.name", "gen_ai.tool.definitions"},
    ) for stack in ("edot-openai", "edot-openai-stream")},
    # Langtrace's own instrumentations: the prompt and completion as semconv 1.26 span
    # events (gen_ai.content.prompt / .completion), the request's tools as a JSON list of
    # JSON texts; under LangGraph, LangChain-core spans with the method's JSON arguments.
    **{stack: Form(
        frozenset({"openai.chat.completions.create"}),
        frozenset({"langtrace.sdk.name", "langtrace.service.type", "gen_ai.request.tools"}),
        absent=_JSON_MESSAGES | {"gen_ai.prompt", "gen_ai.completion", "gen_ai.response.id"},
    ) for stack in ("langtrace-openai", "langtrace-openai-stream")},
    "langtrace-langgraph": Form(
        frozenset({"openai.chat.completions.create", "BaseChatModel.invoke",
                   "BaseChatModel.generate", "RunnableSequence.invoke"}),
        frozenset({"langtrace.sdk.name", "langchain.task.name", "langchain.inputs",
                   "langchain.outputs", "langchain.metadata", "gen_ai.request.tools"}),
        absent=_JSON_MESSAGES | {"gen_ai.prompt", "gen_ai.completion"},
    ),
    # Laminar: its span processor's lmnr.span.* on every span; its OpenAI fork's messages
    # in OpenAI's own shapes under the standard keys (the output as the response's
    # choices); under LangGraph, OpenLLMetry-like execute_task spans with lmnr.span.input.
    **{stack: Form(
        frozenset({"openai.chat"}),
        _JSON_MESSAGES | {"lmnr.span.type", "lmnr.span.path", "gen_ai.tool.definitions"},
        absent=frozenset({"gen_ai.prompt.0.role", "traceloop.entity.input"}),
    ) for stack in ("lmnr-openai", "lmnr-openai-stream")},
    **{stack: Form(
        frozenset({"openai.chat", "research_assistant.workflow", "execute_tool calculator",
                   "execute_task agent"}),
        _JSON_MESSAGES | {"lmnr.span.type", "lmnr.span.input", "lmnr.span.output",
                          "gen_ai.conversation.id", "gen_ai.tool.call.id"},
        absent=frozenset({"gen_ai.prompt.0.role", "traceloop.entity.input"}),
    ) for stack in ("lmnr-langgraph", "lmnr-langgraph-stream")},
    # LangWatch's SDK: the decorated run (`agent`) over its autotracked OpenAI calls (`llm`)
    # and decorated tools (`tool`), each span's content as typed values of its own.
    **{stack: Form(
        frozenset({"research_assistant", "llm", "calculator"}),
        frozenset({"langwatch.span.type", "langwatch.input", "langwatch.output",
                   "langwatch.params", "metadata", "gen_ai.usage.prompt_tokens"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions", "llm.input_messages.0.message.role"},
    ) for stack in ("langwatch-openai", "langwatch-openai-stream")},
    # Judgment's tracer: the observed run (`agent`) over its wrapped client's calls
    # (`OPENAI_API_CALL`: the request's keyword arguments and the response as JSON under the
    # deprecated gen_ai.prompt / gen_ai.completion) and observed tools; live spans emitted
    # more than once (`judgment.update_id`).
    **{stack: Form(
        frozenset({"research_assistant", "OPENAI_API_CALL", "calculator"}),
        frozenset({"judgment.span_kind", "judgment.input", "judgment.output",
                   "judgment.session_id", "judgment.update_id", "gen_ai.prompt",
                   "gen_ai.completion", "judgment.usage.non_cached_input_tokens"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions"},
    ) for stack in ("judgeval-openai", "judgeval-openai-stream")},
    # Pipecat's own tracing: conversation > turn > llm spans; the model call's messages,
    # text and tools under attributes of its own (`input`, `output`, `tools`), no standard
    # content keys.
    "pipecat": Form(
        frozenset({"conversation", "turn", "llm"}),
        frozenset({"input", "output", "tools", "tool_count", "stream", "turn.number",
                   "conversation.id", "gen_ai.system_instructions", "gen_ai.operation.name"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions"},
    ),
    # Phoenix's register(auto_instrument=True) with OpenInference's LangChain and OpenAI
    # instrumentations both installed: each call a LangChain LLM span and, in a trace of
    # its own (the LangChain tracer never makes its spans current), the client's.
    **{stack: Form(
        frozenset({"research_assistant", "agent", "ChatOpenAI", "ChatCompletion",
                   "calculator"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.tools.0.tool.json_schema", "session.id", "output.value"}),
        absent=_JSON_MESSAGES | {"gen_ai.prompt.0.role"},
    ) for stack in ("phoenix-langgraph", "phoenix-langgraph-stream")},
    **{stack: Form(
        frozenset({"ReAct.forward", "Predict.forward", "ChainOfThought.forward",
                   f"{adapter}.__call__", "LM.__call__", "calculator.__call__",
                   "finish.__call__"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "input.value", "output.value", "session.id"}),
    ) for stack, adapter in (("dspy-openinference", "ChatAdapter"),
                             ("dspy-openinference-json", "JSONAdapter"))},
    "mlflow-dspy": Form(
        frozenset({"ReAct.forward", "Predict.forward", "ChainOfThought.forward",
                   "ChatAdapter.format", "ChatAdapter.parse", "LM.__call__",
                   "Tool.calculator"}),
        frozenset({"mlflow.spanType", "mlflow.spanInputs", "mlflow.spanOutputs",
                   "mlflow.chat.tokenUsage", "name", "args"}),
        absent=frozenset({"openinference.span.kind"}),
    ),
    # A hierarchical crew: the manager's task span, its coworker tool's span (named for the
    # tool's display name; its description names it as the model calls it).
    "crewai-openinference-hierarchical": Form(
        frozenset({"triage_agent._execute_core", "Delegate work to coworker.run",
                   "get_weather.run", "ChatCompletion"}),
        frozenset({"crew_inputs", "llm.input_messages.0.message.role", "tool.name",
                   "tool.description", "session.id"}),
    ),
    "crewai-openllmetry-hierarchical": Form(
        frozenset({"crewai.workflow", "triage_agent.agent", "weather_specialist.agent",
                   "openai.chat"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "crewai.crew.process",
                          "crewai.agent.allow_delegation", "crewai.crew.tasks_output"},
        absent=frozenset({"gen_ai.prompt.0.content", "input.value", "gen_ai.tool.name"}),
    ),
    # As agno-openinference-team, the delegation through `delegate_task_to_member`.
    **{stack: Form(
        frozenset({"triage_agent.run", "weather_specialist.run", "OpenAIChat.invoke",
                   "delegate_task_to_member", "get_weather"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "graph.node.parent_id", "agent.name", "session.id"}),
        absent=_JSON_MESSAGES,
    ) for stack in ("agno-openinference-team-coordinate", "agno-openinference-team-route")},
    # AG2's chat (the proxy's initiate_chat, each agent's generate_reply), its tool spans
    # (the call's id and name), the OpenAI instrumentation's ChatCompletion below them.
    "ag2-openinference": Form(
        frozenset({"user.initiate_chat", "research_assistant.generate_reply",
                   "user.generate_reply", "calculator", "ChatCompletion"}),
        frozenset({"ag2.sender.name", "ag2.recipient.name", "agent.name", "tool_call.id",
                   "tool_call.function.name", "llm.input_messages.0.message.role",
                   "llm.tools.0.tool.json_schema"}),
        absent=_JSON_MESSAGES,
    ),
    # CAMEL's model calls alone, through OpenInference's OpenAI instrumentation.
    "camel-openinference": Form(
        frozenset({"ChatCompletion"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "llm.token_count.prompt", "session.id"}),
        absent=_JSON_MESSAGES | {"tool.name", "agent.name"},
    ),
    # OpenLIT's AG2 spans (each agent's generate_reply, receive and send as `execute_task
    # <agent>`, though set `chat`) over its OpenAI instrumentation's model calls.
    "openlit-ag2": Form(
        frozenset({"execute_task research_assistant", "execute_task user",
                   "chat gpt-4o-mini"}),
        frozenset({"gen_ai.agent.name", "gen_ai.agent.message_type", "gen_ai.agent.sender",
                   "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.operation.name"}),
        log_events=frozenset({"gen_ai.client.inference.operation.details"}),
    ),
    # OpenLLMetry's Agno spans: the team's workflow span, the member's agent span beside the
    # delegation's tool span, the OpenAI instrumentation's chat spans.
    "agno-openllmetry-team-coordinate": Form(
        frozenset({"triage_agent.team", "weather_specialist.agent",
                   "delegate_task_to_member.tool", "get_weather.tool", "openai.chat"}),
        _JSON_MESSAGES | {"agno.team.name", "traceloop.span.kind", "traceloop.entity.input",
                          "gen_ai.tool.definitions"},
    ),
    # OpenInference's Claude Agent SDK spans: an AGENT span a response (the prompt as plain
    # text, each AssistantMessage as an output message, `content.N` texts), a TOOL span a
    # tool_use; beside them the `mcp` package's own spans of the in-process server.
    "claude-agent-sdk-openinference": Form(
        frozenset({"ClaudeAgentSDK.ClaudeSDKClient.receive_response", "mcp__tools__calculator",
                   "tools/call calculator"}),
        frozenset({"input.mime_type", "llm.output_messages.0.message.tool_calls.0.tool_call.id",
                   "llm.output_messages.1.message.content.0", "tool.id", "session.id"}),
        absent=frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema"}),
    ),
    # Claude Code's own telemetry (beta traces on): its interaction, model call and tool
    # spans, its event records joined to the interaction; `-raw` with each request's and
    # response's body as a record too.
    "claude-code-otel": Form(
        frozenset({"claude_code.interaction", "claude_code.llm_request", "claude_code.tool",
                   "claude_code.tool.execution"}),
        frozenset({"span.type", "user_prompt", "tool_name", "gen_ai.tool.call.id",
                   "gen_ai.usage.input_tokens", "gen_ai.conversation.id"}),
        log_events=frozenset({"user_prompt", "api_request", "assistant_response",
                              "tool_result"}),
    ),
    "claude-code-otel-raw": Form(
        frozenset({"claude_code.interaction", "claude_code.llm_request", "claude_code.tool"}),
        frozenset({"span.type", "user_prompt", "tool_name", "gen_ai.tool.call.id"}),
        log_events=frozenset({"user_prompt", "assistant_response", "api_request_body",
                              "api_response_body"}),
    ),
    # Claude Code's default export (traces off): its event records alone, naming no span,
    # keyed by `session.id` and `prompt.id` (record-only turns, `ingest/record_turns.py`).
    "claude-code-otel-logs": Form(
        log_events=frozenset({"user_prompt", "api_request", "assistant_response",
                              "tool_result"}),
    ),
    # Gemini CLI's own telemetry: its event records keyed by session.id and prompt_id
    # (record-only turns); an llm_call span per model call, with no messages.
    # Codex CLI's own telemetry: its tracing spans (one trace per turn) and event records.
    # OpenInference's interceptor of it: a `codex.turn` LLM span a turn, a TOOL span a call.
    "codex-cli-openinference": Form(
        frozenset({"codex.turn"}),
        frozenset({"codex.turn.id", "openinference.span.kind", "input.value", "tool.id",
                   "llm.token_count.prompt", "codex.native_otlp.signals"}),
    ),
    "codex-cli-otel": Form(
        frozenset({"turn/start", "handle_responses", "mcp.tools.call"}),
        frozenset({"turn.id", "conversation.id", "gen_ai.usage.input_tokens", "call_id"}),
        log_events=frozenset({"codex.user_prompt", "codex.tool_result", "codex.api_request"}),
    ),
    "opencode-otel": Form(
        frozenset({"ai.streamText", "ai.streamText.doStream", "ai.toolCall",
                   "SessionPrompt.loop"}),
        frozenset({"ai.operationId", "ai.prompt.messages", "ai.prompt.tools",
                   "ai.toolCall.result"}),
    ),
    # Qwen Code's own telemetry: an interaction span a prompt, llm_request and tool spans
    # under it, the content on records naming them.
    "qwen-code-otel": Form(
        frozenset({"qwen-code.interaction", "qwen-code.llm_request", "qwen-code.tool"}),
        frozenset({"qwen-code.prompt_id", "llm_request.context", "gen_ai.tool.call.id"}),
        log_events=frozenset({"qwen-code.user_prompt", "qwen-code.api_request",
                              "qwen-code.api_response", "qwen-code.tool_call"}),
    ),
    "gemini-cli-otel": Form(
        frozenset({"llm_call"}),
        frozenset({"gen_ai.prompt.name", "gen_ai.system_instructions", "gen_ai.tool.definitions"}),
        log_events=frozenset({"gemini_cli.user_prompt", "gemini_cli.api_request",
                              "gemini_cli.api_response",
                              "gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.input.messages", "gen_ai.output.messages"}),
    ),
    "claude-code-otel-logs-raw": Form(
        log_events=frozenset({"user_prompt", "api_request", "assistant_response",
                              "tool_result", "api_request_body", "api_response_body"}),
    ),
    # OpenLIT over a LlamaIndex FunctionAgent: only its OpenAI instrumentation's chat spans.
    "openlit-llamaindex": Form(
        frozenset({"chat gpt-4o-mini"}),
        frozenset({"gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id",
                   "gen_ai.usage.input_tokens"}),
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.agent.name", "gen_ai.workflow.name"}),
    ),
    # OpenLIT's Agno spans (the agent's creation and run, its tools) over its OpenAI chat spans.
    **{stack: Form(
        frozenset({"create_agent research_assistant", "invoke_agent research_assistant",
                   "execute_tool calculator", "chat gpt-4o-mini"}),
        frozenset({"gen_ai.agent.name", "gen_ai.conversation.id", "gen_ai.operation.name",
                   "gen_ai.tool.name", "gen_ai.tool.call.id"}),
        frozenset({"gen_ai.client.inference.operation.details"}),
    ) for stack in ("openlit-agno", "openlit-agno-stream")},
    # OpenLIT over smolagents: execute_tool spans (final_answer among them) and chat spans.
    "openlit-smolagents": Form(
        frozenset({"execute_tool calculator", "execute_tool final_answer", "chat gpt-4o-mini"}),
        frozenset({"gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.call.arguments",
                   "gen_ai.tool.call.result", "gen_ai.operation.name"}),
        frozenset({"gen_ai.client.inference.operation.details"}),
    ),
    # OpenInference's Together instrumentation: one LLM span per call (named for the SDK's
    # resource class), flattened messages, tools, calls with ids.
    **{stack: Form(
        frozenset({"Completions"}),
        frozenset({"llm.provider", "llm.input_messages.0.message.role",
                   "llm.tools.0.tool.json_schema", "llm.invocation_parameters",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.id"}),
        absent=_JSON_MESSAGES,
    ) for stack in ("together-openinference", "together-openinference-stream")},
    # OpenLLMetry's Together instrumentation: legacy flattened prompts, no tools or calls; a
    # streamed call has no completion at all.
    "together-openllmetry": Form(
        frozenset({"together.chat"}),
        frozenset({"gen_ai.prompt.0.content", "gen_ai.prompt.0.role", "llm.request.type",
                   "gen_ai.completion.0.role", "gen_ai.response.id"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions", "llm.request.functions.0.name",
                                 "gen_ai.completion.0.tool_calls.0.name"},
    ),
    "together-openllmetry-stream": Form(
        frozenset({"together.chat"}),
        frozenset({"gen_ai.prompt.0.content", "gen_ai.prompt.0.role", "llm.is_streaming"}),
        absent=_JSON_MESSAGES | {"gen_ai.completion.0.role", "gen_ai.completion.0.content",
                                 "llm.request.functions.0.name"},
    ),
    # Instructor's create span (its response model named) over OpenInference's OpenAI span.
    "instructor-openinference": Form(
        frozenset({"instructor.create", "ChatCompletion"}),
        frozenset({"instructor.response_model", "llm.input_messages.0.message.role",
                   "llm.tools.0.tool.json_schema",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.id"}),
        absent=_JSON_MESSAGES,
    ),
    # OpenInference's Vertex AI instrumentation: a span per GAPIC call, named for its method,
    # the request and response as proto-plus dicts, the tools only in input.value.
    **{stack: Form(
        frozenset({span}),
        frozenset({"llm.system", "input.value", "output.value",
                   "llm.input_messages.0.message.contents.0.message_content.text",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.function.name"}),
        absent=_JSON_MESSAGES | {"llm.tools.0.tool.json_schema"},
    ) for stack, span in (("vertexai-openinference", "generate_content"),
                          ("vertexai-openinference-stream", "stream_generate_content"))},
    **{stack: Form(
        frozenset({"vertexai.generate_content"}),
        frozenset({"gen_ai.prompt.0.content", "gen_ai.prompt.0.role", "llm.request.type",
                   "gen_ai.completion.0.content"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions", "llm.request.functions.0.name"},
    ) for stack in ("vertexai-openllmetry", "vertexai-openllmetry-stream")},
    # OpenLLMetry's OpenAI chat spans (0.53: flattened gen_ai.prompt.N) translated by
    # OpenInference's OpenLLMetry span processor, which adds its llm.* beside them.
    **{stack: Form(
        frozenset({"openai.chat"}),
        frozenset({"gen_ai.prompt.0.role", "gen_ai.completion.0.role",
                   "llm.request.functions.0.name", "openinference.span.kind",
                   "llm.input_messages.0.message.role", "llm.output_messages.0.message.role",
                   "llm.token_count.prompt", "input.value", "output.value"}),
        absent=_JSON_MESSAGES,
    ) for stack in ("openllmetry-openinference-translated",
                    "openllmetry-openinference-translated-stream")},
    # OpenLIT's OpenAI chat spans with OpenInference's OpenLIT span processor: a chat span
    # that names the called tool (gen_ai.tool.name) it marks a TOOL span (tool.name beside
    # the chat's gen_ai.*); OpenLIT's httpx spans it marks CHAIN.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini", "POST"}),
        _JSON_MESSAGES | {"gen_ai.tool.name", "gen_ai.tool.call.id", "openinference.span.kind",
                          "tool.name", "openlit.agent.version_hash"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gen_ai.prompt", "gen_ai.completion"}),
    ) for stack in ("openlit-openinference-translated",
                    "openlit-openinference-translated-stream")},
    # Strands' own spans (default form) with OpenInference's Strands span processor: its
    # llm.*, tool.* and input/output values beside Strands' gen_ai.* attributes, the
    # gen_ai.* content events stripped.
    "strands-openinference-translated": Form(
        frozenset({"invoke_agent research_assistant", "execute_event_loop_cycle", "chat",
                   "execute_tool calculator"}),
        frozenset({"gen_ai.operation.name", "gen_ai.tool.call.id", "gen_ai.agent.name",
                   "openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.output_messages.0.message.role", "llm.tools.0.tool.name",
                   "tool.call_id", "graph.node.id", "metadata"}),
        absent=_JSON_MESSAGES,
    ),
    # OpenLLMetry's LangChain spans (0.53) with OpenInference's OpenLLMetry span processor:
    # each task span (a graph node, a runnable) replaced by a TOOL span named after it, the
    # chat spans' llm.* beside their gen_ai.prompt.N.
    **{stack: Form(
        frozenset({"create_agent research_assistant", "execute_task agent", "execute_task tools",
                   "execute_tool calculator", "ChatOpenAI.chat"}),
        frozenset({"gen_ai.prompt.0.role", "gen_ai.completion.0.role", "openinference.span.kind",
                   "llm.input_messages.0.message.role", "tool.name", "tool.parameters",
                   "input.value", "output.value", "traceloop.association.properties.thread_id"}),
        absent=_JSON_MESSAGES | {"traceloop.entity.input", "traceloop.span.kind"},
    ) for stack in ("langgraph-openllmetry-openinference-translated",
                    "langgraph-openllmetry-openinference-translated-stream")},
    # ADK's own spans in its default form (no content) with OpenLLMetry's Google Generative
    # AI spans (gen_ai.input/output.messages) nested in its generate_content spans.
    "adk-openllmetry": Form(
        frozenset({"invoke_workflow research_assistant", "invoke_agent research_assistant",
                   "generate_content gemini-2.5-flash", "execute_tool calculator"}),
        _JSON_MESSAGES | {"gcp.vertex.agent.invocation_id", "gen_ai.system_instructions",
                          "gen_ai.tool.definitions"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gcp.vertex.agent.llm_request", "llm.input_messages.0.message.role"}),
    ),
    # Pydantic AI's spans rewritten by OpenInference's processor, and OpenInference's OpenAI
    # ChatCompletion spans nested in its chat spans.
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini", "ChatCompletion",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"pydantic_ai.all_messages", "llm.input_messages.0.message.role",
                          "llm.tools.0.tool.json_schema", "input.value", "session.id"},
        absent=frozenset({"logfire.span_type", "request_data"}),
    ) for stack in ("pydantic-ai-openinference-openai",
                    "pydantic-ai-openinference-openai-stream")},
    # Semantic Kernel's own spans and log records, and OpenInference's OpenAI ChatCompletion
    # spans nested in its chat spans.
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "AutoFunctionInvocationLoop",
                   "chat gpt-4o-mini", "ChatCompletion", "execute_tool tools-calculator"}),
        frozenset({"gen_ai.tool.call.arguments", "sk.available_functions",
                   "llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema"}),
        frozenset({"gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"}),
    ) for stack in ("semantic-kernel-openinference-openai",
                    "semantic-kernel-openinference-openai-stream")},
    # OpenLIT over a Haystack Agent: its generator component's span (`chat
    # openai_chat_generator`) over its OpenAI chat span, no Agent or tool span.
    **{stack: Form(
        frozenset({"chat openai_chat_generator", "chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.framework.component.name", "gen_ai.tool.name"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"haystack.component.input", "openinference.span.kind"}),
    ) for stack in ("openlit-haystack", "openlit-haystack-stream")},
    # OpenLIT over DSPy on LiteLLM: its LiteLLM chat spans alone, each a trace of its own,
    # DSPy's adapter sections in their GenAI messages.
    "openlit-dspy": Form(
        frozenset({"chat openai/gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.usage.input_tokens"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"openinference.span.kind", "mlflow.spanType"}),
    ),
    # OpenLIT over Pydantic AI: its agent and graph-node spans (`execute_tool <model>` the
    # tool-calling node) over its OpenAI chat spans.
    **{stack: Form(
        frozenset({"create_agent research_assistant", "invoke_workflow research_assistant",
                   "execute_tool gpt-4o-mini", "chat gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.agent.lifecycle.phase", "gen_ai.tool.call.id"},
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"pydantic_ai.all_messages", "logfire.msg"}),
    ) for stack in ("openlit-pydantic-ai", "openlit-pydantic-ai-stream")},
    # OpenLIT over ADK: its Runner span (`invoke_agent <app>`), create_agent and agent spans
    # and its Google AI Studio chat spans, beside ADK's own spans (default form).
    "openlit-adk": Form(
        frozenset({"invoke_agent corpus", "create_agent research_assistant",
                   "invoke_workflow research_assistant", "invoke_agent research_assistant",
                   "generate_content gemini-2.5-flash", "chat gemini-2.5-flash",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gcp.vertex.agent.invocation_id", "gen_ai.tool.definitions",
                          "gen_ai.execution.mode"},
        frozenset({"gen_ai.client.inference.operation.details"}),
    ),
    # OpenLIT over Strands (latest opt-in): its OpenAI chat spans nested in Strands' chat
    # spans, its records under them.
    "openlit-strands": Form(
        frozenset({"invoke_agent research_assistant", "execute_event_loop_cycle", "chat",
                   "chat gpt-4o-mini", "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.agent.tools", "openlit.agent.version_hash"},
        frozenset({"gen_ai.client.inference.operation.details"}),
    ),
    # AgentOps' CrewAI bridge alone: crew, task and agent spans, no model call.
    "agentops-crewai": Form(
        frozenset({"research_assistant.agent"}),
        frozenset({"agentops.span.kind", "crewai.crew.tasks_output", "crewai.task.name",
                   "agentops.entity.output", "crewai.crew.usage_metrics"}),
        absent=frozenset({"gen_ai.prompt.0.content", "gen_ai.completion.0.content",
                          "gen_ai.input.messages"}),
    ),
    # As strands-openinference-translated, with the latest GenAI opt-in: the operation-details
    # events stripped, the tool span's gen_ai.tool.call.* kept beside tool.*.
    "strands-openinference-translated-latest": Form(
        frozenset({"invoke_agent research_assistant", "execute_event_loop_cycle", "chat",
                   "execute_tool calculator"}),
        frozenset({"gen_ai.provider.name", "gen_ai.tool.call.arguments",
                   "gen_ai.tool.call.result", "gen_ai.system_instructions",
                   "openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.output_messages.0.message.role", "tool.call_id"}),
        absent=_JSON_MESSAGES,
    ),
    # Older releases still common in production (each pinned in its requirements file).
    # OpenLLMetry's OpenAI instrumentation 0.33: the legacy flattened prompt and completion,
    # the request's tools as llm.request.functions.N.*.
    **{stack: Form(
        frozenset({"openai.chat"}),
        frozenset({"gen_ai.prompt.0.role", "gen_ai.completion.0.tool_calls.0.id",
                   "gen_ai.prompt.3.tool_call_id", "llm.request.functions.0.parameters"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions"},
    ) for stack in ("openai-openllmetry-0.33", "openai-openllmetry-0.33-stream")},
    # OpenInference's OpenAI instrumentation 0.1.12: flattened messages, the tools only in
    # the raw request (no llm.tools yet).
    **{stack: Form(
        frozenset({"ChatCompletion"}),
        frozenset({"llm.input_messages.0.message.role", "llm.invocation_parameters",
                   "input.value"}),
        absent=frozenset({"llm.tools.0.tool.json_schema"}),
    ) for stack in ("openai-openinference-0.1.12", "openai-openinference-0.1.12-stream")},
    # LangGraph 0.2 under OpenInference's LangChain instrumentation 0.1.29: the tools only
    # in the chat model's invocation parameters.
    "langgraph-openinference-0.1.29": Form(
        frozenset({"LangGraph", "agent", "ChatOpenAI", "tools", "calculator"}),
        frozenset({"llm.input_messages.0.message.role", "llm.invocation_parameters",
                   "tool.name", "session.id"}),
        absent=frozenset({"llm.tools.0.tool.json_schema"}),
    ),
    # LangGraph 0.2 under OpenLLMetry's LangChain instrumentation 0.33: workflow, task and
    # tool spans named `<name>.<kind>`, the chat span's legacy flattened prompt, no tools.
    "langgraph-openllmetry-0.33": Form(
        frozenset({"LangGraph.workflow", "agent.task", "ChatOpenAI.chat", "calculator.tool"}),
        frozenset({"gen_ai.prompt.0.role", "gen_ai.completion.0.tool_calls.0.id",
                   "traceloop.entity.input", "traceloop.span.kind"}),
        absent=_JSON_MESSAGES | {"llm.request.functions.0.name"},
    ),
    # The Agents SDK 0.0.7 under OpenInference's bridge 0.1.14.
    "openai-agents-openinference-0.0": Form(
        frozenset({"Agent workflow", "research_assistant", "generation", "calculator"}),
        frozenset({"llm.input_messages.0.message.role", "llm.invocation_parameters",
                   "tool.name"}),
        absent=frozenset({"llm.tools.0.tool.json_schema"}),
    ),
    # Pydantic AI 0.4 under plain OpenTelemetry: `agent run`, `chat <model>` and `running
    # tool` spans; the older per-message events as JSON arrays on the spans (its default
    # event mode), or as log records (`-logs`).
    "pydantic-ai-otel-0.4": Form(
        frozenset({"agent run", "chat gpt-4o-mini", "running tool"}),
        frozenset({"events", "all_messages_events", "final_result", "model_request_parameters",
                   "tool_arguments", "tool_response"}),
        absent=_JSON_MESSAGES | {"pydantic_ai.all_messages"},
    ),
    "pydantic-ai-otel-0.4-logs": Form(
        frozenset({"agent run", "chat gpt-4o-mini", "running tool"}),
        frozenset({"all_messages_events", "final_result", "model_request_parameters"}),
        frozenset({"gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"}),
        absent=_JSON_MESSAGES | {"events"},
    ),
    # Logfire 2.11's OpenAI instrumentation: request_data and response_data only.
    **{stack: Form(
        frozenset({"Chat Completion with {request_data[model]!r}"}),
        frozenset({"request_data", "response_data", "logfire.msg_template"}),
        absent=_JSON_MESSAGES | {"gen_ai.operation.name", "gen_ai.tool.definitions"},
    ) for stack in ("logfire-openai-2.11", "logfire-openai-2.11-stream")},
    # smolagents 1.9 under OpenInference 0.1.6: tool responses in their own role, labelled.
    "smolagents-openinference-1.9": Form(
        frozenset({"ToolCallingAgent.run", "Step 1", "OpenAIServerModel.__call__",
                   "SimpleTool"}),
        frozenset({"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema",
                   "smolagents.tools_names", "tool.parameters"}),
        absent=_JSON_MESSAGES,
    ),
    # OpenLIT 1.26: one span per call, the prompt transcript and the completion as
    # semconv 1.26/1.27 span events.
    "openlit-openai-1.26": Form(
        frozenset({"openai.chat.completions"}),
        frozenset({"telemetry.sdk.name", "gen_ai.endpoint", "gen_ai.usage.input_tokens"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.name", "gen_ai.tool.definitions"},
    ),
    # Strands 1.0: its own spans, content in the older per-message span events.
    "strands-1.0": Form(
        frozenset({"invoke_agent research_assistant", "execute_event_loop_cycle", "chat",
                   "execute_tool calculator"}),
        frozenset({"gen_ai.agent.tools", "gen_ai.tool.call.id", "system_prompt"}),
        absent=_JSON_MESSAGES,
    ),
    # Pydantic AI's own spans (GenAI conventions, content on) with OpenLLMetry's OpenAI
    # `openai.chat` spans nested in its chat spans.
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini", "openai.chat",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"pydantic_ai.all_messages", "gen_ai.tool.definitions",
                          "gen_ai.openai.api_base", "gen_ai.is_streaming"},
        absent=frozenset({"openinference.span.kind", "gen_ai.prompt.0.content"}),
    ) for stack in ("pydantic-ai-otel-openllmetry", "pydantic-ai-otel-openllmetry-stream")},
    # Strands' own spans (latest opt-in: operation-details span events) with OpenInference's
    # OpenAI ChatCompletion spans of its (streamed) requests nested in its chat spans.
    "strands-openinference-openai": Form(
        frozenset({"invoke_agent research_assistant", "execute_event_loop_cycle", "chat",
                   "ChatCompletion", "execute_tool calculator"}),
        frozenset({"gen_ai.agent.tools", "openinference.span.kind",
                   "llm.input_messages.0.message.role", "llm.tools.1.tool.json_schema"}),
        absent=_JSON_MESSAGES,
    ),
    # The same with OpenLLMetry's `openai.chat` spans (gen_ai.input/output.messages).
    "strands-openllmetry-openai": Form(
        frozenset({"invoke_agent research_assistant", "execute_event_loop_cycle", "chat",
                   "openai.chat", "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.agent.tools", "gen_ai.tool.definitions",
                          "gen_ai.openai.api_base"},
        absent=frozenset({"openinference.span.kind"}),
    ),
    # Agent Framework's own spans and log records (sensitive data on), with OpenInference's
    # OpenAI ChatCompletion spans nested in its chat spans.
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini", "ChatCompletion",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "openinference.span.kind",
                          "llm.input_messages.0.message.role", "llm.tools.1.tool.json_schema"},
        frozenset({"gen_ai.user.message", "gen_ai.choice"}),
    ) for stack in ("agent-framework-openinference-openai",
                    "agent-framework-openinference-openai-stream")},
    # The same with OpenLLMetry's `openai.chat` spans.
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini", "openai.chat",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.openai.api_base"},
        frozenset({"gen_ai.user.message", "gen_ai.choice"}),
        absent=frozenset({"openinference.span.kind"}),
    ) for stack in ("agent-framework-openllmetry-openai",
                    "agent-framework-openllmetry-openai-stream")},
    # ADK's own spans (default form) with OpenInference's google-genai spans
    # (AsyncGenerateContent) nested in its generate_content spans.
    "adk-openinference-genai": Form(
        frozenset({"invoke_workflow research_assistant", "invoke_agent research_assistant",
                   "generate_content gemini-2.5-flash", "AsyncGenerateContent",
                   "execute_tool calculator"}),
        frozenset({"gcp.vertex.agent.invocation_id", "gen_ai.tool.definitions",
                   "openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.tools.1.tool.json_schema"}),
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=frozenset({"gcp.vertex.agent.llm_request"}),
    ),
    # LangChain v1's create_agent graph under OpenInference's LangChain instrumentation:
    # the graph's CHAIN, a CHAIN per node (middleware hooks too), ChatOpenAI, TOOL spans.
    **{stack: Form(
        frozenset({"research_assistant", "model", "ChatOpenAI", "tools", "calculator"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.tools.1.tool.json_schema", "session.id", "tool.name"}),
        absent=frozenset({"traceloop.span.kind"}) | _JSON_MESSAGES,
    ) for stack in ("langchain-v1-openinference", "langchain-v1-openinference-stream")},
    # The same graph under OpenLLMetry's: create_agent, invoke_agent, the workflow span,
    # `execute_task <node>` spans, `ChatOpenAI.chat` and `execute_tool` spans.
    **{stack: Form(
        frozenset({"create_agent research_assistant", "invoke_agent research_assistant",
                   "research_assistant.workflow", "execute_task model", "ChatOpenAI.chat",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.conversation.id",
                          "traceloop.span.kind", "gen_ai.tool.call.arguments"},
        absent=frozenset({"openinference.span.kind"}),
    ) for stack in ("langchain-v1-openllmetry", "langchain-v1-openllmetry-stream")},
    # Both LangChain instrumentations at once: each handler's own tree of the graph's runs
    # in one trace, two model-call spans and two tool spans of each run.
    **{stack: Form(
        frozenset({"research_assistant", "model", "ChatOpenAI", "calculator",
                   "invoke_agent research_assistant", "execute_task model",
                   "ChatOpenAI.chat", "execute_tool calculator"}),
        _JSON_MESSAGES | {"openinference.span.kind", "llm.input_messages.0.message.role",
                          "traceloop.span.kind", "gen_ai.tool.call.arguments"},
    ) for stack in ("langchain-v1-openinference-openllmetry",
                    "langchain-v1-openinference-openllmetry-stream")},
    # OpenLLMetry's CrewAI spans (no tool spans) with OpenInference's OpenAI ChatCompletion
    # spans below them.
    "crewai-openllmetry-openinference-openai": Form(
        frozenset({"crewai.workflow", "research_assistant.agent", "ChatCompletion",
                   "What is 17 * 23 + 4? Use the calculator..task"}),
        frozenset({"crewai.task.description", "crewai.crew.tasks_output",
                   "openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.tools.1.tool.json_schema", "traceloop.span.kind"}),
        absent=frozenset({"gen_ai.prompt.0.content", "gen_ai.input.messages"}),
    ),
    # OpenLLMetry's Agents SDK processor spans with OpenInference's OpenAI ChatCompletion
    # spans of the chat completions model's calls.
    "openai-agents-openllmetry-openinference-openai": Form(
        frozenset({"Agent Workflow", "research_assistant.agent", "openai.response",
                   "ChatCompletion", "calculator.tool"}),
        frozenset({"gen_ai.input.messages", "gen_ai.tool.call.result", "traceloop.span.kind",
                   "openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.tools.1.tool.json_schema"}),
        absent=frozenset({"gen_ai.prompt.0.content", "llm.request.functions.0.name"}),
    ),
    # LangGraph.js under OpenInference's LangChain.js and OpenAI JS instrumentations: the
    # graph's spans, and each call's client span a root of its own.
    **{stack: Form(
        frozenset({"research_assistant", "agent", "ChatOpenAI", "OpenAI Chat Completions",
                   "tools", "calculator"}),
        frozenset({"openinference.span.kind", "llm.input_messages.0.message.role",
                   "llm.tools.1.tool.json_schema", "input.value", "output.value"}),
        absent=_JSON_MESSAGES,
    ) for stack in ("langgraph-js-openinference-openai",
                    "langgraph-js-openinference-openai-stream")},
    # LangGraph.js under OpenLLMetry's LangChain.js and OpenAI JS instrumentations: every
    # span a root of its own; two `chat gpt-4o-mini` spans of each call.
    **{stack: Form(
        frozenset({"workflow CompiledStateGraph", "chat gpt-4o-mini",
                   "execute_tool DynamicStructuredTool"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.response.id",
                          "traceloop.entity.output"},
        absent=frozenset({"openinference.span.kind"}),
    ) for stack in ("langgraph-js-openllmetry-openai", "langgraph-js-openllmetry-openai-stream")},
    # The OTel project's GenAI framework instrumentations (opentelemetry-python-genai 1.3b0).
    # Over LangChain its chat span is the model call's; the OpenAI client instrumentation's,
    # run inside it, makes no span (util-genai's SuppressedInferenceInvocation merges its
    # attributes, server.address among them, into the open one).
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.id",
                          "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
                          *(["server.address"] if "-openai" in stack else [])},
        absent=frozenset({"gen_ai.system_instructions",
                          *([] if "-openai" in stack else ["server.address"])}),
    ) for stack in ("genai-langchain", "genai-langchain-stream", "genai-langchain-openai",
                    "genai-langchain-openai-stream", "genai-langgraph", "genai-langgraph-stream")},
    # The supervisor's graph is a workflow; each agent node an invoke_agent span (the
    # handoff's `call_agent` node too), the transfer an execute_tool span.
    "genai-langgraph-supervisor": Form(
        frozenset({"invoke_workflow LangGraph", "invoke_agent triage_agent",
                   "invoke_agent weather_specialist", "chat gpt-4o-mini",
                   "execute_tool transfer_to_weather_specialist", "execute_tool get_weather"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.id",
                          "gen_ai.conversation.id"},
    ),
    "genai-langchain-no-content": Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        frozenset({"gen_ai.tool.call.id", "gen_ai.tool.description", "gen_ai.response.id"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                                 "gen_ai.tool.call.result", "gen_ai.system_instructions"},
    ),
    "genai-langchain-span-and-event": Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                          "gen_ai.tool.call.result"},
        frozenset({"gen_ai.client.inference.operation.details"}),
    ),
    # EVENT_ONLY: no content on any span (not even a tool's arguments or result), the model
    # calls' messages and tool definitions in the operation.details records alone.
    "genai-langchain-event-only": Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   "execute_tool calculator"}),
        frozenset({"gen_ai.tool.call.id", "gen_ai.tool.name"}),
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                                 "gen_ai.tool.call.result"},
    ),
    "genai-openai-agents": Form(
        frozenset({"invoke_workflow Agent workflow", "invoke_agent research_assistant",
                   "execute_tool calculator"}),
        frozenset({"gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
                   "gen_ai.conversation.id"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.call.id", "gen_ai.tool.definitions"},
    ),
    **{stack: Form(
        frozenset({"invoke_workflow Agent workflow", "invoke_agent research_assistant",
                   "chat gpt-4o-mini", "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                          "gen_ai.tool.call.result",
                          *(["openai.api.type"] if "-responses" in stack else [])},
        absent=frozenset({"gen_ai.tool.call.id"}),
    ) for stack in ("genai-openai-agents-openai", "genai-openai-agents-openai-stream",
                    "genai-openai-agents-openai-responses",
                    "genai-openai-agents-openai-responses-stream")},
    "genai-openai-agents-openai-responses-event-only": Form(
        frozenset({"invoke_workflow Agent workflow", "invoke_agent research_assistant",
                   "chat gpt-4o-mini", "execute_tool calculator"}),
        frozenset({"gen_ai.response.id", "openai.api.type", "gen_ai.tool.name"}),
        frozenset({"gen_ai.client.inference.operation.details"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                                 "gen_ai.tool.call.result", "gen_ai.system_instructions"},
    ),
    # The GenAI Agents SDK processor makes nothing of the SDK's handoff span (only agent and
    # function spans: `processor.py`, `on_span_start`): the transfer is the chat spans'
    # tool call alone; an agent as a tool is an execute_tool span over its invoke_agent.
    **{stack: Form(
        frozenset({"invoke_workflow Agent workflow", "invoke_agent triage_agent",
                   "invoke_agent weather_specialist", "chat gpt-4o-mini",
                   "execute_tool get_weather",
                   *(["execute_tool weather_specialist"] if "-as-tool" in stack else [])}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.result"},
        absent=frozenset({"gen_ai.handoff.from_agent", "gen_ai.tool.call.id"}),
    ) for stack in ("genai-openai-agents-openai-handoff", "genai-openai-agents-openai-as-tool")},
    # Its LlamaIndex, Agno and smolagents instrumentations make no model-call span of an
    # API-backed model's (the `-openai` stacks' chat spans are the client instrumentation's);
    # smolagents' none of a tool's either. Its DSPy instrumentation spans DSPy's LM calls.
    "genai-llama-index": Form(
        frozenset({"invoke_agent research_assistant", "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.system_instructions", "gen_ai.tool.definitions",
                          "gen_ai.tool.call.id", "gen_ai.tool.call.result"},
        absent=frozenset({"gen_ai.response.id", "gen_ai.usage.input_tokens"}),
    ),
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.id",
                          "gen_ai.tool.call.result", "gen_ai.conversation.id"},
        absent=frozenset({"gen_ai.response.id", "gen_ai.system_instructions"}),
    ) for stack in ("genai-agno", "genai-agno-stream")},
    **{stack: Form(
        frozenset({"invoke_agent research_assistant"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.agent.description"},
        absent=frozenset({"gen_ai.response.id", "gen_ai.tool.call.id",
                          "gen_ai.tool.call.result"}),
    ) for stack in ("genai-smolagents", "genai-smolagents-stream")},
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", "chat gpt-4o-mini",
                   *([] if "smolagents" in stack else ["execute_tool calculator"])}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.response.id", "server.address"},
    ) for stack in ("genai-llama-index-openai", "genai-agno-openai", "genai-agno-openai-stream",
                    "genai-smolagents-openai", "genai-smolagents-openai-stream")},
    # The multi-agent scenarios: LlamaIndex's AgentWorkflow hands off by its `handoff` tool,
    # an Agno team delegates by its `delegate_task_to_member(s)` tool.
    "genai-llama-index-openai-handoff": Form(
        frozenset({"invoke_workflow AgentWorkflow", "invoke_agent triage_agent",
                   "invoke_agent weather_specialist", "chat gpt-4o-mini", "execute_tool handoff",
                   "execute_tool get_weather"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.id", "server.address"},
    ),
    **{stack: Form(
        frozenset({"invoke_agent triage_agent", "invoke_agent weather_specialist",
                   "chat gpt-4o-mini", "execute_tool get_weather", f"execute_tool {delegate}"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.id",
                          "gen_ai.conversation.id", "server.address"},
    ) for stack, delegate in (("genai-agno-openai-team", "delegate_task_to_members"),
                              ("genai-agno-openai-team-coordinate", "delegate_task_to_member"))},
    **{stack: Form(
        frozenset({"invoke_agent dspy.ReAct", "chat gpt-4o-mini", "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.arguments",
                          "gen_ai.tool.call.result", "gen_ai.usage.input_tokens"},
        absent=frozenset({"gen_ai.tool.call.id", "gen_ai.conversation.id", "server.address"}),
    ) for stack in ("genai-dspy", "genai-dspy-json")},
    # The OTel JS OpenAI instrumentation (and Elastic's) on chat completions: a `chat`
    # client span per call, its content the older per-message events as log records.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini"}),
        frozenset({"gen_ai.operation.name", "gen_ai.system", "gen_ai.response.id",
                   "gen_ai.usage.input_tokens"}),
        log_events=frozenset({"gen_ai.system.message", "gen_ai.user.message",
                              "gen_ai.assistant.message", "gen_ai.tool.message",
                              "gen_ai.choice"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions"},
    ) for stack in ("openai-js-otel", "openai-js-otel-stream", "openai-js-elastic",
                    "openai-js-elastic-stream", "openai-agents-js-otel",
                    "openai-agents-js-otel-stream", "openai-js-otel-nocontent")},
    # ... on the Responses API: the content in operation-details records (a streamed call's
    # output one record per item), the instructions a plain string on the span.
    **{stack: Form(
        frozenset({"chat gpt-4o-mini"}),
        frozenset({"gen_ai.provider.name", "gen_ai.system_instructions", "gen_ai.response.id"}),
        log_events=frozenset({"gen_ai.client.inference.operation.details"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions"},
    ) for stack in ("openai-js-otel-responses", "openai-js-otel-responses-stream",
                    "openai-agents-js-otel-responses", "openai-agents-js-otel-responses-stream",
                    "openai-js-otel-responses-nocontent")},
    # LlamaIndex's own OTel integration: a span per dispatcher span, named `Class.method`,
    # tagged `llamaindex.*`; the content only in span events (conventions/llamaindex.py).
    **{stack: Form(
        frozenset({"FunctionAgent.run", "OpenAI._prepare_chat_with_tools", "FunctionTool.acall",
                   "BaseWorkflowAgent.call_tool", chat}),
        frozenset({"llamaindex.run_id", "llamaindex.step.input_summary"}),
        absent=_JSON_MESSAGES | {"llm.input_messages.0.message.role", "gen_ai.operation.name"},
    ) for stack, chat in (("llamaindex-otel", "OpenAI.achat"),
                          ("llamaindex-otel-stream", "OpenAI.astream_chat"))},
    # Mirascope's own GenAI instrumentation: a `chat` span per model call (a resumed call's
    # under Mirascope's `Response.resume` span), no tool span and no agent span.
    **{stack: Form(
        frozenset({"chat openai/gpt-4o-mini", f"{resume}.resume openai/gpt-4o-mini"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.system_instructions",
                          "mirascope.response.messages"},
        absent=frozenset({"gen_ai.tool.call.id", "gen_ai.conversation.id"}),
    ) for stack, resume in (("mirascope-otel", "Response"),
                            ("mirascope-otel-stream", "StreamResponse"))},
    # azure-ai-agents' AIAgentsInstrumentor: one trace per client operation, content in
    # the older per-message span events (`gen_ai.event.content` JSON text).
    **{stack: Form(
        frozenset({"create_agent research_assistant", "create_thread", "create_message",
                   "start_thread_run", "get_thread_run", "submit_tool_outputs",
                   "list_messages"}),
        frozenset({"gen_ai.system", "gen_ai.thread.id", "gen_ai.thread.run.id",
                   "gen_ai.agent.id", "gen_ai.usage.input_tokens"}),
        absent=_JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.conversation.id"},
    ) for stack in _AZURE_AGENTS},
    # langchain-azure-ai's tracer: invoke_agent > chat / execute_tool, the run's thread as
    # the conversation.
    **{stack: Form(
        frozenset({"invoke_agent research_assistant", chat, "execute_tool calculator"}),
        _JSON_MESSAGES | {"gen_ai.tool.definitions", "gen_ai.tool.call.id",
                          "gen_ai.tool.call.result", "gen_ai.conversation.id",
                          "gen_ai.system_instructions"},
    ) for stack, chat in (("langchain-azure-ai", "chat gpt-4o-mini-2024-07-18"),
                          ("langchain-azure-ai-stream", "chat gpt-4o-mini"))},
}  # fmt: skip


@pytest.mark.parametrize("stack", list(STACKS))
def test_exports_the_form_it_stands_for(
    recordings: Callable[[str, str], Recording], stack: str
) -> None:
    rec = recordings(stack, STACKS[stack].scenarios[0])
    form = FORMS[stack]
    keys = {k for span in rec.raw_spans for k in span.attributes}
    assert form.spans <= {span.name for span in rec.raw_spans}
    assert form.attributes <= keys
    assert not form.absent & keys
    assert form.log_events <= {lg.event_name for lg in rec.raw_logs}


def _field_params() -> Iterator[Any]:
    for stack, scenario in RECORDED:
        expected = json.loads((FIXTURES / stack / scenario / "expected.json").read_text())
        for index in range(len(expected)):
            for field in FIELDS:
                yield pytest.param(
                    stack, scenario, index, field, marks=_xfail(stack, scenario, index, field),
                    id=f"{stack}-{scenario}-{index}-{field}",
                )  # fmt: skip


def test_fixtures_are_recorded() -> None:
    """Every stack of the registry has its scenarios committed (the five, or the
    multi-agent ones it opts in to; a stack not recorded yet is not in `STACKS`)."""
    assert set(RECORDED) == {(s, n) for s in STACKS for n in STACKS[s].scenarios}


@pytest.mark.parametrize(("stack", "scenario"), RECORDED, ids=[f"{s}-{n}" for s, n in RECORDED])
def test_expectation_is_the_wire_s(
    recordings: Callable[[str, str], Recording], stack: str, scenario: str
) -> None:
    """expected.json is what the wire records give: nobody edited one without the other."""
    rec = recordings(stack, scenario)
    assert rec.expected == rederived(rec)
    assert len(rec.wire) == sum(t["llm_calls"] for t in rec.expected)


@pytest.mark.parametrize(
    ("stack", "scenario"),
    [pytest.param(s, n, marks=_xfail(s, n, None, "turns"), id=f"{s}-{n}") for s, n in RECORDED],
)
def test_one_turn_per_request(
    recordings: Callable[[str, str], Recording], stack: str, scenario: str
) -> None:
    rec = recordings(stack, scenario)
    # A stack exporting no spans (Claude Code with its traces off) tells its turns in
    # log records alone.
    assert rec.batch.spans == len(rec.raw_spans)
    assert rec.raw_spans or rec.raw_logs
    known = gap(stack, scenario, None, "turns")
    if known is None:
        assert turns_right(rec), [(t.request, t.llm_calls) for t in rec.turns]
        return
    # The export lacks what the list is checked by (the requests): one turn a request all
    # the same, and the missing values really nowhere.
    assert not turns_right(rec), f"listed as a gap but ingested correctly: {known.reason}"
    assert len(rec.turns) == len(rec.expected) and rec.batch.errors == ()
    text = export_text(rec)
    for index in range(len(rec.expected)):
        for value in known.absent(rec, index):
            assert not in_raw(text, value), f"{value!r} is in the export after all"


@pytest.mark.parametrize(("stack", "scenario", "index", "field"), list(_field_params()))
def test_turn_field_matches_the_wire(
    recordings: Callable[[str, str], Recording], stack: str, scenario: str, index: int, field: str
) -> None:
    rec = recordings(stack, scenario)
    ours, theirs = compare(rec, index, field)
    known = gap(stack, scenario, index, field)
    if known is None:
        assert ours == theirs
        return
    assert ours != theirs, f"listed as a gap but ingested correctly: {known.reason}"
    text = export_text(rec)
    for value in known.absent(rec, index):
        assert not in_raw(text, value), f"{value!r} is in the export after all"


# Stacks that run no agent, only a model client's tool loop: their turns name none.
_NO_AGENT_DRIVERS = {"anthropic_logfire"}
# Loops with no agent span, and a Pipecat pipeline (it names no agent).
_NO_AGENT = {"langfuse-openai", "langfuse-openai-stream", "langfuse-v3-openai",
             "langfuse-v3-openai-stream", "mlflow-openai", "mlflow-openai-stream",
             "mlflow-openai-genai", "logfire-openai", "logfire-openai-stream",
             "logfire-openai-responses", "logfire-openai-responses-stream",
             "agentops-openai", "agentops-openai-stream", "logfire-openai-2.11",
             "logfire-openai-2.11-stream", "openlit-openai-1.26",
             "pipecat"}  # fmt: skip
# traceloop's @agent names the loop; Langfuse JS's `agent` observation (`langfuse-js-*`) too;
# LangWatch's `@langwatch.trace(type="agent")` and Judgment's `@Tracer.observe(span_type=
# "agent")` too.
_NAMED_LOOPS = {"traceloop-sdk", "traceloop-sdk-stream", "langfuse-js-openai",
                "langfuse-js-openai-stream", "langwatch-openai", "langwatch-openai-stream",
                "judgeval-openai", "judgeval-openai-stream"}
# Stacks whose agent ran but whose turns do not name it yet: why, and whether the export
# holds the name (a strict xfail, so a fix shows) or not (then the test proves it absent).
AGENT_NOT_NAMED: dict[str, tuple[str, bool]] = {
    **{stack: ("LlamaIndex's OTel integration names the agent only in its workflow steps' "
               "event summaries (`current_agent_name`), last of fields cut at 200 characters",
               False)
       for stack in ("llamaindex-otel", "llamaindex-otel-stream")},
    **{stack: ("the Agents SDK for JS exports no spans of its own (its tracing goes to "
               "OpenAI), only its OpenAI client's", False)
       for stack in ("openai-agents-js-openinference", "openai-agents-js-openinference-stream",
                     "openai-agents-js-openllmetry", "openai-agents-js-openllmetry-stream",
                     "openai-agents-js-otel", "openai-agents-js-otel-stream",
                     "openai-agents-js-otel-responses",
                     "openai-agents-js-otel-responses-stream")},
    **{stack: ("azure-ai-agents names the agent on its create_agent span alone, a trace "
               "of its own; ingest makes no turn of the run (NOT_YET: turns)", True)
       for stack in _AZURE_AGENTS},
    "haystack-openinference": ("Haystack's Agent has no name", False),
    "haystack-openllmetry": ("Haystack's Agent has no name", False),
    "mlflow-langgraph-genai": ("MLflow's GenAI translation names spans by their type "
                              "(the graph's is `CHAIN`): the graph's name is gone", False),
    "haystack-openinference-stream": ("Haystack's Agent has no name", False),
    "haystack-openllmetry-stream": ("Haystack's Agent has no name", False),
    **{stack: ("OpenLLMetry's LangChain.js handler names the graph's span for its class "
               "(CompiledStateGraph); the agent's name is only the AIMessages' `name` in "
               "workflow spans' entity output, root spans of their own traces", True)
       for stack in ("langgraph-js-openllmetry", "langgraph-js-openllmetry-stream",
                     "langgraph-js-openllmetry-openai", "langgraph-js-openllmetry-openai-stream")},
    **{stack: ("a DSPy module has no name: its spans name its class (ReAct.forward)", False)
       for stack in ("dspy-openinference", "dspy-openinference-json", "mlflow-dspy")},
    "camel-openinference": ("no instrumentation covers CAMEL: the export is its model calls "
                            "alone", False),
    "claude-agent-sdk-openinference": ("the Claude Agent SDK's agent has no name (only a "
                                       "subagent's, by its tool)", False),
    "openlit-llamaindex": ("OpenLIT makes no span of LlamaIndex's agent workflow", False),
    "smolagents-openinference-1.9": ("OpenInference's smolagents instrumentation 0.1.6 "
                                     "records no agent name: its span is named for the "
                                     "class's run method", False),
    "openai-agents-openinference-0.0": ("OpenInference's Agents SDK bridge 0.1.14 names an "
                                        "agent span for the agent and sets no agent.name or "
                                        "graph.node.id (the trace's root span, also AGENT, is "
                                        "named for the workflow)", True),
    **{stack: ("LangGraph 0.2's create_react_agent takes no name: its graph is `LangGraph`",
               False)
       for stack in ("langgraph-openinference-0.1.29", "langgraph-openllmetry-0.33")},
    "openlit-agno-stream": ("the model calls' turn is apart from the agent's span, which "
                            "names it (NOT_YET: turns)", True),
    **{stack: ("Claude Code's interaction names no agent", False)
       for stack in ("claude-code-otel", "claude-code-otel-raw", "claude-code-otel-logs",
                     "claude-code-otel-logs-raw")},
    **{stack: ("Haystack's Agent has no name", False)
       for stack in ("openlit-haystack", "openlit-haystack-stream")},
    "openlit-dspy": ("a DSPy module has no name, and OpenLIT makes no span of it", False),
    "codex-cli-otel": ("the CLI is the agent: its turns are named `codex`, not the driver's "
                       "agent (a CLI takes no agent name)", True),
    "codex-cli-openinference": ("the interceptor names no agent: a turn is an LLM span "
                                "(`codex.turn`), and the CLI takes no agent name", False),
    "opencode-otel": ("the CLI is the agent and takes no agent name: its turns are not "
                      "named for the driver's agent (not studied further yet)", True),
    "qwen-code-otel": ("the CLI is the agent: its turns are named `qwen-code`, not the "
                       "driver's agent (a CLI takes no agent name)", True),
    "gemini-cli-otel": ("the CLI is the agent: its turns are named `gemini-cli`, not the "
                        "driver's agent (a CLI takes no agent name)", True),
    "openlit-adk": ("OpenLIT spans ADK's Runner run as `invoke_agent <app_name>` (openlit "
                    "`instrumentation/google_adk/utils.py`), outermost over the agent's spans: "
                    "the turn is named for the app, `corpus`", True),
    "openlit-pydantic-ai-stream": ("OpenLIT does not wrap run_stream_sync: no span runs the "
                                   "agent, and its graph-node spans, the agent's name on them, "
                                   "and each chat span are roots of traces of their own, which "
                                   "nothing joins", True),
    "openlit-ag2": ("OpenLIT's AG2 spans are each agent's step (`execute_task <agent>`); "
                    "the outermost is the user proxy's send, whose recipient OpenLIT records as "
                    "'Unknown' (the assistant only as the send's output text): the turn is "
                    "named for the proxy", True),
}


# Stacks whose turns name the agent for what the instrumentation calls it, not the driver's name.
_NAMED_FOR_CLASS = {
    # A DSPy module has no name: the GenAI DSPy instrumentation names its invoke_agent span
    # for the module's class.
    "genai-dspy": "dspy.ReAct",
    "genai-dspy-json": "dspy.ReAct",
}


def _agent(stack: str) -> str | None:
    if stack in _NAMED_FOR_CLASS:
        return _NAMED_FOR_CLASS[stack]
    s = STACKS[stack]
    if stack not in _NAMED_LOOPS and (
            s.driver.endswith("_loop") or s.driver in _NO_AGENT_DRIVERS or stack in _NO_AGENT):
        return None
    return "triage_agent" if set(s.scenarios) <= set(MULTI_AGENT) else AGENT_NAME


def _agent_params() -> Iterator[Any]:
    for stack in STACKS:
        reason, present = AGENT_NOT_NAMED.get(stack, ("", False))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if present else []
        yield pytest.param(stack, marks=marks, id=stack)


@pytest.mark.parametrize("stack", list(_agent_params()))
def test_turns_name_the_agent_that_ran(
    recordings: Callable[[str, str], Recording], stack: str
) -> None:
    """Per-agent views group turns by their agent: the agent the driver named (the triage
    agent for a handoff), none for a bare client loop."""
    rec = recordings(stack, STACKS[stack].scenarios[0])
    want = _agent(stack)
    names = {t.agent_name for t in rec.turns}
    if stack in AGENT_NOT_NAMED and not AGENT_NOT_NAMED[stack][1]:
        assert names == {None}
        assert want is not None and not in_raw(export_text(rec), want)
        return
    assert names == {want}


def _live_params() -> Iterator[Any]:
    for stack in STACKS:
        yield pytest.param(
            stack, id=stack,
            marks=[pytest.mark.stack_live, pytest.mark.skipif(
                not installed(stack),
                reason=f".stacks/{stack} does not exist (make stack-fixtures)",
            )],
        )  # fmt: skip


_UNREPEATABLE_WIRE = {
    **{stack: "Codex CLI prefixes each tool output it sends the model with the call's wall "
              "time (`Wall time: 0.0353 seconds`): no two runs' wires match" for stack in _CODEX},
    "gemini-cli-otel": "Gemini CLI's system prompt names its built-in skills by their path in "
                       "the install (`<worktree>/.stacks/gemini-cli/node_modules/...`): a run "
                       "in another worktree than the recording's sends another prompt",
}


@pytest.mark.parametrize("stack", list(_live_params()))
def test_live_run_gives_the_committed_wire(stack: str, tmp_path: Path) -> None:
    """A live run of the driver in the stack's environment says on the wire what the
    committed recording says: a new version that behaves differently shows here, and
    `make stack-fixtures` records it."""
    if stack in _UNREPEATABLE_WIRE:
        pytest.skip(_UNREPEATABLE_WIRE[stack])
    scenario = STACKS[stack].scenarios[0]
    with StackServer() as server:
        proc = drive(server, STACKS[stack], scenario, tmp_path / "out")
        wire = [w.as_json() for w in server.wire_of(stack, scenario)]
    assert proc.returncode == 0, proc.stderr[-3000:]
    committed = json.loads((FIXTURES / stack / scenario / "expected.json").read_text())
    assert expected_turns(scenario, wire) == committed

    # The batch processor's timing decides how many files a run writes, not their kinds.
    def kinds(folder: Path) -> set[str]:
        return {"".join(p.suffixes[-2:]) for p in folder.iterdir()
                if p.name.endswith((".pb", ".traces.json", ".logs.json"))}

    assert kinds(tmp_path / "out") == kinds(FIXTURES / stack / scenario)
