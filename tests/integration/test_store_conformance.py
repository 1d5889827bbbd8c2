"""The contract every GraphStore adapter must keep (run on each adapter the machine has)."""

from __future__ import annotations

import time

import pytest

from engine.add.facts import facts_batch, validate_facts
from engine.config import Settings
from engine.embedding import Embedder, as_param
from engine.errors import InvalidInputError
from engine.knowledge import salience
from engine.retrieval.lexical import TERMS_VERSION, LexicalIndex, stored_terms
from engine.store import nearest as vector_reads
from engine.store.base import (
    AliasRow,
    EpisodeRow,
    GraphStore,
    Neighbour,
    RenameRow,
    Rows,
    WriteBatch,
    Written,
)
from engine.store.reads import Reads
from engine.store.rows import times_stamp
from engine.store.statements import delete_fact

SETTINGS = Settings()


def _write(
    store: GraphStore, embedder: Embedder, user: str, facts: list[tuple[str, ...]]
) -> set[str]:
    batch, changes = facts_batch(Reads(store), embedder, user, validate_facts(facts, SETTINGS))
    store.write(user, batch)
    return set(changes.new)


def test_a_fact_is_stored_in_both_forms(store: GraphStore, embedder: Embedder) -> None:
    reads = Reads(store)
    (uid,) = _write(store, embedder, "u1", [("Alice", "FRIEND_OF", "John")])
    (fact,) = reads.facts_by_uids("u1", [uid])
    assert fact.triple == ("Alice", "FRIEND_OF", "John")
    assert fact.text == "Alice friend of John"
    anchor = reads.entities_by_keys("u1", ["alice"])["alice"]
    edges = _around(store, "u1", anchor.uid, include_invalid=False)
    assert [(e.uid, e.predicate, e.far_name, e.outgoing) for e in edges] == [
        (uid, "FRIEND_OF", "John", True)
    ]


def _around(
    store: GraphStore,
    user: str,
    uid: str,
    predicates: list[str] | None = None,
    include_invalid: bool = True,
    scan: int = 100,
    limit: int = 100,
) -> list[Neighbour]:
    return Reads(store).neighbours(
        user,
        [uid],
        predicates=predicates,
        scan=scan,
        limit=limit,
        total=1000,
        include_invalid=include_invalid,
    )


def test_writing_the_same_fact_twice_bumps_mentions_only(
    store: GraphStore, embedder: Embedder
) -> None:
    reads = Reads(store)
    first = _write(store, embedder, "u1", [("Alice", "LIKES", "hiking")])
    second = _write(
        store, embedder, "u1", [("alice", "likes", "Hiking"), ("Alice", "LIKES", "hiking")]
    )
    assert len(first) == 1
    assert second == set()
    (fact,) = reads.list_facts("u1", include_invalid=False, skip=0, limit=10)
    assert fact.mentions == 3
    assert reads.counts("u1") == {
        "users": 1,
        "entities": 2,
        "facts": 1,
        "valid_facts": 1,
        "episodes": 0,
    }
    alice = reads.entities_by_keys("u1", ["alice"])["alice"]
    assert alice.mentions == 3
    assert alice.name == "Alice"  # the first spelling stays


def test_a_write_returns_what_it_wrote(store: GraphStore, embedder: Embedder) -> None:
    facts = validate_facts([("Alice", "LIKES", "tea"), ("Alice", "OWNS", "a cat")], SETTINGS)
    batch, _ = facts_batch(Reads(store), embedder, "u1", facts)
    message = EpisodeRow("m1", None, "user", "I like tea", time.time(), None, "c1")
    batch.episodes.append(message)
    written = store.write("u1", batch)
    assert written.predicates == {"LIKES", "OWNS"}
    assert written.mentions == {f.uid: 1 for f in batch.facts}
    assert written.episodes == (message,)
    assert store.write("u1", WriteBatch()) == Written()


def test_a_batch_of_names_alone_is_written(store: GraphStore, embedder: Embedder) -> None:
    facts = validate_facts([("Robert", "LIKES", "tea")], SETTINGS)
    store.write("u1", facts_batch(Reads(store), embedder, "u1", facts)[0])
    robert = Reads(store).entities_by_keys("u1", ["robert"])["robert"]
    store.write("u1", WriteBatch(aliases=[AliasRow(robert.uid, "Bob", "bob")]))
    assert Reads(store).entities_by_keys("u1", ["bob"])["bob"].uid == robert.uid
    store.write("u1", WriteBatch(renames=[RenameRow(robert.uid, "Rob", "rob")]))
    assert Reads(store).entities_by_keys("u1", ["rob"])["rob"].name == "Rob"


