"""The public Memory API over the real embedded store and the real embedding model."""

from __future__ import annotations

import pytest

import engine
from engine import InvalidInputError, LimitExceededError, Memory, NotFoundError
from engine.demo import DEMO_FACTS


@pytest.fixture
def demo(memory: Memory) -> Memory:
    memory.add_facts(DEMO_FACTS, user_id="alice")
    return memory


def test_public_api_is_pinned() -> None:
    assert engine.__all__ == sorted(engine.__all__)
    assert {"Memory", "SearchResult", "Fact", "GraphmemError", "Settings"} <= set(engine.__all__)


def test_add_facts_is_idempotent(memory: Memory) -> None:
    first = memory.add_facts([("Alice", "friend of", "John")], user_id="a")
    again = memory.add_facts([("alice", "FRIEND_OF", "john")], user_id="a")
    assert (first.facts_added, first.entities_added) == (1, 2)
    assert (again.facts_added, again.facts_updated, again.entities_added) == (0, 1, 0)
    (fact,) = memory.get_all("a")
    assert fact.mentions == 2
    assert memory.stats("a").entities == 2


def test_add_facts_records_the_add_of_each_entity_it_creates_once(memory: Memory) -> None:
    first = memory.add_facts([("Alice", "FRIEND_OF", "John")], user_id="a")
    memory.add_facts([("alice", "FRIEND_OF", "john"), ("John", "OWNS", "Rex")], user_id="a")
    alice, john = first.entity_uids
    rex = memory.entity("Rex", "a").entity.uid
    events = {uid: memory.history(uid, "a") for uid in (alice, john, rex)}
    assert {uid: [(e.event, e.detail) for e in found] for uid, found in events.items()} == {
        alice: [("ADD", "Alice")],
        john: [("ADD", "John")],
        rex: [("ADD", "Rex")],
    }


def test_add_facts_says_which_entities_it_wrote_and_how_long_it_took(memory: Memory) -> None:
    """Its result listed no entity (`entity_uids=[]` beside `entities_added=2`) and took 0 ms."""
    first = memory.add_facts([("Alice", "FRIEND_OF", "John"), ("John", "OWNS", "Rex")], "a")
    uids = {memory.entity(name, "a").entity.uid for name in ("Alice", "John", "Rex")}
    assert sorted(first.entity_uids) == sorted(uids) and first.latency_ms > 0
    again = memory.add_facts([("John", "OWNS", "Rex")], "a")
    assert sorted(again.entity_uids) == sorted(uids - {memory.entity("Alice", "a").entity.uid})


def test_a_fact_repeated_in_one_call_counts_once(memory: Memory) -> None:
    """Repeating a fact within one add_facts call does not inflate its entities' salience."""
    tea = ("Alice", "LIKES", "Tea")
    first = memory.add_facts([tea, ("alice", "likes", "tea"), tea, ("Alice", "OWNS", "Rex")], "a")
    (liked,) = [f for f in memory.get_all("a") if f.predicate == "LIKES"]
    alice, drink = memory.entity("Alice", "a").entity, memory.entity("Tea", "a").entity
    again = memory.add_facts([tea, tea], "a")
    assert (first.facts_added, len(first.fact_uids), liked.mentions) == (2, 2, 1)
    assert (alice.mentions, drink.mentions) == (2, 1)
    assert (again.facts_updated, memory.entity("Tea", "a").entity.mentions) == (1, 2)


def test_a_repeated_fact_keeps_its_first_text_within_a_call_as_across_calls(
    memory: Memory,
) -> None:
    """A stored fact keeps the text it was first stored with when it is said again, and so
    does a fact repeated within one call (the last repeat's text was kept there)."""
    memory.add_facts([("Bob", "LIKES", "tea", "Bob likes tea"), ("Bob", "LIKES", "tea", "B")], "a")
    memory.add_facts([("Ann", "LIKES", "tea", "Ann likes tea")], "a")
    memory.add_facts([("Ann", "LIKES", "tea", "Ann adores green tea")], "a")
    texts = {f.subject: f.text for f in memory.get_all("a")}
    assert texts == {"Bob": "Bob likes tea", "Ann": "Ann likes tea"}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Who is Spider-Man?", "Peter is Spider-Man"),
        ("What pet does John have?", "John has a dog named Tommy"),
        ("Where does Emma live?", "Emma lives in Berlin"),
        ("Is Alice allergic to anything?", "Alice is allergic to peanuts"),
    ],
)
def test_search_ranks_the_answering_fact_in_the_top_three(
    demo: Memory, query: str, expected: str
) -> None:
    result = demo.search(query, user_id="alice", limit=3)
    assert expected in [hit.fact.text for hit in result.facts]
    assert all(hit.score > 0 for hit in result.facts)
    assert result.timings_ms["total"] > 0


