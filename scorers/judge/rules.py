"""The rules judge `rules-v1`: the objective parts of each rubric, deterministic and offline.

Tool Usage: unknown tools, arguments that are not a JSON object or break the tool's JSON
Schema (missing required, wrong type, not in enum, ...; `scorers.schema_check`, as
`call_validity`), invented arguments (a parameter the schema does not declare), repeats of
an earlier call; against
a declared tool set, by relevance (`relevance.rank`): a call to a tool that matches the
request much worse than an uncalled one (a weaker tool), a call nothing in the request points
at whose arguments come from nowhere in the request (unrelated), and a tool that clearly
matches a part of the request no call covers (missed). A call is rated by the worse of its
choice and arguments. For a turn with no calls: a greeting or short reply (calling nothing is
right), a best-matching tool that does not fit (the request names little of what it is for,
or lacks the numbers it needs: calling nothing is right), else the best-matching tool's
strength: the better the match, the lower the score. `bench/judge_quality.py` measures these
rules on BFCL's gold calls, perturbations of them and its irrelevance set.
Tractability: exact arithmetic, counting, current-data lookups or strict rules, over few or
many items, with or without a tool that covers them, what the tools cannot take (a
calculator's input limit, a search that returns a few hits of the collection to count, period
values a metrics tool lacks), and strain in the answer (hand arithmetic, hedged figures where
precision was asked, admitted partial coverage, ...).
Groundedness: every number, quoted value and proper name in each sentence of the answer must
appear in the request or a tool result.

Each returns a `Verdict` in the LLM judge's shape, whose assessment lists the checks that
fired (also in `details["checks"]`); scores follow the bands in the prompt files. The logic's
version is the scorer version's first part (`scorers/judged.py`); the judge id stays.

(Over ~400 lines: the three rubrics' rules side by side, each a few short checks; the
shared vocabulary lives in `relevance`. Split per rubric, the modules would import each
other's helpers.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import orjson

from turnscore.ingest.turn import Call, Tool, Turn
from turnscore.scorers import schema_check
from turnscore.scorers.judge import relevance as rel
from turnscore.scorers.judge.config import RULES_JUDGE
from turnscore.scorers.judge.parse import Verdict

_GREETING = re.compile(r"^\W*(hi|hello|hey|thanks|thank you|thx|good (morning|afternoon|evening)"
                       r"|bye|goodbye|ok|okay|great|cool|got it|how are you|"
                       r"who are you|what can you do)\b", re.I)


def is_greeting(request: str) -> bool:
    """Greetings, thanks and short replies in a conversation (a clarification's answer)."""
    return bool(_GREETING.match(request)) and len(request.split()) <= 8


# --- Tool Usage ---------------------------------------------------------------------

def tool_usage(turn: Turn) -> Verdict:
    tools = {t.name: t for t in turn.tools}
    if not turn.calls:
        return _no_calls(turn)
    # Only a declared tool set says what else the agent could have called.
    matches = rel.rank(turn.tools, turn.request) if turn.tools_source == "declared" else {}
    called = {c.name for c in turn.calls}
    checks: list[str] = []
    verdicts: list[dict[str, object]] = []
    seen: dict[tuple[str, str], str] = {}
    for i, call in enumerate(turn.calls):
        label = call.call_id or f"#{i + 1}"
        choice: list[str] = []
        args: list[str] = []
        tool = tools.get(call.name)
        if tool is None and turn.tools_source == "declared":
            choice.append(f"unknown tool {call.name!r} (available: {', '.join(sorted(tools))})")
        parsed, arg_problems = _check_arguments(call, tool)
        args.extend(arg_problems)
        if tool is not None and call.name in matches:
            choice.extend(_choice_problems(tool, parsed, matches, called, turn.request))
        key = (call.name, _canonical(parsed, call.arguments))
        if key in seen:
            choice.append(f"repeats call {seen[key]} with the same arguments")
        else:
            seen[key] = label
        checks.extend(f"call {label} ({call.name}): {p}" for p in choice + args)
        verdicts.append({"call_id": call.call_id, "tool": call.name, "choice_ok": not choice,
                         "arguments_ok": not args, "problem": "; ".join(choice + args) or None})
    served, weight = 0.0, 0.0
    for i, v in enumerate(verdicts):
        ok = v["choice_ok"] and v["arguments_ok"]
        later_fix = any(w["choice_ok"] and w["arguments_ok"]
                        and (w["tool"] == v["tool"] or not v["choice_ok"])
                        for w in verdicts[i + 1:])
        served += 1.0 if ok else 0.0
        weight += 1.0 if ok or not later_fix else 0.5  # a corrected mistake counts for less
    if all(v["choice_ok"] for v in verdicts):  # a wrong choice already stands for the need
        for missed in _missed_tools(matches, called):
            checks.append(f"no call to {missed.tool} although it clearly matches a part of "
                          f"the request no call covers ({missed.terms()})")
            weight += 1.0
    share = served / weight
    score = 10 if share == 1 else 1 if served == 0 else max(3, min(9, round(10 * share)))
    summary = f"{int(served)} of {len(verdicts)} call(s) passed every check"
    return _verdict(score, checks, summary, {"calls": verdicts, "call_needed": None})


def _choice_problems(tool: Tool, parsed: object, matches: dict[str, rel.Match],
                     called: set[str], request: str) -> list[str]:
    """A much better matching tool left uncalled, or a call nothing in the request asks for."""
    own = matches[tool.name]
    better = rel.best(m for m in matches.values() if m.tool not in called)
    # At most 60% of the better tool's match and at least one distinctive word behind it
    # (a fixed floor missed a wrong tool matching nothing against one matching one rare
    # word): on BFCL's multiple set no gold call is that far below another declared tool,
    # and 95 in 100 wrong choices are.
    if (better is not None and better.score - own.score >= rel.TEXT_POINTS
            and own.score <= 0.6 * better.score):
        return [f"weaker tool: {better.tool} matches the request much better "
                f"({better.terms()}) than {tool.name} ({own.terms()})"]
    if own.score < rel.TEXT_POINTS and tool.description and not _grounded(parsed, request):
        return [f"unrelated call: nothing in the request points at {tool.name} (at most a "
                "word other tools share) and no argument value comes from the request"]
    return []


def _grounded(parsed: object, request: str) -> bool:
    """Whether any argument value (or none at all) comes from the request."""
    leaves: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif value is not None and not isinstance(value, bool):
            leaves.append(str(value))

    walk(parsed)
    req_words, req_numbers = rel.words(request), set(rel.numbers(request))
    return not leaves or any(rel.words(v) & req_words or set(rel.numbers(v)) & req_numbers
                             for v in leaves)


def _missed_tools(matches: dict[str, rel.Match], called: set[str]) -> list[rel.Match]:
    """Uncalled tools that clearly match a part of the request the called tools do not."""
    covered = {h for name in called if name in matches for h, _ in matches[name].hits}
    missed = []
    for m in matches.values():
        uncovered = [p for h, p in m.hits if h not in covered]
        # One word alone is no need ("New York" is not a request for the news tool, "a
        # chess championship" on a route planning trip not one for a chess club finder).
        if (m.tool not in called and m.score >= 4 and sum(uncovered) >= 3
                and sum(1 for p in uncovered if p >= rel.TEXT_POINTS) >= 2):
            missed.append(m)
    return missed


def _no_calls(turn: Turn) -> Verdict:
    if is_greeting(turn.request):
        return _verdict(10, ["greeting or thanks: calling nothing is right"],
                        "no calls", {"calls": [], "call_needed": False})
    top = rel.best(rel.rank(turn.tools, turn.request).values())
    if top is None or top.score < 2:
        return _verdict(9, ["no available tool evidently matches the request"], "no calls",
                        {"calls": [], "call_needed": False})
    tool = next(t for t in turn.tools if t.name == top.tool)
    if (misfit := _misfit(tool, top, turn.request)) is not None:
        return _verdict(8, [f"{top.tool} shares words with the request ({top.terms()}) but "
                            f"{misfit}: calling nothing is right"], "no calls",
                        {"calls": [], "call_needed": False})
    # The better the match, the more the missing call cost.
    if top.score >= 4:
        score, how = 1, f"{top.tool}'s purpose clearly matches"
    elif top.score >= 3:
        score, how = 3, f"{top.tool} matches"
    else:
        score, how = 4, f"{top.tool} partly matches"
    checks = [f"no call although {how} the request ({top.terms()})"]
    return _verdict(score, checks, "no calls", {"calls": [], "call_needed": True,
                                                "matched_tool": top.tool})


def _misfit(tool: Tool, match: rel.Match, request: str) -> str | None:
    """Why a tool that shares words with the request still does not fit it, else None.

    A tool fits when the request names what it is for and supplies what it needs: half the
    words of its name (or, when it uses none of them, two words of its description and
    parameters; arithmetic for a calculator; one of its enum values), and as many numbers as
    its required numeric parameters. BFCL's irrelevance set is made of requests that share a
    topic with the one tool offered ("What's the time right now?" with a
    `calculate_time(distance, speed)`).
    """
    numeric = rel.required_numbers(tool)
    given = len(rel.numbers(request))
    if given < numeric:
        return (f"the request gives {given} of the {numeric} numbers it needs" if given
                else f"the request gives none of the {numeric} numbers it needs")
    if any(h.startswith(rel.ARITHMETIC_HIT) or rel.is_enum_hit(h) for h, _ in match.hits):
        return None  # the request names an allowed value, or asks for arithmetic
    name = rel.words(re.sub(r"[_.]", " ", tool.name)) - rel.GENERIC
    named = len(name & rel.words(request))
    terms = sum(1 for _, p in match.hits if p >= rel.TEXT_POINTS)
    if name and 2 * named < len(name) and not (named == 0 and terms >= 2):
        return "the request names little of what it is for"
    return None


def _check_arguments(call: Call, tool: Tool | None) -> tuple[object, list[str]]:
    if call.arguments is None:
        return None, []  # not captured: nothing to check
    schema = tool.parameters if tool is not None else None
    if not call.arguments.strip():  # no arguments: an empty object
        parsed: object = {}
        checked = schema_check.check(schema, parsed) if schema else None
    else:  # the parse and check `call_validity` makes too (cached)
        found = schema_check.check_text(schema or None, call.arguments)
        if found.error is not None:
            return None, ["arguments are not valid JSON"]
        parsed, checked = found.value, found.checked
    if not isinstance(parsed, dict):
        return parsed, ["arguments are not a JSON object"]
    if tool is None or checked is None:
        return parsed, []
    if checked.unusable is not None:
        return parsed, []  # a broken schema is call_validity's finding, not the agent's
    invented = [f"invented argument {name!r}: {tool.name} declares no such parameter"
                for name in checked.undeclared]
    return parsed, [*checked.violations, *invented[:schema_check.MAX_VIOLATIONS]]


def _canonical(parsed: object, raw: str | None) -> str:
    if parsed is None:
        return raw or ""
    return orjson.dumps(parsed, option=orjson.OPT_SORT_KEYS).decode()


# --- Tractability -------------------------------------------------------------------

_KINDS: tuple[tuple[str, re.Pattern[str], tuple[str, ...], str], ...] = (
    ("arithmetic", re.compile(rf"{rel.ARITH_OP.pattern}|\b(calculate|compute|sum(s|med|"
                              r"ming)?|totals?|"
                              r"average|mean|median|multiply|divide|percent(age)?|interest|"
                              r"add up)\b|\d\s*%", re.I),
     ("calcul", "math", "comput", "arithmet", "python", "code", "execut", "eval", "interpret",
      "spreadsheet", "sql", "formula"), "exact arithmetic (a calculator or code tool)"),
    ("counting", re.compile(r"\b(how many|count|number of|tally|frequenc)", re.I),
     ("count", "sql", "query", "python", "code", "execut", "database", "aggregat", "analy",
      "spreadsheet"), "counting over many items (a query or code tool)"),
    ("lookup", re.compile(r"\b(look ?up|current|latest|today|tonight|right now|live|"
                          r"real-time|price of|stock|weather|forecast|order (status|#|number)|"
                          r"balance|"
                          r"availab|tracking)\b", re.I),
     ("search", "lookup", "web", "brows", "fetch", "retriev", "api"),
     "access to current data (a search or data tool)"),
    ("rule-bound", re.compile(r"\b(validate|regex|sort|alphabeti[sz]e|exactly|checksum|"
                              r"conform|according to the rules|format (it )?as)\b", re.I),
     ("validat", "regex", "format", "convert", "pars", "python", "code", "execut", "lint",
      "schema", "sort"), "strict rule application (a validator or code tool)"),
)
_VOLUME = re.compile(r"(?<![\d,])\b(\d[\d,]*+)\s+(rows|items|records|entries|lines|files|orders|"
                     r"customers|transactions|numbers|products|users|emails|documents|pages|invoices)\b",
                     re.I)


def request_kind(request: str) -> str:
    if is_greeting(request):
        return "conversational"
    for kind, pattern, _, _ in _KINDS:
        if pattern.search(request):
            return kind
    return "interpretive"


def item_count(request: str) -> int:
    """Rough size of the work: stated quantities, numbers listed, or rows pasted."""
    stated = [int(m.group(1).replace(",", "")) for m in _VOLUME.finditer(request)]
    numbers = len(re.findall(r"(?<![\w.])\d[\d,.]*", request))
    rows = sum(1 for line in request.splitlines()
               if re.match(r"\s*([-*•]|\d+[.)]|\|)", line) or line.count(",") >= 2
               or "\t" in line)
    return max([numbers, rows, *stated])


def _covers(tools: Iterable[Tool], stems: tuple[str, ...], request: str, kind: str) -> bool:
    matches = rel.rank(tuple(tools), request) if kind == "lookup" else {}
    for tool in tools:
        vocab = rel.common_words(f"{tool.name.replace('_', ' ')} {tool.description or ''}")
        if any(w.startswith(s) for w in vocab for s in stems):
            return True
        if matches.get(tool.name, rel.Match(tool.name, 0, ())).score > 0:
            return True
    return False


_SKIPPED = re.compile(r"\b(and so on|similarly for the (rest|others)|the rest (follow|are "
                      r"similar)|for brevity|omitted|i'?ll skip|skipping)\b|\betc\.?\s*$", re.I)
# Numbers start at the start of their run (see `relevance.ARITH_OP`): linear on "1,1,1...".
_HAND_MATH = re.compile(r"(?<![\d,.])\d[\d,.]*+\s*[-+*/x×]\s*\d[\d,.]*+\s*=\s*\d")
_RUNNING = re.compile(r"\b(running (total|count)|so far|that makes|that's \d+)\b", re.I)
_APPROX = re.compile(r"(\b(approximately|roughly|about|around|estimated?|nearly|almost)\s+\d|"
                     r"~\s*\d|\b(probably|i counted|or so|give or take|at least \d))", re.I)
_PARTIAL = re.compile(r"\btoo (long|many|large) for\b|\bi could (only )?(find|fit|check|see)\b|"
                      r"\bonly (the )?first \w+\b|\bone or two more\b|\b(a few|some) more\b|"
                      r"\bthe rest (is|are) (missing|not)\b", re.I)


def strain_signs(answer: str | None, kind: str, exacting: bool = True) -> list[str]:
    """Signs of strain in `answer`; hedged figures count only where the request is
    `exacting` (bulky, or asking for an exact figure)."""
    if not answer:
        return []
    signs = []
    if len(_HAND_MATH.findall(answer)) >= 3:
        signs.append("arithmetic done by hand")
    numbered = sum(1 for line in answer.splitlines() if re.match(r"\s*\(?\d+[.)]\s", line))
    if numbered >= 15 or len(_RUNNING.findall(answer)) >= 2:
        signs.append("rows counted one by one")
    if _SKIPPED.search(answer):
        signs.append("steps skipped (and so on, for brevity, ...)")
    items = [line.strip() for line in answer.splitlines() if line.strip()]
    if len(items) >= 6:
        third = len(items) // 3
        first = sum(map(len, items[:third])) / third
        last = sum(map(len, items[-third:])) / third
        if last < 0.4 * first:
            signs.append("quality dropping over the answer (later items much shorter)")
    if kind in ("arithmetic", "counting") and exacting and _APPROX.search(answer):
        signs.append("an approximate figure where an exact one was asked")
    if kind != "interpretive" and _PARTIAL.search(answer):
        signs.append("the answer admits it covers only part of the work")
    return signs


def tractability(turn: Turn) -> Verdict:
    kind = request_kind(turn.request)
    items = item_count(turn.request)
    checks: list[str] = [f"request kind: {kind}"]
    missing = None
    exacting = items >= 5 or bool(re.search(r"\bexact(ly)?\b|\bprecise", turn.request, re.I))
    if kind in ("conversational", "interpretive"):
        score = 10
        if kind == "interpretive" and items >= 50:
            score = 7
            checks.append(f"interpretive work repeated over about {items} items")
    else:
        score, missing, found = _coverage(kind, turn, items)
        checks.extend(found)
        exacting = exacting or missing is not None
    if kind != "conversational" and (gap := rel.data_gap(turn.tools, turn.request)):
        checks.append(f"data out of the tools' reach: {gap[0]}")
        missing = missing or gap[1]
        score = min(score, 4)
    signs = strain_signs(turn.final_answer, kind, exacting)
    checks.extend(f"strain in the answer: {s}" for s in signs)
    score = max(0, score - 2 * len(signs))
    summary = f"missing capability: {missing}" if missing else "no missing capability found"
    return _verdict(score, checks, summary, {"request_kind": kind, "missing_capability": missing,
                                             "strain_signs": signs})


def _coverage(kind: str, turn: Turn, items: int) -> tuple[int, str | None, list[str]]:
    """Score before strain, the missing capability, and the checks that fired."""
    _, _, stems, capability = next(k for k in _KINDS if k[0] == kind)
    covered = _covers(turn.tools, stems, turn.request, kind)
    if covered and kind == "arithmetic" and (limit := rel.calculator_gap(turn.tools, turn.request)):
        return 5, limit[1], [f"a tool covers the arithmetic part only in pieces: {limit[0]}"]
    if covered:
        return 9, None, [f"a tool covers the {kind} part"]
    if kind == "counting" and (paged := rel.paged_collection(turn.tools, turn.request)):
        return 5, paged[1], ["no tool covers the counting part, only in pieces", paged[0]]
    if kind == "counting" and items < 20:
        top = rel.best(rel.rank(turn.tools, turn.request).values())
        if top is not None and top.score >= 2:  # a figure a tool can return, not a count
            return 9, None, [f"{top.tool} can return the figure asked for ({top.terms()})"]
    checks = [f"no tool covers the {kind} part"]
    if kind == "lookup" or items >= 20:
        checks.append("current data out of reach" if kind == "lookup"
                      else f"about {items} items by hand")
        return 2, capability, checks
    checks.append(f"about {items} items by hand")
    return (7 if items <= 3 else 5), capability, checks


# --- Groundedness -------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(\.\d+)?")
_QUOTED = re.compile(r"[\"“]([^\"”]{3,80})[\"”]")
_PROPER = re.compile(r"(?<=[a-z,;:]\s)([A-Z][a-zA-Z]{2,}(?:\s[A-Z][a-zA-Z]{2,})*)")


def _norm(text: str) -> str:
    return re.sub(r"(?<=\d),(?=\d{3})", "", " ".join(text.lower().split()))


def specifics(sentence: str) -> list[str]:
    found = [m.group(0).replace(",", "") for m in _NUMBER.finditer(sentence)]
    found += [m.group(1) for m in _QUOTED.finditer(sentence)]
    found += [m.group(1) for m in _PROPER.finditer(sentence)]
    return list(dict.fromkeys(found))


def groundedness(turn: Turn) -> Verdict | None:
    """None when the answer has no specific the rules can check."""
    evidence = _norm("\n".join([turn.request, *(c.result or "" for c in turn.calls),
                                *(c.error or "" for c in turn.calls)]))
    claims: list[dict[str, object]] = []
    checks: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", turn.final_answer or ""):
        sentence = sentence.strip()
        wanted = specifics(sentence)
        if not wanted:
            continue
        missing = [s for s in wanted if _norm(s).rstrip(".") not in evidence]
        claims.append({"claim": sentence, "supported": not missing, "source": None,
                       "missing": missing})
        if missing:
            checks.append(f"not in the request or any tool result: {', '.join(missing)}")
    if not claims:
        return None
    supported = sum(1 for c in claims if c["supported"])
    share = supported / len(claims)
    score = 10 if share == 1 else min(8, round(10 * share))
    return _verdict(score, checks, f"{supported} of {len(claims)} specific claim(s) supported",
                    {"claims": claims})


def _verdict(score: float, checks: list[str], summary: str, details: dict[str, object]
             ) -> Verdict:
    fired = "; ".join(checks) if checks else "none (every check passed)"
    assessment = f"{RULES_JUDGE}: {summary}. Checks fired: {fired}."
    return Verdict(assessment, float(score), {**details, "checks": checks})
