"""A wheel holds every package of engine/: pyproject's explicit list is checked against the tree
(a package missing from it installs from a checkout but not from a wheel)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pyproject_lists_every_package_under_engine() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
            "packages"
        ]
    )
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "engine").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert on_disk | {"engine._cypher"} == listed
