"""Turn simulated agent runs into real OpenTelemetry GenAI spans, exported to OTLP files.

The spans go through the real SDK (TracerProvider, BatchSpanProcessor, a SpanExporter) and
are encoded by the OTLP exporter's own `encode_spans`, so the files are what an agent
instrumented with the current GenAI semantic conventions would export:

    invoke_agent {agent}          gen_ai.agent.name, gen_ai.conversation.id, tool definitions
      chat {model}                the conversation so far in, the model's response out
      execute_tool {tool}         one per requested call; ERROR status when the tool refused
      chat {model}                ... until a response with text and no tool call

The exporter writes OTel Collector file-exporter style: one OTLP/JSON
`ExportTraceServiceRequest` per line (hex ids, integer enums), one file per UTC day.
The processor's timer is parked and the runner flushes after every turn, so a line is
exactly one turn and reruns give identical bytes (the ids come from a seeded generator).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import random
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import SERVICE_INSTANCE_ID, Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

from turnscore.demo.policies import Call, Plan
from turnscore.demo.world import TOOLS
from turnscore.ingest import attributes as A

logger = logging.getLogger(__name__)

SERVICE = "kestrel-research-assistant"
PROVIDER = "simulated"
SCOPE = "turnscore.demo"
SYSTEM_PROMPT = (
    "You are the research assistant of Kestrel Analytics. Use the tools to look up company "
    "facts and metrics and to do arithmetic; say so when you cannot answer."
)
_PARKED_TIMER_MS = 10**9
"""The batch processor's timer, far beyond any run: only the per-turn flush exports."""

Message = dict[str, object]
"""A GenAI semantic-convention message (JSON by nature)."""


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_SYSTEM_INSTRUCTIONS = _json([{"type": "text", "content": SYSTEM_PROMPT}])
_TOOL_DEFINITIONS = _json([tool.definition() for tool in TOOLS])
_CHARS_PER_TOKEN = 4
"""Token counts are simulated from text length, like a rough tokenizer estimate."""


class SeededIdGenerator(IdGenerator):
    """Trace and span ids from a seeded generator, so reruns give identical ids."""

    def __init__(self, seed: int | str) -> None:
        self._random = random.Random(f"ids:{seed}")

    def generate_span_id(self) -> int:
        return self._random.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._random.getrandbits(128) or 1


def request_to_json(request: ExportTraceServiceRequest) -> dict[str, object]:
    """OTLP/JSON as the spec writes it: lowerCamelCase, integer enums, hex ids.

    `MessageToDict` encodes bytes as base64, which the OTLP/JSON spec replaces with hex
    for trace and span ids.
    """
    document = MessageToDict(request, use_integers_for_enums=True)
    for resource_spans in document.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                _hex_ids(span)
                for link in span.get("links", []):
                    _hex_ids(link)
    return document


def _hex_ids(record: dict[str, object]) -> None:
    for key in ("traceId", "spanId", "parentSpanId"):
        value = record.get(key)
        if isinstance(value, str) and value:
            record[key] = base64.b64decode(value).hex()


