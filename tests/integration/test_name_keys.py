"""A name the question holds word for word is a candidate anchor however the fulltext read
ranks it: below the many names sharing more of the question's words, or dropped as
stopwords ("Up in the Air", "Joe" among hundreds of Joes)."""

from __future__ import annotations

from engine.memory import Memory

_CROWD = [(f"Movies of an Actor {i}", "HAS_GENRE", "Drama") for i in range(120)] + [
    (f"Joe Smith {i}", "HAS_GENRE", "Drama") for i in range(300)
]


def test_a_name_held_word_for_word_anchors_though_the_fulltext_read_ranks_it_out(
    memory: Memory,
) -> None:
    films = [
        ("Joe", "STARRED_ACTORS", "Nicolas Cage"),
        ("Con Air", "STARRED_ACTORS", "Nicolas Cage"),
    ]
    memory.add_facts([*_CROWD, *films], user_id="films")
    result = memory.search("which movies have the same actor as Joe", user_id="films")
    assert result.anchors == ["Joe"]
    assert result.facts[0].fact.subject == "Con Air"


def test_a_name_looked_up_word_for_word_stays_inside_its_user(memory: Memory) -> None:
    memory.add_facts([("Joe", "STARRED_ACTORS", "Nicolas Cage")], user_id="films")
    memory.add_facts([("Con Air", "STARRED_ACTORS", "Nicolas Cage")], user_id="other")
    result = memory.search("which movies have the same actor as Joe", user_id="other")
    assert "Joe" not in result.anchors
    assert all("Joe" not in (hit.fact.subject, hit.fact.object) for hit in result.facts)
