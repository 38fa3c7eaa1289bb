"""Attribute and event names of every convention turnscore decodes, in one place.

Sources: OTel GenAI semantic conventions (current and deprecated), OpenInference `spec/`,
OpenLLMetry `semconv_ai`, and the frameworks' own tracing code (CONVENTIONS.md).
Each decoder section below is owned by its decoder module; add names to the right section.
"""

from __future__ import annotations

from typing import Final

# --- OpenTelemetry resource / general ---------------------------------------------
SERVICE_NAME: Final = "service.name"
ERROR_TYPE: Final = "error.type"
EXCEPTION_EVENT: Final = "exception"
EXCEPTION_TYPE: Final = "exception.type"
EXCEPTION_MESSAGE: Final = "exception.message"
EVENT_NAME: Final = "event.name"
# A resource attribute by the OTel SDK, which OpenLIT also stamps on its own model-call
# spans as `openlit` (`common_span_attributes`), whoever made the tracer provider.
TELEMETRY_SDK_NAME: Final = "telemetry.sdk.name"
# OTel messaging conventions: a consumer's span links to the producer's; a broker's spans name
# their system (`decode._continues`).
MESSAGING_OPERATION: Final = "messaging.operation"
MESSAGING_OPERATION_TYPE: Final = "messaging.operation.type"
MESSAGING_SYSTEM: Final = "messaging.system"

# --- OTel GenAI semantic conventions (current) ------------------------------------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
GEN_AI_TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_PROMPT_TOKENS: Final = "gen_ai.usage.prompt_tokens"  # deprecated
GEN_AI_USAGE_COMPLETION_TOKENS: Final = "gen_ai.usage.completion_tokens"  # deprecated
GEN_AI_PROMPT: Final = "gen_ai.prompt"  # deprecated whole-prompt attribute, or flattened prefix
GEN_AI_PROMPT_NAME: Final = "gen_ai.prompt.name"  # the prompt template's name: no message
GEN_AI_COMPLETION: Final = "gen_ai.completion"  # deprecated, or flattened prefix
# Semantic Kernel 1.x (Python, before 1.19) counts usage under `gen_ai.response.*`.
GEN_AI_RESPONSE_PROMPT_TOKENS: Final = "gen_ai.response.prompt_tokens"
GEN_AI_RESPONSE_COMPLETION_TOKENS: Final = "gen_ai.response.completion_tokens"
# OpenLIT (1.34.22 to 1.36) lists a chat's requested calls on the span, each key's values
# joined by ", "; older versions put the repr of the calls in `gen_ai.response.tool_calls`.
GEN_AI_TOOL_ARGS: Final = "gen_ai.tool.args"
GEN_AI_RESPONSE_TOOL_CALLS: Final = "gen_ai.response.tool_calls"
# OpenLIT's own keys on every span its framework callbacks make (LangChain's
# `_set_common_attributes`): the application `openlit.init` was given.
OPENLIT_APPLICATION_NAME: Final = "gen_ai.application_name"
GEN_AI_AGENT_LIFECYCLE_PHASE: Final = "gen_ai.agent.lifecycle.phase"
"""OpenLIT's: the phase of an agent's run a span is (its Pydantic AI graph's nodes)."""
# OpenLIT's LangChain callback records a chain's inputs and outputs (the messages'
# reprs) on its invoke_agent / invoke_workflow spans (`on_chain_start` / `on_chain_end`).
OPENLIT_WORKFLOW_INPUT: Final = "gen_ai.workflow.input"
OPENLIT_WORKFLOW_OUTPUT: Final = "gen_ai.workflow.output"
# The workflow an `invoke_workflow` span runs (OpenLIT's LangGraph instrumentation: the
# compiled graph's name, its nodes' spans `invoke_agent <node>` below it).
GEN_AI_WORKFLOW_NAME: Final = "gen_ai.workflow.name"
# The provider OpenLIT's google-genai instrumentation names (`gen_ai.provider.name`).
OPENLIT_GEMINI: Final = "gemini"
# What OpenLIT before 1.3x records as a model call's completion whenever the request sent
# tools, whatever the model answered: a stand-in, never the model's text.
OPENLIT_TOOLS_COMPLETION: Final = "Function called with tools"
# The Google GenAI SDK's OTel instrumentation records a wrapped tool function's Python call
# on its execute_tool span: `code.function.parameters.<param>.type` / `.value` per argument,
# `code.function.return.type` / `.value` for what it returned.
CODE_FUNCTION_PARAMETERS: Final = "code.function.parameters"
CODE_FUNCTION_RETURN_VALUE: Final = "code.function.return.value"
CODE_FUNCTION_RETURN_TYPE: Final = "code.function.return.type"

OP_CHAT: Final = "chat"
OP_TEXT_COMPLETION: Final = "text_completion"
OP_GENERATE_CONTENT: Final = "generate_content"
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_INVOKE_WORKFLOW: Final = "invoke_workflow"
OP_CREATE_AGENT: Final = "create_agent"
OP_EXECUTE_TOOL: Final = "execute_tool"
OP_EMBEDDINGS: Final = "embeddings"
OP_RETRIEVAL: Final = "retrieval"
# Semantic Kernel's own operation names (Python 1.x before 1.19): model calls all.
OP_SK_CHAT: Final = "chat.completions"
OP_SK_CHAT_STREAMING: Final = "chat.streaming_completions"
OP_SK_TEXT: Final = "text.completions"
OP_SK_TEXT_STREAMING: Final = "text.streaming_completions"
# OpenLIT's (and OpenLLMetry's) agent task step, named `execute_task <agent>`.
OP_EXECUTE_TASK: Final = "execute_task"
# OpenLLMetry's own name for a model request (semconv_ai `GenAICustomOperationName`), set by
# its LangChain instrumentation from 0.53 to its move to `chat`.
OP_LLM_REQUEST: Final = "llm_request"

