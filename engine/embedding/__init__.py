"""The embedding model: `Embedder` (embedder.py) runs it on a runtime (runtime.py: PyTorch,
or OpenVINO through openvino_encoder.py), in this process or in a child process (worker.py
speaks to child.py)."""

from engine.embedding.embedder import Embedder, Vector, as_param

__all__ = ["Embedder", "Vector", "as_param"]
