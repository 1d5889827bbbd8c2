"""The Neo4j adapter without a server: a recording fake driver stands in for `neo4j.Driver`.

What needs a live Neo4j (the queries' results) is covered by the conformance suite when
`NEO4J_URI` is set; here: transactions, statement choice, loops, error mapping, Lucene syntax.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from neo4j import exceptions as ne

from engine import cypher
from engine.errors import (
    ConfigError,
    GraphmemError,
    QueryError,
    StoreError,
    StoreUnavailableError,
)
from engine.store.base import EntityRow, FactRow, GraphStore, WriteBatch, Written
from engine.store.fulltext import lucene_query
from engine.store.neo4j import Neo4jStore, map_neo4j_errors
from engine.store.reads import Reads
from engine.store.statements import delete_fact

Respond = Callable[[str, dict[str, Any]], list[list[Any]]]


class FakeRecord:
    def __init__(self, values: list[Any]) -> None:
        self._values = values

    def values(self) -> list[Any]:
        return self._values


class FakeTx:
    def __init__(self, respond: Respond) -> None:
        self.respond = respond
        self.runs: list[tuple[str, dict[str, Any]]] = []

    def run(self, text: str, params: dict[str, Any]) -> list[FakeRecord]:
        self.runs.append((text, params))
        return [FakeRecord(row) for row in self.respond(text, params)]


class FakeDriver:
    """Records each managed transaction as (mode, database, [(text, params), ...])."""

    def __init__(self, respond: Respond = lambda text, params: [], fail: Exception | None = None):
        self.respond = respond
        self.fail = fail
        self.transactions: list[tuple[str, str, list[tuple[str, dict[str, Any]]]]] = []
        self.timeouts: list[float | None] = []  # of each transaction's unit of work
        self.closed = False

    def session(self, database: str) -> FakeSession:
        return FakeSession(self, database)

    def close(self) -> None:
        self.closed = True


class FakeSession:
    def __init__(self, driver: FakeDriver, database: str) -> None:
        self.driver, self.database = driver, database

    def __enter__(self) -> FakeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _run(self, mode: str, work: Callable[[FakeTx], Any]) -> Any:
        if self.driver.fail is not None:
            raise self.driver.fail
        tx = FakeTx(self.driver.respond)
        self.driver.transactions.append((mode, self.database, tx.runs))
        self.driver.timeouts.append(getattr(work, "timeout", None))
        return work(tx)

    def execute_read(self, work: Callable[[FakeTx], Any]) -> Any:
        return self._run("read", work)

    def execute_write(self, work: Callable[[FakeTx], Any]) -> Any:
        return self._run("write", work)


def make_store(driver: FakeDriver, **kwargs: Any) -> Neo4jStore:
    return Neo4jStore(driver, "memdb", **kwargs)  # type: ignore[arg-type]


def _batch() -> WriteBatch:
    alice = EntityRow(uid="e1", key="alice", name="Alice", type="Person", ts=1.0)
    john = EntityRow(uid="e2", key="john", name="John", type="Person", ts=1.0)
    fact = FactRow(uid="f1", subject_uid="e1", object_uid="e2", predicate="FRIEND_OF",
                   text="Alice friend of John", ts=1.0)  # fmt: skip
    return WriteBatch(entities=[alice, john], entity_embeddings={"e1": [1.0, 0.0]},
                      facts=[fact], fact_embeddings={"f1": [0.0, 1.0]})  # fmt: skip


# -- transactions and statements ----------------------------------------------------------


def test_store_satisfies_the_protocol() -> None:
    """Every member of the port, with the port's parameters (isinstance checks names only)."""
    store = make_store(FakeDriver())
    assert isinstance(store, GraphStore)
    for name, member in vars(GraphStore).items():
        if name.startswith("_") or not callable(member):
            continue
        wanted = list(inspect.signature(member).parameters)
        assert list(inspect.signature(getattr(Neo4jStore, name)).parameters) == wanted, name


