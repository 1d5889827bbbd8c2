"""Export and import: a user's graph leaves the embedded store and comes back exactly."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest
from falkordb import FalkorDB

from engine.add.facts import facts_batch, validate_facts
from engine.add.resolve import history_row
from engine.cli import app as cli
from engine.cli import exchange as cli_exchange
from engine.config import Settings
from engine.embedding import Embedder, as_param
from engine.errors import InvalidInputError
from engine.mcp_server.export_page import export_page
from engine.memory import Memory
from engine.normalize import entity_key, stable_uid
from engine.store.base import AliasRow, EpisodeRow, WriteBatch
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.reads import Reads
from engine.testing.hash_encoder import HashEmbedder
from engine.transfer import export as export_module
from engine.transfer.export import read_snapshot, to_cypher, to_graphml, to_json
from engine.transfer.import_limits import ImportLimits, checked
from engine.transfer.restore import import_snapshot, parse_snapshot
from engine.transfer.snapshot import GraphSnapshot
from tests.integration.test_cypher_lint import lint, problems

SETTINGS = Settings()
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'")
_names = itertools.count()

HOSTILE_FACTS = [
    ('O\'Brien "the" \\ man', "FRIEND_OF", "`backtick` Bob"),
    ("'}) DETACH DELETE n //", "OWNS", '"}) MATCH (x) DETACH DELETE x RETURN 1 //'),
    # a relationship type and a label in other scripts, written between backticks
    {
        "subject": "Zoë 😀 李雷 \u202eevil",
        "predicate": "住在",
        "object": "Berlin",
        "object_type": "город",
    },
    ("Alice", "LIVES_IN", "Paris"),
    ("bell\x07byte", "KNOWS", "tab\there", "it's $user_id \\ `x` '}) DETACH DELETE n //"),
]
EPISODE_TEXT = "line one\nline 'two' \\ `three`\r\n'}) DETACH DELETE n //\t😀"


@contextlib.contextmanager
def _store(server: EmbeddedServer, dimension: int) -> Iterator[FalkorDBStore]:
    """A graph of its own, set up, emptied and closed after."""
    client = FalkorDB(unix_socket_path=str(server.socket_path))
    store = FalkorDBStore(client, f"export{next(_names)}")
    store.setup(dimension)
    try:
        yield store
    finally:
        store.reset()
        store.close()


@pytest.fixture
def stores(falkordb_server: EmbeddedServer, embedder: Embedder) -> Iterator[list[FalkorDBStore]]:
    with (
        _store(falkordb_server, embedder.dimension) as a,
        _store(falkordb_server, embedder.dimension) as b,
    ):
        yield [a, b]


def build_graph(store: FalkorDBStore, embedder: Embedder, user: str) -> None:
    """Facts with hostile names, an alias, an episode with MENTIONS, an invalidated fact.
    Episode and history uids are derived as the engine derives them (an import re-derives
    every uid, so only such uids survive a round trip unchanged)."""
    episode = stable_uid(user, "chk-1")
    facts = validate_facts(HOSTILE_FACTS, SETTINGS)
    batch, _ = facts_batch(
        Reads(store), embedder, user, facts, episode=episode, now=1_700_000_000.125
    )
    store.write(user, batch)
    alice = Reads(store).entities_by_keys(user, ["alice"])["alice"]
    paris = next(f for f in batch.facts if f.predicate == "LIVES_IN" and "Paris" in f.text)
    extra = WriteBatch(
        aliases=[AliasRow(alice.uid, "Al 'the' Ace", entity_key("Al 'the' Ace"))],
        episodes=[
            EpisodeRow(
                episode,
                "s'1",
                "user",
                EPISODE_TEXT,
                1_700_000_000.5,
                'src"x',
                "chk-1",
                entity_uids=(alice.uid, paris.object_uid),
            )
        ],
        invalidate=[paris.uid],
        invalid_at=1_700_000_100.25,
        history=[history_row(paris.uid, "INVALIDATE", 1_700_000_100.25, episode, "x")],
    )
    store.write(user, extra)


def _same(a: GraphSnapshot, b: GraphSnapshot) -> None:
    """Equal but for the export time; a failure names the first record that differs."""
    left, right = a.model_dump(exclude={"exported_at"}), b.model_dump(exclude={"exported_at"})
    for part in ("entities", "facts", "episodes", "history"):
        for x, y in zip(left[part], right[part], strict=True):
            assert {k: v for k, v in x.items() if y[k] != v} == {}, (part, x["uid"])
    assert left == right


def test_json_round_trip_is_exact(stores: list[FalkorDBStore], embedder: Embedder) -> None:
    source, target = stores
    source_reads, target_reads = Reads(source), Reads(target)
    build_graph(source, embedder, "alice")
    exported = read_snapshot(source, "alice")
    report = import_snapshot(target, parse_snapshot(to_json(exported)), "alice")
    assert (report.entities, report.facts, report.episodes, report.history) == (10, 5, 1, 16)
    _same(read_snapshot(target, "alice"), exported)
    facts = source_reads.list_facts("alice", include_invalid=True, skip=0, limit=100)
    assert target_reads.list_facts("alice", include_invalid=True, skip=0, limit=100) == facts
    assert sum(not f.is_valid for f in facts) == 1
    (alice,) = target_reads.entities_by_uids(
        "alice", [e.uid for e in exported.entities if e.key == "alice"]
    )
    assert alice.aliases == ["Al 'the' Ace"]
    assert [p.content for p in target_reads.entity_episodes("alice", alice.uid, 10)] == [
        EPISODE_TEXT
    ]
    invalidated = next(f for f in facts if not f.is_valid)
    assert target_reads.history("alice", invalidated.uid) == source_reads.history(
        "alice", invalidated.uid
    )
    assert exported.entities[0].embedding is not None


def test_a_half_written_fact_ends_no_export_early(
    stores: list[FalkorDBStore], embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fact missing an edge is left out of an export, and the pages after it are read."""
    store = stores[0]
    facts = validate_facts([(f"Ann{i}", "KNOWS", f"Bob{i}") for i in range(7)], SETTINGS)
    store.write("u", facts_batch(Reads(store), embedder, "u", facts)[0])
    uids = sorted(
        f.uid for f in Reads(store).list_facts("u", include_invalid=True, skip=0, limit=100)
    )
    torn = "MATCH (:Fact {user_id: 'u', uid: $uid})-[e:SUBJECT]->() DELETE e"
    store._graph.query(torn, {"uid": uids[1]})
    kept = [u for u in uids if u != uids[1]]
    monkeypatch.setattr(export_module, "PAGE", 2)
    assert [f.uid for f in read_snapshot(store, "u").facts] == kept
    shown, cursor = [], None
    while True:
        page = export_page(store, "u", 2, cursor)
        shown += [f["uid"] for f in page.facts]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert shown == kept


