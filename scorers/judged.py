"""The judged scorers: `tool_usage`, `tractability` and `groundedness_judge` (DESIGN §5).

Registered with kind 'judge', called like every scorer (`REGISTRY[name].score(turns, cases,
judge=...)`): with no judge they use the offline rules judge `rules-v1`; the score runner
passes the LLM judge, where one is configured, from `make_judge_runner` (which falls back
to the rules judge per scorer).
What each judge sees is exactly the blocks its `sections` function renders: Tool Usage never
sees tool results or the final answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import orjson

from turnscore.errors import ConfigError
from turnscore.ingest.turn import Call, Tool, Turn
from turnscore.scorers.base import Case, Judge, Score, ScoreFn, Turns, scorer
from turnscore.scorers.judge import rules
from turnscore.scorers.judge.config import Budget, JudgeSettings, load_judge_settings
from turnscore.scorers.judge.engine import JudgeCache, JudgeEngine, JudgeSpec, judge_by_rules
from turnscore.scorers.judge.render import load_prompt
from turnscore.scorers.judge.tools import TOOLS, JudgeTool


def _json(value: object) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def _maybe_json(text: str | None) -> object:
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _tools_block(turn: Turn) -> str:
    if not turn.tools:
        return "(no tools)"
    return _json([{"name": t.name, "description": t.description,
                   "parameters": _maybe_json(t.parameters)} for t in turn.tools])


def _tool_usage_sections(turn: Turn) -> list[tuple[str, str]]:
    calls = [{"call_id": c.call_id, "tool": c.name, "arguments": _maybe_json(c.arguments),
              "step": c.step} for c in turn.calls]
    return [("request", turn.request), ("tools", _tools_block(turn)),
            ("calls", _json(calls) if calls else "(no calls)")]


def _tractability_sections(turn: Turn) -> list[tuple[str, str]]:
    return [("request", turn.request), ("tools", _tools_block(turn)),
            ("final_answer", turn.final_answer or "(no final answer)")]


def _results_block(turn: Turn) -> str:
    results = [{"call_id": c.call_id, "tool": c.name, "arguments": _maybe_json(c.arguments),
                "result": c.result, "error": c.error} for c in turn.calls]
    return _json(results) if results else "(no tool calls)"


def _groundedness_sections(turn: Turn) -> list[tuple[str, str]]:
    return [("request", turn.request), ("tool_results", _results_block(turn)),
            ("final_answer", turn.final_answer or "")]


def _agent_content(turn: Turn) -> list[tuple[str, str]]:
    return [("request", turn.request), ("tools", _tools_block(turn)),
            ("tool_results", _results_block(turn)), ("final_answer", turn.final_answer or "")]


def _needs_tools(turn: Turn) -> Score | None:
    if not turn.tools and not turn.calls:
        return Score.not_run("the agent had no tools")
    return None


def _needs_answer(turn: Turn) -> Score | None:
    if not (turn.final_answer or "").strip():
        return Score.not_run("no final answer to check")
    return None


_NULL_STR = {"type": ["string", "null"]}
_CALL = {"type": "object", "additionalProperties": False,
         "required": ["call_id", "tool", "choice_ok", "arguments_ok", "problem"],
         "properties": {"call_id": _NULL_STR, "tool": {"type": "string"},
                        "choice_ok": {"type": "boolean"}, "arguments_ok": {"type": "boolean"},
                        "problem": _NULL_STR}}
_CLAIM = {"type": "object", "additionalProperties": False,
          "required": ["claim", "supported", "source"],
          "properties": {"claim": {"type": "string"}, "supported": {"type": "boolean"},
                         "source": _NULL_STR}}


def _schema(**props: object) -> dict[str, object]:
    # assessment first: the judge writes its reasoning before the score
    properties = {"assessment": {"type": "string"}, **props, "score": {"type": "number"}}
    return {"type": "object", "additionalProperties": False, "required": list(properties),
            "properties": properties}


SPECS: Mapping[str, JudgeSpec] = {s.name: s for s in (
    JudgeSpec("tool_usage", load_prompt("tool_usage.md"),
              _schema(calls={"type": "array", "items": _CALL},
                      call_needed={"type": ["boolean", "null"]}),
              _tool_usage_sections, rules.tool_usage, _needs_tools, _agent_content),
    JudgeSpec("tractability", load_prompt("tractability.md"),
              _schema(request_kind={"type": "string"}, missing_capability=_NULL_STR,
                      strain_signs={"type": "array", "items": {"type": "string"}}),
              _tractability_sections, rules.tractability, agent_content=_agent_content),
    JudgeSpec("groundedness_judge", load_prompt("groundedness.md"),
              _schema(claims={"type": "array", "items": _CLAIM}),
              _groundedness_sections, rules.groundedness, _needs_answer, _agent_content),
)}

_ABOUT = {
    "tool_usage": (("request", "tools", "calls"),
                   "Did the agent make good use of its tools? Sees the request, the tools and "
                   "every call with its arguments; never results or the answer. 0-10."),
    "tractability": (("request", "tools", "final_answer"),
                     "Was the task a good fit for what the agent can do reliably with its "
                     "tools? Names the missing capability. 0-10."),
    "groundedness_judge": (("request", "calls", "final_answer"),
                           "Is each claim of the answer supported by the tool results or the "
                           "request? Claim by claim. 0-10."),
}


def _judged(spec: JudgeSpec) -> ScoreFn:
    """The scorer of `spec`: the judge renders `Turn`s, so the batch is decoded."""
    def score(turns: Turns, cases: Sequence[Case | None], *, judge: Judge | None = None
              ) -> Sequence[Score | None]:
        if judge is None:
            return [judge_by_rules(spec, t) for t in turns]
        return judge(spec.name, turns.turns, cases).scores
    return score


# The part before the slash is the rules judge's logic for the scorer: rows keep the judge id
# `rules-v1`, so bumping it here is what makes `turnscore score` re-score rows the older rules
# wrote (LLM-judged rows re-score from the judge cache at no cost).
# tool_usage 3: invented arguments, no-call turns whose matching tool does not fit, one-word
# needs and a looser weaker-tool bound (BFCL, bench/judge_quality.py). tool_usage 4 and
# tractability 3: relevance weighs a word by its rarity among the turn's tools (both read it).
_RULES_VERSION = {"tool_usage": "4", "tractability": "3", "groundedness_judge": "1"}

for _name, _spec in SPECS.items():
    _reads, _description = _ABOUT[_name]
    scorer(name=_name, version=f"{_RULES_VERSION[_name]}/{_spec.prompt.version}", kind="judge",
           reads=_reads, description=_description)(_judged(_spec))


_WHEN = datetime(2026, 1, 1, tzinfo=UTC)
SAMPLE_TURN = Turn(
    turn_id="judge-check", trace_id="judge-check", conversation_id="judge-check",
    turn_index=0, started_at=_WHEN, ended_at=_WHEN, duration_ms=0.0, status="ok",
    request="What's the weather in Paris tomorrow?", tools_source="declared",
    tools=(Tool("get_weather", "Weather forecast for a city and date.",
                '{"type": "object", "required": ["city"], "properties": {'
                '"city": {"type": "string"}, "date": {"type": "string"}}}'),),
    calls=(Call("get_weather", "c1", '{"city": "Paris", "date": "tomorrow"}',
                '{"forecast": "sunny, 21 C"}'),),
    final_answer="Tomorrow Paris will be sunny, around 21 C.")
"""What `turnscore judge check` has each judge score: every judged scorer judges it."""


def make_judge_runner(config: JudgeSettings | Mapping[str, object] | None, budget: Budget,
                      cache: JudgeCache | None = None, *, env: Mapping[str, str] | None = None,
                      tools: Mapping[str, JudgeTool] = TOOLS) -> JudgeEngine:
    """A runner for kind 'judge' scorers: `runner.run(scorer, turns, cases) -> BatchResult`.

    `config` is a `JudgeSettings` or the raw `[judge]` table (validated here, so a bad key or
    tool name fails before any turn is judged). Close the runner (or use it as a context
    manager) when the run ends.
    """
    settings = (config if isinstance(config, JudgeSettings)
                else load_judge_settings(config, env, known_scorers=tuple(SPECS)))
    for name in SPECS:
        judge = settings.for_scorer(name)
        if judge.is_llm and judge.api_key_env and judge.api_key(env) is None:
            raise ConfigError(f"judge for {name}: environment variable {judge.api_key_env} "
                              "(api_key_env) is not set; export it, or remove api_key_env for "
                              "an endpoint that needs no key")
    return JudgeEngine(SPECS, settings, budget, cache, tools=tools, env=env)