class JsonLinesFileExporter(SpanExporter):
    """Writes each exported batch as one OTLP/JSON line to `<prefix>-<UTC day>.jsonl`.

    Files are written as `.part` and renamed into place on shutdown, so a reader never
    sees a half-written day.
    """

    def __init__(self, directory: Path, prefix: str = "traces") -> None:
        self._directory = directory
        self._prefix = prefix
        self._open: dict[str, Path] = {}
        self.paths: list[Path] = []
        """The finished files, once shut down, sorted by day."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        by_day: dict[str, list[ReadableSpan]] = {}
        for span in spans:
            started = datetime.fromtimestamp((span.start_time or 0) / 1e9, UTC)
            by_day.setdefault(started.date().isoformat(), []).append(span)
        for day, day_spans in by_day.items():
            line = _json(request_to_json(encode_spans(day_spans)))
            part = self._open.get(day)
            if part is None:
                part = self._directory / f"{self._prefix}-{day}.jsonl.part"
                part.write_bytes(b"")
                self._open[day] = part
            with part.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
        return SpanExportResult.SUCCESS

    def discard(self) -> None:
        """Drop the unfinished files (a failed run must not publish a partial day)."""
        for part in self._open.values():
            part.unlink(missing_ok=True)
        self._open.clear()

    def shutdown(self) -> None:
        for day in sorted(self._open):
            part = self._open[day]
            final = part.with_name(part.name.removesuffix(".part"))
            os.replace(part, final)
            self.paths.append(final)
        self._open.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class TurnSpec:
    """One user request to one agent, placed in time and in its conversation."""

    agent: str
    model: str
    conversation_id: str
    request: str
    start_ns: int


class AgentTelemetry:
    """A process's tracing setup: provider, batch processor and the file exporter."""

    def __init__(self, directory: Path, seed: int) -> None:
        self._exporter = JsonLinesFileExporter(directory)
        self._provider = TracerProvider(
            # The SDK would pick a random instance id; a seeded one keeps reruns identical.
            resource=Resource.create({
                A.SERVICE_NAME: SERVICE,
                SERVICE_INSTANCE_ID: str(uuid.UUID(int=random.Random(f"instance:{seed}")
                                                   .getrandbits(128), version=4)),
            }),
            id_generator=SeededIdGenerator(seed),
        )
        self._provider.add_span_processor(
            BatchSpanProcessor(self._exporter, schedule_delay_millis=_PARKED_TIMER_MS)
        )
        self._tracer = self._provider.get_tracer(SCOPE)
        self._random = random.Random(f"timing:{seed}")
        self._call_ids = random.Random(f"call-ids:{seed}")

    def close(self, *, keep: bool = True) -> list[Path]:
        """Flush, shut down, and return the files written (one per UTC day).

        With `keep=False` (the run failed) the unfinished files are deleted instead.
        """
        if not keep:
            self._exporter.discard()
        self._provider.force_flush()
        self._provider.shutdown()
        return list(self._exporter.paths)

    def record_turn(self, turn: TurnSpec, plan: Plan, history: list[Message]) -> list[Message]:
        """Emit the spans of one turn; returns the conversation including this turn."""
        user: Message = {"role": "user", "parts": [{"type": "text", "content": turn.request}]}
        messages = [*history, user]
        clock = _Clock(turn.start_ns + self._ms(1, 4))
        usage = _Usage()
        with self._span(
            f"{A.OP_INVOKE_AGENT} {turn.agent}", turn.start_ns, clock, SpanKind.INTERNAL
        ) as agent:
            agent.set_attributes({
                A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT,
                A.GEN_AI_PROVIDER_NAME: PROVIDER,
                A.GEN_AI_AGENT_NAME: turn.agent,
                A.GEN_AI_CONVERSATION_ID: turn.conversation_id,
                A.GEN_AI_REQUEST_MODEL: turn.model,
                A.GEN_AI_SYSTEM_INSTRUCTIONS: _SYSTEM_INSTRUCTIONS,
                A.GEN_AI_TOOL_DEFINITIONS: _TOOL_DEFINITIONS,
                A.GEN_AI_INPUT_MESSAGES: _json([user]),
            })
            for step in plan.steps:
                parts: list[dict[str, object]] = []
                if step.text:
                    parts.append({"type": "text", "content": step.text})
                ids = [self._call_id() for _ in step.calls]
                parts += [
                    {"type": "tool_call", "id": call_id, "name": call.request.name,
                     "arguments": dict(call.request.arguments)}
                    for call_id, call in zip(ids, step.calls, strict=True)
                ]
                reply: Message = {"role": "assistant", "parts": parts}
                self._chat(turn.model, messages, reply, "tool_call", clock, usage)
                messages.append(reply)
                for call_id, call in zip(ids, step.calls, strict=True):
                    messages.append(self._tool(call_id, call, clock))
            final: Message = {"role": "assistant",
                              "parts": [{"type": "text", "content": plan.answer}]}
            self._chat(turn.model, messages, final, "stop", clock, usage)
            messages.append(final)
            clock.advance(self._ms(1, 3))
            agent.set_attributes({
                A.GEN_AI_OUTPUT_MESSAGES: _json([{**final, "finish_reason": "stop"}]),
                # Agent spans repeat their model calls' totals, as agent frameworks do.
                A.GEN_AI_USAGE_INPUT_TOKENS: usage.input_tokens,
                A.GEN_AI_USAGE_OUTPUT_TOKENS: usage.output_tokens,
            })
        # One export batch per turn: a line in the day's file is exactly one turn.
        self._provider.force_flush()
        return messages

    def _chat(self, model: str, messages: list[Message], reply: Message, finish: str,
              clock: _Clock, usage: _Usage) -> None:
        input_json = _json(messages)
        output_json = _json([{**reply, "finish_reason": finish}])
        prompt_chars = len(_SYSTEM_INSTRUCTIONS) + len(_TOOL_DEFINITIONS) + len(input_json)
        input_tokens = prompt_chars // _CHARS_PER_TOKEN
        output_tokens = max(1, len(output_json) // _CHARS_PER_TOKEN)
        usage.input_tokens += input_tokens
        usage.output_tokens += output_tokens
        start = clock.now
        clock.advance(self._ms(300, 700) + output_tokens * 12_000_000)
        with self._span(f"{A.OP_CHAT} {model}", start, clock, SpanKind.CLIENT) as span:
            span.set_attributes({
                A.GEN_AI_OPERATION_NAME: A.OP_CHAT,
                A.GEN_AI_PROVIDER_NAME: PROVIDER,
                A.GEN_AI_REQUEST_MODEL: model,
                A.GEN_AI_RESPONSE_MODEL: model,
                A.GEN_AI_RESPONSE_FINISH_REASONS: (finish,),
                A.GEN_AI_SYSTEM_INSTRUCTIONS: _SYSTEM_INSTRUCTIONS,
                A.GEN_AI_INPUT_MESSAGES: input_json,
                A.GEN_AI_OUTPUT_MESSAGES: output_json,
                A.GEN_AI_USAGE_INPUT_TOKENS: input_tokens,
                A.GEN_AI_USAGE_OUTPUT_TOKENS: output_tokens,
            })
        clock.advance(self._ms(1, 3))

    def _tool(self, call_id: str, call: Call, clock: _Clock) -> Message:
        name = call.request.name
        start = clock.now
        low, high = {"search_docs": (40, 160), "get_metric": (20, 80)}.get(name, (1, 5))
        clock.advance(self._ms(low, high))
        with self._span(f"{A.OP_EXECUTE_TOOL} {name}", start, clock, SpanKind.INTERNAL) as span:
            span.set_attributes({
                A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                A.GEN_AI_TOOL_NAME: name,
                A.GEN_AI_TOOL_TYPE: "function",
                A.GEN_AI_TOOL_CALL_ID: call_id,
                A.GEN_AI_TOOL_CALL_ARGUMENTS: _json(dict(call.request.arguments)),
            })
            result = call.result
            if result.error is None:
                span.set_attribute(A.GEN_AI_TOOL_CALL_RESULT, result.output or "")
                response = result.output or ""
            else:
                span.set_attribute(A.ERROR_TYPE, "ToolError")
                span.set_status(Status(StatusCode.ERROR, result.error))
                response = f"Error: {result.error}"
        clock.advance(self._ms(1, 3))
        return {"role": "tool",
                "parts": [{"type": "tool_call_response", "id": call_id, "response": response}]}

    @contextmanager
    def _span(self, name: str, start_ns: int, clock: _Clock,
              kind: SpanKind) -> Iterator[trace.Span]:
        """A child of the current span, started at `start_ns` and ended at the clock's time."""
        span = self._tracer.start_span(name, kind=kind, start_time=start_ns)
        with trace.use_span(span, end_on_exit=False, record_exception=False,
                            set_status_on_exception=False):
            yield span
        span.end(end_time=clock.now)

    def _ms(self, low: int, high: int) -> int:
        return self._random.randint(low, high) * 1_000_000

    def _call_id(self) -> str:
        return f"call_{self._call_ids.getrandbits(96):024x}"


class _Clock:
    """Simulated time in ns; spans are stamped with it instead of the wall clock."""

    def __init__(self, now: int) -> None:
        self.now = now

    def advance(self, ns: int) -> None:
        self.now += ns


@dataclass(slots=True)
class _Usage:
    """Token totals of one turn's model calls."""

    input_tokens: int = 0
    output_tokens: int = 0
