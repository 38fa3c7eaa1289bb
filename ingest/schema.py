"""The `turns` data contract (DESIGN §4), defined once.

Every other form is derived from `TURN_FIELDS`: the Arrow/Parquet schema
(`turn_arrow_schema`), the DuckDB DDL (`turnscore.warehouse`), and the README table
(`markdown_table`, checked by a test). Change a field here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

SCHEMA_VERSION = 1

TOOL_TYPE = pa.struct(
    [
        pa.field("name", pa.string(), nullable=False),
        pa.field("description", pa.string()),
        pa.field("parameters", pa.string()),
    ]
)
CALL_TYPE = pa.struct(
    [
        pa.field("call_id", pa.string()),
        pa.field("name", pa.string(), nullable=False),
        pa.field("arguments", pa.string()),
        pa.field("result", pa.string()),
        pa.field("error", pa.string()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("step", pa.int32(), nullable=False),
        pa.field("started_at", pa.timestamp("us", tz="UTC")),
        pa.field("duration_ms", pa.float64()),
    ]
)
TS = pa.timestamp("us", tz="UTC")


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: pa.DataType
    nullable: bool
    description: str


TURN_FIELDS: tuple[Field, ...] = (
    Field("turn_id", pa.string(), False, "Stable id: the same spans give the same id on every re-ingest."),
    Field("trace_id", pa.string(), False, "Trace of the turn's first span."),
    Field("conversation_id", pa.string(), False, "Conversation (session) id; falls back to the trace id."),
    Field("turn_index", pa.int32(), False, "Order of the turn within its conversation, from 0."),
    Field("agent_name", pa.string(), True, "Agent name (`gen_ai.agent.name`, `agent.name`, ...)."),
    Field("service_name", pa.string(), True, "Resource `service.name`."),
    Field("model", pa.string(), True, "Model of the turn's model calls (response model if known)."),
    Field("started_at", TS, False, "Start of the turn's first span, UTC."),
    Field("ended_at", TS, False, "End of the turn's last span, UTC."),
    Field("duration_ms", pa.float64(), False, "ended_at - started_at in milliseconds."),
    Field("status", pa.string(), False, "`ok`, `error` (the turn failed) or `incomplete` (spans missing)."),
    Field("error", pa.string(), True, "What failed, when status is not `ok`."),
    Field("request", pa.string(), False, "The user message that started the turn."),
    Field("system_instructions", pa.string(), True, "System prompt in force for the turn."),
    Field("tools", pa.list_(TOOL_TYPE), False, "Tools available: name, description, parameters (JSON Schema text)."),
    Field("tools_source", pa.string(), False, "`declared`, `inferred` (only from calls) or `none`."),
    Field("calls", pa.list_(CALL_TYPE), False, "Tool calls in request order: call_id, name, arguments (JSON text), result, error, status, step (which model call asked), started_at, duration_ms."),
    Field("final_answer", pa.string(), True, "Last model output with text and no pending tool call; null when none."),
    Field("llm_calls", pa.int32(), False, "Number of model calls in the turn."),
    Field("input_tokens", pa.int64(), True, "Input tokens summed over leaf model calls; null when not reported."),
    Field("output_tokens", pa.int64(), True, "Output tokens summed over leaf model calls; null when not reported."),
    Field("case_id", pa.string(), True, "Key to a labelled case, from a configurable span attribute."),
    Field("convention", pa.string(), False, "Decoder(s) that produced the turn, comma-separated."),
    Field("content_hash", pa.string(), False, "Hash of the scored fields; a change makes the turn's scores stale."),
    Field("attributes", pa.string(), False, "Other attributes of the turn's root span, JSON."),
    Field("ingest_id", pa.string(), False, "Ingest run that last wrote the row."),
    Field("source", pa.string(), False, "File(s) the turn's spans came from."),
    Field("issues", pa.list_(pa.string()), False, "What assembly could not trust, empty when nothing: `request_not_captured`, `answer_not_captured` (content not captured, or only placeholders such as `<elided>`), `model_call_without_content` (a model call with usage but no messages anywhere), `unreconciled_calls` (a requested call and a tool execution of the same tool that could not be joined), `call_content_not_captured` (a call that ran with its arguments, or its result, not captured)."),
)


def arrow_schema(fields: tuple[Field, ...] = TURN_FIELDS) -> pa.Schema:
    return pa.schema(
        [pa.field(f.name, f.type, nullable=f.nullable, metadata={"description": f.description}) for f in fields]
    )


def markdown_table(fields: tuple[Field, ...] = TURN_FIELDS) -> str:
    """The README's schema table."""
    rows = ["| column | type | null | meaning |", "|---|---|---|---|"]
    for f in fields:
        desc = f.description.replace("|", "\\|")
        rows.append(f"| `{f.name}` | `{f.type}` | {'yes' if f.nullable else 'no'} | {desc} |")
    return "\n".join(rows)


