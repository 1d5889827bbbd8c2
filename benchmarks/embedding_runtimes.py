"""Embedding runtimes compared on MetaQA fact sentences: sentences/s and cosine to PyTorch.

PyTorch (sentence-transformers) is the reference. OpenVINO runs the export graphmem makes
(engine/embedding/openvino_encoder.py) in its default precision (bfloat16 where the CPU has
the units) and in float32. With `onnxruntime` and `onnx` installed (not graphmem
dependencies) it also times ONNX Runtime in float32 and with dynamic int8 quantization. One
thread each, texts sorted by length, `--rounds` alternating rounds (the best round counts:
the machine is shared).

    python benchmarks/embedding_runtimes.py --sentences 3000
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from outputs import OUT_HELP, json_out

from engine.embedding import Embedder, openvino_import
from engine.embedding.openvino_encoder import OpenVINOEncoder, exported_model
from engine.embedding.runtime import default_cache_dir, resolve_model_path
from engine.normalize import predicate_words

REPO = Path(__file__).resolve().parent.parent
KB = REPO.parent / "shared" / "data" / "metaqa" / "kb_reconstructed.txt"
Encode = Callable[[list[str]], np.ndarray[Any, Any]]


def sentences(n: int, seed: int) -> list[str]:
    lines = [x.split("|") for x in KB.read_text(encoding="utf-8").splitlines() if x.count("|") == 2]
    picked = random.Random(seed).sample(lines, n)
    return [f"{s} {predicate_words(p.upper())} {o}" for s, p, o in picked]


def openvino_encoder(precision: str | None, batch: int) -> Encode:
    openvino = openvino_import.imported()

    model_dir = Path(resolve_model_path("all-MiniLM-L6-v2"))
    encoder = OpenVINOEncoder(model_dir, default_cache_dir(), threads=1)
    if precision is not None:  # compile again with the precision asked for
        config = {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": precision}
        model = exported_model(model_dir, default_cache_dir())
        encoder._compiled = openvino.Core().compile_model(str(model), "CPU", config)
        encoder._request = encoder._compiled.create_infer_request()
    return lambda texts: encoder.encode(texts, batch)


def onnx_encoders(batch: int) -> dict[str, Encode]:
    """ONNX Runtime float32 and dynamic int8, from a torch.onnx export made here."""
    if not all(importlib.util.find_spec(m) for m in ("onnxruntime", "onnx")):
        return {}
    import onnxruntime
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from engine.embedding.openvino_encoder import _quiet_tracer

    folder = Path(tempfile.mkdtemp(prefix="graphmem-onnx-"))
    model_dir = Path(resolve_model_path("all-MiniLM-L6-v2"))
    with torch.no_grad(), _quiet_tracer():
        from transformers import AutoModel

        base = AutoModel.from_pretrained(str(model_dir)).eval()
        example = torch.ones((2, 8), dtype=torch.long)
        names = ["input_ids", "attention_mask"]
        torch.onnx.export(
            base, (), str(folder / "f32.onnx"), input_names=names,
            kwargs={"input_ids": example, "attention_mask": example},
            output_names=["hidden"], dynamic_axes={n: {0: "b", 1: "s"} for n in names},
            opset_version=17, dynamo=False,
        )  # fmt: skip
    quantize_dynamic(
        str(folder / "f32.onnx"), str(folder / "int8.onnx"), weight_type=QuantType.QInt8,
        per_channel=True,
    )  # fmt: skip
    reference = OpenVINOEncoder(model_dir, default_cache_dir())  # for its tokenizer
    out: dict[str, Encode] = {}
    for name in ("f32", "int8"):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(str(folder / f"{name}.onnx"), options)
        out[f"onnxruntime {name}"] = _pooled(session, reference, batch)
    return out


def _pooled(session: Any, reference: OpenVINOEncoder, batch: int) -> Encode:
    def encode(texts: list[str]) -> np.ndarray[Any, Any]:
        rows = []
        for start in range(0, len(texts), batch):
            encoded = reference.tokenizer.encode_batch(texts[start : start + batch])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            mean = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            rows.append(mean / np.linalg.norm(mean, axis=1, keepdims=True))
        return np.concatenate(rows)

    return lambda texts: _in_order(encode, texts)


def _in_order(encode: Encode, texts: list[str]) -> np.ndarray[Any, Any]:
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = encode([texts[i] for i in order])
    out = np.zeros_like(vectors)
    out[order] = vectors
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sentences", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--out",
        type=json_out("embedding_runtimes"),
        default=REPO / "benchmarks" / "results" / "embedding_runtimes.json",
        help=OUT_HELP,
    )
    args = parser.parse_args(argv)
    texts = sentences(args.sentences, args.seed)
    torch_model = Embedder(runtime="torch", threads=1, cache_size=0, batch_size=16)
    runtimes: dict[str, Encode] = {"pytorch": lambda t: torch_model.model.encode(t, 16)}
    runtimes["openvino (default precision)"] = openvino_encoder(None, 64)
    runtimes["openvino f32"] = openvino_encoder("f32", 64)
    runtimes |= onnx_encoders(64)
    reference = runtimes["pytorch"](texts)
    results: dict[str, dict[str, float]] = {}
    for _ in range(args.rounds):
        for name, encode in runtimes.items():
            started = time.perf_counter()
            vectors = encode(texts)
            rate = len(texts) / (time.perf_counter() - started)
            cosine = (vectors * reference).sum(1) / np.linalg.norm(vectors, axis=1)
            best = max(rate, results.get(name, {}).get("sentences_per_s", 0.0))
            results[name] = {
                "sentences_per_s": round(best, 1),
                "cosine_mean": round(float(cosine.mean()), 6),
                "cosine_min": round(float(cosine.min()), 6),
            }
            print(f"{name}: {rate:.0f}/s, cosine mean {cosine.mean():.5f} min {cosine.min():.5f}")
    with open("/proc/loadavg") as handle:
        load = handle.read().split()[:3]
    report = {"sentences": len(texts), "threads": 1, "loadavg": load, "runtimes": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
