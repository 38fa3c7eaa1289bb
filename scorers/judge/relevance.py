"""How well each tool's declared purpose matches a request: the rules judge's notion of fit.

A tool's profile is what the model saw of it: the words of its name (3 points), of its
description, parameter names and parameter descriptions (1 point), and its parameters' enum
values (3 points: a request naming an allowed value points at that tool). A word several tools
share counts by its rarity among them (smoothed inverse document frequency, 1 for a word one
tool holds), so mostly what tells the tools apart counts. Arithmetic in the request (numbers
joined by operators, a percentage or a sum over numbers) points at a tool whose text speaks of
arithmetic or calculation, weighed the same way among the calculators. A general search
over documents, the web or a knowledge base is the fallback for a fact-seeking question that
no other tool matches (2 points); questions about the future are not facts a search can find.

For Tractability, what the tools cannot take on: an expression longer than a calculator
accepts, a count over items a search returns only a few at a time, periods a tool's enum lacks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import orjson

from turnscore.ingest.turn import Tool


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOP = _wordset(
    "a an and are as at be by can could do does for from get give has have how i in is it its "
    "me my need of on or our please show so tell than that the their them then there these this "
    "to us use using was we what when where which who why will with would you your want like "
    "just also any some all about into up out more most very many much one e g eg"
)
# Verbs too generic to show what a tool is for.
GENERIC = _wordset(
    "get fetch list search find lookup look query run call create make do check tool api data "
    "info by return returns given the current function"
)
NAME_POINTS, TEXT_POINTS, ENUM_POINTS, FALLBACK_POINTS = 3.0, 1.0, 3.0, 2.0


def _stem(word: str) -> str:
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)] + repl
    return word


def words(text: str | None) -> set[str]:
    """Content-word stems of `text` (camelCase and snake_case split)."""
    if not text:
        return set()
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return {_stem(w) for w in re.findall(r"[a-z][a-z0-9]+", text.lower()) if w not in _STOP}


def common_words(text: str | None) -> set[str]:
    """`words` without proper nouns (capitalised words inside a sentence): a company or
    product name says nothing about what a tool can do."""
    if not text:
        return set()
    tokens = text.split()
    kept = [w for i, w in enumerate(tokens)
            if not (i and w[:1].isupper() and not re.search(r"[.!?:]$", tokens[i - 1]))]
    return words(" ".join(kept))


def schema_of(tool: Tool) -> dict[str, object] | None:
    """The tool's parameters schema as an object, or None when absent or not JSON."""
    if not tool.parameters:
        return None
    try:
        schema = orjson.loads(tool.parameters)
    except orjson.JSONDecodeError:
        return None
    return schema if isinstance(schema, dict) else None


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: str | None
    description: str
    enum: tuple[str, ...]
    maximum: float | None
    max_length: int | None


def params(tool: Tool) -> tuple[Param, ...]:
    """The top-level parameters of the tool's schema (JSON by nature, read defensively)."""
    schema = schema_of(tool)
    props = schema.get("properties") if schema else None
    if not isinstance(props, dict):
        return ()
    out = []
    for name, spec in props.items():
        if not isinstance(spec, dict):
            continue
        enum = spec.get("enum")
        maximum, max_length = spec.get("maximum"), spec.get("maxLength")
        out.append(Param(
            str(name), spec.get("type") if isinstance(spec.get("type"), str) else None,
            str(spec.get("description") or ""),
            tuple(str(v) for v in enum if isinstance(v, str | int | float))
            if isinstance(enum, list) else (),
            float(maximum) if isinstance(maximum, int | float) else None,
            max_length if isinstance(max_length, int) else None))
    return tuple(out)


def required_numbers(tool: Tool) -> int:
    """How many of the tool's required top-level parameters are numbers."""
    schema = schema_of(tool)
    required = schema.get("required") if schema else None
    if not isinstance(required, list):
        return 0
    numeric = {p.name for p in params(tool) if p.type in ("integer", "number")}
    return sum(1 for name in required if name in numeric)


def is_enum_hit(hit: str) -> bool:
    """Whether a `Match` hit is a parameter's enum value named in the request."""
    return "=" in hit  # `param=value`: words and the other hits never hold one


def _profile(tool: Tool) -> dict[str, float]:
    """Term -> points for the tool's own words (name, description, parameters)."""
    text = words(" ".join([tool.description or "", *(f"{p.name} {p.description}"
                                                     for p in params(tool))])) - GENERIC
    name = words(tool.name.replace("_", " ")) - GENERIC
    return {w: (NAME_POINTS if w in name else 0.0) + (TEXT_POINTS if w in text else 0.0)
            for w in name | text}


