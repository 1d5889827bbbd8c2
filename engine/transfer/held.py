"""What an import found already there: of each kind, how many of its records its writes
created (new to the user) and so how many they found stored (held). An import is
idempotent: the same file imported again writes every record onto one it holds, and nothing
new.

Counted from what the writes say they created (`Written`), not from reads before them: two
imports of one file at once both read every record as new, while each record was created by
one of them and found stored by the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.store.base import Written
from engine.transfer.report import ImportReport


@dataclass
class Created:
    """The uids an import's writes created, by kind."""

    entities: set[str] = field(default_factory=set)
    facts: set[str] = field(default_factory=set)
    episodes: set[str] = field(default_factory=set)
    history: set[str] = field(default_factory=set)

    def add(self, written: Written) -> None:
        self.entities |= written.added_entities
        self.facts |= written.added
        self.episodes |= written.added_episodes
        self.history |= written.added_history

    def held_in(self, report: ImportReport) -> ImportReport:
        """`report` (its records counted) with those not created here counted as held."""
        return report.model_copy(
            update={
                "entities_held": report.entities - len(self.entities),
                "facts_held": report.facts - len(self.facts),
                "episodes_held": report.episodes - len(self.episodes),
                "history_held": report.history - len(self.history),
            }
        )
