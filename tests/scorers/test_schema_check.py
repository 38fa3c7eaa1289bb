"""The one schema check of call_validity and the rules judge, over `cases/schema_check.json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from turnscore.scorers import schema_check

CASES = json.loads((Path(__file__).parent / "cases" / "schema_check.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_schema_check_case(case: dict[str, Any]) -> None:
    got = schema_check.check(json.dumps(case["schema"]), case["arguments"])
    assert list(got.violations) == case["violations"]
    assert list(got.undeclared) == case["undeclared"]
    if case["unusable"] is None:
        assert got.unusable is None
    else:
        assert got.unusable is not None and got.unusable.startswith(case["unusable"]), got


def test_unreadable_schema_text_is_unusable() -> None:
    got = schema_check.check("{not json", {"a": 1})
    assert got.unusable is not None and got.unusable.startswith(schema_check.UNREADABLE)


def test_an_unreadable_schemas_note_is_the_same_in_every_process() -> None:
    """Of metaschema errors equally relevant, which one jsonschema reports depends on the
    process's string hashing (a set's order): the note must not, or a Ray worker's score of
    a turn differs from a local one."""
    schema = '{"type": "object", "properties": {"a": {"type": ["string", 3]}, "b": {"enum": 3}}}'
    code = ("import sys; from turnscore.scorers.schema_check import check_text; "
            "print(check_text(sys.argv[1], '{}'))")
    notes = {
        subprocess.run([sys.executable, "-c", code, schema], capture_output=True, text=True,
                       check=True, env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
        for seed in range(6)
    }
    assert len(notes) == 1 and "at $.properties" in notes.pop()
