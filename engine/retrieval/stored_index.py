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
from collections.abc import Iterator
from typing import Any

import numpy as np

from engine.retrieval.derived import pack, unpack
from engine.retrieval.lexical import TERMS_VERSION, LexicalIndex, PostingsBlock

FORMAT = 2  # 1: stored whole, with each message's session neighbours
_COLUMNS = (("times", "d"), ("undated", "b"), ("lengths", "q"))
# a block's term starts, documents and counts: stored as narrow as they fit, read as these
_WIDE = (np.int64, np.int64, np.float32)
_NARROW = (np.uint8, np.uint16, np.uint32, np.uint64)


def encode(index: LexicalIndex, start: int = 0, end: int | None = None) -> str:
    """The documents [`start`, `end`) of `index` (sealed: nothing in `unsealed`) as one
    ASCII string: a part that `decode_into` appends to an index holding the `start` before."""
    end = len(index) if end is None else end
    return _encode(index, _ranged(index), start, end)


def parts(index: LexicalIndex, size: int, first: int) -> Iterator[tuple[int, int, str]]:
    """`index` encoded in parts of `size` documents, from the one holding document `first`:
    each part's number, end and data (its blocks' document ranges read once for all)."""
    ranged = _ranged(index)
    for start in range(first - first % size, len(index), size):
        end = min(len(index), start + size)
        yield start // size, end, _encode(index, ranged, start, end)


_Ranged = list[tuple[PostingsBlock, int, int]]  # a block, its first and last document


def _ranged(index: LexicalIndex) -> _Ranged:
    assert not index.unsealed, "seal the index first"
    blocks = [*index.blocks, *([_block_of(index.postings)] if index.postings else [])]
    return [(b, int(b.docs.min()), int(b.docs.max())) for b in blocks if len(b.docs)]


def _encode(index: LexicalIndex, ranged: _Ranged, start: int, end: int) -> str:
    parts = [getattr(index, name)[start:end].tobytes() for name, _ in _COLUMNS]
    described = []
    for block, low, high in ranged:
        if high < start or low >= end:
            continue
        kept = block if low >= start and high < end else _within(block, start, end)
        arrays = [kept.starts, kept.docs, kept.counts]
        kinds = [_smallest(a) for a in arrays]
        described.append([list(kept.spans), len(kept.docs), [k.str for k in kinds]])
        parts += [a.astype(k).tobytes() for a, k in zip(arrays, kinds, strict=True)]
    header = {
        "terms_v": TERMS_VERSION,
        "first": start,
        "uids": index.uids[start:end],
        "session_ids": index.session_ids[start:end],
        "speakers": index.speakers[start:end],
        "roles": index.roles[start:end],
        "sources": index.sources[start:end],
        "blocks": described,
    }
    return pack(header, b"".join(parts))


def snapshot(index: LexicalIndex) -> LexicalIndex:
    """What `encode` reads of `index` as it is now, for encoding in another thread while
    searches add to it (sealed: nothing in `unsealed`)."""
    assert not index.unsealed, "seal the index first"
    return LexicalIndex(
        uids=index.uids[:],
        session_ids=index.session_ids[:],
        speakers=index.speakers[:],
        roles=index.roles[:],
        sources=index.sources[:],
        times=array("d", index.times),
        undated=array("b", index.undated),
        lengths=array("q", index.lengths),
        blocks=index.blocks[:],
        postings=defaultdict(list, {term: hits[:] for term, hits in index.postings.items()}),
    )


def decode(data: str) -> LexicalIndex | None:
    """The index `encode` gave `data` (all of an index's documents); None when `data` is not
    one (another format, another `TERMS_VERSION`, damaged, a later part)."""
    index = LexicalIndex()
    if not decode_into(index, data):
        return None
    finish(index)
    return index


def decode_into(index: LexicalIndex, data: str) -> bool:
    """Append the part `data` holds to `index` (its first document numbered `len(index)`);
    False, and `index` as it was, when `data` is not such a part. Call `finish` after the
    last part."""
    unpacked = unpack(data)
    if unpacked is None:
        return False
    header, body = unpacked
    try:
        if header["terms_v"] != TERMS_VERSION or header.get("first", 0) != len(index):
            return False
        return _append(index, header, body)
    except (ValueError, KeyError, TypeError, IndexError):
        return False


def finish(index: LexicalIndex) -> None:
    """After its parts are appended: `index`'s sessions, each message's neighbours in its
    session, and its total length."""
    index.total_length = sum(index.lengths)
    index.sessions, index.prev, index.next = _sessions(index)


