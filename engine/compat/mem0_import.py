"""Import the graph Mem0's graph memory left in Neo4j into graphmem.

Mem0 wrote `(:<type> {name, user_id, embedding, ...})` nodes (also labelled `__Entity__` when
its `base_label` option is on) joined by typed relationships (`likes`, `friend_of`), names
lower-cased with underscores. Each relationship
becomes one graphmem fact: the names as entities (underscores read as spaces unless
`readable_names=False`), the relationship type as the predicate (LIKES), the other label as
the entity type. Mem0's embeddings are not copied (another model, often another size):
graphmem embeds the names and facts with its own model. The read is a named statement
(`cypher/list_mem0_relations.cypher`) run on the store that holds Mem0's graph.

Example:
    >>> source = Neo4jStore.from_settings("bolt://localhost:7687", "neo4j", "pw")  # doctest: +SKIP
    >>> import_mem0_graph(source, Memory(), "alice").facts_added                   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from engine.add.facts import clean_fact
from engine.errors import InvalidInputError
from engine.memory import Memory
from engine.models import AddResult, FactInput
from engine.normalize import check_user_id, normalize_label
from engine.store.base import GraphStore

PAGE = 1000
# the labels of graphmem's own nodes, which can share a database and a user id with Mem0's
GRAPHMEM_LABELS = [
    "Entity", "Fact", "Episode", "History", "MessageIndex", "RelationVectors", "GraphmemKey",
    "GraphmemSchema",
]  # fmt: skip
OnError = Literal["raise", "skip"]


def _name(value: Any, readable: bool) -> Any:
    return value.replace("_", " ").strip() if readable and isinstance(value, str) else value


def _type(labels: Any) -> str | None:
    found = [normalize_label(str(label)) for label in labels or []]
    return next((label for label in found if label and label.lower() != "unknown"), None)


def mem0_relations(source: GraphStore, user_id: str) -> Iterator[list[Any]]:
    """Every (source, labels, relationship, target, labels) row of one Mem0 user, page by page."""
    skip = 0
    while True:
        params = {"user_id": user_id, "graphmem_labels": GRAPHMEM_LABELS}
        rows = source.run("list_mem0_relations", {**params, "skip": skip, "limit": PAGE})
        yield from rows
        if len(rows) < PAGE:
            return
        skip += PAGE


def mem0_facts(source: GraphStore, user_id: str, *, readable_names: bool = True) -> list[FactInput]:
    """The facts of one Mem0 user's graph, ready for `Memory.add_facts`.

    Raises:
        InvalidInputError: a row is not made of names and a relationship type.
    """
    facts = []
    for subject, subject_labels, relationship, obj, object_labels in mem0_relations(
        source, check_user_id(user_id)
    ):
        try:
            facts.append(
                FactInput(
                    subject=_name(subject, readable_names),
                    predicate=relationship,
                    object=_name(obj, readable_names),
                    subject_type=_type(subject_labels),
                    object_type=_type(object_labels),
                )
            )
        except ValueError as exc:
            raise InvalidInputError(
                f"Mem0 relationship {subject!r} -{relationship}-> {obj!r} is unusable: {exc}"
            ) from exc
    return facts


def import_mem0_graph(
    source: GraphStore,
    memory: Memory,
    user_id: str,
    *,
    into_user: str | None = None,
    readable_names: bool = True,
    on_error: OnError = "skip",
) -> AddResult:
    """Write Mem0 user `user_id`'s graph into graphmem (as `into_user`, default the same id).

    Idempotent like `add_facts`: importing twice adds nothing new. With `on_error="skip"`,
    relationships graphmem cannot store (e.g. a name over the length limit) are left out and
    listed in `AddResult.errors`; with "raise", nothing is written.

    Raises:
        InvalidInputError: an unusable user id, or a bad relationship with `on_error="raise"`.
    """
    target = check_user_id(into_user if into_user is not None else user_id)
    facts = mem0_facts(source, user_id, readable_names=readable_names)
    kept, errors = [], []
    for fact in facts:
        try:
            clean_fact(fact, memory.settings)
        except InvalidInputError as exc:
            if on_error == "raise":
                raise
            errors.append(f"skipped {fact.subject!r} {fact.predicate!r} {fact.object!r}: {exc}")
            continue
        kept.append(fact)
    result = memory.add_facts(kept, target) if kept else AddResult(user_id=target)
    result.errors += errors
    return result
