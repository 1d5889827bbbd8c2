"""The embedder with the real model: kept vectors, passes shared by threads, errors per caller."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from engine.embedding.embedder import Embedder, length_groups
from engine.errors import ConfigError

TEXTS = [
    "Caroline went to an LGBTQ support group yesterday",
    "Melanie paints landscapes",
    "pottery class",
    "Sweden",
    "USER mentioned adoption",
    "a camping trip with the kids in the mountains last summer",
    "Oscar",
    "the user's name is Caroline",
]


class PassSpy:
    """Wraps the embedder's model pass (still the real model) to count passes and texts."""

    def __init__(self, embedder: Embedder, poison: str | None = None) -> None:
        self.passes: list[list[str]] = []
        self.poison = poison
        self._real = embedder._passes._encode

    def __call__(self, texts: list[str]) -> Any:
        self.passes.append(list(texts))
        if self.poison in texts:
            raise ValueError(f"cannot encode {self.poison!r}")
        return self._real(texts)


@pytest.fixture
def spied(embedder: Embedder) -> Iterator[tuple[Embedder, PassSpy]]:
    """A fresh embedder (empty cache) sharing the session's loaded model, with a spy."""
    fresh = Embedder(cache_size=100)
    fresh.__dict__["model"] = embedder.model
    spy = PassSpy(fresh)
    fresh._passes._encode = spy
    yield fresh, spy


def test_vectors_are_unit_length_and_match_one_by_one(embedder: Embedder) -> None:
    together = Embedder(cache_size=0)
    together.__dict__["model"] = embedder.model
    batch = together.encode(TEXTS)
    alone = np.stack([together.encode([t])[0] for t in TEXTS])
    assert batch.shape == (len(TEXTS), embedder.dimension)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert np.allclose(batch, alone, atol=1e-5)


def test_a_kept_vector_is_not_encoded_again(spied: tuple[Embedder, PassSpy]) -> None:
    embedder, spy = spied
    first = embedder.encode(["Melanie paints landscapes", "Sweden"])
    again = embedder.encode(["Sweden", "Oscar", "Melanie paints landscapes"])
    assert spy.passes == [["Melanie paints landscapes", "Sweden"], ["Oscar"]]
    assert np.array_equal(again[0], first[1])
    assert np.array_equal(again[2], first[0])


def test_long_texts_are_not_kept(spied: tuple[Embedder, PassSpy]) -> None:
    embedder, spy = spied
    long_text = "words " * 100
    embedder.encode([long_text])
    embedder.encode([long_text])
    assert len(spy.passes) == 2


def _hold_model_while(embedder: Embedder, calls: list[list[str]]) -> list[Any]:
    """Run `calls` in threads while the model is busy, then free it; results (or errors)."""
    results: list[Any] = [None] * len(calls)

    def call(index: int) -> None:
        try:
            results[index] = embedder.encode(calls[index])
        except ValueError as exc:
            results[index] = exc

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(calls))]
    with embedder._passes._model:
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(embedder._passes._queue) < len(calls) and time.monotonic() < deadline:
            time.sleep(0.01)
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_waiting_callers_share_one_pass_and_get_their_own_rows(
    spied: tuple[Embedder, PassSpy], embedder: Embedder
) -> None:
    fresh, spy = spied
    calls = [[TEXTS[i], TEXTS[(i + 3) % len(TEXTS)]] for i in range(len(TEXTS))]
    results = _hold_model_while(fresh, calls)
    assert len(spy.passes) == 1
    assert sorted(spy.passes[0]) == sorted(TEXTS)  # each text once
    for texts, vectors in zip(calls, results, strict=True):
        assert np.allclose(vectors, embedder.encode(texts), atol=1e-5)


def test_a_bad_text_fails_only_its_caller(spied: tuple[Embedder, PassSpy]) -> None:
    fresh, spy = spied
    spy.poison = "Oscar"
    results = _hold_model_while(fresh, [["Sweden"], ["Oscar"], ["pottery class"]])
    assert isinstance(results[1], ValueError)
    assert results[0].shape == (1, fresh.dimension)
    assert results[2].shape == (1, fresh.dimension)


def test_reads_tells_unknown_tokens_and_keeps_the_answer(embedder: Embedder) -> None:
    fresh = Embedder(cache_size=100)
    fresh.__dict__["model"] = embedder.model
    assert fresh.reads("Caroline")
    assert not fresh.reads("张伟")  # [UNK] [UNK]
    assert fresh._readable.get(["0.25\x1f张伟"]) == {"0.25\x1f张伟": False}
    assert not fresh.reads("张伟")


def test_texts_of_unlike_length_go_to_separate_forward_passes() -> None:
    texts = ["Sweden", "x" * 400, "Oscar", "pottery class", "y" * 380, "z" * 150]
    groups = length_groups(texts)
    assert sorted(i for group in groups for i in group) == list(range(len(texts)))
    assert groups[0] == [2, 0, 3]  # the short ones together, shortest first
    assert [4, 1] in groups  # the two long ones together
    assert [5] in groups  # neither short nor long: padding either way costs more than a pass


def test_grouped_passes_give_the_vectors_of_one_pass(embedder: Embedder) -> None:
    texts = [*TEXTS, "a long message about the weekend " * 8]
    grouped = Embedder(cache_size=0)
    grouped.__dict__["model"] = embedder.model
    assert len(length_groups(texts)) > 1
    assert np.allclose(grouped.encode(texts), grouped._forward(texts), atol=1e-5)


def test_model_in_its_own_process_gives_the_same_answers(embedder: Embedder) -> None:
    remote = Embedder(process=True)
    try:
        vectors = remote.encode(TEXTS)
        assert remote.dimension == embedder.dimension
        assert np.allclose(vectors, embedder.encode(TEXTS), atol=1e-5)
        assert not remote.reads("张伟")
        remote.close()
        assert np.allclose(
            remote.encode(["Sweden and Oscar"]), embedder.encode(["Sweden and Oscar"]), atol=1e-5
        )
    finally:
        remote.close()


def test_a_model_the_process_cannot_load_is_a_config_error() -> None:
    remote = Embedder(model_name="/nonexistent/model-dir", process=True)
    try:
        with pytest.raises(ConfigError) as caught:
            remote.encode(["Sweden"])
    finally:
        remote.close()
    assert "cannot load embedding model" in str(caught.value)


def test_bulk_vectors_are_the_same_with_two_workers(embedder: Embedder) -> None:
    texts = [f"Film {i} directed by Director {i % 7}" for i in range(150)] + ["Kismet"] * 3
    one = embedder.encode_bulk(texts, workers=1)
    two = embedder.encode_bulk(texts, workers=2)
    assert one.shape == (153, embedder.dimension)
    assert np.array_equal(one, two)  # the same batches, whichever worker ran them
    assert np.array_equal(two[-1], two[-3])  # a repeated text is embedded once
    assert np.allclose(two, embedder.encode(texts), atol=2e-3)


def test_a_model_loading_in_the_background_is_loaded_once(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def slow_load(*args: Any, **kwargs: Any) -> Any:
        calls.append(threading.current_thread().name)
        time.sleep(0.3)
        return embedder.model

    monkeypatch.setattr("engine.embedding.embedder.load_encoder", slow_load)
    fresh = Embedder()
    fresh.load_in_background()
    assert fresh.model is embedder.model  # waited for the thread's load
    fresh.load_in_background()  # loaded already: nothing to do
    assert calls == ["graphmem-model"]
