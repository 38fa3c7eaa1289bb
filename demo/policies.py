"""Simulated agent policies: what each demo agent does with each question.

Every question has a `Script`: the right tool calls, the answer an honest agent gives from
their results, a tool-free answer from "memory", the wrong tool a confused agent reaches for,
and the invention a hallucinating agent adds. The policies read scripts differently:
- `good` makes the right calls and states only what the tools returned;
- `wrong_tool` makes the wrong call where one is scripted and repeats whatever came back
  (on the five classic questions it picks the right tool exactly once: capital-france);
- `hallucinating` makes the right calls and pads some answers with an invention: a
  fabricated specific on `founded` (the only classic one), `headcount-2025` and `products`,
  and a method claim with no number or name in it on `revenue-2024`;
- `lazy` calls nothing; its company answers are vague (no specifics), so only canaries and
  tool-call accuracy expose it, while its arithmetic answers are unsupported numbers;
- `overreaching` behaves like `good` on the questions, and strains on the special requests
  no tool can serve (tool errors, repeated or partial calls, an estimate or a partial sum).
Tools really run (`world.run_tool`), so results are what the world says.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from turnscore.demo.questions import INVOICE_AMOUNTS, QUESTIONS, SPECIAL_REQUESTS, Question
from turnscore.demo.world import ToolResult, run_tool

POLICIES = ("good", "wrong_tool", "hallucinating", "lazy", "overreaching")


@dataclass(frozen=True, slots=True)
class ToolRequest:
    name: str
    arguments: Mapping[str, object]
    """JSON object, as the model would write it."""


@dataclass(frozen=True, slots=True)
class Call:
    request: ToolRequest
    result: ToolResult


@dataclass(frozen=True, slots=True)
class Step:
    """One model response that asked for tools (several calls: a parallel request)."""

    calls: tuple[Call, ...]
    text: str | None = None
    """Text the model wrote alongside its tool calls, if any."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What an agent did for one request: the tool-calling steps, then its final answer."""

    steps: tuple[Step, ...]
    answer: str


@dataclass(frozen=True, slots=True)
class Script:
    steps: tuple[tuple[ToolRequest, ...], ...]
    answer: str
    lazy: str
    wrong: ToolRequest | None = None
    """wrong_tool's call; None when it happens to choose right."""
    padding: str | None = None
    """hallucinating's invention, appended to the honest answer."""


def _t(tool: str, /, **arguments: object) -> ToolRequest:
    return ToolRequest(tool, arguments)


def _one(tool: str, /, **arguments: object) -> tuple[tuple[ToolRequest, ...], ...]:
    return ((_t(tool, **arguments),),)


_SCRIPTS: dict[str, Script] = {
    "founded": Script(
        _one("search_docs", query="company founded", top_k=3),
        "The company was founded in 2014.",
        "I don't have the founding date at hand, but the company has been around for years.",
        wrong=_t("get_metric", name="headcount", period="2025"),
        padding="It started with 12 engineers in a rented loft in Lisbon.",
    ),
    "capital-france": Script(
        _one("search_docs", query="capital of France", top_k=3),
        "Paris is the capital of France.",
        "That would be Paris.",
    ),
    "mul-12-7": Script(
        _one("calculator", expression="12 * 7"),
        "12 * 7 = 84.",
        "12 * 7 is 84.",
        wrong=_t("search_docs", query="12 * 7", top_k=3),
    ),
    "mission": Script(
        _one("search_docs", query="mission statement", top_k=3),
        "The mission is to make every sensor reading trustworthy.",
        "Something about making data more reliable for customers, if I remember right.",
        wrong=_t("get_metric", name="revenue", period="2025"),
    ),
    "div-100-4": Script(
        _one("calculator", expression="100 / 4"),
        "100 / 4 = 25.",
        "100 / 4 is 25.",
        wrong=_t("search_docs", query="100 / 4", top_k=3),
    ),
    "headcount-2025": Script(
        _one("get_metric", name="headcount", period="2025"),
        "The company had 214 employees in 2025.",
        "A few hundred people, I would guess.",
        wrong=_t("search_docs", query="employees 2025", top_k=3),
        padding="About 60 of them work in the Madrid office.",
    ),
    "revenue-2024": Script(
        _one("get_metric", name="revenue", period="2024"),
        "Revenue in 2024 was 18.6 EUR million.",
        "Revenue has been growing steadily, as far as I know.",
        wrong=_t("calculator", expression="2024"),
        padding="This figure was cross-checked against the audited annual accounts.",
    ),
    "headquarters": Script(
        _one("search_docs", query="headquartered city", top_k=3),
        "The company is headquartered in Porto, Portugal.",
        "In one of the bigger cities, I believe.",
        wrong=_t("get_metric", name="active_customers", period="2025"),
    ),
    "travel-code": Script(
        _one("search_docs", query="travel approval code international trips", top_k=3),
        "International trips need the travel approval code KSTR-7741 in the booking tool.",
        "You need an approval code from the travel team; I don't remember it exactly.",
    ),
    "products": Script(
        _one("search_docs", query="products Kestrel", top_k=3),
        "The company sells Kestrel Lens, Kestrel Relay and Kestrel Atlas.",
        "A few data-quality products for industrial customers.",
        wrong=_t("get_metric", name="active_customers", period="2026-H1"),
        padding="Kestrel Lens alone is used by 340 hospitals.",
    ),
    "remote-days": Script(
        _one("search_docs", query="remote work days per week", top_k=3),
        "Employees may work remotely up to three days per week.",
        "A couple of days a week, I think.",
        wrong=_t("get_metric", name="remote_days", period="2025"),
    ),
    "churn-2025": Script(
        _one("get_metric", name="churn_rate", period="2025"),
        "The customer churn rate in 2025 was 2.7 percent.",
        "Churn is low, as far as I know.",
        wrong=_t("calculator", expression="2025 - 2024"),
    ),
    "revenue-share": Script(
        (
            (_t("get_metric", name="revenue", period="2025"),),
            (_t("calculator", expression="24.0 * 0.15"),),
        ),
        "Revenue in 2025 was 24.0 EUR million, and 15% of that is 3.6 EUR million.",
        "Roughly a sixth of the yearly revenue, which is a sizeable amount.",
        wrong=_t("calculator", expression="15 / 100"),
    ),
    "share-price": Script(
        (),
        "None of my tools can forecast a share price, so I cannot answer that.",
        "It will probably go up if the business keeps growing.",
        wrong=_t("get_metric", name="revenue", period="2026-H1"),
    ),
}


