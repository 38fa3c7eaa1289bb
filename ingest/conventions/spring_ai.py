"""Spring AI's own observations (Java), exported as spans by Micrometer Tracing's OTel bridge.

Spring AI observes its chat models, its ChatClient, advisors and tool calls with Micrometer;
the bridge makes each observation a span named by its contextual name, every key value a
string attribute. The chat-model spans (`chat <model>`, `gen_ai.operation.name` `chat`)
carry the standard keys and are `otel_genai`'s: 2.x tags `gen_ai.input.messages` as
`{role, content}` text only (an assistant's tool calls and the tool results come out as
empty content: `ChatModelPromptSpanContentObservationHandler`) and `gen_ai.output.messages`
only when every generation is text (`ChatModelCompletionSpanContentObservationHandler`);
1.x logs content (`ChatModelPromptContentObservationHandler`) and tags none. So the model
calls never say which tools ran.

What only Spring AI's own spans say (`spring.ai.kind`, `gen_ai.operation.name` always
`framework`), read here:
- a tool call (`tool_call`, span `tool_call <tool>`; spring-projects/spring-ai
  `spring-ai-model/.../tool/observation/ToolCallingObservationDocumentation.java`, since
  1.0): the tool's name, description and input schema (`spring.ai.tool.definition.*`), and
  with `spring.ai.tools.observations.include-content` the arguments the model gave and the
  result as sent back to it (`spring.ai.tool.call.arguments` / `.result`,
  `ToolCallingContentObservationFilter`), no call id: the run's only record of the call.
  A tool that throws is no failed span: `DefaultToolCallingManager` gives the model the
  exception processor's message as the result, inside the observation;
- the ChatClient call (`chat_client`, span `spring_ai chat_client`): the chat memory's
  conversation id (`spring.ai.chat.client.conversation.id`).
Advisor and vector-store spans say nothing a turn needs.
"""

from __future__ import annotations

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.base import Convention, Decoded, SpanView
from turnscore.ingest.conventions.messages import Problems, execution
from turnscore.ingest.conventions.values import as_str, canonical_json, json_or_text, try_json
from turnscore.ingest.model import SpanKind, ToolDef

_TOOL_CALL = "tool_call"
_CHAT_CLIENT = "chat_client"


def decode(view: SpanView, problems: Problems) -> Decoded:
    kind = as_str(view.get(A.SPRING_AI_KIND))
    if kind == _TOOL_CALL:
        return _tool_call(view, problems)
    if kind == _CHAT_CLIENT:
        return Decoded(conversation_id=as_str(view.get(A.SPRING_AI_CONVERSATION_ID)))
    return Decoded()


def _tool_call(view: SpanView, problems: Problems) -> Decoded:
    name = as_str(view.get(A.SPRING_AI_TOOL_NAME)) or view.name.removeprefix(f"{_TOOL_CALL} ")
    arguments = view.get(A.SPRING_AI_TOOL_ARGUMENTS)
    # The result is the text the model was sent (a String return already JSON-encoded by
    # the tool's result converter), so it is kept as it is, not parsed.
    result = as_str(view.get(A.SPRING_AI_TOOL_RESULT))
    return Decoded(
        kind=SpanKind.TOOL,
        tool_execution=execution(name, None, json_or_text(arguments), result),
        tool_definitions=(ToolDef(name, as_str(view.get(A.SPRING_AI_TOOL_DESCRIPTION)),
                                  _schema(view, name, problems)),),
    )


def _schema(view: SpanView, name: str, problems: Problems) -> str | None:
    text = as_str(view.get(A.SPRING_AI_TOOL_SCHEMA))
    if not text:
        return None
    ok, schema = try_json(text)
    if not ok:
        problems.append(f"{view.name}: input schema of tool {name!r} is not JSON")
        return None
    return canonical_json(schema)


SPRING_AI = Convention(
    "spring_ai", decode, markers=frozenset({A.SPRING_AI_KIND}),
    content_keys=(A.SPRING_AI_TOOL_ARGUMENTS, A.SPRING_AI_TOOL_RESULT),
)  # fmt: skip
