"""The anchors' vector read of entity names: sent at once in a chat graph; in a graph written
as triples, sent once the name reads are back, and only when they found no name the query
holds word for word (`GraphLeg.read_vectors`)."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from engine.models import Entity
from engine.retrieval.graph_leg import GraphLeg, NameReads
from engine.retrieval.query import Query
from engine.retrieval.tuning import Tuning

MEANT: list[tuple[Entity, float]] = [(Entity(uid="m", user_id="u", key="peter", name="Peter"), 0.9)]


class _Reads:
    def __init__(self) -> None:
        self.sent = 0

    def vector_entities(
        self, user_id: str, vector: list[float], k: int
    ) -> list[tuple[Entity, float]]:
        self.sent += 1
        return MEANT


def _names() -> NameReads:
    return NameReads(by_name=Future(), by_key=Future())


def _back(names: NameReads, *found: str, aliases: tuple[str, ...] = ()) -> None:
    """The name reads answer: the fulltext read with `found`, the read by key with nothing."""
    entities = [
        (Entity(uid=n, user_id="u", key=n.lower(), name=n, aliases=list(aliases)), 1.0)
        for n in found
    ]
    names.by_name.set_result(entities)
    names.by_key.set_result({})


def _leg(reads: _Reads) -> GraphLeg:
    return GraphLeg(reads, None, Tuning())  # type: ignore[arg-type]  # no scorer used


def test_a_chat_graph_sends_it_at_once() -> None:
    reads, names = _Reads(), _names()
    found = _leg(reads).read_vectors(names, "u", [0.0])
    assert found.result(timeout=5) == MEANT and reads.sent == 1  # the name reads still out


@pytest.mark.parametrize(
    ("query", "named", "aliases"),
    [
        ("where does Ursula K. Le Guin live", "Ursula K. Le Guin", ()),
        ("what did Le Guin write", "Ursula K. Le Guin", ("Le Guin",)),
    ],
)
def test_a_triples_graph_does_not_send_it_when_the_query_holds_a_name_whole(
    query: str, named: str, aliases: tuple[str, ...]
) -> None:
    reads, names = _Reads(), _names()
    found = _leg(reads).read_vectors(names, "u", [0.0], unless_named=Query.parse(query, 64))
    assert not found.done()  # decided once the name reads are back
    _back(names, named, aliases=aliases)
    assert found.result(timeout=5) == [] and reads.sent == 0


@pytest.mark.parametrize("query", ["where does Ursula Le Guin live", "who is Petr?"])
def test_a_triples_graph_sends_it_when_no_name_is_held_whole(query: str) -> None:
    reads, names = _Reads(), _names()
    found = _leg(reads).read_vectors(names, "u", [0.0], unless_named=Query.parse(query, 64))
    assert reads.sent == 0
    _back(names, "Ursula K. Le Guin", "Peter")
    assert found.result(timeout=5) == MEANT and reads.sent == 1


def test_a_failed_name_read_is_what_the_vector_read_reports() -> None:
    reads, names = _Reads(), _names()
    query = Query.parse("who is Peter?", 64)
    found = _leg(reads).read_vectors(names, "u", [0.0], unless_named=query)
    names.by_key.set_result({})
    names.by_name.set_exception(TimeoutError("the store did not answer"))
    with pytest.raises(TimeoutError, match="did not answer"):
        found.result(timeout=5)
    assert reads.sent == 0
