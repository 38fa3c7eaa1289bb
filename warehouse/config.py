"""`turnscore.toml`: what the nightly job reads, with `TURNSCORE_*` environment overrides.

```toml
warehouse = "turnscore-data"          # TURNSCORE_WAREHOUSE
sources = ["exports/"]                # OTLP files or folders, read recursively
labels = ["cases.jsonl"]              # labelled cases (JSONL, CSV, Parquet)
case_id_attribute = "turnscore.case_id"
scorers = ["tool_usage", "tractability", "tool_grounding"]   # default: every registered scorer
report = "turnscore-data/report.html"

[agents.billing_bot]                  # per-agent scorer choice
disable = ["tractability"]            # or: enable = [...] to list exactly which run

[judge]                               # see README "Judges"; absent = offline rules judge

[ingest]                              # how far one compressed input file may expand
max_expanded_mb = 512                 # TURNSCORE_INGEST_MAX_EXPANDED_MB
max_expansion_ratio = 200             # TURNSCORE_INGEST_MAX_EXPANSION_RATIO

[query]                               # limits of `turnscore query`
memory_limit = "25%"                  # of the RAM, or a size: "4GB"
timeout_s = 300
```

Relative paths are resolved against the config file's folder.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from turnscore.errors import ConfigError
from turnscore.ingest.formats import Limits
from turnscore.ingest.settings import IngestSettings
from turnscore.warehouse.errors import UnknownScorer

DEFAULT_CASE_ID_ATTRIBUTE = "turnscore.case_id"
_KNOWN_KEYS = {
    "warehouse",
    "sources",
    "labels",
    "case_id_attribute",
    "scorers",
    "report",
    "agents",
    "judge",
    "ingest",
    "query",
}
_INGEST_KEYS = {"max_expanded_mb": "MAX_EXPANDED_MB", "max_expansion_ratio": "MAX_EXPANSION_RATIO"}
"""`[ingest]` keys and their `TURNSCORE_INGEST_*` environment overrides."""
_QUERY_KEYS = {"memory_limit", "timeout_s"}


class JudgeMode(StrEnum):
    """Which judge a run uses: the LLM judge when `[judge]` has a base_url (auto), the
    rules judge, or the LLM judge and an error without one (`warehouse.judging`)."""

    AUTO = "auto"
    RULES = "rules"
    LLM = "llm"


_JUDGE_ENV = "TURNSCORE_JUDGE_"
"""How the judge's environment overrides are named (`scorers.judge.config.ENV_BASE_URL`,
`ENV_MODEL`): with none set and no `[judge]` table there are no judge settings to check."""


@dataclass(frozen=True, slots=True)
class AgentScorers:
    enable: tuple[str, ...] | None = None
    """When set, exactly these scorers run for the agent."""
    disable: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Config:
    warehouse: Path = Path("turnscore-data")
    sources: tuple[Path, ...] = ()
    labels: tuple[Path, ...] = ()
    case_id_attribute: str = DEFAULT_CASE_ID_ATTRIBUTE
    scorers: tuple[str, ...] | None = None
    """None: every registered scorer."""
    report: Path | None = None
    agents: Mapping[str, AgentScorers] = field(default_factory=dict)
    judge: Mapping[str, object] = field(default_factory=dict)
    """The raw `[judge]` table; `turnscore.scorers.judge.config` validates it."""
    ingest: Limits = field(default_factory=Limits)
    """How far a compressed input file may expand (`[ingest]`)."""
    query_memory_limit: str | None = None
    """`[query] memory_limit`; None: the default (`warehouse.query.QueryLimits`)."""
    query_timeout_s: float | None = None
    """`[query] timeout_s`; None: the default."""
    path: Path | None = None

    @property
    def ingest_settings(self) -> IngestSettings:
        return IngestSettings(case_id_attribute=self.case_id_attribute, limits=self.ingest)

    def scorers_for(self, agent: str | None, registered: Sequence[str]) -> list[str]:
        chosen = list(self.scorers) if self.scorers is not None else list(registered)
        rule = self.agents.get(agent or "")
        if rule is None:
            return chosen
        if rule.enable is not None:
            return [s for s in rule.enable if s in registered]
        return [s for s in chosen if s not in rule.disable]

    def scorer_selection(self, registered: Sequence[str],
                         requested: Sequence[str] | None = None) -> ScorerSelection:
        """Which scorers a run uses, per agent: the one rule for `turnscore score` and
        `turnscore nightly`. `requested` (`score --scorer`) stands in for `scorers`; the
        `[agents.*]` rules apply either way. Raises `UnknownScorer` for a name that is not
        in `registered`: a misspelt `disable` entry would otherwise run the scorer it
        meant to switch off, and a misspelt `enable` none."""
        config = replace(self, scorers=tuple(requested)) if requested else self
        named = {n for rule in config.agents.values()
                 for n in (*(rule.enable or ()), *rule.disable)}
        for name in sorted(named | set(config.scorers or ())):
            if name not in registered:
                raise UnknownScorer(name, list(registered))
        chosen: tuple[str, ...] | None = None
        if config.scorers is not None:
            # An agent's `enable` list may name scorers beyond the default list.
            extra = {n for rule in config.agents.values() for n in (rule.enable or ())}
            chosen = tuple(sorted(set(config.scorers) | extra))
            if not chosen:
                # The runner reads "no scorers given" as "every scorer": the opposite.
                raise ConfigError(f"{self.path or 'the configuration'}: 'scorers' is empty "
                                  "and no [agents.*] enable list names one, so nothing would "
                                  "be scored; leave 'scorers' out to run every registered "
                                  "scorer")
        return ScorerSelection(config, tuple(registered), chosen)


@dataclass(frozen=True, slots=True)
class ScorerSelection:
    """`Config.scorer_selection`: what to pass to `score_turns`."""

    config: Config
    registered: tuple[str, ...]
    scorers: tuple[str, ...] | None
    """`score_turns(scorers=...)`: every scorer some agent runs; None for all registered."""

    def for_agent(self, agent: str | None) -> list[str]:
        """The scorers to run on `agent`'s turns."""
        return self.config.scorers_for(agent, self.registered)

    @property
    def per_agent(self) -> Callable[[str | None], list[str]] | None:
        """`score_turns(scorers_for_agent=...)`: None without `[agents.*]` rules, where
        every agent runs `scorers` (and the run skips the per-agent filtering)."""
        return self.for_agent if self.config.agents else None