def test_a_batch_is_written_in_one_write_transaction_with_neo4j_statements() -> None:
    def respond(text: str, params: dict[str, Any]) -> list[list[Any]]:
        if text == cypher.load("merge_entities", "neo4j"):
            return [[["e2"]]]
        merge_facts = text == cypher.load("merge_facts", "neo4j")
        return [[[["f1", 3, True]]]] if merge_facts else [[1]]

    driver = FakeDriver(respond)
    written = make_store(driver).write("alice", _batch())
    ((mode, database, runs),) = driver.transactions
    texts = [text for text, _ in runs]
    assert (mode, database) == ("write", "memdb")
    assert written.mentions == {"f1": 3} and written.added == {"f1"}
    assert written.added_entities == {"e2"}
    assert written.predicates == {"FRIEND_OF"}
    # entities, their type labels, their embeddings, facts, theirs, typed relationships
    assert len(runs) == 6
    assert all(params["user_id"] == "alice" for _, params in runs)
    assert any("[r:`FRIEND_OF` {user_id: $user_id, uid: row.uid}]" in t for t in texts)
    assert any("SET e:`Person`" in t for t in texts)
    assert not any(cypher.REL_TYPE_PLACEHOLDER in t or cypher.LABEL_PLACEHOLDER in t for t in texts)
    assert sum("db.create.setNodeVectorProperty" in t for t in texts) == 2


def test_an_empty_batch_touches_nothing() -> None:
    driver = FakeDriver()
    assert make_store(driver).write("alice", WriteBatch()) == Written()
    assert driver.transactions == []


def test_reads_run_in_read_transactions() -> None:
    driver = FakeDriver()
    reads = Reads(make_store(driver))
    reads.predicates("alice")
    reads.entities_by_uids("alice", ["e1"])
    assert [(mode, db) for mode, db, _ in driver.transactions] == [("read", "memdb")] * 2


def test_setup_creates_every_schema_object_then_waits_for_indexes() -> None:
    driver = FakeDriver()
    make_store(driver, index_wait_s=42).setup(384)
    runs = [run for _, _, tx_runs in driver.transactions for run in tx_runs]
    assert [t for t, _ in runs[:-1]] == cypher.schema_statements("neo4j")
    assert all(params == {"dimension": 384} for _, params in runs[:-1])
    assert runs[-1] == (cypher.load("await_indexes", "neo4j"), {"timeout_s": 42})
    assert driver.transactions[-1][0] == "read"


def test_schema_work_is_not_cut_by_the_query_timeout() -> None:
    """Creating an index and waiting for it (up to index_wait_s) take longer than a read may;
    reads and writes stay under the query timeout."""
    driver = FakeDriver(lambda text, params: [[1, 1, 1]])
    store = make_store(driver, timeout_s=10.0, index_wait_s=300)
    store.setup(384)
    assert driver.timeouts and set(driver.timeouts) == {None}
    driver.timeouts.clear()
    Reads(store).predicates("alice")
    delete_fact(store, "alice", "f1")
    assert driver.timeouts == [10.0, 10.0, 10.0]  # the read, the history and the fact


def test_vector_search_scans_a_small_user_and_reads_the_index_for_a_large_one() -> None:
    fact = {"uid": "f1", "user_id": "u", "predicate": "OWNS", "text": "u owns a cat"}
    row = [fact, {"uid": "e1", "name": "U"}, {"uid": "e2", "name": "cat"}, 0.9]
    size = {"u": 3, "v": 100_000}
    asked: list[str] = []

    def respond(text: str, params: dict[str, Any]) -> list[list[Any]]:
        name = next(n for n in STATEMENTS if cypher.load(n, "neo4j") == text)
        asked.append(name)
        if name == "count_fact_vectors":
            return [[min(size[params["user_id"]], params["cap"])]]
        assert params["limit"] == 3  # the statement keeps the best 3
        return [row] * (2 if name == "search_fact_vectors" else 3)

    reads = Reads(make_store(FakeDriver(respond)))
    hits = reads.vector_facts("u", [1.0], 3, include_invalid=False)
    assert asked == ["count_fact_vectors", "scan_fact_vectors"]
    assert hits[0][1] == pytest.approx(0.9)
    asked.clear()
    # v is large: the index gives 2 of 3, too few, and as few when asked wider: v is scanned
    assert len(reads.vector_facts("v", [1.0], 3, include_invalid=False)) == 3
    assert asked == ["count_fact_vectors", *["search_fact_vectors"] * 2, "scan_fact_vectors"]


STATEMENTS = ("count_fact_vectors", "search_fact_vectors", "scan_fact_vectors")


