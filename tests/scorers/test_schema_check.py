"""The one schema check of call_validity and the rules judge, over `cases/schema_check.json`."""

from __future__ import annotations

import json
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
