"""`graphmem browse`: where Neo4j Browser is, and a ready query from `cypher/browser/` to paste.

Example:
    >>> hint = browse_hint("bolt://localhost:7687", "alice", "John")
    >>> hint.url
    'http://localhost:7474/browser/'
    >>> hint.script.splitlines()[2]
    ":param user_id => 'alice';"
    >>> hint.open_url.startswith("http://localhost:7474/browser/?cmd=edit&arg=MATCH")
    True
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from pydantic import BaseModel

from engine import cypher
from engine.normalize import check_user_id, clean_text
from engine.transfer.cypher_literal import inline_parameters, literal

DEFAULT_BROWSER_URL = "http://localhost:7474/browser/"
_SECURE_SCHEMES = frozenset({"bolt+s", "bolt+ssc", "neo4j+s", "neo4j+ssc", "https"})
_PARAM_LINE = re.compile(r"^:param (\w+) => .*;$", re.MULTILINE)
_MAX_NAME_CHARS = 512


class BrowseHint(BaseModel):
    """The Browser's address and the text to paste into its editor."""

    url: str
    query: str  # the file's name in cypher/browser/
    script: str  # its :param lines (with the values asked for) and the query
    statement: str  # the query alone, the values written in: one statement to run
    open_url: str  # the Browser with `statement` already in its editor


def browser_url(neo4j_uri: str | None) -> str:
    """Neo4j Browser on the host of `neo4j_uri` (bolt:// or neo4j://, port 7687): http on
    7474, or https on 7473 for the encrypted schemes. No URI: the local default."""
    if not neo4j_uri:
        return DEFAULT_BROWSER_URL
    parts = urlsplit(neo4j_uri)
    host = parts.hostname or "localhost"
    if ":" in host:  # IPv6
        host = f"[{host}]"
    if parts.scheme in ("http", "https"):
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}/browser/"
    if parts.scheme in _SECURE_SCHEMES:
        return f"https://{host}:7473/browser/"
    return f"http://{host}:7474/browser/"


def browse_hint(neo4j_uri: str | None, user_id: str, entity: str | None = None) -> BrowseHint:
    """The user's graph, or one entity's depth-2 neighbourhood, ready to paste.

    Raises:
        InvalidInputError: an empty user id or entity name.
    """
    params = {"user_id": check_user_id(user_id)}
    name = "user_graph"
    if entity is not None:
        params["name"] = clean_text(entity, "entity", _MAX_NAME_CHARS)
        name = "entity_neighbourhood"
    text = cypher.load(f"browser/{name}", "neo4j")

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        return f":param {key} => {literal(params[key])};" if key in params else match.group(0)

    script = _PARAM_LINE.sub(fill, text)
    statement = inline_parameters(_query_lines(text), params)
    url = browser_url(neo4j_uri)
    return BrowseHint(
        url=url,
        query=f"{name}.cypher",
        script=script,
        statement=statement,
        open_url=f"{url}?cmd=edit&arg={quote(statement, safe='')}",
    )


def _query_lines(text: str) -> str:
    """The statement of a Browser file: no comments, no :param lines, no closing semicolon."""
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith(("//", ":param"))]
    return "\n".join(lines).strip().removesuffix(";")
