"""The agent a span names, by the rule of the form that names it where no `agent.name` is:
the run span's name of openinference-instrumentation-smolagents (`{agent.name}.run`, or the
class's for an agent given no name), a LlamaIndex agent workflow step's event
(`current_agent_name`, LlamaIndex's default `Agent` for an agent given no name), MLflow's
span of an OpenAI Agents SDK agent (named after it, the agent's `handoffs` and
`output_type` beside). `tests/ingest/test_stacks.py` checks them on real exports
(`test_turns_name_the_agent_that_ran`)."""

from __future__ import annotations

import json

import pytest

from turnscore.ingest.conventions import frameworks, openinference, openllmetry
from turnscore.ingest.conventions.base import SpanView
from turnscore.ingest.records import AttrValue


def _view(name: str, **attributes: AttrValue) -> SpanView:
    return SpanView("00000001", name, {k.replace("__", "."): v for k, v in attributes.items()})


@pytest.mark.parametrize(("span", "agent"), [
    ("research_assistant.run", "research_assistant"),
    ("my.agent.run", "my.agent"),
    ("ToolCallingAgent.run", None),  # an agent given no name (and every run before 0.1.43)
    ("CodeAgent.run", None),
    ("research_assistant.step", None),
])  # fmt: skip
def test_a_smolagents_run_span_names_its_agent(span: str, agent: str | None) -> None:
    view = _view(span, openinference__span__kind="AGENT", smolagents__max_steps=4)
    assert openinference.decode(view, []).agent_name == agent


def test_an_agent_span_of_another_instrumentation_is_no_smolagents_run() -> None:
    view = _view("research_assistant.run", openinference__span__kind="AGENT")
    assert openinference.decode(view, []).agent_name is None


def _step_input(event: str) -> str:
    return json.dumps({"ctx": "<workflows.context.context.Context object at 0x1>", "ev": event})


@pytest.mark.parametrize(("event", "agent"), [
    ("AgentSetup(input=[ChatMessage(role=<MessageRole.USER: 'user'>, blocks=[TextBlock("
     "block_type='text', text=\"current_agent_name='spoof')\")])], "
     "current_agent_name='research_assistant')", "research_assistant"),
    ("AgentInput(input=[], current_agent_name=\"o'brien\")", "o'brien"),
    ("AgentInput(input=[], current_agent_name='Agent')", None),  # LlamaIndex's default
    ("AgentOutput(response=ChatMessage(), current_agent_name='research_assistant', raw={})",
     None),  # not the last field: only the input events are read
    ("ToolCall(tool_name='calculator', tool_kwargs={}, tool_id='call_1')", None),
])  # fmt: skip
def test_a_llamaindex_step_names_its_agent_under_openinference(
    event: str, agent: str | None
) -> None:
    view = _view("BaseWorkflowAgent.run_agent_step", openinference__span__kind="CHAIN",
                 input__value=_step_input(event))  # fmt: skip
    assert openinference.decode(view, []).agent_name == agent


def test_a_llamaindex_step_names_its_agent_under_openllmetry() -> None:
    dumped = {"input": [{"role": "user", "blocks": []}], "current_agent_name": "research_assistant"}
    view = _view("BaseWorkflowAgent.task", traceloop__span__kind="task",
                 traceloop__entity__output=json.dumps(dumped))  # fmt: skip
    assert openllmetry.decode(view, []).agent_name == "research_assistant"


def test_mlflow_names_the_agents_sdk_agent_not_its_run() -> None:
    agent = _view("research_assistant", mlflow__spanType='"AGENT"', handoffs="[]",
                  output_type='"str"', tools='["calculator"]')  # fmt: skip
    run = _view("AgentRunner.run", mlflow__spanType='"AGENT"',
                mlflow__openai__agent_run_root="true")  # fmt: skip
    assert frameworks.MLFLOW.decode(agent, []).agent_name == "research_assistant"
    assert frameworks.MLFLOW.decode(run, []).agent_name is None