_ARITH_WORD = re.compile(r"%|\b(percent(age)?|sum(s|med|ming)?|totals?|average|mean|median|"
                         r"multipl(y|ied)|divided?|plus|minus|times|add up|squared?|"
                         r"interest|product of)\b", re.I)
# A hyphen or an x counts only between spaces: 2025-02 is a month, 1920x1080 a size.
# A number starts only at the start of its run of digits, commas and dots: starting after
# every comma made a long "1,2,3,..." take quadratic time, and can match nothing more.
ARITH_OP = re.compile(r"(?<![\w.,])\d[\d,.]*+(\s*(\*\*|[+*/×÷^])\s*|\s+[-x]\s+)\(?-?\d[\d,.]*")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(\.\d+)?(?![\w])")
ARITHMETIC_HIT = "arithmetic: "
_CALC_STEMS = ("arithmet", "calculat", "math", "formula", "python", "spreadsheet", "equation")


def numbers(text: str) -> list[str]:
    return [m.group(0) for m in _NUMBER.finditer(text)]


def arithmetic_signal(request: str) -> tuple[float, str | None]:
    """Points for a calculator-like tool, and what in the request earned them."""
    if m := ARITH_OP.search(request):
        return 5.0, m.group(0)
    word = _ARITH_WORD.search(request)
    count = len(numbers(request)) + request.count("%")
    if word and count >= 2:
        return 4.0, f"{word.group(0)} over {len(numbers(request))} number(s)"
    if word and count:
        return 3.0, f"{word.group(0)} with a number"
    return (1.0, word.group(0)) if word else (0.0, None)


def is_calculator(tool: Tool) -> bool:
    vocab = common_words(f"{tool.name.replace('_', ' ')} {tool.description or ''} "
                         + " ".join(p.description for p in params(tool)))
    return any(w.startswith(s) for w in vocab for s in _CALC_STEMS)


_SEARCH_VERBS = ("search", "retriev", "lookup", "find", "query", "brows")
_CORPUS = ("document", "doc", "knowledge", "web", "internet", "wiki", "article", "page",
           "note", "file", "faq", "manual", "handbook", "intranet", "snippet", "kb", "catalog",
           "archive", "library")
_FACT_QUESTION = re.compile(r"^\s*(what|when|where|which|who|whom|whose|why|how|is|are|was|"
                            r"were|do|does|did|can|could|should|tell me|find|look up)\b|\?\s*$",
                            re.I)
_FUTURE = re.compile(r"\b(will|going to|predict(ion)?|forecast|projected?|next (year|month|"
                     r"quarter|week|decade))\b", re.I)


def is_general_search(tool: Tool) -> bool:
    vocab = words(f"{tool.name.replace('_', ' ')} {tool.description or ''}")
    return (any(w.startswith(v) for w in vocab for v in _SEARCH_VERBS)
            and any(w.startswith(c) for w in vocab for c in _CORPUS))


def fact_seeking(request: str) -> bool:
    return bool(_FACT_QUESTION.search(request)) and not _FUTURE.search(request)


def mentions(request: str, value: str) -> bool:
    """Whether `request` names `value`: verbatim, or every word of it."""
    if re.search(rf"(?<![\w-]){re.escape(value.lower())}(?![\w-])", request.lower()):
        return True
    value_words = words(value.replace("_", " "))
    return bool(value_words) and value_words <= words(request)


@dataclass(frozen=True, slots=True)
class Match:
    tool: str
    score: float
    hits: tuple[tuple[str, float], ...]
    """What in the request matched, with the points it earned."""

    def terms(self) -> str:
        return ", ".join(h for h, _ in self.hits) or "nothing"


def _rarity(holders: int, tools: int) -> float:
    """Smoothed inverse document frequency over the turn's tools, 1 for a word one tool
    holds: a word every tool shares tells them apart little (less than 1/holders)."""
    return math.log((tools + 1) / holders) / math.log(tools + 1)


def rank(tools: Sequence[Tool], request: str) -> dict[str, Match]:
    """Each tool's match with `request`, by tool name."""
    profiles = {t.name: _profile(t) for t in tools}
    shared: dict[str, int] = {}
    for profile in profiles.values():
        for w in profile:
            shared[w] = shared.get(w, 0) + 1
    req = words(request)
    arith, arith_hit = arithmetic_signal(request)
    calculators = {t.name for t in tools if is_calculator(t)}
    raw: dict[str, list[tuple[str, float]]] = {}
    for tool in tools:
        hits = [(w, round(p * _rarity(shared[w], len(tools)), 2))
                for w, p in sorted(profiles[tool.name].items()) if w in req]
        hits += [(f"{p.name}={v}", ENUM_POINTS) for p in params(tool) for v in p.enum
                 if mentions(request, v)]
        if arith and arith_hit and tool.name in calculators:
            hits.append((f"{ARITHMETIC_HIT}{arith_hit}",
                         round(arith * _rarity(len(calculators), len(tools)), 2)))
        raw[tool.name] = hits
    specific = any(raw[t.name] for t in tools if not is_general_search(t))
    if not specific and fact_seeking(request):
        for tool in tools:
            if is_general_search(tool):
                raw[tool.name].append(("a fact-seeking question for a general search",
                                       FALLBACK_POINTS))
    return {name: Match(name, round(sum(p for _, p in hits), 2), tuple(hits))
            for name, hits in raw.items()}


