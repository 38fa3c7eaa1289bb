"""`turnscore judge check`: one real judging request to each configured judge.

Per distinct endpoint and model, a small sample turn is judged exactly as `turnscore score`
would judge it (same prompt, same structured-output negotiation, same parser), so the
report says what a run would meet: whether it answered, the model id the endpoint names,
the latency, which structured-output form works there (`json_schema`, `json_object` or the
prompt alone) and the verdict parsed from the reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from turnscore.ingest.turn import Turn
from turnscore.scorers.judge.client import ChatClient, JudgeRequestError
from turnscore.scorers.judge.config import JudgeConfig, JudgeSettings
from turnscore.scorers.judge.engine import JudgeSpec
from turnscore.scorers.judge.parse import VerdictError, parse_verdict, verdict_fields
from turnscore.scorers.judge.render import render
from turnscore.scorers.judge.structured import FormatState, Spend, ask


@dataclass(frozen=True, slots=True)
class JudgeCheck:
    scorers: tuple[str, ...]
    judge: str
    """The configured model id, or 'rules-v1' where no endpoint is configured."""
    base_url: str | None
    ok: bool
    model: str | None = None
    """The model id the endpoint's reply names (a deployment can name another)."""
    latency_ms: float | None = None
    structured_output: str | None = None
    """The form that worked: json_schema, json_object or prompt (the prompt alone)."""
    verdict: str | None = None
    """The sample turn's parsed verdict ('8: assessment...'), or why it did not parse."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    """Fallbacks taken on the way (a rejected or ignored response_format)."""
    error: str | None = None


def check_judges(settings: JudgeSettings, specs: Mapping[str, JudgeSpec], sample: Turn,
                 env: Mapping[str, str] | None = None) -> list[JudgeCheck]:
    """`sample`: a turn every scorer in `specs` judges (none of their prechecks skips it)."""
    groups: dict[tuple[str | None, str | None], tuple[JudgeConfig, list[str]]] = {}
    for name in specs:
        cfg = settings.for_scorer(name)
        key = (cfg.base_url, cfg.model) if cfg.is_llm else (None, None)
        groups.setdefault(key, (cfg, []))[1].append(name)
    return [_check(cfg, tuple(names), specs[names[0]], sample, env)
            for cfg, names in groups.values()]


def _check(config: JudgeConfig, scorers: tuple[str, ...], spec: JudgeSpec, sample: Turn,
           env: Mapping[str, str] | None) -> JudgeCheck:
    base = JudgeCheck(scorers, config.judge_id, config.base_url, ok=config.is_llm is False)
    if not config.is_llm:
        return base
    config = replace(config, tools=(), max_retries=min(config.max_retries, 1))
    notes: list[str] = []
    state = FormatState.of(config)
    rendered = render(spec.prompt, spec.sections(sample))

    async def go() -> tuple[str | None, str | None, float]:
        async with ChatClient(config, env=env) as client:
            spend = Spend()
            reply = await ask(client, state, spec.name, spec.schema, rendered.messages, None,
                              spend, notes.append)
            return reply.content, reply.model, spend.latency_ms

    try:
        content, model, latency = asyncio.run(go())
    except JudgeRequestError as exc:
        return replace(base, error=str(exc), notes=tuple(notes))
    try:
        v = parse_verdict(content, verdict_fields(spec.schema), shown=rendered.data)
        missing = v.details.get("missing")
        verdict = f"{v.score:g}: {v.assessment[:120]}" + (
            f" (missing: {', '.join(map(str, missing))})" if isinstance(missing, list) else "")
    except VerdictError as exc:  # reachable, but a run would get error rows from it
        return replace(base, model=model, latency_ms=round(latency, 1),
                       structured_output=state.form.value, notes=tuple(notes),
                       error=f"the sample verdict was unusable: {exc}")
    return replace(base, ok=True, model=model, latency_ms=round(latency, 1),
                   structured_output=state.form.value, verdict=verdict, notes=tuple(notes))