def load_config(path: Path | None, *, env: Mapping[str, str] | None = None) -> Config:
    """Read `path` (or ./turnscore.toml when present; defaults otherwise), then apply env."""
    env = os.environ if env is None else env
    if path is None and Path("turnscore.toml").exists():
        path = Path("turnscore.toml")
    raw: dict[str, object] = {}
    base = Path.cwd()
    if path is not None:
        try:
            # TOML is UTF-8 whatever the locale (cron often runs with LANG=C).
            raw = tomllib.loads(path.read_bytes().decode("utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such config file") from None
        except OSError as exc:  # a folder, no permission
            raise ConfigError(f"{path}: cannot read the config file: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: not UTF-8 text ({exc})") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        base = path.resolve().parent
    unknown = set(raw) - _KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown keys {sorted(unknown)}; known: {sorted(_KNOWN_KEYS)}")

    def paths(key: str) -> tuple[Path, ...]:
        value = raw.get(key, [])
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise ConfigError(f"{path}: '{key}' must be a path or a list of paths")
        return tuple(base / v for v in items)

    def names(value: object, where: str) -> tuple[str, ...]:
        # A bare string would otherwise become a tuple of its characters.
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: {where} must be a list of scorer names, "
                              f"not {value!r}")
        return tuple(value)

    def text(key: str) -> str | None:
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{path}: '{key}' must be a string, not {value!r}")
        return value

    def table(key: str) -> dict[str, object]:
        value = raw.get(key, {})
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: '{key}' must be a table ([{key}]), not {value!r}")
        return value

    agents = {}
    for name, rule in table("agents").items():
        if not isinstance(rule, dict) or set(rule) - {"enable", "disable"}:
            raise ConfigError(f"{path}: [agents.{name}] takes only 'enable' or 'disable' lists")
        enable = rule.get("enable")
        agents[name] = AgentScorers(
            names(enable, f"[agents.{name}] enable") if enable is not None else None,
            names(rule.get("disable", []), f"[agents.{name}] disable"),
        )
    query = table("query")
    if set(query) - _QUERY_KEYS:
        raise ConfigError(f"{path}: [query] takes only {sorted(_QUERY_KEYS)}, not "
                          f"{sorted(set(query) - _QUERY_KEYS)}")
    memory_limit, timeout_s = query.get("memory_limit"), query.get("timeout_s")
    if memory_limit is not None and not isinstance(memory_limit, str):
        raise ConfigError(f"{path}: [query] memory_limit must be a string such as \"4GB\" "
                          f"or \"25%\", not {memory_limit!r}")
    if timeout_s is not None and (isinstance(timeout_s, bool)
                                  or not isinstance(timeout_s, int | float) or timeout_s <= 0):
        raise ConfigError(f"{path}: [query] timeout_s must be a positive number of seconds, "
                          f"not {timeout_s!r}")
    scorers = raw.get("scorers")
    ingest = table("ingest")
    unknown = set(ingest) - set(_INGEST_KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown [ingest] keys {sorted(unknown)}; known: "
                          f"{sorted(_INGEST_KEYS)}")
    limits: dict[str, int] = {}
    for key, suffix in _INGEST_KEYS.items():
        name = f"TURNSCORE_INGEST_{suffix}"
        value: object = env[name] if env.get(name) else ingest.get(key)
        if value is None:
            continue
        # An environment variable is named alone: it is not in the file (there may be none).
        where = f"environment variable {name}" if env.get(name) else f"{path}: [ingest] {key}"
        try:
            number = int(value) if isinstance(value, str) else value
        except ValueError:
            number = None
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            raise ConfigError(f"{where} must be a whole number of at least 1, not {value!r}")
        limits[key] = number
    env_warehouse = env.get("TURNSCORE_WAREHOUSE")
    warehouse = base / (text("warehouse") or "turnscore-data")
    report = text("report")
    judge = table("judge")
    if judge or any(k.startswith(_JUDGE_ENV) and v for k, v in env.items()):
        # Checked here, where the file is known, so a bad [judge] key names it like the
        # rest. Imported here: the judge (its client, every scorer) is a second of start-up
        # that a command reading no judge settings would pay for nothing.
        from turnscore.scorers.judge.config import load_judge_settings
        from turnscore.scorers.judged import SPECS

        load_judge_settings(judge, env, known_scorers=tuple(SPECS), source=path)
    return Config(
        warehouse=Path(env_warehouse) if env_warehouse else warehouse,
        sources=paths("sources"),
        labels=paths("labels"),
        case_id_attribute=text("case_id_attribute") or DEFAULT_CASE_ID_ATTRIBUTE,
        scorers=names(scorers, "'scorers'") if scorers is not None else None,
        report=base / report if report else None,
        agents=agents,
        judge=judge,
        ingest=Limits(**limits),
        query_memory_limit=memory_limit,
        query_timeout_s=float(timeout_s) if timeout_s is not None else None,
        path=path,
    )
