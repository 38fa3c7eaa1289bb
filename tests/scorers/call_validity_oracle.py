"""A test oracle for `call_validity`: its rules stated call by call over `Turn`s.

The scorer decides a whole batch with Arrow kernels (duplicates by sorting, tool look-ups by
coded names, texts put together by column); this states the same rules plainly, so a
property test can hold the kernels to them. The checks and texts per call are the scorer's
own (`_outcome`, `_call_verdict`, ...): what is compared is how the batch is put together.
"""

from __future__ import annotations

from collections.abc import Sequence

from turnscore.ingest.turn import Turn
from turnscore.scorers.base import Score
from turnscore.scorers.call_validity import (
    _DECLARED,
    _NO_CALLS,
    _all_valid,
    _call_verdict,
    _details,
    _duplicate_of,
    _failed,
    _outcome,
    _unknown_tool,
)


def oracle(turns: Sequence[Turn]) -> list[Score]:
    return [_turn(t) for t in turns]


def _turn(turn: Turn) -> Score:
    if not turn.calls:
        return Score.not_run(_NO_CALLS)
    tools = {tool.name: tool.parameters for tool in turn.tools}
    declared = turn.tools_source == _DECLARED
    seen: dict[tuple[str, bytes], int] = {}
    verdicts: list[dict[str, object]] = []
    problems: list[str] = []
    for index, call in enumerate(turn.calls):
        violations: list[str] = []
        if call.name not in tools and declared:
            violations.append(_unknown_tool(call.name, tools))
        outcome = _outcome(tools.get(call.name), call.arguments)
        violations.extend(outcome.violations)
        key = (call.name, outcome.canonical)
        earlier = seen.get(key)
        if earlier is not None and not _failed(turn.calls[earlier].status,
                                               turn.calls[earlier].error):
            violations.append(_duplicate_of(earlier))
        seen[key] = index
        verdict, problem = _call_verdict(index, call.name, violations, outcome)
        verdicts.append(verdict)
        if problem is not None:
            problems.append(problem)
    valid = len(verdicts) - len(problems)
    details = _details(verdicts, valid, len(problems), turn.tools_source)
    if not problems:
        return Score.scored(valid / len(verdicts), "valid", _all_valid(valid), details)
    return Score.scored(valid / len(verdicts), "invalid", " | ".join(problems), details)
