"""Tools an LLM judge may call mid-generation (opt-in per judge with `tools = [...]`).

Adding a tool: write one small module that defines a `JudgeTool`, then add it to `TOOLS`
below. A tool returns text for the judge; it may raise, and the engine hands the judge
`Error: ...` instead, so one failing tool never fails the turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class JudgeTool:
    name: str
    description: str
    parameters: Mapping[str, object]
    """JSON Schema of the arguments, as sent to the judge."""
    run: Callable[[Mapping[str, object]], str]

    def spec(self) -> dict[str, object]:
        """The OpenAI chat-completions `tools` entry."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": dict(self.parameters)}}


def _registry() -> dict[str, JudgeTool]:
    from turnscore.scorers.judge.tools import fetch_url

    return {t.name: t for t in (
        fetch_url.TOOL,
    )}


TOOLS: Mapping[str, JudgeTool] = _registry()

__all__ = ["TOOLS", "JudgeTool"]
