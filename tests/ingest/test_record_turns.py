"""Record-only turns (`turnscore.ingest.record_turns`): an export of log records that name no
span (Claude Code with its traces off, its default) gives a turn per prompt within its
session, built from the records' own `session.id` and `prompt.id`.

Fixtures: `tests/fixtures/stacks/claude-code-otel-logs/` (the Claude Code CLI 2.1.337 the
Claude Agent SDK 0.2.190 bundles) and `gemini-cli-otel/` (Gemini CLI 0.61.0), recorded
against the scripted server.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

from turnscore.ingest.conventions.gemini_cli import is_twin
from turnscore.ingest.decode import decode_span
from turnscore.ingest.otlp import read_file
from turnscore.ingest.pipeline import ingest_paths
from turnscore.ingest.record_turns import anchor, anchor_span, anchored
from turnscore.ingest.records import RawLog, RawSpan
from turnscore.ingest.store import TurnStore
from turnscore.ingest.turn import Turn

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "stacks" / "claude-code-otel-logs"
MULTI = FIXTURES / "multi_turn" / "multi_turn-000.logs.pb"
REQUESTS = ["Search the docs for 'authentication'.", "Now compute 2 ** 10."]


def _record(**attributes: str) -> RawLog:
    return RawLog(None, None, "user_prompt", 1, None, dict(attributes))


def _turns(out: Path) -> list[Turn]:
    return sorted(TurnStore(out, "read").read_all(), key=lambda t: t.turn_index)


def test_a_record_naming_no_span_takes_ids_from_its_session_and_prompt() -> None:
    one = anchor(_record(**{"session.id": "s", "prompt.id": "p1"}))
    again = anchor(_record(**{"session.id": "s", "prompt.id": "p1"}))
    other = anchor(_record(**{"session.id": "s", "prompt.id": "p2"}))
    assert one.trace_id and one.span_id and anchored(one)
    assert (one.trace_id, one.span_id) == (again.trace_id, again.span_id)
    assert one.span_id != other.span_id


def test_a_record_naming_a_span_or_no_prompt_keeps_what_it_has() -> None:
    named = replace(_record(**{"session.id": "s", "prompt.id": "p"}),
                    trace_id="ab" * 16, span_id="cd" * 8)
    assert anchor(named) is named and not anchored(named)
    loose = _record(**{"session.id": "s"})
    assert anchor(loose) is loose
    other = RawLog(None, None, "plugin_loaded", 1, None, {"session.id": "s", "prompt.id": "p"})
    assert anchor(other) is other


def test_the_reader_anchors_the_records_of_an_export_without_traces() -> None:
    logs = [r for r in read_file(MULTI) if isinstance(r, RawLog)]
    prompts = [lg for lg in logs if lg.event_name == "user_prompt"]
    assert len(prompts) == 2 and all(anchored(lg) for lg in prompts)
    assert len({lg.span_id for lg in prompts}) == 2


def test_records_alone_give_a_turn_per_prompt_of_the_session(tmp_path: Path) -> None:
    batch = ingest_paths([MULTI], tmp_path)
    turns = _turns(tmp_path)
    assert batch.errors == ()
    assert [t.request for t in turns] == REQUESTS
    assert [t.turn_index for t in turns] == [0, 1]
    assert len({t.conversation_id for t in turns}) == 1
    assert [[c.name for c in t.calls] for t in turns] == [
        ["mcp__tools__search_docs"], ["mcp__tools__calculator"]]
    assert [t.calls[0].arguments for t in turns] == [
        '{"query":"authentication","top_k":1}', '{"expression":"2 ** 10"}']
    assert [t.llm_calls for t in turns] == [2, 2]
    assert all(t.final_answer and t.input_tokens for t in turns)


def test_a_failed_call_is_failed_with_the_error_its_record_gives(tmp_path: Path) -> None:
    ingest_paths([FIXTURES / "tool_error" / "tool_error-000.logs.pb"], tmp_path)
    (turn,) = _turns(tmp_path)
    (call,) = turn.calls
    assert call.status == "error"
    assert call.result == "ValueError: Unknown city: Atlantis"


def _prompt_of(record: Any) -> str | None:
    return next((a.value.string_value for a in record.attributes if a.key == "prompt.id"), None)


def _halves(source: Path, folder: Path, *, between_prompts: bool = False) -> list[Path]:
    """The export's records in two files, cut inside the first prompt (or where the
    second prompt's records begin)."""
    request = logs_service_pb2.ExportLogsServiceRequest.FromString(source.read_bytes())
    scope = request.resource_logs[0].scope_logs[0]
    records = list(scope.log_records)
    cut = len(records) // 3
    if between_prompts:
        first = next(p for r in records if (p := _prompt_of(r)))
        cut = next(i for i, r in enumerate(records) if _prompt_of(r) not in (None, first))
    paths = []
    for n, part in enumerate((records[:cut], records[cut:])):
        half = logs_service_pb2.ExportLogsServiceRequest()
        half.CopyFrom(request)
        del half.resource_logs[0].scope_logs[0].log_records[:]
        half.resource_logs[0].scope_logs[0].log_records.extend(part)
        path = folder / f"part-{n}.logs.pb"
        path.write_bytes(half.SerializeToString())
        paths.append(path)
    return paths


