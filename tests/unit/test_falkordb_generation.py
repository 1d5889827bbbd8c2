"""The FalkorDB adapter's write generations over a fake client: every path that writes changes
a token after its query (the statements `engine/` runs with `read_only=False` included, found
in its source), reads change none, and a token is read in one round trip."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from engine.store.base import EntityRow, WriteBatch
from engine.store.falkordb import FalkorDBStore
from engine.store.generation import DERIVED

ENGINE = Path(__file__).resolve().parents[2] / "engine"
USERS, ALL = "graphmem:g:generation:users", "graphmem:g:generation:all"


class FakeResult:
    def __init__(self) -> None:
        self.result_set: list[list[Any]] = []


class FakeGraph:
    name = "g"

    def __init__(self, log: list[tuple[Any, ...]]) -> None:
        self.log = log

    def query(self, text: str, params: dict[str, Any], timeout: int | None = None) -> FakeResult:
        self.log.append(("query", text))
        return FakeResult()

    def ro_query(self, text: str, params: dict[str, Any], timeout: int | None = None) -> FakeResult:
        self.log.append(("ro_query", text))
        return FakeResult()


class FakePipeline:
    def __init__(self, redis: FakeRedis) -> None:
        self.redis, self.commands = redis, 0
        self.answers: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        def queued(*args: Any, **kwargs: Any) -> None:
            self.commands += 1
            self.answers.append(getattr(self.redis, name)(*args, **kwargs))

        return queued

    def execute(self) -> list[Any]:
        self.redis.log.append(("round trip", self.commands))
        return self.answers


class FakeRedis:
    """A dict of strings and hashes; logs each change and each pipeline."""

    def __init__(self, log: list[tuple[Any, ...]]) -> None:
        self.log = log
        self.data: dict[str, Any] = {}
        self.connection_pool = self

    def disconnect(self) -> None: ...

    def pipeline(self, transaction: bool = True) -> FakePipeline:
        return FakePipeline(self)

    def set(self, key: str, value: str, nx: bool = False) -> bool:
        if nx and key in self.data:
            return False
        if not nx:
            self.log.append(("change", key))
        self.data[key] = value
        return True

    def get(self, key: str) -> str | None:
        return self.data.get(key)

    def hset(self, key: str, field: str, value: str) -> int:
        self.log.append(("change", key, field))
        self.data.setdefault(key, {})[field] = value
        return 1

    def hsetnx(self, key: str, field: str, value: str) -> int:
        return int(self.data.setdefault(key, {}).setdefault(field, value) == value)

    def hget(self, key: str, field: str) -> str | None:
        return self.data.get(key, {}).get(field)


class FakeClient:
    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []
        self.connection = FakeRedis(self.log)

    def select_graph(self, name: str) -> FakeGraph:
        return FakeGraph(self.log)


@pytest.fixture
def client() -> FakeClient:
    return FakeClient()


@pytest.fixture
def adapter(client: FakeClient) -> FalkorDBStore:
    return FalkorDBStore(client, "g")  # type: ignore[arg-type]


def _changes(client: FakeClient) -> list[tuple[Any, ...]]:
    return [entry[1:] for entry in client.log if entry[0] == "change"]


def _changed_after_query(client: FakeClient) -> bool:
    kinds = [entry[0] for entry in client.log]
    return "query" in kinds and kinds[-1] == "change"


def _written_statements() -> list[str]:
    """Every statement `engine/` names in a call with `read_only=False`."""
    names: set[str] = set()
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            if not any(
                k.arg == "read_only" and isinstance(k.value, ast.Constant) and not k.value.value
                for k in node.keywords
            ):
                continue
            names |= {
                a.value for a in node.args if isinstance(a, ast.Constant) and type(a.value) is str
            }
    return sorted(names)


WRITTEN = _written_statements()


def test_the_engine_writes_through_named_statements_this_test_sees() -> None:
    assert {"delete_fact", "delete_entity", "set_relation_vectors"} <= set(WRITTEN)


@pytest.mark.parametrize("name", sorted(set(WRITTEN) - DERIVED))
def test_each_write_statement_changes_the_named_users_token_after_it(
    adapter: FalkorDBStore, client: FakeClient, name: str
) -> None:
    adapter.run(name, {"user_id": "u:1"}, read_only=False)
    assert _changes(client) == [(USERS, "u:1")]
    assert _changed_after_query(client)


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_storing_what_a_search_derives_changes_no_token(
    adapter: FalkorDBStore, client: FakeClient, name: str
) -> None:
    adapter.run(name, {"user_id": "u:1"}, read_only=False)
    assert _changes(client) == []


def test_a_write_naming_no_user_changes_every_users_token(
    adapter: FalkorDBStore, client: FakeClient
) -> None:
    before = adapter.generation("u1")
    adapter.run("merge_graphmem_key", {"name": "k", "secret": "s"}, read_only=False)
    adapter.reset()
    assert _changes(client) == [(ALL,), (ALL,)]
    assert adapter.generation("u1") != before


def test_batches_and_user_deletes_change_the_users_token_after_the_query(
    adapter: FalkorDBStore, client: FakeClient
) -> None:
    batch = WriteBatch(entities=[EntityRow(uid="e1", key="a", name="A", type=None, ts=1.0)])
    adapter.write("u1", batch)
    assert _changes(client) == [(USERS, "u1")] and _changed_after_query(client)
    client.log.clear()
    adapter.delete_user("u2")
    assert _changes(client) == [(USERS, "u2")] and _changed_after_query(client)
    client.log.clear()
    adapter.write("u1", WriteBatch())  # nothing to write: nothing changes
    assert client.log == []


def test_a_failed_write_changes_the_token_too(adapter: FalkorDBStore, client: FakeClient) -> None:
    graph: Any = adapter._graph

    def fail(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("lost midway")

    graph.query = fail
    with pytest.raises(RuntimeError):
        adapter.run("delete_fact", {"user_id": "u1", "uid": "f"}, read_only=False)
    assert _changes(client) == [(USERS, "u1")]


def test_reads_and_schema_statements_change_nothing(
    adapter: FalkorDBStore, client: FakeClient
) -> None:
    adapter.run("list_users", {})
    adapter.run("get_relation_vectors", {"user_id": "u1"})
    adapter.schema.drop_for_reopen()  # index drops and the store's own schema node
    assert _changes(client) == []
    adapter._schema_run("set_entity_user_keys", {"user_id": "u1", "user_key": "k"}, read_only=False)
    assert _changes(client) == [(USERS, "u1")]


def test_a_token_is_read_in_one_round_trip_and_kept(
    adapter: FalkorDBStore, client: FakeClient
) -> None:
    first = adapter.generation("u1")
    assert adapter.generation("u1") == first and adapter.generation("u2") != first
    assert [e for e in client.log if e[0] == "round trip"] == [("round trip", 4)] * 3
    every, own = first.split(":")
    assert (every, own) == (client.connection.data[ALL], client.connection.data[USERS]["u1"])