def test_no_read_returns_another_users_data(store: GraphStore, embedder: Embedder) -> None:
    reads = Reads(store)
    _write(store, embedder, "alice", [("John", "OWNS", "Tommy")])
    _write(store, embedder, "bob", [("John", "OWNS", "Rex")])
    vector = as_param(embedder.encode_one("John owns a dog"))
    for user, other in (("alice", "Rex"), ("bob", "Tommy")):
        texts = [f.text for f, _ in reads.vector_facts(user, vector, 10, include_invalid=True)]
        texts += [f.text for f in reads.list_facts(user, include_invalid=True, skip=0, limit=100)]
        names = [e.name for e, _ in reads.fulltext_entities(user, ["john", "tommy", "rex"], 10)]
        names += [e.name for e, _ in reads.vector_entities(user, vector, 10)]
        john = reads.entities_by_keys(user, ["john"])["john"]
        near = _around(store, user, john.uid)
        names += [e.far_name for e in near]
        names += [e.far_name for n in near for e in _around(store, user, n.far, ["OWNS"])]
        assert texts and names
        assert all(other not in t for t in texts)
        assert other not in names
        assert all(e.user_id == user for e, _ in reads.vector_entities(user, vector, 10))


def test_vector_search_does_not_starve_when_other_users_fill_the_index(
    store: GraphStore, embedder: Embedder
) -> None:
    crowd = [(f"Person {i}", "OWNS", f"dog {i}", f"Person {i} owns a dog") for i in range(300)]
    _write(store, embedder, "crowd", crowd)
    _write(store, embedder, "me", [("Me", "OWNS", "a cat", "I own a cat called Miso")])
    vector = as_param(embedder.encode_one("who owns a dog"))
    hits = Reads(store).vector_facts("me", vector, 5, include_invalid=False)
    assert [f.text for f, _ in hits] == ["I own a cat called Miso"]
    assert 0.0 <= hits[0][1] <= 1.0