def test_a_prompt_whose_records_arrive_in_two_runs_is_one_turn(tmp_path: Path) -> None:
    first, second = _halves(MULTI, tmp_path)
    whole = tmp_path / "whole"
    ingest_paths([MULTI], whole)
    split = tmp_path / "split"
    ingest_paths([first], split)
    ingest_paths([second], split)
    turns = _turns(split)
    assert [t.request for t in turns] == REQUESTS
    assert [(t.turn_id, t.llm_calls, len(t.calls), t.final_answer) for t in turns] == [
        (t.turn_id, t.llm_calls, len(t.calls), t.final_answer) for t in _turns(whole)]


def test_a_later_prompt_ingested_apart_continues_its_session(tmp_path: Path) -> None:
    first, second = _halves(MULTI, tmp_path, between_prompts=True)
    ingest_paths([first], tmp_path / "out")
    ingest_paths([second], tmp_path / "out")
    turns = sorted(_turns(tmp_path / "out"), key=lambda t: t.started_at)
    assert [t.request for t in turns] == REQUESTS
    assert [t.turn_index for t in turns] == [0, 1]


# Gemini CLI 0.61.0 (`tests/fixtures/stacks/gemini-cli-otel/`): its records name the
# `llm_call` span only now and then (the request's, not the response's), and that span is
# the root of a trace of its own; the records' own ids make the turn.
GEMINI = Path(__file__).resolve().parents[1] / "fixtures" / "stacks" / "gemini-cli-otel"


def test_gemini_cli_records_are_keyed_by_prompt_even_where_they_name_a_span() -> None:
    named = RawLog("ab" * 16, "cd" * 8, "gemini_cli.api_request", 1, None,
                   {"session.id": "s", "prompt_id": "p"})
    keyed = anchor(named)
    assert anchored(keyed) and (keyed.trace_id, keyed.span_id) != ("ab" * 16, "cd" * 8)
    prompt = anchor(RawLog(None, None, "gemini_cli.user_prompt", 1, None,
                           {"session.id": "s", "prompt_id": "p"}))
    assert (prompt.trace_id, prompt.span_id) == (keyed.trace_id, keyed.span_id)


def test_gemini_cli_export_gives_a_turn_per_prompt(tmp_path: Path) -> None:
    folder = GEMINI / "multi_turn"
    ingest_paths(sorted([*folder.glob("*.logs.json"), *folder.glob("*.traces.json")]), tmp_path)
    turns = _turns(tmp_path)
    assert [t.request for t in turns] == REQUESTS
    assert [t.llm_calls for t in turns] == [2, 2]
    assert [[c.name for c in t.calls] for t in turns] == [
        ["mcp_tools_search_docs"], ["mcp_tools_calculator"]]
    assert all(c.result and "<untrusted_context>" in c.result for t in turns for c in t.calls)
    assert [t.final_answer for t in turns] == [
        "Authentication uses bearer API keys sent in the Authorization header (doc 'auth-01').",
        "2 ** 10 = 1024."]


