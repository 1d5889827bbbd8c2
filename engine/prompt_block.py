"""A search result as one block for a prompt: the most answer per token, everything dated.

`SearchResult.context(max_tokens)` fills the budget in one order: the lists taken in turn by
rank (the first message, the first fact, the first connection, the second message, ...), so
neither kind crowds the other out of a small budget. On the way:
- a fact is left out when a message it came from is in the block with the fact's date, and
  taken out again when such a message comes in later: the message says it, with its speaker
  and date (a fact dated otherwise, "yesterday" resolved, says when, which the message does not);
- what does not fit is skipped, not the end: a shorter line further down may still fit;
- facts about one entity share a line ("Kate: likes cooking [2023-05-07]; works at UCLA");
- every fact and message carries its date ("undated" when the time is not known).

Tokens are estimated per line as words * 4/3, the usual rule of thumb for English BPE (the
estimate `benchmarks/raw_turns.py` packs its baselines with).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.errors import InvalidInputError
from engine.models import Path, ScoredEpisode, ScoredFact, SearchResult, nothing_about, said_day

MAX_LIMIT = 1000  # hits per list a search returns at most
TOKENS_PER_HIT = 25  # `search(max_tokens=)` asks for a fact and a message per this many
_FACTS, _PATHS, _MESSAGES = "Facts:", "Connections:", "Messages:"


def check_budget(max_tokens: object) -> int:
    """`max_tokens` as given, or InvalidInputError naming what is wrong with it."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidInputError(
            f"max_tokens must be a whole number of at least 1, got {max_tokens!r}"
        )
    return max_tokens


