"""Logfire configured as an application without a Logfire account configures it: no
sending (`send_to_logfire=False`), no console, and the OTLP file exporters added as span and
log-record processors of Logfire's own providers (Logfire sets its providers as the global
ones, so `common.providers` is not used: its provider would be overridden).

Scrubbing stays on as it ships: what a real export of these stacks holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.ingest.instrumented.export import FileLogExporter, FileSpanExporter


@contextmanager
def logfire_configured(stack: str, out: Path, scenario: str) -> Iterator[Any]:
    import logfire

    spans = [BatchSpanProcessor(FileSpanExporter(out, scenario))]
    try:
        advanced = logfire.AdvancedOptions(log_record_processors=[
            BatchLogRecordProcessor(FileLogExporter(out, scenario))])  # fmt: skip
    except TypeError:  # Logfire 2.x (an old release's stack) takes no log processors: spans only
        advanced = None
    instance = logfire.configure(
        send_to_logfire=False, console=False, service_name=f"stack-{stack}",
        additional_span_processors=spans, advanced=advanced,
    )  # fmt: skip
    try:
        yield instance
    finally:
        instance.shutdown()