def test_import_twice_changes_nothing(stores: list[FalkorDBStore], embedder: Embedder) -> None:
    source, target = stores
    build_graph(source, embedder, "alice")
    exported = read_snapshot(source, "alice")
    import_snapshot(target, exported, "alice")
    import_snapshot(target, exported, "alice")
    _same(read_snapshot(target, "alice"), exported)
    assert Reads(target).counts("alice") == Reads(source).counts("alice")


def test_a_second_import_reports_what_was_new_and_what_was_held(
    stores: list[FalkorDBStore], embedder: Embedder
) -> None:
    """Counted in the target user alone: alice holding the same records makes none of bob's
    held; importing the file again for bob finds every record held and none new."""
    store = stores[0]
    build_graph(store, embedder, "alice")
    exported = read_snapshot(store, "alice")

    first = import_snapshot(store, exported, "bob")
    again = import_snapshot(store, exported, "bob")

    kinds = ("entities", "facts", "episodes", "history")
    assert [getattr(first, k) for k in kinds] == [10, 5, 1, 16]  # the file's records
    assert [getattr(first, f"{k}_new") for k in kinds] == [10, 5, 1, 16]
    assert [getattr(first, f"{k}_held") for k in kinds] == [0, 0, 0, 0]
    assert [getattr(again, f"{k}_new") for k in kinds] == [0, 0, 0, 0]
    assert [getattr(again, f"{k}_held") for k in kinds] == [10, 5, 1, 16]
    assert again.model_dump()["facts_new"] == 0 and again.model_dump()["facts_held"] == 5


def test_an_export_restored_into_its_own_store_adds_no_history(
    stores: list[FalkorDBStore], embedder: Embedder
) -> None:
    """Events stamped with a clock's full precision: the store gives back fewer digits than
    their uids were hashed from, so the import cannot derive those uids again; it must still
    land on the events the user holds, not write each one a second time."""
    store = stores[0]
    facts = validate_facts([("Alice", "LIVES_IN", "Paris")], SETTINGS)
    batch, _ = facts_batch(Reads(store), embedder, "alice", facts, now=1_796_439_703.288_912_3)
    store.write("alice", batch)
    exported = read_snapshot(store, "alice")
    import_snapshot(store, parse_snapshot(to_json(exported)), "alice")
    restored = read_snapshot(store, "alice")
    assert sorted(h.uid for h in restored.history) == sorted(h.uid for h in exported.history)
    import_snapshot(stores[1], exported, "alice")  # a copy elsewhere, exported back
    import_snapshot(store, read_snapshot(stores[1], "alice"), "alice")
    assert len(read_snapshot(store, "alice").history) == len(exported.history)


