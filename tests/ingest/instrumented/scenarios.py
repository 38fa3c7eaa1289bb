"""What the scripted model does in each scenario, the tools the driver runs, and their schemas.

The scripted server and the driver both read this module: the server answers a request
with the step of the turn it belongs to, the driver runs the tools the step asks for.
Expected turns are not written here: the test derives them from what the server really
received and returned, so a driver or library quirk cannot make them agree by accident.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SYSTEM_PROMPT = "You are a helpful assistant. Use the tools when they help."
TRIAGE_PROMPT = (
    "You are the triage agent. Hand every weather question to the weather specialist; "
    "do not answer it yourself."
)
SPECIALIST_PROMPT = "You are the weather specialist. Use get_weather and answer in one sentence."
TRIAGE_AGENT = "triage_agent"
SPECIALIST_AGENT = "weather_specialist"
SPECIALIST_TOOLS = ("get_weather",)
DELEGATE = "<delegate>"
"""Stands for the transfer or delegation tool a multi-agent framework offers its triage
agent (the Agents SDK's `transfer_to_<agent>`, ADK's `transfer_to_agent`, an agent as a
tool): the server calls the one the request offers and fills its arguments
(`stacks.wire._delegate`: the specialist's name, or a task quoting the request)."""
MODEL = "gpt-4o-mini"
SERVED_MODEL = "gpt-4o-mini-2024-07-18"

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Evaluate an arithmetic expression and return the result.",
            "parameters": {
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_docs",
            "description": "Search the product documentation and return matching snippets.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "top_k": {"type": "integer", "default": 3},
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
]

_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def calculator(expression: str) -> str:
    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        raise ValueError(f"Unsupported expression: {expression}")

    return str(value(ast.parse(expression, mode="eval").body))


_DOCS = [
    {"id": "rate-01", "title": "Rate limits",
     "snippet": "Each API key may send 60 requests per minute."},
    {"id": "auth-01", "title": "Authentication",
     "snippet": "Send your API key as a bearer token in the Authorization header."},
]  # fmt: skip


def search_docs(query: str, top_k: int = 3) -> list[dict[str, Any]]:
    words = query.lower().split()
    hits = [{**doc, "score": sum(w in doc["title"].lower() for w in words)} for doc in _DOCS]
    return [h for h in hits if h["score"]][:top_k]


_WEATHER = {"Paris": {"temperature": 18, "conditions": "cloudy"}}


def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    if city not in _WEATHER:
        raise ValueError(f"Unknown city: {city}")
    return {"city": city, **_WEATHER[city], "unit": unit}


TOOL_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "calculator": calculator,
    "search_docs": search_docs,
    "get_weather": get_weather,
}


def run_tool(name: str, arguments: str) -> tuple[str, bool]:
    """What the model is told (the result as JSON text, or the exception the tool raised),
    and whether the tool failed."""
    try:
        result = TOOL_FUNCTIONS[name](**json.loads(arguments))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}", True
    return (result if isinstance(result, str) else json.dumps(result)), False


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Step:
    """One model reply: tool calls, or (with none) the final answer."""

    calls: tuple[Call, ...] = ()
    text: str | None = None


@dataclass(frozen=True)
class ScriptedTurn:
    request: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Scenario:
    name: str
    turns: tuple[ScriptedTurn, ...]


def _answer(text: str) -> Step:
    return Step(text=text)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("single_tool", (
            ScriptedTurn("What is 17 * 23 + 4? Use the calculator.", (
                Step((Call("calculator", {"expression": "17 * 23 + 4"}),)),
                _answer("17 * 23 + 4 = 395."),
            )),
        )),
        Scenario("parallel_tools", (
            ScriptedTurn(
                "What's the weather in Paris in celsius, and what do the docs say about rate "
                "limits?",
                (
                    Step((
                        Call("get_weather", {"city": "Paris", "unit": "celsius"}),
                        Call("search_docs", {"query": "rate limits", "top_k": 2}),
                    )),
                    _answer("It is 18 degrees C and cloudy in Paris. The docs say the API allows "
                            "60 requests per minute per key (see 'Rate limits')."),
                ),
            ),
        )),
        Scenario("no_tool", (
            ScriptedTurn("Say hello in French.", (_answer("Bonjour !"),)),
        )),
        Scenario("tool_error", (
            ScriptedTurn("What's the weather in Atlantis?", (
                Step((Call("get_weather", {"city": "Atlantis", "unit": "fahrenheit"}),)),
                _answer("Sorry, I could not get the weather for Atlantis: the weather tool "
                        "reported an unknown city."),
            )),
        )),
        Scenario("multi_turn", (
            ScriptedTurn("Search the docs for 'authentication'.", (
                Step((Call("search_docs", {"query": "authentication", "top_k": 1}),)),
                _answer("Authentication uses bearer API keys sent in the Authorization header "
                        "(doc 'auth-01')."),
            )),
            ScriptedTurn("Now compute 2 ** 10.", (
                Step((Call("calculator", {"expression": "2 ** 10"}),)),
                _answer("2 ** 10 = 1024."),
            )),
        )),
    )
}  # fmt: skip

MULTI_AGENT: dict[str, Scenario] = {
    s.name: s
    for s in (
        # A triage agent (`TRIAGE_PROMPT`, no tools of its own) delegates (step 0); the
        # specialist (`SPECIALIST_PROMPT`, `SPECIALIST_TOOLS`) calls get_weather and answers
        # (steps 1, 2); where the specialist ran as the triage agent's tool, the triage agent
        # answers last with the specialist's text (step 3). A second turn does it again.
        Scenario("handoff", (
            ScriptedTurn("What's the weather in Paris? Ask the weather specialist.", (
                Step((Call(DELEGATE, {}),)),
                Step((Call("get_weather", {"city": "Paris", "unit": "celsius"}),)),
                _answer("It is 18 degrees C and cloudy in Paris."),
                _answer("It is 18 degrees C and cloudy in Paris."),
            )),
            # The next run replays the first: both agents' messages, the transfer call.
            ScriptedTurn("And in fahrenheit? Ask the weather specialist again.", (
                Step((Call(DELEGATE, {}),)),
                Step((Call("get_weather", {"city": "Paris", "unit": "fahrenheit"}),)),
                _answer("It is 18 degrees (fahrenheit, as the tool reports it) in Paris."),
                _answer("It is 18 degrees (fahrenheit, as the tool reports it) in Paris."),
            )),
        )),
    )
}  # fmt: skip
"""Scenarios of several agents: a stack opts in to them (`record.Stack.scenarios`); every
stack runs `SCENARIOS`."""

ALL_SCENARIOS: dict[str, Scenario] = {**SCENARIOS, **MULTI_AGENT}
