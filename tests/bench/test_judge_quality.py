"""`bench/judge_quality.py` on a small data folder in BFCL's own format (rows written here,
so that no test downloads anything): it reads questions and answers, converts BFCL's types
to JSON Schema, perturbs each gold call and reports every rate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]

WEATHER = {"name": "get_weather", "description": "Weather forecast for a city.",
           "parameters": {"type": "dict", "required": ["city", "unit"], "properties": {
               "city": {"type": "string", "description": "The city."},
               "days": {"type": "integer", "description": "How many days."},
               "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}
AREA = {"name": "calculate_triangle_area", "description": "Area of a triangle.",
        "parameters": {"type": "dict", "required": ["base", "height"], "properties": {
            "base": {"type": "float", "description": "The base."},
            "height": {"type": "float", "description": "The height."}}}}


def _question(qid: str, text: str, functions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": qid, "question": [[{"role": "user", "content": text}]], "function": functions}


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_bench_reports_every_rate_on_bfcl_shaped_data(tmp_path: Path) -> None:
    _write(tmp_path / "BFCL_v4_simple_python.json", [
        _question("simple_python_0", "What's the weather in Paris for 3 days, in celsius?",
                  [WEATHER])])
    _write(tmp_path / "possible_answer" / "BFCL_v4_simple_python.json", [
        {"id": "simple_python_0", "ground_truth": [{"get_weather": {
            "city": ["Paris"], "days": [3, ""], "unit": ["celsius"]}}]}])
    _write(tmp_path / "BFCL_v4_multiple.json", [
        _question("multiple_0", "Find the area of a triangle with base 10 and height 5.",
                  [AREA, WEATHER])])
    _write(tmp_path / "possible_answer" / "BFCL_v4_multiple.json", [
        {"id": "multiple_0", "ground_truth": [{"calculate_triangle_area": {
            "base": [10.0], "height": [5.0]}}]}])
    _write(tmp_path / "BFCL_v4_irrelevance.json", [
        _question("irrelevance_0", "Write a poem about the sea.", [AREA])])
    done = subprocess.run([sys.executable, "bench/judge_quality.py", "--data", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    lines = {line.split("  ")[0]: line for line in out.splitlines()}
    # One gold call per question; wrong tool only where another tool is declared; one enum.
    for kind, cases in (("wrong tool", 1), ("dropped required", 2), ("wrong type", 2),
                        ("out of enum", 1), ("missed call", 2), ("invented argument", 2)):
        row = next(line for line in out.splitlines() if line.startswith(kind))
        assert row.split()[-3:] == [str(cases), "100.0%", "ok"], row
    assert "gold calls: 2, mean 10.00, at 10: 100.0%" in out
    assert "no call, no tool fits (irrelevance): 1 turns, mean 9.00" in out
    assert "no call, a tool plainly fits (missed): 2 turns" in out
    assert "When2Call" in out and lines


def test_without_data_the_bench_says_how_to_get_it_and_exits_0(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "bench/judge_quality.py", "--data",
                           str(tmp_path / "absent")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "pip download --no-deps bfcl-eval" in done.stdout