# --- The raw span/log store (`spans/`, written by `turnscore.ingest.store`) -----------------
# One row per OTLP span or log record exactly as read, so turns can be rebuilt when late
# spans arrive or a decoder is fixed, without the original files. Attribute-like columns
# hold OTLP/JSON `AnyValue` text (`turnscore.ingest.store.encode_attributes`) so bytes vs
# str and int vs float survive the round trip.
SPAN_FIELDS: tuple[Field, ...] = (
    Field("record_type", pa.string(), False, "`span` or `log`."),
    Field("record_id", pa.string(), False, "Span: its span id. Log: a hash of its content. With trace_id and record_type, the dedup key."),
    Field("trace_id", pa.string(), True, "Trace id, lowercase hex (null for a log not linked to a trace)."),
    Field("span_id", pa.string(), True, "Span id, lowercase hex (log: the span it belongs to)."),
    Field("parent_span_id", pa.string(), True, "Parent span id; null for a root span and for logs."),
    Field("name", pa.string(), False, "Span name; for a log, its event name."),
    Field("kind", pa.int32(), True, "OTLP SpanKind as an integer; null for logs."),
    Field("start_unix_nano", pa.int64(), False, "Span start (log: event time), UNIX ns."),
    Field("end_unix_nano", pa.int64(), True, "Span end, UNIX ns; null for logs."),
    Field("status_code", pa.int32(), True, "0 unset, 1 ok, 2 error; null for logs."),
    Field("status_message", pa.string(), True, "Span status message; null for logs."),
    Field("attributes", pa.string(), False, "Attributes as an OTLP/JSON KeyValue list (type-preserving)."),
    Field("events", pa.string(), True, "Span events as JSON [{name, timeUnixNano, attributes}]; null for logs."),
    Field("links", pa.string(), True, "Span links as JSON [{traceId, spanId, attributes}] (hex ids); null for logs and for spans without links. Absent from files written before it existed: read as no links."),
    Field("body", pa.string(), True, "Log body as one OTLP/JSON AnyValue; null for spans."),
    Field("resource", pa.string(), False, "Resource attributes as an OTLP/JSON KeyValue list."),
    Field("scope_name", pa.string(), False, "Instrumentation scope name ('' for logs)."),
    Field("scope_version", pa.string(), False, "Instrumentation scope version ('' for logs)."),
    Field("conversation_id", pa.string(), True, "Conversation the span was grouped into when stored (its own id, an inherited one, or a history-chained conversation's first trace; for a root span that continues another trace by a span link, that trace); finds a conversation's stored traces when a later trace of it arrives."),
    Field("history_key", pa.string(), True, "Model call in a trace without a conversation id: hash of its normalized input + output, so a later trace continuing that history finds it."),
    Field("prefix_keys", pa.list_(pa.string()), True, "First model call of a trace without a conversation id: hashes of each prefix of its input, so an earlier trace arriving late finds the traces continuing it."),
    Field("response_id", pa.string(), True, "Model call: its response id (`gen_ai.response.id`), so another instrumentation's report of the same call, in another trace, finds it; a content record that names no span: the response it reports, so its span finds it when it arrives. Absent from files written before it existed: no response keys."),
    Field("source", pa.string(), False, "File the record was first read from."),
    Field("position", pa.string(), False, "Where in that file: 'line 3', 'request 2', ..."),
    Field("ingest_id", pa.string(), False, "Ingest run that stored the record."),
    Field("occurrence", pa.int32(), True, "Log: how many records alike came before it in its request (`RawLog.occurrence`), null for the first; null for spans. Absent from files written before it existed: read as the first."),
)
