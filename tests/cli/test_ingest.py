"""`turnscore ingest`: exit codes a scheduler can act on, the summary, --json."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import zstandard
from typer.testing import CliRunner

from tests.warehouse.test_ingest_run import capture_off_export
from turnscore.cli.ingest import ingest_cli
from turnscore.cli.options import EXIT_BUSY, EXIT_FAILED, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE
from turnscore.ingest.formats import COMPRESSED_SUFFIXES, INPUT_SUFFIXES, INPUT_SUFFIXES_HELP

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"


@pytest.fixture
def app() -> typer.Typer:
    """The command as `turnscore` mounts it (a group, so `ingest` is a sub-command)."""
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command("ingest")(ingest_cli)
    return app


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)  # no stray turnscore.toml or ./turnscore-data
    monkeypatch.delenv("TURNSCORE_WAREHOUSE", raising=False)
    return CliRunner()


def _good(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    for name in ("single_tool.json", "multi_turn.json"):
        shutil.copy(CORPUS / "pydantic-ai" / name, folder / name)
    return folder


def test_clean_input_exits_0_with_a_summary(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    result = runner.invoke(
        app, ["ingest", str(_good(tmp_path)), "--warehouse", str(tmp_path / "wh")]
    )
    assert result.exit_code == EXIT_OK, result.output
    assert "turns new" in result.output and "files read" in result.output
    assert (tmp_path / "wh" / "warehouse.duckdb").exists()


def test_json_summary_and_skipping_on_the_second_run(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    args = ["ingest", str(_good(tmp_path)), "--warehouse", str(tmp_path / "wh"), "--json"]
    first = json.loads(runner.invoke(app, args).stdout)
    assert first["outcome"] == "ok" and first["turns_new"] == 3 and first["files_read"] == 2
    second = runner.invoke(app, args)
    assert second.exit_code == EXIT_OK
    data = json.loads(second.stdout)
    assert (data["files_read"], data["files_skipped"], data["turns_new"]) == (0, 2, 0)


def test_bad_input_exits_3_and_names_the_file(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    folder = _good(tmp_path)
    (folder / "broken.json").write_text('{"resourceSpans": [{"scopeSpans": [ nope')
    result = runner.invoke(app, ["ingest", str(folder), "--warehouse", str(tmp_path / "wh")])
    assert result.exit_code == EXIT_PARTIAL, result.output
    assert "broken.json" in result.output
    data = json.loads(
        runner.invoke(
            app, ["ingest", str(folder), "--warehouse", str(tmp_path / "wh2"), "--json"]
        ).stdout
    )
    assert data["outcome"] == "partial" and data["turns_new"] == 3
    assert [Path(e["source"]).name for e in data["errors"]] == ["broken.json"]


@pytest.mark.parametrize("json_output", [False, True])
def test_a_missing_path_is_a_usage_error(
    app: typer.Typer, runner: CliRunner, tmp_path: Path, json_output: bool
) -> None:
    args = ["ingest", str(_good(tmp_path)), str(tmp_path / "nope"), "--warehouse",
            str(tmp_path / "wh")]
    result = runner.invoke(app, [*args, "--json"] if json_output else args)
    assert result.exit_code == EXIT_USAGE
    assert f"error: no such file or folder: {tmp_path / 'nope'}" in result.stderr
    if json_output:  # stdout holds one JSON document whatever happened
        assert json.loads(result.stdout) == {
            "outcome": "failed",
            "error": f"no such file or folder: {tmp_path / 'nope'}",
            "exit_code": EXIT_USAGE,
        }
    else:
        assert result.stdout == ""
    assert not (tmp_path / "wh").exists()  # refused before anything was started


def test_no_paths_and_no_config_exits_2(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    result = runner.invoke(app, ["ingest", "--warehouse", str(tmp_path / "wh"), "--json"])
    assert result.exit_code == EXIT_USAGE
    assert "sources" in result.stderr
    assert json.loads(result.stdout)["exit_code"] == EXIT_USAGE


def test_configured_sources_are_ingested(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    _good(tmp_path)
    (tmp_path / "turnscore.toml").write_text('sources = ["in"]\n')
    result = runner.invoke(app, ["ingest", "--warehouse", str(tmp_path / "wh"), "--json"])
    assert result.exit_code == EXIT_OK, result.output
    assert json.loads(result.stdout)["files_read"] == 2


HOLD_LOCK = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from turnscore.warehouse.db import writer_lock\n"
    "with writer_lock(Path(sys.argv[1])):\n"
    "    print('locked', flush=True)\n"
    "    time.sleep(60)\n"
)


@pytest.mark.parametrize("json_output", [False, True])
def test_a_busy_warehouse_exits_4(
    app: typer.Typer, runner: CliRunner, tmp_path: Path, json_output: bool
) -> None:
    # Held by another process: the lock is re-entrant within one.
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path / "wh")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        args = ["ingest", str(_good(tmp_path)), "--warehouse", str(tmp_path / "wh")]
        result = runner.invoke(app, [*args, "--json"] if json_output else args)
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == EXIT_BUSY
    assert "busy" in result.stderr
    if json_output:
        summary = json.loads(result.stdout)
        assert summary["outcome"] == "failed" and summary["exit_code"] == EXIT_BUSY
        assert "busy" in summary["error"]
    else:
        assert result.stdout == ""


def test_quiet_prints_nothing_on_success(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    result = runner.invoke(
        app, ["ingest", str(_good(tmp_path)), "--warehouse", str(tmp_path / "wh"), "-q"]
    )
    assert result.exit_code == EXIT_OK
    assert result.output == ""


def test_help_documents_the_command(app: typer.Typer, runner: CliRunner) -> None:
    result = runner.invoke(app, ["ingest", "--help"])
    assert result.exit_code == 0
    for option in ("--warehouse", "--json", "--quiet", "--config", "--wait"):
        assert option in result.output


# --- bad input: what is said, with and without -q, and what the next run does ------------

GOOD = (CORPUS / "pydantic-ai" / "single_tool.json").read_bytes()
GARBAGE = bytes(range(7, 200))
CORRUPT_ZSTD = b"\x28\xb5\x2f\xfd" + GOOD[:64]  # a zstd header, then no zstd data


def _write(folder: Path, files: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


@pytest.mark.parametrize(
    ("name", "data", "line"),
    [
        (
            "garbage.json",
            GARBAGE,
            "garbage.json: not an OTLP traces/logs file: binary data starting 07 08 09",
        ),
        ("empty.json", b"", "empty.json: the file is empty"),
        ("blank.json", b"\n \n", "blank.json: the file is empty"),
        # The damaged stream is the one error; no "empty file" after it.
        ("corrupt.jsonl.zst", CORRUPT_ZSTD, "corrupt.jsonl.zst, byte 0: corrupt zstd stream: "),
        (
            "cut.jsonl.zst",
            zstandard.ZstdCompressor().compress(GOOD)[:40],
            "cut.jsonl.zst, byte 40: truncated or corrupt zstd stream: nothing decoded",
        ),
        (
            "cut.json",
            GOOD[: GOOD.index(b'"name"') + 9],
            "cut.json, request 1 (line 1): malformed or truncated JSON: Unterminated string "
            "starting at line 41 column 15; skipped the rest of the file (lines 1-41)",
        ),
    ],
)
def test_a_file_that_gave_nothing_fails_the_run_every_time_with_one_clear_line(
    app: typer.Typer, runner: CliRunner, tmp_path: Path, name: str, data: bytes, line: str
) -> None:
    path = _write(tmp_path / "in", {name: data}) / name
    args = ["ingest", str(path), "--warehouse", str(tmp_path / "wh"), "-q"]
    for _ in range(2):  # not recorded as done: read, reported and failed again
        result = runner.invoke(app, args)
        assert result.exit_code == EXIT_FAILED, result.output
        assert result.stdout == ""  # -q: no table, but every error on stderr
        failed, error = result.stderr.splitlines()  # one line each, whatever the width
        assert failed.startswith("failed: no span or log record could be read")
        assert error.startswith(f"input error: {path.parent}/{line}")


def test_a_file_with_some_bad_lines_is_recorded_and_not_reported_again(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    lines = (CORPUS / "pydantic-ai" / "single_tool.json").read_text().split("\n")
    one_line = json.dumps(json.loads("\n".join(lines)))
    folder = _write(tmp_path / "in", {"mixed.jsonl": f"{one_line}\n{{oops\n".encode()})
    args = ["ingest", str(folder), "--warehouse", str(tmp_path / "wh"), "-q"]
    first = runner.invoke(app, args)
    assert first.exit_code == EXIT_PARTIAL
    assert "input error: " in first.stderr and "mixed.jsonl, line 2: malformed" in first.stderr
    second = runner.invoke(app, args)
    assert (second.exit_code, second.stderr) == (EXIT_OK, "")


def test_bad_files_beside_good_ones_exit_3_now_and_on_the_next_run(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    folder = _write(tmp_path / "in", {"good.json": GOOD, "garbage.json": GARBAGE})
    (folder / "gone.json").symlink_to(tmp_path / "deleted.json")  # listed, cannot be read
    args = ["ingest", str(folder), "--warehouse", str(tmp_path / "wh"), "--json"]
    for files_read, skipped in ((2, 0), (1, 1)):  # good.json is done after the first run
        result = runner.invoke(app, args)
        assert result.exit_code == EXIT_PARTIAL, result.output
        summary = json.loads(result.stdout)
        assert summary["outcome"] == "partial" and summary["error"] is None
        assert (summary["files_read"], summary["files_skipped"]) == (files_read, skipped)
        assert sorted(Path(e["source"]).name for e in summary["errors"]) == [
            "garbage.json", "gone.json"
        ]
    quiet = runner.invoke(app, [*args[:-1], "-q"])
    assert quiet.exit_code == EXIT_PARTIAL and quiet.stdout == ""
    assert f"input error: {folder / 'gone.json'}: cannot read file: No such file" in quiet.stderr


def test_a_folder_takes_only_files_named_as_input(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    folder = _write(
        tmp_path / "in",
        {
            "single_tool.json": GOOD,
            "NOTES.md": b"# notes\n",
            "x.csv": b"a,b\n",
            ".DS_Store": b"\x00",
            "sub/more.JSONL.ZST": zstandard.ZstdCompressor().compress(GOOD),
        },
    )
    result = runner.invoke(
        app, ["ingest", str(folder), "--warehouse", str(tmp_path / "wh"), "--json"]
    )
    assert result.exit_code == EXIT_OK, result.output
    summary = json.loads(result.stdout)
    # more.JSONL.ZST holds the same spans: read, and its turn is unchanged
    assert (summary["files_read"], summary["errors"], summary["notes"]) == (2, [], [])
    # Named on the command line, a file is read whatever its name.
    named = runner.invoke(
        app, ["ingest", str(folder / "x.csv"), "--warehouse", str(tmp_path / "wh"), "-q"]
    )
    assert named.exit_code == EXIT_FAILED
    assert "x.csv: not an OTLP traces/logs file: text starting 'a,b'" in named.stderr


def test_a_folder_without_input_files_is_said_but_not_an_error(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    folder = _write(tmp_path / "exports", {"README.txt": b"nothing here yet"})
    args = ["ingest", str(folder), "--warehouse", str(tmp_path / "wh")]
    quiet = runner.invoke(app, [*args, "-q"])
    assert quiet.exit_code == EXIT_OK and quiet.stdout == ""
    assert quiet.stderr.startswith(f"note: {folder}: no input file in this folder (taken: .json")
    summary = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert summary["files_read"] == 0 and len(summary["notes"]) == 1
    assert "no input file" in runner.invoke(app, args).stdout  # with the table


def test_help_names_the_input_suffixes(app: typer.Typer, runner: CliRunner) -> None:
    text = " ".join(runner.invoke(app, ["ingest", "--help"], env={"COLUMNS": "200"}).output.split())
    assert " ".join(INPUT_SUFFIXES_HELP.split()) in text.replace("│", " ").replace("  ", " ")


def test_the_readme_names_the_input_suffixes_the_code_takes() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    text = " ".join(readme.split())
    found = re.search(
        r"read recursively for files named `([^`]*)`, each optionally ((?:`[^`]*`/?)+);", text
    )
    assert found, "README no longer says which files a folder gives"
    assert found.group(1).split() == list(INPUT_SUFFIXES)
    assert found.group(2).replace("`", "").split("/") == list(COMPRESSED_SUFFIXES)


def test_turns_with_issues_are_a_note_not_a_failure(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    """Content not captured is no input error (exit 0), but the summary says so, with
    `--quiet` too, and where to look."""
    capture_off_export(tmp_path / "in")
    outputs = []
    for flags, wh in (([], "wh"), (["--quiet"], "wh-quiet")):
        result = runner.invoke(
            app, ["ingest", str(tmp_path / "in"), "--warehouse", str(tmp_path / wh), *flags]
        )
        assert result.exit_code == EXIT_OK, result.output
        assert ("turns with issues: request_not_captured 1, answer_not_captured 1, "
                "model_call_without_content 1 (of 2 turns; per agent and convention: "
                "turnscore query turn_quality)") in " ".join(result.output.split())
        outputs.append(result.output)
    assert "turns of this run by status: 1 ok, 1 incomplete" in outputs[0]
    assert "turns of this run by convention: otel-genai 2" in outputs[0]
    assert "by status" not in outputs[1]  # --quiet drops the tables, keeps the note
