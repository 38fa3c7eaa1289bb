"""Gemini CLI's own OpenTelemetry export (`@google/gemini-cli`, `telemetry` settings).

The CLI logs each step of a prompt as an OTLP log record named by `event.name`, every one
carrying the session (`session.id`) and the prompt (`prompt_id`): `gemini_cli.user_prompt`
(the prompt, `logPrompts`), `gemini_cli.api_request` (`request_text`: the request's whole
`contents` as JSON), `gemini_cli.api_response` (`response_text`: the streamed chunks as
JSON, the usage as `input_token_count` / `output_token_count`), `gemini_cli.tool_call`
(`function_name`, `function_args`, `success`, `error`). Its spans hold no turn: each model
call is an `llm_call` span, the root of a trace of its own, with no messages, and the
records it is current for name it (`api_request`) while the response's are logged after it
ended and name none. Recorded from 0.61.0 (`tests/fixtures/stacks/gemini-cli-otel`); the
events: google-gemini/gemini-cli `packages/core/src/telemetry/types.ts`, `loggers.ts`.

So its turns are record-only turns (`turnscore.ingest.record_turns`), keyed by the records'
own ids whether they name a span or not (`RecordTurns.rekey`): a prompt tells an agent span
(its request, and its answer: the last response's text) and a model call per response
(its input the request before it, its output the response's chunks merged, its usage),
written as OTel GenAI attributes, which `otel_genai` decodes; a call's result is the next
request's `functionResponse`.

The system instructions and the tools the model was offered are on the `llm_call` spans
alone (`gen_ai.system_instructions`, `gen_ai.tool.definitions`: `LoggingContentGenerator`
in `packages/core/src/core/loggingContentGenerator.ts` sets them when it starts the span,
`runInDevTraceSpan` in `packages/core/src/telemetry/trace.ts`), each span naming its prompt
(`gen_ai.prompt.name`, the records' `prompt_id`) and session (`gen_ai.conversation.id`).
So `RECORD_TURNS.prompt_spans` moves them into the prompt's trace (`record_turns.
anchor_span`), and each model call the records tell stands in for the `llm_call` span its
`api_request` was logged in (the record is emitted inside the span's callback, so its time
lies within the span's): that span's id, start, instructions and tools. A streamed call's
span ends when the stream is handed back, before the response is logged, which is why the
response record names no span.

Its `gen_ai.client.inference.operation.details` records are twins of its own: `loggers.ts`
(`logApiRequest`, `logApiResponse`, `logApiError`) emits each `gemini_cli.api_*` event's
`toLogRecord` and then its `toSemanticLogRecord` (`types.ts`), the same event in OTel GenAI
form: no prompt id, and the response's and the error's logged after the span ended, so they
name no span, only a `gen_ai.response.id` no span reports. What they hold the `gemini_cli`
records hold too (model, usage, finish reasons; the messages only where `request_text` and
`response_text` are logged as well: `shouldIncludePayloads` needs `logPrompts`), and the
instructions the `llm_call` span does. So they are not read as content (`is_twin`): read,
the response's would be an ingest error on every run, for a record nothing links.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.values import as_int, as_str, try_json
from turnscore.ingest.record_turns import PromptSpans, RecordTurns, span_id_of, told_span
from turnscore.ingest.records import AttrValue, RawLog, RawSpan

_PROMPT = "gemini_cli.user_prompt"
_REQUEST = "gemini_cli.api_request"
_RESPONSE = "gemini_cli.api_response"
_ERROR = "gemini_cli.api_error"
_TOOL_CALL = "gemini_cli.tool_call"
_NS_PER_MS = 1_000_000
AGENT = "gemini-cli"
_LLM_CALL = "llm_call"
_INSTALLATION_ID = "installation.id"
"""With `session.id` and `interactive`, what the CLI's `getCommonAttributes` puts on every
record it logs (`packages/core/src/telemetry/telemetryAttributes.ts`)."""
_INTERACTIVE = "interactive"
_OWN = (A.GEN_AI_SYSTEM_INSTRUCTIONS, A.GEN_AI_TOOL_DEFINITIONS)
"""What a model call takes from its `llm_call` span."""


def is_twin(log: RawLog) -> bool:
    """Whether `log` is the CLI's operation-details twin of one of its `gemini_cli.api_*`
    records (module docstring): an OTel GenAI inference record with the CLI's common
    attributes."""
    fields = log.attributes
    return (log.event_name == A.EV_OPERATION_DETAILS and _INSTALLATION_ID in fields
            and _INTERACTIVE in fields and A.OI_SESSION_ID in fields)  # fmt: skip


def _record_spans(
    trace_id: str, span_id: str, records: Sequence[RawLog], own: Sequence[RawSpan],
) -> list[RawSpan]:
    """The spans one prompt's records tell: the prompt's agent span, a model call under it
    per `api_response` record, each in place of the `llm_call` span (of `own`) its request
    was logged in."""
    first = records[0]
    session = as_str(first.attributes.get(A.OI_SESSION_ID))
    common: dict[str, AttrValue] = {A.GEN_AI_CONVERSATION_ID: session} if session else {}
    request = next((as_str(r.attributes.get("prompt")) for r in records
                    if r.event_name == _PROMPT), None)  # fmt: skip
    sent: str | None = None
    span: RawSpan | None = None
    calls: list[RawSpan] = []
    answer: list[object] = []
    for i, record in enumerate(records):
        if record.event_name == _REQUEST:
            sent = as_str(record.attributes.get("request_text"))
            span = _logged_in(record, own)
        elif record.event_name == _RESPONSE:
            output = _merged(as_str(record.attributes.get("response_text")))
            answer = output or answer
            calls.append(_model_call(trace_id, span_id, i, record, sent, output, common, span))
            span = None
    agent: dict[str, AttrValue] = {**common, A.GEN_AI_OPERATION_NAME: "invoke_agent",
                                   A.GEN_AI_AGENT_NAME: AGENT}
    if request is not None:
        agent[A.GEN_AI_INPUT_MESSAGES] = _json([{"role": "user", "parts": [
            {"type": "text", "content": request}]}])
    texts = [t for p in answer if isinstance(p, dict) and (t := as_str(p.get("text")))]
    if texts:
        agent[A.GEN_AI_OUTPUT_MESSAGES] = _json([{"role": "assistant", "parts": [
            {"type": "text", "content": "".join(texts)}]}])
    start = min(r.time_unix_nano for r in records)
    end = max(r.time_unix_nano for r in records)
    return [told_span(trace_id, span_id, None, "invoke_agent " + AGENT, start, end, first, agent),
            *calls]


def _logged_in(record: RawLog, spans: Sequence[RawSpan]) -> RawSpan | None:
    """The `llm_call` span `record` was logged in: the last to start before it that had
    not ended."""
    t = record.time_unix_nano
    within = [s for s in spans if s.name == _LLM_CALL and s.start_unix_nano <= t
              and (s.end_unix_nano == 0 or t <= s.end_unix_nano)]  # fmt: skip
    return within[-1] if within else None


def _model_call(
    trace_id: str, parent: str, index: int, record: RawLog, sent: str | None,
    output: list[object], common: dict[str, AttrValue], span: RawSpan | None,
) -> RawSpan:
    """An `api_response` record's model call: sent the `api_request` before it, its
    output the response's parts; logged when the response ended, `duration_ms` after it
    began. In place of its request's `llm_call` span where there is one: its id, its start,
    and the instructions and tools on it."""
    fields = record.attributes
    said: dict[str, AttrValue] = {**common, A.GEN_AI_OPERATION_NAME: "chat"}
    if span is not None:
        said.update({k: v for k in _OWN if (v := span.attributes.get(k)) is not None})
    if model := as_str(fields.get("model")):
        said[A.GEN_AI_REQUEST_MODEL] = model
    if sent is not None:
        said[A.GEN_AI_INPUT_MESSAGES] = sent
    if output:
        said[A.GEN_AI_OUTPUT_MESSAGES] = _json([{"role": "model", "parts": output}])
    for key, to in (("input_token_count", A.GEN_AI_USAGE_INPUT_TOKENS),
                    ("output_token_count", A.GEN_AI_USAGE_OUTPUT_TOKENS)):
        if (count := as_int(fields.get(key))) is not None:
            said[to] = count
    end = record.time_unix_nano
    start = end - (as_int(fields.get("duration_ms")) or 0) * _NS_PER_MS
    if span is None:
        return told_span(trace_id, span_id_of(trace_id, parent, str(index)), parent,
                         "chat " + (model or ""), start, end, record, said)
    return told_span(trace_id, span.span_id, parent, "chat " + (model or ""),
                     min(start, span.start_unix_nano), end, record, said)


def _merged(text: str | None) -> list[object]:
    """The parts of a streamed response's chunks (`response_text`), in order, adjacent
    text parts joined."""
    ok, chunks = try_json(text or "")
    parts: list[object] = []
    for chunk in chunks if ok and isinstance(chunks, list) else ():
        candidates = chunk.get("candidates") if isinstance(chunk, dict) else None
        first = candidates[0] if isinstance(candidates, list) and candidates else None
        content = first.get("content") if isinstance(first, dict) else None
        for part in (content or {}).get("parts") or () if isinstance(content, dict) else ():
            last = parts[-1] if parts else None
            if (isinstance(part, dict) and set(part) == {"text"} and isinstance(last, dict)
                    and set(last) == {"text"}):  # fmt: skip
                parts[-1] = {"text": str(last["text"]) + str(part["text"])}
            else:
                parts.append(part)
    return parts


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


RECORD_TURNS = RecordTurns(
    "gemini_cli",
    events=frozenset({_PROMPT, _REQUEST, _RESPONSE, _ERROR, _TOOL_CALL}),
    session=(A.OI_SESSION_ID,), prompt=("prompt_id",), spans=_record_spans, rekey=True,
    prompt_spans=PromptSpans(frozenset({_LLM_CALL}), session=(A.GEN_AI_CONVERSATION_ID,),
                             prompt=(A.GEN_AI_PROMPT_NAME,)),
    twin=is_twin,
)  # fmt: skip
