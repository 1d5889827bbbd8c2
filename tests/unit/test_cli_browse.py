"""`graphmem browse`: Neo4j Browser shows a Neo4j store; on the embedded store it says how the
user's graph gets there first."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main


def test_on_the_embedded_store_browse_says_to_export_the_graph_first(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.delenv("GRAPHMEM_STORE", raising=False)
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path))
    (tmp_path / "appendonlydir").mkdir()  # a data dir: the server's append-only files
    assert main(["browse", "--user", "alice"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("This store is the embedded FalkorDB")
    assert "graphmem export --user alice --format cypher -o alice.cypher" in out
    assert "MATCH (a:Entity {user_id: 'alice'})" in out


def test_on_neo4j_browse_gives_the_url_and_query_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GRAPHMEM_STORE", "neo4j")
    monkeypatch.setenv("NEO4J_URI", "bolt://db:7687")
    assert main(["browse", "--user", "alice"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Open this to get the query in Neo4j Browser's editor")
    assert "http://db:7474/browser/" in out and "export" not in out
