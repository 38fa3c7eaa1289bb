"""Laminar's SDK (lmnr-ai/lmnr-python, `Laminar.initialize`): its forks of OpenLLMetry's
instrumentations under its own span processor, which stamps every span with `lmnr.span.*`
(`lmnr.span.type`: `LLM`, `TOOL`, `DEFAULT`; the span's path of names and ids).

Most of it is standard and read by `otel_genai` (`gen_ai.input.messages`,
`gen_ai.tool.definitions`, `gen_ai.usage.*`, `execute_tool` spans with `gen_ai.tool.*`,
`gen_ai.conversation.id` from a LangGraph thread), with the values in OpenAI's own shapes
rather than the convention's parts: the input messages are the request's chat messages, the
tools OpenAI-nested. What only Laminar does, read here: its OpenAI instrumentation writes
`gen_ai.output.messages` as the response's `choices` (`{index, message, finish_reason}`, a
streamed call's accumulated with `role: ""` when the stream named none:
`opentelemetry_lib/opentelemetry/instrumentation/openai/shared/chat_wrappers.py`), so each
choice is read as its message, the model's (`_choices`). Its LangChain and `observe` spans
carry a step's input and output as JSON text (`lmnr.span.input` / `lmnr.span.output`):
content, kept out of the turn's attributes (the model-call spans carry the same messages).
"""

from __future__ import annotations

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import Problems, parse_message
from turnscore.ingest.conventions.values import as_str, try_json
from turnscore.ingest.model import Message


def decode(view: SpanView, problems: Problems) -> Decoded:
    return Decoded(output_messages=_choices(view, problems))


def _choices(view: SpanView, problems: Problems) -> tuple[Message, ...] | None:
    """`gen_ai.output.messages` when it is a list of choices (no `role` of its own, a
    `message` object): each choice's message, the assistant's where it names no role."""
    value = view.get(A.GEN_AI_OUTPUT_MESSAGES)
    ok, choices = try_json(value) if isinstance(value, str) else (False, None)
    if not ok or not isinstance(choices, list) or not choices or not all(
            isinstance(c, dict) and "role" not in c and isinstance(c.get("message"), dict)
            for c in choices):
        return None
    out = []
    for i, choice in enumerate(choices):
        message = choice["message"]
        said = {**message, "role": as_str(message.get("role")) or "assistant",
                "finish_reason": choice.get("finish_reason")}
        if (m := parse_message(said, f"{A.GEN_AI_OUTPUT_MESSAGES}[{i}]", problems)) is not None:
            out.append(m)
    return tuple(out)


LAMINAR = Convention(
    "laminar", decode, markers=frozenset({A.LMNR_SPAN_TYPE}),
    content_keys=(A.LMNR_SPAN_INPUT, A.LMNR_SPAN_OUTPUT),
)  # fmt: skip
