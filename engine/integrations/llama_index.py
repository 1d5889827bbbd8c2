"""LlamaIndex integration: a memory block, a retriever, and property-graph interop.

- `GraphMemoryBlock` plugs graphmem into LlamaIndex's `Memory`: messages flushed from the
  short-term buffer are ingested with `Memory.add`; on every `get()` the block answers with
  graphmem's context for the latest user message.
- `GraphMemRetriever` is a `BaseRetriever`: one `NodeWithScore` per fact, provenance in metadata.
- `triples_from_property_graph` / `import_llama_index_graph` bring a LlamaIndex property graph
  (`EntityNode` / `Relation` triplets, or plain KG triples) into graphmem;
  `property_graph_from_memory` / `export_to_property_graph` go the other way.

Example:
    >>> from llama_index.core.memory import Memory as ChatMemory
    >>> mem = Memory()
    >>> chat = ChatMemory.from_defaults(
    ...     memory_blocks=[GraphMemoryBlock(memory=mem, user_id="alice")], token_limit=4000
    ... )

LlamaIndex is imported here and nowhere else in `engine`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.errors import InvalidInputError
from engine.facts import clean_fact, coerce_fact
from engine.memory import Memory
from engine.models import AddResult, Fact, FactInput, ScoredFact

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.base.llms.types import ChatMessage, MessageRole
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.graph_stores.types import (
        KG_SOURCE_REL,
        EntityNode,
        LabelledNode,
        PropertyGraphStore,
        Relation,
    )
    from llama_index.core.memory import BaseMemoryBlock
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - exercised only without the package
    raise ImportError(
        "engine.integrations.llama_index needs the `llama-index-core` package "
        "(pip install 'llama-index-core>=0.12')"
    ) from exc

__all__ = [
    "GraphMemRetriever",
    "GraphMemoryBlock",
    "export_to_property_graph",
    "fact_node",
    "import_llama_index_graph",
    "property_graph_from_memory",
    "triples_from_property_graph",
]

OnError = Literal["raise", "skip"]
_STRUCTURAL = frozenset({KG_SOURCE_REL, "MENTIONS", "SUBJECT", "OBJECT"})
_PAGE = 1000


# -- memory block ----------------------------------------------------------------------------


def message_dicts(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """OpenAI-format dicts of the user and assistant messages that carry text."""
    out = []
    for message in messages:
        text = (message.content or "").strip()
        if text and message.role in (MessageRole.USER, MessageRole.ASSISTANT):
            out.append({"role": message.role.value, "content": text})
    return out


def latest_user_text(messages: Sequence[ChatMessage] | None) -> str | None:
    """The text of the newest user message, if any."""
    for message in reversed(messages or []):
        text = (message.content or "").strip()
        if message.role == MessageRole.USER and text:
            return text
    return None


def _session_of(messages: Sequence[ChatMessage]) -> str | None:
    for message in messages:
        session = message.additional_kwargs.get("session_id")
        if isinstance(session, str):
            return session
    return None


class GraphMemoryBlock(BaseMemoryBlock[str]):
    """Long-term graph memory as a block of LlamaIndex's `Memory`.

    `aput` (called with the messages `Memory` flushes from its short-term buffer) ingests them
    with `Memory.add` for `user_id`; `aget` searches graphmem with the latest user message and
    returns `SearchResult.context(max_tokens)`, or "" when nothing is known. Blocking graphmem
    calls run in a worker thread so the event loop stays free.

    Args:
        memory: the graphmem `Memory` to read and write.
        user_id: whose graph this block reads and writes (fixed per block).
        limit: facts per search.
        max_tokens: the budget of the context string.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(default="graph_memory", description="The name of the memory block.")
    priority: int = Field(default=1, description="Truncation priority (0 = never truncate).")
    memory: Memory = Field(description="The graphmem Memory.")
    user_id: str = Field(min_length=1, description="The user whose graph is read and written.")
    limit: int = Field(default=10, ge=1, le=1000)
    max_tokens: int = Field(default=256, ge=1)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = latest_user_text(messages)
        if query is None:
            return ""
        result = await asyncio.to_thread(self.memory.search, query, self.user_id, self.limit)
        return result.context(self.max_tokens) if result.facts else ""

    async def _aput(self, messages: list[ChatMessage]) -> None:
        dicts = message_dicts(messages)
        if not dicts:
            return
        session_id = _session_of(messages)
        await asyncio.to_thread(
            self.memory.add, dicts, self.user_id, session_id=session_id, source="llama_index"
        )

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop context lines from the end (least relevant first) until enough is cut."""
        lines = content.splitlines()
        while lines and tokens_to_truncate > 0:
            tokens_to_truncate -= max(1, round(len(lines.pop().split()) * 4 / 3))
        return "\n".join(lines) or None


# -- retriever --------------------------------------------------------------------------------


def fact_node(scored: ScoredFact) -> NodeWithScore:
    """A scored fact as a `NodeWithScore`: the fact's sentence, its triple and provenance."""
    fact = scored.fact
    metadata: dict[str, Any] = {
        "uid": fact.uid,
        "subject": fact.subject,
        "predicate": fact.predicate,
        "object": fact.object,
        "legs": list(scored.legs),
        "hop": scored.hop,
        "episodes": list(fact.episodes),
        "valid_at": fact.valid_at.isoformat() if fact.valid_at else None,
    }
    node = TextNode(
        id_=fact.uid,
        text=fact.text,
        metadata=metadata,
        excluded_embed_metadata_keys=list(metadata),
        excluded_llm_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=scored.score)


