"""File exporters: the SDK's own OTLP encoders, written where a file exporter would put them.

What `OTLPSpanExporter` would send to a collector: an `ExportTraceServiceRequest` (or an
`ExportLogsServiceRequest`) per export batch, either as protobuf, one file per batch
(`<prefix>-NNN.traces.pb`), or as JSON Lines, one request per line of `<prefix>.traces.jsonl`
in protobuf's own JSON mapping (base64 ids, enum names: what `MessageToJson` gives).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

try:
    from opentelemetry.sdk._logs import ReadableLogRecord
    from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
except ImportError:  # an SDK before 1.39 (an old release's stack pins one): the older names
    from opentelemetry.sdk._logs import LogData as ReadableLogRecord  # type: ignore[attr-defined,no-redef]
    from opentelemetry.sdk._logs.export import (  # type: ignore[attr-defined,no-redef]
        LogExporter as LogRecordExporter,
    )
    from opentelemetry.sdk._logs.export import (
        LogExportResult as LogRecordExportResult,
    )


class _Files:
    def __init__(self, folder: Path, prefix: str, kind: str, jsonl: bool) -> None:
        self._folder, self._prefix, self._kind, self._jsonl = folder, prefix, kind, jsonl
        self._numbers = itertools.count()
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, request: Message) -> None:
        if self._jsonl:
            line = json_format.MessageToJson(request, indent=None)
            with (self._folder / f"{self._prefix}.{self._kind}.jsonl").open("a") as f:
                f.write(line + "\n")
            return
        path = self._folder / f"{self._prefix}-{next(self._numbers):03}.{self._kind}.pb"
        path.write_bytes(request.SerializeToString())


class FileSpanExporter(SpanExporter):
    def __init__(self, folder: Path, prefix: str, *, jsonl: bool = False) -> None:
        self._files = _Files(folder, prefix, "traces", jsonl)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self._files.write(encode_spans(spans))
        return SpanExportResult.SUCCESS


class FileLogExporter(LogRecordExporter):
    def __init__(self, folder: Path, prefix: str, *, jsonl: bool = False) -> None:
        self._files = _Files(folder, prefix, "logs", jsonl)

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        self._files.write(encode_logs(batch))
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True
