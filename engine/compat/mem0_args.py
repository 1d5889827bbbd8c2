"""The arguments of Mem0's calls that graphmem reads its own way: how many results (`limit`,
or `top_k`, Mem0's newer name for it), `search`'s `threshold`, `rerank`, `explain` and
`reference_date`, and those of `add` and `update` graphmem refuses (`infer=False`, `prompt`,
`memory_type`, `update`'s `metadata`, `get_all`'s `page` and `page_size`), each with what to
do instead.

Mem0 v1 searches with `rerank=True` by default and reranks only when a reranker is
configured; graphmem has none to run (its ranking is the fusion of graph expansion, fact and
message vectors, and the `reranker` config key is ignored), so `rerank` is accepted and changes
nothing. `explain=True` asks for Mem0's `score_details` and a `reference_date` for Mem0's
platform-only dating: graphmem cannot give either, so both are refused, never ignored.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.errors import InvalidInputError
from engine.normalize import check_count

DEFAULT_LIMIT = 100  # Mem0 v1's, for search and get_all
_NO_EXPLAIN = (
    "explain=True is not supported: graphmem's results carry no Mem0 score_details; "
    "engine.Memory.search(..., explain=True) explains a hit in graphmem's terms "
    "(the facade's `graph` is that Memory)"
)
_NO_REFERENCE_DATE = (
    "reference_date is not supported (Mem0's open-source search refuses it too): filter by "
    "time with engine.Memory.search(..., since=, until=) on the facade's `graph`"
)


def count_of(limit: object, top_k: object) -> int:
    """How many results a call asks for: `limit`, or `top_k`, or 100 when neither is given.

    Raises:
        InvalidInputError: both given with different values; not an integer of at least 1.
    """
    if limit is not None and top_k is not None and limit != top_k:
        raise InvalidInputError(
            f"limit={limit!r} and top_k={top_k!r}: give one (top_k is Mem0's newer name for limit)"
        )
    if top_k is not None:
        return check_count(top_k, "top_k", 1)
    return check_count(DEFAULT_LIMIT if limit is None else limit, "limit", 1)


_NO_PAGES = (
    "get_all(page=, page_size=) is not supported: they are Mem0 Platform's pagination "
    "(MemoryClient; Mem0's open-source Memory has none), and the facade answers one list, "
    "oldest first: ask for limit=page*page_size and keep results[(page-1)*page_size:]"
)


def check_no_pages(page: object, page_size: object) -> None:
    """`get_all`'s `page` and `page_size` (Mem0 Platform's): refused unless None, as honouring
    neither would hand page 1 to a caller asking for page 2.

    Raises:
        InvalidInputError: either given.
    """
    if page is not None or page_size is not None:
        raise InvalidInputError(_NO_PAGES)


def check_threshold(value: object) -> float | None:
    """`search`'s `threshold`: None, or a score from 0 to 1.

    Raises:
        InvalidInputError: anything else.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInputError(f"threshold must be a number from 0 to 1, got {value!r}")
    return float(value)


def check_search_flags(rerank: object, explain: object, reference_date: object) -> None:
    """`search`'s `rerank` (accepted, no effect), `explain` and `reference_date` (refused
    unless False and None: see the module docstring).

    Raises:
        InvalidInputError: a flag that is not a bool; `explain=True`; a `reference_date`.
    """
    for name, value in (("rerank", rerank), ("explain", explain)):
        if not isinstance(value, bool):
            raise InvalidInputError(f"{name} must be True or False, got {value!r}")
    if explain:
        raise InvalidInputError(_NO_EXPLAIN)
    if reference_date is not None:
        raise InvalidInputError(_NO_REFERENCE_DATE)


_NO_INFER = (
    "infer=False is not supported: graphmem keeps every message as an episode and always "
    "extracts facts from it"
)
_WHY_NOT = {
    "prompt": (
        "prompt: graphmem's extraction prompt is fixed (one tool call that sees the known "
        "facts), so the messages are not added the way the prompt asks; leave it out"
    ),
    "memory_type": (
        "memory_type: Mem0's procedural memory (an LLM's summary of an agent's run) has no "
        "graphmem counterpart; add the summary as a message (agent_id=...) instead"
    ),
}
_NO_UPDATE_METADATA = (
    "update(metadata=...) is not supported: a memory's metadata is kept with the messages it "
    "came from (add(..., metadata=...)), not on the memory; update the text alone"
)


def check_add_args(infer: object, unsupported: Mapping[str, object]) -> None:
    """`add`'s arguments graphmem cannot honour, refused before anything is written.

    Raises:
        InvalidInputError: `infer=False`; an argument of Mem0's `add` graphmem lacks (named,
            with what to do), or one Mem0 does not have either.
    """
    if not infer:
        raise InvalidInputError(_NO_INFER)
    known = [_WHY_NOT[name] for name in sorted(unsupported) if name in _WHY_NOT]
    others = sorted(name for name in unsupported if name not in _WHY_NOT)
    if others:
        known.append(f"unsupported arguments: {', '.join(others)}")
    if known:
        raise InvalidInputError("; ".join(known))


def check_update_metadata(metadata: object) -> None:
    """`update`'s `metadata` (Mem0's): refused unless None.

    Raises:
        InvalidInputError: any metadata.
    """
    if metadata is not None:
        raise InvalidInputError(_NO_UPDATE_METADATA)
