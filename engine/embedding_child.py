"""The embedding model's child process (`Embedder(process=True)`): `python -m` runs it.

See `engine.embedding_worker` for the protocol; this module only joins the two halves.
"""

from __future__ import annotations

from engine.embedding import Embedder
from engine.embedding_worker import serve

if __name__ == "__main__":
    serve(Embedder)
