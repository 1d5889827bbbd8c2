"""A read started before its turn returns what it would have read at its turn."""

from __future__ import annotations

from typing import Any

from engine.add.facts import facts_batch, validate_facts
from engine.config import Settings
from engine.embedding import Embedder
from engine.retrieval.edge_reads import EdgeRead, EdgeReads
from engine.store.base import GraphStore
from engine.store.reads import Reads


def test_a_hubs_probes_go_as_one_read_when_all_they_can_return_fits(
    store: GraphStore, embedder: Embedder
) -> None:
    reads = Reads(store)
    facts = [("Drama", f"REL_{i}", f"Thing {i} {j}") for i in range(3) for j in range(5)]
    batch, _ = facts_batch(reads, embedder, "u", validate_facts(facts, Settings()))
    store.write("u", batch)
    drama = reads.entities_by_keys("u", ["drama"])["drama"].uid
    probes = [EdgeRead((drama,), (f"REL_{i}",), 2, 2) for i in range(3)]
    sent: list[str] = []
    run = store.run

    def counted(name: str, params: dict[str, Any], **kw: Any) -> Any:
        sent.append(name)
        return run(name, params, **kw)

    store.run = counted  # type: ignore[method-assign]
    # in a room of 5 each goes alone, and the last is read again at its turn (room 1 left)
    for room, statements in ((100, ["probe_typed"]), (5, ["expand_typed"] * 4)):
        sent.clear()
        walk = EdgeReads(reads, "u", room, include_invalid=False)
        started = walk.start_all(probes)
        found = [walk.take(s, r) for s, r in zip(started, probes, strict=True)]
        assert sent == statements  # 3 probes x 2 edges fit in 100, not in 5
        assert [len(f) for f in found] == ([2, 2, 2] if room == 100 else [2, 2, 1])
        assert [{n.predicate for n in f} for f in found] == [{"REL_0"}, {"REL_1"}, {"REL_2"}]
