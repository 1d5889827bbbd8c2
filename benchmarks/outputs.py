"""Where a benchmark writes its JSON (`--out`), settled before the run starts."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

OUT_HELP = "JSON file to write, or a directory to write STEM_YYYYmmdd-HHMMSS.json in"


def json_out(stem: str) -> Callable[[str], Path]:
    """An argparse `type` for `--out`: the JSON file itself, or in an existing directory one
    named after `stem` and the start time; its directory is made now, so a run of many
    minutes does not end on a path it cannot write."""

    def resolve(text: str) -> Path:
        path = Path(text)
        if path.is_dir():
            path = path / f"{stem}_{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    return resolve
