"""Export and import: a user's graph leaves the embedded store and comes back exactly."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from engine import cli
from engine.cypher import Dialect
from engine.errors import InvalidInputError
from engine.normalize import stable_uid
from engine.transfer.export import to_cypher
from engine.transfer.restore import episode_uids, parse_snapshot
from engine.transfer.snapshot import (
    EntityRecord,
    EpisodeRecord,
    GraphSnapshot,
    HistoryRecord,
    last_changes,
)


@pytest.mark.parametrize("dialect", ["neo4j", "falkordb"])
def test_the_cypher_export_drops_nothing(dialect: Dialect) -> None:
    snapshot = GraphSnapshot(user_id="alice", exported_at=0.0)
    script = to_cypher(snapshot, dialect, embeddings=True)
    assert "DROP" not in script.upper().replace("DROPS NOTHING", "")
    assert "drops nothing" in script.split("\n\n")[0]  # the header says so


def test_the_cypher_header_says_how_to_run_the_script_on_its_database() -> None:
    snapshot = GraphSnapshot(user_id="alice", exported_at=0.0)
    neo4j = to_cypher(snapshot, "neo4j").split("\n\n")[0]
    falkordb = to_cypher(snapshot, "falkordb").split("\n\n")[0]
    assert "cypher-shell" in neo4j and "indexes it needs" in neo4j
    assert "cypher-shell" not in falkordb and "Neo4j" not in falkordb
    assert "GRAPH.QUERY" in falkordb and "creates no index" in falkordb


def test_a_cypher_file_is_not_importable(tmp_path: Path) -> None:
    path = tmp_path / "x.cypher"
    path.write_text("MERGE (n:Entity) RETURN n;", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="JSON export"):
        parse_snapshot(path)
    with pytest.raises(InvalidInputError, match="cannot read"):
        parse_snapshot(tmp_path / "missing.json")


def test_cli_browse(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.delenv("NEO4J_URI", raising=False)
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path))
    (tmp_path / "appendonlydir").mkdir()  # a data dir: the server's append-only files
    assert cli.main(["browse", "--user", "alice"]) == 0
    out = capsys.readouterr().out
    assert "http://localhost:7474/browser/?cmd=edit&arg=MATCH%20%28a%3AEntity" in out
    assert "MATCH (a:Entity {user_id: 'alice'})" in out
    monkeypatch.setenv("NEO4J_URI", "neo4j+s://db.example.com")
    assert cli.main(["browse", "--user", "alice", "--entity", "O'Brien"]) == 0
    out = capsys.readouterr().out
    assert "https://db.example.com:7473/browser/" in out
    assert "WHERE e.name = 'O\\'Brien'" in out and "MATCH path = (e)-[*1..2]-(:Entity)" in out


def test_a_fact_said_again_or_ended_is_not_changed_by_it() -> None:
    """An import judges which side changed a fact last by ADD, UPDATE and MERGE events; an
    UPDATE of a fact said again and an INVALIDATE change neither its text nor valid_at."""
    events = [
        ("f", "ADD", 1.0, "Alice likes tea"),
        ("f", "UPDATE", 2.0, "Alice likes green tea"),
        ("f", "UPDATE", 3.0, "said again"),
        ("f", "UPDATE", 4.0, "revalidated: said again"),
        ("f", "INVALIDATE", 5.0, None),
        ("g", "MERGE", 6.0, "from fact h"),
        ("h", "INVALIDATE", 7.0, "contradicted"),
    ]
    history = [
        HistoryRecord(uid=f"e{i}", target_uid=t, event=e, ts=ts, detail=d)
        for i, (t, e, ts, d) in enumerate(events)
    ]
    assert last_changes(history) == {"f": 2.0, "g": 6.0}


def _said(uid: str, ts: float, checksum: str = "ok") -> EpisodeRecord:
    return EpisodeRecord(uid=uid, role="user", content=checksum, ts=ts, checksum=checksum)


def test_identical_messages_get_uids_of_their_own_by_rank() -> None:
    """Two identical messages without a time stay two; the first of a checksum is keyed as
    `add` keys a message at a time, so such messages keep the uid they had."""
    file = [_said("b", 2.0), _said("a", 1.0), _said("t", 1.0, "timed")]
    first, second = stable_uid("u", "ok"), stable_uid("u", "ok", "1")
    expected = {"a": first, "b": second, "t": stable_uid("u", "timed")}
    assert episode_uids(file, "u", {}) == expected
    assert episode_uids(list(reversed(file)), "u", {}) == expected


def test_held_messages_are_taken_one_to_one() -> None:
    file = [_said("a", 1.0), _said("b", 2.0), _said("c", 3.0)]
    assert episode_uids(file, "u", {"ok": ["r1", "r2"]}) == {
        "a": "r1",
        "b": "r2",
        "c": stable_uid("u", "ok", "2"),
    }
    # a derived uid the user holds stays where it is; the others take what is left
    held = {"ok": [stable_uid("u", "ok", "1"), "r1"]}
    assert episode_uids(file, "u", held) == {
        "a": "r1",
        "b": stable_uid("u", "ok", "1"),
        "c": stable_uid("u", "ok", "2"),
    }


def test_an_exports_vectors_are_kept_packed_and_written_back_exactly() -> None:
    """A 30,000-fact export's vectors took 1.2 GB as lists of floats: they are kept as one
    array of doubles each, and every value (one float32 cannot hold included) comes back."""
    values = [0.1, -0.2000000001, 1e-300, 3.0]
    entity = EntityRecord(uid="e1", key="kismet", name="Kismet", embedding=values)
    document = GraphSnapshot(user_id="alice", exported_at=0.0, entities=[entity])
    read = parse_snapshot(document.model_dump_json())
    assert isinstance(read.entities[0].embedding, array)
    assert list(read.entities[0].embedding) == values
    assert read.model_dump_json() == document.model_dump_json()
    assert EntityRecord(uid="e2", key="k", name="K").model_dump()["embedding"] is None


EXPORT = (
    '{\n "format": "graphmem-graph",\n "version": 1,\n "user_id": "ål%sice",\n'
    ' "exported_at": 0.0\n}'
)


@pytest.mark.parametrize("escape", ["\\ud800", "\\uDBFF", "\\udc00", "\\ud800\\u0041"])
def test_a_lone_surrogate_escape_in_an_export_is_refused_saying_where(
    escape: str, tmp_path: Path
) -> None:
    """The JSON parser refused it in its own words: "unexpected end of hex escape at line 4
    column 23" (a column of bytes; for a trailing one, "lone leading surrogate")."""
    path = tmp_path / "alice.json"
    path.write_text(EXPORT % escape, encoding="utf-8")
    lone = escape[:6]
    says = (
        f"not a valid graphmem export: a lone surrogate escape ({lone}) at line 4 column 16 "
        "is not valid Unicode text and cannot be stored"
    )
    for source in (EXPORT % escape, (EXPORT % escape).encode(), path):
        with pytest.raises(InvalidInputError) as refused:
            parse_snapshot(source)
        assert str(refused.value) == says


