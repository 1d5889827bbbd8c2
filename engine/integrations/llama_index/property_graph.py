"""Property-graph interop: a LlamaIndex property graph into graphmem, and a user's graph out
as LlamaIndex `EntityNode`s and `Relation`s (a copy; `graph_store` reads in place)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, get_args

from llama_index.core.graph_stores.types import (
    KG_SOURCE_REL,
    EntityNode,
    LabelledNode,
    PropertyGraphStore,
    Relation,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.add.facts import clean_fact, coerce_fact
from engine.errors import InvalidInputError
from engine.memory import Memory
from engine.models import AddResult, Fact, FactInput
from engine.times import parse_time

OnError = Literal["raise", "skip"]
_STRUCTURAL = frozenset({KG_SOURCE_REL, "MENTIONS", "SUBJECT", "OBJECT"})
_PAGE = 1000


class _Triple(BaseModel):
    """One KG triple as LlamaIndex's `SimpleLLMPathExtractor` produces: three strings."""

    model_config = ConfigDict(frozen=True)

    subject: str = Field(min_length=1)
    predicate: str = Field(min_length=1)
    object: str = Field(min_length=1)


def _label(node: LabelledNode) -> str | None:
    """The node's type, or None for LlamaIndex's and graphmem's untyped labels ("entity",
    graphmem's own "Entity")."""
    label = node.label
    return None if label.casefold() in ("entity", "node", "text_chunk", "") else label


def _triplet_fact(source: Any, relation: Any, target: Any) -> FactInput | None:
    """A `(node, Relation, node)` triplet as a fact; None for chunk links and structure."""
    if not (isinstance(source, EntityNode) and isinstance(target, EntityNode)):
        return None
    if relation.label.upper() in _STRUCTURAL:
        return None
    text = relation.properties.get("text")
    return FactInput(
        subject=source.name,
        predicate=relation.label,
        object=target.name,
        text=text if isinstance(text, str) and text.strip() else None,
        subject_type=_label(source),
        object_type=_label(target),
        valid_at=_time(relation.properties.get("valid_at")),
    )


def _time(value: Any) -> datetime | None:
    """A relation's `valid_at` (graphmem's export writes ISO 8601), or None if it is no time."""
    try:
        return parse_time(value, "valid_at")
    except InvalidInputError:
        return None


def _ended(item: Any) -> str | None:
    """Why a triplet no longer holds: graphmem's `export_to_property_graph(include_invalid=
    True)` keeps facts that stopped being true, with their `invalid_at`; None for the rest."""
    if not (isinstance(item, Sequence) and len(item) == 3 and isinstance(item[1], Relation)):
        return None
    source, relation, target = item
    ended = relation.properties.get("invalid_at")
    if ended in (None, ""):
        return None
    return (
        f"left out {source.id!r} {relation.label!r} {target.id!r}: no longer true since "
        f"{ended} (add_facts writes what holds now; `graphmem export` / `import` move history)"
    )


def _item_fact(item: Any) -> FactInput | None:
    if isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 3:
        if isinstance(item[1], Relation):
            return _triplet_fact(*item)
        try:
            triple = _Triple(subject=item[0], predicate=item[1], object=item[2])
        except ValidationError as exc:
            raise InvalidInputError(f"invalid triple {item!r}: {exc.errors()[0]['msg']}") from exc
        return FactInput(subject=triple.subject, predicate=triple.predicate, object=triple.object)
    raise InvalidInputError(
        "expected an (EntityNode, Relation, EntityNode) triplet or a (str, str, str) triple, "
        f"got {item!r}"
    )


def _store_triplets(store: PropertyGraphStore) -> list[Any]:
    """Every entity-to-entity triplet of a property graph store, each once."""
    ids = [node.id for node in store.get() if isinstance(node, EntityNode)]
    seen: set[tuple[str, str, str]] = set()
    triplets = []
    for start in range(0, len(ids), _PAGE):
        for triplet in store.get_triplets(ids=ids[start : start + _PAGE]):
            key = (triplet[0].id, triplet[1].label, triplet[2].id)
            if key not in seen:
                seen.add(key)
                triplets.append(triplet)
    return triplets


def triples_from_property_graph(source: PropertyGraphStore | Iterable[Any]) -> list[FactInput]:
    """The facts held by a LlamaIndex property graph, ready for `Memory.add_facts`.

    `source` is a `PropertyGraphStore` (e.g. `SimplePropertyGraphStore`,
    `Neo4jPropertyGraphStore`), or an iterable of `(EntityNode, Relation, EntityNode)` triplets
    or `(subject, relation, object)` string triples. Links to text chunks and structural
    relations (SOURCE, MENTIONS, SUBJECT, OBJECT) are left out; node labels other than
    LlamaIndex's defaults become entity types; a relation's `text` property becomes the text
    and its `valid_at` (a time) when the fact became true; a relation with an `invalid_at`
    (no longer true, as graphmem exports history) is left out.

    Raises:
        InvalidInputError: an item is neither a triplet nor a string triple, or `source` is
            no property graph store nor iterable of them.
    """
    return _collect(source, skip=False)[0]


def _items(source: object) -> Iterable[Any]:
    """The triplets of a property graph store, or `source` itself when it lists triples.

    Raises:
        InvalidInputError: `source` is neither (a string or a mapping is no list of triples).
    """
    if isinstance(source, PropertyGraphStore):
        return _store_triplets(source)
    if isinstance(source, Iterable) and not isinstance(source, str | bytes | Mapping):
        return source
    raise InvalidInputError(
        "source must be a LlamaIndex PropertyGraphStore or an iterable of (EntityNode, "
        f"Relation, EntityNode) triplets or (str, str, str) triples, got {type(source).__name__}"
    )


