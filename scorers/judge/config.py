"""Judge configuration: the `[judge]` table of `turnscore.toml` (DESIGN §7), validated.

```toml
[judge]                      # default for every judged scorer
base_url = "https://api.openai.com/v1"   # env TURNSCORE_JUDGE_BASE_URL
model = "gpt-4.1-mini"                   # env TURNSCORE_JUDGE_MODEL
api_key_env = "OPENAI_API_KEY"           # the key itself never goes in a file

[judge.tractability]         # per-scorer override; unset keys inherit from [judge]
model = "gpt-4.1"
tools = ["fetch_url"]

[judge.headers]              # extra request headers and query parameters (not scorers)
[judge.query_params]         # e.g. api-version for an Azure deployment URL
```

The environment overrides win over the file for every scorer, because they exist to point a
whole run at another endpoint. A scorer with no base URL or no model uses the rules judge.
Unknown keys and unknown tool names fail here, at configuration time, listing valid ones.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Literal

from turnscore.errors import ConfigError
from turnscore.scorers.judge.tools import TOOLS

ENV_BASE_URL = "TURNSCORE_JUDGE_BASE_URL"
ENV_MODEL = "TURNSCORE_JUDGE_MODEL"
RULES_JUDGE = "rules-v1"
MAPPING_KEYS = ("headers", "query_params")
"""Keys of `[judge]` whose values are tables, so they are not per-scorer overrides."""
StructuredOutput = Literal["auto"] | bool


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """How one judged scorer talks to its judge. Defaults suit a hosted endpoint."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable that holds the API key."""
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout_s: float = 60.0
    concurrency: int = 4
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    tools: tuple[str, ...] = ()
    """Judge tools (names in `turnscore.scorers.judge.tools.TOOLS`) the judge may call."""
    structured_output: StructuredOutput = "auto"
    """"auto": ask for `response_format` (json_schema, then json_object) and fall back to the
    prompt alone where the endpoint rejects or ignores it; true/false force one form."""
    api_key_header: str = "Authorization"
    """Header carrying the key: `Authorization` sends `Bearer KEY`, any other (Azure's
    `api-key`) the key alone."""
    headers: tuple[tuple[str, str], ...] = ()
    """Extra request headers (`[judge.headers]`); never the key, which comes from the env."""
    query_params: tuple[tuple[str, str], ...] = ()
    """Query parameters on every request (`[judge.query_params]`, e.g. Azure's api-version)."""
    max_reply_bytes: int = 4_000_000
    """A longer reply body is a failed request: a judge cannot be made to fill the memory."""
    max_retries: int = 4
    """Retries of a 429, 5xx, timeout or connection failure, after the first attempt."""
    backoff_s: float = 1.0
    backoff_max_s: float = 30.0
    retry_after_max_s: float = 120.0
    """Longest Retry-After the client will honour; longer waits count as a failure."""
    max_consecutive_failures: int = 5
    """The run stops cleanly after this many turns in a row fail to get a verdict."""
    batch: bool = False
    """Send this judge's requests through the Batch API (`scorers.judge.batch`): results
    within 24 h, at the batch price."""
    batch_price_input_per_mtok: float | None = None
    """Price per million input tokens of a batch request; None = half the synchronous price
    (what OpenAI and Azure OpenAI charge for batches)."""
    batch_price_output_per_mtok: float | None = None

    @property
    def is_llm(self) -> bool:
        return bool(self.base_url and self.model)

    @property
    def judge_id(self) -> str:
        """What lands in `scores.judge`: the model id, or 'rules-v1'."""
        return self.model if self.is_llm and self.model else RULES_JUDGE

    def api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        env = os.environ if env is None else env
        return env.get(self.api_key_env) if self.api_key_env else None

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        if input_tokens is None and output_tokens is None:
            return None
        return ((input_tokens or 0) * self.price_input_per_mtok
                + (output_tokens or 0) * self.price_output_per_mtok) / 1_000_000


