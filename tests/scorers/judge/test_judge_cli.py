"""`turnscore judge check` against the scripted judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.scorers.judge.scripted import ENDPOINTS, Reply, ScriptedJudge, chat
from tests.warehouse.turn_factory import load_turns, make_turn
from turnscore.cli.judge import app
from turnscore.warehouse.db import open_warehouse


def run(tmp_path: Path, toml: str, *args: str) -> tuple[int, str]:
    path = tmp_path / "turnscore.toml"
    path.write_text(toml)
    result = CliRunner().invoke(app, ["check", "--config", str(path), *args])
    return result.exit_code, result.output


@pytest.fixture(autouse=True)
def _no_env_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TURNSCORE_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("TURNSCORE_JUDGE_MODEL", raising=False)


def toml_for(server: ScriptedJudge, extra: str = "") -> str:
    return (f'[judge]\nbase_url = "{server.url}"\nmodel = "m1"\ntimeout_s = 2\n'
            f"max_retries = 0\n{extra}")


def test_structured_output_that_works(judge_server: ScriptedJudge, tmp_path: Path) -> None:
    code, out = run(tmp_path, toml_for(judge_server, '[judge.tractability]\nmodel = "m2"\n'))
    assert code == 0, out
    assert "tool_usage, groundedness_judge: m1 at http://127.0.0.1" in out
    assert "tractability: m2" in out and out.count("structured output works (json_schema)") == 2
    assert "model scripted-judge" in out and out.count("sample verdict 8: Looks reasonable.") == 2
    assert len(judge_server.requests) == 2
    assert all(r.body["response_format"]["type"] == "json_schema" for r in judge_server.requests)
    # The sample is judged as a run would judge it: the scorer's own prompt and schema.
    assert "**Tool Usage**" in judge_server.requests[0].system
    assert "get_weather" in judge_server.requests[0].user


@pytest.mark.parametrize(("endpoint", "form", "requests"), [
    ("rejects_schema", "prompt", 3), ("json_object_only", "json_object", 2),
    ("ignores_format", "prompt", 1)])
def test_check_reports_the_form_that_works(judge_server: ScriptedJudge, tmp_path: Path,
                                           endpoint: str, form: str, requests: int) -> None:
    judge_server.default = ENDPOINTS[endpoint]
    code, out = run(tmp_path, toml_for(judge_server), "--json")
    assert code == 0, out
    [report] = json.loads(out)
    assert report["ok"] is True and report["structured_output"] == form
    assert report["judge"] == "m1" and report["model"] == "scripted-judge"
    assert report["latency_ms"] > 0 and report["verdict"].startswith("8: Looks reasonable.")
    assert report["notes"] and "for the rest of the run" in report["notes"][-1]
    assert len(judge_server.requests) == requests


def test_a_verdict_without_details_is_reported_with_what_is_missing(
        judge_server: ScriptedJudge, tmp_path: Path) -> None:
    judge_server.default = lambda body: Reply(body=chat('{"assessment": "Fine.", "score": 7}'))
    code, out = run(tmp_path, toml_for(judge_server))
    assert code == 0, out
    assert "sample verdict 7: Fine. (missing: calls, call_needed)" in out


def test_an_unusable_sample_verdict_fails_the_check(judge_server: ScriptedJudge,
                                                    tmp_path: Path) -> None:
    judge_server.default = lambda body: Reply(body=chat("I cannot judge this."))
    code, out = run(tmp_path, toml_for(judge_server))
    assert code == 1 and "the sample verdict was unusable" in out


def test_an_unreachable_judge_fails(judge_server: ScriptedJudge, tmp_path: Path) -> None:
    judge_server.default = lambda body: Reply(503, "down")
    code, out = run(tmp_path, toml_for(judge_server))
    assert code == 1 and "FAILED: HTTP 503: down" in out


def test_no_judge_configured_is_the_rules_judge(tmp_path: Path) -> None:
    code, out = run(tmp_path, "")
    assert code == 0 and "rules-v1 (rules judge, offline" in out


def test_a_bad_judge_table_is_a_usage_error(tmp_path: Path) -> None:
    code, out = run(tmp_path, '[judge]\ntools = ["shell"]\n')
    assert code == 2 and "unknown judge tool(s) shell; known: fetch_url" in out


@pytest.mark.parametrize("command", ["score", "nightly"])
def test_a_fallback_is_said_once_on_stderr_by_quiet(tmp_path: Path, command: str) -> None:
    # Through the installed entry point, with its logging set up as a user gets it: the
    # summary's `judge:` line is the one place a fallback is said.
    con = open_warehouse(tmp_path)
    load_turns(con, [make_turn(i) for i in range(3)])
    con.close()
    with ScriptedJudge() as server:
        server.default = ENDPOINTS["ignores_format"]
        (tmp_path / "turnscore.toml").write_text(toml_for(server))
        done = subprocess.run(
            [sys.executable, "-c", "from turnscore.cli.main import app; app()", command, "-q",
             *(["--scorer", "tractability"] if command == "score" else []),
             "--warehouse", str(tmp_path),
             "--config", str(tmp_path / "turnscore.toml")],
            capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "300"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("ignored response_format json_schema") == 1, done.stderr
    assert "judge: judge m1 at" in " ".join(done.stderr.split())


@pytest.mark.parametrize(("extra", "message"), [
    ('headers = { Authorization = "Bearer sk-x" }\n', "[judge]: headers must not carry the key"),
    ('modle = "m2"\n', "[judge]: unknown key 'modle'"),
    ('[judge.tool_usgae]\nmodel = "m2"\n', "[judge.tool_usgae]: no judged scorer"),
])
def test_a_bad_judge_table_names_the_file(judge_server: ScriptedJudge, tmp_path: Path,
                                          extra: str, message: str) -> None:
    code, out = run(tmp_path, toml_for(judge_server, extra))
    assert code == 2, out
    assert f"error: {tmp_path / 'turnscore.toml'}: {message}" in " ".join(out.split())
    assert judge_server.requests == []