# Events (log records or span events)
EV_OPERATION_DETAILS: Final = "gen_ai.client.inference.operation.details"
EV_SYSTEM_MESSAGE: Final = "gen_ai.system.message"
EV_USER_MESSAGE: Final = "gen_ai.user.message"
EV_ASSISTANT_MESSAGE: Final = "gen_ai.assistant.message"
EV_TOOL_MESSAGE: Final = "gen_ai.tool.message"
EV_CHOICE: Final = "gen_ai.choice"
# Semconv 1.26/1.27 span events carrying the whole prompt / completion under the
# deprecated `gen_ai.prompt` / `gen_ai.completion` keys (OpenLIT, Semantic Kernel, Langtrace).
EV_CONTENT_PROMPT: Final = "gen_ai.content.prompt"
EV_CONTENT_COMPLETION: Final = "gen_ai.content.completion"
# The Azure AI Inference SDK's tracing (azure-ai-inference `tracing.py`) puts each older
# per-message event's whole body, as JSON text, under this one event attribute.
GEN_AI_EVENT_CONTENT: Final = "gen_ai.event.content"

# --- OpenInference ---------------------------------------------------------------
OI_SPAN_KIND: Final = "openinference.span.kind"
OI_INPUT_VALUE: Final = "input.value"
OI_OUTPUT_VALUE: Final = "output.value"
OI_INPUT_MESSAGES: Final = "llm.input_messages"
OI_OUTPUT_MESSAGES: Final = "llm.output_messages"
OI_TOOLS: Final = "llm.tools"
# The model call's keyword arguments as JSON; a LangChain chat model's `tools` ride in them
# (before `llm.tools`).
OI_INVOCATION_PARAMETERS: Final = "llm.invocation_parameters"
OI_MODEL_NAME: Final = "llm.model_name"
OI_TOKEN_PROMPT: Final = "llm.token_count.prompt"
OI_TOKEN_COMPLETION: Final = "llm.token_count.completion"
OI_TOOL_NAME: Final = "tool.name"
OI_TOOL_DESCRIPTION: Final = "tool.description"
OI_TOOL_PARAMETERS: Final = "tool.parameters"
OI_TOOL_ID: Final = "tool.id"
OI_TOOL_CALL_ID: Final = "tool_call.id"
OI_SESSION_ID: Final = "session.id"
OI_AGENT_NAME: Final = "agent.name"
OI_GRAPH_NODE_ID: Final = "graph.node.id"
OI_GRAPH_NODE_NAME: Final = "graph.node.name"
OI_INPUT_MIME_TYPE: Final = "input.mime_type"
OI_METADATA: Final = "metadata"
OI_FINISH_REASON: Final = "llm.finish_reason"
OI_PROMPTS: Final = "llm.prompts"
OI_PROMPT_TEMPLATE: Final = "llm.prompt_template"
OI_RETRIEVAL_DOCUMENTS: Final = "retrieval.documents"
OI_RERANKER_INPUT_DOCUMENTS: Final = "reranker.input_documents"
OI_RERANKER_OUTPUT_DOCUMENTS: Final = "reranker.output_documents"
OI_RERANKER_QUERY: Final = "reranker.query"
OI_EMBEDDING_EMBEDDINGS: Final = "embedding.embeddings"
# openinference-instrumentation-crewai `_wrappers.py` (`_CrewKickoffWrapper`): a crew
# kickoff's inputs (the values its task descriptions interpolate), tasks and agents as JSON.
OI_CREW_INPUTS: Final = "crew_inputs"
OI_CREW_TASKS: Final = "crew_tasks"
OI_CREW_AGENTS: Final = "crew_agents"
# openinference-instrumentation-smolagents `_wrappers.py` (`_smolagent_run_attributes`): set
# on every agent run span, which is named `{agent.name or class name}.run` (`_RunWrapper`).
OI_SMOLAGENTS_MAX_STEPS: Final = "smolagents.max_steps"
OI_SMOLAGENTS_RUN_SUFFIX: Final = ".run"
# openinference-instrumentation-smolagents `_wrappers.py` (`_smolagents_attributes`): an
# agent's managed agents, each `.N.{name, description, additional_prompting,
# managed_agent_prompt, max_steps, tools_names}`: the agents it may call as tools.
OI_SMOLAGENTS_MANAGED_AGENTS: Final = "smolagents.managed_agents"
# openinference-instrumentation-ag2 `_wrappers.py` (the `initiate_chat` wrapper): a chat's
# AGENT span names its sender in `agent.name` and the agent it asks in this key.
OI_AG2_RECIPIENT_NAME: Final = "ag2.recipient.name"

