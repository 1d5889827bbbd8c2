"""The one loader of Cypher text. Every statement graphmem sends lives in `cypher/`.

A name resolves to `cypher/<dialect>/<name>.cypher` when that variant exists, else to the
shared `cypher/<name>.cypher`. The only dynamic part a statement may have is a relationship
type (or several, `A|B`) or a node label, written as the placeholder `__REL_TYPE__` or
`__LABEL__` and filled only after validation; a statement read along several groups of types
at once repeats its one `{ }` block per group (`with_rel_type_groups`).
"""

from __future__ import annotations

import functools
import re
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, Literal

from engine.errors import InvalidInputError
from engine.normalize import is_relation_type, is_type_label

Dialect = Literal["falkordb", "neo4j"]
REL_TYPE_PLACEHOLDER = "__REL_TYPE__"
LABEL_PLACEHOLDER = "__LABEL__"


def _root() -> Traversable:
    try:  # installed from a wheel: cypher/ ships as engine._cypher
        return resources.files("engine._cypher")
    except ModuleNotFoundError:  # a source checkout or an editable install
        return resources.files("engine").joinpath("..", "cypher")


@cache
def load(name: str, dialect: Dialect) -> str:
    """Return the text of the named statement for `dialect`.

    Raises:
        KeyError: no such statement.
    """
    root = _root()
    for candidate in (root / dialect / f"{name}.cypher", root / f"{name}.cypher"):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8").strip()
    raise KeyError(f"no Cypher statement named {name!r} for {dialect}")


def with_rel_type(text: str, rel_type: str) -> str:
    """Fill the relationship-type placeholder with a validated type."""
    return with_rel_types(text, [rel_type])


def with_rel_types(text: str, rel_types: list[str]) -> str:
    """Fill the relationship-type placeholder with validated types, each between backticks
    (a type may be in any script: `住在`): `A`|`B` matches either."""
    if not rel_types:
        raise InvalidInputError("at least one relationship type is needed")
    for rel_type in rel_types:
        if not is_relation_type(rel_type):
            raise InvalidInputError(f"relationship type {rel_type!r} is not UPPER_SNAKE_CASE")
    return text.replace(REL_TYPE_PLACEHOLDER, "|".join(f"`{t}`" for t in rel_types))


def with_rel_type_groups(text: str, groups: list[list[str]]) -> str:
    """Repeat the statement's CALL body once per group of validated types, joined by UNION
    ALL: each group's read keeps its own LIMIT."""
    if not groups:
        raise InvalidInputError("at least one group of relationship types is needed")
    text = without_comments(text)
    call = _CALL_BODY.search(text)
    if call is None:
        raise ValueError("the statement has no CALL body to repeat")
    start, end = call.end(), _closing_brace(text, call.end())
    body = text[start:end]
    union = "UNION ALL".join(with_rel_types(body, group) for group in groups)
    return text[:start] + union + text[end:]


_CALL_BODY = re.compile(r"\bCALL\s*(\([^)]*\))?\s*\{")


def _closing_brace(text: str, start: int) -> int:
    """The index of the `}` closing the block that starts at `start` (just past its `{`)."""
    depth = 1
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise ValueError("unbalanced braces in the statement")


def without_comments(text: str) -> str:
    """The statement without its comment lines: FalkorDB's parser crashes on a comment inside
    `CALL { }`, and a statement composed or repeated puts them there."""
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//"))


def with_label(text: str, label: str) -> str:
    """Fill the label placeholder with a validated entity type label."""
    if not is_type_label(label):
        raise InvalidInputError(f"label {label!r} is not a PascalCase entity type label")
    return text.replace(LABEL_PLACEHOLDER, f"`{label}`")


def fill(text: str, value: str) -> str:
    """Fill the statement's one placeholder (relationship type or label) with `value`."""
    if REL_TYPE_PLACEHOLDER in text:
        return with_rel_type(text, value)
    if LABEL_PLACEHOLDER in text:
        return with_label(text, value)
    raise ValueError("the statement has no placeholder to fill")


def schema_statements(dialect: Dialect) -> list[str]:
    """The schema DDL for `dialect`, in file-name order (`schema_*.cypher`)."""
    return [load(name, dialect) for name in schema_names(dialect)]


def schema_names(dialect: Dialect) -> list[str]:
    """The names of the schema statements for `dialect`, in order."""
    folder = _root() / dialect
    names = sorted(p.name for p in folder.iterdir() if p.name.startswith("schema_"))
    return [n.removesuffix(".cypher") for n in names]


_PARAM = re.compile(r"\$(\w+)")
_RESULT = re.compile(r"\bAS result\s*$")
SHARED_PARAMS = frozenset({"user_id", "now"})


def _renamed(match: re.Match[str], index: int) -> str:
    name = match.group(1)
    return match.group(0) if name in SHARED_PARAMS else f"${name}_{index}"


def compose(statements: list[tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    """Chain write statements into ONE query, so a batch applies atomically on every database.

    Each statement must end in `RETURN <aggregate> AS result` (exactly one row). It runs as a
    `CALL { ... }` subquery; its own parameters are renamed `<name>_<i>` so they cannot clash,
    and its result comes back in column `result_<i>`. Comment lines are dropped
    (`without_comments`).
    """
    parts: list[str] = []
    params: dict[str, Any] = {}
    for i, (text, own) in enumerate(statements):
        if not _RESULT.search(text):
            raise ValueError(f"statement {i} must end with 'AS result' to be composed")
        text = without_comments(text)
        body = _PARAM.sub(functools.partial(_renamed, index=i), text)
        parts.append("CALL {\n" + _RESULT.sub(f"AS result_{i}", body) + "\n}")
        for name, value in own.items():
            params[name if name in SHARED_PARAMS else f"{name}_{i}"] = value
    columns = ", ".join(f"result_{i}" for i in range(len(statements)))
    return "\n".join(parts) + f"\nRETURN {columns}", params
