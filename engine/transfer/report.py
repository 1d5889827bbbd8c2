"""What an import reports: `ImportReport`."""

from __future__ import annotations

from pydantic import BaseModel, computed_field

__all__ = ["ImportReport"]


class ImportReport(BaseModel):
    """What an import wrote, and for whom: of each kind, the file's records (`entities`, ...,
    all written), those new to the user (`entities_new`: this import's writes created them)
    and those it found stored when it wrote them (`entities_held`: written onto, nothing
    added; held before, or stored meanwhile by another writer, such as a second import of
    the file at once)."""

    user_id: str
    source_user_id: str
    entities: int = 0
    facts: int = 0
    episodes: int = 0
    history: int = 0
    entities_held: int = 0
    facts_held: int = 0
    episodes_held: int = 0
    history_held: int = 0
    embedded: int = 0  # entities and facts that had no vector in the document
    remapped: int = 0  # entities that took the uid of one the target already had (same key)
    made_own: int = 0  # an entity named as the target user id, now its own (`own_entity`)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def entities_new(self) -> int:
        return self.entities - self.entities_held

    @computed_field  # type: ignore[prop-decorator]
    @property
    def facts_new(self) -> int:
        return self.facts - self.facts_held

    @computed_field  # type: ignore[prop-decorator]
    @property
    def episodes_new(self) -> int:
        return self.episodes - self.episodes_held

    @computed_field  # type: ignore[prop-decorator]
    @property
    def history_new(self) -> int:
        return self.history - self.history_held