def _invoice_total() -> tuple[tuple[Step, ...], str]:
    whole = _step(_t("calculator", expression=" + ".join(INVOICE_AMOUNTS)))
    first = _step(_t("calculator", expression=" + ".join(INVOICE_AMOUNTS[:6])),
                  text="The expression is too long, so I will add the first six amounts.")
    answer = (f"The first six amounts add up to {first.calls[0].result.output}; the whole list "
              "is too long for the calculator, so the total is roughly 35000.")
    return (whole, first), answer


def _german_customers() -> tuple[tuple[Step, ...], str]:
    steps = (
        _step(_t("search_docs", query="customer Germany", top_k=5)),
        _step(_t("search_docs", query="customer directory Germany GmbH", top_k=5),
              text="Searching again to find more German customers."),
    )
    names = sorted({str(hit["title"]).split(": ", 1)[1]
                    for step in steps for hit in _hits(step.calls[0].result)})
    answer = (f"I found {len(names)} customers based in Germany: {', '.join(names)}. "
              "There are probably one or two more.")
    return steps, answer


def _headcount_since_founding() -> tuple[tuple[Step, ...], str]:
    refused = _step(_t("get_metric", name="headcount", period="2014"))
    available = _step(
        *(_t("get_metric", name="headcount", period=p) for p in ("2024", "2025", "2026-H1")),
        text="Older years are not available; using the periods that exist.",
    )
    values = [str(json.loads(call.result.output or "{}")["value"]) for call in available.calls]
    summed = _step(_t("calculator", expression=" + ".join(values)))
    answer = ("Summed over the periods I could find, the headcount is "
              f"{summed.calls[0].result.output}.")
    return (refused, available, summed), answer


_STRAINED = {
    "invoice-total": _invoice_total,
    "german-customers": _german_customers,
    "headcount-since-founding": _headcount_since_founding,
}
"""The overreaching agent on the requests its tools cannot serve."""


def _hits(result: ToolResult) -> list[dict[str, object]]:
    hits: list[dict[str, object]] = json.loads(result.output or "[]")
    return hits


def _step(*requests: ToolRequest, text: str | None = None) -> Step:
    return Step(tuple(Call(r, run_tool(r.name, r.arguments)) for r in requests), text)


def _run(script_steps: tuple[tuple[ToolRequest, ...], ...]) -> tuple[Step, ...]:
    return tuple(_step(*requests) for requests in script_steps)


def _echo(call: Call) -> str:
    """wrong_tool's answer: whatever the tool gave back, in the tool's own words."""
    result = call.result
    if result.error is not None:
        return "The tool could not answer that."
    if call.request.name == "search_docs":
        hits = _hits(result)
        return str(hits[0]["snippet"]) if hits else "No matching documents were found."
    if call.request.name == "get_metric":
        data = json.loads(result.output or "{}")
        return f"{data['metric']} ({data['period']}): {data['value']} {data['unit']}."
    return f"The calculator returned {result.output}."


def questions_for(policy: str) -> tuple[Question, ...]:
    """Every policy answers every question; the overreaching one also gets the specials."""
    _check(policy)
    return QUESTIONS + SPECIAL_REQUESTS if policy == "overreaching" else QUESTIONS


def plan_turn(policy: str, question: Question) -> Plan:
    """What `policy` does with `question`; deterministic."""
    _check(policy)
    if question.id in _STRAINED:
        if policy != "overreaching":
            raise KeyError(f"question {question.id!r} is only asked of the overreaching agent")
        steps, answer = _STRAINED[question.id]()
        return Plan(steps, answer)
    script = _SCRIPTS[question.id]
    if policy == "lazy":
        return Plan((), script.lazy)
    if policy == "wrong_tool" and script.wrong is not None:
        step = _step(script.wrong)
        return Plan((step,), _echo(step.calls[0]))
    steps = _run(script.steps)
    if policy == "wrong_tool" and steps:
        return Plan(steps, _echo(steps[-1].calls[-1]))
    if policy == "hallucinating" and script.padding is not None:
        return Plan(steps, f"{script.answer} {script.padding}")
    return Plan(steps, script.answer)


def _check(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
