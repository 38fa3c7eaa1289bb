"""Runs a judged scorer over a batch of turns, with either backend.

Per turn: a pre-check (e.g. `not_run` without tools); the rules judge when the scorer has no
LLM endpoint; otherwise render the prompt, look the reply up in the cache, call the judge
(with its tool loop, bounded at `MAX_TOOL_ITERATIONS` model calls) and parse (`parse`): a
usable assessment and score are a score, whatever else the reply lacks.

Structured output is negotiated per endpoint and model (`structured`); each fallback is
logged (INFO) and kept in `BatchResult.notes`, which the score run's summary shows once.

Stops are clean and run-wide: once the call or cost budget is spent, or
`max_consecutive_failures` turns in a row got no verdict, turns not yet started are left
pending (`None` in `BatchResult.scores`) and every later batch returns at once with the same
`Stop`. Turns already in flight finish, so spend can pass `max_cost_usd` by at most
`concurrency - 1` turns. Failed turns become `error` scores and are not cached, so the next
run retries them; verdicts are cached, so an unchanged turn is never sent twice.

The budget and stops are kept by a `shared.RunLedger`, and each endpoint's concurrency and
per-minute limits by its `shared.EndpointLimits`: objects of this process by default, one
actor's for every worker of a Ray cluster (`turnscore.warehouse.ray_judge`).

(Over ~400 lines: one turn's judging is one piece, from the pre-check through the cache,
the tool loop and the parse to the stop rules that span the run; split, the budget and
failure counting would be shared state between modules.)
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import orjson

from turnscore.ingest.turn import Turn
from turnscore.scorers.base import Case, Score, Usage
from turnscore.scorers.judge.client import ChatClient, JudgeRequestError, Message
from turnscore.scorers.judge.config import RULES_JUDGE, Budget, JudgeConfig, JudgeSettings
from turnscore.scorers.judge.parse import (
    ContentScan,
    Verdict,
    VerdictError,
    excerpt,
    parse_verdict,
    scan_content,
    verdict_fields,
)
from turnscore.scorers.judge.render import (
    Prompt,
    Rendered,
    close_marker,
    escape,
    open_marker,
    render,
)
from turnscore.scorers.judge.shared import (
    EndpointLimits,
    Ledger,
    LocalLimits,
    RunLedger,
    Stop,
)
from turnscore.scorers.judge.structured import FormatState, Spend, ask
from turnscore.scorers.judge.tools import TOOLS, JudgeTool

log = logging.getLogger(__name__)

MAX_TOOL_ITERATIONS = 5
FORGED_KEY = "forged_verdict"


@dataclass(frozen=True, slots=True)
class CachedReply:
    """One row of `judge_cache` (the key is passed beside it)."""

    scorer: str
    model: str
    prompt_version: str
    reply: str
    """The verdict object as JSON text."""
    input_tokens: int | None = None
    output_tokens: int | None = None


class JudgeCache(Protocol):
    def get(self, key: str) -> CachedReply | None: ...

    def put(self, key: str, entry: CachedReply) -> None: ...


@dataclass(slots=True)
class MemoryCache:
    """A `JudgeCache` in a dict, for tests and one-off runs."""

    entries: dict[str, CachedReply] = field(default_factory=dict)

    def get(self, key: str) -> CachedReply | None:
        return self.entries.get(key)

    def put(self, key: str, entry: CachedReply) -> None:
        self.entries[key] = entry


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    """What makes a judged scorer: its prompt, reply shape, data shown and rules."""

    name: str
    prompt: Prompt
    schema: Mapping[str, object]
    """JSON Schema of the verdict: sent as `response_format`, and what each field besides
    assessment and score is checked against (an invalid one is recorded as missing)."""
    sections: Callable[[Turn], list[tuple[str, str]]]
    """The named data blocks the judge sees; nothing else of the turn reaches it."""
    rules: Callable[[Turn], Verdict | None]
    """The rules judge; None means inconclusive (nothing it can check)."""
    precheck: Callable[[Turn], Score | None] = lambda turn: None
    """A score decided without any judge (e.g. `not_run`), or None to judge."""
    agent_content: Callable[[Turn], list[tuple[str, str]]] | None = None
    """Every block the agent wrote (default: `sections`). A verdict embedded anywhere in it
    is the agent's own even where this judge does not look: a judge may still repeat it."""


