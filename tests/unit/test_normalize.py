import pytest

from engine.errors import InvalidInputError, LimitExceededError
from engine.graph_types import GraphTypes
from engine.normalize import (
    clean_text,
    entity_key,
    normalize_label,
    normalize_predicate,
    singular_form,
    stable_uid,
)
from engine.times import one_time


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("friend of", "FRIEND_OF"),
        ("friendOf", "FRIEND_OF"),
        ("FRIEND-OF", "FRIEND_OF"),
        ("  has   dog ", "HAS_DOG"),
        ("directed_by", "DIRECTED_BY"),
        ("LIKES`]->(x) DETACH DELETE x //", "LIKES_X_DETACH_DELETE_X"),
        ("born in St. Louis", "BORN_IN_ST_LOUIS"),
        ("citizen_of_U.S.", "CITIZEN_OF_U_S"),
        # a namespaced predicate keeps its local name
        ("/people/person/place_of_birth", "PLACE_OF_BIRTH"),
        ("people.person.nationality", "NATIONALITY"),
        ("schema:birthPlace", "BIRTH_PLACE"),
        ("<http://dbpedia.org/ontology/birthPlace>", "BIRTH_PLACE"),
        ("http://example.org/relations/knows/", "KNOWS"),
        # any script, its letters kept as written (accents and vowel signs too)
        ("está casado con", "ESTÁ_CASADO_CON"),
        ("größer als", "GRÖSSER_ALS"),
        ("喜欢", "喜欢"),
        ("живёт в", "ЖИВЁТ_В"),  # noqa: RUF001
        ("रहता है", "रहता_है"),
        ("estáCasadoCon", "ESTÁ_CASADO_CON"),
    ],
)
def test_predicates_become_upper_snake_case(raw: str, expected: str) -> None:
    assert normalize_predicate(raw) == expected


@pytest.mark.parametrize("raw", ["", "   ", "😀", "123abc", "`", "\uff12\uff4e\uff44", None, 42])
def test_unusable_predicates_are_rejected_with_a_clear_error(raw: object) -> None:
    with pytest.raises(InvalidInputError) as info:
        normalize_predicate(raw)
    assert "predicate" in str(info.value)


def test_entity_keys_fold_case_width_and_space() -> None:
    assert entity_key("  Grégoire   COLIN ") == "grégoire colin"
    assert entity_key("\uff21\uff22\uff23") == "abc"  # full-width letters


def test_clean_text_rejects_blank_non_string_and_oversized() -> None:
    with pytest.raises(InvalidInputError):
        clean_text(" \n\t ", "name", 10)
    with pytest.raises(InvalidInputError):
        clean_text(3, "name", 10)
    with pytest.raises(LimitExceededError) as info:
        clean_text("x" * 11, "name", 10)
    assert "limit is 10" in str(info.value)
    assert clean_text("a\x00b\nc", "name", 10) == "a b c"


def test_labels_are_pascal_case_or_dropped() -> None:
    assert normalize_label("person") == "Person"
    assert normalize_label("sports team") == "SportsTeam"
    assert normalize_label("SportsTeam") == "SportsTeam"  # was Sportsteam
    assert normalize_label("PERSON") == "Person"
    assert normalize_label("Fact") is None
    assert normalize_label("`) DELETE") == "Delete"
    assert normalize_label("") is None


def test_stable_uid_is_deterministic_and_separates_parts() -> None:
    assert stable_uid("a", "b") == stable_uid("a", "b")
    assert stable_uid("ab", "c") != stable_uid("a", "bc")


@pytest.mark.parametrize(
    ("name", "singular"),
    [
        ("children", "child"),
        ("starred actors", "starred actor"),
        ("countries", "country"),
        ("has genre", "has genre"),
        ("directed by", "directed by"),
        ("business", "business"),
        ("matches", "match"),
    ],
)
def test_a_relation_name_in_the_singular(name: str, singular: str) -> None:
    assert singular_form(name) == singular


def test_ts_and_its_alias_timestamp_name_one_time() -> None:
    assert one_time("2024-05-01", None) == "2024-05-01"
    assert one_time(None, 1714521600) == 1714521600
    assert one_time("2024-05-01T00:00:00Z", 1714521600) == "2024-05-01T00:00:00Z"
    with pytest.raises(InvalidInputError, match="ts and timestamp name one time"):
        one_time("2024-05-01", "2024-05-02")


def test_a_declared_pascal_case_type_is_its_own_label() -> None:
    """The docs ask for PascalCase: a declared SportsTeam was refused as no label."""
    types = GraphTypes(entities={"SportsTeam": "a club that plays a sport"})
    assert types.entity_type("sports team") == "SportsTeam"
    assert types.entity_type("SportsTeam") == "SportsTeam"
