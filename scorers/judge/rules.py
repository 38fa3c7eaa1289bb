"""The rules judge `rules-v1`: the objective parts of each rubric, deterministic and offline.

Tool Usage: unknown tools, arguments that are not a JSON object or break the tool's JSON
Schema (missing required, wrong type, not in enum, ...), repeats of an earlier call, and for
a turn with no calls: a greeting (calling nothing is right), a tool whose name and
description clearly match the request (a serious miss), a partial match (a likely miss).
Tractability: exact arithmetic, counting, current-data lookups or strict rules, over few or
many items, with or without a tool that covers them, and strain patterns in the answer.
Groundedness: every number, quoted value and proper name in each sentence of the answer must
appear in the request or a tool result.

Each returns a `Verdict` in the LLM judge's shape, whose assessment lists the checks that
fired (also in `details["checks"]`); scores follow the bands in the prompt files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import jsonschema
import orjson

from turnscore.ingest.turn import Call, Tool, Turn
from turnscore.scorers.judge.parse import Verdict

RULES_JUDGE = "rules-v1"



def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOP = _wordset(
    "a an and are as at be by can could do does for from get give has have how i in is it its "
    "me my need of on or our please show so tell than that the their them then there these this "
    "to us use using was we what when where which who why will with would you your want like "
    "just also any some all about into up out more most very"
)
# Verbs too generic to show what a tool is for.
_GENERIC = _wordset(
    "get fetch list search find lookup look query run call create make do check tool api data "
    "info by return returns given the current function"
)


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


def tool_match(tool: Tool, request: str) -> tuple[int, set[str]]:
    """How clearly `tool`'s purpose matches `request`: 2 clearly, 1 partly, 0 not; the hits."""
    req = words(request)
    name_hits = (words(tool.name.replace("_", " ")) - _GENERIC) & req
    desc_hits = (words(tool.description) - _GENERIC) & req
    hits = name_hits | desc_hits
    if (name_hits and desc_hits) or len(desc_hits) >= 3:
        return 2, hits
    if name_hits or len(desc_hits) >= 2:
        return 1, hits
    return 0, hits


_GREETING = re.compile(r"^\W*(hi|hello|hey|thanks|thank you|thx|good (morning|afternoon|evening)"
                       r"|bye|goodbye|ok|okay|great|cool)\b", re.I)


def is_greeting(request: str) -> bool:
    return bool(_GREETING.match(request)) and len(request.split()) <= 8


# --- Tool Usage ---------------------------------------------------------------------

def tool_usage(turn: Turn) -> Verdict:
    tools = {t.name: t for t in turn.tools}
    if not turn.calls:
        return _no_calls(turn)
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
    share = served / weight
    score = 10 if share == 1 else 1 if served == 0 else max(3, min(9, round(10 * share)))
    summary = f"{int(served)} of {len(verdicts)} call(s) passed every check"
    return _verdict(score, checks, summary, {"calls": verdicts, "call_needed": None})


def _no_calls(turn: Turn) -> Verdict:
    if is_greeting(turn.request):
        return _verdict(10, ["greeting or thanks: calling nothing is right"],
                        "no calls", {"calls": [], "call_needed": False})
    best, hits, name = 0, set[str](), None
    for tool in turn.tools:
        strength, found = tool_match(tool, turn.request)
        if strength > best:
            best, hits, name = strength, found, tool.name
    matched = ", ".join(sorted(hits))
    if best == 2:
        checks = [f"no call although {name}'s purpose clearly matches the request ({matched})"]
        return _verdict(1, checks, "no calls", {"calls": [], "call_needed": True,
                                                "matched_tool": name})
    if best == 1:
        checks = [f"no call although {name} partly matches the request ({matched})"]
        return _verdict(4, checks, "no calls", {"calls": [], "call_needed": True,
                                                "matched_tool": name})
    return _verdict(9, ["no available tool evidently matches the request"], "no calls",
                    {"calls": [], "call_needed": False})


