"""Qwen Code's own telemetry (`conventions/qwen_code.py`), recorded from 0.24.4
(`tests/fixtures/stacks/qwen-code-otel/`)."""

from __future__ import annotations

import json
from pathlib import Path

from turnscore.ingest.decode import decode_spans
from turnscore.ingest.model import SpanKind
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.records import RawLog, RawSpan
from turnscore.ingest.store import TurnStore

QWEN = Path(__file__).resolve().parents[1] / "fixtures" / "stacks" / "qwen-code-otel"


def _exports(folder: Path) -> list[Path]:
    return sorted([*folder.glob("*.logs.json"), *folder.glob("*.traces.json")])


def test_the_request_is_the_prompt_without_the_clis_reminders(tmp_path: Path) -> None:
    """The CLI sends the prompt as the last part of a user content whose earlier parts are
    its `<system-reminder>` context: the turn's request is the prompt alone, and a tool's
    result the text the CLI sends (the functionResponse's `output`)."""
    batch = ingest_paths(_exports(QWEN / "single_tool"), tmp_path)
    (turn,) = TurnStore(tmp_path, "read").read_all()
    assert turn.request == "What is 17 * 23 + 4? Use the calculator."
    (call,) = turn.calls
    assert call.name == "mcp__tools__calculator"
    assert json.loads(call.arguments or "") == {"expression": "17 * 23 + 4"}
    assert call.result == '{"result":395}\n395'
    assert turn.final_answer == "17 * 23 + 4 = 395." and turn.llm_calls == 2
    assert batch.errors == ()


def test_a_failed_tools_result_is_its_error(tmp_path: Path) -> None:
    ingest_paths(_exports(QWEN / "tool_error"), tmp_path)
    (turn,) = TurnStore(tmp_path, "read").read_all()
    (call,) = turn.calls
    assert call.status == "error"
    assert call.result and call.result.startswith("MCP tool 'get_weather'")


def _llm_request(context: str) -> tuple[RawSpan, RawLog]:
    span = RawSpan("ab" * 16, "cd" * 8, None, "qwen-code.llm_request", 1, 1, 2, 0, "",
                   {"gen_ai.operation.name": "chat", "llm_request.context": context,
                    "qwen-code.prompt_id": "s#managed-auto-memory-extractor-1#0"})
    sent = json.dumps([{"role": "user", "parts": [{"text": "Extract memories."}]}])
    record = RawLog("ab" * 16, "cd" * 8, "qwen-code.api_request", 1, None,
                    {"request_text": sent, "prompt_id": "s#managed-auto-memory-extractor-1#0"})
    return span, record


def test_a_model_call_outside_any_prompt_is_no_model_call_of_a_turn() -> None:
    """A `standalone` llm_request (the CLI's background memory extraction, a trace of its
    own) is not read as a model call, so it makes no turn; one in an interaction is."""
    span, record = _llm_request("standalone")
    (decoded,), errors = decode_spans([span], [record])
    assert decoded.kind is not SpanKind.LLM and not errors
    span, record = _llm_request("interaction")
    (decoded,), _ = decode_spans([span], [record])
    assert decoded.kind is SpanKind.LLM and decoded.input_messages
