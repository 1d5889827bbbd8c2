"""`Memory.entity` by name: the exact key or alias first, then the same name written without
spaces, hyphens or punctuation ("spiderman" finds "Spider-Man"), only among the user's own."""

from __future__ import annotations

import pytest

from engine.errors import NotFoundError
from engine.memory import Memory


def test_a_name_written_without_its_hyphen_finds_the_entity(memory: Memory) -> None:
    memory.add_facts([("Spider-Man", "LIVES_IN", "New York")], user_id="fan")
    for name in ("spiderman", "Spider Man", "SPIDER-MAN", "spider_man"):
        assert memory.entity(name, user_id="fan").entity.name == "Spider-Man"
    assert memory.entity("newyork", user_id="fan").entity.name == "New York"


def test_the_loose_lookup_stays_inside_the_user(memory: Memory) -> None:
    memory.add_facts([("Spider-Man", "LIVES_IN", "New York")], user_id="fan")
    memory.add_facts([("Peter", "LIVES_IN", "Queens")], user_id="other")
    with pytest.raises(NotFoundError, match="spiderman"):
        memory.entity("spiderman", user_id="other")


def test_an_exact_name_wins_and_signs_that_tell_names_apart_are_kept(memory: Memory) -> None:
    memory.add_facts(
        [("C++", "IS_A", "language"), ("C", "IS_A", "language"), ("Spider Man", "IS_A", "film")],
        user_id="dev",
    )
    for _ in range(3):  # said three times (a fact repeated in one call counts once)
        memory.add_facts([("Spider-Man", "IS_A", "hero")], user_id="dev")
    assert memory.entity("c", user_id="dev").entity.name == "C"
    assert memory.entity("c++", user_id="dev").entity.name == "C++"
    assert memory.entity("spider man", user_id="dev").entity.name == "Spider Man"  # exact
    assert memory.entity("spiderman", user_id="dev").entity.name == "Spider-Man"  # more said
    with pytest.raises(NotFoundError):
        memory.entity("c#", user_id="dev")


def test_an_entity_is_found_by_its_uid_only_in_its_own_user(memory: Memory) -> None:
    """`delete_entity` and `merge_entities` took an entity's uid (as `AddResult.entity_uids`
    and `graphmem entity` show it) where `entity` answered NotFoundError for it."""
    (dana, _) = memory.add_facts([("Dana", "WORKS_AT", "Acme")], user_id="crm").entity_uids
    (bob, _) = memory.add_facts([("Bob", "KNOWS", "Sara")], user_id="other").entity_uids
    view = memory.entity(dana, user_id="crm")
    assert (view.entity.name, [f.text for f in view.facts]) == ("Dana", ["Dana works at Acme"])
    with pytest.raises(NotFoundError, match=bob):
        memory.entity(bob, user_id="crm")  # another user's uid: as one that does not exist
