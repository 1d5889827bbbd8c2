"""Local sentence embeddings with sentence-transformers.

Many threads embed at once during a batch ingest, each a few short texts (names, fact
sentences, a message). One model pass per call would serialize them behind the model and pay
the per-pass overhead every time, so calls share passes (`_SharedPasses`), and the vectors of
short texts are kept (`engine.recent.Recent`): a name or sentence embedded while an extraction
is prepared is not embedded again when it is written.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from engine.embedding.runtime import Encoder, Runtime, load_encoder
from engine.embedding.worker import ModelProcess
from engine.recent import Recent

_CACHED_CHARS = 256  # names and fact sentences; longer texts (queries) rarely come back
_PADDING_CHARS = 128  # padding that costs about as much as one more forward pass

Vector = np.ndarray[Any, Any]
T = TypeVar("T")


def length_groups(texts: list[str]) -> list[list[int]]:
    """Indexes of `texts` in groups of like length, shortest first. A forward pass pads every
    text to the longest of its batch, so a text joins the group before it only while the
    padding it adds to the group stays under the fixed cost of one more pass."""
    groups: list[list[int]] = []
    for index in sorted(range(len(texts)), key=lambda i: len(texts[i])):
        group = groups[-1] if groups else []
        growth = len(texts[index]) - len(texts[group[-1]]) if group else 0
        if group and len(group) * growth <= _PADDING_CHARS:
            group.append(index)
        else:
            groups.append([index])
    return groups


@dataclass(slots=True)
class _Request:
    texts: list[str]
    done: bool = False
    vectors: dict[str, Vector] = field(default_factory=dict)
    error: BaseException | None = None


class _SharedPasses:
    """Runs `encode` for many threads, one pass at a time: texts queue up while a pass runs,
    and the next caller to get the model encodes everything queued (its own texts among
    them) in one pass. A caller whose texts went with an earlier pass just takes them."""

    def __init__(self, encode: Callable[[list[str]], Vector]) -> None:
        self._encode = encode
        self._model = threading.Lock()
        self._queue_lock = threading.Lock()
        self._queue: list[_Request] = []

    def encode(self, texts: list[str]) -> dict[str, Vector]:
        request = _Request(texts)
        with self._queue_lock:
            self._queue.append(request)
        with self._model:
            if not request.done:
                self._pass()
        if request.error is not None:
            raise request.error
        return request.vectors

    def run_alone(self, run: Callable[[], T]) -> T:
        """`run` while no pass runs (it uses the model or its tokenizer)."""
        with self._model:
            return run()

    def _pass(self) -> None:
        with self._queue_lock:
            batch, self._queue = self._queue, []
        try:
            self._serve(batch)
        except Exception as exc:
            if len(batch) == 1:
                batch[0].error = exc
            else:  # one caller's bad text must not fail the others: each alone
                for request in batch:
                    self._serve_alone(request)
        for request in batch:
            request.done = True

    def _serve(self, batch: list[_Request]) -> None:
        texts = list(dict.fromkeys(t for request in batch for t in request.texts))
        # copies: a kept row must not hold on to the whole pass's array
        vectors = {t: row.copy() for t, row in zip(texts, self._encode(texts), strict=True)}
        for request in batch:
            request.vectors = {t: vectors[t] for t in request.texts}

    def _serve_alone(self, request: _Request) -> None:
        try:
            self._serve([request])
        except Exception as exc:
            request.error = exc


# a query of its usual token counts, and a few new words: OpenVINO compiles a model per padded
# shape at its first use (~1 s on a fresh install, 0.13-0.16 s from its cache), which loading
# in the background does before the first search asks
_WARM_UP = (
    ["a short question"],
    ["what did the people in this short question talk about"],
    ["what did the people named in this longer question talk about last week at home"],
    *(["word"] * rows for rows in (2, 4, 8)),
)


class Embedder:
    """Encodes text to unit-length vectors. The model loads on first use.

    Args:
        model_name: a sentence-transformers model (name or path).
        device: where the model runs ("cpu", "cuda", ...).
        batch_size: texts per forward pass (None: the runtime's `batch_size`). PyTorch on a
            CPU wastes less on padding with small batches of texts of like length (16);
            OpenVINO in bfloat16 goes 10-30% faster with 64.
        cache_size: short texts whose vectors are kept (0: none).
        threads: the runtime's threads (0: its default, one per core; for PyTorch this is
            set for the whole process). One thread is the default because passes come from
            a pipeline that keeps the other cores busy: the model's threads then wait on each
            other, and a pass on a busy 2-core machine takes many times longer.
        short_threads: OpenVINO's threads for a single text or a few short ones (a search's
            query and words; 0: one per core). A search waits on those passes alone.
        process: run the model in a child process (`engine.embedding.child`), for batch
            ingests with many threads; `close()` stops it.
        runtime: "auto" (OpenVINO where it can run the model, else PyTorch), "openvino" or
            "torch" (see `engine.embedding.runtime`).
        cache_dir: where an exported model is kept (default `~/.cache/graphmem`).
    """

    def __init__(
        self,
        model_name: str = "all-MiniLM-L6-v2",
        device: str = "cpu",
        batch_size: int | None = None,
        cache_size: int = 20_000,
        threads: int = 1,
        short_threads: int = 0,
        process: bool = False,
        runtime: Runtime = "auto",
        cache_dir: Path | None = None,
    ) -> None:
        self.model_name = model_name
        self.device = device
        self.batch_size = batch_size
        self.threads = threads
        self.short_threads = short_threads
        self.runtime = runtime
        self.cache_dir = cache_dir
        self._process: ModelProcess | None = None
        if process:
            arguments: dict[str, object] = {"model_name": model_name, "device": device}
            arguments |= {"batch_size": batch_size, "runtime": runtime, "cache_dir": cache_dir}
            arguments |= {"threads": threads, "short_threads": short_threads}
            self._process = ModelProcess(arguments | {"cache_size": 0})
        self._passes = _SharedPasses(self._run)
        self._vectors: Recent[Vector] = Recent(cache_size)
        self._readable: Recent[bool] = Recent(cache_size)
        self._loader: threading.Thread | None = None

    @cached_property
    def model(self) -> Encoder:
        """The loaded model on its runtime.

        Raises:
            ConfigError: the model cannot load (see `engine.embedding.runtime.load_encoder`).
        """
        loader = self._loader
        if loader is not None and loader is not threading.current_thread():
            loader.join()  # loading already: take its model (or its error, loading again)
            if "model" in self.__dict__:
                return self.__dict__["model"]  # type: ignore[no-any-return]
        return load_encoder(
            self.model_name,
            device=self.device,
            threads=self.threads,
            runtime=self.runtime,
            cache_dir=self.cache_dir,
            short_threads=self.short_threads,
        )

    def load_in_background(self) -> None:
        """Start loading the model in a thread, so that it loads while the caller does
        something else (opening a store: the server's start and the model's load overlap
        on a reopen); the first use waits for it. Nothing happens if it is loaded already
        or runs in a child process."""
        if self._loader is not None or self._process is not None or "model" in self.__dict__:
            return

        def load() -> None:
            with contextlib.suppress(Exception):  # the first use raises it again
                model = self.model
                for texts in _WARM_UP:  # compiled for their shapes before the first search
                    model.encode(texts, len(texts))

        self._loader = threading.Thread(target=load, name="graphmem-model", daemon=True)
        self._loader.start()

    @cached_property
    def dimension(self) -> int:
        if self._process is not None:
            return int(self._process.call("dimension"))
        return self.model.dimension

    def encode(self, texts: list[str], show_progress: bool = False) -> Vector:
        """Unit-length float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if show_progress:  # a bulk job: its own passes, with a bar
            return self._passes.run_alone(lambda: self._run(texts, show_progress=True))
        found = self._vectors.get(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            fresh = self._passes.encode(missing)
            self._vectors.put(_short(fresh))
            found.update(fresh)
        return np.stack([found[t] for t in texts])

    def encode_bulk(self, texts: list[str], workers: int = 1) -> Vector:
        """Unit-length float32 vectors for a bulk job (a load), one row per text: each
        distinct text once, in batches of like length, `workers` batches at once where the
        runtime can (OpenVINO; a load measured at 2 on 2 cores); nothing is cached."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self._process is not None:
            return self._passes.run_alone(lambda: self._run(texts))
        distinct = list(dict.fromkeys(texts))
        batch = self.batch_size or self.model.batch_size
        vectors = self._passes.run_alone(lambda: self.model.encode(distinct, batch, workers))
        if len(distinct) == len(texts):
            return vectors
        row = {text: i for i, text in enumerate(distinct)}
        return vectors[[row[t] for t in texts]]

    def _run(self, texts: list[str], show_progress: bool = False) -> Vector:
        if self._process is not None:
            return np.asarray(self._process.call("encode", texts), dtype=np.float32)
        if show_progress:  # one bar for the whole job
            return self._forward(texts, show_progress)
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for group in length_groups(texts):
            vectors[group] = self._forward([texts[i] for i in group])
        return vectors

    def _forward(self, texts: list[str], show_progress: bool = False) -> Vector:
        batch = self.batch_size or self.model.batch_size
        if not show_progress:
            return self.model.encode(texts, batch)
        from tqdm import tqdm

        step = batch * 64
        parts = [
            self.model.encode(texts[i : i + step], batch)
            for i in tqdm(range(0, len(texts), step), desc="embedding", unit="part")
        ]
        return np.concatenate(parts) if parts else np.zeros((0, self.dimension), np.float32)

    def reads(self, text: str, max_unknown: float = 0.25) -> bool:
        """Whether the model can tell `text` apart from other texts: at most `max_unknown` of
        its tokens are the tokenizer's unknown token. An English model reads every Chinese
        name as [UNK] [UNK], so two such names embed identically and must not be compared."""
        key = f"{max_unknown}\x1f{text}"
        known = self._readable.get([key])
        if key in known:
            return known[key]
        if self._process is not None:
            readable = bool(self._process.call("reads", (text, max_unknown)))
            self._readable.put(_short({key: readable}))
            return readable
        model = self.model
        if model.unk_token is None:
            return True
        unknown = model.unk_token
        # the tokenizer is shared with the model's passes, which run in other threads
        tokens = self._passes.run_alone(lambda: model.tokenize(text))
        readable = bool(tokens) and sum(t == unknown for t in tokens) <= max_unknown * len(tokens)
        self._readable.put(_short({key: readable}))
        return readable

    def close(self) -> None:
        """Release the model: its process, if it has one, else the model loaded here with
        its runtime's threads and memory (~400 MB), without waiting for a garbage collection
        (a later call loads it again). A load still running in the background is waited for:
        a process that exits while the runtime compiles the model in a thread aborts."""
        self.wait_loaded()
        if self._process is not None:
            self._process.close()
        self.__dict__.pop("model", None)  # the `model` property's cached value

    def wait_loaded(self) -> None:
        """Wait for a load running in the background (and its warm-up passes) to end: the
        interpreter aborts when it exits while the runtime compiles in a thread."""
        loader = self._loader
        if loader is not None and loader is not threading.current_thread():
            loader.join()

    def encode_one(self, text: str) -> Vector:
        vector: Vector = self.encode([text])[0]
        return vector


def _short(items: dict[str, T]) -> dict[str, T]:
    """The items worth keeping: those of short texts."""
    return {text: item for text, item in items.items() if len(text) <= _CACHED_CHARS}


def as_param(vector: Vector) -> list[float]:
    """A vector as a short list of floats for a query parameter (6 decimals is plenty for
    unit vectors and keeps the parameter text small)."""
    return [float(x) for x in np.round(vector.astype(np.float64), 6).tolist()]
