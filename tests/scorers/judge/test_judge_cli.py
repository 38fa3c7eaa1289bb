"""`turnscore judge check` against the scripted judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.scorers.judge.scripted import Reply, ScriptedJudge, chat
from turnscore.cli.judge import app


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
    judge_server.default = lambda body: Reply(body=chat('{"ok": true}'))
    code, out = run(tmp_path, toml_for(judge_server, '[judge.tractability]\nmodel = "m2"\n'))
    assert code == 0, out
    assert "tool_usage, groundedness_judge: m1 at http://127.0.0.1" in out
    assert "tractability: m2" in out and out.count("structured output works") == 2
    assert len(judge_server.requests) == 2
    assert all("response_format" in r.body for r in judge_server.requests)


def test_structured_output_rejected_but_reachable(judge_server: ScriptedJudge,
                                                  tmp_path: Path) -> None:
    judge_server.default = lambda body: (Reply(400, {"error": "response_format unsupported"})
                                         if "response_format" in body
                                         else Reply(body=chat("ok")))
    code, out = run(tmp_path, toml_for(judge_server), "--json")
    assert code == 0, out
    [report] = json.loads(out)
    assert report["ok"] is True and report["structured_output"] is False
    assert report["judge"] == "m1" and report["latency_ms"] > 0
    assert len(judge_server.requests) == 2


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