# --- OpenLLMetry (Traceloop) -------------------------------------------------------
TL_SPAN_KIND: Final = "traceloop.span.kind"
TL_ENTITY_NAME: Final = "traceloop.entity.name"
TL_ENTITY_INPUT: Final = "traceloop.entity.input"
TL_ENTITY_OUTPUT: Final = "traceloop.entity.output"
TL_MCP_LIST_TOOLS: Final = "tools/list"
"""The MCP method whose request OpenLLMetry's MCP instrumentation records as a span's
entity input (`{"method": "tools/list", ...}`), its result (the server's tools) as output."""
TL_ASSOCIATION_PREFIX: Final = "traceloop.association.properties."
TL_REQUEST_TYPE: Final = "llm.request.type"
TL_REQUEST_FUNCTIONS: Final = "llm.request.functions"
TL_TASK_INPUT: Final = "gen_ai.task.input"  # newer OpenLLMetry workflow/task spans
TL_TASK_OUTPUT: Final = "gen_ai.task.output"
CREWAI_CREW_RESULT: Final = "crewai.crew.result"  # OpenLLMetry's CrewAI instrumentation
CREWAI_CREW_TASKS_OUTPUT: Final = "crewai.crew.tasks_output"
CREWAI_CREW_TASKS: Final = "crewai.crew.tasks"
CREWAI_TASK_DESCRIPTION: Final = "crewai.task.description"
CREWAI_TASK_EXPECTED_OUTPUT: Final = "crewai.task.expected_output"
CREWAI_AGENT_GOAL: Final = "crewai.agent.goal"
CREWAI_AGENT_BACKSTORY: Final = "crewai.agent.backstory"
# OpenLLMetry's LlamaIndex instrumentation (traceloop/openllmetry
# `opentelemetry-instrumentation-llamaindex/.../dispatcher_wrapper.py`, `new_span`): a
# workflow agent's `call_tool` step, a `task` span, names the tool and its arguments (JSON).
TL_TOOL_NAME: Final = "tool.name"  # the same key as OpenInference's
TL_TOOL_ARGUMENTS: Final = "tool.arguments"
# OpenLLMetry's CrewAI instrumentation: each agent's goal, backstory and tools, and the tools
# of an agent and of a task (`crewai_span_attributes.py`).
CREWAI_CREW_AGENTS: Final = "crewai.crew.agents"
CREWAI_AGENT_TOOLS: Final = "crewai.agent.tools"
CREWAI_TASK_TOOLS: Final = "crewai.task.tools"
# OpenLLMetry's Haystack instrumentation names a generator component's span
# `haystack.openai.chat` / `.completion` (semconv_ai `SpanAttributes.HAYSTACK_OPENAI_*`).
TL_HAYSTACK_GENERATOR_SPAN: Final = "haystack.openai."
# OpenLLMetry's span of a Responses API call (opentelemetry-instrumentation-openai
# `v1/responses_wrappers.py`, and its OpenAI Agents SDK bridge's `openai.response`); the
# OpenAI instrumentation's own carries the request attributes of its shared wrapper
# (`shared/__init__.py`, `_set_request_attributes`: `gen_ai.is_streaming`), the bridge's not.
TL_RESPONSES_SPAN: Final = "openai.response"
TL_IS_STREAMING: Final = "gen_ai.is_streaming"
# OpenLLMetry's Cohere instrumentation names its system (`gen_ai.system`) `Cohere`.
TL_SYSTEM: Final = "gen_ai.system"
TL_COHERE_SYSTEM: Final = "Cohere"
TL_LANGCHAIN_SYSTEM: Final = "Langchain"  # the LangChain instrumentation's model-call spans
# AgentOps' fork of OpenLLMetry's OpenAI instrumentation keeps its flattened prompts and
# completions but names the request's tools `gen_ai.request.functions.N.*` (agentops
# `semconv/span_attributes.py`, `LLM_REQUEST_FUNCTIONS`).
AGENTOPS_REQUEST_FUNCTIONS: Final = "gen_ai.request.functions"
# OpenLLMetry's Agno instrumentation (opentelemetry-instrumentation-agno `__init__.py`): a
# Team's run is a `workflow` span `{team}.team`, the team named in this key.
TL_AGNO_TEAM_NAME: Final = "agno.team.name"

