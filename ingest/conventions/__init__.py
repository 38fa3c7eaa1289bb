"""Convention decoders: one module per convention family, one shared reader of shapes.

- `otel_genai`: OTel GenAI semantic conventions (current attributes, operation-details
  events, older per-message events, deprecated whole-prompt attributes, execute_tool).
- `openinference`: Arize OpenInference (flattened `llm.*`, TOOL spans, raw values).
- `openllmetry`: Traceloop OpenLLMetry (legacy flattened prompts, entity input/output).
- `frameworks`: Pydantic AI, Strands, MLflow and Google ADK specifics.
- `vercel`: Vercel AI SDK telemetry (`ai.*`).
- `messages`: messages, parts and tool definitions in every shape, to `turnscore.ingest.model`.
- `values`: JSON-in-strings, canonical JSON, index unflattening.
- `base`: what a decoder reads (`SpanView`) and returns (`Decoded`).

`turnscore.ingest.decode` detects and runs them; nothing else should call them directly.
"""

from turnscore.ingest.conventions.base import ContentEvent, Convention, Decoded, SpanView

__all__ = ["ContentEvent", "Convention", "Decoded", "SpanView"]
