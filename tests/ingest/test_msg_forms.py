"""Message forms of LiteLLM's OTel callback, OpenLIT and Mastra 0.x, recorded with the real
OTel SDK (the convention fixtures' `Recorder`) in the shapes their source emits, decoded
and assembled. `tests/ingest/test_stacks.py` checks LiteLLM and OpenLIT on real exports
(`litellm-otel`, `openlit-openai`); these pin each rule on its own.

- Mastra's 0.x exporter (mastra-ai/mastra `observability/otel-exporter/src/
  span-converter.ts`) copies every span's input and output to the bare keys `input` /
  `output` "for Laminar compatibility": content the Mastra convention declares itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ingest.test_stack_forms import turns_of
from turnscore.ingest import attributes as A
from turnscore.ingest.conventions.mastra import MASTRA

SYSTEM = "Be terse."


def _j(value: Any) -> str:
    return json.dumps(value)


# --- Mastra 0.x -------------------------------------------------------------------------


def test_mastra_0x_bare_input_output_are_its_own_content() -> None:
    """Declared by Mastra, not left to another convention that happens to use the keys."""
    assert {A.MASTRA_INPUT, A.MASTRA_OUTPUT} <= set(MASTRA.content_keys)


def test_mastra_0x_bare_input_output_stay_out_of_turn_attributes(tmp_path: Path) -> None:
    """A short request is no leak needle (`assemble._root_attributes`), and the agent
    span's `input` holds the earlier exchange too: only the declaration keeps it out."""
    earlier = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]
    history = [*earlier, {"role": "user", "content": "Thanks"}]
    agent = {
        "gen_ai.operation.name": "agent.run", "span.kind": "server",
        "mastra.span.type": "agent_run", "agent.id": "greeter", "deployment": "prod",
        "input": _j(history), "output": _j({"text": "You're welcome.", "files": []}),
    }
    generation = {
        "gen_ai.operation.name": "chat", "mastra.span.type": "llm_generation",
        "input": _j({"messages": [{"role": "system", "content": SYSTEM}, *history]}),
        "gen_ai.prompt": _j({"messages": [{"role": "system", "content": SYSTEM}, *history]}),
        "output": _j({"text": "You're welcome.", "toolCalls": []}),
        "gen_ai.completion": _j({"text": "You're welcome.", "toolCalls": []}),
        "gen_ai.request.model": "gpt-4o-mini",
    }

    def record(r: Any) -> None:
        with r.span("agent.greeter", agent), r.span("chat gpt-4o-mini", generation):
            pass

    [turn] = turns_of(record, tmp_path)
    assert (turn.request, turn.final_answer) == ("Thanks", "You're welcome.")
    attributes = json.loads(turn.attributes)
    assert {"input", "output"}.isdisjoint(attributes)
    assert attributes["deployment"] == "prod"