def test_search_returns_paths_joining_two_named_entities(demo: Memory) -> None:
    result = demo.search("How is Lukas connected to Alice?", user_id="alice")
    assert {"Alice", "Lukas"} <= set(result.anchors)
    (path,) = result.paths
    assert [f.text for f in path.facts] == ["Alice is Emma's sister", "Emma is married to Lukas"]
    assert "Alice is Emma's sister" in result.context(max_tokens=200)


def test_users_never_see_each_others_memories(demo: Memory) -> None:
    demo.add_facts([("Bob", "OWNS", "a boat")], user_id="bob")
    hits = demo.search("Who is Spider-Man and who owns a boat?", user_id="bob", limit=20)
    assert [h.fact.text for h in hits.facts] == ["Bob owns a boat"]
    assert all(f.user_id == "alice" for f in demo.get_all("alice"))
    assert demo.search("Spider-Man", user_id="nobody").facts == []
    assert demo.get_all("nobody") == []


def test_delete_and_delete_all(demo: Memory) -> None:
    target = next(f for f in demo.get_all("alice") if f.text == "Peter is Spider-Man")
    demo.delete(target.uid, user_id="alice")
    with pytest.raises(NotFoundError):
        demo.delete(target.uid, user_id="alice")
    texts = [h.fact.text for h in demo.search("Who is Spider-Man?", user_id="alice").facts]
    assert "Peter is Spider-Man" not in texts
    demo.add_facts([("Bob", "OWNS", "a boat")], user_id="bob")
    assert demo.delete_all("alice") > 0
    assert demo.get_all("alice") == []
    assert len(demo.get_all("bob")) == 1


def test_entity_view_and_top_entities(demo: Memory) -> None:
    view = demo.entity("john", user_id="alice")
    assert view.entity.name == "John"
    assert "John has a dog named Tommy" in {f.text for f in view.facts}
    with pytest.raises(NotFoundError):
        demo.entity("Nobody", user_id="alice")
    top = demo.top_entities("alice", k=3, by="frequency")
    assert top[0].entity.name == "Alice"
    assert [t.score for t in top] == sorted((t.score for t in top), reverse=True)


@pytest.mark.parametrize("limit", [0, -1])
def test_entity_reads_refuse_a_limit_below_one_in_our_words(demo: Memory, limit: int) -> None:
    """A negative limit reached FalkorDB ("Limit operates only on non-negative integers")."""
    with pytest.raises(InvalidInputError) as listed:
        demo.top_entities("alice", k=limit)
    with pytest.raises(InvalidInputError) as viewed:
        demo.entity("john", user_id="alice", limit=limit)
    assert str(listed.value) == f"k must be an integer of at least 1, got {limit}"
    assert str(viewed.value) == f"limit must be an integer of at least 1, got {limit}"


@pytest.mark.parametrize(
    "bad",
    [
        ("", "LIKES", "tea"),
        ("Alice", "LIKES", "   "),
        ("Alice", "😀", "tea"),
        ("Alice", 7, "tea"),
        ("Alice", "LIKES"),
        "Alice likes tea",
        {"subject": "Alice", "predicate": "LIKES"},
    ],
)
def test_bad_facts_are_rejected_and_nothing_is_written(memory: Memory, bad: object) -> None:
    memory.add_facts([("Kept", "IS", "stored")], user_id="u")
    with pytest.raises(InvalidInputError) as info:
        memory.add_facts([("Fine", "IS", "fine"), bad], user_id="u")
    assert "fact #1" in str(info.value)
    assert [f.text for f in memory.get_all("u")] == ["Kept is stored"]


@pytest.mark.parametrize("facts", [None, "Alice KNOWS Bob", {"subject": "A"}, 5])
def test_facts_that_are_no_list_are_refused_naming_what_came(memory: Memory, facts: object) -> None:
    with pytest.raises(InvalidInputError, match=f"got {type(facts).__name__}"):
        memory.add_facts(facts, user_id="u")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("etype", "says"),
    [
        ("!!", "subject_type '!!' cannot be an entity type: it needs letters or digits"),
        ("3d model", "subject_type '3d model' cannot be an entity type: it needs letters or"),
        ("entity", "subject_type 'entity' cannot be an entity type: Entity is one of graphmem"),
        ("kind " * 17, "subject_type 'kind kind kind kind kind kind kind kind kind kind kind "),
    ],
)
def test_an_entity_type_that_is_no_label_is_refused_naming_it(
    memory: Memory, etype: str, says: str
) -> None:
    fact = {"subject": "Ann", "predicate": "LIKES", "object": "tea", "subject_type": etype}
    with pytest.raises(InvalidInputError) as info:
        memory.add_facts([("Kept", "IS", "stored"), fact], user_id="u")
    assert str(info.value).startswith(f"fact #1: {says}"), str(info.value)
    assert [f.text for f in memory.get_all("u")] == []


