"""A search result as one block for a prompt: the most answer per token, dated where known.

`SearchResult.context(max_tokens)` fills the budget in one order: the lists taken in turn by
rank (the first message, the first fact, the first connection, the second message, ...), so
neither kind crowds the other out of a small budget. On the way:
- a fact is left out when a message it came from is in the block with the fact's date, and
  taken out again when such a message comes in later: the message says it, with its speaker
  and date (a fact dated otherwise, "yesterday" resolved, says when, which the message does not);
- a connection (a path of facts) is left out when the block already says each of its facts;
- what does not fit is skipped, not the end: a shorter line further down may still fit;
- facts about one entity share a line ("Kate: likes cooking [2023-05-07]; works at UCLA");
- every message carries its date ("undated" when its time is not known), and so does every
  fact whose time is known; a fact of unknown time (a graph written by `add_facts`) has no mark
  at all ("Tom married to Kate"): "[undated]" on every line cost tokens and said nothing more;
- a fact's date is as precise as it is known (`said_day`): "[2025] Kate moved to Lisbon" for
  "last year", "[2023-04]" for "in April", "[week of 2023-05-01]" for "last week"; such a fact
  never restates a message (a message's date is a day), however its date falls.

Tokens are estimated per line as words * 4/3, the usual rule of thumb for English BPE (the
estimate `benchmarks/raw_turns.py` packs its baselines with).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from engine.normalize import check_count
from engine.times import DAY, TimeUnit

MAX_LIMIT = 1000  # hits per list a search returns at most
TOKENS_PER_HIT = 25  # `search(max_tokens=)` asks for a fact and a message per this many
_FACTS, _PATHS, _MESSAGES = "Facts:", "Connections:", "Messages:"
_AT_EQUAL_RANK = {"message": 0, "fact": 1, "path": 2}  # on chat, messages are the evidence
UNDATED = "undated"  # how a message said at an unknown time shows where a date would


def said_day(when: datetime | None, unit: TimeUnit | None = DAY) -> str:
    """A time as the date it is known to: a day (2024-05-01), a week ("week of 2024-04-29",
    its Monday), a month (2024-05) or a year (2024); "undated" when it is not known."""
    if when is None:
        return UNDATED
    if unit == "year":
        return f"{when:%Y}"
    if unit == "month":
        return f"{when:%Y-%m}"
    if unit == "week":
        return f"week of {when - timedelta(days=when.weekday()):%Y-%m-%d}"
    return f"{when:%Y-%m-%d}"


def check_budget(max_tokens: object) -> int:
    """`max_tokens` as given, or InvalidInputError naming what is wrong with it (as every
    count is checked: `check_count`)."""
    return check_count(max_tokens, "max_tokens", 1)


def hits_for(max_tokens: int | None, limit: int) -> int:
    """Hits per list a search asks for to fill `max_tokens` (at least `limit`)."""
    if max_tokens is None:
        return limit
    return min(MAX_LIMIT, max(limit, -(-check_budget(max_tokens) // TOKENS_PER_HIT)))


def estimate_tokens(line: str) -> int:
    """Tokens of one line of a block: words * 4/3, at least 1."""
    return _tokens(len(line.split()))


@dataclass(frozen=True)
class Piece:
    """One hit as the block may print it (`SearchResult.context` makes them)."""

    rank: int  # in its own list, from 1
    kind: Literal["message", "fact", "path"]
    line: str  # as it prints on a line of its own
    # its date as shown (`said_day`), UNDATED when not known (a fact's line then shows none):
    # a fact restates a message only when the two show the same day
    day: str
    sources: frozenset[str] = frozenset()  # the messages it came from; a message: its uid
    subject: str = ""  # a fact's entity
    said: str = ""  # a fact's sentence without its subject ("likes cooking")
    uid: str = ""  # a fact's uid
    facts: frozenset[str] = frozenset()  # a path's facts' uids

    @property
    def part(self) -> str:
        """A fact as part of its entity's shared line: "likes cooking [2023-05-07]", or with
        no mark when its time is not known."""
        return self.said if self.day == UNDATED else f"{self.said} [{self.day}]"


def fact_piece(
    rank: int, uid: str, text: str, subject: str, day: str, sources: Iterable[str]
) -> Piece:
    """A fact as the block may print it: "[day] text" (no mark when `day` is UNDATED), and
    as part of its subject's shared line."""
    line = text if day == UNDATED else f"[{day}] {text}"
    said = _without(text, subject)
    return Piece(rank, "fact", line, day, frozenset(sources), subject, said, uid)