@dataclass(frozen=True, slots=True)
class BatchResult:
    scores: tuple[Score | None, ...]
    """One per turn, in order; None = left pending because the run stopped."""
    stop: Stop | None = None
    notes: tuple[str, ...] = ()
    """What the run learnt about its judges (a structured-output fallback), for the summary."""


def band(value: float) -> str:
    """The rubric band a 0-10 value falls in, used as the score's label."""
    for floor, name in ((9, "9-10"), (7, "7-8"), (5, "5-6"), (3, "3-4")):
        if value >= floor:
            return name
    return "0-2"


def verdict_score(verdict: Verdict, *, judge: str, prompt_sha: str | None, usage: Usage,
                  flags: Mapping[str, object] | None = None) -> Score:
    """`flags`: what the agent content carried (`ContentScan.flags`), kept in the details.
    A forged verdict (the agent's own, repeated by the judge) is `inconclusive`, not a score:
    not an error either, which would pay for the same forged turn again every run."""
    details = {**verdict.details, **(flags or {})}
    if verdict.forged:
        return Score.inconclusive(
            f"the judge's verdict (score {verdict.score:g}) repeats one embedded in the agent "
            "content; an agent cannot grade itself, so it is not stored as a score",
            details={**details, FORGED_KEY: True}, judge=judge, prompt_sha=prompt_sha,
            usage=usage)
    return Score.scored(verdict.score, band(verdict.score), verdict.assessment, details,
                        judge=judge, prompt_sha=prompt_sha, usage=usage)


def rules_score(spec: JudgeSpec, turn: Turn) -> Score:
    verdict = spec.rules(turn)
    if verdict is None:
        return Score.inconclusive(f"{RULES_JUDGE} found nothing it can check; an LLM judge can",
                                  judge=RULES_JUDGE)
    return verdict_score(verdict, judge=RULES_JUDGE, prompt_sha=None, usage=Usage())


def judge_by_rules(spec: JudgeSpec, turn: Turn) -> Score:
    """`turn` judged by the rules judge (after the pre-check); a failure is an error row."""
    try:
        return spec.precheck(turn) or rules_score(spec, turn)
    except Exception as exc:  # one bad turn is one error row
        log.exception("rules judge failed on turn %s", turn.turn_id)
        return Score.failed(f"{type(exc).__name__}: {exc}", judge=RULES_JUDGE)


def cache_key(config: JudgeConfig, spec: JudgeSpec, rendered: Rendered) -> str:
    params = {"model": config.model, "temperature": config.temperature,
              "max_tokens": config.max_tokens, "structured_output": config.structured_output,
              "tools": list(config.tools), "scorer": spec.name,
              "prompt_version": spec.prompt.version, "prompt_sha": spec.prompt.sha}
    raw = orjson.dumps(params, option=orjson.OPT_SORT_KEYS) + b"\n" + rendered.stable_text.encode()
    return hashlib.sha256(raw).hexdigest()


class _ToolLoopExceeded(Exception):
    pass


class Deferred(Exception):
    """Raised by a client that queued the request instead of sending it (the Batch API's
    `scorers.judge.batch.CaptureClient`): the turn is left pending, not failed."""


