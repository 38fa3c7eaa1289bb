"""Files as the OpenTelemetry Collector's `file` exporter writes them when each message is
preceded by its size (opentelemetry-collector-contrib `exporter/fileexporter`,
`exportMessageAsBuffer`: a 4-byte big-endian length, then the message): `format: proto`,
and `format: json` with `compression: zstd`, each message compressed on its own; with the
native-compression feature gate, the same run of messages compressed whole.

The messages are a real stack's recorded OTel SDK export (traces and logs, as one file
exporter shared by a traces and a logs pipeline writes them into one file); its turns must
come out as they do from the SDK's own files.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import zstandard
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from tests.ingest.instrumented.stacks.record import FIXTURES
from turnscore.ingest.otlp import read_bytes
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.records import InputError
from turnscore.ingest.store import TurnStore
from turnscore.ingest.turn import Turn

RECORDING = FIXTURES / "openai-v2-span-and-event" / "multi_turn"
_ZSTD = zstandard.ZstdCompressor()


SDK_FILES = sorted(RECORDING.glob("*.pb"))
"""The recording's export requests, traces and logs, as the SDK serialized them."""


def _messages() -> list[bytes]:
    return [p.read_bytes() for p in SDK_FILES]


def _framed(messages: Sequence[bytes]) -> bytes:
    return b"".join(len(m).to_bytes(4, "big") + m for m in messages)


def _as_collector_json(path: Path) -> bytes:
    """A request as the Collector's JSON marshaler writes it: OTLP/JSON with hex ids and
    enums as integers."""
    request: Any = (
        trace_service_pb2.ExportTraceServiceRequest.FromString(path.read_bytes())
        if path.name.endswith(".traces.pb")
        else logs_service_pb2.ExportLogsServiceRequest.FromString(path.read_bytes())
    )
    as_dict = json_format.MessageToDict(request, use_integers_for_enums=True)
    return json.dumps(_hex_ids(as_dict), separators=(",", ":")).encode()


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId")
                else _hex_ids(v) for k, v in value.items()}  # fmt: skip
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def _turns(files: list[Path], out: Path) -> list[Turn]:
    """The turns, named after no file and no run (they come from other files and runs)."""
    ingest_paths(files, out)
    turns = TurnStore(out, "read").read_all()
    return sorted((replace(t, source="", ingest_id="") for t in turns), key=lambda t: t.turn_id)


FILES: dict[str, Callable[[], bytes]] = {
    "format: proto": lambda: _framed(_messages()),
    "format: json, compression: zstd": lambda: _framed(
        [_ZSTD.compress(_as_collector_json(p)) for p in SDK_FILES]
    ),
    "format: proto, compression: zstd (native)": lambda: _ZSTD.compress(_framed(_messages())),
}


@pytest.mark.parametrize("form", FILES)
def test_size_prefixed_files_give_the_sdk_exports_turns(form: str, tmp_path: Path) -> None:
    assert {p.name.split(".")[1] for p in SDK_FILES} == {"traces", "logs"}  # one file, both
    exported = tmp_path / "collector" / "agent.pb"
    exported.parent.mkdir()
    exported.write_bytes(FILES[form]())
    expected = _turns(SDK_FILES, tmp_path / "sdk")
    assert expected and _turns([exported], tmp_path / "collector-out") == expected


def test_a_cut_last_message_keeps_the_messages_before_it() -> None:
    messages = _messages()
    whole = _framed(messages)
    cut = whole[: len(whole) - 10]
    records = list(read_bytes(cut, "agent.pb"))
    errors = [r for r in records if isinstance(r, InputError)]
    kept = [r for r in records if not isinstance(r, InputError)]
    last = len(whole) - len(messages[-1]) - 4
    assert [(e.position, e.message.split(" (")[0]) for e in errors] == [
        (f"byte {last}", f"truncated size-prefixed message {len(messages)}")
    ]
    assert len(kept) == len(list(read_bytes(_framed(messages[:-1]), "agent.pb")))


def test_a_corrupt_message_is_named_and_the_others_read() -> None:
    messages = _messages()
    broken = b"\x0a\x05" + b"\xff" * 3  # a field that says 5 bytes and holds 3
    data = _framed([messages[0], broken, *messages[1:]])
    records = list(read_bytes(data, "agent.pb"))
    errors = [r for r in records if isinstance(r, InputError)]
    second = len(messages[0]) + 8  # its size and the first message's before it
    assert [e.position.split(",")[0] for e in errors] == [f"message 2 (byte {second})"]
    assert len(records) - 1 == len(list(read_bytes(_framed(messages), "agent.pb")))


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x00\x00\x05hello",  # sizes tile it, but "hello" is nothing OTLP is written as
        b"\x00\x00\x00\x00",  # a size of 0
        b"\x00\x00\x00\x02\x0a\x00\x00",  # a stray byte after the last message
        b"\x00\x10\x00\x00abc",  # a size far past the end, and no OTLP after it
    ],
)
def test_other_binary_is_still_not_otlp(data: bytes) -> None:
    records = list(read_bytes(data, "x.pb"))
    assert [(type(r), r.message.split(":")[0]) for r in records] == [
        (InputError, "not an OTLP traces/logs file")
    ]
