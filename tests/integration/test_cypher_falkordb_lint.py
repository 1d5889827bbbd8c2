"""Every Cypher file FalkorDB runs is checked by FalkorDB's own parser and planner.

tests/integration/test_cypher_lint.py checks the shared files and cypher/neo4j/ with Neo4j's
parser; this test asks the embedded FalkorDB to plan (`GRAPH.EXPLAIN`, which runs nothing)
each file of cypher/falkordb/ and each shared file, with every parameter given a value of the
type the engine sends. It finds syntax errors, unknown functions and procedures, undefined
variables, duplicate columns and type mismatches the planner sees. It does not check index
options or label, type and property names (FalkorDB has no schema to check them against).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from falkordb import FalkorDB
from falkordb.helpers import stringify_param_value
from redis.exceptions import ResponseError

from engine.cypher import without_comments
from engine.store.falkordb_server import EmbeddedServer

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*ROOT.glob("cypher/*.cypher"), *ROOT.glob("cypher/falkordb/*.cypher")])
GRAPH = "cypher_lint"
# Every parameter the statements take, with a value of the type the engine sends.
PARAMETERS: dict[str, Any] = {
    "user_id": "alice", "user_key": "alice", "uid": "u1", "target_uid": "u2", "name": "n",
    "query": "john", "secret": "s", "lo": "", "hi": "f", "by": "salience", "loose": "john",
    "k": 10, "limit": 10, "terms_v": 1, "skip": 0, "cap": 100, "dimension": 384, "total": 100,
    "ef_construction": 200,
    "most": 500, "predicates": ["OWNS"], "change_events": ["ADD"], "unchanged_details": ["d"],
    "after": "",
    "scan": 10, "format": 1, "data": "d", "model": "m", "marks_kept": 16, "max_mentions": 500,
    "part": 0, "probe": [0.1, 0.2],
    "last": True,
    "now": 1.7e9, "at": 1.7e9, "since": 1.6e9, "until": 1.8e9, "half_life": 30.0,
    "include_invalid": False, "subjects": True,
    "embedding": [0.1, 0.2], "uids": ["u1"], "keys": ["john"], "checksums": ["c"], "texts": ["c"],
    "nodes": ["u1"], "dropped": ["-"], "pairs": [["OWNS", "u1", "u2"]], "graphmem_labels": ["Fact"],
    "ends": [["u1", "u2"]],
    "rows": [{"uid": "u1", "key": "john", "name": "John"}],
    "lookups": [{"id": "u1", "key": "john"}], "where": {"type": "person"},
}  # fmt: skip
_PARAMETER = re.compile(r"\$(\w+)")


def explain(client: FalkorDB, text: str, params: dict[str, Any]) -> None:
    """Ask FalkorDB to plan `text` with `params`; raises ResponseError when it cannot."""
    header = " ".join(f"{key}={stringify_param_value(value)}" for key, value in params.items())
    query = f"CYPHER {header} {text}" if params else text
    client.connection.execute_command("GRAPH.EXPLAIN", GRAPH, query)


def parameters_of(text: str) -> dict[str, Any]:
    names = set(_PARAMETER.findall(without_comments(text)))
    unknown = names - set(PARAMETERS)
    assert not unknown, f"declare {sorted(unknown)} in PARAMETERS with a value of their type"
    return {name: PARAMETERS[name] for name in sorted(names)}


@pytest.fixture(scope="module")
def client(falkordb_server: EmbeddedServer) -> Iterator[FalkorDB]:
    client = FalkorDB(unix_socket_path=str(falkordb_server.socket_path))
    graph = client.select_graph(GRAPH)
    graph.query("CREATE (:Planned)")  # GRAPH.EXPLAIN needs the graph to exist
    yield client
    graph.delete()
    client.connection.close()


def test_the_lint_covers_shared_and_falkordb_files() -> None:
    assert {p.parent.name for p in FILES} == {"cypher", "falkordb"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT / "cypher")))
def test_falkordb_plans_the_file(path: Path, client: FalkorDB) -> None:
    text = path.read_text(encoding="utf-8")
    explain(client, text, parameters_of(text))


BROKEN = {
    "syntax": "MATCH (e:Entity {user_id: $user_id} RETURN e",
    "procedure": "CALL db.idx.vector.queryNode('Entity', 'embedding', $k, vecf32($embedding)) "
    "YIELD node RETURN node",
    "function": "MATCH (e:Entity) RETURN vec.cosineDistanc(e.embedding, vecf32($embedding))",
    "variable": "MATCH (e:Entity {user_id: $user_id}) RETURN f",
    "columns": "MATCH (e:Entity) RETURN e.name AS a, e.key AS a",
    "type": "MATCH (e:Entity) WHERE $uids RETURN e",
    "ddl": "CREATE VECTOR INDX FOR (e:Entity) ON (e.embedding)",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_the_lint_fails_on_a_broken_query(name: str, client: FalkorDB) -> None:
    text = BROKEN[name]
    with pytest.raises(ResponseError):
        explain(client, text, parameters_of(text))