# --- Frameworks ------------------------------------------------------------------
PYDANTIC_AI_ALL_MESSAGES: Final = "pydantic_ai.all_messages"
PYDANTIC_AI_FINAL_RESULT: Final = "final_result"
PYDANTIC_AI_MODEL_REQUEST_PARAMETERS: Final = "model_request_parameters"
GEN_AI_AGGREGATED_INPUT_TOKENS: Final = "gen_ai.aggregated_usage.input_tokens"
PYDANTIC_AI_TOOL_ARGUMENTS: Final = "tool_arguments"  # before data-format version 2
PYDANTIC_AI_TOOL_RESPONSE: Final = "tool_response"  # before data-format version 2
# Pydantic AI 0.x (InstrumentationSettings' default `event_mode='attributes'`): the older
# per-message OTel events, each `{**body, **attributes}` with its `event.name`, as one JSON
# array on each chat span, and the run's whole conversation so on its agent-run span.
PYDANTIC_AI_EVENTS: Final = "events"
PYDANTIC_AI_ALL_MESSAGES_EVENTS: Final = "all_messages_events"
PYDANTIC_AI_AGENT_NAME: Final = "agent_name"  # 0.x agent-run spans, before gen_ai.agent.name
LOGFIRE_JSON_SCHEMA: Final = "logfire.json_schema"
# Logfire's LLM-provider instrumentations (`logfire.instrument_openai()`, `_anthropic()`):
# pydantic/logfire `logfire/_internal/integrations/llm_providers/{openai,anthropic}.py`.
LOGFIRE_MSG_TEMPLATE: Final = "logfire.msg_template"
LOGFIRE_SPAN_TYPE: Final = "logfire.span_type"
LOGFIRE_REQUEST_DATA: Final = "request_data"  # the request body as sent (v1 semconv form)
LOGFIRE_RESPONSE_DATA: Final = "response_data"  # {message, usage} or streamed text
LOGFIRE_EVENTS: Final = "events"  # Responses API: input and output items as message dicts
LOGFIRE_STREAM_LOG: Final = "streaming response from "  # the name every stream's answer has
LOGFIRE_ANTHROPIC_SPAN: Final = "Message with "  # Anthropic's span name (its message template)
PYDANTIC_AI_MODEL_NAME: Final = "model_name"  # on agent-run spans
# Logfire's OpenAI Agents SDK spans (`logfire.instrument_openai_agents()`): the SDK's span
# data as attributes, pydantic/logfire `logfire/_internal/integrations/openai_agents.py`.
LOGFIRE_AGENTS_SDK_SPAN_TYPE: Final = "sdk_span_type"  # task and turn spans (0.14+)
LOGFIRE_AGENTS_NAME: Final = "name"  # the agent's, the function's, the guardrail's
LOGFIRE_AGENTS_AGENT_NAME: Final = "agent_name"  # turn spans
LOGFIRE_AGENTS_TOOLS: Final = "tools"  # agent spans: the tool names
LOGFIRE_AGENTS_GROUP_ID: Final = "group_id"  # trace spans: the run's group (conversation)
LOGFIRE_AGENTS_ERROR: Final = "error"  # the SDK's span error {message, data}
LOGFIRE_AGENTS_INPUT: Final = "input"  # function arguments (JSON text); generation messages
LOGFIRE_AGENTS_OUTPUT: Final = "output"  # function result; generation output messages
LOGFIRE_AGENTS_RAW_INPUT: Final = "raw_input"  # Responses API input items as sent
LOGFIRE_AGENTS_RESPONSE: Final = "response"  # the Responses API `Response`, dumped whole
STRANDS_TOOL_JSON_SCHEMA: Final = "gen_ai.tool.json_schema"
MLFLOW_SPAN_TYPE: Final = "mlflow.spanType"
MLFLOW_SPAN_INPUTS: Final = "mlflow.spanInputs"
MLFLOW_SPAN_OUTPUTS: Final = "mlflow.spanOutputs"
MLFLOW_CHAT_TOOLS: Final = "mlflow.chat.tools"
MLFLOW_TOKEN_USAGE: Final = "mlflow.chat.tokenUsage"
ADK_LLM_REQUEST: Final = "gcp.vertex.agent.llm_request"
ADK_LLM_RESPONSE: Final = "gcp.vertex.agent.llm_response"
ADK_TOOL_CALL_ARGS: Final = "gcp.vertex.agent.tool_call_args"
ADK_TOOL_RESPONSE: Final = "gcp.vertex.agent.tool_response"
ADK_SESSION_ID: Final = "gcp.vertex.agent.session_id"
PYDANTIC_AI_AGGREGATED_OUTPUT_TOKENS: Final = "gen_ai.aggregated_usage.output_tokens"
STRANDS_AGENT_TOOLS: Final = "gen_ai.agent.tools"
# Strands before `gen_ai.system_instructions` (1.0 to 1.x): the agent's system prompt as a
# plain attribute of its invoke_agent span (`Tracer.start_agent_span(**kwargs)`).
STRANDS_SYSTEM_PROMPT: Final = "system_prompt"
STRANDS_TOOL_STATUS: Final = "gen_ai.tool.status"
MLFLOW_CHAT_MESSAGES: Final = "mlflow.chat.messages"
MLFLOW_CHUNK_EVENT_PREFIX: Final = "mlflow.chunk.item."  # span event per streamed chunk, N after
MLFLOW_CHUNK_VALUE: Final = "mlflow.chunk.value"  # the chunk, JSON, on that event
MLFLOW_INVOCATION_PARAMS: Final = "invocation_params"  # LangChain chat model kwargs, tools too
MLFLOW_LANGCHAIN_METADATA: Final = "metadata"  # LangChain run metadata, the thread id too
# mlflow `openai/_agent_tracer.py` (`_parse_span_data`): an Agents SDK agent span's fields.
MLFLOW_AGENT_HANDOFFS: Final = "handoffs"
MLFLOW_AGENT_OUTPUT_TYPE: Final = "output_type"
# mlflow `dspy/callback.py` (`on_tool_start`): a DSPy tool span's tool (span `Tool.<name>`).
MLFLOW_DSPY_TOOL_NAME: Final = "name"

# --- Vercel AI SDK (`ai.*`, experimental_telemetry) ---------------------------------
VERCEL_OPERATION_ID: Final = "ai.operationId"
VERCEL_MODEL_ID: Final = "ai.model.id"
VERCEL_RESPONSE_MODEL: Final = "ai.response.model"
VERCEL_PROMPT: Final = "ai.prompt"
VERCEL_PROMPT_MESSAGES: Final = "ai.prompt.messages"
VERCEL_PROMPT_TOOLS: Final = "ai.prompt.tools"
VERCEL_RESPONSE_TEXT: Final = "ai.response.text"
VERCEL_RESPONSE_TOOL_CALLS: Final = "ai.response.toolCalls"
VERCEL_RESPONSE_OBJECT: Final = "ai.response.object"  # generateObject
VERCEL_RESPONSE_REASONING: Final = "ai.response.reasoning"
VERCEL_VALUE: Final = "ai.value"  # embed
VERCEL_VALUES: Final = "ai.values"  # embedMany
VERCEL_RESPONSE_FINISH_REASON: Final = "ai.response.finishReason"
VERCEL_TOOL_CALL_NAME: Final = "ai.toolCall.name"
VERCEL_TOOL_CALL_ID: Final = "ai.toolCall.id"
VERCEL_TOOL_CALL_ARGS: Final = "ai.toolCall.args"  # v4
VERCEL_TOOL_CALL_INPUT: Final = "ai.toolCall.input"  # v5
VERCEL_TOOL_CALL_RESULT: Final = "ai.toolCall.result"  # v4
VERCEL_TOOL_CALL_OUTPUT: Final = "ai.toolCall.output"  # v5
VERCEL_USAGE_PROMPT_TOKENS: Final = "ai.usage.promptTokens"  # v4
VERCEL_USAGE_COMPLETION_TOKENS: Final = "ai.usage.completionTokens"  # v4
VERCEL_USAGE_INPUT_TOKENS: Final = "ai.usage.inputTokens"  # v5
VERCEL_USAGE_OUTPUT_TOKENS: Final = "ai.usage.outputTokens"  # v5
VERCEL_METADATA_PREFIX: Final = "ai.telemetry.metadata."
VERCEL_FUNCTION_ID: Final = "ai.telemetry.functionId"