@dataclass(frozen=True, slots=True)
class JudgeSettings:
    """The default judge and per-scorer overrides, already merged."""

    default: JudgeConfig = field(default_factory=JudgeConfig)
    per_scorer: Mapping[str, JudgeConfig] = field(default_factory=dict)

    def for_scorer(self, scorer: str) -> JudgeConfig:
        return self.per_scorer.get(scorer, self.default)


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits for one score run; None means unlimited."""

    max_cost_usd: float | None = None
    max_calls: int | None = None
    """Turns sent to an LLM judge (cache hits and rules-judge turns do not count)."""


_FIELDS = {f.name: f for f in fields(JudgeConfig)}
_INT = {"max_tokens", "concurrency", "requests_per_minute", "tokens_per_minute", "max_retries",
        "max_consecutive_failures", "max_reply_bytes"}
_FLOAT = {"temperature", "timeout_s", "price_input_per_mtok", "price_output_per_mtok",
          "backoff_s", "backoff_max_s", "retry_after_max_s"}
_STR = {"base_url", "model", "api_key_env", "api_key_header"}

_BATCH_FLOAT = {"batch_price_input_per_mtok", "batch_price_output_per_mtok"}


def load_judge_settings(table: Mapping[str, object] | None,
                        env: Mapping[str, str] | None = None,
                        known_scorers: tuple[str, ...] | None = None, *,
                        source: str | os.PathLike[str] | None = None) -> JudgeSettings:
    """Validate the raw `[judge]` table and apply the environment overrides.
    `source`: the file the table was read from, named first in every error."""
    env = os.environ if env is None else env
    table = table or {}
    scalars = {k: v for k, v in table.items()
               if not isinstance(v, Mapping) or k in MAPPING_KEYS}
    subtables = {k: v for k, v in table.items()
                 if k not in scalars and isinstance(v, Mapping)}
    at = "" if source is None else f"{source}: "
    default = _apply(JudgeConfig(), scalars, f"{at}[judge]")
    per_scorer: dict[str, JudgeConfig] = {}
    for name, sub in subtables.items():
        if known_scorers is not None and name not in known_scorers:
            raise ConfigError(f"{at}[judge.{name}]: no judged scorer by that name; "
                              f"known: {', '.join(sorted(known_scorers))}")
        per_scorer[name] = _apply(default, sub, f"{at}[judge.{name}]")
    overrides: dict[str, object] = {
        k: env[var] for k, var in (("base_url", ENV_BASE_URL), ("model", ENV_MODEL))
        if env.get(var)}
    if overrides:
        default = replace(default, **overrides)  # type: ignore[arg-type]
        per_scorer = {k: replace(v, **overrides)  # type: ignore[arg-type]
                      for k, v in per_scorer.items()}
    return JudgeSettings(default, per_scorer)


def _apply(base: JudgeConfig, raw: Mapping[str, object], where: str) -> JudgeConfig:
    changes: dict[str, object] = {}
    for key, value in raw.items():
        if key == "api_key":
            raise ConfigError(f"{where}: put the key in an environment variable and name it "
                              "with api_key_env")
        if key not in _FIELDS:
            raise ConfigError(f"{where}: unknown key {key!r}; known: {', '.join(sorted(_FIELDS))}")
        changes[key] = _coerce(key, value, where)
    config = replace(base, **changes)  # type: ignore[arg-type]
    if config.batch and config.tools:
        raise ConfigError(f"{where}: batch = true cannot be combined with tools: a batch "
                          "request gets one reply, and a tool loop needs several")
    return config


_KEY_HEADERS = {"authorization", "api-key", "x-api-key"}


def _coerce(key: str, value: object, where: str) -> object:
    bad = ConfigError(f"{where}: {key} = {value!r} is not valid")
    if key == "batch" or key in _BATCH_FLOAT:
        ok = (isinstance(value, bool) if key == "batch" else
              isinstance(value, int | float) and not isinstance(value, bool) and value >= 0)
        if not ok:
            raise bad
        return value if key == "batch" else float(value)  # type: ignore[arg-type]
    if key in _STR:
        if not isinstance(value, str):
            raise bad
        return value.rstrip("/") if key == "base_url" else value
    if key in _INT:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad
        if key == "concurrency" and value < 1:
            raise bad
        return value
    if key in _FLOAT:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise bad
        return float(value)
    if key == "structured_output":
        if not isinstance(value, bool) and value != "auto":
            raise bad
        return value
    if key in MAPPING_KEYS:
        if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise ConfigError(f"{where}: {key} must be a table of strings")
        if key == "headers" and any(k.lower() in _KEY_HEADERS for k in value):
            raise ConfigError(f"{where}: headers must not carry the key; name its "
                              "environment variable with api_key_env (and api_key_header)")
        return tuple(sorted(value.items()))
    if key == "tools":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad
        unknown = [v for v in value if v not in TOOLS]
        if unknown:
            raise ConfigError(f"{where}: unknown judge tool(s) {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(TOOLS)) or '(none)'}")
        return tuple(value)
    raise bad
