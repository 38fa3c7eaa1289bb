"""Convention decoders: one module per convention family, one shared reader of shapes.

- `otel_genai`: OTel GenAI semantic conventions (current attributes, operation-details
  events, older per-message events, deprecated whole-prompt attributes, execute_tool).
- `openinference`: Arize OpenInference (flattened `llm.*`, TOOL spans, raw values).
- `openllmetry`: Traceloop OpenLLMetry (legacy flattened prompts, entity input/output).
- `frameworks`: Pydantic AI, Strands, MLflow and Google ADK specifics.
- `logfire`: Pydantic Logfire's LLM-provider spans and its OpenAI Agents SDK bridge.
- `vercel`: Vercel AI SDK telemetry (`ai.*`).
- `langfuse`: the Langfuse Python SDK v3/v4 (`langfuse.observation.*`).
- `haystack`: Haystack's own tracing (`haystack.component.*`, `haystack.agent.*`).
- `langsmith`: LangSmith's OTel export of LangChain runs (`langsmith.*`, `gen_ai.prompt`).
- `mastra`: Mastra's OTel exporter (`mastra.span.type`; the 0.x exporter's tool keys).
- `voltagent`: VoltAgent's own observability (`entity.type`, `span.type`: agent, llm, tool).
- `genkit`: Genkit's own tracing (`genkit:*`: each action a span, its input and output).
- `llamaindex`: LlamaIndex's own OTel integration (instrumentation events as span events).
- `agentops`: AgentOps' own span kinds (`agentops.span.kind`: its framework bridges, its SDK).
- `dspy`: DSPy's adapter-rendered prompts (`[[ ## field ## ]]`) under OpenInference or MLflow.
- `spring_ai`: Spring AI's own observations (Java; `spring.ai.kind`: tool calls, ChatClient).
- `langtrace`: Langtrace's own instrumentations (`langtrace.*`: its prompt's call lists, tools).
- `laminar`: Laminar's SDK (`lmnr.span.*`: output messages as the response's choices).
- `langwatch`: LangWatch's SDK (`langwatch.*`: typed input and output values, span types).
- `judgeval`: Judgment Labs' tracer (`judgment.*`: span kinds, usage, the request's tools).
- `pipecat`: Pipecat's own tracing (its `llm` spans' `input`, `output`, `tools`; its turns).
- `claude_code`: Claude Code's own telemetry (`span.type`: its interaction, its tools).
- `codex_cli`: Codex CLI's own telemetry (its prompt and tool-result records, usage spans).
- `messages`: messages, parts and tool definitions in every shape, to `turnscore.ingest.model`.
- `values`: JSON-in-strings, canonical JSON, index unflattening.
- `base`: what a decoder reads (`SpanView`) and returns (`Decoded`).

`CONVENTIONS` registers them, in merge precedence; `turnscore.ingest.decode` detects and
runs them; nothing else should call them directly.
"""

from turnscore.ingest.conventions import (
    agentops,
    claude_code,
    codex_cli,
    dspy,
    frameworks,
    genkit,
    haystack,
    judgeval,
    laminar,
    langfuse,
    langsmith,
    langtrace,
    langwatch,
    llamaindex,
    logfire,
    mastra,
    openinference,
    openllmetry,
    otel_genai,
    pipecat,
    qwen_code,
    spring_ai,
    vercel,
    voltagent,
)
from turnscore.ingest.conventions.base import ContentEvent, Convention, Decoded, SpanView

CONVENTIONS: tuple[Convention, ...] = (
    dspy.DSPY,
    frameworks.PYDANTIC_AI,
    logfire.LOGFIRE,
    frameworks.MLFLOW,
    frameworks.ADK,
    frameworks.STRANDS,
    vercel.VERCEL,
    langfuse.LANGFUSE,
    haystack.HAYSTACK,
    langsmith.LANGSMITH,
    mastra.MASTRA,
    voltagent.VOLTAGENT,
    genkit.GENKIT,
    llamaindex.LLAMAINDEX,
    spring_ai.SPRING_AI,
    agentops.AGENTOPS,
    langtrace.LANGTRACE,
    laminar.LAMINAR,
    pipecat.PIPECAT,
    langwatch.LANGWATCH,
    judgeval.JUDGEVAL,
    claude_code.CLAUDE_CODE,
    codex_cli.CODEX_CLI,
    qwen_code.QWEN_CODE,
    otel_genai.OTEL_GENAI,
    openinference.OPENINFERENCE,
    openllmetry.OPENLLMETRY,
)
"""Every decoder, in merge precedence: a stack's own attributes before the standard ones."""

__all__ = ["CONVENTIONS", "ContentEvent", "Convention", "Decoded", "SpanView"]
