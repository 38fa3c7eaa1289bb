"""Imports flow one way: ingest <- scorers <- warehouse <- demo <- cli (DESIGN §2).

import-linter cannot see this layout (the stages are folders mapped into the `turnscore`
namespace by setuptools' package-dir, which grimp does not follow), so this test reads
every module's imports with `ast` and checks them against the layer order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Lower index = lower layer; a module may import only its own layer or lower ones.
LAYERS = ["ingest", "scorers", "warehouse", "demo", "cli"]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "turnscore" or len(parts) < 2 or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


@pytest.mark.parametrize("stage", LAYERS)
def test_stage_imports_only_lower_layers(stage: str) -> None:
    own = LAYERS.index(stage)
    violations = []
    for path in sorted((ROOT / stage).rglob("*.py")):
        for line, module in _imports(path):
            layer = _layer_of(module)
            if layer is not None and layer > own:
                violations.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not violations, "imports against the layer order:\n" + "\n".join(violations)


def test_the_check_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "m.py"
    bad.write_text("from turnscore.warehouse.db import open_warehouse\n")
    assert [_layer_of(m) for _, m in _imports(bad)] == [LAYERS.index("warehouse")]
