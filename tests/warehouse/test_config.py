from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from turnscore.errors import ConfigError
from turnscore.warehouse.config import load_config

TOML = """
warehouse = "wh"
sources = ["exports/", "more.jsonl"]
labels = "cases.jsonl"
scorers = ["tool_usage", "tool_grounding", "tractability"]

[agents.billing]
disable = ["tractability"]

[agents.triage]
enable = ["tool_grounding"]

[judge]
model = "m"
"""


def test_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "turnscore.toml").write_text(TOML)
    cfg = load_config(tmp_path / "turnscore.toml", env={})
    assert cfg.warehouse == tmp_path / "wh"
    assert cfg.sources == (tmp_path / "exports", tmp_path / "more.jsonl")
    assert cfg.labels == (tmp_path / "cases.jsonl",)
    assert cfg.judge == {"model": "m"}


def test_env_overrides_the_warehouse(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(TOML)
    cfg = load_config(tmp_path / "t.toml", env={"TURNSCORE_WAREHOUSE": "/x/y"})
    assert cfg.warehouse == Path("/x/y")


def test_an_empty_env_warehouse_is_unset(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(TOML)
    cfg = load_config(tmp_path / "t.toml", env={"TURNSCORE_WAREHOUSE": ""})
    assert cfg.warehouse == tmp_path / "wh"


def test_agents_enable_or_disable_scorers(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(TOML)
    cfg = load_config(tmp_path / "t.toml", env={})
    registered = ["tool_usage", "tool_grounding", "tractability", "groundedness"]
    assert cfg.scorers_for("billing", registered) == ["tool_usage", "tool_grounding"]
    assert cfg.scorers_for("triage", registered) == ["tool_grounding"]
    assert cfg.scorers_for("other", registered) == ["tool_usage", "tool_grounding", "tractability"]
    assert cfg.scorers_for(None, registered) == ["tool_usage", "tool_grounding", "tractability"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sourcez = []", "unknown keys ['sourcez']"),
        ("sources = 3", "'sources' must be a path or a list of paths"),
        ("[agents.a]\nonly = []", "[agents.a] takes only"),
        ("warehouse = ", "not valid TOML"),
        # A bare string would silently become its characters (or every scorer).
        ('[agents.a]\ndisable = "tractability"', "[agents.a] disable must be a list"),
        ('[agents.a]\nenable = "tool_grounding"', "[agents.a] enable must be a list"),
        ('scorers = "tool_grounding"', "'scorers' must be a list"),
        ("agents = 3", "'agents' must be a table"),
        ('judge = "gpt"', "'judge' must be a table"),
        ("case_id_attribute = 7", "'case_id_attribute' must be a string"),
        ("report = true", "'report' must be a string"),
    ],
)
def test_bad_config_names_the_problem(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "t.toml").write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_config(tmp_path / "t.toml", env={})


def test_an_environment_override_is_named_without_a_file_that_is_not_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ./turnscore.toml
    with pytest.raises(ConfigError) as raised:
        load_config(None, env={"TURNSCORE_INGEST_MAX_EXPANDED_MB": "0"})
    assert str(raised.value).startswith(
        "environment variable TURNSCORE_INGEST_MAX_EXPANDED_MB must be a whole number")


@pytest.mark.parametrize("make, message", [
    (lambda p: p.mkdir(), "cannot read the config file: Is a directory"),
    (lambda p: p.write_bytes(b"\xff\xfe warehouse = 1"), "not UTF-8"),
])
def test_a_config_that_cannot_be_read_is_a_config_error(tmp_path: Path, make: Any,
                                                        message: str) -> None:
    path = tmp_path / "turnscore.toml"
    make(path)
    with pytest.raises(ConfigError, match=message):
        load_config(path, env={})


def test_an_empty_scorer_list_is_refused_rather_than_running_every_scorer(
        tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text("scorers = []\n")
    with pytest.raises(ConfigError, match="'scorers' is empty"):
        load_config(path, env={}).scorer_selection(["tool_grounding", "call_validity"])
    path.write_text('scorers = []\n[agents.bot]\nenable = ["call_validity"]\n')
    selection = load_config(path, env={}).scorer_selection(["tool_grounding", "call_validity"])
    assert selection.scorers == ("call_validity",)
    assert selection.for_agent("bot") == ["call_validity"] and selection.for_agent("x") == []


def test_the_judge_settings_are_checked_whenever_there_are_any() -> None:
    """`load_config` checks the judge's settings only when a `[judge]` table or one of its
    environment overrides exists, told by their common prefix."""
    from turnscore.scorers.judge.config import ENV_BASE_URL, ENV_MODEL
    from turnscore.warehouse import config

    assert ENV_BASE_URL.startswith(config._JUDGE_ENV) and ENV_MODEL.startswith(config._JUDGE_ENV)


def test_a_bad_judge_table_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text('[judge]\nno_such_key = 1\n')
    with pytest.raises(ConfigError, match="no_such_key"):
        load_config(tmp_path / "t.toml", env={})
