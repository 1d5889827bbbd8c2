"""A query naming someone nothing stored holds says so (issue 52, A17): "Where does Bob live?"
with no Bob says so, and answers with no fact about another person."""

from __future__ import annotations

from engine.memory import Memory
from engine.models import SearchResult


def test_a_name_nothing_holds_is_named_and_the_context_says_the_hits_are_about_others(
    memory: Memory,
) -> None:
    memory.add("Peter lives in New York.", user_id="u", ts="2024-05-01")
    found = memory.search("Where does Bob live?", user_id="u")
    assert found.unknown_names == ["Bob"]
    assert found.context().startswith(
        "Nothing stored mentions Bob; the memories below are about others.\n"
    )
    assert "Peter" in found.context()  # the message stays: the agent decides what it is worth
    assert memory.search("Where does Peter live?", user_id="u").unknown_names == []


def test_a_question_about_an_unknown_person_gets_no_fact_about_another(memory: Memory) -> None:
    memory.add_facts([("Peter", "LIVES_IN", "New York")], user_id="u")
    memory.add("Peter lives in New York.", user_id="u", ts="2024-05-01")
    memory.add("I love hiking.", user_id="u", ts="2024-05-02")
    bob = memory.search("Where does Bob live?", user_id="u")
    assert _texts(bob) == []  # neither Peter's home nor the user's hobby says where Bob lives
    assert "Peter lives in New York." in [e.episode.text for e in bob.episodes]
    peter = memory.search("Where does Peter live?", user_id="u")
    assert peter.facts[0].fact.text == "Peter lives in New York"
    both = memory.search("Does Bob live near Peter?", user_id="u")
    assert both.unknown_names == ["Bob"] and "Peter lives in New York" in _texts(both)
    japan = memory.search("What should I do in Japan?", user_id="u")
    assert japan.unknown_names == ["Japan"]
    assert _texts(japan) == ["u loves hiking"]  # the user's own facts still answer


def test_the_user_s_own_facts_answer_a_stranger_question_only_when_it_speaks_of_the_user(
    memory: Memory,
) -> None:
    memory.add_facts([("Alice", "LIVES_IN", "Lisbon"), ("Alice", "LIKES", "tea")], user_id="alice")
    memory.add("I met Peter.", user_id="alice", ts="2024-05-01")
    assert _texts(memory.search("Where does Bob live?", user_id="alice")) == []
    for query in ("Does Bob like my tea?", "Does Bob like Alice's tea?"):
        found = memory.search(query, user_id="alice")
        assert found.unknown_names == ["Bob"], query
        assert "Alice likes tea" in _texts(found), query


def test_a_name_a_found_fact_holds_is_known_and_its_facts_stay(memory: Memory) -> None:
    """Whether or not the name search anchors it, a name the facts found hold is no stranger."""
    memory.add_facts([("Zoë Smith", "LIVES_IN", "Berlin")], user_id="u")
    memory.add("I met Ann.", user_id="u", ts="2024-05-01")
    found = memory.search("Where does Zoë live?", user_id="u")
    assert found.unknown_names == []
    assert "Zoë Smith lives in Berlin" in _texts(found)


def _texts(result: SearchResult) -> list[str]:
    return [f.fact.text for f in result.facts]


def test_names_held_by_a_message_an_entity_or_an_alias_are_known(memory: Memory) -> None:
    memory.add("Lunch with Dana was lovely.", user_id="u", ts="2024-05-01")
    memory.add_facts([("Zed", "LIKES", "tea")], user_id="u")
    for query in ("What did Dana eat?", "What does Zed like?", "what does dana like?"):
        assert memory.search(query, user_id="u").unknown_names == [], query


def test_days_months_stopwords_and_the_first_word_are_never_judged(memory: Memory) -> None:
    memory.add("I went hiking.", user_id="u", ts="2024-05-01")
    for query in ("What did I do on Monday?", "Will I go in May?", "Hiking with whom?"):
        assert memory.search(query, user_id="u").unknown_names == [], query
    both = memory.search("Did Bob meet Carol?", user_id="u")
    assert both.unknown_names == ["Bob", "Carol"]
    assert both.context().startswith("Nothing stored mentions Bob or Carol")


def test_many_unknown_names_are_all_kept_and_the_context_names_five(memory: Memory) -> None:
    """A query naming dozens of strangers: `unknown_names` holds them all, the block's warning
    names five and counts the rest (naming all, it outgrew every budget: an empty block)."""
    memory.add("Peter lives in New York.", user_id="u", ts="2024-05-01")
    names = [f"Zq{a}{b}" for a in "abcdef" for b in "ghijk"]
    found = memory.search(f"Did {' and '.join(names)} meet Peter?", user_id="u")
    assert found.unknown_names == names
    block = found.context(60)
    assert block.startswith("Nothing stored mentions Zqag, Zqah, Zqai, Zqaj, Zqak or 25 other")
    assert "Peter" in block


def test_another_users_names_do_not_make_a_name_known(memory: Memory) -> None:
    """No oracle across users: Bob in another user's memory leaves him unknown to this one."""
    memory.add("Bob lives in Lisbon.", user_id="other", ts="2024-05-01")
    memory.add_facts([("Bob", "WORKS_AT", "Acme")], user_id="other")
    memory.add("Peter lives in New York.", user_id="u", ts="2024-05-01")
    assert memory.search("Where does Bob live?", user_id="u").unknown_names == ["Bob"]
    assert memory.search("Where does Bob live?", user_id="other").unknown_names == []


def test_every_mode_names_the_strangers_and_holds_back_what_is_about_others(
    memory: Memory,
) -> None:
    """The semantic and episode legs do not look the query's names up: the names no message
    holds are looked up then, so each mode says the same and holds back the same."""
    memory.add_facts([("Peter", "LIVES_IN", "New York"), ("Zed", "LIKES", "tea")], user_id="u")
    memory.add("Peter lives in New York.", user_id="u", ts="2024-05-01")
    memory.add_facts([("Bob", "LIVES_IN", "Lisbon")], user_id="other")
    for mode in ("dual", "semantic", "episodes"):
        bob = memory.search("Where does Bob live?", user_id="u", mode=mode)
        assert bob.unknown_names == ["Bob"], mode
        assert [t for t in _texts(bob) if "Peter" in t] == [], mode
        assert "Peter lives in New York." in [e.episode.text for e in bob.episodes], mode
        zed = memory.search("What does Zed like?", user_id="u", mode=mode)  # in no message
        assert zed.unknown_names == [], mode
        both = memory.search("Does Bob live near Zed?", user_id="u", mode=mode)
        assert both.unknown_names == ["Bob"], mode
    semantic = memory.search("Does Bob live near Zed?", user_id="u", mode="semantic")
    assert "Zed likes tea" in _texts(semantic)  # Zed is known: nothing is held back


def test_a_name_only_an_entity_holds_is_known_to_the_semantic_leg_too(memory: Memory) -> None:
    """A name in no message and no found fact, held by a stored entity: known in every mode
    (a user with facts and no messages: every name is looked up)."""
    memory.add_facts(
        [("Acme", "MAKES", "Risher"), ("Jane Doe", "CHIEF_EXECUTIVE_OF", "Acme")], user_id="u"
    )
    query = "who is the chief executive of the firm that makes Risher"
    for mode in ("dual", "semantic", "episodes"):
        assert memory.search(query, user_id="u", mode=mode).unknown_names == [], mode
    semantic = memory.search(query, user_id="u", mode="semantic")
    assert "Jane Doe chief executive of Acme" in _texts(semantic)