# --- Surveyed stacks: Langfuse, Haystack, LangSmith (conventions/<name>.py) -----------
# Langfuse Python SDK v3 to v5, langfuse-python `langfuse/_client/attributes.py`.
LF_OBSERVATION_TYPE: Final = "langfuse.observation.type"
LF_OBSERVATION_INPUT: Final = "langfuse.observation.input"
LF_OBSERVATION_OUTPUT: Final = "langfuse.observation.output"
LF_OBSERVATION_MODEL: Final = "langfuse.observation.model.name"
LF_OBSERVATION_USAGE_DETAILS: Final = "langfuse.observation.usage_details"
LF_OBSERVATION_LEVEL: Final = "langfuse.observation.level"
LF_OBSERVATION_STATUS_MESSAGE: Final = "langfuse.observation.status_message"
LF_TRACE_INPUT: Final = "langfuse.trace.input"
LF_TRACE_OUTPUT: Final = "langfuse.trace.output"
LF_EXPERIMENT_ITEM_EXPECTED_OUTPUT: Final = "langfuse.experiment.item.expected_output"
LF_SESSION_ID_COMPAT: Final = "langfuse.session.id"  # before `session.id` (Langfuse OTel docs)
LF_OBSERVATION_METADATA_PREFIX: Final = "langfuse.observation.metadata."  # JSON values

# Haystack tracing tags (ingest/conventions/haystack.py), deepset-ai/haystack
# `haystack/core/pipeline/base.py`, `haystack/components/agents/agent.py`.
HS_COMPONENT_INPUT: Final = "haystack.component.input"
HS_COMPONENT_OUTPUT: Final = "haystack.component.output"
HS_PIPELINE_INPUT: Final = "haystack.pipeline.input_data"
HS_PIPELINE_OUTPUT: Final = "haystack.pipeline.output_data"
HS_AGENT_INPUT: Final = "haystack.agent.input"
HS_AGENT_OUTPUT: Final = "haystack.agent.output"
HS_AGENT_MAX_STEPS: Final = "haystack.agent.max_steps"
HS_STEP_LLM_INPUT: Final = "haystack.agent.step.llm.input"
HS_STEP_LLM_OUTPUT: Final = "haystack.agent.step.llm.output"
HS_STEP_TOOL_INPUT: Final = "haystack.agent.step.tool.input"
HS_STEP_TOOL_OUTPUT: Final = "haystack.agent.step.tool.output"
HS_TOOL_NAME: Final = "haystack.tool.name"
HS_TOOL_DESCRIPTION: Final = "haystack.tool.description"

# LangSmith's OTel export (ingest/conventions/langsmith.py), langchain-ai/langsmith-sdk
# `python/langsmith/_internal/otel/_otel_exporter.py`.
LS_SPAN_KIND: Final = "langsmith.span.kind"  # the run type
LS_TRACE_NAME: Final = "langsmith.trace.name"  # the run's name
LS_METADATA_PREFIX: Final = "langsmith.metadata."
# Keys of a LangChain run's metadata (under LS_ / LF_ metadata prefixes): LangGraph's
# (langchain-ai/langgraph `pregel/main.py`: `ls_integration`, a task's `langgraph_node`) and
# langchain's `create_agent` (`lc_agent_name`, on the agent's runs and those under them).
LC_META_INTEGRATION: Final = "ls_integration"
LC_META_LANGGRAPH_NODE: Final = "langgraph_node"
LC_META_AGENT_NAME: Final = "lc_agent_name"
LANGGRAPH_INTEGRATION: Final = "langgraph"
LANGGRAPH_DEFAULT_NAME: Final = "LangGraph"  # an unnamed graph's (`Pregel.name`)

# --- Surveyed stacks, second round: Mastra (conventions/mastra.py) ---------------------
# Mastra's OTel exporter (mastra-ai/mastra `observability/otel-exporter/src/gen-ai-semantics.ts`,
# and before it `span-converter.ts`, the 0.x AI-tracing exporter).
MASTRA_SPAN_TYPE: Final = "mastra.span.type"  # agent_run, model_generation, tool_call, ...
MASTRA_TOOL_INPUT: Final = "gen_ai.tool.input"  # 0.x: a tool call's arguments (JSON text)
MASTRA_TOOL_OUTPUT: Final = "gen_ai.tool.output"  # 0.x: what the tool returned (JSON text)
MASTRA_TOOL_SUCCESS: Final = "gen_ai.tool.success"  # 0.x
MASTRA_AGENT_ID: Final = "agent.id"  # 0.x: the agent run's id (its name in the registry)
MASTRA_AVAILABLE_TOOLS: Final = "agent.available_tools"  # 0.x: JSON list of tool names
MASTRA_INPUT: Final = "input"  # 0.x: every span's input, JSON text ("for Laminar")
MASTRA_OUTPUT: Final = "output"  # 0.x: every span's output
MASTRA_ERROR_MESSAGE: Final = "error.message"
MASTRA_PREFIX: Final = "mastra."
MASTRA_AGENT_RUN_INPUT: Final = "mastra.agent_run.input"  # 1.x: what the app passed the run

