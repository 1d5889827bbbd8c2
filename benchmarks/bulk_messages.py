"""Messages written in bulk straight through `GraphStore.write`, for the benchmarks that need
a large user fast: stored as graphmem's own writes store them (with their index terms, or
without them as an older store holds them), with random unit vectors for embeddings
(embedding 150k texts takes hours on two cores; what is measured reads the texts)."""

from __future__ import annotations

import numpy as np

from engine.retrieval.lexical import TERMS_VERSION, stored_terms
from engine.store.base import EpisodeRow, GraphStore, WriteBatch

OLD_STORE_HELP = "write the messages without their index terms (a store from before they were)"


def message_row(
    uid: str, session_id: str, role: str, text: str, ts: float, *, old_store: bool
) -> EpisodeRow:
    """One message as graphmem writes it (`old_store`: without its index terms)."""
    terms = None if old_store else stored_terms(None, text)
    version = None if old_store else TERMS_VERSION
    return EpisodeRow(uid, session_id, role, text, ts, None, uid, terms=terms, terms_v=version)


def write_messages(
    store: GraphStore,
    user_id: str,
    rows: list[EpisodeRow],
    vectors: np.random.Generator,
    dimension: int,
) -> None:
    """Write `rows` for `user_id` in one batch, each with a random unit vector."""
    vecs = vectors.standard_normal((len(rows), dimension)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    embeddings = {row.uid: vec.tolist() for row, vec in zip(rows, vecs, strict=True)}
    store.write(user_id, WriteBatch(episodes=rows, episode_embeddings=embeddings))
