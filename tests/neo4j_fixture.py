"""A Neo4j store for the conformance suite, or a visible skip when no server is configured.

Set `NEO4J_URI` (and `NEO4J_USER`, `NEO4J_PASSWORD`, `NEO4J_DATABASE` if not the defaults) to
run the Neo4j cases, e.g. against `docker compose -f docker/docker-compose.yml up -d`.
graphmem's nodes are deleted before each use: never point these variables at a database whose
graphmem data you want to keep.
"""

from __future__ import annotations

import os

import neo4j
import pytest

from engine.errors import StoreUnavailableError
from engine.store.neo4j import Neo4jStore, map_neo4j_errors

_CONNECT_TIMEOUT_S = 5.0


def neo4j_store_or_skip(dimension: int = 384) -> Neo4jStore:
    """An empty, set-up `Neo4jStore`; skips the test when no Neo4j server can be used."""
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        pytest.skip("NEO4J_URI is not set: the Neo4j cases need a server (see docker/README.md)")
    password = os.environ.get("NEO4J_PASSWORD")
    auth = (os.environ.get("NEO4J_USER", "neo4j"), password) if password else None
    driver = neo4j.GraphDatabase.driver(
        uri, auth=auth, connection_timeout=_CONNECT_TIMEOUT_S, max_transaction_retry_time=5.0
    )
    store = Neo4jStore(driver, os.environ.get("NEO4J_DATABASE", "neo4j"), owns_driver=True)
    try:
        with map_neo4j_errors():
            driver.verify_connectivity()
        store.reset()
        store.setup(dimension)
    except StoreUnavailableError as exc:  # a query the server rejects is a failure, not a skip
        store.close()
        pytest.skip(f"Neo4j at {uri} cannot be used: {exc}")
    return store
