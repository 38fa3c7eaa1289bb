"""Forms that show only when a framework runs under another vendor's instrumentation, recorded
with the real OTel SDK (the convention fixtures' `Recorder`) in the shapes the recorded
stacks exported (`tests/fixtures/stacks/openlit-dspy`, `openlit-pydantic-ai`), decoded and
assembled.

- DSPy under OpenLIT (1.45: no DSPy instrumentation; its LiteLLM one records each call of
  DSPy's LiteLLM engine): GenAI chat spans alone, each a trace of its own, ChatAdapter's
  sections in `gen_ai.input.messages`. Before: one turn per step, the template its request
  (`conventions/dspy.py` read OpenInference's and MLflow's spans only).
- Pydantic AI under OpenLIT: its graph-node spans (`execute_tool <model>`: the tool-calling
  node, no tool named) were each read as a call of a tool named for the model.
- CrewAI under AgentOps (0.4.21, which uninstruments the model clients when a framework is
  active): crew, task and agent spans alone. Before: each kickoff an empty turn, no request,
  no answer, no agent (the task span was structure; the turns, agent-only under one shared
  session span, took nothing from their own agent spans).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of
from tests.ingest.test_survey2_forms import (
    ANSWER,
    DSPY_STEP_OUTPUTS,
    REQUEST,
    _dspy_completion,
    _dspy_system,
    _dspy_user,
)


def _j(value: Any) -> str:
    return json.dumps(value)


def _genai(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


FAILED = "Execution error in get_weather: ValueError: Unknown city: Atlantis"


def test_dspy_react_over_openlit_litellm_spans(tmp_path: Path) -> None:
    """OpenLIT's LiteLLM chat spans of a ReAct run (openlit `instrumentation/litellm`): the
    system message both in `gen_ai.input.messages` and `gen_ai.system_instructions`, the
    completion as one text part; each call a root span. One turn: the question its request,
    the failed tool's observation (ReAct's `Execution error in get_weather: ...`, no tool
    span) a failed call, the extracting call's answer the final answer."""
    trajectory = [("I should look up the weather.", "get_weather", {"city": "Atlantis"}, FAILED),
                  ("I cannot.", "finish", {}, "Completed.")]
    calls = [  # (outputs asked for, steps already taken, completion)
        (DSPY_STEP_OUTPUTS, 0, _dspy_completion(
            next_thought="I should look up the weather.", next_tool_name="get_weather",
            next_tool_args={"city": "Atlantis"})),
        (DSPY_STEP_OUTPUTS, 1, _dspy_completion(
            next_thought="I cannot.", next_tool_name="finish", next_tool_args={})),
        (("reasoning", "answer"), 2, _dspy_completion(reasoning="The tool failed.",
                                                       answer=ANSWER)),
    ]

    def record(r: Any) -> None:
        for i, (outputs, steps, completion) in enumerate(calls):
            system = _dspy_system(outputs)
            with r.span("chat openai/gpt-4o-mini", {
                "telemetry.sdk.name": "openlit", "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "litellm", "gen_ai.request.model": "openai/gpt-4o-mini",
                "gen_ai.response.id": f"chatcmpl-{i}",
                "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10,
                "gen_ai.system_instructions": _j([{"type": "text", "content": system}]),
                "gen_ai.input.messages": _j([_genai("system", system), _genai(
                    "user", _dspy_user(trajectory[:steps], outputs))]),
                "gen_ai.output.messages": _j([{**_genai("assistant", completion),
                                               "finish_reason": "stop"}]),
            }):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == (REQUEST, ANSWER)
    assert [(c.name, c.arguments, c.result, c.status) for c in turn.calls] == [
        ("get_weather", '{"city":"Atlantis"}', FAILED, "error")]
    assert (turn.llm_calls, turn.input_tokens, turn.output_tokens) == (3, 300, 30)


