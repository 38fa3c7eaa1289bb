"""OpenInference agent and orchestration spans whose own `input.value` / `output.value` say
what the run was asked and what it returned, recorded with the real OTel SDK (the
convention fixtures' `Recorder`) in the shapes the instrumentations export:

- LangChain's `AgentExecutor` under openinference-instrumentation-langchain (an AGENT span:
  its run's name holds "agent", `_tracer.py`) with a `return_direct=True` tool: no model
  call follows the tool, and the executor's output, unwrapped to the tool's text (one
  output key, `_convert_io`) or `{"output": ..., "intermediate_steps": ...}` (with
  `return_intermediate_steps=True`), is the turn's answer.
- A CrewAI kickoff under openinference-instrumentation-crewai (a CHAIN span with
  `crew_inputs`, its tasks AGENT spans below it): the kickoff's one text input is the
  user's request, however many tasks build prompts from it; several text inputs name none.

`tests/ingest/test_stacks.py` checks the same on real exports (`crewai-openinference*`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of
from tests.ingest.test_turn_shapes import a, a_calls, oi_llm, oi_span, u

REQUEST = "What is 17 * 23 + 4? Use the calculator."
ARGS = {"expression": "17 * 23 + 4"}
RESULT = "395"
SYSTEM = "You are a helpful assistant."
CALL = ("call_1", "calculator", ARGS)


def _j(value: Any) -> str:
    return json.dumps(value)


# --- LangChain AgentExecutor, return_direct -------------------------------------------------


def _executor(r: Any, output: str | None) -> None:
    attrs = {"input.value": REQUEST, **({"output.value": output} if output is not None else {})}
    with oi_span(r, "AGENT", "AgentExecutor", **attrs):
        with oi_span(r, "CHAIN", "RunnableSequence",
                     **{"input.value": _j({"input": REQUEST, "intermediate_steps": []}),
                        "input.mime_type": "application/json"}):
            oi_llm(r, [{"role": "system", "content": SYSTEM}, u(REQUEST)], [a_calls(CALL)])
            with oi_span(r, "AGENT", "ToolsAgentOutputParser",
                         **{"output.value": _j([{"tool": "calculator", "tool_input": ARGS}]),
                            "output.mime_type": "application/json"}):
                pass
        with oi_span(r, "TOOL", "calculator", **{"tool.name": "calculator",
                                                 "input.value": ARGS["expression"],
                                                 "output.value": RESULT}):
            pass


def test_a_return_direct_tool_result_is_the_executor_s_answer(tmp_path: Path) -> None:
    """The executor's output unwrapped to the tool's text (one output key), or under
    `output` beside the intermediate steps: the tool's result went to the user."""
    steps = _j({"output": RESULT, "intermediate_steps": [[{"tool": "calculator"}, RESULT]]})
    for output in (RESULT, steps):
        [turn] = turns_of(lambda r, output=output: _executor(r, output), tmp_path)
        assert (turn.request, turn.final_answer, turn.status) == (REQUEST, RESULT, "ok")
        assert [(c.name, c.result, c.status) for c in turn.calls] == [
            ("calculator", RESULT, "ok")]


def test_an_executor_output_that_is_no_tool_result_waits_for_its_model_call(
    tmp_path: Path,
) -> None:
    """The executor returned text no tool gave, or nothing: a model call said it, and it
    has not arrived. Other JSON (a list, an object with no answer key) is no answer."""
    for output in ("It is 395.", None, _j([RESULT]), _j({"agent_scratchpad": []})):
        [turn] = turns_of(lambda r, output=output: _executor(r, output), tmp_path)
        assert (turn.final_answer, turn.status) == (None, "incomplete")


# --- CrewAI kickoff -------------------------------------------------------------------------


def _prompt(description: str, context: str = "") -> str:
    """CrewAI's task prompt (crewai `translations/en.json`: `task`, `expected_output`)."""
    said = f"\nCurrent Task: {description}\n\nThis is the expected criteria for your final " \
           "answer: The answer.\nyou MUST return the actual complete content as the final answer."
    return said + (f"\n\nThis is the context you're working with:\n{context}" if context else "")


