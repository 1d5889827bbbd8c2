"""A search result as one block for a prompt: the most answer per token, everything dated.

`SearchResult.context(max_tokens)` fills the budget in one order: the lists taken in turn by
rank (the first message, the first fact, the first connection, the second message, ...), so
neither kind crowds the other out of a small budget. On the way:
- a fact is left out when a message it came from is in the block, and taken out again when
  such a message comes in later: the message says it, with its speaker and date;
- what does not fit is skipped, not the end: a shorter line further down may still fit;
- facts about one entity share a line ("Kate: likes cooking [2023-05-07]; works at UCLA");
- every fact and message carries its date ("undated" when the time is not known).

Tokens are estimated per line as words * 4/3, the usual rule of thumb for English BPE (the
estimate `benchmarks/raw_turns.py` packs its baselines with).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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
    kind: str  # "fact", "path" or "message"
    item: ScoredFact | ScoredEpisode | Path
    sources: frozenset[str]  # the messages it came from (its own uid for a message)


@dataclass
class _Block:
    """What is in the block so far, rendered the way it will print, and its cost."""

    budget: int
    head: list[str] = field(default_factory=list)
    facts: dict[str, list[ScoredFact]] = field(default_factory=dict)  # by subject
    paths: list[Path] = field(default_factory=list)
    messages: list[ScoredEpisode] = field(default_factory=list)

    def lines(self) -> list[str]:
        lines = list(self.head)
        if self.facts:
            lines += [_FACTS, *(_fact_line(group) for group in self.facts.values())]
        if self.paths:
            lines += [_PATHS, *(_path_line(p) for p in self.paths)]
        if self.messages:
            lines += [_MESSAGES, *(m.episode.line() for m in self.messages)]
        return lines

    def cost(self) -> int:
        return sum(estimate_tokens(line) for line in self.lines())

    def shown(self) -> set[str]:
        return {m.episode.uid for m in self.messages}

    def try_add(self, candidate: _Candidate) -> None:
        """Add the candidate if the block still fits its budget with it."""
        if candidate.kind == "fact" and candidate.sources & self.shown():
            return  # a message it came from is here already
        undo = self._add(candidate)
        if self.cost() > self.budget:
            undo()
        elif candidate.kind == "message":
            self._drop_restated()

    def _add(self, candidate: _Candidate) -> Callable[[], object]:
        """Put the candidate in; return what takes it out again."""
        item = candidate.item
        if isinstance(item, ScoredFact):
            self.facts.setdefault(item.fact.subject, []).append(item)
            return lambda: self._remove_fact(item)
        if isinstance(item, Path):
            self.paths.append(item)
            return self.paths.pop
        self.messages.append(item)
        return self.messages.pop

    def _remove_fact(self, hit: ScoredFact) -> None:
        group = self.facts[hit.fact.subject]
        group.remove(hit)
        if not group:
            del self.facts[hit.fact.subject]

    def _drop_restated(self) -> None:
        shown = self.shown()
        for group in list(self.facts.values()):
            for hit in list(group):
                if shown.intersection(hit.fact.episodes):
                    self._remove_fact(hit)


def render(result: SearchResult, max_tokens: int) -> str:
    """The block `SearchResult.context` returns (see the module's docstring)."""
    block = _Block(max_tokens)
    if result.unknown_names:
        found = bool(result.facts or result.episodes or result.paths)
        block.head.append(nothing_about(result.unknown_names, found))
        if block.cost() > max_tokens:
            block.head.clear()
    for candidate in sorted(_candidates(result), key=lambda c: c.rank):  # stable: kinds in turn
        block.try_add(candidate)
    lines = block.lines()
    if result.entities:
        entities = "Relevant entities: " + ", ".join(se.entity.name for se in result.entities)
        if block.cost() + estimate_tokens(entities) <= max_tokens:
            lines.append(entities)
    return "\n".join(lines)


def _candidates(result: SearchResult) -> Iterable[_Candidate]:
    """Every hit, at equal rank a message first: on chat the messages are the evidence."""
    for rank, scored in enumerate(result.episodes, start=1):
        yield _Candidate(rank, "message", scored, frozenset({scored.episode.uid}))
    for rank, hit in enumerate(result.facts, start=1):
        yield _Candidate(rank, "fact", hit, frozenset(hit.fact.episodes))
    for rank, path in enumerate(result.paths, start=1):
        yield _Candidate(rank, "path", path, frozenset())


def _fact_line(group: list[ScoredFact]) -> str:
    subject = group[0].fact.subject
    parts = [f"{_said(hit, subject)} [{_fact_day(hit)}]" for hit in group]
    if len(group) == 1:
        return f"[{_fact_day(group[0])}] {group[0].fact.text}"
    return f"{subject}: " + "; ".join(parts)


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