def test_import_as_another_user_rekeys_every_uid(
    stores: list[FalkorDBStore], embedder: Embedder
) -> None:
    store = stores[0]
    build_graph(store, embedder, "u-alice")  # no entity named as the user
    exported = read_snapshot(store, "u-alice")
    report = import_snapshot(store, exported, "bob")
    copy = read_snapshot(store, "bob")
    assert report.user_id == "bob" and report.source_user_id == "u-alice"
    _same(read_snapshot(store, "u-alice"), exported)  # the original is untouched
    assert {e.uid for e in copy.entities} == {stable_uid("bob", e.key) for e in copy.entities}
    for f in copy.facts:
        assert f.uid == stable_uid("bob", f.subject_uid, f.predicate, f.object_uid)
    assert not {e.uid for e in copy.entities} & {e.uid for e in exported.entities}
    keyed = {e.uid: e.key for e in copy.entities}
    original = {e.uid: e.key for e in exported.entities}
    assert sorted((keyed[f.subject_uid], f.text, f.mentions) for f in copy.facts) == sorted(
        (original[f.subject_uid], f.text, f.mentions) for f in exported.facts
    )
    (episode,) = copy.episodes
    assert episode.uid == stable_uid("bob", "chk-1")
    assert {keyed[u] for u in episode.entity_uids} == {"alice", "paris"}
    fact_uids = {f.uid for f in copy.facts} | {e.uid for e in copy.entities}
    assert all(h.target_uid in fact_uids for h in copy.history)


def test_search_finds_imported_facts(
    stores: list[FalkorDBStore], embedder: Embedder, tmp_path: Path
) -> None:
    source, target = stores
    build_graph(source, embedder, "alice")
    mem = Memory(store=target, embedder=embedder, data_dir=tmp_path)
    mem.import_(to_json(read_snapshot(source, "alice")), user_id="carol")
    hits = mem.search("where does Zoë live?", user_id="carol").facts
    assert any(h.fact.object == "Berlin" for h in hits)


def test_graphml_is_read_by_networkx(stores: list[FalkorDBStore], embedder: Embedder) -> None:
    build_graph(stores[0], embedder, "alice")
    snapshot = read_snapshot(stores[0], "alice")
    graph = nx.read_graphml(io.StringIO(to_graphml(snapshot)), force_multigraph=True)
    assert graph.number_of_nodes() == len(snapshot.entities) == 10
    assert graph.number_of_edges() == len(snapshot.facts) == 5
    names = {data["name"] for _, data in graph.nodes(data=True)}
    assert {"'}) DETACH DELETE n //", 'O\'Brien "the" \\ man', "Zoë 😀 李雷 \u202eevil"} <= names
    assert sorted(d["valid"] for _, _, d in graph.edges(data=True)) == [
        False,
        True,
        True,
        True,
        True,
    ]


def test_the_cypher_export_passes_neo4j_s_parser(
    falkordb_server: EmbeddedServer, tmp_path: Path
) -> None:
    """Vectors of 8 numbers: the parser takes ~0.7 s per vector of 384."""
    with _store(falkordb_server, 8) as store:
        build_graph(store, HashEmbedder(dimension=8), "alice")
        snapshot = read_snapshot(store, "alice")
    path = tmp_path / "alice.cypher"
    path.write_text(to_cypher(snapshot, "neo4j", embeddings=True), encoding="utf-8")
    types = {f.predicate for f in snapshot.facts}
    unknown_type = tuple(f"Relationship type {t} is not present" for t in types)
    diagnostics = lint([path])[str(path)]
    assert [p for p in problems(diagnostics) if not any(u in p for u in unknown_type)] == []
    without_strings = _STRING.sub("''", path.read_text(encoding="utf-8"))
    assert "$" not in without_strings  # parameter-free
    assert "DETACH DELETE" not in without_strings  # the hostile names stayed inside quotes


