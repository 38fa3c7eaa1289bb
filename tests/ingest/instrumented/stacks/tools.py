"""The corpus's three tools as Python functions, for frameworks that derive each tool's
schema from its signature and docstring (Google style: smolagents needs the `Args:`)."""

# No `from __future__ import annotations`: frameworks read these annotations as objects.

from typing import Any, Literal

from tests.ingest.instrumented import scenarios


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression and return the result.

    Args:
        expression: The arithmetic expression, e.g. "2 + 3 * 4".
    """
    return scenarios.calculator(expression)


def search_docs(query: str, top_k: int = 3) -> list[dict[str, Any]]:
    """Search the product documentation and return matching snippets.

    Args:
        query: What to look for.
        top_k: How many snippets to return at most.
    """
    return scenarios.search_docs(query, top_k)


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """Get the current weather for a city.

    Args:
        city: The city's name.
        unit: The temperature unit.
    """
    return scenarios.get_weather(city, unit)


FUNCTIONS = (calculator, search_docs, get_weather)
