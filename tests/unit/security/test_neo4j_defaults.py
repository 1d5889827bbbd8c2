"""Safe defaults around Neo4j: reset() deletes graphmem's nodes only, the compose file listens
on the loopback interface, no password is shared through the repository, and the docs state
the Neo4j version the Cypher needs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


DOCS = [ROOT / "README.md", ROOT / "Makefile", *ROOT.glob("docker/*.md"), *ROOT.glob("docs/*.md")]


def test_compose_publishes_its_ports_on_loopback_only() -> None:
    text = (ROOT / "docker" / "docker-compose.yml").read_text(encoding="utf-8")
    block = text[text.index("ports:") : text.index("environment:")]
    mappings = re.findall(r'-\s*"([^"]+)"', block)
    assert len(mappings) == 2
    assert all(m.startswith("127.0.0.1:") for m in mappings), mappings


def test_no_password_is_shared_through_the_repository() -> None:
    assert "docker/.env" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    example = (ROOT / "docker" / ".env.example").read_text(encoding="utf-8")
    assert re.search(r"^NEO4J_AUTH=$", example, re.MULTILINE)
    compose = (ROOT / "docker" / "docker-compose.yml").read_text(encoding="utf-8")
    assert "${NEO4J_AUTH:?" in compose  # no fallback: compose refuses to start without one
    literal = re.compile(
        r"NEO4J_PASSWORD=[^\s\"$]|NEO4J_AUTH=neo4j/[A-Za-z0-9]|cypher-shell[^\n]* -p [A-Za-z0-9]"
    )
    for doc in DOCS:
        assert not literal.findall(doc.read_text(encoding="utf-8")), doc.name
        assert "change-me" not in doc.read_text(encoding="utf-8"), doc.name


def _minimum(text: str) -> tuple[int, int]:
    (found,) = set(re.findall(r"Neo4j (\d+)\.(\d+)(?:\+| or later)", text))
    return int(found[0]), int(found[1])


def test_the_docs_state_the_neo4j_version_the_cypher_needs() -> None:
    scoped_call = any(
        re.search(r"CALL \(", p.read_text(encoding="utf-8"))
        for p in (ROOT / "cypher" / "neo4j").glob("*.cypher")
    )
    needed = (5, 23) if scoped_call else (5, 18)  # CALL (vars) { }: 5.23; vector.similarity: 5.18
    for doc in (ROOT / "README.md", ROOT / "docker" / "README.md"):
        assert _minimum(doc.read_text(encoding="utf-8")) == needed, doc.name
