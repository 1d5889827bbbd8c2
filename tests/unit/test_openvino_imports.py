"""graphmem imports OpenVINO in one place, which declines its telemetry
(`engine.embedding.openvino_import`): no other module of engine/ imports it."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"
ONE_PLACE = ENGINE / "embedding" / "openvino_import.py"


def _imports_openvino(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "openvino" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "openvino":
            return True
    return False


def test_openvino_is_imported_only_where_its_telemetry_is_declined() -> None:
    found = [
        str(path.relative_to(ENGINE))
        for path in sorted(ENGINE.rglob("*.py"))
        if path != ONE_PLACE and _imports_openvino(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []
