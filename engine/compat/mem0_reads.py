"""How the Mem0 facade reads a graph in Mem0's terms: the fact a memory id names (and whose it
is), the facts a scope admits with the origin Mem0 shows, a scope's listing, and the items of
`add`'s answer. `engine.compat.mem0_sync.Memory` asks one `Reads` per graph."""

from __future__ import annotations

from typing import Any

from engine.compat.mem0_ids import LEGACY_ID_NEEDS_SCOPE, MemoryIds, parse, store_key
from engine.compat.mem0_scope import Scope, owner_scope
from engine.compat.mem0_shapes import Origin, memory_item, relation
from engine.errors import InvalidInputError, NotFoundError
from engine.memory import Memory as GraphMemory
from engine.models import AddResult, Fact

PAGE = 1000  # facts read at a time when listing a scope


def missing(memory_id: str) -> NotFoundError:
    """The one answer for an id that names nothing the caller may see."""
    return NotFoundError(f"no memory {memory_id!r}")


class Reads:
    """The facade's reads of `graph`; the memory ids' secret is read on first use."""

    def __init__(self, graph: GraphMemory) -> None:
        self.graph = graph
        self._ids: MemoryIds | None = None

    def ids(self) -> MemoryIds:
        """The store's memory ids (its schema set up first, where the secret is kept)."""
        if self._ids is None:
            self.graph._setup()
            self._ids = MemoryIds(store_key(self.graph.store))
        return self._ids

    def resolve(self, memory_id: str, scope: Scope | None) -> tuple[Fact, Scope]:
        """The fact a memory id names, and the scope to show it in.

        Raises:
            InvalidInputError: not a memory id; a legacy id given without a scope.
            NotFoundError: no such fact, or not in `scope`: the same error either way.
        """
        text, legacy_user = parse(memory_id)
        if legacy_user is not None:
            if scope is None:
                raise InvalidInputError(LEGACY_ID_NEEDS_SCOPE.format(id=memory_id))
            if legacy_user != scope.user:
                raise missing(memory_id)
            uid, user = text, scope.user
        else:
            uid = self.ids().uid(text)
            user = scope.user if scope is not None else self._owner(uid, memory_id)
        found = self.graph.reads.facts_by_uids(user, [uid])
        if not found or (scope is not None and not self.admitted(scope, found)):
            raise missing(memory_id)
        return found[0], scope or owner_scope(user)

    def _owner(self, uid: str, memory_id: str) -> str:
        rows = self.graph.store.run("find_fact_owners", {"uid": uid})
        if len(rows) != 1:
            raise missing(memory_id)
        return str(rows[0][0])

    def added(self, scope: Scope, result: AddResult, told: Origin) -> dict[str, Any]:
        """Mem0's answer to `add`: the memories it added (ADD), mentioned again (UPDATE, with
        its unchanged `previous_memory`) or contradicted (DELETE, shown with the origin of their
        own messages). A memory the messages said that is history at once (an older message
        added late, or a value said before another) is an ADD whose item has `invalid_at`."""
        contradicted = set(result.invalidated_uids) - set(result.fact_uids)
        facts = self.graph.reads.facts_by_uids(
            scope.user, list(dict.fromkeys(result.fact_uids + result.invalidated_uids))
        )
        gone = [f for f in facts if f.uid in contradicted]
        origins = {f.uid: o for f, o in self.admitted(owner_scope(scope.user), gone)}
        items = []
        for fact in facts:
            event = "DELETE" if fact.uid in contradicted else "ADD"
            if event == "ADD" and fact.first_seen != fact.last_seen:
                event = "UPDATE"
            item = {**self.item(fact, scope, origins.get(fact.uid, told)), "event": event}
            if event == "UPDATE":  # mentioned again: its text stays (Mem0's UPDATE says it)
                item["previous_memory"] = fact.text
            items.append(item)
        # Mem0's graph answers the rows each relationship's write returned: a list per fact
        added = [[relation(f, "target")] for f in facts if f.uid not in contradicted]
        deleted = [[relation(f, "target")] for f in gone]
        return {
            "results": items,
            "relations": {"added_entities": added, "deleted_entities": deleted},
        }

    def listed(self, scope: Scope, limit: int) -> list[tuple[Fact, Origin]]:
        """The first `limit` memories in `scope`: the user's facts are read a page at a time
        until that many are in it, as an agent's or a filter's may all be recent."""
        size = PAGE if scope.narrowed else min(PAGE, limit)
        kept: list[tuple[Fact, Origin]] = []
        offset = 0
        while len(kept) < limit:
            page = self.graph.get_all(scope.user, limit=size, offset=offset)
            kept += self.admitted(scope, page)
            if len(page) < size:
                break
            offset += size
        return kept[:limit]

    def admitted(self, scope: Scope, facts: list[Fact]) -> list[tuple[Fact, Origin]]:
        """The facts whose messages fall in `scope`, each with the origin of its first message
        in scope (the first that has metadata)."""
        wanted = sorted({uid for f in facts for uid in f.episodes})
        episodes = {e.uid: e for e in self.graph.reads.episodes_by_uids(scope.user, wanted)}
        kept = []
        for fact in facts:
            own = [episodes[u] for u in fact.episodes if u in episodes]
            if scope.admits(own):
                inside = [e for e in own if scope.admits_episode(e)] or own
                first = next((e for e in inside if e.metadata), inside[0] if inside else None)
                kept.append((fact, Origin.of(scope, first)))
        return kept

    def item(
        self, fact: Fact, scope: Scope, origin: Origin, score: float | None = None
    ) -> dict[str, Any]:
        """One memory as Mem0 shows it, under its memory id."""
        return memory_item(self.ids().of(fact.uid), fact, scope, origin, score)