def _run_script(store: FalkorDBStore, script: str) -> int:
    statements = [s.strip() for s in script.split(";\n") if s.strip()]
    bodies = ["\n".join(ln for ln in s.splitlines() if not ln.startswith("//")) for s in statements]
    for body in bodies:
        store._graph.query(body)
    return len(bodies)


def test_the_cypher_script_rebuilds_the_graph_on_falkordb(
    stores: list[FalkorDBStore], embedder: Embedder
) -> None:
    source, target = stores
    build_graph(source, embedder, "alice")
    build_graph(target, embedder, "mallory")  # must survive the hostile names below
    before = read_snapshot(target, "mallory")
    snapshot = read_snapshot(source, "alice")
    script = to_cypher(snapshot, "falkordb", embeddings=True)
    assert _run_script(target, script) >= 5
    _same(read_snapshot(target, "alice"), snapshot)
    _same(read_snapshot(target, "mallory"), before)
    assert _run_script(target, script) and Reads(target).counts("alice") == Reads(source).counts(
        "alice"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["entities"][0].update(name="a\x00b"), "NUL"),
        # a document read as a mapping, not JSON text, can hold one: it was cleaned to a space
        (lambda d: d["entities"][0].update(name="a\ud800b"), "lone surrogate"),
        (lambda d: d["facts"][0].update(text="a\ud800b"), "lone surrogate"),
        (lambda d: d["facts"][0].update(predicate="X` DETACH DELETE"), "relationship type"),
        # a type add_facts never makes: a look-alike of a stored one (decomposed, fullwidth)
        (lambda d: d["facts"][0].update(predicate="ESTA\u0301"), "relationship type"),
        (lambda d: d["facts"][0].update(predicate="\uff25\uff33\uff34\uff21"), "relationship type"),
        (lambda d: d["facts"][0].update(predicate="KNOWS"), "but its relationship is"),
        (lambda d: d["facts"][0].update(subject_uid="nobody"), "missing"),
        (lambda d: d.update(version=2), "version"),
        (lambda d: d["entities"][0].update(mentions=float("nan")), "mentions"),
        (lambda d: d["entities"][0].update(mentions=-5), "mentions"),
        (lambda d: d["facts"][0].update(mentions=10**30), "mentions"),
        # a load mark is hex digits, a few of them, and an entity holds a bounded number
        (lambda d: d["entities"][0].update(load_marks=["'); DROP"]), "load_marks"),
        (lambda d: d["entities"][0].update(load_marks=["a" * 65]), "load_marks"),
        (lambda d: d["entities"][0].update(load_marks=["ab"] * 65), "load_marks"),
    ],
)
def test_a_bad_document_is_refused(
    stores: list[FalkorDBStore], embedder: Embedder, change: object, message: str
) -> None:
    build_graph(stores[0], embedder, "alice")
    document = json.loads(to_json(read_snapshot(stores[0], "alice")))
    change(document)  # type: ignore[operator]
    with pytest.raises(InvalidInputError) as caught:
        parse_snapshot(document)
    assert message in str(caught.value) or message in str(caught.value.__cause__)


def test_an_entity_type_add_facts_never_makes_is_refused(
    stores: list[FalkorDBStore], embedder: Embedder
) -> None:
    """A decomposed or fullwidth label is a look-alike of one add_facts stores."""
    build_graph(stores[0], embedder, "alice")
    document = json.loads(to_json(read_snapshot(stores[0], "alice")))
    limits = ImportLimits.from_settings(SETTINGS, embedder.dimension)
    for look_alike in ["Pai\u0301s", "\uff30\uff45\uff52\uff53\uff4f\uff4e\uff41"]:
        document["entities"][0]["type"] = look_alike
        with pytest.raises(InvalidInputError, match="is not a PascalCase label"):
            checked(parse_snapshot(document), limits)
    document["entities"][0]["type"] = "País"
    assert checked(parse_snapshot(document), limits).entities[0].type == "País"


# -- CLI ------------------------------------------------------------------------------------