def path_piece(rank: int, facts: Sequence[tuple[str, str]]) -> Piece:
    """A path of facts (uid, text), in walking order, as one line."""
    line = " -> ".join(text for _, text in facts)
    return Piece(rank, "path", line, UNDATED, facts=frozenset(uid for uid, _ in facts))


def _without(text: str, subject: str) -> str:
    """A fact's sentence without its subject when it opens with it ("likes cooking")."""
    if text.casefold().startswith(subject.casefold() + " "):
        return text[len(subject) + 1 :]
    return text


@dataclass
class _Group:
    """An entity's facts in the block: one line, its words counted as it grows."""

    subject: str
    facts: list[Piece] = field(default_factory=list)
    parts: int = 0  # words of the facts as parts of a shared line ("likes cooking [date];")

    def words(self, extra: Piece | None = None) -> int:
        """Words of its line, with `extra` added when given."""
        if not self.facts or (extra is None and len(self.facts) == 1):
            return len((extra or self.facts[0]).line.split())
        added = _part_words(extra) if extra is not None else 0
        return len(self.subject.split()) + self.parts + added

    def add(self, fact: Piece) -> None:
        self.facts.append(fact)
        self.parts += _part_words(fact)

    def remove(self, fact: Piece) -> None:
        self.facts.remove(fact)
        self.parts -= _part_words(fact)

    def line(self) -> str:
        if len(self.facts) == 1:
            return self.facts[0].line
        return f"{self.subject}: " + "; ".join(f.part for f in self.facts)


@dataclass
class _Block:
    """What is in the block so far and its cost in tokens, kept as it grows."""

    budget: int
    head: list[str] = field(default_factory=list)
    facts: dict[str, _Group] = field(default_factory=dict)  # by subject
    paths: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    shown: dict[str, str] = field(default_factory=dict)  # the messages' uids: their days
    told: set[str] = field(default_factory=set)  # facts the block says (or a message of theirs)
    behind: dict[str, list[Piece]] = field(default_factory=dict)  # facts by source
    spent: int = 0

    def lines(self) -> list[str]:
        lines = list(self.head)
        if self.facts:
            lines += [_FACTS, *(group.line() for group in self.facts.values())]
        if self.paths:
            lines += [_PATHS, *self.paths]
        if self.messages:
            lines += [_MESSAGES, *self.messages]
        return lines

    def add_head(self, line: str) -> None:
        if self.spent + estimate_tokens(line) <= self.budget:
            self.head.append(line)
            self.spent += estimate_tokens(line)

    def try_add(self, piece: Piece) -> None:
        """Add the piece if the block still fits its budget with it."""
        if piece.kind == "fact":
            if self._restates(piece):
                self.told.add(piece.uid)
            else:
                self._try_fact(piece)
        elif piece.kind == "path":
            if piece.facts <= self.told:
                return  # every fact on it is said
            if self._fits(bool(self.paths), piece.line):
                self.paths.append(piece.line)
        elif self._fits(bool(self.messages), piece.line):
            self.messages.append(piece.line)
            (uid,) = piece.sources
            self.shown[uid] = piece.day
            for fact in self.behind.pop(uid, []):
                if fact.day == piece.day:
                    self._remove_fact(fact)  # the message says it, with its speaker and date

    def _restates(self, fact: Piece) -> bool:
        """A message it came from is in, of its day: a fact dated otherwise ("yesterday"
        resolved) says when, which the message does not; so does a fact known to the week,
        month or year ("2023-04" is never a message's day)."""
        return any(self.shown.get(uid) == fact.day for uid in fact.sources)

    def _fits(self, headed: bool, line: str) -> bool:
        extra = estimate_tokens(line) + (0 if headed else 1)
        if self.spent + extra > self.budget:
            return False
        self.spent += extra
        return True

    def _try_fact(self, fact: Piece) -> None:
        group = self.facts.get(fact.subject) or _Group(fact.subject)
        before = _tokens(group.words()) if group.facts else 0
        extra = _tokens(group.words(fact)) - before + (0 if self.facts else 1)
        if self.spent + extra > self.budget:
            return
        self.spent += extra
        group.add(fact)
        self.told.add(fact.uid)
        self.facts[group.subject] = group
        for uid in fact.sources:
            self.behind.setdefault(uid, []).append(fact)

    def _remove_fact(self, fact: Piece) -> None:
        group = self.facts.get(fact.subject)
        if group is None or fact not in group.facts:
            return  # gone already, by another of its messages
        before = _tokens(group.words())
        group.remove(fact)
        self.spent -= before - (_tokens(group.words()) if group.facts else 0)
        if not group.facts:
            del self.facts[group.subject]
            self.spent -= 0 if self.facts else 1  # the header goes with the last fact


