"""The Cypher literal encoder behind the Cypher export: every value reads back unchanged and
no value can leave its literal."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

import pytest
from falkordb import FalkorDB
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.store.falkordb_server import EmbeddedServer
from engine.transfer.cypher_literal import literal


@pytest.fixture(scope="module")
def falkordb(falkordb_server: EmbeddedServer) -> Iterator[FalkorDB]:
    client = FalkorDB(unix_socket_path=str(falkordb_server.socket_path))
    yield client
    client.connection.close()


def _plain(ch: str) -> bool:
    """Characters FalkorDB reads unescaped: it does not decode \\uXXXX, so the characters the
    encoder writes that way (controls, line separators, bidi controls) are left out here."""
    escaped = unicodedata.category(ch) in {"Cc", "Cs", "Zl", "Zp"} or "\u202a" <= ch <= "\u2069"
    return not escaped or ch in "\n\r\t\b\f"


@settings(max_examples=60, deadline=None)
@given(value=st.text(st.characters(exclude_characters="\x00").filter(_plain), max_size=40))
def test_falkordb_reads_the_literal_back(falkordb: FalkorDB, value: str) -> None:
    graph = falkordb.select_graph("literals")
    row = graph.query(f"RETURN {literal([value, 1.5, -3])} AS v").result_set[0]
    assert row[0] == [value, 1.5, -3]


@settings(max_examples=60, deadline=None)
@given(  # a lone surrogate cannot reach the database at all: UTF-8 cannot carry it
    value=st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=40)
)
def test_falkordb_reads_the_raw_literal_back(falkordb: FalkorDB, value: str) -> None:
    graph = falkordb.select_graph("literals")
    text = literal({"v": value}, unicode_escapes=False)
    assert graph.query(f"RETURN {text} AS m").result_set[0][0] == {"v": value}