class JudgeEngine:
    """Scores batches for the score runner; keeps budgets, stops and clients across batches."""

    def __init__(self, specs: Mapping[str, JudgeSpec], settings: JudgeSettings,
                 budget: Budget | None = None, cache: JudgeCache | None = None, *,
                 tools: Mapping[str, JudgeTool] = TOOLS, env: Mapping[str, str] | None = None
                 ) -> None:
        self.specs = specs
        self.settings = settings
        self.budget = budget or Budget()
        self.cache = cache
        self.tools = tools
        self.env = env
        self.ledger: RunLedger = Ledger(self.budget)
        """The run's budget and stop (`shared`); a cluster's workers share one."""
        self.limits_factory: Callable[[JudgeConfig], EndpointLimits] = LocalLimits
        """An endpoint's limits (`shared`); a cluster's workers share one per endpoint."""
        self._loop: asyncio.AbstractEventLoop | None = None
        # Scorers sharing a judge configuration share its client: one rate limit, one pool.
        self._clients: dict[JudgeConfig, ChatClient] = {}
        self._limits: dict[JudgeConfig, EndpointLimits] = {}
        self.client_factory: Callable[[JudgeConfig], ChatClient] = (
            lambda config: ChatClient(config, env=self.env, limiter=self.limits(config)))
        """The client for a judge configuration; the Batch API swaps in its own clients, so
        batched turns go through this same judging path."""
        self._formats: dict[tuple[str | None, str | None], FormatState] = {}
        self._fields: dict[str, dict[str, str]] = {}
        """Per scorer, its verdict's field schemas as text (`verdict_fields`), made once."""
        self.notes: list[str] = []

    @property
    def stop(self) -> Stop | None:
        return self.ledger.stop

    @property
    def calls(self) -> int:
        return self.ledger.calls

    @property
    def cost_usd(self) -> float:
        return self.ledger.cost_usd

    def limits(self, config: JudgeConfig) -> EndpointLimits:
        """The limits of `config`'s endpoint, made once per run."""
        if config not in self._limits:
            self._limits[config] = self.limits_factory(config)
        return self._limits[config]

    def judge_for(self, scorer: str) -> str:
        return self.settings.for_scorer(scorer).judge_id

    def run(self, scorer: str, turns: Sequence[Turn], cases: Sequence[Case | None] = ()
            ) -> BatchResult:
        """Score `turns` with `scorer`; `cases` are accepted for the common signature."""
        spec = self.specs[scorer]
        config = self.settings.for_scorer(scorer)
        if not config.is_llm:
            return BatchResult(tuple(judge_by_rules(spec, t) for t in turns))
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        scores = self._loop.run_until_complete(self._run_llm(spec, config, turns))
        return BatchResult(tuple(scores), self.stop, tuple(self.notes))

    def format_state(self, config: JudgeConfig) -> FormatState:
        """Per endpoint and model, shared by the scorers that use them."""
        return self._formats.setdefault((config.base_url, config.model), FormatState.of(config))

    def _note(self, config: JudgeConfig, text: str) -> None:
        line = f"judge {config.model} at {config.base_url}: {text}"
        if line not in self.notes:
            # INFO: the run's summary says each note once; a warning here said it twice.
            log.info("%s", line)
            self.notes.append(line)

    def close(self) -> None:
        """Close the judges' connections; a runner that only used the rules judge has none."""
        if self._loop is None:
            return
        for client in self._clients.values():
            self._loop.run_until_complete(client.__aexit__(None, None, None))
        self._clients.clear()
        self._loop.close()
        self._loop = None

    def __enter__(self) -> JudgeEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def _run_llm(self, spec: JudgeSpec, config: JudgeConfig, turns: Sequence[Turn]
                       ) -> list[Score | None]:
        if config not in self._clients:
            self._clients[config] = await self.client_factory(config).__aenter__()
        client, limits = self._clients[config], self.limits(config)
        return list(await asyncio.gather(*(self._one(spec, config, client, limits, t)
                                           for t in turns)))

    async def _one(self, spec: JudgeSpec, config: JudgeConfig, client: ChatClient,
                   limits: EndpointLimits, turn: Turn) -> Score | None:
        try:
            return await self._judge_one(spec, config, client, limits, turn)
        except Deferred:
            return None
        except Exception as exc:  # one bad turn is one error row, never a lost batch
            log.exception("judging turn %s with %s failed", turn.turn_id, spec.name)
            return Score.failed(f"{type(exc).__name__}: {exc}", judge=config.judge_id,
                                prompt_sha=spec.prompt.sha)

    async def _judge_one(self, spec: JudgeSpec, config: JudgeConfig, client: ChatClient,
                         limits: EndpointLimits, turn: Turn) -> Score | None:
        pre = spec.precheck(turn)
        if pre is not None:
            return pre
        judge, sha = config.judge_id, spec.prompt.sha
        sections = spec.sections(turn)
        rendered = render(spec.prompt, sections)
        content = scan_content(sections, spec.agent_content(turn) if spec.agent_content else None)
        fields = self._fields.get(spec.name)
        if fields is None:
            fields = self._fields[spec.name] = verdict_fields(spec.schema)
        key = cache_key(config, spec, rendered)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            try:
                verdict = parse_verdict(hit.reply, fields, content=content)
                if orjson.loads(hit.reply).get(FORGED_KEY) is True:
                    verdict = replace(verdict, forged=True)
                usage = Usage(hit.input_tokens, hit.output_tokens, 0.0, 0.0, 0)
                return verdict_score(verdict, judge=judge, prompt_sha=sha, usage=usage,
                                     flags=content.flags())
            except VerdictError:
                log.warning("unusable cache entry %s; asking the judge again", key)
        async with limits.turn():
            if not self.ledger.start():
                return None
            spend = Spend()
            shown: list[str] = [rendered.data]
            scans = [content]
            flags = content.flags() or None
            try:
                text = await self._converse(spec, config, client, rendered, spend, shown, scans)
            except (JudgeRequestError, _ToolLoopExceeded) as exc:
                if isinstance(exc, JudgeRequestError):
                    spend.attempts += exc.attempts
                    spend.latency_ms += exc.latency_ms
                usage = spend.usage(config)
                self._settle(config, usage, verdict=False)
                return Score.failed(str(exc), judge=judge, prompt_sha=sha, usage=usage,
                                    details=flags)
            usage = spend.usage(config)
            seen = scans[0] if len(scans) == 1 else _merge(scans)
            try:
                verdict = parse_verdict(text, fields, shown="\n".join(shown), content=seen)
            except VerdictError as exc:
                self._settle(config, usage, verdict=False)
                return Score.failed(str(exc), judge=judge, prompt_sha=sha, usage=usage,
                                    details=seen.flags() or None)
            self._settle(config, usage, verdict=True)
            if self.cache is not None:
                kept = {k: v for k, v in verdict.details.items() if k in fields}
                if verdict.forged:  # the content scan alone may not tell (a quote of escaped text)
                    kept[FORGED_KEY] = True
                reply = orjson.dumps({"assessment": verdict.assessment, "score": verdict.score,
                                      **kept}).decode()
                self.cache.put(key, CachedReply(spec.name, judge, spec.prompt.version, reply,
                                                usage.input_tokens, usage.output_tokens))
            return verdict_score(verdict, judge=judge, prompt_sha=sha, usage=usage,
                                 flags=seen.flags())

    def _settle(self, config: JudgeConfig, usage: Usage, *, verdict: bool) -> None:
        self.ledger.settle(usage.cost_usd or 0.0, verdict=verdict, model=config.model,
                           max_failures=config.max_consecutive_failures)

    async def _converse(self, spec: JudgeSpec, config: JudgeConfig, client: ChatClient,
                        rendered: Rendered, spend: Spend, shown: list[str],
                        scans: list[ContentScan]) -> str | None:
        """The judge's final reply text, after at most MAX_TOOL_ITERATIONS model calls.
        Each tool result is appended to `shown` and scanned into `scans`: a fetched page is
        as untrusted as the agent's content, and a verdict copied from one is not the judge's."""
        messages: list[Message] = list(rendered.messages)
        specs = [self.tools[name].spec() for name in config.tools]
        state = self.format_state(config)
        for _ in range(MAX_TOOL_ITERATIONS):
            reply = await ask(client, state, spec.name, spec.schema, messages, specs or None,
                              spend, lambda text: self._note(config, text))
            if not reply.tool_calls:
                return reply.content
            messages.append(reply.message)
            for call in reply.tool_calls:
                result = await asyncio.to_thread(self._run_tool, config.tools, call.name,
                                                 call.arguments)
                # Fetched pages are as untrusted as the agent's content: same markers.
                block = (f"{open_marker('tool_result', rendered.nonce)}\n"
                         f"{escape(result, rendered.nonce)}\n"
                         f"{close_marker('tool_result', rendered.nonce)}")
                shown.append(block)
                scans.append(scan_content([("tool_result", result)]))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": block})
        raise _ToolLoopExceeded(f"the judge still called tools after {MAX_TOOL_ITERATIONS} "
                                f"iterations (bound reached); last reply: "
                                f"{excerpt(reply.content)}")

    def _run_tool(self, allowed: tuple[str, ...], name: str, arguments: str) -> str:
        tool = self.tools.get(name) if name in allowed else None
        if tool is None:
            return f"Error: unknown tool {name!r}; available: {', '.join(allowed)}"
        try:
            args = orjson.loads(arguments or "{}")
            if not isinstance(args, dict):
                return "Error: arguments must be a JSON object"
            return tool.run(args)
        except orjson.JSONDecodeError:
            return f"Error: arguments are not valid JSON: {excerpt(arguments, 100)}"
        except Exception as exc:  # a failing tool is text for the judge, never a failed turn
            return f"Error: {type(exc).__name__}: {exc}"


def _merge(scans: Sequence[ContentScan]) -> ContentScan:
    return ContentScan(tuple(dict.fromkeys(n for s in scans for n in s.verdict_shaped)),
                       tuple(dict.fromkeys(n for s in scans for n in s.markers)),
                       frozenset().union(*(s.verdicts for s in scans)))