@contextmanager
def _kickoff(r: Any, inputs: dict[str, Any]) -> Iterator[None]:
    with oi_span(r, "CHAIN", "Crew_1.kickoff", **{
            "input.value": _j(inputs), "input.mime_type": "application/json",
            "crew_inputs": _j(inputs), "crew_tasks": _j([{"description": "{request}"}]),
            "output.value": _j({"raw": RESULT, "tasks_output": []})}):
        yield


def _task(r: Any, role: str, prompt: str, answer: str, tool: bool) -> None:
    with oi_span(r, "AGENT", f"{role}._execute_core", **{
            "graph.node.id": role, "input.value": _j({"agent": role, "context": ""}),
            "output.value": _j({"description": prompt, "raw": answer})}):
        system = {"role": "system", "content": f"You are {role}."}
        if tool:
            oi_llm(r, [system, u(prompt)], [a_calls(CALL)])
            with oi_span(r, "TOOL", "calculator.run", **{
                    "tool.name": "calculator", "input.value": _j(ARGS),
                    "input.mime_type": "application/json", "output.value": RESULT}):
                pass
            oi_llm(r, [system, u(prompt), a_calls(CALL),
                       {"role": "tool", "tool_call_id": "call_1", "content": RESULT}], [a(answer)])
        else:
            oi_llm(r, [system, u(prompt)], [a(answer)])


def test_a_sequential_crew_serving_one_request_is_one_turn(tmp_path: Path) -> None:
    """Two tasks, each prompt built from the kickoff's input: one request, one turn,
    answered by the last task."""
    first = "The result is 395."

    def record(r: Any) -> None:
        with _kickoff(r, {"request": REQUEST}):
            _task(r, "researcher", _prompt(REQUEST), first, tool=True)
            _task(r, "editor", _prompt(f"Write the answer to: {REQUEST}", first),
                  RESULT, tool=False)

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status, turn.llm_calls) == (
        REQUEST, RESULT, "ok", 3)
    assert [(c.name, c.result) for c in turn.calls] == [("calculator", RESULT)]
    assert "crew_inputs" not in json.loads(turn.attributes)
    assert "crew_tasks" not in json.loads(turn.attributes)


def test_a_kickoff_with_several_text_inputs_names_no_request(tmp_path: Path) -> None:
    """`{"topic": ..., "audience": ...}`: both fill the template, neither is the request on
    its own, so the task's prompt is; a non-text input is no request either."""
    for inputs in ({"topic": "arithmetic", "audience": "children"}, {"n": 395}):
        prompt = _prompt("Explain arithmetic to children.")

        def record(r: Any, inputs: dict[str, Any] = inputs, prompt: str = prompt) -> None:
            with _kickoff(r, inputs):
                _task(r, "teacher", prompt, "Adding is counting on.", tool=False)

        [turn] = turns_of(record, tmp_path)
        assert (turn.request, turn.status) == (prompt, "ok")


def test_a_crewai_tool_whose_result_is_the_answer_ends_the_task(tmp_path: Path) -> None:
    """`result_as_answer=True` (CrewAI's return_direct): no model call follows the tool, and
    the task's output (`TaskOutput.raw`) is its result."""

    def record(r: Any) -> None:
        task = {"graph.node.id": "researcher",
                "output.value": _j({"description": REQUEST, "raw": RESULT})}
        with _kickoff(r, {"request": REQUEST}), \
                oi_span(r, "AGENT", "researcher._execute_core", **task):
                oi_llm(r, [u(_prompt(REQUEST))], [a_calls(CALL)])
                with oi_span(r, "TOOL", "calculator.run", **{
                        "tool.name": "calculator", "input.value": _j(ARGS),
                        "input.mime_type": "application/json", "output.value": RESULT,
                        "tool.result_as_answer": True}):
                    pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.status, turn.llm_calls) == (
        REQUEST, RESULT, "ok", 1)