# Genkit's own tracing (conventions/genkit.py), firebase/genkit `js/core/src/tracing/
# instrumentation.ts` (`runInNewSpan`) and `js/core/src/action.ts`: every action a span.
GENKIT_TYPE: Final = "genkit:type"  # action, util, flowStep, ...
GENKIT_SUBTYPE: Final = "genkit:metadata:subtype"  # model, tool, flow, prompt, ...
GENKIT_NAME: Final = "genkit:name"
GENKIT_INPUT: Final = "genkit:input"  # the action's input, JSON text
GENKIT_OUTPUT: Final = "genkit:output"  # the action's output, JSON text
GENKIT_STATE: Final = "genkit:state"  # success or error

# LlamaIndex's own OTel integration (conventions/llamaindex.py), run-llama/llama_index
# `llama-index-integrations/observability/llama-index-observability-otel/.../base.py`:
# each instrumentation event is a span event named by its class, its `model_dump()`
# flattened with dots (lists of objects as JSON text).
LI_EV_CHAT_START: Final = "LLMChatStartEvent"
LI_EV_CHAT_END: Final = "LLMChatEndEvent"
LI_EV_COMPLETION_START: Final = "LLMCompletionStartEvent"
LI_EV_COMPLETION_END: Final = "LLMCompletionEndEvent"
LI_MESSAGES: Final = "messages"  # chat events: the request, JSON list of ChatMessage dumps
LI_PROMPT: Final = "prompt"  # completion events
LI_RESPONSE_ROLE: Final = "response.message.role"
LI_RESPONSE_BLOCKS: Final = "response.message.blocks"  # JSON list of content blocks
LI_RESPONSE_CONTENT: Final = "response.message.content"  # before content blocks (< 0.12)
LI_RESPONSE_TOOL_CALLS: Final = "response.message.additional_kwargs.tool_calls"
LI_RESPONSE_TEXT: Final = "response.text"  # completion end
LI_TOOLS: Final = "additional_kwargs.tools"  # chat start: the provider's tool payload, JSON
LI_MODEL_KEYS: Final = ("model_dict.model", "model_dict.model_name")
LI_INPUT_TOKEN_KEYS: Final = (
    "response.additional_kwargs.prompt_tokens", "response.raw.usage.prompt_tokens",
    "response.raw.usage.input_tokens",
)
LI_OUTPUT_TOKEN_KEYS: Final = (
    "response.additional_kwargs.completion_tokens", "response.raw.usage.completion_tokens",
    "response.raw.usage.output_tokens",
)
LI_STEP_INPUT_SUMMARY: Final = "llamaindex.step.input_summary"  # a step's input, Python repr
# The step's input event class, a dispatcher tag every span inside the step carries
# (llama-index-workflows `runtime/types/step_function.py`): `ToolCall` inside a tool's step.
LI_STEP_INPUT_EVENT: Final = "llamaindex.step.input_event"
LI_TOOL_CALL_EVENT: Final = "ToolCall"
LI_TOOL_METHODS: Final = ("call", "acall")  # BaseTool's dispatcher spans: `FunctionTool.acall`
# A workflow run's end (`WorkflowRunOutputEvent`, class name `workflow.output`), on the run's
# span: its `output` a summary of the StopEvent (`workflows/_event_summary.py`, cut at 200
# characters, a string field at 50).
LI_EV_WORKFLOW_OUTPUT: Final = "workflow.output"
LI_OUTPUT: Final = "output"
# llama-index-core `agent/workflow/workflow_events.py`: the agent workflow's events
# (`AgentInput`, `AgentSetup`, `AgentOutput`, `AgentStream`) name the agent that runs;
# `base_agent.py`: an agent given no name is `DEFAULT_AGENT_NAME`.
LI_CURRENT_AGENT_NAME: Final = "current_agent_name"
LI_DEFAULT_AGENT_NAME: Final = "Agent"

# --- Surveyed JVM stacks: Spring AI (conventions/spring_ai.py) ------------------------
# Spring AI's Micrometer observations through Micrometer Tracing's OTel bridge, each key
# value a string attribute (spring-projects/spring-ai `spring-ai-model/.../tool/observation/
# ToolCallingObservationDocumentation.java`, `spring-ai-client-chat/.../chat/client/
# observation/ChatClientObservationDocumentation.java`).
SPRING_AI_KIND: Final = "spring.ai.kind"  # chat_client, advisor, tool_call, vector_store
SPRING_AI_TOOL_NAME: Final = "spring.ai.tool.definition.name"
SPRING_AI_TOOL_DESCRIPTION: Final = "spring.ai.tool.definition.description"
SPRING_AI_TOOL_SCHEMA: Final = "spring.ai.tool.definition.schema"  # JSON Schema text
SPRING_AI_TOOL_ARGUMENTS: Final = "spring.ai.tool.call.arguments"  # the model's JSON text
SPRING_AI_TOOL_RESULT: Final = "spring.ai.tool.call.result"  # as sent back to the model
SPRING_AI_CONVERSATION_ID: Final = "spring.ai.chat.client.conversation.id"

