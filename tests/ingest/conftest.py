"""Shared helpers for ingest tests: the corpus location and an OTLP/JSON builder.

Helpers are handed out as session fixtures (not imported) so test modules need no package
path tricks, and hypothesis tests can use them without function-scoped fixture warnings.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"


class OtlpJson:
    """Build OTLP/JSON (spec dialect) requests from plain Python values."""

    def any_value(self, value: Any) -> dict[str, Any]:
        """Python value -> OTLP JSON AnyValue (int64 as a decimal string, bytes as base64)."""
        if value is None:
            return {}
        if isinstance(value, bool):
            return {"boolValue": value}
        if isinstance(value, int):
            return {"intValue": str(value)}
        if isinstance(value, float):
            return {"doubleValue": value}
        if isinstance(value, str):
            return {"stringValue": value}
        if isinstance(value, bytes):
            return {"bytesValue": base64.b64encode(value).decode()}
        if isinstance(value, list | tuple):
            return {"arrayValue": {"values": [self.any_value(v) for v in value]}}
        if isinstance(value, Mapping):
            return {"kvlistValue": {"values": self.key_values(value)}}
        raise TypeError(f"no AnyValue for {type(value).__name__}")

    def key_values(self, attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [{"key": k, "value": self.any_value(v)} for k, v in attributes.items()]

    def span(
        self,
        name: str = "chat",
        trace_id: str | None = "0af7651916cd43dd8448eb211c80319c",
        span_id: str | None = "b7ad6b7169203331",
        parent_span_id: str = "",
        attributes: Mapping[str, Any] | None = None,
        start: int = 1_700_000_000_000_000_000,
        end: int = 1_700_000_001_000_000_000,
        **extra: Any,
    ) -> dict[str, Any]:
        span: dict[str, Any] = {
            "name": name,
            "kind": 3,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end),
            "attributes": self.key_values(attributes or {}),
            "status": {},
        }
        if trace_id is not None:
            span["traceId"] = trace_id
        if span_id is not None:
            span["spanId"] = span_id
        if parent_span_id:
            span["parentSpanId"] = parent_span_id
        span.update(extra)
        return span

    def traces_request(
        self, spans: Sequence[dict[str, Any]], service: str = "svc"
    ) -> dict[str, Any]:
        return {
            "resourceSpans": [
                {
                    "resource": {"attributes": self.key_values({"service.name": service})},
                    "scopeSpans": [{"scope": {"name": "test", "version": "1"}, "spans": spans}],
                }
            ]
        }

    def logs_request(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return {
            "resourceLogs": [
                {
                    "resource": {"attributes": self.key_values({"service.name": "svc"})},
                    "scopeLogs": [{"scope": {"name": "test"}, "logRecords": records}],
                }
            ]
        }

    def dumps(self, request: Mapping[str, Any], indent: int | None = None) -> str:
        return json.dumps(request, indent=indent)

    def to_protobuf(self, request: Mapping[str, Any]) -> bytes:
        """Serialize a spec-dialect request (traces or logs) to protobuf binary."""
        message = (
            trace_service_pb2.ExportTraceServiceRequest()
            if "resourceSpans" in request
            else logs_service_pb2.ExportLogsServiceRequest()
        )
        # protobuf's JSON parser reads ids as base64, the OTLP spec writes them as hex.
        json_format.ParseDict(_hex_ids_to_base64(request), message)
        return message.SerializeToString()


_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def _hex_ids_to_base64(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode()
            if k in _ID_KEYS and isinstance(v, str)
            else _hex_ids_to_base64(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids_to_base64(v) for v in value]
    return value


@pytest.fixture(scope="session")
def otlp_json() -> OtlpJson:
    return OtlpJson()


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return CORPUS
