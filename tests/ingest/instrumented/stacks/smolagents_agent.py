"""A smolagents `ToolCallingAgent` on `OpenAIServerModel`, under OpenInference (and, in
`smolagents-openinference-openai`, OpenInference's OpenAI instrumentation too, so each model
call is also recorded by the client's span). The agent answers through its `final_answer`
tool; a second turn continues the same memory. Each also streams (`-stream`:
`stream_outputs=True`, each model call through the model's `generate_stream`, and
`agent.run(..., stream=True)` read to its end, as a UI showing the steps reads it).
`openlit-smolagents`: under OpenLIT instead (`openlit.init`: its smolagents
and OpenAI instrumentations at once)."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_origin, get_type_hints

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import AGENT_NAME, main, openlit_or, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def _smolagents_tool(fn: Callable[..., Any]) -> Any:
    """`tool(fn)`; smolagents before 1.14 cannot read a `Literal` hint, so there each one is
    given as `str` (the enum leaves the schema it sends; the wire says what was sent)."""
    from smolagents import tool

    try:
        return tool(fn)
    except Exception as exc:  # smolagents' TypeHintParsingException
        if "type hint" not in str(exc):
            raise

    @functools.wraps(fn)
    def plain(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    hints = {k: str if get_origin(v) is Literal else v for k, v in get_type_hints(fn).items()}
    signature = inspect.signature(fn)
    plain.__annotations__ = hints
    plain.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p.replace(annotation=hints.get(p.name, p.annotation))
                    for p in signature.parameters.values()],
        return_annotation=hints.get("return", signature.return_annotation),
    )  # fmt: skip
    return tool(plain)


def converse(base_url: str, scenario: str, stream: bool = False) -> None:
    from smolagents import OpenAIServerModel, ToolCallingAgent

    model = OpenAIServerModel(model_id=MODEL, api_base=base_url, api_key="test-key")
    options: dict[str, Any] = {"instructions": SYSTEM_PROMPT, "stream_outputs": stream}
    known = inspect.signature(ToolCallingAgent.__init__).parameters
    if "instructions" not in known:  # smolagents before 1.17 (a `-1.x` stack): no such option
        options = {}
    agent = ToolCallingAgent(
        tools=[_smolagents_tool(fn) for fn in FUNCTIONS], model=model, name=AGENT_NAME,
        description="Answers with the tools.", max_steps=4, verbosity_level=0, **options,
    )  # fmt: skip
    for k, turn in enumerate(SCENARIOS[scenario].turns):
        if stream:
            for _ in agent.run(turn.request, reset=k == 0, stream=True):  # step by step
                pass
        else:
            agent.run(turn.request, reset=k == 0)


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    if stack.startswith("openlit"):
        with openlit_or(stack, out, scenario, lambda _: None):
            converse(base_url, scenario, stack.endswith("-stream"))
        return
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation import using_session
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor

        SmolagentsInstrumentor().instrument(tracer_provider=tracer_provider)
        if stack.startswith("smolagents-openinference-openai"):
            from openinference.instrumentation.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        with using_session(f"sess-{stack}-{scenario}"):
            converse(base_url, scenario, stack.endswith("-stream"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], {}, run))