def test_a_user_s_size_is_counted_again_only_after_a_write_for_that_user(
    store: GraphStore, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count that decides scan or index is a round trip: kept until the adapter writes
    for the user, so a user who grows large is then read through the index."""
    monkeypatch.setattr(vector_reads, "SCAN_MAX", 5)
    asked: list[str] = []
    run = store.run
    monkeypatch.setattr(
        store, "run", lambda name, *a, **kw: asked.append(name) or run(name, *a, **kw)
    )
    reads, vector = Reads(store), as_param(embedder.encode_one("who owns a dog"))
    _write(store, embedder, "other", [("Zed", "OWNS", "a dog")])
    _write(store, embedder, "u", [("Person 0", "OWNS", "dog 0")])
    for _ in range(2):
        assert len(reads.vector_facts("u", vector, 3, include_invalid=False)) == 1
    reads.vector_facts("other", vector, 3, include_invalid=False)
    assert asked.count("count_fact_vectors") == 2
    assert "search_fact_vectors" not in asked
    _write(store, embedder, "u", [(f"Person {i}", "OWNS", f"dog {i}") for i in range(1, 20)])
    assert len(reads.vector_facts("u", vector, 3, include_invalid=False)) == 3
    assert asked.count("count_fact_vectors") == 3
    assert "search_fact_vectors" in asked


def test_vector_search_finds_k_facts_after_they_were_mentioned_again(
    store: GraphStore, embedder: Embedder
) -> None:
    """Re-mentioning a fact rewrites its node; on FalkorDB that leaves stale vectors in the
    index, which must not cost the user results."""
    facts = [(f"Person {i}", "OWNS", f"dog {i}") for i in range(40)]
    for _ in range(4):
        _write(store, embedder, "u", facts)
    vector = as_param(embedder.encode_one("who owns a dog"))
    assert len(Reads(store).vector_facts("u", vector, 30, include_invalid=False)) == 30


@pytest.mark.parametrize(
    ("short_at", "asked", "scanned"), [(64, [64, 256], []), (256, [64, 256], [5])]
)
def test_a_short_index_answer_is_asked_wider_before_the_user_is_scanned(
    short_at: int, asked: list[int], scanned: list[int]
) -> None:
    """Stale vectors crowd an index just loaded: a 4x wider answer passes over them; a user
    still short is scanned."""
    seen: list[int] = []
    scans: list[int] = []

    def index(n: int, k: int) -> Rows:
        seen.append(n)
        return [[i] for i in range(k - 2 if n <= short_at else k)]

    def scan(k: int) -> Rows:
        scans.append(k)
        return [[i] for i in range(k)]

    rows = vector_reads.nearest(lambda cap: cap, index, scan, 5)
    assert (len(rows), seen, scans) == (5, asked, scanned)


def test_similarities_are_in_unit_range_and_ordered(store: GraphStore, embedder: Embedder) -> None:
    _write(store, embedder, "u", [("Alice", "LIKES", "hiking"), ("Alice", "HATES", "badminton")])
    vector = as_param(embedder.encode_one("Alice likes hiking"))
    hits = Reads(store).vector_facts("u", vector, 5, include_invalid=False)
    sims = [s for _, s in hits]
    assert hits[0][0].text == "Alice likes hiking"
    assert sims == sorted(sims, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in sims)
    assert sims[0] > 0.99


def test_invalidated_facts_are_kept_but_hidden(store: GraphStore, embedder: Embedder) -> None:
    reads = Reads(store)
    (uid,) = _write(store, embedder, "u", [("Alice", "LIKES", "badminton")])
    from engine.store.base import WriteBatch

    store.write("u", WriteBatch(invalidate=[uid], invalid_at=time.time()))
    assert reads.list_facts("u", include_invalid=False, skip=0, limit=10) == []
    (kept,) = reads.list_facts("u", include_invalid=True, skip=0, limit=10)
    assert kept.invalid_at is not None
    alice = reads.entities_by_keys("u", ["alice"])["alice"]
    assert _around(store, "u", alice.uid, include_invalid=False) == []
    assert _around(store, "u", alice.uid, ["LIKES"], include_invalid=False) == []
    assert len(_around(store, "u", alice.uid, include_invalid=True)) == 1
    vector = as_param(embedder.encode_one("badminton"))
    assert reads.vector_facts("u", vector, 5, include_invalid=False) == []


def test_neighbours_are_read_by_relationship_type_within_the_scan(
    store: GraphStore, embedder: Embedder
) -> None:
    reads = Reads(store)
    hub = [(f"Movie {i}", "HAS_GENRE", "Drama") for i in range(120)]
    _write(store, embedder, "u", [*hub, ("Movie 1", "DIRECTED_BY", "Ann Lee")])
    keys = reads.entities_by_keys("u", ["movie 1", "drama", "ann lee"])
    movie, drama = keys["movie 1"].uid, keys["drama"].uid
    (directed,) = _around(store, "u", movie, ["DIRECTED_BY"])
    assert (directed.far_name, directed.outgoing, directed.degree) == ("Ann Lee", True, 1)
    both = _around(store, "u", movie, ["HAS_GENRE", "DIRECTED_BY"])
    assert {e.predicate for e in both} == {"HAS_GENRE", "DIRECTED_BY"}
    assert _around(store, "u", drama, ["DIRECTED_BY", "NOT_THERE"]) == []
    members = _around(store, "u", drama, ["HAS_GENRE"], scan=1000, limit=1000)
    assert len(members) == 120 and {e.degree for e in members} == {120}
    assert all(not e.outgoing and e.near == drama for e in members)
    scanned = _around(store, "u", drama, ["HAS_GENRE"], scan=10, limit=4)
    assert len(scanned) == 4 and {e.degree for e in scanned} == {10}  # the read stops at 10
    sample = _around(store, "u", drama, None, scan=30, limit=30)
    assert len(sample) == 30  # any type: a hub costs no more than the scan
    for types in (["HAS_GENRE", "DIRECTED_BY"], None):
        first = reads.neighbours("u", [movie, drama], predicates=types, scan=50, limit=50,
                                 total=20, include_invalid=False)  # fmt: skip
        assert len(first) == 20  # the nodes first in the read get the total: movie 1's two
        assert {e.far_name for e in first if e.near == movie} == {"Drama", "Ann Lee"}
        # ... whichever way each node is read (FalkorDB reads a hub apart from small nodes)
        hub_first = reads.neighbours("u", [drama, movie], predicates=types, scan=50, limit=50,
                                     total=20, include_invalid=False)  # fmt: skip
        assert len(hub_first) == 20 and {e.near for e in hub_first} == {drama}
    assert reads.neighbours("u", [movie, drama], predicates=[], scan=9, limit=9, total=9,
                            include_invalid=False) == []  # fmt: skip


def test_many_nodes_read_by_type_in_one_go_give_what_each_read_alone_gives(
    store: GraphStore, embedder: Embedder
) -> None:
    """FalkorDB reads four or more nodes in one traversal when none is a hub."""
    reads = Reads(store)
    hub = [(f"Movie {i}", "HAS_GENRE", "Drama") for i in range(60)]
    directed = [(f"Movie {i}", "DIRECTED_BY", f"Director {i % 3}") for i in range(6)]
    _write(store, embedder, "u", [*hub, *directed])
    keys = reads.entities_by_keys("u", [f"movie {i}" for i in range(6)] + ["drama"])
    movies = [keys[f"movie {i}"].uid for i in range(6)]
    types = ["DIRECTED_BY", "HAS_GENRE"]

    def read(nodes: list[str], total: int = 100) -> set[tuple[str, str, str, int]]:
        found = reads.neighbours("u", nodes, predicates=types, scan=50, limit=50, total=total,
                                 include_invalid=False)  # fmt: skip
        return {(e.near, e.predicate, e.far_name, e.degree) for e in found}

    alone = [read([movie]) for movie in movies]
    assert read(movies) == set().union(*alone) and len(set().union(*alone)) == 12
    first = {edge[:3] for edge in read(movies, total=5)}  # the first nodes get the total
    two, three = ({e[:3] for e in set().union(*alone[:n])} for n in (2, 3))
    assert len(first) == 5 and two <= first <= three
    with_hub = read([keys["drama"].uid, *movies[:3]], total=20)
    assert len(with_hub) == 20 and {near for near, *_ in with_hub} == {keys["drama"].uid}


def test_a_typed_read_keeps_the_most_mentioned_of_the_edges_it_read(
    store: GraphStore, embedder: Embedder
) -> None:
    """Of the `scan` edges read at a node, the `limit` to the most mentioned neighbours come
    back (ties to the lower uid), however many nodes the read has."""
    reads = Reads(store)
    facts = [(f"Movie {i}", "HAS_GENRE", "Drama") for i in range(12)]
    facts += [(f"Movie {i}", "RELEASE_YEAR", f"{1990 + n}") for i in (3, 7, 9) for n in range(i)]
    _write(store, embedder, "u", facts)
    keys = reads.entities_by_keys("u", ["drama", "movie 0", "movie 1", "movie 2"])
    drama, others = keys["drama"].uid, [keys[f"movie {i}"].uid for i in range(3)]
    for nodes in ([drama], [drama, *others]):  # alone, and with three more (one traversal)
        found = reads.neighbours("u", nodes, predicates=["HAS_GENRE"], scan=50, limit=3,
                                 total=100, include_invalid=False)  # fmt: skip
        kept = [e for e in found if e.near == drama]
        assert [e.far_name for e in kept] == ["Movie 9", "Movie 7", "Movie 3"]
        assert {e.degree for e in kept} == {12}  # the edges read, not those kept


def test_probes_of_several_relations_in_one_read_give_what_each_read_alone_gives(
    store: GraphStore, embedder: Embedder
) -> None:
    """A hub's probes (a few neighbours along each candidate relation) go as one read."""
    reads = Reads(store)
    facts = [(f"Movie {i}", "HAS_GENRE", "Drama") for i in range(40)]
    facts += [("Drama", "HAS_GENRE_INVERSE", f"Movie {i}") for i in range(3)]
    facts += [("Drama", "ORIGINATED_IN", "Greece"), ("Sam", "LIKES", "Drama")]
    _write(store, embedder, "u", facts)
    keys = reads.entities_by_keys("u", ["drama", "movie 1"])
    nodes = [keys["drama"].uid, keys["movie 1"].uid]
    groups = [["HAS_GENRE", "HAS_GENRE_INVERSE"], ["ORIGINATED_IN"], ["LIKES"], ["NOT_THERE"]]

    def key(n: Neighbour) -> tuple[object, ...]:
        return (n.near, n.uid, n.predicate, n.outgoing, n.far_name, n.degree)

    together = reads.probe("u", nodes, groups, size=3, include_invalid=False)
    for types, found in zip(groups, together, strict=True):
        alone = reads.neighbours("u", nodes, predicates=types, scan=3, limit=3, total=100,
                                 include_invalid=False)  # fmt: skip
        assert sorted(map(key, found)) == sorted(map(key, alone))
    assert [len(found) for found in together] == [5, 1, 1, 0]  # 3 at Drama, Movie 1 has 2


def test_a_read_of_any_type_is_the_union_of_the_typed_reads(
    store: GraphStore, embedder: Embedder
) -> None:
    """FalkorDB reads "any type" through the :Fact nodes: it must see exactly the edges the
    typed reads see, a fact joining a node to itself once, invalid facts only when asked."""
    reads = Reads(store)
    facts = [
        ("Alice", "FRIEND_OF", "John"),
        ("John", "FRIEND_OF", "Alice"),
        ("Alice", "LIKES", "hiking"),
        ("Alice", "HAS_NAME", "Alice"),
        ("Bob", "KNOWS", "Alice"),
    ]
    _write(store, embedder, "u", facts)
    (gone,) = _write(store, embedder, "u", [("Alice", "LIKES", "badminton")])
    store.write("u", WriteBatch(invalidate=[gone], invalid_at=time.time()))
    alice = reads.entities_by_keys("u", ["alice"])["alice"].uid
    predicates = ["FRIEND_OF", "LIKES", "HAS_NAME", "KNOWS"]

    def key(n: Neighbour) -> tuple[object, ...]:
        return (n.uid, n.predicate, n.outgoing, n.far_name, n.far_mentions, n.mentions)

    for include_invalid in (False, True):
        typed = _around(store, "u", alice, predicates, include_invalid)
        whole = _around(store, "u", alice, None, include_invalid)
        assert sorted(map(key, whole)) == sorted(map(key, typed))
        assert len(whole) == 5 + include_invalid
        assert {n.degree for n in whole} == {5 + include_invalid}
        kinds = reads.relation_types("u", [alice], include_invalid=include_invalid)[alice]
        assert kinds == {"FRIEND_OF": 2, "LIKES": 1 + include_invalid, "HAS_NAME": 1, "KNOWS": 1}
    mentions = reads.entities_by_keys("u", ["alice"])["alice"].mentions
    badminton = reads.entities_by_keys("u", ["badminton"])["badminton"].uid
    assert reads.relation_types_by_end("u", [alice], mentions - 1) == {}  # a hub: not read
    by_end = reads.relation_types_by_end("u", [alice, badminton], mentions)
    assert by_end[badminton] == set()  # read, its one fact invalid
    ends = by_end[alice]
    at_both = {"FRIEND_OF", "HAS_NAME"}  # a fact each way; a fact joining Alice to herself
    assert ends == {(t, s) for t in at_both for s in (True, False)} | {
        ("LIKES", True),
        ("KNOWS", False),
    }


def test_every_neighbour_read_returns_names_whole_whatever_they_hold(
    store: GraphStore, embedder: Embedder
) -> None:
    """The neighbour reads send each edge as one line of text: a name holding spaces, the
    line's own markers, digits or characters beyond ASCII comes back as stored, with its
    edge's direction and counts, from every kind of read."""
    reads = Reads(store)
    odd = ["Zoë | 東京 > 2 < x", "7 7 KNOWS > 1 1 ab", "Anne Frank 🙂"]
    _write(store, embedder, "u", [(odd[0], "KNOWS", "Hub"), (odd[1], "KNOWS", "Hub")])
    _write(store, embedder, "u", [(odd[0], "KNOWS", "Hub"), ("Hub", "LIKES", odd[2])])
    hub = reads.entities_by_keys("u", ["hub"])["hub"].uid

    def key(n: Neighbour) -> tuple[object, ...]:
        return (n.near, n.predicate, n.outgoing, n.far_name, n.mentions)

    want = {
        (hub, "KNOWS", False, odd[0], 2),
        (hub, "KNOWS", False, odd[1], 1),
        (hub, "LIKES", True, odd[2], 1),
    }
    whole = _around(store, "u", hub)
    assert {key(n) for n in whole} == want
    assert {key(n) for n in _around(store, "u", hub, ["KNOWS", "LIKES"])} == want
    knows, likes = reads.probe("u", [hub], [["KNOWS"], ["LIKES"]], size=9, include_invalid=False)
    assert {key(n) for n in knows + likes} == want
    far = reads.entities_by_uids("u", [n.far for n in whole])
    assert {e.name for e in far} == set(odd)  # each far uid is its name's entity
    zoe = reads.entities_by_keys("u", ["zoë | 東京 > 2 < x"])
    shared = reads.shared_neighbours("u", [hub, *(e.uid for e in zoe.values())], scan=9,
                                     total=99, limit=9, include_invalid=False)  # fmt: skip
    assert shared == []  # nothing lies next to both


def test_shared_neighbours_are_the_nodes_next_to_two_anchors_whatever_joins_them(
    store: GraphStore, embedder: Embedder
) -> None:
    reads = Reads(store)
    facts = [
        ("Alice", "MEMBER_OF", "Chess Club"),
        ("Alice", "BORN_IN", "Peru"),
        ("Dan", "LIKES", "Chess Club"),
        ("Peru", "HOME_OF", "Dan"),
        ("Dan", "LIKES", "Peru"),
        ("Bob", "MEMBER_OF", "Chess Club"),
        ("Carol", "BORN_IN", "Peru"),
        ("Chess Club", "BASED_IN", "Peru"),
        ("Chess Club", "HAS_NAME", "Chess Club"),
    ]
    _write(store, embedder, "u", facts)
    _write(store, embedder, "u", [("Dan", "LIKES", "Peru")])  # Dan: the most mentioned
    (gone,) = _write(store, embedder, "u", [("Erin", "MEMBER_OF", "Chess Club")])
    _write(store, embedder, "u", [("Erin", "BORN_IN", "Peru")])
    store.write("u", WriteBatch(invalidate=[gone], invalid_at=time.time()))
    _write(store, embedder, "other", [("Zed", "MEMBER_OF", "Chess Club"), ("Zed", "LIKES", "Peru")])
    keys = reads.entities_by_keys("u", ["chess club", "peru"])
    anchors = [keys["chess club"].uid, keys["peru"].uid]

    def shared(limit: int = 50, include_invalid: bool = False) -> dict[str, set[str]]:
        found = reads.shared_neighbours("u", anchors, scan=100, total=1000, limit=limit,
                                        include_invalid=include_invalid)  # fmt: skip
        assert {n.near for n in found} <= set(anchors)
        out: dict[str, set[str]] = {}
        for n in found:
            out.setdefault(n.far_name, set()).add(n.predicate)
        return out

    assert shared() == {"Alice": {"MEMBER_OF", "BORN_IN"}, "Dan": {"LIKES", "HOME_OF"}}
    assert shared(limit=1) == {"Dan": {"LIKES", "HOME_OF"}}
    assert set(shared(include_invalid=True)) == {"Alice", "Dan", "Erin"}
    assert reads.shared_neighbours("u", anchors[:1], scan=100, total=1000, limit=50,
                                   include_invalid=False) == []  # fmt: skip


def test_a_relation_s_ends_are_sampled_and_told_apart(
    store: GraphStore, embedder: Embedder
) -> None:
    """What a relation leads to (its current facts' subjects and objects, this user's only),
    and which entities are a relation's subject or its object."""
    reads = Reads(store)
    facts = [
        ("Lima", "CONTAINED_BY", "Peru"),
        ("Cusco", "CONTAINED_BY", "Peru"),
        ("Ann", "NATIONALITY", "Peru"),
        ("Ann", "BORN_IN", "Cusco"),
    ]
    _write(store, embedder, "u", facts)
    (gone,) = _write(store, embedder, "u", [("Quito", "CONTAINED_BY", "Ecuador")])
    store.write("u", WriteBatch(invalidate=[gone], invalid_at=time.time()))
    _write(store, embedder, "other", [("Oslo", "CONTAINED_BY", "Norway")])
    keys = reads.entities_by_keys("u", ["lima", "cusco", "peru", "ann"])
    uid = {k: e.uid for k, e in keys.items()}
    ends = reads.relation_ends("u", ["CONTAINED_BY", "NATIONALITY", "NO_SUCH"], 10)
    assert sorted(ends["CONTAINED_BY"]) == sorted(
        [(uid["lima"], uid["peru"]), (uid["cusco"], uid["peru"])]
    )
    assert ends["NATIONALITY"] == [(uid["ann"], uid["peru"])] and ends["NO_SUCH"] == []
    one_each = reads.relation_ends("u", ["CONTAINED_BY", "BORN_IN"], 1)
    assert [len(pairs) for pairs in one_each.values()] == [1, 1]  # a limit per type, not per read
    assert reads.relation_ends("u", [], 10) == {}
    everyone = list(uid.values())
    assert reads.at_relation_end("u", everyone, "NATIONALITY", subjects=False) == {uid["peru"]}
    assert reads.at_relation_end("u", everyone, "NATIONALITY", subjects=True) == {uid["ann"]}
    assert reads.at_relation_end("u", [], "NATIONALITY", subjects=True) == set()
    assert reads.at_relation_end("other", everyone, "CONTAINED_BY", subjects=True) == set()


def test_the_facts_stored_the_other_way_round_are_counted_per_relation(
    store: GraphStore, embedder: Embedder
) -> None:
    """For sampled facts of a relation: the predicates joining each fact's object back to its
    subject (current facts of this user only)."""
    reads = Reads(store)
    facts = [
        ("Kim", "PARENTS", "Lee"),
        ("Lee", "CHILDREN", "Kim"),
        ("Max", "PARENTS", "Lee"),
        ("Lee", "CHILDREN", "Max"),
        ("Lee", "KNOWS", "Kim"),
    ]
    _write(store, embedder, "u", facts)
    (gone,) = _write(store, embedder, "u", [("Lee", "HELPS", "Max")])
    store.write("u", WriteBatch(invalidate=[gone], invalid_at=time.time()))
    _write(store, embedder, "other", [("Max", "PARENTS", "Lee"), ("Lee", "CHILDREN", "Max")])
    uid = {k: e.uid for k, e in reads.entities_by_keys("u", ["kim", "lee", "max"]).items()}
    pairs = [("PARENTS", uid["kim"], uid["lee"]), ("PARENTS", uid["max"], uid["lee"])]
    pairs.append(("KNOWS", uid["lee"], uid["kim"]))
    assert reads.reversed_facts("u", pairs) == {
        "PARENTS": {"CHILDREN": 2, "KNOWS": 1},
        "KNOWS": {"PARENTS": 1},
    }
    assert reads.reversed_facts("u", []) == {}
    assert reads.reversed_facts("other", pairs) == {}


def test_a_relationship_type_is_validated_before_it_reaches_a_query(store: GraphStore) -> None:
    with pytest.raises(InvalidInputError) as caught:
        Reads(store).neighbours("u", ["x"], predicates=["A]-(m) DETACH DELETE m //"], scan=9,
                                limit=9, total=9, include_invalid=False)  # fmt: skip
    assert "UPPER_SNAKE_CASE" in str(caught.value)


def test_delete_fact_removes_both_forms(store: GraphStore, embedder: Embedder) -> None:
    reads = Reads(store)
    keep, drop = sorted(_write(store, embedder, "u", [("A", "R", "B"), ("A", "S", "C")]))
    assert delete_fact(store, "u", drop)
    assert not delete_fact(store, "u", drop)
    assert not delete_fact(store, "other", keep)
    assert [f.uid for f in reads.list_facts("u", include_invalid=True, skip=0, limit=9)] == [keep]
    a = reads.entities_by_keys("u", ["a"])["a"]
    assert [e.uid for e in _around(store, "u", a.uid)] == [keep]


def test_delete_user_removes_everything_of_that_user_only(
    store: GraphStore, embedder: Embedder
) -> None:
    reads = Reads(store)
    _write(store, embedder, "a", [("X", "R", "Y")])
    _write(store, embedder, "b", [("X", "R", "Y")])
    assert store.delete_user("a") > 0
    assert reads.counts("a") == {
        "users": 0,
        "entities": 0,
        "facts": 0,
        "valid_facts": 0,
        "episodes": 0,
    }
    assert reads.counts("b")["facts"] == 1
    assert reads.history("a", next(iter(reads.entities_by_keys("b", ["x"]).values())).uid) == []


def test_top_entities_rank_most_salient_first(store: GraphStore, embedder: Embedder) -> None:
    reads = Reads(store)
    _write(store, embedder, "u", [("Hub", "R", f"leaf {i}") for i in range(5)])
    _write(store, embedder, "u", [("Other", "R", "leaf 0")])
    now = time.time()
    by_frequency = reads.top_entities("u", 3, "frequency", now, 86400.0)
    assert [e.name for e, _ in by_frequency][:2] == ["Hub", "leaf 0"]
    scores = [s for _, s in reads.top_entities("u", 10, "salience", now, 86400.0)]
    assert scores == sorted(scores, reverse=True)
    recent = reads.top_entities("u", 2, "recency", now, 86400.0)
    assert {e.name for e, _ in recent} <= {"Other", "leaf 0"}


def test_top_entities_salience_is_the_knowledge_formula(
    store: GraphStore, embedder: Embedder
) -> None:
    _write(store, embedder, "u", [("Hub", "R", f"leaf {i}") for i in range(5)])
    _write(store, embedder, "u", [("Hub", "R", "leaf 0")])
    now, half_life = time.time() + 3600.0, 7200.0
    ranked = Reads(store).top_entities("u", 10, "salience", now, half_life)
    most = max(e.mentions for e, _ in ranked)
    for entity, score in ranked:
        assert entity.last_seen is not None
        age = now - entity.last_seen.timestamp()
        assert score == pytest.approx(salience(entity.mentions, most, age, half_life), rel=1e-6)
    assert ranked[0][0].name == "Hub"


def test_history_records_additions(store: GraphStore, embedder: Embedder) -> None:
    reads = Reads(store)
    (uid,) = _write(store, embedder, "u", [("A", "R", "B")])
    (event,) = reads.history("u", uid)
    assert (event.event, event.target_uid) == ("ADD", uid)
    assert reads.history("someone-else", uid) == []


def _messages(store: GraphStore, embedder: Embedder, user: str, texts: list[str]) -> list[str]:
    rows = [
        EpisodeRow(
            f"{user}-m{i}",
            "s1",
            "user",
            text,
            1000.0 + i,
            f"line {i}",
            f"{user}{i}",
            speaker="Maria",
            terms=stored_terms("Maria", text),
            terms_v=TERMS_VERSION,
        )
        for i, text in enumerate(texts)
    ]
    vectors = {r.uid: as_param(v) for r, v in zip(rows, embedder.encode(texts), strict=True)}
    store.write(user, WriteBatch(episodes=rows, episode_embeddings=vectors))
    return [r.uid for r in rows]


def test_the_stamp_of_a_users_messages_is_the_one_their_times_give(store: GraphStore) -> None:
    """The store sums the messages' times as `times_stamp` does, before 1970 and past the
    prime alike: a search process compares the two to tell whether its index still holds."""
    times = [-86400.9999, -0.0004, 0.0, 1701234567.1239, 2e12 + 0.5]
    rows = [EpisodeRow(f"stamped-m{i}", "s1", "user", f"note {i}", ts, None, f"c{i}")
            for i, ts in enumerate(times)]  # fmt: skip
    store.write("stamped", WriteBatch(episodes=rows))
    assert Reads(store).episodes_stamp("stamped") == (len(times), times_stamp(times))


def test_messages_are_read_back_for_the_episode_leg(store: GraphStore, embedder: Embedder) -> None:
    reads = Reads(store)
    uids = _messages(store, embedder, "u", ["I went kayaking", "My bike is blue"])
    _messages(store, embedder, "other", ["I went kayaking too"])
    texts, terms = reads.episode_texts("u", TERMS_VERSION)
    assert sorted(t.uid for t in texts) == sorted(uids)
    assert terms == [stored_terms(t.speaker, t.content) for t in texts]  # as written
    reads.set_episode_terms("u", {texts[0].uid: "zebra"}, TERMS_VERSION + 1)
    assert reads.episode_texts("u", TERMS_VERSION)[1][0] is None  # another version
    assert reads.episode_texts("other", TERMS_VERSION)[1] != [None]
    assert {(t.speaker, t.session_id, t.source) for t in texts} == {
        ("Maria", "s1", "line 0"),
        ("Maria", "s1", "line 1"),
    }
    index = LexicalIndex()
    index.extend(texts, terms)
    assert reads.episodes_stamp("u") == index.stamp() and index.stamp()[0] == 2
    assert reads.episodes_stamp("nobody") == (0, 0)
    nearest = reads.vector_episodes("u", as_param(embedder.encode_one("kayak trip")), 5)
    assert [uid for uid, _ in nearest] == [uids[0], uids[1]]
    assert all(0.0 <= s <= 1.0 for _, s in nearest)