def best(matches: Iterable[Match]) -> Match | None:
    ordered = sorted(matches, key=lambda m: (-m.score, m.tool))
    return ordered[0] if ordered and ordered[0].score > 0 else None


# --- What the tools cannot take on (for Tractability) ----------------------------------

def calculator_gap(tools: tuple[Tool, ...], request: str) -> tuple[str, str] | None:
    """Every arithmetic tool has an input limit too short for the whole expression."""
    nums = numbers(request)
    if len(nums) < 3:
        return None
    needed = sum(len(n.replace(",", "")) for n in nums) + 3 * (len(nums) - 1)
    widest: tuple[int, str] | None = None
    for tool in tools:
        if not is_calculator(tool):
            continue
        limits = [p.max_length for p in params(tool) if p.max_length]
        stated = re.search(r"at most (\d+) characters", tool.description or "", re.I)
        limit = min(limits) if limits else int(stated.group(1)) if stated else None
        if limit is None or needed <= limit:
            return None  # this tool takes the whole expression
        widest = max(widest or (limit, tool.name), (limit, tool.name))
    if widest is None:
        return None
    limit, name = widest
    return (f"{name} takes at most {limit} characters; the {len(nums)} numbers need about "
            f"{needed}", f"exact arithmetic over {len(nums)} numbers in one go ({name} takes "
            f"at most {limit} characters)")


_COUNTED = re.compile(r"\b(?:how many|number of|count(?: the)?)\s+(?:of (?:the|these|those) )?"
                      r"(?:\d[\d,]*\s+)?([a-z]+)", re.I)
_PAGE = re.compile(r"\b(top|limit|max|results?|hits?|page|count|k)\b|how many", re.I)


def paged_collection(tools: tuple[Tool, ...], request: str) -> tuple[str, str] | None:
    """The counted items live behind a tool that returns only a few of them per call."""
    counted = _COUNTED.search(request)
    if not counted:
        return None
    noun = words(counted.group(1))
    matches = rank(tools, request)
    for tool in tools:
        if not noun or not noun <= words(f"{tool.description or ''}"):
            continue
        for p in params(tool):
            if (p.type == "integer" and p.maximum is not None and p.maximum <= 50
                    and _PAGE.search(f"{p.name.replace('_', ' ')} {p.description}")
                    and matches[tool.name].score >= 1):
                return (f"the {counted.group(1)} to count come from {tool.name}, which returns "
                        f"at most {int(p.maximum)} per call",
                        f"counting over the {counted.group(1)} (a query or count tool; "
                        f"{tool.name} returns at most {int(p.maximum)})")
    return None


_YEAR = re.compile(r"\b(19|20)\d{2}\b")
_SPAN = re.compile(r"\b((every|each|all( the)?)\s+(year|month|quarter|week|period)s?|since "
                   r"(it was founded|founding|the (start|beginning)|inception|(19|20)\d{2})|"
                   r"over the (last|past) \d+ (years|months|quarters))\b", re.I)
_PERIODISH = re.compile(r"\b(period|year|date|month|quarter|week)", re.I)


def data_gap(tools: tuple[Tool, ...], request: str) -> tuple[str, str] | None:
    """A matching tool's period parameter does not offer the periods the request needs."""
    matches = rank(tools, request)
    for tool in tools:
        if matches[tool.name].score < 2:
            continue
        for p in params(tool):
            if not p.enum or not (_PERIODISH.search(f"{p.name} {p.description}")
                                  or any(_YEAR.match(v) for v in p.enum)):
                continue
            offered = ", ".join(p.enum)
            absent = [m.group(0) for m in _YEAR.finditer(request)
                      if not any(v.startswith(m.group(0)) for v in p.enum)]
            span = _SPAN.search(request)
            if absent or span:
                asked = ", ".join(absent) if absent else span.group(0) if span else ""
                return (f"the request needs {asked}; {tool.name}'s {p.name} offers only "
                        f"{offered}", f"{p.name} values beyond {offered} on {tool.name}")
    return None
