"""A DSPy `ReAct` module over the scenario's tools, one call per user turn, under
OpenInference's DSPy instrumentation (module, predictor, adapter, LM and tool spans). DSPy's
LM calls chat completions through LiteLLM; its default `ChatAdapter` writes the signature's
fields into the messages as `[[ ## <field> ## ]]` text and parses the model's answer from
the same markers (ReAct's `next_thought`, `next_tool_name`, `next_tool_args` a step, the
extraction's `reasoning` and `answer` at the end). The conversation's earlier turns are the
signature's `dspy.History` input, as DSPy keeps a conversation; the turns of a scenario share
one OpenInference session. `openlit-dspy` runs the same module under `openlit.init`, its LM on
DSPy's LiteLLM engine (`engine="litellm"`): OpenLIT (1.45) has no DSPy instrumentation, and
DSPy 3.4's default engine (lm15) calls the model without LiteLLM, so under it OpenLIT records
no model call at all; on LiteLLM, OpenLIT's LiteLLM instrumentation records each (no
session). `dspy-openinference-json` configures DSPy's `JSONAdapter` instead: the same fields
asked for and answered as one JSON object."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.ingest.instrumented.scenarios import MODEL, SCENARIOS, SYSTEM_PROMPT
from tests.ingest.instrumented.stacks.common import main, openlit_or, providers
from tests.ingest.instrumented.stacks.tools import FUNCTIONS


def converse(base_url: str, scenario: str, json_adapter: bool = False, **lm: Any) -> None:
    import dspy

    # Fields as (type, field): this module's annotations are strings, which DSPy cannot read.
    assist = dspy.Signature({"question": (str, dspy.InputField()),
                             "history": (dspy.History, dspy.InputField()),
                             "answer": (str, dspy.OutputField())}, SYSTEM_PROMPT)  # fmt: skip
    lm = dspy.LM(f"openai/{MODEL}", api_base=base_url, api_key="test-key",
                 cache=False, num_retries=0, **lm)  # fmt: skip
    dspy.configure(lm=lm, **({"adapter": dspy.JSONAdapter()} if json_adapter else {}))
    agent = dspy.ReAct(assist, tools=list(FUNCTIONS),
                       max_iters=5)  # fmt: skip
    said: list[dict[str, Any]] = []
    for turn in SCENARIOS[scenario].turns:
        out = agent(question=turn.request, history=dspy.History(messages=list(said)))
        said.append({"question": turn.request, "answer": out.answer})


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    if stack.startswith("openlit"):
        with openlit_or(stack, out, scenario, lambda _: None):
            converse(base_url, scenario, engine="litellm")
        return
    with providers(stack, out, scenario) as (tracer_provider, _):
        from openinference.instrumentation import using_session
        from openinference.instrumentation.dspy import DSPyInstrumentor

        DSPyInstrumentor().instrument(tracer_provider=tracer_provider)
        with using_session(f"sess-{stack}-{scenario}"):
            converse(base_url, scenario, stack.endswith("-json"))


# DSPy's disk cache goes outside the repository (the LM's cache is off anyway); LiteLLM reads
# its bundled model prices instead of fetching them (it would, imported by OpenLIT).
_ENV = {"DSPY_CACHEDIR": "/tmp/dspy-stack-cache", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], _ENV, run))
