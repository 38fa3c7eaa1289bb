"""The demo world: a fictional company's knowledge base and the tools agents use on it.

Kestrel Analytics is invented, so its facts (founding year, mission, travel approval code,
metrics) can only be known by calling a tool: those facts are the canaries of the labels.
The tools have deliberate limits so some requests cannot be served exactly:
`search_docs` returns at most 5 hits (counting a long customer directory is out of reach),
`calculator` refuses expressions over 80 characters (a long sum must be split or guessed),
and `get_metric` only knows three periods (older years do not exist for it).
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

COMPANY = "Kestrel Analytics"
SEARCH_MAX_TOP_K = 5
CALCULATOR_MAX_CHARS = 80


@dataclass(frozen=True, slots=True)
class Document:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it; `parameters` is a JSON Schema (JSON by nature)."""

    name: str
    description: str
    parameters: Mapping[str, object]

    def definition(self) -> dict[str, object]:
        """The `gen_ai.tool.definitions` entry for this tool."""
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returned: `output` on success, `error` (and no output) on failure."""

    output: str | None
    error: str | None = None


class ToolError(Exception):
    """A tool refused its input; the message is what the agent gets back."""


_CUSTOMERS: tuple[tuple[str, str, str, str], ...] = (
    ("Brenner Stahl GmbH", "Dortmund", "Germany", "Kestrel Lens"),
    ("Aguas do Douro", "Porto", "Portugal", "Kestrel Relay"),
    ("Nordwind Energie AG", "Bremen", "Germany", "Kestrel Lens"),
    ("Lumen Foods", "Lyon", "France", "Kestrel Atlas"),
    ("Hafenwerk Logistik", "Hamburg", "Germany", "Kestrel Relay"),
    ("Vistula Rail", "Gdansk", "Poland", "Kestrel Lens"),
    ("Alpen Kunststoff GmbH", "Munich", "Germany", "Kestrel Atlas"),
    ("Costa Verde Ceramics", "Aveiro", "Portugal", "Kestrel Lens"),
    ("Rheinmetall Sensorik", "Cologne", "Germany", "Kestrel Lens"),
    ("Baltic Wind Farms", "Tallinn", "Estonia", "Kestrel Relay"),
    ("Saxonia Pharma", "Dresden", "Germany", "Kestrel Atlas"),
    ("Iberia Water Works", "Seville", "Spain", "Kestrel Lens"),
    ("Schwarzwald Präzision", "Freiburg", "Germany", "Kestrel Relay"),
    ("Loire Vineyards Cooperative", "Nantes", "France", "Kestrel Lens"),
    ("Elbe Chemie", "Magdeburg", "Germany", "Kestrel Lens"),
    ("Adriatic Ports", "Rijeka", "Croatia", "Kestrel Relay"),
)

DOCUMENTS: tuple[Document, ...] = (
    Document(
        "about", "About the company",
        f"{COMPANY} was founded in 2014 by Ines Calado and Tomas Reyes. The company builds "
        "data-quality software for industrial sensors.",
    ),
    Document(
        "mission", "Mission statement",
        "Our mission is to make every sensor reading trustworthy. We publish our "
        "data-quality methods openly.",
    ),
    Document(
        "offices", "Offices",
        f"{COMPANY} is headquartered in Porto, Portugal. The European sales office is in "
        "Paris, the capital of France, and the engineering hub is in Tallinn.",
    ),
    Document(
        "products", "Products",
        "Kestrel Lens monitors data quality on live sensor streams. Kestrel Relay is an edge "
        "gateway that buffers readings offline. Kestrel Atlas maps the lineage of every "
        "reading.",
    ),
    Document(
        "remote-work", "Remote work policy",
        "Employees may work remotely up to three days per week. Core collaboration hours "
        "are from ten to three, office time.",
    ),
    Document(
        "travel", "Travel policy",
        "International trips need the travel approval code KSTR-7741 in the booking tool. "
        "Economy class is required for flights under six hours.",
    ),
    *(
        Document(
            f"customer-{index:02d}", f"Customer directory: {name}",
            f"Customer {name} is based in {city}, {country}, and uses {product}.",
        )
        for index, (name, city, country, product) in enumerate(_CUSTOMERS, start=1)
    ),
)

METRIC_NAMES = ("revenue", "headcount", "active_customers", "churn_rate")
METRIC_PERIODS = ("2024", "2025", "2026-H1")
_METRIC_UNITS = {
    "revenue": "EUR million", "headcount": "employees", "active_customers": "customers",
    "churn_rate": "percent",
}  # fmt: skip
_METRICS: dict[tuple[str, str], float] = {
    ("revenue", "2024"): 18.6, ("revenue", "2025"): 24.0, ("revenue", "2026-H1"): 13.1,
    ("headcount", "2024"): 187, ("headcount", "2025"): 214, ("headcount", "2026-H1"): 229,
    ("active_customers", "2024"): 31, ("active_customers", "2025"): 36,
    ("active_customers", "2026-H1"): 38,
    ("churn_rate", "2024"): 3.9, ("churn_rate", "2025"): 2.7, ("churn_rate", "2026-H1"): 2.2,
}  # fmt: skip

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search_docs",
        f"Search {COMPANY}' internal documents (company facts, offices, products, "
        "policies, customer directory) and return the best matching snippets.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Keywords to search for."},
                "top_k": {
                    "type": "integer", "minimum": 1, "maximum": SEARCH_MAX_TOP_K, "default": 3,
                    "description": "How many snippets to return.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "calculator",
        "Evaluate an arithmetic expression (numbers, + - * / ** and parentheses; at most "
        f"{CALCULATOR_MAX_CHARS} characters) and return the result.",
        {
            "type": "object",
            "properties": {
                "expression": {
                    "type": "string", "maxLength": CALCULATOR_MAX_CHARS,
                    "description": 'Arithmetic expression, e.g. "2 * (3 + 4)".',
                },
            },
            "required": ["expression"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        "get_metric",
        f"Look up one of {COMPANY}' business metrics for a reporting period.",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": list(METRIC_NAMES)},
                "period": {"type": "string", "enum": list(METRIC_PERIODS)},
            },
            "required": ["name", "period"],
            "additionalProperties": False,
        },
    ),
)
TOOL_NAMES = tuple(tool.name for tool in TOOLS)

_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "does", "for", "from", "how", "in", "is",
    "it", "of", "on", "or", "our", "the", "their", "to", "was", "what", "when", "where",
    "which", "who", "why", "with",
))


def _tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in _STOPWORDS]


def search_docs(query: str, top_k: int = 3) -> str:
    """Snippets of the documents sharing the most keywords with `query`, as JSON."""
    if not isinstance(top_k, int) or not 1 <= top_k <= SEARCH_MAX_TOP_K:
        raise ToolError(f"top_k must be an integer from 1 to {SEARCH_MAX_TOP_K}, got {top_k!r}")
    wanted = set(_tokens(query))
    scored = []
    for order, doc in enumerate(DOCUMENTS):
        score = len(wanted & set(_tokens(f"{doc.title} {doc.text}")))
        if score:
            scored.append((-score, order, doc))
    hits = [
        {"id": doc.doc_id, "title": doc.title, "snippet": doc.text, "score": -neg}
        for neg, _, doc in sorted(scored)[:top_k]
    ]
    return json.dumps(hits, ensure_ascii=False)


_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow,
}  # fmt: skip


def _evaluate(node: ast.expr) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if isinstance(node.value, bool):
            raise ToolError("booleans are not numbers here")
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        if isinstance(node.op, ast.Pow) and abs(_evaluate(node.right)) > 64:
            raise ToolError("exponent too large")
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    raise ToolError(f"unsupported syntax: {ast.dump(node)[:60]}")


def format_number(value: float) -> str:
    """Whole numbers without a decimal point; others to 10 significant digits."""
    return str(int(value)) if value.is_integer() else f"{value:.10g}"


def calculator(expression: str) -> str:
    """The value of an arithmetic expression, formatted with `format_number`."""
    if len(expression) > CALCULATOR_MAX_CHARS:
        raise ToolError(
            f"expression too long: {len(expression)} characters (limit {CALCULATOR_MAX_CHARS})"
        )
    try:
        tree = ast.parse(expression, mode="eval")
        return format_number(_evaluate(tree.body))
    except SyntaxError as exc:
        raise ToolError(f"could not parse expression: {exc.msg}") from None
    except ZeroDivisionError:
        raise ToolError("division by zero") from None


def get_metric(name: str, period: str) -> str:
    """One metric value with its unit, as JSON."""
    if name not in METRIC_NAMES:
        raise ToolError(f"unknown metric {name!r}; choose one of {', '.join(METRIC_NAMES)}")
    if period not in METRIC_PERIODS:
        raise ToolError(f"unknown period {period!r}; choose one of {', '.join(METRIC_PERIODS)}")
    value = _METRICS[name, period]
    return json.dumps(
        {"metric": name, "period": period, "value": value, "unit": _METRIC_UNITS[name]}
    )


def run_tool(name: str, arguments: Mapping[str, object]) -> ToolResult:
    """Execute a tool the way an agent runtime would: refusals become `error`, not raises."""
    try:
        if name == "search_docs":
            top_k = arguments.get("top_k", 3)
            output = search_docs(str(arguments["query"]), top_k)  # type: ignore[arg-type]
        elif name == "calculator":
            output = calculator(str(arguments["expression"]))
        elif name == "get_metric":
            output = get_metric(str(arguments["name"]), str(arguments["period"]))
        else:
            raise ToolError(f"unknown tool {name!r}; available: {', '.join(TOOL_NAMES)}")
    except KeyError as exc:
        return ToolResult(None, f"missing required argument {exc.args[0]!r}")
    except ToolError as exc:
        return ToolResult(None, str(exc))
    return ToolResult(output)