def _llm_call(parent: str | None = None, **attributes: str) -> RawSpan:
    return RawSpan("ab" * 16, "cd" * 8, parent, "llm_call", 1, 1, 2, 0, "", dict(attributes))


def test_a_gemini_cli_llm_call_span_moves_under_its_prompt() -> None:
    """The `llm_call` span, root of a trace of its own, names its prompt and session as the
    records do: it moves into the prompt's trace, under the prompt's span."""
    span = _llm_call(**{"gen_ai.conversation.id": "s", "gen_ai.prompt.name": "p"})
    prompt = anchor(RawLog(None, None, "gemini_cli.user_prompt", 1, None,
                           {"session.id": "s", "prompt_id": "p"}))
    moved = anchor_span(span)
    assert (moved.trace_id, moved.parent_span_id, moved.span_id) == (
        prompt.trace_id, prompt.span_id, span.span_id)
    nested = _llm_call("ef" * 8, **{"gen_ai.conversation.id": "s", "gen_ai.prompt.name": "p"})
    assert anchor_span(nested) is nested  # in a trace of the CLI's already
    unnamed = _llm_call(**{"gen_ai.conversation.id": "s"})
    assert anchor_span(unnamed) is unnamed


def test_gemini_cli_turns_take_instructions_and_tools_from_its_llm_call_spans(
    tmp_path: Path,
) -> None:
    folder = GEMINI / "single_tool"
    batch = ingest_paths(sorted([*folder.glob("*.logs.json"), *folder.glob("*.traces.json")]),
                         tmp_path)
    (turn,) = _turns(tmp_path)
    assert turn.system_instructions and turn.system_instructions.startswith(
        "You are a non-interactive CLI agent")
    assert turn.tools_source == "declared" and len(turn.tools) == 19
    calculator = next(t for t in turn.tools if t.name == "mcp_tools_calculator")
    assert calculator.parameters and "expression" in calculator.parameters
    assert turn.llm_calls == 2 and turn.input_tokens == 283 + 381
    # The operation-details twins of its records are no content, so no ingest error.
    assert batch.errors == ()


def test_gemini_cli_operation_details_records_are_twins() -> None:
    common = {"session.id": "s", "installation.id": "i", "interactive": False}
    twin = RawLog(None, None, "gen_ai.client.inference.operation.details", 1, None,
                  {**common, "gen_ai.response.id": "r"})
    assert is_twin(twin)
    other = RawLog(None, None, "gen_ai.client.inference.operation.details", 1, None,
                   {"gen_ai.response.id": "r"})
    assert not is_twin(other)


def test_gen_ai_prompt_name_is_no_flattened_message() -> None:
    """OTel GenAI's `gen_ai.prompt.name` (a prompt template's name; Gemini CLI's prompt id)
    shares OpenLLMetry's flattened `gen_ai.prompt.N` prefix: it is no message list."""
    span = RawSpan("ab" * 16, "cd" * 8, None, "llm_call", 1, 1, 2, 0, "",
                   {"gen_ai.prompt.name": "p", "gen_ai.operation.name": "llm_call",
                    "gen_ai.request.model": "gemini-2.5-flash"})
    _, error = decode_span(span)
    assert error is None


def test_gemini_cli_traces_and_records_ingested_apart_give_the_same_turns(
    tmp_path: Path,
) -> None:
    """The `llm_call` spans moved under a prompt wait for its records, and records for
    their spans, in either order."""
    folder = GEMINI / "multi_turn"
    for first, then in (("traces", "logs"), ("logs", "traces")):
        out = tmp_path / first
        errors = [e for kind in (first, then)
                  for e in ingest_paths(sorted(folder.glob(f"*.{kind}.json")), out).errors]
        turns = _turns(out)
        assert not errors and [t.request for t in turns] == REQUESTS
        assert all(len(t.tools) == 19 and t.system_instructions and t.llm_calls == 2
                   for t in turns)