def _tokens(words: int) -> int:
    return max(1, round(words * 4 / 3))


def _part_words(fact: Piece) -> int:
    return len(fact.part.split())


def holds_memory(block: str) -> bool:
    """The block holds a fact, connection or message, not only its head and tail lines."""
    return any(line in (_FACTS, _PATHS, _MESSAGES) for line in block.splitlines())


def block_or_why(block: str, max_tokens: int, found: tuple[int, int], asked: str) -> str:
    """`block`, packed in `max_tokens` from what a search `asked` ("user 'u' for 'q'") `found`
    (facts, messages); when it holds none of them (no hit has a line short enough), the reason
    first, where an empty block says nothing."""
    if holds_memory(block) or not any(found):
        return block
    facts, messages = found
    said = f"{facts} fact{'s' * (facts != 1)} and {messages} message{'s' * (messages != 1)}"
    why = (
        f"No memory of {asked} fits in max_tokens={max_tokens}: {said} were found; a larger "
        "max_tokens holds them."
    )
    return "\n".join(filter(None, [why, block]))


def pack(pieces: Iterable[Piece], max_tokens: int, head: str = "", tail: str = "") -> str:
    """The block `SearchResult.context` returns (see the module's docstring): `head` first
    and `tail` last when they fit."""
    block = _Block(max_tokens)
    if head:
        block.add_head(head)
    for piece in sorted(pieces, key=lambda p: (p.rank, _AT_EQUAL_RANK[p.kind])):
        block.try_add(piece)
    lines = block.lines()
    if tail and block.spent + estimate_tokens(tail) <= max_tokens:
        lines.append(tail)
    return "\n".join(lines)


NAMES_SAID = 5  # a line naming every unknown name of a long query never fits a budget


def nothing_about(names: list[str], others_follow: bool) -> str:
    """The line that says a query's names are unknown to the memory: the first `NAMES_SAID`
    of them, and how many more ("Nothing stored mentions A, B, C, D, E or 7 other names")."""
    more = len(names) - NAMES_SAID
    if more > 0:
        others = f"{more} other name{'s' if more > 1 else ''}"
        said = f"Nothing stored mentions {', '.join(names[:NAMES_SAID])} or {others}"
    else:
        said = f"Nothing stored mentions {' or '.join(names)}"
    return f"{said}; the memories below are about others." if others_follow else f"{said}."
