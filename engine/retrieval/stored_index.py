"""A user's message index as stored with the data, so that a process's first search of that
user reads it instead of every message and counting each one's terms again.

What is stored is the index's postings and its columns of plain values, without the messages'
text (the store holds it once, on the messages; a search reads the text of the messages it
shows). It is derived data: `decode` gives None for anything it cannot read as this
`FORMAT`, and the episode leg checks what it gives against the user's message uids.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from typing import Any

import numpy as np

from engine.retrieval.derived import pack, unpack
from engine.retrieval.lexical import TERMS_VERSION, LexicalIndex, PostingsBlock

FORMAT = 1
_COLUMNS = (("times", "d"), ("undated", "b"), ("lengths", "q"), ("prev", "q"), ("next", "q"))
# a block's term starts, documents and counts: stored as narrow as they fit, read as these
_WIDE = (np.int64, np.int64, np.float32)
_NARROW = (np.uint8, np.uint16, np.uint32, np.uint64)


def encode(index: LexicalIndex) -> str:
    """`index` (sealed: nothing in `unsealed`) as one ASCII string."""
    assert not index.unsealed, "seal the index first"
    blocks = [*index.blocks, *([_block_of(index.postings)] if index.postings else [])]
    parts = [getattr(index, name).tobytes() for name, _ in _COLUMNS]
    described = []
    for block in blocks:
        arrays = [block.starts, block.docs, block.counts]
        kinds = [_smallest(a) for a in arrays]
        described.append([list(block.spans), len(block.docs), [k.str for k in kinds]])
        parts += [a.astype(k).tobytes() for a, k in zip(arrays, kinds, strict=True)]
    header = {
        "terms_v": TERMS_VERSION,
        "uids": index.uids,
        "session_ids": index.session_ids,
        "speakers": index.speakers,
        "roles": index.roles,
        "sources": index.sources,
        "blocks": described,
    }
    return pack(header, b"".join(parts))


def decode(data: str) -> LexicalIndex | None:
    """The index `encode` gave `data`; None when `data` is not one (another format, another
    `TERMS_VERSION`, damaged)."""
    unpacked = unpack(data)
    if unpacked is None:
        return None
    header, body = unpacked
    try:
        if header["terms_v"] != TERMS_VERSION:
            return None
        return _index(header, body)
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _index(header: dict[str, Any], body: memoryview) -> LexicalIndex | None:
    uids: list[str] = header["uids"]
    n, at = len(uids), 0
    index = LexicalIndex(
        uids=uids,
        session_ids=header["session_ids"],
        speakers=header["speakers"],
        roles=header["roles"],
        contents=[None] * n,
        sources=header["sources"],
        position=dict(zip(uids, range(n), strict=True)),
    )
    for name, code in _COLUMNS:
        column = array(code)
        column.frombytes(body[at : at + n * column.itemsize])
        at += n * column.itemsize
        setattr(index, name, column)
    for terms, pairs, kinds in header["blocks"]:
        arrays = []
        for kind, count in zip(kinds, (len(terms), pairs, pairs), strict=True):
            size = count * np.dtype(kind).itemsize
            arrays.append(np.frombuffer(body[at : at + size], dtype=kind))
            at += size
        starts, docs, tf = (a.astype(t) for a, t in zip(arrays, _WIDE, strict=True))
        ends = np.append(starts[1:], pairs)
        spans = dict(zip(terms, range(len(terms)), strict=True))
        index.blocks.append(PostingsBlock(spans, starts, ends, docs, tf))
    columns = (index.session_ids, index.speakers, index.roles, index.sources, index.times)
    if at != len(body) or any(len(c) != n for c in columns) or len(index.next) != n:
        return None
    index.total_length = sum(index.lengths)
    index.sessions = _sessions(index)
    return index


def _smallest(values: np.ndarray) -> np.dtype[Any]:
    """The narrowest unsigned integer type that holds `values` (counts and numbers)."""
    top = int(values.max()) if len(values) else 0
    return np.dtype(next(t for t in _NARROW if top <= np.iinfo(t).max))


def _block_of(postings: dict[str, list[tuple[int, int]]]) -> PostingsBlock:
    """The per-term lists of small writes as one block (each term's documents ascending)."""
    spans = {term: at for at, term in enumerate(postings)}
    sizes = np.fromiter((len(hits) for hits in postings.values()), dtype=np.int64)
    ends = np.cumsum(sizes)
    pairs = np.asarray([pair for hits in postings.values() for pair in hits], dtype=np.int64)
    return PostingsBlock(spans, ends - sizes, ends, pairs[:, 0], pairs[:, 1].astype(np.float32))


def _sessions(index: LexicalIndex) -> defaultdict[str | None, list[int]]:
    """Each session's documents in order, walked from its first along `next`."""
    sessions: defaultdict[str | None, list[int]] = defaultdict(list)
    for first in np.flatnonzero(np.frombuffer(index.prev, dtype=np.int64) < 0).tolist():
        order = sessions[index.session_ids[first]]
        doc = first
        while doc >= 0:
            order.append(doc)
            doc = index.next[doc]
    return sessions