# AgentOps' own span kinds (conventions/agentops.py), AgentOps-AI/agentops 0.4.21
# `agentops/semconv/` (`span_attributes.py`, `span_kinds.py`, `tool.py`, `workflow.py`,
# `core.py`): its Agents SDK processor's spans and its SDK's decorated functions.
AGENTOPS_SPAN_KIND: Final = "agentops.span.kind"  # session, agent, tool, llm, workflow, ...
AGENTOPS_AGENT_NAME: Final = "agent.name"
AGENTOPS_AGENT_TOOLS: Final = "agent.tools"  # JSON list of the agent's tool names
AGENTOPS_AGENT_ROLE: Final = "agent.role"  # a CrewAI agent's role, its name there
CREWAI_TASK_AGENT: Final = "crewai.task.agent"  # the role of the agent that ran the task
AGENTOPS_TOOL_NAME: Final = "tool.name"
AGENTOPS_TOOL_PARAMETERS: Final = "tool.parameters"  # the call's arguments, JSON text
AGENTOPS_TOOL_RESULT: Final = "tool.result"
AGENTOPS_TOOL_STATUS: Final = "tool.status"  # succeeded, failed
AGENTOPS_ERROR_MESSAGE: Final = "error.message"
AGENTOPS_OPERATION_NAME: Final = "operation.name"  # a decorated function's name
AGENTOPS_WORKFLOW_INPUT: Final = "workflow.input"
AGENTOPS_WORKFLOW_OUTPUT: Final = "workflow.output"
AGENTOPS_WORKFLOW_FINAL_OUTPUT: Final = "workflow.final_output"
AGENTOPS_ENTITY_INPUT: Final = "agentops.entity.input"
AGENTOPS_ENTITY_OUTPUT: Final = "agentops.entity.output"
AGENTOPS_PREFIX: Final = "agentops."  # a decorated function's `agentops.<kind>.input`

# Langtrace's own instrumentations (conventions/langtrace.py), Scale3-Labs/langtrace-python-sdk
# `src/langtrace_python_sdk/utils/llm.py` and `instrumentation/*/patch.py`: every span names
# the SDK and what it instrumented (`llm`, `framework`, `vectordb`); a model call keeps its
# prompt and completion in the semconv 1.26 span events (`EV_CONTENT_PROMPT` above) and its
# request's tools, each JSON text, in a JSON list.
LT_SDK_NAME: Final = "langtrace.sdk.name"
LT_SERVICE_TYPE: Final = "langtrace.service.type"
LT_SERVICE_LLM: Final = "llm"
LT_REQUEST_TOOLS: Final = "gen_ai.request.tools"
LT_REQUEST_STREAM: Final = "gen_ai.request.stream"
# Its LangChain-core and LangGraph instrumentations: a wrapped method's arguments, result
# and run metadata (the tools bound to a chat model among them), each JSON text.
LT_LANGCHAIN_INPUTS: Final = "langchain.inputs"
LT_LANGCHAIN_OUTPUTS: Final = "langchain.outputs"
LT_LANGCHAIN_METADATA: Final = "langchain.metadata"
LT_LANGGRAPH_NODE: Final = "langgraph.node"
LT_LANGCHAIN_TASK: Final = "langchain.task.name"
LT_TASK_CHAT_MODEL: Final = "chatmodel"

# Laminar's SDK (conventions/laminar.py), lmnr-ai/lmnr-python `src/lmnr/opentelemetry_lib/`:
# its span processor stamps every span with `lmnr.span.*` (type `LLM`, `TOOL`, `DEFAULT`;
# path), and its LangChain/LangGraph and `observe` spans carry their input and output as
# JSON text.
LMNR_SPAN_TYPE: Final = "lmnr.span.type"
LMNR_SPAN_INPUT: Final = "lmnr.span.input"
LMNR_SPAN_OUTPUT: Final = "lmnr.span.output"

# Claude Code's own telemetry (conventions/claude_code.py): the CLI's spans name their
# `span.type` (`interaction`, `llm_request`, `tool`, ...), an interaction its prompt, a tool
# the name the model called it by and its call id; its log records are named by `event.name`,
# a tool span's result is its `tool.output` event.
CC_SPAN_TYPE: Final = "span.type"
CC_USER_PROMPT: Final = "user_prompt"
CC_TOOL_NAME: Final = "tool_name"
CC_TOOL_USE_ID: Final = "tool_use_id"
CC_EV_USER_PROMPT: Final = "user_prompt"
CC_EV_ASSISTANT_RESPONSE: Final = "assistant_response"
CC_EV_API_REQUEST_BODY: Final = "api_request_body"
CC_EV_API_RESPONSE_BODY: Final = "api_response_body"
CC_EV_TOOL_RESULT: Final = "tool_result"
CC_TOOL_INPUT: Final = "tool_input"
CC_TOOL_PARAMETERS: Final = "tool_parameters"
CC_EV_TOOL_OUTPUT: Final = "tool.output"
CC_SUCCESS: Final = "success"
CC_ERROR: Final = "error"
CC_PROMPT_ID: Final = "prompt.id"
CC_EV_API_REQUEST: Final = "api_request"
CC_EV_API_ERROR: Final = "api_error"
CC_EV_TOOL_DECISION: Final = "tool_decision"
CC_MODEL: Final = "model"
CC_INPUT_TOKENS: Final = "input_tokens"
CC_OUTPUT_TOKENS: Final = "output_tokens"
CC_DURATION_MS: Final = "duration_ms"
CC_EVENT_SEQUENCE: Final = "event.sequence"

# Codex CLI's own telemetry (conventions/codex_cli.py), openai/codex `codex-rs/otel`: its
# log records name their event in `event.name` (`codex.user_prompt`, `codex.tool_result`,
# ...) and carry the thread as `conversation.id`; a `tool_result` its call's id, tool,
# arguments, output and `success`; the span that read a response's completion its usage
# (`gen_ai.usage.*` beside Codex's own `codex.usage.total_tokens`).
CODEX_EV_USER_PROMPT: Final = "codex.user_prompt"
CODEX_EV_TOOL_RESULT: Final = "codex.tool_result"
CODEX_CONVERSATION_ID: Final = "conversation.id"
CODEX_PROMPT: Final = "prompt"
CODEX_TOOL_NAME: Final = "tool_name"
CODEX_CALL_ID: Final = "call_id"
CODEX_ARGUMENTS: Final = "arguments"
CODEX_OUTPUT: Final = "output"
CODEX_SUCCESS: Final = "success"
CODEX_USAGE_TOTAL: Final = "codex.usage.total_tokens"
CODEX_MODEL: Final = "model"