def _append(index: LexicalIndex, header: dict[str, Any], body: memoryview) -> bool:
    uids: list[str] = header["uids"]
    first, n, at = len(index), len(uids), 0
    lists = [header[k] for k in ("session_ids", "speakers", "roles", "sources")]
    if any(len(c) != n for c in lists) or any(u in index.position for u in uids):
        return False
    columns = {}
    for name, code in _COLUMNS:
        column = array(code)
        column.frombytes(body[at : at + n * column.itemsize])
        at += n * column.itemsize
        columns[name] = column
    blocks = []
    for terms, pairs, kinds in header["blocks"]:
        arrays = []
        for kind, count in zip(kinds, (len(terms), pairs, pairs), strict=True):
            size = count * np.dtype(kind).itemsize
            arrays.append(np.frombuffer(body[at : at + size], dtype=kind))
            at += size
        starts, docs, tf = (a.astype(t) for a, t in zip(arrays, _WIDE, strict=True))
        if len(docs) and (int(docs.min()) < first or int(docs.max()) >= first + n):
            return False
        ends = np.append(starts[1:], pairs)
        spans = dict(zip(terms, range(len(terms)), strict=True))
        blocks.append(PostingsBlock(spans, starts, ends, docs, tf))
    if at != len(body) or any(len(c) != n for c in columns.values()):
        return False
    targets: tuple[list[Any], ...] = (index.session_ids, index.speakers, index.roles, index.sources)
    for target, values in zip(targets, lists, strict=True):
        target.extend(values)
    index.uids.extend(uids)
    index.contents.extend([None] * n)
    index.position.update(zip(uids, range(first, first + n), strict=True))
    for name, column in columns.items():
        getattr(index, name).extend(column)
    index.blocks.extend(blocks)
    return True


def _smallest(values: np.ndarray) -> np.dtype[Any]:
    """The narrowest unsigned integer type that holds `values` (counts and numbers)."""
    top = int(values.max()) if len(values) else 0
    return np.dtype(next(t for t in _NARROW if top <= np.iinfo(t).max))


def _within(block: PostingsBlock, start: int, end: int) -> PostingsBlock:
    """`block`'s postings of the documents [`start`, `end`) (some of them)."""
    keep = (block.docs >= start) & (block.docs < end)
    term_of = np.repeat(np.arange(len(block.starts)), block.ends - block.starts)[keep]
    kept, starts = np.unique(term_of, return_index=True)
    names = list(block.spans)
    spans = {names[t]: at for at, t in enumerate(kept.tolist())}
    ends = np.append(starts[1:], len(term_of))
    return PostingsBlock(spans, starts, ends, block.docs[keep], block.counts[keep])


def _block_of(postings: dict[str, list[tuple[int, int]]]) -> PostingsBlock:
    """The per-term lists of small writes as one block (each term's documents ascending)."""
    spans = {term: at for at, term in enumerate(postings)}
    sizes = np.fromiter((len(hits) for hits in postings.values()), dtype=np.int64)
    ends = np.cumsum(sizes)
    pairs = np.asarray([pair for hits in postings.values() for pair in hits], dtype=np.int64)
    return PostingsBlock(spans, ends - sizes, ends, pairs[:, 0], pairs[:, 1].astype(np.float32))


def _sessions(
    index: LexicalIndex,
) -> tuple[defaultdict[str | None, list[int]], array[int], array[int]]:
    """Each session's documents in order (by time, then uid: `LexicalIndex._order_key`), and
    each document's neighbours in its session (-1 at a session's edge). Sorted by numpy on
    numbers, the uids compared only among messages of a session written at the same time:
    no step holds the interpreter long (a 200k-message index as one array of uids: 170 ms)."""
    codes: dict[str | None, int] = {}
    session = np.fromiter(
        (codes.setdefault(s, len(codes)) for s in index.session_ids), np.int64, len(index)
    )
    times = np.frombuffer(index.times, dtype=np.float64)
    order = np.lexsort((np.arange(len(index)), times, session))
    same = (np.diff(session[order]) == 0) & (np.diff(times[order]) == 0)
    for start, end in _runs(same):
        order[start:end] = sorted(order[start:end].tolist(), key=index.uids.__getitem__)
    edges = np.flatnonzero(np.diff(session[order])) + 1
    prev, nxt = np.full(len(index), -1, np.int64), np.full(len(index), -1, np.int64)
    prev[order[1:]], nxt[order[:-1]] = order[:-1], order[1:]
    prev[order[edges]], nxt[order[edges - 1]] = -1, -1
    sessions: defaultdict[str | None, list[int]] = defaultdict(list)
    names = list(codes)
    for run in np.split(order, edges) if len(order) else []:
        sessions[names[session[run[0]]]] = run.tolist()
    return sessions, array("q", prev.tobytes()), array("q", nxt.tobytes())


def _runs(same: np.ndarray) -> list[tuple[int, int]]:
    """The [start, end) runs of sorted positions where `same[i]` joins i and i + 1."""
    change = np.diff(np.concatenate(([0], same.astype(np.int8), [0])))
    return list(
        zip(
            np.flatnonzero(change == 1).tolist(),
            (np.flatnonzero(change == -1) + 1).tolist(),
            strict=True,
        )
    )
