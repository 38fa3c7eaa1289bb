"""An agent loop on Instructor over the real `openai` client (`instructor.from_openai`, mode
PARALLEL_TOOLS), under OpenInference's Instructor and OpenAI instrumentations.

Instructor turns a response model into a tool the model must call, and answers that call
itself: it validates the call's arguments into the model and returns them; nothing runs and
no result goes back. Each step's response model is `Iterable[calculator | search_docs |
get_weather | final_answer]`, one pydantic model per scenario tool (its docstring the tool's
description) plus the `final_answer` tool that agents answer through (the scripted server
answers a request offering it with a call of it, `wire.FINAL_ANSWER_TOOL`). The loop runs
the scenario tools among the extracted calls and sends their results back by call id (from
the completion Instructor's `completion:response` hook hands over), until the model calls
`final_answer`: its `answer` is the turn's final answer, as for smolagents, and Instructor's
structured call is that call. So the turn is what expect.py derives for any agent answering
through `final_answer`, no new scenario needed."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, Union

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT, TOOLS, run_tool
from tests.ingest.instrumented.stacks.common import main, providers
from tests.ingest.instrumented.stacks.wire import FINAL_ANSWER_TOOL


def _models() -> list[Any]:
    """The response models: each scenario tool's parameters as fields, then final_answer."""
    from pydantic import Field, create_model

    described = {t["function"]["name"]: t["function"]["description"] for t in TOOLS}
    fields: dict[str, dict[str, Any]] = {
        "calculator": {"expression": (str, ...)},
        "search_docs": {"query": (str, ...), "top_k": (int, 3)},
        "get_weather": {"city": (str, ...),
                        "unit": (Literal["celsius", "fahrenheit"], "celsius")},
        FINAL_ANSWER_TOOL: {"answer": (str, Field(description="The answer to the user."))},
    }  # fmt: skip
    described[FINAL_ANSWER_TOOL] = "Give the user the final answer."
    return [create_model(name, __doc__=described[name], **spec)  # type: ignore[call-overload]
            for name, spec in fields.items()]  # fmt: skip


def converse(client: Any, scenario: str) -> None:
    wanted = Iterable[Union[tuple(_models())]]  # type: ignore[misc]  # noqa: UP007
    # An iterable response model has no create_with_completion: Instructor's completion hook
    # hands over the raw completion, whose calls carry the ids the results answer.
    completions: list[Any] = []
    client.on("completion:response", completions.append)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in SCENARIOS[scenario].turns:
        messages.append({"role": "user", "content": turn.request})
        for _ in range(8):  # a scripted turn has 2 steps; never loop forever on a bug
            found = list(client.chat.completions.create(
                model=MODEL, messages=messages, response_model=wanted, max_retries=0))  # fmt: skip
            completion = completions[-1]
            calls = completion.choices[0].message.tool_calls or []
            if any(type(o).__name__ == FINAL_ANSWER_TOOL for o in found):
                answer = next(o for o in found if type(o).__name__ == FINAL_ANSWER_TOOL)
                messages.append({"role": "assistant", "content": answer.answer})
                break
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in calls]})  # fmt: skip
            for call in calls:
                content, _ = run_tool(call.function.name, call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation.instructor import InstructorInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor

        InstructorInstrumentor().instrument(tracer_provider=tracer_provider)
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        import instructor
        import openai

        client = instructor.from_openai(
            openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0),
            mode=instructor.Mode.PARALLEL_TOOLS,
        )
        converse(client, scenario)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