# Pipecat's own tracing (conventions/pipecat.py), pipecat-ai/pipecat
# `src/pipecat/utils/tracing/` (`service_attributes.add_llm_span_attributes`,
# `turn_trace_observer.py`): an `llm` span per model call with the request's messages as
# OpenAI JSON (`input`), the streamed text (`output`), the tools (`tools`, OpenAI-nested
# JSON, `tool_count` beside), `stream`; a `turn` span per turn and one `conversation` span,
# each naming the conversation.
PIPECAT_LLM_SPAN: Final = "llm"
PIPECAT_TURN_SPAN: Final = "turn"
PIPECAT_CONVERSATION_SPAN: Final = "conversation"
PIPECAT_INPUT: Final = "input"
PIPECAT_OUTPUT: Final = "output"
PIPECAT_TOOLS: Final = "tools"
PIPECAT_TOOL_COUNT: Final = "tool_count"
PIPECAT_STREAM: Final = "stream"
PIPECAT_TURN_NUMBER: Final = "turn.number"
PIPECAT_CONVERSATION_TYPE: Final = "conversation.type"
PIPECAT_CONVERSATION_ID: Final = "conversation.id"

# LangWatch's Python SDK (conventions/langwatch.py), langwatch/langwatch `python-sdk/src/
# langwatch/attributes.py` (`AttributeKey`), `telemetry/span.py` (`LangWatchSpan.update`),
# `telemetry/tracing.py`, `openai.py`: every span of its decorators and autotracking has a
# kind and typed values (`{"type": "chat_messages" | "text" | "json" | "list" | "raw",
# "value": ...}`, JSON text); a trace's root span carries the trace's metadata as JSON.
LANGWATCH_SPAN_TYPE: Final = "langwatch.span.type"  # llm, tool, agent, chain, span, ...
LANGWATCH_INPUT: Final = "langwatch.input"
LANGWATCH_OUTPUT: Final = "langwatch.output"
LANGWATCH_PARAMS: Final = "langwatch.params"  # the request's parameters, `tools` among them
LANGWATCH_THREAD_ID: Final = "langwatch.thread.id"
LANGWATCH_METADATA: Final = "metadata"  # the trace's metadata on its root span, JSON text
LANGWATCH_RAG_CONTEXTS: Final = "langwatch.rag_contexts"

# Judgment Labs' tracer (conventions/judgeval.py), JudgmentLabs/judgeval
# `src/judgeval/judgment_attribute_keys.py` (`AttributeKeys`): a span's kind, an observed
# function's arguments and return value (JSON text), the session, an agent's class and
# instance; a wrapped client's call with the request's keyword arguments and the response
# as JSON under the deprecated `gen_ai.prompt` / `gen_ai.completion`, its usage as
# non-cached input, cache-read input and output tokens; each emission of a live span
# numbered (`judgment.update_id`).
JUDGMENT_SPAN_KIND: Final = "judgment.span_kind"  # llm, tool, agent, span, ...
JUDGMENT_INPUT: Final = "judgment.input"
JUDGMENT_OUTPUT: Final = "judgment.output"
JUDGMENT_SESSION_ID: Final = "judgment.session_id"
JUDGMENT_AGENT_INSTANCE_NAME: Final = "judgment.agent_instance_name"
JUDGMENT_AGENT_CLASS_NAME: Final = "judgment.agent_class_name"
JUDGMENT_LLM_MODEL: Final = "judgment.llm.model"
JUDGMENT_NON_CACHED_INPUT_TOKENS: Final = "judgment.usage.non_cached_input_tokens"
JUDGMENT_CACHE_READ_INPUT_TOKENS: Final = "judgment.usage.cache_read_input_tokens"
JUDGMENT_OUTPUT_TOKENS: Final = "judgment.usage.output_tokens"
JUDGMENT_UPDATE_ID: Final = "judgment.update_id"
# VoltAgent's own observability (`@voltagent/core`): `turnscore.ingest.conventions.voltagent`.
VA_ENTITY_TYPE: Final = "entity.type"
VA_ENTITY_NAME: Final = "entity.name"
VA_OPERATION_ID: Final = "operation.id"
VA_SPAN_TYPE: Final = "span.type"
VA_CONVERSATION_ID: Final = "conversation.id"
VA_INPUT: Final = "input"
VA_OUTPUT: Final = "output"
VA_INSTRUCTIONS: Final = "agent.instructions"
VA_STATE_SNAPSHOT: Final = "agent.stateSnapshot"
VA_AGENT_MESSAGES: Final = "agent.messages"
VA_AGENT_MESSAGES_UI: Final = "agent.messages.ui"
VA_MODEL_NAME: Final = "ai.model.name"
VA_USAGE_PROMPT_TOKENS: Final = "usage.prompt_tokens"
VA_USAGE_COMPLETION_TOKENS: Final = "usage.completion_tokens"
VA_LLM_MESSAGES: Final = "llm.messages"
VA_LLM_MODEL: Final = "llm.model"
VA_TOOL_NAME: Final = "tool.name"
VA_TOOL_CALL_ID: Final = "tool.call.id"
VA_ERROR_MESSAGE: Final = "error.message"