@pytest.fixture
def cli_graph(
    falkordb_server: EmbeddedServer,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Iterator[FalkorDBStore]:
    opened: list[FalkorDBStore] = []  # a Memory leaves a store it was given open
    with _store(falkordb_server, embedder.dimension) as store:
        build_graph(store, embedder, "alice")
        graph_name = store._graph.name

        def memory(args: object, **_: object) -> Memory:
            client = FalkorDB(unix_socket_path=str(falkordb_server.socket_path))
            opened.append(FalkorDBStore(client, graph_name))
            return Memory(store=opened[-1], embedder=embedder, data_dir=tmp_path)

        monkeypatch.setattr(cli_exchange, "open_memory", memory)
        yield store
        for same in opened:
            same.close()


def test_cli_export_import_round_trip(
    cli_graph: FalkorDBStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_graph_reads = Reads(cli_graph)
    out = tmp_path / "alice.json"
    assert cli.main(["export", "--user", "alice", "--format", "json", "-o", str(out)]) == 0
    assert cli.main(["import", str(out), "--user", "dave"]) == 0
    assert "into user 'dave'" in capsys.readouterr().out
    assert cli_graph_reads.counts("dave") == cli_graph_reads.counts("alice")
    assert cli.main(["--json", "import", str(out), "--user", "alice"]) == 0
    assert json.loads(capsys.readouterr().out)["user_id"] == "alice"
    assert cli.main(["export", "--user", "alice", "--format", "cypher"]) == 0
    assert "MERGE (e:Entity {user_id: 'alice', key: row.key})" in capsys.readouterr().out
    assert cli.main(["export", "--user", "alice", "--format", "graphml"]) == 0
    assert capsys.readouterr().out.startswith("<?xml")
    graphml = tmp_path / "alice.graphml"
    args = ["export", "--user", "alice", "--format", "graphml", "-o", str(graphml), "--json"]
    assert cli.main(args) == 0
    said = capsys.readouterr()
    assert json.loads(said.out) == {"user_id": "alice", "format": "graphml", "output": str(graphml)}
    assert said.err == "" and graphml.read_text(encoding="utf-8").startswith("<?xml")


def test_cli_import_says_when_an_entity_named_as_the_user_became_its_own(
    cli_graph: FalkorDBStore,
    embedder: Embedder,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    build_graph(cli_graph, embedder, "u-alice")  # names Paris, no entity named u-alice
    out = tmp_path / "u-alice.json"
    assert cli.main(["export", "--user", "u-alice", "-o", str(out)]) == 0
    assert cli.main(["import", str(out), "--user", "paris"]) == 0
    said = capsys.readouterr().out
    assert said.rstrip().endswith("; the entity named as 'paris' is that user's own entity")
    paris = Reads(cli_graph).entities_by_keys("paris", ["paris"])["paris"]
    assert paris.uid == Memory.self_uid("paris")


def test_cli_import_needs_the_user_named(
    cli_graph: FalkorDBStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_graph_reads = Reads(cli_graph)
    out = tmp_path / "alice.json"
    assert cli.main(["export", "--user", "alice", "--format", "json", "-o", str(out)]) == 0
    before = cli_graph_reads.counts(None)
    assert cli.main(["import", str(out)]) == 2  # a usage error, as argparse reports them
    assert "the following arguments are required: --user" in capsys.readouterr().err
    assert cli_graph_reads.counts(None) == before
    assert cli.main(["import", "--help"]) == 0
    usage = capsys.readouterr().out.split("\n\n")[0]
    assert "--user USER" in usage and "[--user" not in usage


def test_cli_reports_a_bad_import_in_one_line(
    cli_graph: FalkorDBStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "graphmem-graph"}', encoding="utf-8")
    assert cli.main(["import", str(bad), "--user", "alice"]) == 1
    reading, error = capsys.readouterr().err.splitlines()  # what it read, then one error line
    assert reading == f"import: reading {bad} (28 bytes)"
    assert error.startswith("graphmem: error: not a valid graphmem export")


def test_cli_import_of_a_lone_surrogate_escape_says_where_and_writes_nothing(
    cli_graph: FalkorDBStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JSON parser's words were the error: "Invalid JSON: unexpected end of hex escape at
    line 1 column N" (N counting bytes, not characters)."""
    out = tmp_path / "alice.json"
    assert cli.main(["export", "--user", "alice", "-o", str(out)]) == 0
    bad = out.read_text(encoding="utf-8").replace('"text":"', '"text":"\\ud800', 1)
    out.write_text(bad, encoding="utf-8")
    where = bad.index("\\ud800") + 1
    before = Reads(cli_graph).counts(None)
    capsys.readouterr()
    assert cli.main(["import", str(out), "--user", "dave"]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "graphmem: error: not a valid graphmem export: a lone surrogate escape (\\ud800) at "
        f"line 1 column {where} is not valid Unicode text and cannot be stored"
    )
    assert Reads(cli_graph).counts(None) == before


def test_cli_export_of_a_user_with_no_memories_is_an_error(
    cli_graph: FalkorDBStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A misspelt user ("Alice" for "alice") is not exported as an empty graph with status 0:
    that file would be taken for the backup."""
    out = tmp_path / "Alice.json"
    assert cli.main(["export", "--user", "Alice", "-o", str(out)]) == 1
    assert "no memories for user 'Alice'" in capsys.readouterr().err
    assert not out.exists()
    assert cli.main(["export", "--user", "Alice"]) == 1
    assert capsys.readouterr().out == ""


def test_browse_statements_are_one_valid_neo4j_statement(tmp_path: Path) -> None:
    from engine.transfer.browse import browse_hint
    from tests.integration.test_cypher_lint import lint, problems

    hints = [browse_hint(None, "o'brien \\ x"), browse_hint(None, "alice", "John")]
    paths = []
    for i, hint in enumerate(hints):
        assert "$" not in hint.statement and ":param" not in hint.statement
        paths.append(tmp_path / f"browse_{i}.cypher")
        paths[-1].write_text(hint.statement, encoding="utf-8")
    report = lint(paths)
    assert [problems(report[str(p)]) for p in paths] == [[], []]


def test_an_imported_message_is_found_by_its_meaning(
    stores: list[FalkorDBStore], embedder: Embedder, tmp_path: Path
) -> None:
    source, target = stores
    Memory(store=source, embedder=embedder, data_dir=tmp_path).add(
        "I adopted a grey kitten named Miso last week.", user_id="alice"
    )
    import_snapshot(target, read_snapshot(source, "alice"), "bob", embedder=embedder)
    (episode,) = read_snapshot(target, "bob").episodes  # keyed as bob's add keys it
    query = as_param(embedder.encode_one("a new pet cat"))
    (nearest,) = Reads(target).vector_episodes("bob", query, 5)
    assert nearest[0] == episode.uid == stable_uid("bob", episode.checksum)


def test_import_reports_its_progress(stores: list[FalkorDBStore], embedder: Embedder) -> None:
    source, target = stores
    build_graph(source, embedder, "alice")
    seen: list[tuple[str, int, int]] = []
    import_snapshot(
        target, read_snapshot(source, "alice"), "bob", embedder,
        progress=lambda p: seen.append((p.phase, p.done, p.total)),
    )  # fmt: skip
    # its start, then the one message
    assert [p for p in seen if p[0] == "vectors"] == [("vectors", 0, 1), ("vectors", 1, 1)]
    written = [done for phase, done, total in seen if phase == "records" and total == 32]
    assert written == sorted(written) and written[-1] == 32 and len(written) > 1


def test_cli_import_says_what_it_reads_before_reading(
    cli_graph: FalkorDBStore,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "alice.json"
    assert cli.main(["export", "--user", "alice", "-o", str(out)]) == 0
    data = out.read_bytes().ljust(1_234_567)  # JSON allows the spaces after the document
    out.write_bytes(data)
    capsys.readouterr()
    assert cli.main(["import", str(out), "--user", "fay"]) == 0
    from_file = capsys.readouterr().err.splitlines()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert cli.main(["import", "-", "--user", "fay"]) == 0
    from_stdin = capsys.readouterr().err.splitlines()
    assert from_file[0] == f"import: reading {out} (1.2 MB)"
    assert from_file[1].startswith("import vectors: ")
    assert from_stdin[0] == "import: reading standard input"


def test_cli_import_shows_progress_on_stderr_unless_json(
    cli_graph: FalkorDBStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "alice.json"
    assert cli.main(["export", "--user", "alice", "-o", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["import", str(out), "--user", "erin"]) == 0
    shown = capsys.readouterr()
    assert cli.main(["import", str(out), "--user", "erin", "--json"]) == 0
    quiet = capsys.readouterr()
    # not a terminal: a line every few seconds and one at the end of each phase, as load's
    assert shown.out.startswith(
        "imported 10 new entities (0 already held), 5 new facts (0 already held), 1 new "
        "episodes (0 already held), 16 new history events (0 already held) of 'alice' into "
        "user 'erin'"
    )
    assert any(line.startswith("import vectors: 1/1 (100%)") for line in shown.err.splitlines())
    assert shown.err.splitlines()[-1].startswith("import records: 32/32 (100%)")
    assert "import " not in quiet.err and json.loads(quiet.out)["user_id"] == "erin"
    again = json.loads(quiet.out)  # the same file a second time: nothing new
    assert (again["entities_new"], again["entities_held"], again["entities"]) == (0, 10, 10)
    assert (again["facts_new"], again["facts_held"]) == (0, 5)