@pytest.mark.parametrize("text", ["\\ud83d\\ude00", "\\\\ud800", "\\\\\\\\ud800"])
def test_a_surrogate_pair_or_an_escaped_backslash_is_no_lone_surrogate(text: str) -> None:
    assert parse_snapshot(EXPORT % text).user_id.startswith("ål")


DOCUMENT = {"format": "graphmem-graph", "version": 1, "user_id": "alice", "exported_at": 0.0}
ENTITY = {"uid": "e1", "key": "ann", "name": "Ann"}


@pytest.mark.parametrize(
    ("document", "says"),
    [
        (
            {**DOCUMENT, "entities": [{**ENTITY, "name": "An\ud800n"}]},
            "at entities.0.name: name is not valid Unicode text (a lone surrogate at 2)",
        ),
        (
            {**DOCUMENT, "entities": [{**ENTITY, "aliases": ["Annie", "\udc00"]}]},
            "at entities.0.aliases: aliases is not valid Unicode text (a lone surrogate at 0)",
        ),
        (
            {**DOCUMENT, "user_id": "al\ud800ice"},
            "at user_id: user_id is not valid Unicode text (a lone surrogate at 2)",
        ),
    ],
)
def test_a_lone_surrogate_in_a_document_given_as_a_mapping_is_named_with_its_field(
    document: dict[str, object], says: str
) -> None:
    """A mapping holds the character itself, no JSON escape to name by line and column: the
    refusal said "Value error, text is not valid Unicode text" where a file's names its place
    and `add_facts` names the field."""
    with pytest.raises(InvalidInputError) as refused:
        parse_snapshot(document)
    assert str(refused.value) == f"not a valid graphmem export {says}"
