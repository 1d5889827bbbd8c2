"""Entity and relation types a user declares (what Graphiti calls custom types).

Declared entity types are offered to the LLM with their descriptions and become the labels
of the entities it types with them (`:Entity:Company`); an entity typed with anything else
gets no type label. Declared relations are offered as the predicates to prefer; with
`only_declared_relations`, a fact under any other predicate is left out and reported. Both
apply to what any extractor returns (`engine.extraction.guard`), not to `add_facts`, whose
caller names its types and predicates itself.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.errors import InvalidInputError
from engine.normalize import RESERVED_LABELS, normalize_label, normalize_predicate

_DESCRIPTION_CHARS = 300


class GraphTypes(BaseModel):
    """`entities`: type -> what it is (`{"Company": "a business or employer"}`);
    `relations`: predicate -> what it means (`{"WORKS_AT": "employment"}`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entities: dict[str, str] = Field(default_factory=dict)
    relations: dict[str, str] = Field(default_factory=dict)
    only_declared_relations: bool = False

    @field_validator("entities")
    @classmethod
    def _labels(cls, entities: dict[str, str]) -> dict[str, str]:
        for name, description in entities.items():
            if normalize_label(name) != name:
                raise ValueError(
                    f"entity type {name!r} cannot be a label: use PascalCase letters and digits "
                    f"(e.g. Company), and none of {', '.join(sorted(RESERVED_LABELS))}"
                )
            _check_description(name, description)
        return entities

    @field_validator("relations")
    @classmethod
    def _predicates(cls, relations: dict[str, str]) -> dict[str, str]:
        for name, description in relations.items():
            try:
                snake = normalize_predicate(name)
            except InvalidInputError as exc:
                raise ValueError(str(exc)) from None
            if snake != name:
                raise ValueError(f"relation {name!r} is not UPPER_SNAKE_CASE (e.g. {snake})")
            _check_description(name, description)
        return relations

    def entity_type(self, extracted: str | None) -> str | None:
        """The label an extracted type gets: itself when no types are declared (as cleaned
        by `normalize_label`), else the declared type it names, else none."""
        label = normalize_label(extracted)
        if not self.entities or label in self.entities:
            return label
        return None

    def allows(self, predicate: str) -> bool:
        """Whether a fact under `predicate` (as extracted) may be stored; one that is no
        relationship type is refused later, where it is used."""
        if not self.only_declared_relations:
            return True
        try:
            return normalize_predicate(predicate) in self.relations
        except InvalidInputError:
            return True

    def prompt_section(self) -> str:
        """What the extraction prompt adds: the declared types and relations, described."""
        parts = []
        if self.entities:
            listed = "\n".join(f"- {name}: {text}" for name, text in self.entities.items())
            parts.append(
                "Entity types: give every entity one of these types; an entity that fits "
                f"none gets the type Thing.\n{listed}"
            )
        if self.relations:
            listed = "\n".join(f"- {name}: {text}" for name, text in self.relations.items())
            rule = (
                "use only these predicates; leave out facts that none of them states"
                if self.only_declared_relations
                else "use these predicates whenever one fits"
            )
            parts.append(f"Relations: {rule}.\n{listed}")
        return "\n\n".join(parts)


def _check_description(name: str, description: str) -> None:
    if len(description) > _DESCRIPTION_CHARS:
        raise ValueError(
            f"the description of {name!r} has {len(description)} characters; at most "
            f"{_DESCRIPTION_CHARS}"
        )
