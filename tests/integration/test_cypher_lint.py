"""Every Cypher file Neo4j runs is checked by Neo4j's own parser and semantic analysis.

The linter is the npm package `@neo4j-cypher/language-support` (see tests/cypher_lint/). It
checks the shared statements, the Neo4j variants and the Browser queries; cypher/falkordb/ is
FalkorDB's dialect, planned by FalkorDB itself in
tests/integration/test_cypher_falkordb_lint.py. Missing node or npm packages fail these tests:
CI installs them with `make setup-lint`.

Errors and warnings both fail. The warnings this linter gives are typos in labels, types or
property keys against tests/cypher_lint/dbschema.mjs, and deprecations (which the next Neo4j
major turns into errors), so none is acceptable today. `ACCEPTED_WARNINGS` is where one would
go, with its reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from engine import cypher

ROOT = Path(__file__).resolve().parents[2]
LINT_DIR = ROOT / "tests" / "cypher_lint"
PACKAGE = LINT_DIR / "node_modules" / "@neo4j-cypher" / "language-support"
FILES = sorted(
    [*ROOT.glob("cypher/*.cypher"), *ROOT.glob("cypher/neo4j/*.cypher"),
     *ROOT.glob("cypher/browser/*.cypher")]
)  # fmt: skip
ACCEPTED_WARNINGS: dict[str, str] = {}  # message prefix -> why it is harmless

Diagnostic = dict[str, Any]


def lint(paths: list[Path], schema: str = "graphmem") -> dict[str, list[Diagnostic]]:
    """Run tests/cypher_lint/lint.mjs on `paths` against a schema of dbschema.mjs ("graphmem",
    or "llama_index" for LlamaIndex's statements on graphmem's graph); diagnostics per file."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed; see tests/cypher_lint/README.md (`make setup-lint`)")
    if not PACKAGE.is_dir():
        pytest.fail(f"{PACKAGE.relative_to(ROOT)} is missing; run `make setup-lint`")
    proc = subprocess.run(
        [node, "lint.mjs", *map(str, paths)],
        cwd=LINT_DIR, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "CYPHER_LINT_SCHEMA": schema},
    )  # fmt: skip
    if proc.returncode not in (0, 1):
        pytest.fail(f"lint.mjs crashed ({proc.returncode}): {proc.stderr}")
    report: dict[str, list[Diagnostic]] = json.loads(proc.stdout)
    return report


def problems(diagnostics: list[Diagnostic]) -> list[str]:
    """The diagnostics that fail the build, as readable lines."""
    return [
        f"{d['line']}:{d['column']} {d['severity']}: {d['message']}"
        for d in diagnostics
        if d["severity"] == "error"
        or (d["severity"] == "warning" and not d["message"].startswith(tuple(ACCEPTED_WARNINGS)))
    ]


@pytest.fixture(scope="module")
def report() -> dict[str, list[Diagnostic]]:
    return lint(FILES)


def test_the_lint_covers_shared_neo4j_and_browser_files() -> None:
    folders = {p.parent.name for p in FILES}
    assert folders == {"cypher", "neo4j", "browser"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT / "cypher")))
def test_neo4j_accepts_the_file(path: Path, report: dict[str, list[Diagnostic]]) -> None:
    assert problems(report[str(path)]) == []


BROKEN = {
    "syntax.cypher": "MATCH (e:Entity {user_id: $user_id} RETURN e",
    "procedure.cypher": "CALL db.index.vector.queryNode('x', $k, $embedding) YIELD node RETURN 1",
    "arity.cypher": "CALL db.index.vector.queryNodes('x', $embedding) YIELD node RETURN node",
    "parameter.cypher": "MATCH (e:Entity {user_id: $user}) RETURN e",
    "semantics.cypher": "MATCH (e:Entity) RETURN e.name AS a, e.key AS a",
    "falkordb_dialect.cypher": "MATCH (e:Entity) SET e.embedding = vecf32($embedding) RETURN e",
    "label_typo.cypher": "MATCH (e:Entitty {user_id: $user_id}) RETURN e",
    "deprecated.cypher": "MATCH (e:Entity)-[r]->() RETURN r {.uid}, id(e)",
}


def test_the_lint_fails_on_broken_queries(tmp_path: Path) -> None:
    for name, text in BROKEN.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = lint(sorted(tmp_path.glob("*.cypher")))
    assert {Path(path).name for path, ds in found.items() if problems(ds)} == set(BROKEN)


@pytest.mark.parametrize("name", ["probe_typed", "sample_relation_ends"])
def test_neo4j_accepts_a_read_along_several_groups_of_types(tmp_path: Path, name: str) -> None:
    """The engine repeats the statement's CALL body per group, joined by UNION ALL."""
    text = cypher.load(name, "neo4j")
    # types the lint's schema knows: any other draws a "not in the database" warning
    union = cypher.with_rel_type_groups(text, [["OBJECT", "SUBJECT"], ["MENTIONS"]])
    assert union.count("UNION ALL") == 1 and "[r:`OBJECT`|`SUBJECT`]" in union
    path = tmp_path / f"{name}_union.cypher"
    path.write_text(union, encoding="utf-8")
    assert problems(lint([path])[str(path)]) == []
