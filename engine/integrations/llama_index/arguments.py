"""The arguments `GraphmemPropertyGraphStore` takes from LlamaIndex, checked before use.

LlamaIndex writes some of them into its Cypher text (property and filter keys, relation
names), so those must be plain names; the rest must have the shape LlamaIndex's types give
them, since a string where a list belongs is read letter by letter and finds nothing.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Mapping
from typing import Any

from llama_index.core.graph_stores.types import LabelledNode

from engine.errors import InvalidInputError
from engine.normalize import is_relation_type

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def check_key(key: object, what: str) -> str:
    """A property or filter key LlamaIndex writes into its Cypher text between backticks."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise InvalidInputError(f"{what} {key!r} is not a plain property name ({_KEY.pattern})")
    return key


def check_relation(name: object) -> str:
    """A relation name LlamaIndex writes into its Cypher text as a relationship type."""
    if not isinstance(name, str) or not is_relation_type(name):
        raise InvalidInputError(
            f"relation name {name!r} is not a relationship type of graphmem (UPPER_SNAKE_CASE)"
        )
    return name


def check_strings(values: object, what: str) -> list[str] | None:
    """Ids, entity or relation names: None, or a list (or tuple) of strings.

    Raises:
        InvalidInputError: anything else, e.g. one string (`ids="John"`), named.
    """
    if values is None:
        return None
    if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
        raise InvalidInputError(f"{what} must be a list of strings, got {reprlib.repr(values)}")
    return list(values)


def check_properties(properties: object) -> dict[str, Any] | None:
    """Properties to match: None or a mapping of plain keys (`check_key`).

    Raises:
        InvalidInputError: not a mapping, or a key that is not a plain name.
    """
    if properties is None:
        return None
    if not isinstance(properties, Mapping):
        raise InvalidInputError(
            f"properties must be a dict of property names to values, got {reprlib.repr(properties)}"
        )
    return {check_key(key, "property key"): value for key, value in properties.items()}


def check_nodes(nodes: object) -> list[LabelledNode]:
    """`get_rel_map`'s start nodes: a list of LlamaIndex nodes (as `get` returns them).

    Raises:
        InvalidInputError: anything else, e.g. names instead of nodes.
    """
    if not isinstance(nodes, list | tuple) or not all(isinstance(n, LabelledNode) for n in nodes):
        raise InvalidInputError(
            "graph_nodes must be a list of LlamaIndex nodes (EntityNode, as get() returns), "
            f"got {reprlib.repr(nodes)}"
        )
    return list(nodes)