def _check_on_error(on_error: object) -> None:
    if on_error not in get_args(OnError):
        raise InvalidInputError(f"on_error must be 'raise' or 'skip', got {on_error!r}")


def _collect(
    source: PropertyGraphStore | Iterable[Any], *, skip: bool
) -> tuple[list[FactInput], list[str]]:
    """The facts of `source`, and a note for each triplet left out as no longer true and,
    with `skip`, for each item that is no usable triplet or triple.

    Raises:
        InvalidInputError: an item is unusable and not `skip`.
    """
    facts: list[FactInput] = []
    notes: list[str] = []
    for item in _items(source):
        if (why := _ended(item)) is not None:
            notes.append(why)
            continue
        try:
            fact = _item_fact(item)
        except InvalidInputError as exc:
            if not skip:
                raise
            notes.append(f"skipped {exc}")
            continue
        if fact is not None:
            facts.append(fact)
    return facts, notes


def import_llama_index_graph(
    memory: Memory,
    source: PropertyGraphStore | Iterable[Any],
    user_id: str,
    *,
    on_error: OnError = "raise",
) -> AddResult:
    """Import a LlamaIndex property graph (or its triples) into `user_id`'s graph.

    With `on_error="skip"`, triples graphmem cannot store (e.g. a relation label with no
    letters, a string triple with an empty or missing part) are left out and listed in
    `AddResult.errors`; with "raise" nothing is written.
    Relations no longer true (an `invalid_at` property) are left out and listed there too.

    Raises:
        InvalidInputError: a triple is unusable and `on_error="raise"`; `source` is no
            property graph store nor iterable of triples; `on_error` is neither policy.
    """
    _check_on_error(on_error)
    facts, ended = _collect(source, skip=on_error == "skip")
    errors: list[str] = []
    if on_error == "skip":
        facts, errors = _usable(memory, facts)
    result = memory.add_facts(facts, user_id) if facts else AddResult(user_id=user_id)
    result.errors += ended + errors
    if not facts and not result.errors and (why := _nothing_to_import(source)) is not None:
        result.errors.append(why)
    return result


def _nothing_to_import(source: object) -> str | None:
    """Why a property graph store gave no fact: it holds text chunks and no relation between
    entities (what `ImplicitPathExtractor` alone builds); None for an empty one."""
    if not isinstance(source, PropertyGraphStore):
        return None
    chunks = sum(1 for node in source.get() if not isinstance(node, EntityNode))
    if not chunks:
        return None
    return (
        f"no relation between entities to import: the graph holds {chunks} text chunks and "
        "the links between them, which are no facts (ImplicitPathExtractor's); build it with "
        "an extractor of entities and relations (SimpleLLMPathExtractor, "
        "SchemaLLMPathExtractor)"
    )


def _usable(memory: Memory, facts: list[FactInput]) -> tuple[list[FactInput], list[str]]:
    kept: list[FactInput] = []
    errors: list[str] = []
    for fact in facts:
        try:
            clean_fact(coerce_fact(fact), memory.settings)
        except InvalidInputError as exc:
            errors.append(f"skipped {fact.subject!r} {fact.predicate!r} {fact.object!r}: {exc}")
            continue
        kept.append(fact)
    return kept, errors


def _all_facts(memory: Memory, user_id: str, include_invalid: bool) -> list[Fact]:
    facts: list[Fact] = []
    while True:
        page = memory.get_all(
            user_id, include_invalid=include_invalid, limit=_PAGE, offset=len(facts)
        )
        facts += page
        if len(page) < _PAGE:
            return facts


def _entity_node(name: str, uid: str, user_id: str, etype: str | None) -> EntityNode:
    props = {"uid": uid, "user_id": user_id}
    return EntityNode(name=name, label=etype or "entity", properties=props)


def _relation(fact: Fact) -> Relation:
    props: dict[str, Any] = {"uid": fact.uid, "user_id": fact.user_id, "text": fact.text}
    if fact.valid_at is not None:
        props["valid_at"] = fact.valid_at.isoformat()
    if fact.invalid_at is not None:
        props["invalid_at"] = fact.invalid_at.isoformat()
    return Relation(
        label=fact.predicate, source_id=fact.subject, target_id=fact.object, properties=props
    )


def property_graph_from_memory(
    memory: Memory, user_id: str, *, include_invalid: bool = False
) -> tuple[list[EntityNode], list[Relation]]:
    """`user_id`'s graph as LlamaIndex `EntityNode`s and `Relation`s (names as node ids)."""
    facts = _all_facts(memory, user_id, include_invalid)
    uids = {f.subject_uid for f in facts} | {f.object_uid for f in facts}
    types = {e.uid: e.type for e in memory.reads.entities_by_uids(user_id, sorted(uids))}
    nodes: dict[str, EntityNode] = {}
    for f in facts:
        for name, uid in ((f.subject, f.subject_uid), (f.object, f.object_uid)):
            nodes.setdefault(uid, _entity_node(name, uid, user_id, types.get(uid)))
    return list(nodes.values()), [_relation(f) for f in facts]


def export_to_property_graph(
    memory: Memory, user_id: str, store: PropertyGraphStore, *, include_invalid: bool = False
) -> tuple[int, int]:
    """Upsert `user_id`'s graph into a LlamaIndex property graph store; (nodes, relations).

    Raises:
        InvalidInputError: `store` is not a LlamaIndex `PropertyGraphStore`.
    """
    if not isinstance(store, PropertyGraphStore):
        raise InvalidInputError(
            f"store must be a LlamaIndex PropertyGraphStore, got {type(store).__name__}"
        )
    nodes, relations = property_graph_from_memory(memory, user_id, include_invalid=include_invalid)
    store.upsert_nodes(nodes)
    store.upsert_relations(relations)
    return len(nodes), len(relations)
