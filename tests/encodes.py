"""Watching what an embedder is asked to encode."""

from __future__ import annotations

from typing import Any

import pytest

from engine.embedding import Embedder


def record_encodes(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The texts of each `encode` call `embedder` gets from now on (it still encodes them)."""
    calls: list[list[str]] = []
    encode = embedder.encode

    def recording(texts: list[str], show_progress: bool = False) -> Any:
        calls.append(list(texts))
        return encode(texts, show_progress)

    monkeypatch.setattr(embedder, "encode", recording)
    return calls
