"""The embedding model's child process (`Embedder(process=True)`): `python -m` runs it.

See `engine.embedding.worker` for the protocol; this module only joins the two halves.
"""

from __future__ import annotations

from engine.embedding.embedder import Embedder
from engine.embedding.worker import serve

if __name__ == "__main__":
    serve(Embedder)