def test_an_entity_type_becomes_its_pascal_case_label(memory: Memory) -> None:
    reds = {"subject": "Ann", "predicate": "PLAYS_IN", "object": "Reds"}
    memory.add_facts([{**reds, "object_type": "sports team"}, {**reds, "subject": "Bo"}], "u")
    assert memory.entity("Reds", "u").entity.type == "SportsTeam"


def test_types_and_predicates_in_any_script_are_kept_as_written(memory: Memory) -> None:
    memory.add_facts(
        [
            {"subject": "Ana", "predicate": "está casado con", "object": "Luis",
             "object_type": "persona"},
            {"subject": "Ana", "predicate": "vive en", "object": "España", "object_type": "país"},
            {"subject": "小明", "predicate": "住在", "object": "北京", "object_type": "城市"},
            {"subject": "Иван", "predicate": "живёт в", "object": "Москва", "object_type": "город"},
        ],
        user_id="u",
    )  # fmt: skip
    predicates = {f.predicate for f in memory.get_all("u")}
    assert predicates == {"ESTÁ_CASADO_CON", "VIVE_EN", "住在", "ЖИВЁТ_В"}  # noqa: RUF001
    assert memory.entity("España", "u").entity.type == "País"
    assert memory.entity("北京", "u").entity.type == "城市"
    assert memory.entity("Москва", "u").entity.type == "Город"
    found = memory.search("Where does 小明 live?", user_id="u", mode="expansion")
    assert [h.fact.object for h in found.facts][:1] == ["北京"]
    # the sentence says the predicate as written: KALIYOR would read "kaliyor"
    memory.add_facts([("Ali", "kal\u0131yor", "Ankara"), ("Ana", "wohnt in der Straße", "Z")], "u")
    texts = {f.text for f in memory.get_all("u")}
    assert {"Ali kal\u0131yor Ankara", "Ana wohnt in der Straße Z"} <= texts


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("subject", "Al\x00ice", "subject holds a NUL character, which cannot be stored"),
        ("object", "tea\ud800", "object is not valid Unicode text (a lone surrogate at 3)"),
        ("predicate", "LI\x00KES", "predicate holds a NUL character"),
        ("text", "Alice likes \x00tea", "fact text holds a NUL character"),
        ("subject_type", "per\ud800son", "subject_type is not valid Unicode text"),
    ],
)
def test_add_facts_refuses_what_add_refuses_naming_the_field_and_the_fact(
    memory: Memory, field: str, value: str, says: str
) -> None:
    """A NUL or a lone surrogate was cleaned out of a fact in silence ("Al ice"), where
    `add` refuses the same message."""
    fact = {"subject": "Alice", "predicate": "LIKES", "object": "tea", field: value}
    with pytest.raises(InvalidInputError) as info:
        memory.add_facts([("Kept", "IS", "stored"), fact], user_id="u")
    with pytest.raises(InvalidInputError) as said:
        memory.add(value, user_id="u")

    assert str(info.value).startswith(f"fact #1: {says}"), str(info.value)
    named = says.split(" holds ")[0].split(" is ")[0]  # "fact text" for `text`
    assert str(info.value) == f"fact #1: {named} {str(said.value).removeprefix('message ')}"
    assert memory.get_all("u") == []


def test_hostile_names_are_stored_as_plain_values(memory: Memory) -> None:
    hostile = "x'}) DETACH DELETE n //`\"\\"
    memory.add_facts([(hostile, "owns`]->() DELETE", "Rex")], user_id="u")
    (fact,) = memory.get_all("u")
    assert fact.subject == hostile
    assert fact.predicate == "OWNS_DELETE"


def test_oversized_values_get_a_clear_error(memory: Memory) -> None:
    with pytest.raises(LimitExceededError) as info:
        memory.add_facts([("x" * 10_000, "IS", "long")], user_id="u")
    assert "limit is 512" in str(info.value)
    with pytest.raises(InvalidInputError):
        memory.search("   ", user_id="u")
    with pytest.raises(InvalidInputError):
        memory.search("tea", user_id="u", limit=0)


def test_the_users_own_thing_is_named_after_the_user(memory: Memory) -> None:
    """The offline extractor calls "my job" USER's job until the user is known; the entity
    kept that placeholder as its name ("USER's job" among the top entities); and so did
    "people like USER", its "people like me"."""
    memory.add("Lost my job yesterday", user_id="u")
    memory.add("Pottery is a great outlet for people like me.", user_id="u")
    names = [e.entity.name for e in memory.top_entities("u", k=10)]
    assert {"u's job", "great outlet for people like u"} <= set(names)
    assert not any("USER" in name for name in names)
    assert memory.entity("u's job", "u").entity.aliases == []  # not its own name again
    memory.add("My name is Alice. I hate my job.", user_id="u")  # one job, whatever my name
    jobs = [e.entity for e in memory.top_entities("u", k=10) if "job" in e.entity.name]
    assert [(j.name, j.mentions) for j in jobs] == [("u's job", 2)]
