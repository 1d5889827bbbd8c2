"""`with_silent_e`: an -ing or -ed form's lemma keeps the "e" its lemmatizer dropped."""

from __future__ import annotations

import pytest

from engine.extraction.offline.lemmas import with_silent_e

VERBS = frozenset({"hope", "hop", "cope", "cop", "ride", "rid", "tape", "tap", "star", "stare",
                   "visit", "open", "snow", "fix", "play", "cook", "hate", "hat", "bathe",
                   "bath", "do", "go", "watch", "use"})  # fmt: skip


@pytest.mark.parametrize(
    ("word", "lemma", "mended"),
    [
        ("hoping", "hop", "hope"),
        ("hoped", "hop", "hope"),
        ("coping", "cop", "cope"),
        ("riding", "rid", "ride"),
        ("taping", "tap", "tape"),
    ],
)
def test_a_single_consonant_after_a_single_vowel_gives_back_the_e(
    word: str, lemma: str, mended: str
) -> None:
    assert with_silent_e(word, lemma, VERBS) == mended


@pytest.mark.parametrize(
    ("word", "lemma"),
    [
        ("hopping", "hop"),  # doubled: the short verb itself
        ("starring", "star"),
        ("staring", "stare"),  # already right
        ("visiting", "visit"),  # no "visite"
        ("opened", "open"),
        ("snowing", "snow"),  # w, x, y are never doubled: no sign either way
        ("fixed", "fix"),
        ("cooking", "cook"),  # two vowels
        ("hopes", "hope"),  # already right
        ("fixes", "fix"),  # "-es" after "x": the verb is "fix"
        ("watches", "watch"),
        ("does", "do"),
        ("goes", "go"),
        ("uses", "use"),
    ],
)
def test_any_other_lemma_stands(word: str, lemma: str) -> None:
    assert with_silent_e(word, lemma, VERBS) is None


@pytest.mark.parametrize(
    ("word", "lemma", "mended"),
    [("hates", "hat", "hate"), ("rides", "rid", "ride"), ("hopes", "hop", "hope"),
     ("bathes", "bath", "bathe")],
)  # fmt: skip
def test_an_es_after_what_takes_no_es_gives_back_the_e(word: str, lemma: str, mended: str) -> None:
    assert with_silent_e(word, lemma, VERBS) == mended
