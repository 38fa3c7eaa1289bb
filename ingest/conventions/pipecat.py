"""Pipecat's own tracing (pipecat-ai/pipecat, `src/pipecat/utils/tracing/`; read in
pipecat-ai 1.14.0).

A pipeline worker with `enable_tracing=True` makes, through its `TurnTraceObserver`
(`turn_trace_observer.py`), one `conversation` span (`conversation.id`, `conversation.type`)
and under it a `turn` span per turn of its `TurnTrackingObserver` (`turn.number`,
`conversation.id`); its services' decorators (`service_decorators.py`) make their spans under
the current turn: `traced_llm` an `llm` span per model call, written by
`service_attributes.add_llm_span_attributes`:
- `gen_ai.operation.name` `chat`, `gen_ai.request.model`, `gen_ai.usage.*`, and
  `gen_ai.system_instructions` as plain text (the service's `system_instruction`), read by
  `otel_genai`;
- `input`: the request's messages as the service's adapter logs them
  (`get_messages_for_logging`, the provider's own shape: OpenAI chat messages for
  `OpenAILLMService`, with the assistant's `tool_calls` and the `tool` results);
- `output`: the text the response streamed (its `LLMTextFrame`s), absent when it had none;
  the tool calls a response asked for are not written anywhere on its span, only in the
  next request's `input`;
- `tools`: the request's tool definitions in the provider's shape (OpenAI-nested JSON),
  `tool_count` beside them; `stream` always (`True`: most services stream).
The function calls themselves get no span, so a failed call is known only by what the
model was told: a handler that raised is answered with the service's
`FUNCTION_CALL_ERROR_MESSAGE_TEMPLATE` (`services/llm_service.py`, "The function `{name}`
failed and returned no result."), a function no handler serves with
`MISSING_FUNCTION_CALL_MESSAGE_TEMPLATE` ("... is not currently available."), each JSON-
encoded as the tool message's content: such a result is read as the call's failure
(`_FAILED`). A `turn` span is the observer's turn: it opens
when the user starts speaking (the first at the pipeline's start) and closes after the bot
has stopped speaking and stayed silent for a while, not at a user message: structure,
not a turn boundary, read here for its conversation only.

`input`, `output` and `tools` are generic names: a span is Pipecat's `llm` span when it is
named `llm`, is a `chat` operation and carries `stream` (`_is_pipecat_llm`).
"""

from __future__ import annotations

import re

from msgspec.structs import replace

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import (
    Problems,
    parse_messages,
    parse_tool_defs,
    text_message,
)
from turnscore.ingest.conventions.values import as_str, json_or_text
from turnscore.ingest.model import Message, Part, PartType, SpanKind

_CHAT = "chat"
_FAILED = re.compile(
    r"The function `[^`]+` (?:failed and returned no result|is not currently available)\.")
"""Pipecat's answers for a call that raised or that no handler serves (see above)."""


def decode(view: SpanView, problems: Problems) -> Decoded:
    if view.name == A.PIPECAT_LLM_SPAN:
        return _llm(view, problems)
    return Decoded(conversation_id=as_str(view.get(A.PIPECAT_CONVERSATION_ID)))


def _llm(view: SpanView, problems: Problems) -> Decoded:
    asked = view.load(A.PIPECAT_INPUT, problems)
    tools = view.load(A.PIPECAT_TOOLS, problems)
    return Decoded(
        kind=SpanKind.LLM,
        input_messages=None if asked is None else _failures_told(
            parse_messages(asked, A.PIPECAT_INPUT, problems)),
        output_messages=_said(view),
        tool_definitions=None if tools is None else parse_tool_defs(tools, A.PIPECAT_TOOLS,
                                                                    problems),
    )  # fmt: skip


def _failures_told(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """`messages`, each tool result in Pipecat's words for a failed call marked an error."""
    return tuple(
        replace(m, parts=tuple(_failure_told(p) for p in m.parts))
        if any(_is_failure(p) for p in m.parts) else m
        for m in messages
    )  # fmt: skip


def _is_failure(part: Part) -> bool:
    if part.type is not PartType.TOOL_RESULT or part.is_error or part.text is None:
        return False
    told = json_or_text(part.text)
    return isinstance(told, str) and _FAILED.fullmatch(told) is not None


def _failure_told(part: Part) -> Part:
    return replace(part, is_error=True) if _is_failure(part) else part


def _said(view: SpanView) -> tuple[Message, ...] | None:
    """The streamed text, the assistant's; None when it streamed none (the response asked
    for tools, which its span does not say: not captured, never an empty answer)."""
    text = as_str(view.get(A.PIPECAT_OUTPUT))
    return (text_message("assistant", text),) if text else None


def _is_pipecat(view: SpanView) -> bool:
    if view.name == A.PIPECAT_LLM_SPAN:
        return as_str(view.get(A.GEN_AI_OPERATION_NAME)) == _CHAT and \
            view.get(A.PIPECAT_STREAM) is not None
    return view.name in (A.PIPECAT_TURN_SPAN, A.PIPECAT_CONVERSATION_SPAN) and \
        view.get(A.PIPECAT_CONVERSATION_ID) is not None


PIPECAT = Convention(
    "pipecat",
    decode,
    markers=frozenset({A.PIPECAT_STREAM, A.PIPECAT_TURN_NUMBER, A.PIPECAT_CONVERSATION_TYPE}),
    accepts=_is_pipecat,
    content_keys=(A.PIPECAT_INPUT, A.PIPECAT_OUTPUT),
)