def hits_for(max_tokens: int, limit: int) -> int:
    """Hits per list a search asks for to fill `max_tokens` (at least `limit`)."""
    return min(MAX_LIMIT, max(limit, -(-max_tokens // TOKENS_PER_HIT)))


def estimate_tokens(line: str) -> int:
    """Tokens of one line of a block: words * 4/3, at least 1."""
    return max(1, round(len(line.split()) * 4 / 3))


@dataclass
class _Candidate:
    rank: int  # in its own list, from 1
    item: ScoredFact | ScoredEpisode | Path
    sources: frozenset[str]  # the messages it came from (its own uid for a message)


@dataclass
class _Group:
    """An entity's facts in the block: one line, its words counted as it grows."""

    subject: str
    hits: list[ScoredFact] = field(default_factory=list)
    parts: int = 0  # words of the hits as parts of a shared line ("likes cooking [date];")

    def words(self, extra: ScoredFact | None = None) -> int:
        hits = [*self.hits, extra] if extra is not None else self.hits
        if len(hits) == 1:
            return 1 + len(hits[0].fact.text.split())
        added = self._part(extra) if extra is not None else 0
        return len(self.subject.split()) + self.parts + added

    def add(self, hit: ScoredFact) -> None:
        self.hits.append(hit)
        self.parts += self._part(hit)

    def remove(self, hit: ScoredFact) -> None:
        self.hits.remove(hit)
        self.parts -= self._part(hit)

    def _part(self, hit: ScoredFact) -> int:
        return len(_said(hit, self.subject).split()) + 1


@dataclass
class _Block:
    """What is in the block so far and its cost in tokens, kept as it grows."""

    budget: int
    head: list[str] = field(default_factory=list)
    facts: dict[str, _Group] = field(default_factory=dict)  # by subject
    paths: list[Path] = field(default_factory=list)
    messages: list[ScoredEpisode] = field(default_factory=list)
    shown: dict[str, str] = field(default_factory=dict)  # the messages' uids: their days
    behind: dict[str, list[ScoredFact]] = field(default_factory=dict)  # facts by source
    spent: int = 0

    def lines(self) -> list[str]:
        lines = list(self.head)
        if self.facts:
            lines += [_FACTS, *(_fact_line(group.hits) for group in self.facts.values())]
        if self.paths:
            lines += [_PATHS, *(_path_line(p) for p in self.paths)]
        if self.messages:
            lines += [_MESSAGES, *(m.episode.line() for m in self.messages)]
        return lines

    def add_head(self, line: str) -> None:
        if self.spent + estimate_tokens(line) <= self.budget:
            self.head.append(line)
            self.spent += estimate_tokens(line)

    def try_add(self, candidate: _Candidate) -> None:
        """Add the candidate if the block still fits its budget with it."""
        item = candidate.item
        if isinstance(item, ScoredFact):
            if not self._restates(item, candidate.sources):
                self._try_fact(item, candidate.sources)
        elif isinstance(item, Path):
            if self._fits(bool(self.paths), _path_line(item)):
                self.paths.append(item)
        elif self._fits(bool(self.messages), item.episode.line()):
            self.messages.append(item)
            day = self.shown[item.episode.uid] = said_day(item.episode.ts)
            for hit in self.behind.pop(item.episode.uid, []):
                if _fact_day(hit) == day:
                    self._remove_fact(hit)  # the message says it, with its speaker and date

    def _restates(self, hit: ScoredFact, sources: frozenset[str]) -> bool:
        """A message it came from is in, of its day: a fact dated otherwise ("yesterday"
        resolved) says when, which the message does not."""
        day = _fact_day(hit)
        return any(self.shown.get(uid) == day for uid in sources)

    def _fits(self, headed: bool, line: str) -> bool:
        extra = estimate_tokens(line) + (0 if headed else 1)
        if self.spent + extra > self.budget:
            return False
        self.spent += extra
        return True

    def _try_fact(self, hit: ScoredFact, sources: frozenset[str]) -> None:
        group = self.facts.get(hit.fact.subject) or _Group(hit.fact.subject)
        before = _tokens(group.words()) if group.hits else 0
        extra = _tokens(group.words(hit)) - before + (0 if self.facts else 1)
        if self.spent + extra > self.budget:
            return
        self.spent += extra
        group.add(hit)
        self.facts[group.subject] = group
        for uid in sources:
            self.behind.setdefault(uid, []).append(hit)

    def _remove_fact(self, hit: ScoredFact) -> None:
        group = self.facts.get(hit.fact.subject)
        if group is None or hit not in group.hits:
            return  # gone already, by another of its messages
        before = _tokens(group.words())
        group.remove(hit)
        self.spent -= before - (_tokens(group.words()) if group.hits else 0)
        if not group.hits:
            del self.facts[group.subject]
            self.spent -= 0 if self.facts else 1  # the header goes with the last fact


def _tokens(words: int) -> int:
    return max(1, round(words * 4 / 3))


def render(result: SearchResult, max_tokens: int) -> str:
    """The block `SearchResult.context` returns (see the module's docstring)."""
    block = _Block(max_tokens)
    if result.unknown_names:
        found = bool(result.facts or result.episodes or result.paths)
        block.add_head(nothing_about(result.unknown_names, found))
    for candidate in sorted(_candidates(result), key=lambda c: c.rank):  # stable: kinds in turn
        block.try_add(candidate)
    lines = block.lines()
    if result.entities:
        entities = "Relevant entities: " + ", ".join(se.entity.name for se in result.entities)
        if block.spent + estimate_tokens(entities) <= max_tokens:
            lines.append(entities)
    return "\n".join(lines)


def _candidates(result: SearchResult) -> Iterable[_Candidate]:
    """Every hit, at equal rank a message first: on chat the messages are the evidence."""
    for rank, scored in enumerate(result.episodes, start=1):
        yield _Candidate(rank, scored, frozenset({scored.episode.uid}))
    for rank, hit in enumerate(result.facts, start=1):
        yield _Candidate(rank, hit, frozenset(hit.fact.episodes))
    for rank, path in enumerate(result.paths, start=1):
        yield _Candidate(rank, path, frozenset())


def _fact_line(group: list[ScoredFact]) -> str:
    if len(group) == 1:
        return f"[{_fact_day(group[0])}] {group[0].fact.text}"
    subject = group[0].fact.subject
    return f"{subject}: " + "; ".join(f"{_said(hit, subject)} [{_fact_day(hit)}]" for hit in group)


def _said(hit: ScoredFact, subject: str) -> str:
    """The fact's sentence without its subject when it opens with it ("likes cooking")."""
    text = hit.fact.text
    if text.casefold().startswith(subject.casefold() + " "):
        return text[len(subject) + 1 :]
    return text


def _fact_day(hit: ScoredFact) -> str:
    return said_day(hit.fact.valid_at or (hit.sources[0].ts if hit.sources else None))


def _path_line(path: Path) -> str:
    return " -> ".join(f.text for f in path.facts)
