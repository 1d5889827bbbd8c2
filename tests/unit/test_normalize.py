import unicodedata

import pytest

from engine.errors import InvalidInputError, LimitExceededError
from engine.graph_types import GraphTypes
from engine.invisible import escaped
from engine.normalize import (
    check_label,
    check_user_id,
    clean_text,
    entity_key,
    is_relation_type,
    is_type_label,
    kept_text,
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


@pytest.mark.parametrize("value", ["An\x00a", "\x00", "An\ud800a"])
def test_kept_text_refuses_what_cannot_be_stored_naming_it(value: str) -> None:
    """A speaker's or a session's NUL was cleaned into a space and stored ("An a")."""
    with pytest.raises(InvalidInputError, match=r"^speaker (holds a NUL|is not valid Unicode)"):
        kept_text(value, "speaker", 64)
    assert kept_text(" An\ta ", "speaker", 64) == "An a"  # a name's spacing is normalized


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


# names in many scripts, and input that must not leave a trace: emoji with a variation
# selector, an enclosing mark, a letter a case change decomposes (ΐ), ß, dz ligatures, ZWNJ
ODD_NAMES = [
    "ταΐζει", "loves ❤️", "❤️ loves", "box\u20dd item", "دوست\u200cدارد",  # noqa: RUF001
    "ශ්\u200dරී ලංකාවේ",
    "straße liegt", "ßtraße", "ǆemal", "İstanbul'da yaşar", "住在_INVERSE", "人物Person",
    "estáCasadoCon", "Pai\u0301s", "\uff30\uff45\uff52\uff53\uff4f\uff4e\uff41",
]  # fmt: skip


@pytest.mark.parametrize("raw", ODD_NAMES)
def test_a_type_or_label_is_its_own_normal_form(raw: str) -> None:
    """Stored names are normalized once for good: normalizing again changes nothing (a type
    upper-cased into decomposed letters was a second, look-alike type), and a checked name
    holds no presentation character (U+FE0F of an emoji, an enclosing mark)."""
    predicate = normalize_predicate(raw)
    assert normalize_predicate(predicate) == predicate and is_relation_type(predicate)
    label = check_label(raw, "type", 512)
    assert label is not None and check_label(label, "type", 512) == label
    assert is_type_label(label)
    for name in (predicate, label):
        assert unicodedata.is_normalized("NFKC", name)
        assert not any(unicodedata.category(c) == "Me" or 0xFE00 <= ord(c) <= 0xFE0F for c in name)


def test_what_emoji_leave_is_no_part_of_a_name() -> None:
    assert normalize_predicate("loves ❤️") == normalize_predicate("loves 👍🏽") == "LOVES"
    assert normalize_label("person ❤️") == "Person"
    joined = "\u062f\u0648\u0633\u062a\u200c\u062f\u0627\u0631\u062f"  # Persian, with a ZWNJ
    assert normalize_predicate(joined) == joined  # the joiner is spelling


def test_look_alikes_of_a_stored_name_are_no_names() -> None:
    """Import checks names with these: only what the doors themselves store passes."""
    assert is_relation_type("ESTÁ_CASADO_CON")
    assert not is_relation_type(unicodedata.normalize("NFD", "ESTÁ_CASADO_CON"))
    assert not is_relation_type("\uff25\uff33\uff34\uff21")  # fullwidth
    assert is_type_label("País") and not is_type_label(unicodedata.normalize("NFD", "País"))
    assert not is_type_label("GraphmemSchema") and not is_type_label("GraphmemKey")


def test_a_predicate_longer_than_a_type_is_refused_not_cut() -> None:
    """Two long predicates differing past the 64th character were cut into one type."""
    with pytest.raises(LimitExceededError, match="the limit is 64"):
        normalize_predicate("x" * 70 + " a")
    assert normalize_predicate("x" * 64) == "X" * 64


@pytest.mark.parametrize(
    ("user_id", "named"),
    [
        ("alice\u200b", "U+200B ZERO WIDTH SPACE"),
        ("ali\u200cce", "U+200C ZERO WIDTH NON-JOINER"),
        ("ali\u200dce", "U+200D ZERO WIDTH JOINER"),
        ("\u2060alice", "U+2060 WORD JOINER"),
        ("alice\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
        ("\u202ealice", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("alice\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("ali\u00adce", "U+00AD SOFT HYPHEN"),
        ("\U0001f3f4\U000e0067\U000e0062\U000e007f", "U+E0067 TAG LATIN SMALL LETTER G"),
        ("\u200d\U0001f4bb", "U+200D ZERO WIDTH JOINER"),  # joins no emoji to this one
    ],
)
def test_a_user_id_with_an_invisible_format_character_is_refused_naming_it(
    user_id: str, named: str
) -> None:
    """ "alice\u200b" was a user of its own, shown as "alice" everywhere: Unicode's format
    characters (category Cf) print as nothing, or turn the text around them."""
    with pytest.raises(InvalidInputError) as refused:
        check_user_id(user_id)
    assert named in str(refused.value) and "invisible" in str(refused.value)


@pytest.mark.parametrize(
    "user_id",
    [
        "\U0001f469\u200d\U0001f4bb",  # woman technologist: one emoji drawn of two
        "\U0001f469\U0001f3fd\u200d\U0001f4bb",  # with a skin tone
        "\U0001f3f3\ufe0f\u200d\U0001f308",  # rainbow flag
        "\u062f\u0648\u0633\u062a\u200c\u062f\u0627\u0631",  # Persian, a ZWNJ in a word
        "\u0dc1\u0dca\u200d\u0dbb\u0dd3",  # Sinhala "Sri", a ZWJ in a conjunct
    ],
)
def test_a_joiner_that_shapes_an_emoji_or_a_word_is_part_of_a_user_id(user_id: str) -> None:
    assert check_user_id(user_id) == user_id


def test_escaped_writes_each_refused_character_as_its_code_point() -> None:
    """How `graphmem users` shows an id an older version stored: as bash's $'...' reads it."""
    emoji = "\U0001f469\u200d\U0001f4bb"  # its joiner is drawn: kept
    assert escaped(f"\u202ealice\u200b{emoji}\U000e0067") == (
        f"\\u202ealice\\u200b{emoji}\\U000e0067"
    )


def test_an_invisible_id_is_taken_only_where_the_store_holds_it() -> None:
    asked: list[str] = []

    def holds(user_id: str) -> bool:
        asked.append(user_id)
        return True

    assert check_user_id("alice\u200b", held=holds) == "alice\u200b"
    assert check_user_id("alice", held=holds) == "alice"
    with pytest.raises(InvalidInputError, match="U\\+200B"):
        check_user_id("alice\u200b", held=lambda _: False)
    assert asked == ["alice\u200b"]  # a visible id costs no look-up