def test_openlit_pydantic_ai_node_span_is_no_tool(tmp_path: Path) -> None:
    """OpenLIT's Pydantic AI instrumentation (1.45, `common_internal_node`) makes a span of
    each graph node, named for the model: `execute_tool gpt-4o-mini` is the node that runs
    the calls the model asked for (or none: the answer's), with the agent's lifecycle phase
    and no tool name. The call is the chat span's, its result the next chat's tool
    message; the node spans are no calls."""
    node = {"gen_ai.operation.name": "execute_tool", "gen_ai.provider.name": "pydantic_ai",
            "gen_ai.agent.lifecycle.phase": "tool_execution",
            "gen_ai.agent.name": "research_assistant"}
    system = _genai("system", "Be terse.")
    user = _genai("user", REQUEST)
    asked = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1",
                                             "name": "get_weather",
                                             "arguments": {"city": "Paris"}}]}
    told = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                       "response": "18C"}]}

    def chat(i: int, inputs: list[Any], output: dict[str, Any]) -> dict[str, Any]:
        return {"telemetry.sdk.name": "openlit", "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.response.id": f"chatcmpl-{i}", "gen_ai.usage.input_tokens": 50,
                "gen_ai.usage.output_tokens": 5, "gen_ai.input.messages": _j(inputs),
                "gen_ai.output.messages": _j([output])}

    def record(r: Any) -> None:
        with r.span("invoke_agent research_assistant", {
            "gen_ai.operation.name": "execute_task", "gen_ai.provider.name": "pydantic_ai",
            "gen_ai.agent.name": "research_assistant"}), \
                r.span("execute_task research_assistant", {
                    "gen_ai.operation.name": "execute_task",
                    "gen_ai.agent.name": "research_assistant"}):
            with r.span("chat gpt-4o-mini", chat(0, [system, user], asked)):
                pass
            with r.span("execute_tool gpt-4o-mini", node):
                pass
            with r.span("chat gpt-4o-mini", chat(1, [system, user, asked, told],
                                                 _genai("assistant", ANSWER))):
                pass
            with r.span("execute_tool gpt-4o-mini", node):
                pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer, turn.agent_name) == (
        REQUEST, ANSWER, "research_assistant")
    assert [(c.name, c.call_id, c.result) for c in turn.calls] == [("get_weather", "call_1",
                                                                      "18C")]


def test_agentops_crewai_tasks_are_the_runs(tmp_path: Path) -> None:
    """AgentOps' CrewAI bridge (`instrumentation/agentic/crewai/crewai_span_attributes.py`):
    under the session span, each kickoff's crew span (`workflow`), its task's span
    (`workflow.step`: the description as `agentops.entity.input`, the output as
    `agentops.entity.output`, the agent's role as `crewai.task.agent`) and the agent's span
    (`agent`, named by `agent.role`). Two kickoffs, two turns, each with its request, its
    answer and its agent."""
    said = [(REQUEST, ANSWER), ("And in Rome?", "It is 21 degrees C in Rome.")]

    def record(r: Any) -> None:
        with r.span("crew-run.session", {"agentops.span.kind": "session"}):
            for asked, answered in said:
                with r.span("crew", {"agentops.span.kind": "workflow",
                                     "crewai.crew.entity_type": "crew"}), \
                        r.span(f"{asked}.task", {
                            "agentops.span.kind": "workflow.step",
                            "agentops.entity.name": "Task", "crewai.task.name": asked,
                            "agentops.entity.input": asked, "agentops.entity.output": answered,
                            "crewai.task.agent": "research_assistant"}), \
                        r.span("research_assistant.agent", {
                            "agentops.span.kind": "agent", "agent.role": "research_assistant",
                            "agentops.entity.input": "Answer the user's request."}):
                    pass

    turns = turns_of(record, tmp_path)
    assert [(t.request, t.final_answer, t.agent_name) for t in turns] == [
        (asked, answered, "research_assistant") for asked, answered in said]