def _check_arguments(call: Call, tool: Tool | None) -> tuple[object, list[str]]:
    if call.arguments is None:
        return None, []  # not captured: nothing to check
    try:
        parsed = orjson.loads(call.arguments) if call.arguments.strip() else {}
    except orjson.JSONDecodeError:
        return None, ["arguments are not valid JSON"]
    if not isinstance(parsed, dict):
        return parsed, ["arguments are not a JSON object"]
    if tool is None or not tool.parameters:
        return parsed, []
    try:
        schema = orjson.loads(tool.parameters)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except (orjson.JSONDecodeError, jsonschema.SchemaError, TypeError):
        return parsed, []  # a broken schema is call_validity's finding, not the agent's
    problems = []
    for err in sorted(cls(schema).iter_errors(parsed), key=lambda e: list(e.path)):
        where = "/".join(str(p) for p in err.path)
        problems.append(f"{where}: {err.message}" if where else err.message)
    return parsed, problems[:5]


def _canonical(parsed: object, raw: str | None) -> str:
    if parsed is None:
        return raw or ""
    return orjson.dumps(parsed, option=orjson.OPT_SORT_KEYS).decode()


# --- Tractability -------------------------------------------------------------------

_KINDS: tuple[tuple[str, re.Pattern[str], tuple[str, ...], str], ...] = (
    ("arithmetic", re.compile(r"\d[\d,.]*\s*[-+*/x×÷^]\s*\d|\b(calculate|compute|sum|total|"
                              r"average|mean|median|multiply|divide|percent(age)?|interest|"
                              r"add up)\b", re.I),
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
_VOLUME = re.compile(r"\b(\d[\d,]*)\s+(rows|items|records|entries|lines|files|orders|customers|"
                     r"transactions|numbers|products|users|emails|documents|pages|invoices)\b",
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
    for tool in tools:
        vocab = words(f"{tool.name.replace('_', ' ')} {tool.description or ''}")
        if any(w.startswith(s) for w in vocab for s in stems):
            return True
        if kind == "lookup" and tool_match(tool, request)[0] > 0:
            return True
    return False


_SKIPPED = re.compile(r"\b(and so on|similarly for the (rest|others)|the rest (follow|are "
                      r"similar)|for brevity|omitted|i'?ll skip|skipping)\b|\betc\.?\s*$", re.I)
_HAND_MATH = re.compile(r"\d[\d,.]*\s*[-+*/x×]\s*\d[\d,.]*\s*=\s*\d")
_RUNNING = re.compile(r"\b(running (total|count)|so far|that makes|that's \d+)\b", re.I)
_APPROX = re.compile(r"(\b(approximately|roughly|about|around|estimated?)\s+\d|~\s*\d)", re.I)


def strain_signs(answer: str | None, kind: str) -> list[str]:
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
    if kind in ("arithmetic", "counting") and _APPROX.search(answer):
        signs.append("an approximate figure where an exact one was asked")
    return signs


def tractability(turn: Turn) -> Verdict:
    kind = request_kind(turn.request)
    items = item_count(turn.request)
    checks: list[str] = [f"request kind: {kind}"]
    missing = None
    if kind in ("conversational", "interpretive"):
        score = 10
        if kind == "interpretive" and items >= 50:
            score = 7
            checks.append(f"interpretive work repeated over about {items} items")
    else:
        _, _, stems, capability = next(k for k in _KINDS if k[0] == kind)
        if _covers(turn.tools, stems, turn.request, kind):
            score = 9
            checks.append(f"a tool covers the {kind} part")
        else:
            missing = capability
            checks.append(f"no tool covers the {kind} part")
            if kind == "lookup" or items >= 20:
                score = 2
                checks.append("current data out of reach" if kind == "lookup"
                              else f"about {items} items by hand")
            else:
                score = 7 if items <= 3 else 5
                checks.append(f"about {items} items by hand")
    signs = strain_signs(turn.final_answer, kind)
    checks.extend(f"strain in the answer: {s}" for s in signs)
    score = max(0, score - 2 * len(signs))
    summary = f"missing capability: {missing}" if missing else "no missing capability found"
    return _verdict(score, checks, summary, {"request_kind": kind, "missing_capability": missing,
                                             "strain_signs": signs})


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