class GraphMemRetriever(BaseRetriever):
    """graphmem search as a LlamaIndex retriever: one node per fact, best first.

    Example:
        >>> retriever = GraphMemRetriever(Memory(), user_id="alice", limit=5)
        >>> [n.node.get_content() for n in retriever.retrieve("who is Alice's friend?")]
        ['Alice friend of John']
    """

    def __init__(
        self,
        memory: Memory,
        user_id: str,
        limit: int = 10,
        *,
        include_invalid: bool = False,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        if not user_id:
            raise InvalidInputError("user_id must not be empty")
        self.memory = memory
        self.user_id = user_id
        self.limit = limit
        self.include_invalid = include_invalid
        super().__init__(callback_manager=callback_manager)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self.memory.search(
            query_bundle.query_str,
            self.user_id,
            self.limit,
            include_invalid=self.include_invalid,
        )
        return [fact_node(scored) for scored in result.facts]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)


# -- property graph interop -------------------------------------------------------------------


class _Triple(BaseModel):
    """One KG triple as LlamaIndex's `SimpleLLMPathExtractor` produces: three strings."""

    model_config = ConfigDict(frozen=True)

    subject: str = Field(min_length=1)
    predicate: str = Field(min_length=1)
    object: str = Field(min_length=1)


def _label(node: LabelledNode) -> str | None:
    label = node.label
    return None if label in ("entity", "node", "text_chunk", "") else label


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
    LlamaIndex's defaults become entity types; a relation's `text` property becomes the text.

    Raises:
        InvalidInputError: an item is neither a triplet nor a string triple.
    """
    items = _store_triplets(source) if isinstance(source, PropertyGraphStore) else source
    facts = [_item_fact(item) for item in items]
    return [fact for fact in facts if fact is not None]


def import_llama_index_graph(
    memory: Memory,
    source: PropertyGraphStore | Iterable[Any],
    user_id: str,
    *,
    on_error: OnError = "raise",
) -> AddResult:
    """Import a LlamaIndex property graph (or its triples) into `user_id`'s graph.

    With `on_error="skip"`, triples graphmem cannot store (e.g. a relation label with no
    letters) are left out and listed in `AddResult.errors`; with "raise" nothing is written.

    Raises:
        InvalidInputError: a triple is unusable and `on_error="raise"`.
    """
    facts = triples_from_property_graph(source)
    errors: list[str] = []
    if on_error == "skip":
        facts, errors = _usable(memory, facts)
    result = memory.add_facts(facts, user_id) if facts else AddResult(user_id=user_id)
    result.errors += errors
    return result


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
    types = {e.uid: e.type for e in memory.store.entities_by_uids(user_id, sorted(uids))}
    nodes: dict[str, EntityNode] = {}
    for f in facts:
        for name, uid in ((f.subject, f.subject_uid), (f.object, f.object_uid)):
            nodes.setdefault(uid, _entity_node(name, uid, user_id, types.get(uid)))
    return list(nodes.values()), [_relation(f) for f in facts]


def export_to_property_graph(
    memory: Memory, user_id: str, store: PropertyGraphStore, *, include_invalid: bool = False
) -> tuple[int, int]:
    """Upsert `user_id`'s graph into a LlamaIndex property graph store; (nodes, relations)."""
    nodes, relations = property_graph_from_memory(memory, user_id, include_invalid=include_invalid)
    store.upsert_nodes(nodes)
    store.upsert_relations(relations)
    return len(nodes), len(relations)
