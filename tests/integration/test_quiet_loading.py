"""The first model load draws no "Loading weights" bar (issue 52, cosmetic), and the host's
own choice of transformers' progress bars is what it was afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers.utils import logging as hf_logging

from engine.embedding import Embedder


@pytest.mark.parametrize("host_wants_bars", [True, False])
def test_loading_the_model_draws_no_bar(
    host_wants_bars: bool, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    was = hf_logging.is_progress_bar_enabled()
    (hf_logging.enable_progress_bar if host_wants_bars else hf_logging.disable_progress_bar)()
    try:
        Embedder(runtime="torch", cache_dir=tmp_path).encode(["hello"])
        after = hf_logging.is_progress_bar_enabled()
    finally:
        (hf_logging.enable_progress_bar if was else hf_logging.disable_progress_bar)()
    _, err = capfd.readouterr()

    assert "Loading weights" not in err
    assert after is host_wants_bars
