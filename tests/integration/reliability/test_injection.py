"""Injection: hostile text in every field a caller controls is stored as data or refused with
a clear error; nothing executes (a canary user's graph is untouched) and nothing breaks."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from engine.embedding import Embedder
from engine.errors import InvalidInputError, LimitExceededError, NotFoundError
from engine.memory import Memory
from engine.normalize import is_relation_type
from engine.store.base import GraphStore
from engine.store.falkordb import FalkorDBStore
from engine.testing.scripted_llm import ScriptedLLM
from tests.integration.reliability.conftest import Tally
from tests.integration.reliability.graph_checks import half_written, nodes_of
from tests.integration.reliability.helpers import llm_memory

ATTACKER, CANARY = "mallory", "canary"
MEGABYTE = "x" * 1_000_000
PAYLOADS = [
    "x') DETACH DELETE n //",
    '"}) MATCH (n) DETACH DELETE n RETURN 1 //',
    "`) MATCH (n) DETACH DELETE n //",
    'a\\"}) MATCH (n) DELETE n //',
    "$user_id",
    "CYPHER user_id='canary' MATCH (n) RETURN n",
    "CALL db.idx.fulltext.drop('Entity')",
    "}]->(x) SET x.user_id = 'mallory' //",
    # fullwidth MATCH (n) DELETE n: NFKC turns it into plain Cypher text
    "\uff2d\uff21\uff34\uff23\uff28 (n) \uff24\uff25\uff2c\uff25\uff34\uff25 n",
    "\u0421anary",  # Cyrillic Es: a confusable of the canary's entity
    "nul\x00byte",
    "\x00\x00",
    "lone \ud800 surrogate",
    "line\nbreak\r\n\t",
    "@user_id:{canary} | *",
    "\u202eevil\u202c",
]


def _fact(**fields: str) -> dict[str, str]:
    return {"subject": "Mal", "predicate": "LIKES", "object": "tea", **fields}


CALLS: dict[str, Callable[[Memory, str], object]] = {
    "subject": lambda m, p: m.add_facts([_fact(subject=p)], ATTACKER),
    "object": lambda m, p: m.add_facts([_fact(object=p)], ATTACKER),
    "predicate": lambda m, p: m.add_facts([_fact(predicate=p)], ATTACKER),
    "type": lambda m, p: m.add_facts([{**_fact(), "subject_type": p}], ATTACKER),
    "fact text": lambda m, p: m.add_facts([_fact(text=p)], ATTACKER),
    "message": lambda m, p: m.add(p, ATTACKER),
    "metadata": lambda m, p: m.add("hello", ATTACKER, metadata={"k": p, p[:50] or "x": 1}),
    "session_id": lambda m, p: m.add("hi", ATTACKER, session_id=p),
    "source": lambda m, p: m.add("hey", ATTACKER, source=p),
    "query": lambda m, p: m.search(p, ATTACKER),
    "name": lambda m, p: m.entity(p, ATTACKER),
    "uid": lambda m, p: m.history(p, ATTACKER),
    "delete uid": lambda m, p: m.delete(p, ATTACKER),
    "user_id": lambda m, p: m.get_all(p),
}
# the error names the field (the message's own name for the two that reuse another field)
FIELD_IN_ERROR = {
    "delete uid": "uid", "metadata": "metadata", "type": "subject_type",
}  # fmt: skip


@pytest.fixture(scope="module")
def store(shared_store: GraphStore) -> GraphStore:
    return shared_store


@pytest.fixture(scope="module")
def mem(
    store: GraphStore, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Memory]:
    data_dir = tmp_path_factory.mktemp("injection")
    with ScriptedLLM() as llm, llm_memory(store, embedder, llm, data_dir) as memory:
        memory.add_facts([("Canary", "OWNS", "Bird"), ("Bird", "LIVES_IN", "Cage")], CANARY)
        yield memory


def _canary(mem: Memory, store: GraphStore) -> tuple[object, ...]:
    facts = sorted((f.uid, f.text, f.mentions) for f in mem.get_all(CANARY))
    return facts, nodes_of(store, CANARY), mem.stats(CANARY).entities


def _relationship_types(store: GraphStore) -> list[str]:
    assert isinstance(store, FalkorDBStore)
    return [row[0] for row in store._graph.ro_query("CALL db.relationshipTypes()").result_set]


@pytest.mark.parametrize("field", list(CALLS))
def test_hostile_text_is_data_or_a_clear_error(
    mem: Memory, store: GraphStore, tally: Tally, field: str
) -> None:
    before = _canary(mem, store)
    call = CALLS[field]
    for payload in PAYLOADS:
        tally.cases += 1
        tally.faults += 1
        try:
            call(mem, payload)
        except NotFoundError:
            assert field in ("name", "delete uid")
        except InvalidInputError as exc:
            named = FIELD_IN_ERROR.get(field, field)
            assert named is None or named in str(exc), str(exc)
    assert _canary(mem, store) == before
    assert [sf.fact.user_id for sf in mem.search("Canary owns", CANARY).facts][:1] == [CANARY]
    assert all(is_relation_type(t) for t in _relationship_types(store))
    assert half_written(store, ATTACKER) == [] and half_written(store, CANARY) == []


@pytest.mark.parametrize("field", [f for f in CALLS if FIELD_IN_ERROR.get(f, f) is not None])
def test_a_megabyte_string_is_refused_naming_the_field(
    mem: Memory, store: GraphStore, tally: Tally, field: str
) -> None:
    before = nodes_of(store, ATTACKER)
    with pytest.raises(LimitExceededError) as caught:
        CALLS[field](mem, MEGABYTE)
    tally.cases += 1
    tally.faults += 1
    named = FIELD_IN_ERROR.get(field, field)
    assert f"{named} has " in str(caught.value) and "the limit is" in str(caught.value)
    assert len(str(caught.value)) < 300  # the error quotes no megabyte
    assert nodes_of(store, ATTACKER) == before