def test_deletes_repeat_in_batches_until_a_short_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.store.neo4j._DELETE_BATCH", 2)
    replies = iter([[[2]], [[2]], [[1]]])
    driver = FakeDriver(lambda text, params: next(replies))
    assert make_store(driver).delete_user("alice") == 5
    assert {p["batch"] for _, _, runs in driver.transactions for _, p in runs} == {2}
    assert len(driver.transactions) == 3


def test_fulltext_with_no_usable_term_does_not_query() -> None:
    driver = FakeDriver()
    assert Reads(make_store(driver)).fulltext_entities("alice", ["  ", "?!"], 5) == []
    assert driver.transactions == []


def test_close_leaves_an_injected_driver_open_and_closes_an_owned_one() -> None:
    injected, owned = FakeDriver(), FakeDriver()
    make_store(injected).close()
    make_store(owned, owns_driver=True).close()
    assert (injected.closed, owned.closed) == (False, True)


def test_from_settings_rejects_an_unusable_uri() -> None:
    with pytest.raises(ConfigError) as info:
        Neo4jStore.from_settings("http://localhost:7474", "neo4j", "secret")
    assert "not supported" in str(info.value)


# -- error mapping -------------------------------------------------------------------------


def _server_error(code: str) -> ne.Neo4jError:
    with warnings.catch_warnings():  # hydrate is how the driver builds server errors
        warnings.simplefilter("ignore", DeprecationWarning)
        return ne.Neo4jError.hydrate(code=code, message="from the server")


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (ne.ServiceUnavailable("down"), StoreUnavailableError),
        (ne.SessionExpired("gone"), StoreUnavailableError),
        (_server_error("Neo.ClientError.Security.Unauthorized"), StoreUnavailableError),
        (_server_error("Neo.ClientError.Database.DatabaseNotFound"), StoreUnavailableError),
        (_server_error("Neo.TransientError.General.DatabaseUnavailable"), StoreUnavailableError),
        (_server_error("Neo.ClientError.Statement.SyntaxError"), QueryError),
        (_server_error("Neo.ClientError.Schema.ConstraintValidationFailed"), QueryError),
        (_server_error("Neo.ClientError.Procedure.ProcedureCallFailed"), QueryError),
        (_server_error("Neo.TransientError.Transaction.DeadlockDetected"), StoreError),
        (_server_error("Neo.DatabaseError.General.UnknownError"), StoreError),
        (ne.ConfigurationError("bad"), ConfigError),
        (ne.TransactionError("closed"), StoreError),
    ],
    ids=lambda v: getattr(v, "code", None) or type(v).__name__ if isinstance(v, Exception) else "",
)
def test_driver_errors_map_to_one_error_tree(raised: Exception, expected: type[Exception]) -> None:
    with pytest.raises(GraphmemError) as info, map_neo4j_errors():
        raise raised
    assert type(info.value) is expected
    assert info.value.__cause__ is raised


def test_the_store_raises_mapped_errors() -> None:
    store = make_store(FakeDriver(fail=ne.ServiceUnavailable("connection refused")))
    with pytest.raises(StoreUnavailableError) as info:
        Reads(store).counts(None)
    assert "connection refused" in str(info.value)


def test_errors_outside_the_driver_pass_through() -> None:
    with pytest.raises(KeyError), map_neo4j_errors():
        raise KeyError("not ours to translate")


# -- Lucene query syntax ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        (["john"], '"john" OR john~1'),
        (["Tommy", "rex"], '"Tommy" OR tommy~1 OR "rex"'),
        (["New York"], '"New York"'),
        (['say "hi"'], r'"say \"hi\""'),
        ([r"C:\temp"], r'"C:\\temp"'),
        (["AND", "NOT", "OR"], '"AND" OR "NOT" OR "OR"'),
        (["a+b", "(x)", "*", "title:x", "x~2^3"], '"a+b" OR "(x)" OR "title:x" OR "x~2^3"'),
        (["  pad  ", "", "   ", "--"], '"pad"'),
        ([], ""),
    ],
)
def test_lucene_query_quotes_and_escapes_every_term(terms: list[str], expected: str) -> None:
    assert lucene_query(terms) == expected


def test_fuzzy_variants_are_plain_words_only() -> None:
    query = lucene_query(["Zoëlle", "ab12cd", "rock-n-roll", "C++"])
    assert query == '"Zoëlle" OR zoëlle~1 OR "ab12cd" OR ab12cd~1 OR "rock-n-roll" OR "C++"'
