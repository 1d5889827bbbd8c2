"""Embedding runtimes: OpenVINO agrees with PyTorch, exports once, says why it cannot run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.embedding import Embedder
from engine.embedding.openvino_encoder import OpenVINOEncoder, exportable, exported_model
from engine.embedding.runtime import TorchEncoder, load_encoder, resolve_model_path
from engine.errors import ConfigError

SENTENCES = [
    "Kismet directed by William Dieterle",
    "Kismet starred actors Edward Arnold",
    "The Man Who Knew Too Much release year 1956",
    "Alice friend of John",
    "who directed the films that Edward Arnold acted in?",
    "Caroline went to an LGBTQ support group yesterday",
    "a camping trip with the kids in the mountains last summer, and then a long drive home",
    "Sweden",
]
MODEL_DIR = Path(resolve_model_path("all-MiniLM-L6-v2"))


def test_auto_runs_the_packaged_model_on_openvino(embedder: Embedder) -> None:
    assert isinstance(embedder.model, OpenVINOEncoder)
    (vector,) = embedder.model.encode(["where was Ann born"], 1)
    assert vector.shape == (embedder.model.dimension,)
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-3)


def test_openvino_vectors_agree_with_pytorch(embedder: Embedder) -> None:
    torch_model = Embedder(runtime="torch", cache_size=0)
    assert isinstance(torch_model.model, TorchEncoder)
    fast, reference = embedder.encode(SENTENCES), torch_model.encode(SENTENCES)
    cosines = (fast * reference).sum(axis=1)
    assert cosines.min() > 0.999
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-4)


def test_a_few_words_get_the_vectors_they_get_in_a_large_batch(embedder: Embedder) -> None:
    """Up to eight short texts run on a model compiled for their padded shape."""
    encoder = embedder.model
    assert isinstance(encoder, OpenVINOEncoder)
    words = ["directed", "Sweden", "Grégoire", "teammates", "x", "LGBTQ", "1956", "support"]
    batched = encoder.encode([*words, *SENTENCES], batch_size=64)[: len(words)]
    for n in (2, 3, 5, 8):
        few = encoder.encode(words[:n], batch_size=64)
        assert few.shape == (n, 384)
        assert (few * batched[:n]).sum(axis=1).min() > 0.9999
    assert {(2, 8), (4, 8), (8, 8)} <= set(encoder._fixed)


def test_a_shape_compiling_elsewhere_does_not_hold_up_an_encode(embedder: Embedder) -> None:
    """While the background warm-up compiles a shape, a text needing another one not compiled
    yet runs on the model compiled for any shape, and its shape is left for later."""
    encoder = embedder.model
    assert isinstance(encoder, OpenVINOEncoder)
    text = " ".join(SENTENCES[:4])  # 30 tokens: padded to 32, a length not warmed up
    shape = (1, 32)
    encoder._fixed.pop(shape, None)
    with encoder._compiling:
        waiting = encoder.encode([text], batch_size=64)
    assert shape not in encoder._fixed
    alone = encoder.encode([text], batch_size=64)
    assert shape in encoder._fixed
    assert (waiting * alone).sum() > 0.9999


def test_one_text_alone_gets_the_vector_it_gets_in_a_batch(embedder: Embedder) -> None:
    """A single text runs on a model compiled for its padded length; a text longer than the
    longest such length (the last sentence, repeated) on the shared model."""
    encoder = embedder.model
    assert isinstance(encoder, OpenVINOEncoder)
    texts = [*SENTENCES, " ".join([SENTENCES[-2]] * 5)]
    batched = encoder.encode(texts, batch_size=64)
    alone = np.vstack([encoder.encode([text], batch_size=64) for text in texts])
    assert alone.shape == batched.shape
    assert (alone * batched).sum(axis=1).min() > 0.9999
    assert np.allclose(np.linalg.norm(alone, axis=1), 1.0, atol=1e-4)


def test_loading_in_the_background_compiles_a_querys_usual_lengths() -> None:
    """The first search then finds its padded length compiled (~1 s on a fresh install)."""
    fresh = Embedder(cache_size=0)
    fresh.load_in_background()
    assert fresh._loader is not None
    fresh._loader.join(timeout=300)
    encoder = fresh.model
    assert isinstance(encoder, OpenVINOEncoder)
    assert {(1, 8), (1, 16), (1, 24), (2, 8), (4, 8), (8, 8)} <= set(encoder._fixed)
    fresh.close()


def test_the_export_is_made_once_and_reused(tmp_path: Path) -> None:
    first = exported_model(MODEL_DIR, tmp_path)
    made = first.stat().st_mtime_ns
    again = exported_model(MODEL_DIR, tmp_path)
    assert again == first and again.stat().st_mtime_ns == made
    assert first.is_relative_to(tmp_path) and (first.parent / "model.bin").is_file()
    encoder = OpenVINOEncoder(MODEL_DIR, tmp_path)
    assert encoder.encode(["Sweden"], 4).shape == (1, 384)


def test_a_model_openvino_cannot_run_falls_back_or_is_refused(tmp_path: Path) -> None:
    (tmp_path / "modules.json").write_text(json.dumps([{"type": "custom.Module", "path": ""}]))
    assert not exportable(tmp_path)
    with pytest.raises(ConfigError) as refused:
        load_encoder(str(tmp_path), device="cpu", threads=1, runtime="openvino", cache_dir=None)
    assert "not a local mean-pooled" in str(refused.value)
    with pytest.raises(ConfigError) as unknown:
        load_encoder("all-MiniLM-L6-v2", device="cpu", threads=1, runtime="onnx", cache_dir=None)  # type: ignore[arg-type]
    assert "embedding runtime must be one of" in str(unknown.value)


def test_openvino_reads_unknown_tokens_like_pytorch(embedder: Embedder) -> None:
    torch_model = Embedder(runtime="torch", cache_size=0)
    for text in ("张伟", "Zhang Wei", "Ünïcödé café"):
        assert embedder.reads(text) == torch_model.reads(text)


def test_a_searchs_short_texts_run_on_their_own_thread_count() -> None:
    """`short_threads` sets the threads of the models compiled per shape (a search's passes),
    `threads` those of the model for any shape (a batch's passes)."""
    embedder = Embedder(cache_size=0, threads=1, short_threads=2)
    encoder = embedder.model
    assert isinstance(encoder, OpenVINOEncoder)
    embedder.encode(["who founded the Jolly Roger Society"])
    (request,) = encoder._fixed.values()
    assert request.get_compiled_model().get_property("INFERENCE_NUM_THREADS") == 2
    assert encoder._compiled.get_property("INFERENCE_NUM_THREADS") == 1
