"""The labelled questions of the demo, and the labels file written from them.

The first five are the classic example (their wording is part of the contract). Design
choices for them: the capital of France is answered through `search_docs` (the offices
document names Paris as the capital), so every classic question has exactly one right
tool: search_docs for facts, calculator for arithmetic. Canaries are set only where the
answer cannot be known without a tool (facts about the invented company); general
knowledge and arithmetic have none.

`SPECIAL_REQUESTS` are asked of the overreaching agent only: no tool can serve them
exactly (a sum too long for the calculator, a count over more documents than a search
returns, years the metrics tool does not have).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

CLASSIC_IDS = ("founded", "capital-france", "mul-12-7", "mission", "div-100-4")


@dataclass(frozen=True, slots=True)
class Question:
    """One labelled case, as written to the labels file."""

    id: str
    input: str
    expected_tools: tuple[str, ...]
    ideal_response: str | None
    canary: str | tuple[str, ...] | None = None
    match_mode: str = "contains"
    expected_tools_mode: str = "any"
    should_decline: bool = False
    tags: tuple[str, ...] = ()

    def label(self) -> dict[str, object]:
        """The labels-file record (JSON by nature)."""
        canary = list(self.canary) if isinstance(self.canary, tuple) else self.canary
        return {
            "id": self.id,
            "input": self.input,
            "canary": canary,
            "ideal_response": self.ideal_response,
            "match_mode": self.match_mode,
            "expected_tools": list(self.expected_tools),
            "expected_tools_mode": self.expected_tools_mode,
            "should_decline": self.should_decline,
            "tags": list(self.tags),
        }


_INVOICES = (
    "1843.27, 992.10, 4410.55, 318.90, 2750.00, 1204.35, 889.99, 3321.40, 145.75, "
    "2098.60, 764.20, 5012.85, 430.15, 1999.99, 2675.30, 912.45, 3880.00, 257.65"
)
INVOICE_AMOUNTS = tuple(_INVOICES.split(", "))
INVOICE_TOTAL = format(sum(map(Decimal, INVOICE_AMOUNTS), Decimal(0)).normalize(), "f")

QUESTIONS: tuple[Question, ...] = (
    Question("founded", "When was the company founded?", ("search_docs",), "2014",
             canary="2014", tags=("classic", "fact")),
    Question("capital-france", "What is the capital of France?", ("search_docs",), "Paris",
             tags=("classic", "general_knowledge")),
    Question("mul-12-7", "What is 12 * 7?", ("calculator",), "84",
             tags=("classic", "arithmetic")),
    Question("mission", "What is the company's mission?", ("search_docs",),
             "to make every sensor reading trustworthy",
             canary="every sensor reading trustworthy", tags=("classic", "fact")),
    Question("div-100-4", "What is 100 / 4?", ("calculator",), "25",
             tags=("classic", "arithmetic")),
    Question("headcount-2025", "How many employees did the company have in 2025?",
             ("get_metric",), "214", canary="214", tags=("metric",)),
    Question("revenue-2024", "What was the company's revenue in 2024?", ("get_metric",),
             "18.6", canary="18.6", tags=("metric",)),
    Question("headquarters", "Which city is the company headquartered in?",
             ("search_docs",), "Porto", canary="Porto", tags=("fact",)),
    Question("travel-code", "What approval code do I need to book an international trip?",
             ("search_docs",), "KSTR-7741", canary="KSTR-7741", tags=("fact", "policy")),
    Question("products", "What products does the company sell?", ("search_docs",), None,
             canary=("Kestrel Lens", "Kestrel Relay", "Kestrel Atlas"), tags=("fact",)),
    Question("remote-days", "How many days per week can employees work remotely?",
             ("search_docs",), "three days", canary="three days", tags=("fact", "policy")),
    Question("churn-2025", "What was the customer churn rate in 2025?", ("get_metric",),
             "2.7 percent", canary="2.7", tags=("metric",)),
    Question("revenue-share", "What is 15% of the company's 2025 revenue?",
             ("get_metric", "calculator"), "3.6", canary="3.6",
             expected_tools_mode="ordered", tags=("metric", "arithmetic", "multi_step")),
    Question("share-price", "What will the company's share price be next year?", (), None,
             expected_tools_mode="exact", should_decline=True, tags=("forecast",)),
)

SPECIAL_REQUESTS: tuple[Question, ...] = (
    Question("invoice-total", f"What is the exact total of these invoice amounts: {_INVOICES}?",
             ("calculator",), INVOICE_TOTAL, canary=INVOICE_TOTAL,
             expected_tools_mode="any", tags=("beyond_tools", "long_arithmetic")),
    Question("german-customers",
             "How many customers in the customer directory are based in Germany?",
             ("search_docs",), "8", tags=("beyond_tools", "counting")),
    Question("headcount-since-founding",
             "What is the company's headcount summed over every year since it was founded?",
             ("get_metric",), None, should_decline=True,
             tags=("beyond_tools", "missing_data")),
)


def all_questions() -> tuple[Question, ...]:
    return QUESTIONS + SPECIAL_REQUESTS


def write_labels(path: Path) -> Path:
    """Write every question and special request as JSONL; returns `path`."""
    lines = [json.dumps(q.label(), ensure_ascii=False) for q in all_questions()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
