"""Which embedding model wrote a store's vectors, checked before a `Memory` adds its own.

Vectors of two models are not comparable, even of one size: a store written with one model
and searched with another ranks by noise, and a write with the other mixes them for good. The
first `Memory` to embed records its model's vector of a fixed sentence in the store (a
`:GraphmemKey` node); one whose model gives another vector for it is refused, unless the
store holds no memory (then it records its own). The same model on another runtime or device
gives nearly the same vector, so only a change of model is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from engine.embedding import Embedder, as_param
from engine.errors import ConfigError, StoreError
from engine.store.base import GraphStore

PROBE = "graphmem records this sentence's vector to know the model that wrote the store"
KEY_NAME = "embedding_model"
SAME_MODEL = 0.9  # the cosine of the probe's two vectors at least; two models give ~0-0.5


def check_model(store: GraphStore, embedder: Embedder, holds_memory: Callable[[], bool]) -> None:
    """Record `embedder`'s model in `store`, or check it is the one recorded.

    Raises:
        ConfigError: the store's vectors come from another model, and it holds memory.
        StoreError: the store's record is damaged.
    """
    probe = as_param(embedder.encode_one(PROBE))
    params: dict[str, Any] = {"name": KEY_NAME, "probe": probe, "model": embedder.model_name}
    recorded, model = _record(store, "merge_embedding_probe", params)
    likeness = _cosine(probe, recorded)
    if likeness >= SAME_MODEL:
        return
    if holds_memory():
        raise ConfigError(
            f"this store's vectors were made by the embedding model {model!r} "
            f"({len(recorded)} values), and {embedder.model_name!r} ({len(probe)} values) is "
            f"another (cosine {likeness:.2f} between their vectors of one sentence): its "
            "searches would compare the two models' vectors. Open the store with the model "
            "that wrote it (setting `embedding_model`), or use another data dir for this model"
        )
    _record(store, "set_embedding_probe", params)


def _record(store: GraphStore, name: str, params: dict[str, Any]) -> tuple[list[float], str]:
    rows = store.run(name, params, read_only=False)
    probe, model = rows[0] if rows else (None, None)
    if not isinstance(probe, list) or not probe:
        raise StoreError(f"the store's {KEY_NAME!r} record is missing or damaged")
    return [float(x) for x in probe], str(model)


def _cosine(a: list[float], b: list[float]) -> float:
    if len(a) != len(b):
        return 0.0
    x, y = np.asarray(a), np.asarray(b)
    norms = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norms if norms else 0.0
