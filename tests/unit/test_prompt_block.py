"""The prompt block `SearchResult.context` packs: within budget, one order, nothing said twice."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine.errors import InvalidInputError
from engine.models import (
    Entity,
    Fact,
    Path,
    ScoredEntity,
    ScoredEpisode,
    ScoredFact,
    SearchResult,
    Snippet,
)
from engine.prompt_block import estimate_tokens, hits_for, nothing_about, said_day
from engine.times import TimeUnit

MAY = datetime(2023, 5, 7, tzinfo=UTC)


def _message(uid: str, text: str, when: datetime | None = MAY) -> ScoredEpisode:
    return ScoredEpisode(
        episode=Snippet(uid=uid, speaker="Kate", role="user", ts=when, text=text), score=1.0
    )


def _fact(
    uid: str,
    subject: str,
    rest: str,
    source: str,
    when: datetime | None = MAY,
    unit: TimeUnit = "day",
) -> ScoredFact:
    fact = Fact(
        uid=uid, user_id="u", subject=subject, predicate="P", object="o", subject_uid="s",
        object_uid="o", text=f"{subject} {rest}", valid_at=when, valid_unit=unit,
        episodes=[source],
    )  # fmt: skip
    return ScoredFact(fact=fact, score=1.0)


def _result(facts: list[ScoredFact], messages: list[ScoredEpisode]) -> SearchResult:
    return SearchResult(query="q", user_id="u", facts=facts, episodes=messages)


def _cost(block: str) -> int:
    return sum(estimate_tokens(line) for line in block.splitlines())


LONG = "I went to the lake with my sister on Sunday and we talked for hours about everything. " * 3
RESULT = _result(
    [_fact(f"f{i}", "Kate", f"likes thing{i}", f"m{i + 20 * (i % 2 == 0)}") for i in range(12)],
    [_message(f"m{i}", f"{LONG} number {i}") for i in range(12)],
)


@pytest.mark.parametrize("budget", [1, 5, 20, 60, 150, 300, 600, 1200, 100_000])
def test_a_block_never_exceeds_its_budget(budget: int) -> None:
    assert _cost(RESULT.context(budget)) <= budget


def test_a_small_budget_is_not_all_facts_and_a_line_too_long_is_skipped_not_the_end() -> None:
    block = RESULT.context(150)
    assert "Messages:" in block and "Facts:" in block  # the lists taken in turn
    assert "thing11" in RESULT.context(_cost(RESULT.context(10_000)) - 60)  # after a long message


def test_a_fact_is_left_out_when_its_message_is_in_the_block() -> None:
    said = _message("m1", "I love cooking and skiing.")
    restated = _fact("f1", "Kate", "loves cooking", "m1")
    other = _fact("f2", "Kate", "works at UCLA", "m9")
    block = _result([restated, other], [said]).context(200)
    assert "I love cooking and skiing." in block and "works at UCLA" in block
    assert "loves cooking" not in block


def test_a_fact_already_in_is_taken_out_when_its_message_comes_in() -> None:
    facts = [_fact("f1", "Kate", "loves cooking", "m2"), _fact("f2", "Ann", "is a nurse", "m9")]
    messages = [_message("m1", "Hello there."), _message("m2", "I love cooking.")]
    block = _result(facts, messages).context(200)  # order: m1, f1, m2 (f1 goes), f2
    assert "I love cooking." in block and "loves cooking" not in block
    assert "is a nurse" in block


def test_a_connection_whose_facts_the_block_says_is_left_out() -> None:
    """A path of one fact found as a fact too ("Kate: moved to Lisbon [2025]" and the
    connection "Kate moved to Lisbon") said the same thing twice."""
    moved = _fact("f1", "Kate", "moved to Lisbon", "m9")
    works = _fact("f2", "Lisbon", "hosts UCLA", "m8")
    one = Path(entities=["Kate", "Lisbon"], facts=[moved.fact])
    both = Path(entities=["Kate", "UCLA"], facts=[moved.fact, works.fact])
    block = SearchResult(query="q", user_id="u", facts=[moved], paths=[one]).context(200)
    assert block.count("moved to Lisbon") == 1 and "Connections:" not in block
    chained = SearchResult(query="q", user_id="u", facts=[moved], paths=[both]).context(200)
    assert "Kate moved to Lisbon -> Lisbon hosts UCLA" in chained  # it says more: kept


def test_a_connection_whose_fact_its_message_says_is_left_out() -> None:
    said = _message("m1", "I moved to Lisbon.")
    moved = _fact("f1", "Kate", "moved to Lisbon", "m1")
    path = Path(entities=["Kate", "Lisbon"], facts=[moved.fact])
    block = SearchResult(
        query="q", user_id="u", facts=[moved], episodes=[said], paths=[path]
    ).context(200)
    assert "I moved to Lisbon." in block and "Connections:" not in block


def test_a_fact_that_dates_its_message_otherwise_stays() -> None:
    """ "I went to the lake yesterday" said on May 7: the fact's May 6 is what the message
    does not say."""
    said = _message("m1", "I went to the lake yesterday.")
    dated = _fact("f1", "Kate", "went to the lake", "m1", datetime(2023, 5, 6, tzinfo=UTC))
    other = _message("m0", "Hello there.")
    for messages in ([said], [other, said]):  # the message in first, and the fact first
        block = _result([dated], messages).context(200)
        assert "[2023-05-06] Kate went to the lake" in block and "yesterday" in block


def test_an_entitys_facts_share_a_dated_line() -> None:
    facts = [
        _fact("f1", "Kate", "likes cooking", "m1"),
        _fact("f2", "Kate", "works at UCLA", "m2", datetime(2023, 12, 1, tzinfo=UTC)),
        _fact("f3", "Ann", "is a nurse", "m3", None),
    ]
    block = _result(facts, []).context(200)
    assert "Kate: likes cooking [2023-05-07]; works at UCLA [2023-12-01]" in block
    assert "[2023-05-07] Ann is a nurse" not in block and "\nAnn is a nurse" in block


def test_a_fact_of_unknown_time_prints_no_date_mark() -> None:
    """A graph written by `add_facts` has no dates: "[undated]" on each fact cost tokens and
    said nothing an unmarked line does not."""
    facts = [
        _fact("f1", "Kate", "likes cooking", "m1", None),
        _fact("f2", "Kate", "likes skiing", "m2", None),
        _fact("f3", "Kate", "works at UCLA", "m3", None),
        _fact("f4", "Tom", "married to Kate", "m4", None),
    ]
    block = _result(facts, []).context(17)  # 1 + 11 + 5: it was 23 with the marks
    assert block == "Facts:\nKate: likes cooking; likes skiing; works at UCLA\nTom married to Kate"
    assert _cost(block) == 17
    mixed = _result([_fact("f0", "Kate", "cooks", "m0"), *facts[:2]], []).context(200)
    assert "Kate: cooks [2023-05-07]; likes cooking; likes skiing" in mixed


def test_an_undated_fact_still_goes_when_its_undated_message_is_in() -> None:
    """Its message, said at an unknown time too, says it, with its speaker."""
    facts = [_fact("f1", "Kate", "loves tea", "m2", None), _fact("f2", "Ann", "is a nurse", "m9")]
    messages = [_message("m1", "Hello there."), _message("m2", "I love tea.", None)]
    block = _result(facts, messages).context(200)  # order: m1, f1, m2 (f1 goes), f2
    assert "[undated] Kate: I love tea." in block and "loves tea" not in block
    assert "[2023-05-07] Ann is a nurse" in block
    alone = _result(facts[:1], messages[1:]).context(200)  # the message first: f1 never in
    assert "loves tea" not in alone


@pytest.mark.parametrize(
    ("unit", "shown"),
    [
        ("day", "[2025-12-07] Kate moved to Lisbon"),
        ("week", "[week of 2025-12-01] Kate moved to Lisbon"),  # the Monday of its week
        ("month", "[2025-12] Kate moved to Lisbon"),
        ("year", "[2025] Kate moved to Lisbon"),
    ],
)
def test_a_fact_shows_its_date_as_precisely_as_it_is_known(unit: TimeUnit, shown: str) -> None:
    """ "I moved to Lisbon last year" said on 2026-12-07 is stored as 2025-12-07, known to
    the year: the block says 2025, not a day nobody said."""
    moved = _fact("f1", "Kate", "moved to Lisbon", "m1", datetime(2025, 12, 7, tzinfo=UTC), unit)
    block = _result([moved], []).context(200)
    assert block == f"Facts:\n{shown}"
    shared = _result([moved, _fact("f2", "Kate", "likes tea", "m2")], []).context(200)
    assert f"Kate: moved to Lisbon [{shown[1:].split(']')[0]}]; likes tea [2023-05-07]" in shared


@pytest.mark.parametrize("unit", ["week", "month", "year"])
def test_a_fact_known_to_the_month_does_not_restate_a_message_of_its_first_day(
    unit: TimeUnit,
) -> None:
    """A fact known to the month (week, year) says when, which its message of that month's
    first day does not: it stays, the message in first or the fact first."""
    said = _message("m1", "I moved to Lisbon this year.", datetime(2023, 1, 2, tzinfo=UTC))
    moved = _fact("f1", "Kate", "moved to Lisbon", "m1", datetime(2023, 1, 2, tzinfo=UTC), unit)
    for messages in ([said], [_message("m0", "Hello there."), said]):
        block = _result([moved], messages).context(200)
        assert "Kate moved to Lisbon" in block and "this year" in block
    same_day = _fact("f1", "Kate", "moved to Lisbon", "m1", datetime(2023, 1, 2, tzinfo=UTC))
    assert "Kate moved to Lisbon" not in _result([same_day], [said]).context(200)


def test_said_day_names_the_period_of_each_unit() -> None:
    when = datetime(2023, 5, 10, 15, 30, tzinfo=UTC)  # a Wednesday
    shown = [said_day(when, unit) for unit in ("day", "week", "month", "year")]
    assert shown == ["2023-05-10", "week of 2023-05-08", "2023-05", "2023"]
    assert said_day(when) == "2023-05-10" and said_day(None, "year") == "undated"


def test_every_message_is_dated() -> None:
    block = _result([], [_message("m1", "Hi.", None), _message("m2", "Yo.")]).context(100)
    assert "[undated] Kate: Hi." in block and "[2023-05-07] Kate: Yo." in block


def test_the_searchs_budget_is_the_default_and_a_bad_budget_is_named() -> None:
    budgeted = RESULT.model_copy(update={"max_tokens": 60})
    assert budgeted.context() == RESULT.context(60) != RESULT.context()
    refused = []
    for bad in (0, -5, 2.5, True):
        with pytest.raises(InvalidInputError) as info:
            RESULT.context(bad)  # type: ignore[arg-type]
        refused.append(str(info.value))
    # as every count is named (normalize.check_count)
    assert refused == [
        f"max_tokens must be an integer of at least 1, got {bad!r}" for bad in (0, -5, 2.5, True)
    ]


def test_a_budget_asks_for_as_many_hits_as_it_holds() -> None:
    assert hits_for(150, 10) == 10 and hits_for(1200, 10) == 48 and hits_for(1200, 60) == 60
    assert hits_for(100_000, 10) == 1000


@pytest.mark.parametrize("budget", [1, 3, 5, 8, 12])
def test_a_budget_too_small_for_the_unknown_names_line_holds_no_memory_about_others(
    budget: int,
) -> None:
    """A query about Bob with no Bob stored: a block that cannot say the memories are about
    others holds none of them (they would read as the answer), only the shorter line when it
    fits (from 5 tokens up it held Kate's facts, no word of Bob)."""
    about_others = RESULT.model_copy(update={"unknown_names": ["Bob"]})
    block = about_others.context(budget)
    assert block in ("", "Nothing stored mentions Bob.")
    assert block == "Nothing stored mentions Bob." or _cost("Nothing stored mentions Bob.") > budget
    full = about_others.context(100)
    assert full.startswith("Nothing stored mentions Bob; the memories below are about others.\n")


def test_the_unknown_names_line_names_the_first_five_and_counts_the_rest() -> None:
    names = ["Ann", "Bob", "Cal", "Dee", "Eve", "Fay", "Gus"]
    assert (
        nothing_about(names[:5], False)
        == "Nothing stored mentions Ann or Bob or Cal or Dee or Eve."
    )
    assert nothing_about(names[:6], True) == (
        "Nothing stored mentions Ann, Bob, Cal, Dee, Eve or 1 other name; the memories below "
        "are about others."
    )
    assert nothing_about(names, False) == (
        "Nothing stored mentions Ann, Bob, Cal, Dee, Eve or 2 other names."
    )


def test_a_query_naming_thousands_of_unknown_names_still_holds_memories() -> None:
    """A query naming 3,000 names nothing holds: its warning line listed them all, never fit a
    budget, and the block was empty; `unknown_names` keeps them all."""
    names = [f"Name{i}" for i in range(3000)]
    about_others = RESULT.model_copy(update={"unknown_names": names})
    block = about_others.context(150)
    assert block.startswith(
        "Nothing stored mentions Name0, Name1, Name2, Name3, Name4 or 2995 other names; the "
        "memories below are about others.\n"
    )
    assert "Kate" in block and _cost(block) <= 150
    assert about_others.unknown_names == names


@pytest.mark.parametrize("budget", range(1, 40))
def test_the_entities_line_never_takes_a_memorys_place(budget: int) -> None:
    """ "Relevant entities: ..." comes last, in what the memories leave: the block is the one
    without it, that line added or not. A budget no memory line fits in (a fact's is about 8
    tokens with its header) holds that line alone, by design: `search(q).context(5)`."""
    peter = Entity(uid="e1", user_id="u", key="peter", name="Peter")
    facts = [_fact("f1", "Peter", "lives in New York", "m1"), _fact("f2", "Peter", "is ok", "m2")]
    bare = _result(facts, [_message("m3", "Hi.")])
    named = bare.model_copy(update={"entities": [ScoredEntity(entity=peter, score=1.0)]})
    without, tail = bare.context(budget), "Relevant entities: Peter"
    assert named.context(budget) in (without, f"{without}\n{tail}".lstrip("\n"))
